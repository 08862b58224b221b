//! The per-device anti-replay window (RFC 4303 section 3.4.3, with RFC 6479's bitmap): the highest sequence
//! number accepted so far and a bitmap of the [`WINDOW`] numbers at and below it.
//!
//! A number above the highest is new; one inside the window is new unless its bit is set; one below the
//! window is too old (it might be a replay the bitmap no longer remembers). A registered floor (the
//! server's persisted high-water mark) rejects everything below it, also before the first frame.
//!
//! [`ReplayWindow::check`] does not change the window; [`ReplayWindow::accept`] records a number. Intake calls
//! `accept` only after the frame's MAC verified, so forged frames cannot move the window.

use crate::error::IntakeError;

/// The window's width: how far out of order (in sequence numbers) a frame may arrive.
pub const WINDOW: u64 = 128;

/// One device's window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayWindow {
    floor: u64,
    highest: Option<u64>,
    /// Bit `i` is set when `highest - i` was accepted.
    seen: u128,
}

impl ReplayWindow {
    /// An empty window that refuses numbers below `floor`.
    pub const fn new(floor: u64) -> Self {
        Self {
            floor,
            highest: None,
            seen: 0,
        }
    }

    /// The window a device resumes with after a restart, from this one as persisted: only numbers above
    /// the highest accepted are acceptable (none after `u64::MAX`, which a floor of `highest + 1` cannot
    /// express). A frame accepted before the restart and sent again is then "too old", as is every number a
    /// device that lost its counter would reuse (never a silent "duplicate" for a new reading).
    pub fn resumed(&self) -> Self {
        match self.highest {
            None => Self::new(self.floor),
            Some(highest) => match highest.checked_add(1) {
                Some(floor) => Self::new(floor.max(self.floor)),
                None => Self {
                    floor: u64::MAX,
                    highest: Some(u64::MAX),
                    seen: 1,
                },
            },
        }
    }

    /// The highest number accepted, if any: what the server persists as the device's floor.
    pub const fn highest(&self) -> Option<u64> {
        self.highest
    }

    /// The lowest number that [`check`](Self::check) can still accept.
    pub fn lowest_acceptable(&self) -> u64 {
        match self.highest {
            Some(h) => self.floor.max(h.saturating_sub(WINDOW - 1)),
            None => self.floor,
        }
    }

    /// Whether `sequence` of device `device_id` (this window's device, named in the error) is new, without
    /// recording it: [`IntakeError::Replayed`] if it was accepted, [`IntakeError::TooOld`] if it is below
    /// the window or the floor.
    pub fn check(&self, device_id: u64, sequence: u64) -> Result<(), IntakeError> {
        let too_old = Err(IntakeError::TooOld {
            device_id,
            sequence,
            lowest_acceptable: self.lowest_acceptable(),
        });
        if sequence < self.floor {
            return too_old;
        }
        let Some(highest) = self.highest else { return Ok(()) };
        if sequence > highest {
            return Ok(());
        }
        let behind = highest - sequence;
        if behind >= WINDOW {
            too_old
        } else if self.seen >> behind & 1 == 1 {
            Err(IntakeError::Replayed { device_id, sequence })
        } else {
            Ok(())
        }
    }

    /// The window's persistent form ([`ReplayWindow::BYTES`] bytes): floor, highest (`u64::MAX` with a flag
    /// byte 0 for none), and the bitmap, little-endian.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut out = [0u8; Self::BYTES];
        out[..8].copy_from_slice(&self.floor.to_le_bytes());
        out[8] = u8::from(self.highest.is_some());
        out[9..17].copy_from_slice(&self.highest.unwrap_or(0).to_le_bytes());
        out[17..].copy_from_slice(&self.seen.to_le_bytes());
        out
    }

    /// The window [`ReplayWindow::to_bytes`] wrote; `None` for bytes no window writes (a flag other than 0
    /// or 1, a bitmap without its top bit's number accepted, or bits for numbers below the floor's window).
    pub fn from_bytes(bytes: &[u8; Self::BYTES]) -> Option<Self> {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let seen = u128::from_le_bytes(bytes[17..].try_into().expect("16 bytes"));
        let highest = match bytes[8] {
            0 if word(9) == 0 && seen == 0 => None,
            1 if seen & 1 == 1 => Some(word(9)),
            _ => return None,
        };
        Some(Self {
            floor: word(0),
            highest,
            seen,
        })
    }

    /// The length of [`ReplayWindow::to_bytes`].
    pub const BYTES: usize = 8 + 1 + 8 + 16;

    /// Records `sequence`, which [`check`](Self::check) accepted.
    pub fn accept(&mut self, sequence: u64) {
        debug_assert!(self.check(0, sequence).is_ok());
        match self.highest {
            None => {
                self.highest = Some(sequence);
                self.seen = 1;
            }
            Some(highest) if sequence > highest => {
                let ahead = sequence - highest;
                self.seen = if ahead >= WINDOW { 0 } else { self.seen << ahead };
                self.seen |= 1;
                self.highest = Some(sequence);
            }
            Some(highest) => self.seen |= 1 << (highest - sequence),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The device the windows below belong to.
    const DEVICE: u64 = 7;

    fn replayed(sequence: u64) -> Result<(), IntakeError> {
        Err(IntakeError::Replayed {
            device_id: DEVICE,
            sequence,
        })
    }

    fn too_old(sequence: u64, lowest_acceptable: u64) -> Result<(), IntakeError> {
        Err(IntakeError::TooOld {
            device_id: DEVICE,
            sequence,
            lowest_acceptable,
        })
    }

    /// The window against a plain set of accepted numbers, on a pseudo-random schedule.
    #[test]
    fn matches_a_reference_model() {
        let mut window = ReplayWindow::new(5);
        let mut accepted = std::collections::BTreeSet::new();
        let mut state = 0x1234_5678_u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let top: u64 = accepted.last().copied().unwrap_or(0);
            let sequence = (top + 40).saturating_sub((state >> 33) % 300);
            let expected = if sequence < 5 || (!accepted.is_empty() && sequence + WINDOW <= top) {
                too_old(sequence, window.lowest_acceptable())
            } else if accepted.contains(&sequence) {
                replayed(sequence)
            } else {
                Ok(())
            };
            assert_eq!(
                window.check(DEVICE, sequence),
                expected,
                "sequence {sequence}, top {top}"
            );
            if expected.is_ok() {
                window.accept(sequence);
                accepted.insert(sequence);
            }
        }
        assert!(accepted.len() > 5_000);
        assert_eq!(window.highest(), accepted.last().copied());
    }

    #[test]
    fn bytes_round_trip_and_refuse_what_no_window_writes() {
        let mut window = ReplayWindow::new(9);
        assert_eq!(ReplayWindow::from_bytes(&window.to_bytes()), Some(window.clone()));
        for sequence in [12, 10, 400, 333, u64::MAX] {
            window.accept(sequence);
            assert_eq!(ReplayWindow::from_bytes(&window.to_bytes()), Some(window.clone()));
        }
        let mut bad = window.to_bytes();
        bad[8] = 2;
        assert_eq!(ReplayWindow::from_bytes(&bad), None);
        let mut bad = ReplayWindow::new(9).to_bytes();
        bad[20] = 1;
        assert_eq!(ReplayWindow::from_bytes(&bad), None);
    }

    #[test]
    fn edges() {
        let mut window = ReplayWindow::new(0);
        assert_eq!(window.lowest_acceptable(), 0);
        window.accept(u64::MAX);
        assert_eq!(window.check(DEVICE, u64::MAX), replayed(u64::MAX));
        // Resumed after u64::MAX: nothing is acceptable any more; after 1000: only numbers above it.
        let resumed = ReplayWindow::from_bytes(&window.to_bytes()).unwrap().resumed();
        assert_eq!(resumed.check(DEVICE, u64::MAX), replayed(u64::MAX));
        assert!(matches!(
            resumed.check(DEVICE, u64::MAX - 1),
            Err(IntakeError::TooOld { .. })
        ));
        let mut other = ReplayWindow::new(0);
        other.accept(1000);
        let resumed = other.resumed();
        assert_eq!(resumed.check(DEVICE, 999), too_old(999, 1001));
        assert!(resumed.check(DEVICE, 1000).is_err());
        assert_eq!(resumed.check(DEVICE, 1001), Ok(()));
        assert_eq!(ReplayWindow::new(5).resumed(), ReplayWindow::new(5));
        assert_eq!(window.check(DEVICE, u64::MAX - 127), Ok(()));
        assert_eq!(
            window.check(DEVICE, u64::MAX - 128),
            too_old(u64::MAX - 128, u64::MAX - 127)
        );
        let mut window = ReplayWindow::new(0);
        window.accept(10);
        window.accept(10 + 1000);
        assert_eq!(window.check(DEVICE, 10 + 1000 - 127), Ok(()));
        assert_eq!(window.check(DEVICE, 10), too_old(10, 883));
    }
}
