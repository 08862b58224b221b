//! The crate's error type.

/// What was wrong with a parameter set, an encoding or a container.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The polynomial size is not a power of two.
    PolynomialSizeNotPowerOfTwo(usize),
    /// The polynomial size is outside the supported range.
    PolynomialSizeOutOfRange {
        /// The size given.
        size: usize,
        /// The smallest supported size.
        min: usize,
        /// The largest supported size.
        max: usize,
    },
    /// The GLWE dimension `k` is 0.
    ZeroGlweDimension,
    /// `k * N` exceeds [`MAX_LWE_DIMENSION`](crate::parameters::MAX_LWE_DIMENSION).
    GlweDimensionTooLarge {
        /// The GLWE dimension `k` given.
        glwe_dimension: usize,
        /// The polynomial size `N` given.
        polynomial_size: usize,
        /// The largest `k * N` supported.
        max_lwe_dimension: usize,
    },
    /// A parameter set's torus width is neither 32 nor 64.
    UnsupportedTorusBits(u32),
    /// The noise standard deviation is not a finite positive number below 1/2.
    InvalidNoiseStdDev(f64),
    /// A custom set's Gaussian noise is below the 132-bit security floor (tfhe-rs's
    /// `minimal_lwe_variance_for_132_bits_security_gaussian` for `k * N` and `q`). Both in torus units
    /// squared.
    NoiseBelowSecurityFloor {
        /// The set's noise variance.
        variance: f64,
        /// The smallest variance that meets the floor.
        minimum: f64,
    },
    /// A custom set's TUniform bound is below the 132-bit security floor
    /// ([`tuniform_bound_floor`](crate::parameters::secure_noise::tuniform_bound_floor) for `k * N` and `q`).
    TUniformBoundBelowSecurityFloor {
        /// The set's bound `log2`.
        bound_log2: u32,
        /// The smallest bound `log2` that meets the floor.
        minimum: u32,
    },
    /// No named parameter set has this id.
    UnknownParameterSet(u16),
    /// The torus width does not match the scalar type in use.
    TorusBitsMismatch {
        /// What the parameter set says.
        expected: u32,
        /// What the scalar type has.
        found: u32,
    },
    /// The message modulus is not a power of two that fits the torus with a padding bit.
    InvalidMessageModulus(u64),
    /// A binary key coefficient is neither 0 nor 1.
    NonBinaryKey,
    /// A TUniform bound `b` outside `1..=62` (or too wide for the torus: `b + 2` bits must fit it).
    InvalidTUniformBound(u32),
    /// A container does not have the length the shape requires.
    WrongLength {
        /// The length the shape requires.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// An integer width that is not a positive multiple of the radix block's bits of at most 64.
    InvalidValueBits {
        /// The width given.
        value_bits: u32,
        /// The message bits per block.
        block_bits: u32,
    },
    /// A value has bits at or above its declared width.
    ValueOutOfRange {
        /// The value.
        value: u64,
        /// The declared width.
        value_bits: u32,
    },
    /// More blocks than the plaintext has coefficients.
    CapacityExceeded {
        /// The coefficients the values need.
        needed: usize,
        /// The coefficients there are.
        available: usize,
    },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::PolynomialSizeNotPowerOfTwo(n) => {
                write!(f, "polynomial size {n} is not a power of two")
            }
            Self::PolynomialSizeOutOfRange { size, min, max } => {
                write!(f, "polynomial size {size} is outside {min}..={max}")
            }
            Self::ZeroGlweDimension => f.write_str("GLWE dimension must be at least 1"),
            Self::GlweDimensionTooLarge {
                glwe_dimension,
                polynomial_size,
                max_lwe_dimension,
            } => write!(
                f,
                "GLWE dimension {glwe_dimension} with polynomial size {polynomial_size} exceeds the largest \
                 k*N, {max_lwe_dimension}"
            ),
            Self::UnsupportedTorusBits(bits) => {
                write!(f, "torus width {bits} is not supported: use 32 or 64 bits")
            }
            Self::InvalidNoiseStdDev(s) => {
                write!(f, "noise standard deviation {s} must be finite, positive and below 1/2")
            }
            Self::NoiseBelowSecurityFloor { variance, minimum } => write!(
                f,
                "noise variance {variance:e} (std dev 2^{:.2}) is below the 132-bit security floor {minimum:e} \
                 (std dev 2^{:.2}) for this k*N and q: raise the standard deviation or N, or use \
                 GlweParameters::new_allow_insecure for tests and toy sizes only",
                libm::log2(variance) / 2.0,
                libm::log2(minimum) / 2.0
            ),
            Self::TUniformBoundBelowSecurityFloor { bound_log2, minimum } => write!(
                f,
                "TUniform bound 2^{bound_log2} is below the 132-bit security floor 2^{minimum} for this k*N and q: \
                 use bound_log2 >= {minimum} or a larger N, or GlweParameters::new_allow_insecure for tests and \
                 toy sizes only"
            ),
            Self::UnknownParameterSet(id) => write!(f, "no named parameter set has id {id}"),
            Self::TorusBitsMismatch { expected, found } => {
                write!(
                    f,
                    "parameter set is for a {expected}-bit torus, scalar type has {found} bits"
                )
            }
            Self::InvalidMessageModulus(p) => {
                write!(
                    f,
                    "message modulus {p} must be a power of two, at least 2, leaving room for a padding bit"
                )
            }
            Self::NonBinaryKey => f.write_str("binary key coefficients must be 0 or 1"),
            Self::InvalidTUniformBound(b) => {
                write!(
                    f,
                    "TUniform bound 2^{b} is invalid: b must be at least 1 and b + 2 must fit the torus"
                )
            }
            Self::WrongLength { expected, found } => {
                write!(f, "container has length {found}, expected {expected}")
            }
            Self::InvalidValueBits { value_bits, block_bits } => write!(
                f,
                "integer width {value_bits} is not a positive multiple of {block_bits} bits per block of at most 64"
            ),
            Self::ValueOutOfRange { value, value_bits } => {
                write!(f, "value {value} does not fit {value_bits} bits")
            }
            Self::CapacityExceeded { needed, available } => {
                write!(
                    f,
                    "the values need {needed} coefficients, the plaintext has {available}"
                )
            }
        }
    }
}

impl core::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
