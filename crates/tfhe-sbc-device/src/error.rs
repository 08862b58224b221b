//! The device crate's error type.

/// What went wrong on the device: a caller error, never a data-dependent secret condition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Error {
    /// A parameter-set or entity check from the core crate failed.
    Core(tfhe_sbc_core::Error),
    /// The encryptor was instantiated for `N = expected` but the parameter set or key says `found`.
    PolynomialSizeMismatch {
        /// The encryptor's `N`.
        expected: usize,
        /// The parameter set's or key's `N`.
        found: usize,
    },
    /// The parameter set's or key's GLWE dimension `k` is not the one the encryptor was instantiated for.
    UnsupportedGlweDimension(usize),
    /// A message of `found` bytes does not fit the `capacity` bytes of one ciphertext.
    MessageTooLong {
        /// The message bytes one ciphertext holds (`N / 8`).
        capacity: usize,
        /// The bytes given.
        found: usize,
    },
    /// An output buffer has the wrong length.
    WrongLength {
        /// The length required.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// The output slice is too small for the encoded frame.
    BufferTooSmall,
    /// The message is longer than the wire format can describe (2^32 - 1 bytes).
    MessageTooLarge,
    /// The operating system's random source failed.
    Entropy,
    /// The caller's random number generator (a hardware TRNG) reported a failure while seeding.
    RngFailed,
    /// The encryptor or decryptor has no key yet (built from `EMPTY`, or the key was forgotten).
    KeyNotSet,
    /// The encryptor's CSPRNG has not been seeded yet (built from `EMPTY`).
    NotSeeded,
    /// The Ziggurat sampler (feature `ziggurat`) was asked for a set whose noise is not Gaussian.
    ZigguratNeedsGaussianSet,
    /// The noise is too small to hide the key or too large to decrypt (see
    /// [`crate::noise::DeviceNoise::for_parameters`]).
    NoiseOutOfRange,
    /// The frame counter reached its limit: persist a new high-water mark and extend it, or reboot with a new
    /// boot count.
    SequenceExhausted,
    /// A key file (public key, credentials) is not of a supported format, names an unknown parameter set,
    /// has the wrong length or fails its checksum.
    BadKeyFile,
    /// The chunk is not one of the message's chunks (index, count or length disagree).
    ChunkNotInMessage {
        /// The chunk's index.
        index: u32,
        /// The chunk's count.
        count: u32,
    },
    /// A public key that would not hide the message: refused before any encryption under it.
    DegeneratePublicKey(PublicKeyDefect),
    /// A public-key file of another key set than the device's credentials (key id or parameter set differ).
    PublicKeyOfAnotherKeySet {
        /// The key id of the device's credentials.
        expected_key_id: u32,
        /// The key id the public-key file names.
        found_key_id: u32,
    },
    /// Compact lists carry `u8`, `u16` or `u32` readings: not readings of this many bits.
    UnsupportedReadingWidth(u32),
    /// A message of readings whose length is not a whole number of readings.
    PartialReading {
        /// The bytes of one reading.
        reading_bytes: usize,
        /// The message's length in bytes.
        found: usize,
    },
}

/// What makes a public key degenerate ([`Error::DegeneratePublicKey`]). A real public key's body
/// `b = a * s + e` is indistinguishable from uniform on the torus; each of these refuses a genuine key with
/// probability below `2^-43` (`crate::encrypt::public_key_check` gives every threshold and its rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublicKeyDefect {
    /// Every body coefficient is 0: ciphertexts would carry the message in the clear.
    ZeroBody,
    /// Far too few or too many body bits are set (a low-weight body: `b * u` reveals the message).
    LowWeightBody,
    /// The body equals (or is the negation of) a mask polynomial in more than `N / 64` coefficients.
    BodyEqualsMask,
    /// The top 4 bits of the body's words are far from uniform (chi-square above 128): e.g. every word
    /// the same balanced word `0x5555_5555`.
    NonUniformTopBits,
    /// The differences `b_{j+1} - b_j` are far from uniform (chi-square above 128): e.g. an arithmetic
    /// progression, or a constant body.
    StructuredDifferences,
    /// Some bit position is set in far too few or too many words.
    BiasedBit,
    /// Far too many words repeat (in their top 12 bits): a body of few distinct values.
    RepeatedValues,
    /// The body is a rotation of a mask polynomial (`+-X^r a`, cyclic or negacyclic, up to a small error).
    BodyIsRotatedMask,
}

impl core::fmt::Display for PublicKeyDefect {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::ZeroBody => "its body is all zero",
            Self::LowWeightBody => "its body's bit weight is far from uniform",
            Self::BodyEqualsMask => "its body equals a mask polynomial",
            Self::NonUniformTopBits => "its body's top bits are far from uniform",
            Self::StructuredDifferences => "its body's consecutive differences are far from uniform",
            Self::BiasedBit => "a bit position of its body is far from balanced",
            Self::RepeatedValues => "its body repeats far too many values",
            Self::BodyIsRotatedMask => "its body is a rotation of a mask polynomial",
        })
    }
}

impl Error {
    /// `Ok` when a buffer of `found` elements has the `expected` length, [`Error::WrongLength`] otherwise.
    #[inline]
    pub(crate) fn check_length(expected: usize, found: usize) -> Result<()> {
        if expected == found {
            Ok(())
        } else {
            Err(Self::WrongLength { expected, found })
        }
    }

    /// `Ok` when a buffer of `found` elements holds one or more whole polynomials of `n` coefficients (a
    /// `k * N` key or mask), [`Error::WrongLength`] (expected `n`) otherwise.
    #[inline]
    pub(crate) fn check_polynomials(n: usize, found: usize) -> Result<()> {
        if found == 0 || !found.is_multiple_of(n) {
            Err(Self::WrongLength { expected: n, found })
        } else {
            Ok(())
        }
    }
}

impl From<tfhe_sbc_core::Error> for Error {
    fn from(e: tfhe_sbc_core::Error) -> Self {
        Self::Core(e)
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::Core(e) => e.fmt(f),
            Self::PolynomialSizeMismatch { expected, found } => {
                write!(
                    f,
                    "encryptor is for N = {expected}, parameter set or key has N = {found}"
                )
            }
            Self::UnsupportedGlweDimension(k) => write!(f, "GLWE dimension {k} does not match the encryptor's"),
            Self::MessageTooLong { capacity, found } => {
                write!(
                    f,
                    "message of {found} bytes exceeds the {capacity} bytes of one ciphertext"
                )
            }
            Self::WrongLength { expected, found } => write!(f, "buffer has length {found}, expected {expected}"),
            Self::BufferTooSmall => f.write_str("output buffer too small for the frame"),
            Self::MessageTooLarge => f.write_str("message longer than 2^32 - 1 bytes"),
            Self::Entropy => f.write_str("the operating system's random source failed"),
            Self::RngFailed => f.write_str("the random number generator failed while seeding"),
            Self::KeyNotSet => f.write_str("no key set: call set_key first"),
            Self::NotSeeded => f.write_str("the CSPRNG is not seeded: call seed first"),
            Self::BadKeyFile => f.write_str(
                "key file rejected: wrong format or version, unknown parameter set, wrong length or bad checksum",
            ),
            Self::SequenceExhausted => f.write_str("the frame counter has no sequence numbers left"),
            Self::ChunkNotInMessage { index, count } => {
                write!(f, "chunk {index} of {count} is not a chunk of this message")
            }
            Self::ZigguratNeedsGaussianSet => {
                f.write_str("the Ziggurat sampler needs a parameter set with Gaussian noise")
            }
            Self::DegeneratePublicKey(defect) => write!(f, "public key refused: {defect}"),
            Self::PublicKeyOfAnotherKeySet {
                expected_key_id,
                found_key_id,
            } => write!(
                f,
                "public key of key id {found_key_id:#010x}, the device's credentials are for key id {expected_key_id:#010x}"
            ),
            Self::UnsupportedReadingWidth(bits) => {
                write!(f, "compact lists carry 8-, 16- or 32-bit readings, not {bits}-bit ones")
            }
            Self::PartialReading { reading_bytes, found } => write!(
                f,
                "a message of {found} bytes is not a whole number of {reading_bytes}-byte readings"
            ),
            Self::NoiseOutOfRange => f.write_str(
                "noise out of range: at least 1/q of standard deviation, and 8 sigma (or the bound) below q/8",
            ),
        }
    }
}

impl core::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
