//! The constant-time check of the device code, by Adam Langley's ctgrind method (2010).
//!
//! Each check runs one device path with its secrets (key bits, RNG output, messages) marked *undefined* for
//! valgrind's memcheck ([`valgrind::classify`]). Memcheck then reports every conditional jump or move
//! ("Conditional jump or move depends on uninitialised value(s)") and every memory address ("Use of
//! uninitialised value of size 8") computed from a secret: exactly the two kinds of timing leak a cache or a
//! branch predictor exposes. Outputs that are public by design (a ciphertext) are marked defined again
//! ([`valgrind::declassify`]) before the harness looks at them.
//!
//! The checks are grouped in [`Mode`]s: [`Mode::Default`] is everything the device does by default and must
//! be clean; [`Mode::Ziggurat`] and [`Mode::SelfTest`] must be flagged, which proves the check can fail.
//! `scripts/ctgrind.sh` runs each mode under valgrind and judges the result; natively the checks only run
//! (their client requests are no-ops), which the unit tests use.
//!
//! Every check also proves that its secrets reached its output ([`Outcome::tainted`], read with
//! `VALGRIND_GET_VBITS`): a check whose output is not tainted would pass vacuously, so the harness fails it.
//!
//! Limits of the method: memcheck sees the instructions of this build on this CPU (x86_64), not those of
//! another target; it does not see instruction timings that depend on operand values (division, or the
//! early exits of a soft-float multiply on Cortex-M), and a conditional move on a secret is not reported
//! (it is constant-time on x86_64).

pub mod checks;
#[allow(unsafe_code)] // FFI to the valgrind client requests of `src/shim.c`; each call has a SAFETY comment.
pub mod valgrind;

use rand_core::{Rng, TryCryptoRng, TryRng};

/// A group of checks the script runs under one valgrind process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Everything the device does by default: must report no error.
    Default,
    /// The Ziggurat Gaussian sampler (the paper's opt-in): must be flagged.
    Ziggurat,
    /// A deliberate secret branch and a secret table index: must be flagged, one report of each kind.
    SelfTest,
}

impl Mode {
    /// Every mode, in the order the script runs them.
    pub const ALL: [Mode; 3] = [Mode::Default, Mode::Ziggurat, Mode::SelfTest];

    /// The mode's command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Ziggurat => "ziggurat",
            Mode::SelfTest => "self-test",
        }
    }

    /// The mode called `name` on the command line.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether memcheck must report errors in this mode (`false`: it must report none).
    pub const fn expect_flagged(self) -> bool {
        !matches!(self, Mode::Default)
    }

    /// The mode's checks, in order.
    pub fn checks(self) -> &'static [Check] {
        match self {
            Mode::Default => checks::DEFAULT,
            Mode::Ziggurat => checks::ZIGGURAT,
            Mode::SelfTest => checks::SELF_TEST,
        }
    }
}

/// One checked path.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// A short name, printed with the number of errors the check caused.
    pub name: &'static str,
    /// What runs, and which inputs are secret.
    pub what: &'static str,
    /// Runs the path with its secrets classified, and declassifies its outputs.
    pub run: fn() -> Outcome,
}

/// What a check returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the output carried secret (undefined) bits before it was declassified: `Some(true)` proves
    /// that the marked secrets flowed through the checked code. `None` when not under valgrind.
    pub tainted: Option<bool>,
    /// A digest of the declassified outputs, printed so that nothing is optimized away.
    pub digest: u64,
}

/// A running FNV-1a digest of public (declassified) outputs.
#[derive(Clone, Copy, Debug)]
pub struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    /// Absorbs `bytes` (which must be declassified: the digest branches on nothing but reads every byte).
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Absorbs words as little-endian bytes.
    pub fn update_words<W: Word>(&mut self, words: &[W]) {
        for &w in words {
            w.absorb_into(self);
        }
    }

    /// The digest so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// An unsigned word of a checked output, which a [`Digest`] absorbs as its little-endian bytes.
pub trait Word: Copy {
    /// Absorbs the word's little-endian bytes.
    fn absorb_into(self, digest: &mut Digest);
}

macro_rules! word {
    ($($t:ty),*) => {
        $(impl Word for $t {
            fn absorb_into(self, digest: &mut Digest) {
                digest.update(&self.to_le_bytes());
            }
        })*
    };
}
word!(u8, u32, u64);

/// A generator whose every output is marked secret before it is returned: the "RNG output undefined" of a
/// sampler check, independent of how the inner generator computes it.
#[derive(Debug)]
pub struct ClassifiedRng<R>(pub R);

impl<R: Rng> TryRng for ClassifiedRng<R> {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut x = self.0.next_u32();
        valgrind::classify(&mut x);
        Ok(x)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut x = self.0.next_u64();
        valgrind::classify(&mut x);
        Ok(x)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.0.fill_bytes(dst);
        valgrind::classify(dst);
        Ok(())
    }
}

/// Only for the checks: the output is as good as the inner generator's.
impl<R: Rng + TryCryptoRng> TryCryptoRng for ClassifiedRng<R> {}

/// What one check did, as [`run_mode`] reports it.
#[derive(Clone, Copy, Debug)]
pub struct CheckReport {
    /// The check.
    pub check: &'static Check,
    /// Its outcome.
    pub outcome: Outcome,
    /// The memcheck errors reported while it ran (0 when not under valgrind).
    pub errors: u32,
}

/// Runs every check of `mode` in order, counting the memcheck errors each one caused.
pub fn run_mode(mode: Mode) -> impl Iterator<Item = CheckReport> {
    mode.checks().iter().map(|check| {
        let before = valgrind::error_count();
        let outcome = (check.run)();
        let errors = valgrind::error_count().saturating_sub(before);
        CheckReport { check, outcome, errors }
    })
}
