//! The exact negacyclic product the encryption algorithms are written against.
//!
//! Every product the device computes has one precomputed operand (a key spectrum, or a public key's
//! spectra) and one operand that arrives per call (a mask polynomial, or the public-key encryption's secret
//! `u`). [`NegacyclicProduct`] names the few operations that needs, over a torus and a spectral domain of the
//! implementation's choice, so that one encryption core serves every torus width: [`negacyclic_fft::Plan`]
//! implements it exactly for the 32-bit torus (`f64` spectra); a 64-bit torus needs an exact integer product
//! implementing the same trait (the integer NTT).

pub mod key_spectrum;
use crate::csprng::construction::XofConstruction;
use crate::csprng::mask::{expand_mask_into_fft_input_at, for_each_mask_run};
use negacyclic_fft::Plan;
use negacyclic_ntt::{NttPlan32, NttPlan64};
use tfhe_sbc_core::entities::MASK_SEED_BYTES;
use tfhe_sbc_core::torus::UnsignedTorus;
use zeroize::Zeroize;

/// Wipes a spectrum (the scratch of a product: linear equations in the key) as `u32` words with `zeroize`'s
/// volatile writes, where its elements are whole aligned words (`f64`, `[u32; L]`), else element by element.
/// Element by element, an `[u32; 2]` was two nested loops: 13 instructions per element on the Cortex-M4,
/// 13 k per encryption at `N = 1024`. The alignment test reads the buffer's address, which is public.
pub(crate) fn wipe_spectrum<S: bytemuck::Pod + Zeroize>(spectrum: &mut [S]) {
    if let Ok(words) = bytemuck::try_cast_slice_mut::<S, u64>(spectrum) {
        return words.zeroize();
    }
    match bytemuck::try_cast_slice_mut::<S, u32>(spectrum) {
        Ok(words) => words.zeroize(),
        Err(_) => spectrum.iter_mut().for_each(Zeroize::zeroize),
    }
}

/// An exact negacyclic product modulo `X^N + 1` over [`Self::Torus`], computed through a transform whose
/// spectra have `N` elements of [`Self::Spectral`].
///
/// Exactness contract: for a torus polynomial times a binary polynomial, `inverse(forward(a) * forward(s))`
/// is the wrapped negacyclic product, bit for bit, and sums of such products accumulated with
/// [`Self::inverse_add`] are exact too. Implementations must run in time independent of the values.
pub trait NegacyclicProduct {
    /// The torus the products are exact over.
    type Torus: UnsignedTorus;
    /// One element of a spectrum.
    type Spectral: Copy + Default + Zeroize + bytemuck::Pod;
    /// The zero spectral element, as a constant (firmware builds an empty encryptor in a `static`).
    const SPECTRAL_ZERO: Self::Spectral;

    /// `N`: the polynomial size, which is also the length of a spectrum.
    fn polynomial_size(&self) -> usize;
    /// The spectrum of a binary polynomial (a key, or a public-key encryption's `u`), one byte (0 or 1) per
    /// coefficient.
    fn forward_binary(&self, bits: &[u8], spectrum: &mut [Self::Spectral]);
    /// The spectrum of a torus polynomial.
    fn forward_torus(&self, polynomial: &[Self::Torus], spectrum: &mut [Self::Spectral]);
    /// The spectrum of a torus polynomial given as its coefficients' little-endian bytes (`N` times the
    /// torus's bytes, as a key file stores it), read in place: no copy into words is made.
    fn forward_torus_le_bytes(&self, bytes: &[u8], spectrum: &mut [Self::Spectral]);
    /// The spectrum of mask polynomial `polynomial_index` of the seeded mask `seed` expanded under the
    /// construction `C` (`crate::csprng::mask`), straight into `spectrum`.
    fn forward_seeded_mask<C: XofConstruction>(
        &self,
        seed: &[u8; MASK_SEED_BYTES],
        polynomial_index: usize,
        spectrum: &mut [Self::Spectral],
    );
    /// `acc *= rhs`, pointwise.
    fn mul_assign(&self, acc: &mut [Self::Spectral], rhs: &[Self::Spectral]);
    /// `acc += lhs * rhs`, pointwise.
    fn mul_add_assign(&self, acc: &mut [Self::Spectral], lhs: &[Self::Spectral], rhs: &[Self::Spectral]);
    /// `out = inverse(spectrum)`, rounded and wrapped; `spectrum` is scratch afterwards.
    fn inverse(&self, spectrum: &mut [Self::Spectral], out: &mut [Self::Torus]);
    /// `out += inverse(spectrum)`, rounded and wrapped; `spectrum` is scratch afterwards.
    fn inverse_add(&self, spectrum: &mut [Self::Spectral], out: &mut [Self::Torus]);
}

/// A [`NegacyclicProduct`] whose plan for polynomial size `N` is built at compile time: an unsupported `N` is
/// a compile error (the evaluation of [`Self::PLAN`] fails), and only the tables of the sizes in use are
/// linked, in debug builds too.
pub trait NegacyclicProductPlan<const N: usize>: NegacyclicProduct + Copy {
    /// The plan for `N`.
    const PLAN: Self;
}

/// The product the firmware wrappers use when none is named: the `f64` FFT ([`Plan`]) where the target has a
/// double-precision FPU, the exact integer NTT ([`NttPlan32`]) on Cortex-M and 32-bit RISC-V microcontrollers.
#[cfg(not(all(any(target_arch = "arm", target_arch = "riscv32"), target_os = "none")))]
pub type DefaultProduct = Plan;

/// The product the firmware wrappers use when none is named: on bare-metal ARM (Cortex-M0/M0+/M3/M4/M7:
/// `thumbv6m`, `thumbv7m`, `thumbv7em`), whose FPU is single-precision at best, the exact integer NTT
/// ([`NttPlan32`]): constant-time there, and several times faster than a soft-float `f64` FFT. The same on
/// bare-metal 32-bit RISC-V (`riscv32imc`, `riscv32imac`: ESP32-C3/C6 class parts, no FPU).
#[cfg(all(any(target_arch = "arm", target_arch = "riscv32"), target_os = "none"))]
pub type DefaultProduct = NttPlan32;

/// The 32-bit torus through the exact `f64` FFT (bit-exact for a 32-bit torus polynomial times a binary one
/// up to `N = 4096`: `negacyclic-fft`'s tests).
impl NegacyclicProduct for Plan {
    type Torus = u32;
    type Spectral = f64;
    const SPECTRAL_ZERO: f64 = 0.0;

    #[inline]
    fn polynomial_size(&self) -> usize {
        Plan::polynomial_size(self)
    }
    fn forward_binary(&self, bits: &[u8], spectrum: &mut [f64]) {
        self.forward(bits, spectrum);
    }
    fn forward_torus(&self, polynomial: &[u32], spectrum: &mut [f64]) {
        self.forward(polynomial, spectrum);
    }
    fn forward_torus_le_bytes(&self, bytes: &[u8], spectrum: &mut [f64]) {
        self.forward(bytemuck::cast_slice::<u8, [u8; 4]>(bytes), spectrum);
    }
    fn forward_seeded_mask<C: XofConstruction>(
        &self,
        seed: &[u8; MASK_SEED_BYTES],
        polynomial_index: usize,
        spectrum: &mut [f64],
    ) {
        expand_mask_into_fft_input_at::<C>(seed, polynomial_index, spectrum);
        self.forward_in_place(spectrum);
    }
    fn mul_assign(&self, acc: &mut [f64], rhs: &[f64]) {
        Plan::mul_assign(self, acc, rhs);
    }
    fn mul_add_assign(&self, acc: &mut [f64], lhs: &[f64], rhs: &[f64]) {
        Plan::mul_add_assign(self, acc, lhs, rhs);
    }
    fn inverse(&self, spectrum: &mut [f64], out: &mut [u32]) {
        self.inverse_wrapping(spectrum, out);
    }
    fn inverse_add(&self, spectrum: &mut [f64], out: &mut [u32]) {
        self.inverse_add_wrapping(spectrum, out);
    }
}

impl<const N: usize> NegacyclicProductPlan<N> for Plan {
    const PLAN: Plan = match Plan::new(N) {
        Ok(plan) => plan,
        Err(_) => panic!("negacyclic FFT: unsupported polynomial size (a power of two from 64 to 4096)"),
    };
}

/// Implements [`NegacyclicProduct`] and [`NegacyclicProductPlan`] for an integer NTT plan of `negacyclic-ntt`,
/// whose spectra are planar residues (`$residues` words per coefficient) and whose mask is loaded straight
/// from the seed's expansion ([`crate::csprng::mask::expand_mask`]'s words).
macro_rules! ntt_product {
    ($(#[$doc:meta])* $plan:ident, $torus:ty, $residues:literal) => {
        $(#[$doc])*
        impl NegacyclicProduct for $plan {
            type Torus = $torus;
            type Spectral = [u32; $residues];
            const SPECTRAL_ZERO: [u32; $residues] = [0; $residues];

            #[inline]
            fn polynomial_size(&self) -> usize {
                $plan::polynomial_size(self)
            }
            fn forward_binary(&self, bits: &[u8], spectrum: &mut [[u32; $residues]]) {
                self.forward(bits, spectrum);
            }
            fn forward_torus(&self, polynomial: &[$torus], spectrum: &mut [[u32; $residues]]) {
                self.forward(polynomial, spectrum);
            }
            fn forward_torus_le_bytes(&self, bytes: &[u8], spectrum: &mut [[u32; $residues]]) {
                self.forward(bytemuck::cast_slice::<u8, [u8; size_of::<$torus>()]>(bytes), spectrum);
            }
            fn forward_seeded_mask<C: XofConstruction>(
                &self,
                seed: &[u8; MASK_SEED_BYTES],
                polynomial_index: usize,
                spectrum: &mut [[u32; $residues]],
            ) {
                let n = $plan::polynomial_size(self);
                for_each_mask_run::<C, $torus>(seed, polynomial_index, n, |offset, words| {
                    self.load(spectrum, offset, words)
                });
                self.forward_loaded(spectrum);
            }
            fn mul_assign(&self, acc: &mut [[u32; $residues]], rhs: &[[u32; $residues]]) {
                $plan::mul_assign(self, acc, rhs);
            }
            fn mul_add_assign(&self, acc: &mut [[u32; $residues]], lhs: &[[u32; $residues]], rhs: &[[u32; $residues]]) {
                $plan::mul_add_assign(self, acc, lhs, rhs);
            }
            fn inverse(&self, spectrum: &mut [[u32; $residues]], out: &mut [$torus]) {
                self.inverse_wrapping(spectrum, out);
            }
            fn inverse_add(&self, spectrum: &mut [[u32; $residues]], out: &mut [$torus]) {
                self.inverse_add_wrapping(spectrum, out);
            }
        }

        impl<const N: usize> NegacyclicProductPlan<N> for $plan {
            const PLAN: $plan = $plan::new::<N>();
        }
    };
}

ntt_product!(
    /// The 32-bit torus through the exact integer NTT over two 30-bit primes ([`negacyclic_ntt`]):
    /// bit-identical to the FFT (and to the schoolbook product) for a torus polynomial times a binary or
    /// ternary one up to `N = 4096`, constant-time, and the default on Cortex-M ([`DefaultProduct`]).
    ///
    /// `Spectral = [u32; 2]`: a spectrum is `2N` words, the residues modulo the first prime then those modulo
    /// the second ([`NttPlan32`]'s planar layout); 8 KiB at `N = 1024`, as much as the FFT's `[f64; N]`.
    NttPlan32, u32, 2
);

ntt_product!(
    /// The 64-bit torus through the exact integer NTT over three 30-bit primes: exact for a 64-bit torus
    /// polynomial times a binary or ternary one up to `N = 4096`. `Spectral = [u32; 3]` (planar, as for
    /// [`NttPlan32`]); the mask is the `u64` expansion of [`crate::csprng::mask::expand_mask`].
    NttPlan64, u64, 3
);
