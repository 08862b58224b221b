//! What each device's accepted frames inside its replay window were: a sequence number the window holds is
//! a resend ("duplicate") only if the frame is the one accepted under it. A device whose counter went back
//! (a counter file restored from a backup or cloned onto another board) sends new readings under numbers
//! the window holds; answered "duplicate", the device would count them delivered and they would be lost
//! without an error. With the tags they are answered "too old" instead, with the lowest number the device
//! may use, and the device stops with that number to give its counter.
//!
//! Per device, one slot per residue of the sequence number modulo the window's width
//! ([`tfhe_sbc_adapter::replay::WINDOW`]): the numbers a window holds are consecutive, so no two of them
//! share a slot, and a slot is only reused by a number that pushed the older one out of the window. A slot
//! keeps the number and the first 8 bytes of the frame's tag (its MAC: two different frames share those 8
//! bytes with probability 2^-64): 2 KiB per device that has sent a frame since the server started. After a
//! restart the slots are empty, but the windows resume above each device's highest number, so every number
//! they held is "too old" anyway ([`tfhe_sbc_adapter::replay::ReplayWindow::resumed`]).

use std::collections::HashMap;
use tfhe_sbc_adapter::replay::WINDOW;
use tfhe_sbc_device::frame::ack::frame_tag;

/// The slots of one device.
const SLOTS: usize = WINDOW as usize;

/// A frame's number and the first 8 bytes of its tag.
type Slot = Option<(u64, [u8; 8])>;

/// The accepted frames' tags of every device that sent one.
#[derive(Default)]
pub struct AcceptedTags {
    devices: HashMap<u64, Box<[Slot; SLOTS]>>,
}

/// What a frame whose number the replay window holds is.
#[derive(Debug, PartialEq, Eq)]
pub enum Resent {
    /// The frame accepted under that number (or one this server no longer knows: answered as before).
    Same,
    /// Another frame under an accepted number: the device's counter went back.
    Reused,
}

impl AcceptedTags {
    /// Records `frame`, accepted as number `sequence` of `device`.
    pub fn accepted(&mut self, device: u64, sequence: u64, frame: &[u8]) {
        let Some(tag) = short_tag(frame) else { return };
        let slots = self.devices.entry(device).or_insert_with(|| Box::new([None; SLOTS]));
        slots[slot_of(sequence)] = Some((sequence, tag));
    }

    /// Whether `frame`, whose number `sequence` of `device` the replay window says was accepted, is the
    /// frame accepted under it.
    pub fn resent(&self, device: u64, sequence: u64, frame: &[u8]) -> Resent {
        let recorded = self.devices.get(&device).and_then(|slots| slots[slot_of(sequence)]);
        match (recorded, short_tag(frame)) {
            (Some((number, tag)), Some(this)) if number == sequence && tag != this => Resent::Reused,
            _ => Resent::Same,
        }
    }
}

fn slot_of(sequence: u64) -> usize {
    (sequence % WINDOW) as usize
}

fn short_tag(frame: &[u8]) -> Option<[u8; 8]> {
    frame_tag(frame).and_then(|tag| tag[..8].try_into().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(content: u8) -> Vec<u8> {
        vec![content; 40]
    }

    #[test]
    fn a_number_is_the_same_frame_only_with_its_tag() {
        let mut tags = AcceptedTags::default();
        tags.accepted(7, 1000, &frame(1));
        assert_eq!(tags.resent(7, 1000, &frame(1)), Resent::Same);
        assert_eq!(tags.resent(7, 1000, &frame(2)), Resent::Reused);
        // Another device, another number, a number that shares the slot: nothing recorded for them.
        assert_eq!(tags.resent(8, 1000, &frame(2)), Resent::Same);
        assert_eq!(tags.resent(7, 1001, &frame(2)), Resent::Same);
        assert_eq!(tags.resent(7, 1000 - WINDOW, &frame(2)), Resent::Same);
        // The window's whole width is kept: a number WINDOW - 1 below the newest still has its tag.
        for sequence in 1001..1000 + WINDOW {
            tags.accepted(7, sequence, &frame(3));
        }
        assert_eq!(tags.resent(7, 1000, &frame(2)), Resent::Reused);
        tags.accepted(7, 1000 + WINDOW, &frame(3));
        assert_eq!(tags.resent(7, 1000, &frame(2)), Resent::Same);
    }
}
