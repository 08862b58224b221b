//! The client binary with an integer public-key credential file (set 4, `u64` words), on loopback against a
//! test server built from the adapter's intake (no tfhe-rs): the client builds the integer public-key
//! encryptor from the file, sends u16 readings as public-key frames (kind 2, 32,831 bytes each), the intake
//! takes them from the public-key device (`receive_integer`), and they decrypt, under the secret key the
//! public key was made from, to exactly the readings sent; the server's acknowledgements are sealed under the
//! device's MAC key, as the client requires. The public key is made here by hand (`b = a s + e`
//! with a schoolbook product), so no tfhe-rs key is needed.

#![allow(clippy::unwrap_used)]

use rand_core::{Rng, SeedableRng};
use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use tfhe_sbc_adapter::ack::{ack_for, seal_ack};
use tfhe_sbc_adapter::intake::{Intake, IntakeConfig, IntegerFrame};
use tfhe_sbc_adapter::registry::DeviceRegistry;
use tfhe_sbc_adapter::stream::FrameReader;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;
use tfhe_sbc_device::csprng::mask::expand_mask;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::files::credentials::{KeyMode, credentials_file_bytes, encode_credentials};
use tfhe_sbc_device::files::public_key::{encode_public_key, public_key_file_bytes_for};
use tfhe_sbc_device::frame::ack::AckStatus;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MacKey};
use tfhe_sbc_device::std_io::write_ack;

const N: usize = 2048;
const DEVICE: u64 = 23;
const KEY_ID: u32 = 0x1e7e;
const MAC: [u8; 32] = [0x5d; 32];

/// What the test server saw: the frames its intake took, each frame's acknowledgement and length.
type Seen = (Vec<IntegerFrame>, Vec<AckStatus>, Vec<usize>);

/// `x * y` in `Z_{2^64}[X] / (X^N + 1)`, with `y` binary.
fn negacyclic_product(x: &[u64], y: &[u8]) -> Vec<u64> {
    let mut out = vec![0u64; N];
    for (j, &bit) in y.iter().enumerate() {
        if bit == 0 {
            continue;
        }
        for (i, &a) in x.iter().enumerate() {
            let k = i + j;
            if k < N {
                out[k] = out[k].wrapping_add(a);
            } else {
                out[k - N] = out[k - N].wrapping_sub(a);
            }
        }
    }
    out
}

#[test]
fn integer_public_key_credentials_send_readings_that_decrypt() {
    // The trusted party: a binary key s, a public key (seed of a, b = a s + e), the credential file.
    let params = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
    let mut rng = Blake2bXof::from_seed([0x2b; 32]);
    let secret: Vec<u8> = (0..N).map(|_| (rng.next_u32() & 1) as u8).collect();
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let mut a = vec![0u64; N];
    expand_mask::<tfhe_sbc_device::csprng::Blake2bCounter, _>(&seed, &mut a);
    let mut b = negacyclic_product(&a, &secret);
    for w in &mut b {
        // Noise of TUniform(17)'s width.
        let e = i64::from(rng.next_u32() % (1 << 18)) - (1 << 17);
        *w = w.wrapping_add(e as u64);
    }
    let mut public_key = vec![0u8; public_key_file_bytes_for(&params)];
    encode_public_key(params.id(), KEY_ID, &seed, &b, &mut public_key).unwrap();
    assert_eq!(public_key.len(), 16_443);
    let credentials = DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes(MAC));
    let mut file = vec![0u8; credentials_file_bytes(KeyMode::PublicKey, &params)];
    let len = encode_credentials(KeyMode::PublicKey, &params, &credentials, &public_key, &mut file).unwrap();
    assert_eq!(len, 16_511);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("23.tsdc");
    std::fs::write(&path, &file).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // The cloud: a public-key device, integer intake, an acknowledgement per frame.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let server = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let mut registry = DeviceRegistry::new();
            registry
                .register_public_key(DeviceCredentials::new(DEVICE, KEY_ID, MacKey::from_bytes(MAC)))
                .unwrap();
            let mut intake = Intake::new(IntakeConfig::default(), registry);
            let (socket, _) = listener.accept().unwrap();
            let mut writer = socket.try_clone().unwrap();
            let mut reader = FrameReader::new(socket);
            while let Ok(Some(frame)) = reader.next_frame() {
                let result = intake.receive_integer(frame);
                let ack = ack_for(frame, &result);
                let mut seen = seen.lock().unwrap();
                seen.2.push(frame.len());
                seen.1.push(ack.status);
                if let Ok(opened) = result {
                    assert_eq!(frame[5], 2, "kind 2: public key");
                    seen.0.push(opened);
                }
                drop(seen);
                let record = seal_ack(frame, &ack, intake.mac_key(ack.device_id));
                if write_ack(&mut writer, &record).is_err() {
                    return;
                }
            }
        })
    };

    // The device: 300 u16 readings in one message of 2 frames (256 readings per frame).
    let readings: Vec<u16> = (0..300u32).map(|i| ((i * 40_503) ^ 0x3c3c) as u16).collect();
    let input: String = readings.iter().map(|r| format!("{r}\n")).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfhe-sbc-client"))
        .arg("--credentials")
        .arg(&path)
        .args(["--server", &address.to_string(), "--format", "u16", "--batch", "300"])
        .args(["--give-up-after", "60s", "--max-backoff", "200ms"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "device 23: public-key mode, parameter set 4, 32831-byte frames (64-bit body) of 512 message bytes"
        ),
        "{stderr}"
    );
    server.join().unwrap();

    let (frames, statuses, lengths) = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(statuses, [AckStatus::Accepted, AckStatus::Accepted]);
    assert_eq!(lengths, [32_831, 32_831]);
    // The trusted party: phase = body - mask * s, two-bit blocks of 2^59, four per reading byte.
    let mut bytes = Vec::new();
    for frame in &frames {
        let mask_s = negacyclic_product(frame.ciphertext.mask(), &secret);
        let blocks: Vec<u8> = frame
            .ciphertext
            .body()
            .iter()
            .zip(&mask_s)
            .map(|(body, ms)| ((body.wrapping_sub(*ms).wrapping_add(1 << 58) >> 59) & 3) as u8)
            .collect();
        let chunk: Vec<u8> = blocks
            .chunks_exact(4)
            .map(|q| q[0] | q[1] << 2 | q[2] << 4 | q[3] << 6)
            .take(frame.chunk_message_bytes())
            .collect();
        bytes.extend(chunk);
    }
    let decrypted: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect();
    assert_eq!(decrypted, readings);
}
