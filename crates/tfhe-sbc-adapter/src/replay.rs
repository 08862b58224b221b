//! The per-device anti-replay window (RFC 4303 section 3.4.3, with RFC 6479's bitmap): the highest sequence
//! number accepted so far and a bitmap of the [`WINDOW`] numbers at and below it.
//!
//! A number above the highest is new; one inside the window is new unless its bit is set; one below the
//! window is too old (it might be a replay the bitmap no longer remembers). A registered floor (the
//! server's persisted high-water mark) rejects everything below it, also before the first frame.
//!
//! [`ReplayWindow::check`] does not change the window; [`ReplayWindow::accept`] records a number. Intake calls
//! `accept` only after the frame's MAC verified, so forged frames cannot move the window.
//!
//! The window admits a **frame**, not only a number: with each number it keeps the accepted frame's
//! [`FrameTag`] (the first bytes of its MAC). A number it holds is a replay ("duplicate") only for that very
//! frame. Another authentic frame under it comes from a device whose counter went back (a counter file
//! restored from a backup, or a board cloned with its counter): answered "duplicate", its readings would
//! be counted delivered and lost without an error, so it is [`IntakeError::TooOld`] instead, with the
//! number after the highest as the lowest acceptable, which the device then writes into its counter.
//! One slot per residue of the number modulo [`WINDOW`]: the numbers a window holds are consecutive modulo
//! its width, so no two share a slot, and a slot is only overwritten by a number that pushed the older one
//! out of the window.

use crate::error::IntakeError;

/// The window's width: how far out of order (in sequence numbers) a frame may arrive.
pub const WINDOW: u64 = 128;

/// Which frame was accepted under a number: the first [`FrameTag::BYTES`] bytes of its MAC tag. Two
/// different authentic frames share them with probability 2^-64. All zero: not known (a window read from
/// its 33-byte persistent form, which keeps no tags), which [`ReplayWindow::check`] treats as the same
/// frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FrameTag(pub [u8; FrameTag::BYTES]);

impl FrameTag {
    /// The tag's length.
    pub const BYTES: usize = 8;
    /// No frame known.
    pub const UNKNOWN: Self = Self([0; Self::BYTES]);

    /// The tag of a frame whose MAC tag is `mac_tag` (its first [`FrameTag::BYTES`] bytes; a shorter tag,
    /// zero-padded).
    pub fn of_mac(mac_tag: &[u8]) -> Self {
        let mut out = [0u8; Self::BYTES];
        let n = mac_tag.len().min(Self::BYTES);
        out[..n].copy_from_slice(&mac_tag[..n]);
        Self(out)
    }

    /// The tag of the frame `frame` (wire format v2: its MAC tag ends it); [`FrameTag::UNKNOWN`] for bytes
    /// too short to hold one.
    pub fn of_frame(frame: &[u8]) -> Self {
        tfhe_sbc_device::frame::ack::frame_tag(frame).map_or(Self::UNKNOWN, |tag| Self::of_mac(tag))
    }
}

/// One device's window. Two windows are equal when they hold the same numbers with the same tags (the
/// slots of numbers they no longer hold do not count).
#[derive(Clone)]
pub struct ReplayWindow {
    floor: u64,
    highest: Option<u64>,
    /// Bit `i` is set when `highest - i` was accepted.
    seen: u128,
    /// The frame accepted under each number the bitmap holds, in slot `number % WINDOW`.
    tags: Tags,
}

/// A window's tag slots: allocated (1 KiB) at the first known tag, so that a registered device that never
/// sends costs nothing.
#[derive(Clone)]
struct Tags(Option<Box<[FrameTag; WINDOW as usize]>>);

impl Tags {
    const NONE: Self = Self(None);

    fn get(&self, slot: usize) -> FrameTag {
        self.0.as_ref().map_or(FrameTag::UNKNOWN, |tags| tags[slot])
    }

    fn set(&mut self, slot: usize, tag: FrameTag) {
        match &mut self.0 {
            Some(tags) => tags[slot] = tag,
            None if tag == FrameTag::UNKNOWN => {}
            None => {
                let mut tags = Box::new([FrameTag::UNKNOWN; WINDOW as usize]);
                tags[slot] = tag;
                self.0 = Some(tags);
            }
        }
    }
}

impl PartialEq for ReplayWindow {
    fn eq(&self, other: &Self) -> bool {
        (self.floor, self.highest, self.seen) == (other.floor, other.highest, other.seen)
            && self.held_tags().eq(other.held_tags())
    }
}

impl Eq for ReplayWindow {}

impl core::fmt::Debug for ReplayWindow {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReplayWindow")
            .field("floor", &self.floor)
            .field("highest", &self.highest)
            .field("seen", &format_args!("{:#x}", self.seen))
            .field("tags", &format_args!("{} held", self.held()))
            .finish()
    }
}

/// The slot of `sequence` in a window's tags.
const fn slot(sequence: u64) -> usize {
    (sequence % WINDOW) as usize
}

impl ReplayWindow {
    /// An empty window that refuses numbers below `floor`.
    pub const fn new(floor: u64) -> Self {
        Self {
            floor,
            highest: None,
            seen: 0,
            tags: Tags::NONE,
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
                    tags: self.tags.clone(),
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

    /// Whether frame `tag` under `sequence` of device `device_id` (this window's device, named in the
    /// error) is new, without recording it: [`IntakeError::Replayed`] if this frame was accepted under it,
    /// [`IntakeError::TooOld`] if the number is below the window or the floor, or if another frame was
    /// accepted under it (the device's counter went back: then the lowest acceptable number is the one
    /// after the highest).
    pub fn check(&self, device_id: u64, sequence: u64, tag: FrameTag) -> Result<(), IntakeError> {
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
            let accepted = self.tags.get(slot(sequence));
            if accepted == tag || accepted == FrameTag::UNKNOWN {
                Err(IntakeError::Replayed { device_id, sequence })
            } else {
                Err(IntakeError::TooOld {
                    device_id,
                    sequence,
                    lowest_acceptable: highest.saturating_add(1).max(self.floor),
                })
            }
        } else {
            Ok(())
        }
    }

    /// The frame accepted under `sequence`, if the window holds that number.
    pub fn tag(&self, sequence: u64) -> Option<FrameTag> {
        let behind = self.highest?.checked_sub(sequence)?;
        (behind < WINDOW && self.seen >> behind & 1 == 1).then(|| self.tags.get(slot(sequence)))
    }

    /// The tags of the numbers the window holds, highest first (bit order of the bitmap): what
    /// [`ReplayWindow::with_tags`] takes back.
    pub fn held_tags(&self) -> impl Iterator<Item = FrameTag> + '_ {
        let highest = self.highest.unwrap_or(0);
        (0..WINDOW)
            .filter(|&behind| self.seen >> behind & 1 == 1)
            .map(move |behind| self.tags.get(slot(highest - behind)))
    }

    /// How many numbers the window holds (the count of [`ReplayWindow::held_tags`]).
    pub fn held(&self) -> usize {
        self.seen.count_ones() as usize
    }

    /// This window with `tags` (as [`ReplayWindow::held_tags`] gave them) for the numbers it holds; `None`
    /// if their count is not [`ReplayWindow::held`].
    pub fn with_tags(mut self, tags: &[FrameTag]) -> Option<Self> {
        if tags.len() != self.held() {
            return None;
        }
        let highest = self.highest.unwrap_or(0);
        let held = (0..WINDOW).filter(|&behind| self.seen >> behind & 1 == 1);
        for (behind, &tag) in held.zip(tags) {
            self.tags.set(slot(highest - behind), tag);
        }
        Some(self)
    }

    /// The window's persistent form ([`ReplayWindow::BYTES`] bytes): floor, highest (`u64::MAX` with a flag
    /// byte 0 for none), and the bitmap, little-endian. The tags are not in it
    /// ([`ReplayWindow::held_tags`]): a window read back treats every number it holds as the same frame,
    /// which [`ReplayWindow::resumed`] makes moot (it holds none).
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
        // Bit `i` is number `highest - i`: no bit for a number below 0.
        if let Some(h) = highest
            && h < WINDOW - 1
            && seen >> (h + 1) != 0
        {
            return None;
        }
        Some(Self {
            floor: word(0),
            highest,
            seen,
            tags: Tags::NONE,
        })
    }

    /// The length of [`ReplayWindow::to_bytes`].
    pub const BYTES: usize = 8 + 1 + 8 + 16;

    /// Records frame `tag` under `sequence`, which [`check`](Self::check) accepted.
    pub fn accept(&mut self, sequence: u64, tag: FrameTag) {
        debug_assert!(self.check(0, sequence, tag).is_ok());
        self.tags.set(slot(sequence), tag);
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
    /// The frame the tests accept (one for every number, as far as most tests care).
    const T: FrameTag = FrameTag([1; FrameTag::BYTES]);

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
            let tag = FrameTag::of_mac(&sequence.to_le_bytes());
            assert_eq!(
                window.check(DEVICE, sequence, tag),
                expected,
                "sequence {sequence}, top {top}"
            );
            if accepted.contains(&sequence) && expected == replayed(sequence) {
                // Another frame under an accepted number: too old, with the number after the highest.
                let other = FrameTag::of_mac(&(sequence ^ 1 << 40).to_le_bytes());
                assert_eq!(window.check(DEVICE, sequence, other), too_old(sequence, top + 1));
            }
            if expected.is_ok() {
                window.accept(sequence, tag);
                accepted.insert(sequence);
            }
        }
        assert!(accepted.len() > 5_000);
        assert_eq!(window.highest(), accepted.last().copied());
    }

    /// A number the window holds is a replay only for the frame accepted under it; another frame under it
    /// is too old, with the number after the highest; the tags travel with `held_tags` / `with_tags`.
    #[test]
    fn another_frame_under_a_held_number_is_too_old() {
        let tag = |n: u64| FrameTag::of_mac(&(n + 1).to_le_bytes());
        let mut window = ReplayWindow::new(0);
        for sequence in (1000..1000 + WINDOW).rev() {
            window.accept(sequence, tag(sequence));
        }
        let highest = 1000 + WINDOW - 1;
        for sequence in 1000..1000 + WINDOW {
            assert_eq!(window.check(DEVICE, sequence, tag(sequence)), replayed(sequence));
            assert_eq!(window.tag(sequence), Some(tag(sequence)));
            assert_eq!(
                window.check(DEVICE, sequence, tag(sequence + 1)),
                too_old(sequence, highest + 1)
            );
        }
        // Unknown tags (a window read from its bytes) are the same frame; tags put back are not.
        let read = ReplayWindow::from_bytes(&window.to_bytes()).unwrap();
        assert_eq!(read.check(DEVICE, 1000, tag(5)), replayed(1000));
        let tags: Vec<FrameTag> = window.held_tags().collect();
        assert_eq!(tags.len(), window.held());
        assert_eq!(read.clone().with_tags(&tags), Some(window.clone()));
        assert_eq!(read.with_tags(&tags[1..]), None);
        // Sliding past a number frees its slot for the number WINDOW above it.
        window.accept(highest + 1, tag(highest + 1));
        assert_eq!(window.tag(1000), None);
        assert!(matches!(
            window.check(DEVICE, 1000, tag(1000)),
            Err(IntakeError::TooOld { .. })
        ));
        assert_eq!(
            window.check(DEVICE, highest + 1, tag(highest + 1)),
            replayed(highest + 1)
        );
    }

    #[test]
    fn bytes_round_trip_and_refuse_what_no_window_writes() {
        let mut window = ReplayWindow::new(9);
        assert_eq!(ReplayWindow::from_bytes(&window.to_bytes()), Some(window.clone()));
        for sequence in [12, 10, 400, 333, u64::MAX] {
            window.accept(sequence, T);
            let tags: Vec<FrameTag> = window.held_tags().collect();
            let read = ReplayWindow::from_bytes(&window.to_bytes()).unwrap();
            // The bytes keep no tags: equal once they are given back.
            assert_ne!(read, window);
            assert_eq!(read.with_tags(&tags), Some(window.clone()));
        }
        let mut bad = window.to_bytes();
        bad[8] = 2;
        assert_eq!(ReplayWindow::from_bytes(&bad), None);
        let mut bad = ReplayWindow::new(9).to_bytes();
        bad[20] = 1;
        assert_eq!(ReplayWindow::from_bytes(&bad), None);
        // A bit for a number below 0 (highest 3, bit 10): refused, never an index below the first slot.
        let mut low = ReplayWindow::new(0);
        low.accept(3, T);
        let mut bad = low.to_bytes();
        assert!(ReplayWindow::from_bytes(&bad).is_some());
        bad[17 + 1] |= 1 << 2;
        assert_eq!(ReplayWindow::from_bytes(&bad), None);
        let mut edge = ReplayWindow::new(0);
        edge.accept(0, T);
        edge.accept(127, T);
        assert!(ReplayWindow::from_bytes(&edge.to_bytes()).is_some());
    }

    #[test]
    fn edges() {
        let mut window = ReplayWindow::new(0);
        assert_eq!(window.lowest_acceptable(), 0);
        window.accept(u64::MAX, T);
        assert_eq!(window.check(DEVICE, u64::MAX, T), replayed(u64::MAX));
        // Resumed after u64::MAX: nothing is acceptable any more; after 1000: only numbers above it.
        let resumed = ReplayWindow::from_bytes(&window.to_bytes()).unwrap().resumed();
        assert_eq!(resumed.check(DEVICE, u64::MAX, T), replayed(u64::MAX));
        assert!(matches!(
            resumed.check(DEVICE, u64::MAX - 1, T),
            Err(IntakeError::TooOld { .. })
        ));
        let mut other = ReplayWindow::new(0);
        other.accept(1000, T);
        let resumed = other.resumed();
        assert_eq!(resumed.check(DEVICE, 999, T), too_old(999, 1001));
        assert!(resumed.check(DEVICE, 1000, T).is_err());
        assert_eq!(resumed.check(DEVICE, 1001, T), Ok(()));
        assert_eq!(ReplayWindow::new(5).resumed(), ReplayWindow::new(5));
        assert_eq!(window.check(DEVICE, u64::MAX - 127, T), Ok(()));
        assert_eq!(
            window.check(DEVICE, u64::MAX - 128, T),
            too_old(u64::MAX - 128, u64::MAX - 127)
        );
        let mut window = ReplayWindow::new(0);
        window.accept(10, T);
        window.accept(10 + 1000, T);
        assert_eq!(window.check(DEVICE, 10 + 1000 - 127, T), Ok(()));
        assert_eq!(window.check(DEVICE, 10, T), too_old(10, 883));
    }
}
