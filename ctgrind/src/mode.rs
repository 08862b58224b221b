//! The modes: the groups of checks `scripts/ctgrind.sh` runs under one valgrind process each, and whether
//! memcheck must flag them.

use crate::check::Check;
use crate::checks;

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
        match self {
            Mode::Default => false,
            Mode::Ziggurat | Mode::SelfTest => true,
        }
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
