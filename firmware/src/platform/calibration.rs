//! A clock's calibration against a loop of known length: the clocks count ticks, the figures are instructions.

/// Ticks per known instruction count, measured once (`Clock::calibrate`).
pub(crate) struct Calibration {
    pub(crate) loop_instructions: u64,
    pub(crate) loop_ticks: u64,
}

impl Calibration {
    /// The instructions executed in `ticks` (under `-icount`, the virtual clock advances by a fixed time per
    /// instruction, so ticks are proportional to instructions; `minstret` counts them).
    pub(crate) fn instructions(&self, ticks: u64) -> u64 {
        (ticks * self.loop_instructions + self.loop_ticks / 2) / self.loop_ticks.max(1)
    }
}
