//! Small gate circuits on converted boolean inputs, as the server's demo and the `sensor_to_cloud`
//! example compute them: the comparison of an encrypted byte with a public threshold, from tfhe-rs gates.

use tfhe::boolean::ciphertext::Ciphertext;
use tfhe::boolean::server_key::{BinaryBooleanGates, ServerKey};

/// `x > t` for an encrypted byte `x` (its bits little-endian, at most 8) and a public threshold `t`: one
/// gate per bit (where `t`'s bit is 0, `x_j = 1` makes `x` greater; where it is 1, `x_j = 0` makes it
/// smaller).
pub fn greater_than_public(server_key: &ServerKey, x: &[Ciphertext], t: u8) -> Ciphertext {
    let mut greater = server_key.trivial_encrypt(false);
    for (j, bit) in x.iter().enumerate() {
        greater = if (t >> j) & 1 == 0 {
            server_key.or(bit, &greater)
        } else {
            server_key.and(bit, &greater)
        };
    }
    greater
}

/// Whether some byte of `bits` (eight per byte, little-endian) is above `t`: [`greater_than_public`] of
/// each byte, OR-ed together; a trivial false for no bytes.
pub fn any_byte_above(server_key: &ServerKey, bits: &[Ciphertext], t: u8) -> Ciphertext {
    bits.chunks_exact(8)
        .map(|byte| greater_than_public(server_key, byte, t))
        .reduce(|a, b| server_key.or(&a, &b))
        .unwrap_or_else(|| server_key.trivial_encrypt(false))
}
