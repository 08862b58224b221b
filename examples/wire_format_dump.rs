//! Prints a hex dump of one small seeded frame (N = 64, fixed seeds), as shown in docs/wire-format.md.
//!
//! Run: `cargo run --example wire_format_dump`
#![allow(clippy::unwrap_used)]

use rand_core::SeedableRng;
use tfhe_sbc_core::dimensions::{GlweDimension, PolynomialSize};
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::{GlweParameters, NoiseDistribution};
use tfhe_sbc_device::encryption::GlweEncryptor;
use tfhe_sbc_device::message::chunks;
use tfhe_sbc_device::wire::max_seeded_frame_bytes;
use tfhe_sbc_device::xof::Blake2bXof;

fn main() {
    // N = 64 keeps the dump short; it is a toy size, far below the security floor, hence the opt-in.
    let noise = NoiseDistribution::Gaussian {
        std_dev: 2f64.powi(-25),
    };
    let params = GlweParameters::new_allow_insecure(32, PolynomialSize(64), GlweDimension(1), noise).unwrap();
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
