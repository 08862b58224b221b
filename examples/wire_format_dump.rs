//! Prints a hex dump of one small seeded frame (N = 64, fixed seeds), as shown in docs/wire-format.md.
//!
//! Run: `cargo run --example wire_format_dump`
#![allow(clippy::unwrap_used)]

use rand_core::SeedableRng;
use tfhe_sbc_core::dimensions::{GlweDimension, PolynomialSize};
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::GlweParameters;
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::message::chunks;
use tfhe_sbc_device::wire::max_seeded_frame_bytes;
use tfhe_sbc_device::xof::Blake2bXof;

fn main() {
    let params = GlweParameters::new(32, PolynomialSize(64), GlweDimension(1), 2f64.powi(-25)).unwrap();
    let key =
        GlweSecretKey::generate_binary([0u8; 64], PolynomialSize(64), &mut Blake2bXof::from_seed([1; 32])).unwrap();
    let mut encryptor = GlweEncryptor::<64>::new(&params, &key, Blake2bXof::from_seed([2; 32])).unwrap();
    let message = b"hi";
    let chunk = chunks(message, 8).next().unwrap();
    let mut body = [0u32; 64];
    let mut out = [0u8; max_seeded_frame_bytes(64)];
    let len = encryptor
        .encrypt_seeded_frame(&chunk, message.len(), &mut body, &mut out)
        .unwrap();
    println!("seeded frame, N = 64, message \"hi\": {len} bytes");
    for (row, line) in out[..len].chunks(16).enumerate() {
        let hex: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
        println!("{:04x}  {}", row * 16, hex.join(" "));
    }
}
