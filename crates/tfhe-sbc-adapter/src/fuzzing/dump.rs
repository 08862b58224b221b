//! The annotated hex dump of a seeded frame that the wire format's documentation shows ([`wire_format_dump`]).

use super::corpus::SeedDevice;
use tfhe_sbc_device::frame::TAG_BYTES;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};

/// The annotated hex dump of the wire format's documentation (the workspace's `wire_format_dump` example): one
/// seeded frame of `TFHE_LIB_GLWE_1024` carrying the message `"hi"`, from fixed seeds, MAC key `[0x42; 32]`, device id
/// `0x1122334455667788`, key id 1, and sequence number `(1 << 32) | 5` (boot 1, frame 5).
pub fn wire_format_dump() -> String {
    use core::fmt::Write;
    use tfhe_sbc_device::frame::FrameCounter;
    let credentials = DeviceCredentials::new(0x1122_3344_5566_7788, 1, MacKey::from_bytes([0x42; 32]));
    let mut device = SeedDevice::new(credentials, 1);
    device.counter = FrameCounter::new((1 << 32) | 5);
    let frame = device.frames(b"hi", false).remove(0);
    let mut out = String::new();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    let _ = writeln!(
        out,
        "seeded frame, TFHE_LIB_GLWE_1024, message \"hi\": {} bytes",
        frame.len()
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "offset  size  field            bytes");
    let fields: [(&str, usize); 14] = [
        ("magic", 4),
        ("version", 1),
        ("kind", 1),
        ("parameter_set", 2),
        ("xof_id", 1),
        ("body_bits", 1),
        ("reading_format", 1),
        ("device_id", 8),
        ("key_id", 4),
        ("sequence", 8),
        ("message_id", 4),
        ("chunk_index", 4),
        ("chunk_count", 4),
        ("message_length", 4),
    ];
    let mut offset = 0;
    for (name, size) in fields {
        let _ = writeln!(
            out,
            "{offset:>6}  {size:>4}  {name:<15}  {}",
            hex(&frame[offset..offset + size])
        );
        offset += size;
    }
    let tag_start = frame.len() - TAG_BYTES;
    let seed_end = offset + 32;
    let _ = writeln!(
        out,
        "{offset:>6}  {:>4}  {:<15}  {}",
        32,
        "seed",
        hex(&frame[offset..seed_end])
    );
    let _ = writeln!(
        out,
        "{seed_end:>6}  {:>4}  {:<15}  {} ... {}",
        tag_start - seed_end,
        "body",
        hex(&frame[seed_end..seed_end + 8]),
        hex(&frame[tag_start - 8..tag_start])
    );
    let _ = writeln!(
        out,
        "{tag_start:>6}  {:>4}  {:<15}  {}",
        TAG_BYTES,
        "tag",
        hex(&frame[tag_start..])
    );
    let _ = writeln!(out);
    let rows: Vec<&[u8]> = frame.chunks(16).collect();
    for (row, line) in rows.iter().enumerate() {
        if row == 6 {
            let _ = writeln!(out, "...   ({} rows of body words elided)", rows.len() - 9);
        }
        if row < 6 || row >= rows.len() - 3 {
            let _ = writeln!(out, "{:04x}  {}", row * 16, hex(line));
        }
    }
    out
}
