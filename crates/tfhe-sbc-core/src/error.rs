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
    /// The noise standard deviation is not a finite positive number below 1/2.
    InvalidNoiseStdDev(f64),
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
            Self::InvalidNoiseStdDev(s) => {
                write!(f, "noise standard deviation {s} must be finite, positive and below 1/2")
            }
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
                write!(f, "TUniform bound 2^{b} is invalid: b must be at least 1 and b + 2 must fit the torus")
            }
            Self::WrongLength { expected, found } => {
                write!(f, "container has length {found}, expected {expected}")
            }
        }
    }
}

impl core::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
