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

mod check;
mod classified_rng;
mod digest;
mod mode;
mod run;

pub use check::{Check, Outcome};
pub use classified_rng::ClassifiedRng;
pub use digest::{Digest, Word};
pub use mode::Mode;
pub use run::{CheckReport, run_mode};
