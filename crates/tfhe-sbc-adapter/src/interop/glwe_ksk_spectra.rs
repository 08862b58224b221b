//! GLWE key switching with exact NTT products: the per-device key of [`super::glwe_ksk`] kept in the
//! spectral domain of [`negacyclic_ntt::NttPlan64`], so that a frame's switch costs `k_d * l` forward and
//! `k + 1` inverse transforms instead of `k_d * l * (k + 1)` schoolbook products.
//!
//! The result is **bit-identical** to tfhe-rs's `keyswitch_glwe_ciphertext` (the reference,
//! [`super::glwe_ksk::keyswitch_glwe`]): the mask is decomposed by tfhe-rs's own `SignedDecomposer` (the
//! same rounding and digits, in `[-B/2, B/2)`), and every product is computed exactly as an integer
//! polynomial over three 30-bit primes (`P_3 ~ 2^90`), then wrapped modulo `2^64`. The products are summed
//! in the spectral domain, so the bound to check is that of the sum: `k_d * l * N` terms of a digit
//! (`|d| <= 2^(base_log - 1)`) times a key word read centred (`|w| <= 2^63`) must stay below `2^88`
//! ([`negacyclic_ntt`]'s reconstruction is exact for `|X| + 2^61 < P_3 / 2`). For the integer set
//! (`k_d = 1`, `l = 2`, base `2^12`, `N = 2048`) that is `2^12 * 2^11 * 2^63 = 2^86`.
//!
//! A key's spectra take `k_d * l * (k + 1) * 12 N` bytes (96 KiB for the integer set, against 64 KiB
//! decompressed): the device cache holds them, so a device's key is transformed once per cache miss.
//!
//! The 32-bit torus (the boolean big-key sets) goes through the same three-prime products: key words and
//! digits are read centred (`|w| <= 2^31`) and widened to `u64`; the exact product, wrapped modulo `2^64`,
//! is also the product modulo `2^32`, so the low word is the 32-bit result.

use super::error::InteropError;
use super::glwe_ks_shape::GlweKsShape;
use negacyclic_ntt::NttPlan64;
use tfhe::core_crypto::commons::math::decomposition::SignedDecomposer;
use tfhe::core_crypto::prelude::{
    Container, ContiguousEntityContainer, GlweCiphertext, GlweKeyswitchKey, UnsignedTorus,
};

/// A torus word the switch handles: `u32` or `u64`, widened to the `u64` the three-prime NTT reads.
pub trait SwitchWord: UnsignedTorus + Sync + Send {
    /// The word read centred (`x - 2^B` when `x >= 2^(B-1)`), as a wrapping `u64`.
    fn centred(self) -> u64;
    /// The low `B` bits of a `u64` result.
    fn from_wrapped(value: u64) -> Self;
}

impl SwitchWord for u32 {
    fn centred(self) -> u64 {
        self as i32 as i64 as u64
    }
    fn from_wrapped(value: u64) -> Self {
        value as u32
    }
}

impl SwitchWord for u64 {
    fn centred(self) -> u64 {
        self
    }
    fn from_wrapped(value: u64) -> Self {
        value
    }
}

/// The largest `log2 |X|` of a summed product that the three-prime reconstruction returns exactly (with
/// margin: the exact bound is `|X| + 2^61 < P_3 / 2 ~ 2^89`).
const MAX_PRODUCT_BITS: u32 = 88;

/// The plan for a supported polynomial size, or `None`.
fn plan_for(polynomial_size: usize) -> Option<NttPlan64> {
    Some(match polynomial_size {
        256 => NttPlan64::new::<256>(),
        512 => NttPlan64::new::<512>(),
        1024 => NttPlan64::new::<1024>(),
        2048 => NttPlan64::new::<2048>(),
        4096 => NttPlan64::new::<4096>(),
        _ => return None,
    })
}

/// Checks that a key of this shape can be switched exactly: a supported `N`, a non-empty decomposition and
/// summed products within [`MAX_PRODUCT_BITS`] ([`InteropError::ParameterMismatch`] otherwise). Seeded keys
/// check it when they are made or read, so that a stored key always transforms.
pub(crate) fn check_exact_range(
    polynomial_size: usize,
    input_dimension: usize,
    shape: GlweKsShape,
) -> Result<(), InteropError> {
    let (base_log, levels) = (shape.base_log.0, shape.levels.0);
    if plan_for(polynomial_size).is_none() || base_log == 0 || levels == 0 || input_dimension == 0 {
        return Err(InteropError::ParameterMismatch);
    }
    let terms = (input_dimension * levels * polynomial_size).next_power_of_two().ilog2();
    if terms as usize + base_log - 1 + 63 > MAX_PRODUCT_BITS as usize {
        return Err(InteropError::ParameterMismatch);
    }
    Ok(())
}

/// A GLWE key-switching key in the spectral domain: per input polynomial `i`, per level (tfhe-rs's order,
/// the least significant first) and per output polynomial `c`, the NTT spectrum of that polynomial of the
/// key's ciphertext. Public data (the key encrypts the device key under the big key).
pub struct GlweKskSpectra<T = u64> {
    torus: core::marker::PhantomData<T>,
    plan: NttPlan64,
    shape: GlweKsShape,
    input_dimension: usize,
    output_size: usize,
    spectra: Vec<[u32; 3]>,
}

impl<T> core::fmt::Debug for GlweKskSpectra<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GlweKskSpectra")
            .field("polynomial_size", &self.plan.polynomial_size())
            .field("input_glwe_dimension", &self.input_dimension)
            .field("output_glwe_size", &self.output_size)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

impl<T: SwitchWord> GlweKskSpectra<T> {
    /// Transforms a decompressed key (`k_d * l * (k + 1)` forward transforms). Refuses a polynomial size the
    /// NTT has no plan for, and a shape whose summed products could exceed the exact range
    /// ([`InteropError::ParameterMismatch`]).
    pub fn new<C: Container<Element = T>>(ksk: &GlweKeyswitchKey<C>) -> Result<Self, InteropError> {
        let n = ksk.polynomial_size().0;
        let plan = plan_for(n).ok_or(InteropError::ParameterMismatch)?;
        let shape = GlweKsShape {
            base_log: ksk.decomposition_base_log(),
            levels: ksk.decomposition_level_count(),
        };
        let input_dimension = ksk.input_key_glwe_dimension().0;
        let output_size = ksk.output_key_glwe_dimension().to_glwe_size().0;
        check_exact_range(n, input_dimension, shape)?;
        let mut spectra = vec![[0u32; 3]; input_dimension * shape.levels.0 * output_size * n];
        // tfhe-rs's layout is contiguous in this order: input polynomial, level, output polynomial.
        let mut words = vec![0u64; n];
        for (spectrum, polynomial) in spectra.chunks_exact_mut(n).zip(ksk.as_ref().chunks_exact(n)) {
            words.iter_mut().zip(polynomial).for_each(|(w, &x)| *w = x.centred());
            plan.forward(&words, spectrum);
        }
        Ok(Self {
            torus: core::marker::PhantomData,
            plan,
            shape,
            input_dimension,
            output_size,
            spectra,
        })
    }

    /// The polynomial size `N`.
    pub fn polynomial_size(&self) -> usize {
        self.plan.polynomial_size()
    }

    /// The big key's GLWE size `k + 1`: the output's polynomial count.
    pub fn output_glwe_size(&self) -> usize {
        self.output_size
    }

    /// The bytes the spectra take: `k_d * l * (k + 1) * 12 N`.
    pub fn spectra_bytes(&self) -> usize {
        12 * self.spectra.len()
    }

    /// Switches `input` (under the device key) into `output` (under the big key): the same result, bit for
    /// bit, as tfhe-rs's `keyswitch_glwe_ciphertext` with the decompressed key. Shapes are checked first.
    pub fn keyswitch(
        &self,
        input: &GlweCiphertext<&[T]>,
        output: &mut GlweCiphertext<&mut [T]>,
    ) -> Result<(), InteropError> {
        let n = self.polynomial_size();
        let input_shape = (input.glwe_size().to_glwe_dimension().0, input.polynomial_size().0);
        if input_shape != (self.input_dimension, n) {
            return Err(InteropError::WrongGlweShape {
                expected: (self.input_dimension, n),
                found: input_shape,
            });
        }
        let output_shape = (output.glwe_size().0, output.polynomial_size().0);
        if output_shape != (self.output_size, n) {
            return Err(InteropError::WrongGlweShape {
                expected: (self.output_size - 1, n),
                found: (output_shape.0 - 1, output_shape.1),
            });
        }
        let levels = self.shape.levels.0;
        let decomposer = SignedDecomposer::<T>::new(self.shape.base_log, self.shape.levels);
        let mut sums = vec![[0u32; 3]; self.output_size * n];
        let mut digits = vec![[0u32; 3]; n];
        let mut words = vec![0u64; n];
        let blocks = self.spectra.chunks_exact(levels * self.output_size * n);
        for (mask, block) in input.get_mask().as_polynomial_list().iter().zip(blocks) {
            let mut decomposition = decomposer.decompose_slice(mask.as_ref());
            for level_spectra in block.chunks_exact(self.output_size * n) {
                let term = decomposition.next_term().ok_or(InteropError::ParameterMismatch)?;
                words
                    .iter_mut()
                    .zip(term.as_slice())
                    .for_each(|(w, &d)| *w = d.centred());
                self.plan.forward(&words, &mut digits);
                for (sum, key) in sums.chunks_exact_mut(n).zip(level_spectra.chunks_exact(n)) {
                    self.plan.mul_add_assign(sum, &digits, key);
                }
            }
        }
        let out = output.as_mut();
        let (mask_out, body_out) = out.split_at_mut((self.output_size - 1) * n);
        mask_out.fill(T::ZERO);
        body_out.copy_from_slice(input.get_body().as_ref());
        for (sum, polynomial) in sums.chunks_exact_mut(n).zip(out.chunks_exact_mut(n)) {
            self.plan.inverse_wrapping(sum, &mut words);
            for (o, &p) in polynomial.iter_mut().zip(&words) {
                *o = o.wrapping_sub(T::from_wrapped(p));
            }
        }
        Ok(())
    }
}
