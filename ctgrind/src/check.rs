//! What a check is ([`Check`]: a name, what it runs, the function that runs it) and what it returns
//! ([`Outcome`]: whether its secrets reached its output, and a digest of that output).

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
