//! The secret key's FFT, computed once and reused for every product (the paper's "reuse").

use crate::error::{Error, Result};
use negacyclic_fft::Plan;
use tfhe_sbc_core::entities::GlweSecretKey;
use zeroize::Zeroize;

/// The spectrum of a binary TRLWE key (`k = 1`) of `N` coefficients, with its FFT plan.
///
/// Secret: zeroized on drop, redacted in `Debug`.
pub struct KeySpectrum<const N: usize> {
    plan: Plan,
    spectrum: [f64; N],
}

impl<const N: usize> KeySpectrum<N> {
    /// Transforms `key` (which must have `k = 1` and `N` coefficients) once.
    pub fn new<C: AsRef<[u8]> + AsMut<[u8]>>(key: &GlweSecretKey<C>) -> Result<Self> {
        let mut this = Self {
            plan: plan::<N>()?,
            spectrum: [0.0; N],
        };
        this.refresh(key)?;
        Ok(this)
    }

    /// Recomputes the spectrum from `key` (for measuring the "on-the-fly" variant, or after a key change).
    pub fn refresh<C: AsRef<[u8]> + AsMut<[u8]>>(&mut self, key: &GlweSecretKey<C>) -> Result<()> {
        if key.polynomial_size().0 != N {
            return Err(Error::PolynomialSizeMismatch {
                expected: N,
                found: key.polynomial_size().0,
            });
        }
        if key.glwe_dimension().0 != 1 {
            return Err(Error::UnsupportedGlweDimension(key.glwe_dimension().0));
        }
        self.plan.forward(key.polynomial(0), &mut self.spectrum);
        Ok(())
    }

    /// The FFT plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Writes `a * s` (wrapping) into `out`, given `a` already placed in `scratch` as FFT input (see
    /// [`Plan::forward_in_place`]). `scratch` is consumed.
    pub(crate) fn mul_fft_input(&self, scratch: &mut [f64; N], out: &mut [u32]) {
        self.plan.forward_in_place(scratch);
        self.plan.mul_assign(scratch, &self.spectrum);
        self.plan.inverse_wrapping(scratch, out);
    }

    /// Adds `a * s` (wrapping) to `out`, given `a` already placed in `scratch` as FFT input. `scratch` is
    /// consumed.
    pub(crate) fn mul_add_fft_input(&self, scratch: &mut [f64; N], out: &mut [u32]) {
        self.plan.forward_in_place(scratch);
        self.plan.mul_assign(scratch, &self.spectrum);
        self.plan.inverse_add_wrapping(scratch, out);
    }
}

/// The FFT plan for `N`, as a device error if `N` is unsupported.
pub(crate) fn plan<const N: usize>() -> Result<Plan> {
    Plan::new(N).map_err(|_| {
        Error::Core(tfhe_sbc_core::Error::PolynomialSizeOutOfRange {
            size: N,
            min: negacyclic_fft::MIN_POLYNOMIAL_SIZE,
            max: negacyclic_fft::MAX_POLYNOMIAL_SIZE,
        })
    })
}

impl<const N: usize> Drop for KeySpectrum<N> {
    fn drop(&mut self) {
        self.spectrum.zeroize();
    }
}

impl<const N: usize> zeroize::ZeroizeOnDrop for KeySpectrum<N> {}

impl<const N: usize> core::fmt::Debug for KeySpectrum<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeySpectrum")
            .field("polynomial_size", &N)
            .field("spectrum", &"<redacted>")
            .finish()
    }
}
