//! A fixed TEST credential for firmware bring-up, made without tfhe-rs: `devices/<ID>.tsdc` (the credential
//! file `tfhe-sbc-keys issue` writes, per-device secret-key mode, `TFHE_LIB_GLWE_1024`) and `devices/<ID>.seed`
//! (32 bytes a device without a hardware RNG is provisioned with, `docs/firmware.md`).
//!
//! Everything in them is derived from the device id by the public BLAKE2b XOF ([`test_credential`]): anyone can
//! recompute the key, the MAC key and the seed, and no server holds a matching tfhe-rs key. Use them to link,
//! size and run a firmware (the guide's `examples/firmware-guide/devices/1.*` are these files for device 1);
//! a real device gets its file from `tfhe-sbc-keys issue` and its seed from a real RNG.
//!
//! ```sh
//! cargo run -p tfhe-sbc-firmware --example test_credential -- 1 examples/firmware-guide/devices
//! cargo run -p tfhe-sbc-firmware --example test_credential -- 1 examples/firmware-guide/devices --check
//! ```
//! `--check` writes nothing and fails unless the files there are byte for byte what this tool makes.
//! `--frames-digest` also prints the digest the guide's firmware prints for its checked frames
//! (`frames_digest=...`, [`frames_digest`]), computed here on the host with the same calls.

use rand_core::{Rng, SeedableRng};
use std::path::Path;
use std::process::ExitCode;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
use tfhe_sbc_device::csprng::Blake2sCounter;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::GlweEncryptor;
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, decode_credentials, encode_credentials};
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::frame::message::chunks;
use tfhe_sbc_device::frame::{FrameCounter, SEEDED_FRAME_BYTES_1024};
use tfhe_sbc_device::product::DefaultProduct;

/// The XOF seed every test value of device `device_id` comes from: a public label and the id.
fn public_seed(device_id: u64) -> [u8; 32] {
    let mut seed = *b"tfhe-sbc TEST credential\0\0\0\0\0\0\0\0";
    seed[24..].copy_from_slice(&device_id.to_le_bytes());
    seed
}

/// Device `device_id`'s test credential file (per-device secret key of `TFHE_LIB_GLWE_1024`, key id 0) and
/// its provisioned seed. From one XOF stream, in this order: the 1024 key bits, the MAC key, the seed.
fn test_credential(device_id: u64) -> Result<(Vec<u8>, [u8; 32]), tfhe_sbc_device::Error> {
    let params = TFHE_LIB_GLWE_1024;
    let mut xof = Blake2bXof::from_seed(public_seed(device_id));
    let key = GlweSecretKey::generate_binary([0u8; 1024], params.polynomial_size(), &mut xof)?;
    let mut mac_key = [0u8; 32];
    xof.fill_bytes(&mut mac_key);
    let mut seed = [0u8; 32];
    xof.fill_bytes(&mut seed);
    let mut packed = [0u8; 128];
    pack_secret_key(key.as_bytes(), &mut packed)?;
    let mode = KeyMode::PerDeviceSecretKey;
    let mut file = vec![0u8; credentials_file_bytes(mode, &params)];
    let credentials = DeviceCredentials::new(device_id, 0, MacKey::from_bytes(mac_key));
    let written = encode_credentials(mode, &params, &credentials, &packed, &mut file)?;
    file.truncate(written);
    Ok((file, seed))
}

/// The guide firmware's encryptor as its target (thumbv7em, a 32-bit core) builds it: the device's XOF there
/// is BLAKE2s (construction v3, `docs/xof.md`), which this host names; the product is exact on every target.
type GuideEncryptor = GlweEncryptor<1024, 1, DefaultProduct, Blake2sCounter>;

/// The digest `examples/firmware-guide/src/main.rs` prints as `frames_digest`: its run replayed on the host
/// (set the key from `file`, seed with `seed` and boot 1, 128 readings of 0x5a in a full frame, 256 in two
/// compact frames, then the two checked frames: 128 compact, 128 full), and the XOR of the checked frames'
/// BLAKE2b-128 tags under the all-zero key.
fn frames_digest(file: &[u8], seed: &[u8; 32]) -> Result<[u8; 16], tfhe_sbc_device::Error> {
    const BOOT: u32 = 1;
    let readings = [0x5a_u8; 256];
    let file = decode_credentials(file)?;
    let mut encryptor = Box::new(GuideEncryptor::EMPTY);
    encryptor.set_packed_key(&file.parameters, file.key_material)?;
    let mut seed = *seed;
    encryptor.seed_from_bytes(&mut seed);
    encryptor.reseed(&BOOT.to_le_bytes());
    let mut counter = FrameCounter::from_boot_counter(BOOT);
    let mut frame = vec![0u8; SEEDED_FRAME_BYTES_1024];
    let mut digest = [0u8; 16];
    // (readings, body bits, checked)
    let messages: [(&[u8], u32, bool); 4] = [
        (&readings[..128], 32, false),
        (&readings, file.parameters.compact_body_bits(), false),
        (&readings[..128], file.parameters.compact_body_bits(), true),
        (&readings[128..], 32, true),
    ];
    for (message_bytes, body_bits, checked) in messages {
        encryptor.set_body_bits(body_bits)?;
        let message = encryptor.begin_message(&mut counter, message_bytes.len())?;
        for chunk in chunks(message_bytes, GuideEncryptor::MESSAGE_BYTES) {
            let n = encryptor.encrypt_frame_into(&file.credentials, &message, &chunk, &mut frame)?;
            if checked {
                let tag = MacKey::from_bytes([0; 32]).tag(&frame[..n]);
                digest.iter_mut().zip(tag).for_each(|(d, t)| *d ^= t);
            }
        }
    }
    Ok(digest)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let print_digest = args.iter().any(|a| a == "--frames-digest");
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (Some(id), Some(dir)) = (positional.first(), positional.get(1)) else {
        eprintln!("usage: test_credential <device-id> <dir> [--check] [--frames-digest]");
        return ExitCode::from(2);
    };
    let Ok(device_id) = id.parse::<u64>() else {
        eprintln!("test_credential: the device id must be a number, not '{id}'");
        return ExitCode::from(2);
    };
    let (file, seed) = match test_credential(device_id) {
        Ok(made) => made,
        Err(e) => {
            eprintln!("test_credential: {e}");
            return ExitCode::FAILURE;
        }
    };
    let dir = Path::new(dir.as_str());
    let outputs = [
        (format!("{device_id}.tsdc"), &file[..]),
        (format!("{device_id}.seed"), &seed[..]),
    ];
    let mut ok = true;
    for (name, bytes) in outputs {
        let path = dir.join(name);
        if check {
            let same = std::fs::read(&path).is_ok_and(|found| found == bytes);
            println!("{}: {}", path.display(), if same { "ok" } else { "DIFFERS" });
            ok &= same;
        } else if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, bytes)) {
            eprintln!("test_credential: {}: {e}", path.display());
            ok = false;
        } else {
            println!(
                "{}: {} bytes (TEST ONLY: derived from the device id)",
                path.display(),
                bytes.len()
            );
        }
    }
    if print_digest {
        match frames_digest(&file, &seed) {
            Ok(digest) => println!(
                "frames_digest={}",
                digest.iter().map(|b| format!("{b:02x}")).collect::<String>()
            ),
            Err(e) => {
                eprintln!("test_credential: frames digest: {e}");
                ok = false;
            }
        }
    }
    if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
