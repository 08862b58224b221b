//! Running a mode's checks ([`run_mode`]) and what each one did ([`CheckReport`]: its outcome and the
//! memcheck errors it caused).

use crate::check::{Check, Outcome};
use crate::mode::Mode;
use crate::valgrind;

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
