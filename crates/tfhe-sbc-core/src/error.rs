//! The crate's error type.

/// What was wrong with a parameter set, an encoding or a container.
///
/// `Display` and `Debug` use no float formatting and no float arithmetic (`core::fmt`'s float formatting is
/// about 17 KB of code on a Cortex-M): the `f64` fields print as their base-2 logarithm to two decimals,
/// computed from their bits with integers, plus the exact bits in `Debug`.
#[derive(Clone, Copy, PartialEq)]
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
    /// A compact body width outside `1..=torus_bits`, or below what the parameter set's noise budget allows.
    UnsupportedBodyBits {
        /// The width given.
        body_bits: u32,
        /// The torus width.
        torus_bits: u32,
    },
    /// The unused bits at the end of a packed body are not 0.
    NonZeroPadding,
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
                write!(
                    f,
                    "noise standard deviation {} must be finite, positive and below 1/2",
                    Log2(s)
                )
            }
            Self::NoiseBelowSecurityFloor { variance, minimum } => write!(
                f,
                "noise variance {} (std dev {}) is below the 132-bit security floor {} (std dev {}) for this k*N \
                 and q: raise the standard deviation or N, or use GlweParameters::new_allow_insecure for tests and \
                 toy sizes only",
                Log2(variance),
                Log2Sqrt(variance),
                Log2(minimum),
                Log2Sqrt(minimum)
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
            Self::UnsupportedBodyBits { body_bits, torus_bits } => write!(
                f,
                "body width {body_bits} bits is not supported on a {torus_bits}-bit torus: use the set's \
                 compact_body_bits() up to {torus_bits}"
            ),
            Self::NonZeroPadding => f.write_str("the unused bits at the end of a packed body must be 0"),
        }
    }
}

impl core::fmt::Debug for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::PolynomialSizeNotPowerOfTwo(n) => f.debug_tuple("PolynomialSizeNotPowerOfTwo").field(&n).finish(),
            Self::PolynomialSizeOutOfRange { size, min, max } => debug_struct(
                f,
                "PolynomialSizeOutOfRange",
                &[("size", &size), ("min", &min), ("max", &max)],
            ),
            Self::ZeroGlweDimension => f.write_str("ZeroGlweDimension"),
            Self::GlweDimensionTooLarge {
                glwe_dimension,
                polynomial_size,
                max_lwe_dimension,
            } => debug_struct(
                f,
                "GlweDimensionTooLarge",
                &[
                    ("glwe_dimension", &glwe_dimension),
                    ("polynomial_size", &polynomial_size),
                    ("max_lwe_dimension", &max_lwe_dimension),
                ],
            ),
            Self::UnsupportedTorusBits(bits) => f.debug_tuple("UnsupportedTorusBits").field(&bits).finish(),
            Self::InvalidNoiseStdDev(s) => f.debug_tuple("InvalidNoiseStdDev").field(&Bits(s)).finish(),
            Self::NoiseBelowSecurityFloor { variance, minimum } => debug_struct(
                f,
                "NoiseBelowSecurityFloor",
                &[("variance", &Bits(variance)), ("minimum", &Bits(minimum))],
            ),
            Self::TUniformBoundBelowSecurityFloor { bound_log2, minimum } => debug_struct(
                f,
                "TUniformBoundBelowSecurityFloor",
                &[("bound_log2", &bound_log2), ("minimum", &minimum)],
            ),
            Self::UnknownParameterSet(id) => f.debug_tuple("UnknownParameterSet").field(&id).finish(),
            Self::TorusBitsMismatch { expected, found } => {
                debug_struct(f, "TorusBitsMismatch", &[("expected", &expected), ("found", &found)])
            }
            Self::InvalidMessageModulus(p) => f.debug_tuple("InvalidMessageModulus").field(&p).finish(),
            Self::NonBinaryKey => f.write_str("NonBinaryKey"),
            Self::InvalidTUniformBound(b) => f.debug_tuple("InvalidTUniformBound").field(&b).finish(),
            Self::WrongLength { expected, found } => {
                debug_struct(f, "WrongLength", &[("expected", &expected), ("found", &found)])
            }
            Self::InvalidValueBits { value_bits, block_bits } => debug_struct(
                f,
                "InvalidValueBits",
                &[("value_bits", &value_bits), ("block_bits", &block_bits)],
            ),
            Self::ValueOutOfRange { value, value_bits } => {
                debug_struct(f, "ValueOutOfRange", &[("value", &value), ("value_bits", &value_bits)])
            }
            Self::CapacityExceeded { needed, available } => {
                debug_struct(f, "CapacityExceeded", &[("needed", &needed), ("available", &available)])
            }
            Self::UnsupportedBodyBits { body_bits, torus_bits } => debug_struct(
                f,
                "UnsupportedBodyBits",
                &[("body_bits", &body_bits), ("torus_bits", &torus_bits)],
            ),
            Self::NonZeroPadding => f.write_str("NonZeroPadding"),
        }
    }
}

/// `f.debug_struct(name)` with `fields`, finished: one call per struct instead of a builder chain.
pub(crate) fn debug_struct(
    f: &mut core::fmt::Formatter<'_>,
    name: &str,
    fields: &[(&str, &dyn core::fmt::Debug)],
) -> core::fmt::Result {
    let mut debug = f.debug_struct(name);
    for (field, value) in fields {
        debug.field(field, value);
    }
    debug.finish()
}

/// Prints `x` as `2^l` with `l = log2(x)` to two decimals, with integer arithmetic and formatting only
/// (`NaN`, infinity and non-positive values by name).
struct Log2(f64);

/// Prints `sqrt(x)` (a standard deviation from a variance) as [`Log2`] does.
struct Log2Sqrt(f64);

/// `Debug` of an error's `f64`: [`Log2`] and the exact bits.
struct Bits(f64);

fn write_log2(f: &mut core::fmt::Formatter<'_>, x: f64, scale_percent: i64) -> core::fmt::Result {
    if x.is_nan() {
        return f.write_str("NaN");
    }
    if x <= 0.0 {
        return f.write_str(if x == 0.0 { "0" } else { "a negative number" });
    }
    if x.is_infinite() {
        return f.write_str("infinity");
    }
    let hundredths = log2_hundredths(x, scale_percent);
    let sign = if hundredths < 0 { "-" } else { "" };
    let magnitude = hundredths.unsigned_abs();
    write!(f, "2^{sign}{}.{:02}", magnitude / 100, magnitude % 100)
}

/// `round(log2(x) * scale_percent)` for a finite positive `x`, in integer arithmetic only (no soft-float code
/// on a microcontroller): the exponent from the bits, then 20 fractional bits of `log2(mantissa)` by repeated
/// squaring. Exact to the rounding of the last digit.
fn log2_hundredths(x: f64, scale_percent: i64) -> i64 {
    const FRACTION_BITS: u32 = 20;
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let mut mantissa = bits & ((1 << 52) - 1);
    let mut exponent = biased - 1023;
    if biased == 0 {
        // A subnormal, `mantissa * 2^-1074`: normalize it to `1.f * 2^e`.
        let shift = mantissa.leading_zeros() - 11;
        mantissa = (mantissa << shift) & ((1 << 52) - 1);
        exponent = -1022 - i64::from(shift);
    }
    // The mantissa 1.m in Q31 (fits a u64 when squared).
    let mut m: u64 = (1 << 31) | (mantissa >> 21);
    let mut fraction: i64 = 0;
    for _ in 0..FRACTION_BITS {
        m = (m * m) >> 31;
        fraction <<= 1;
        if m >= 1 << 32 {
            fraction |= 1;
            m >>= 1;
        }
    }
    let fixed = (exponent << FRACTION_BITS) + fraction;
    let scaled = fixed * scale_percent;
    let half = 1i64 << (FRACTION_BITS - 1);
    if scaled >= 0 {
        (scaled + half) >> FRACTION_BITS
    } else {
        -((-scaled + half) >> FRACTION_BITS)
    }
}

impl core::fmt::Display for Log2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write_log2(f, self.0, 100)
    }
}

impl core::fmt::Display for Log2Sqrt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write_log2(f, self.0, 50)
    }
}

impl core::fmt::Debug for Bits {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write_log2(f, self.0, 100)?;
        write!(f, " (f64 bits {:#018x})", self.0.to_bits())
    }
}

impl core::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::log2_hundredths;

    #[test]
    fn integer_log2_matches_libm() {
        // A fixed-seed LCG over bit patterns of finite positive doubles, subnormals included.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut off_by_one = 0;
        for i in 0..100_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let x = f64::from_bits(state >> 1);
            if !x.is_finite() || x == 0.0 || i % 1000 == 0 && x > 1.0 {
                continue;
            }
            for scale in [100, 50] {
                let exact = libm::round(libm::log2(x) * scale as f64) as i64;
                let ours = log2_hundredths(x, scale);
                assert!((ours - exact).abs() <= 1, "x = {x:e}, scale {scale}: {ours} vs {exact}");
                off_by_one += usize::from(ours != exact);
            }
        }
        // Only values within about 1e-4 of a rounding boundary may round the other way.
        assert!(off_by_one < 50, "{off_by_one} roundings differ");
        assert_eq!(log2_hundredths(1.0, 100), 0);
        assert_eq!(log2_hundredths(0.25, 50), -100);
    }
}
