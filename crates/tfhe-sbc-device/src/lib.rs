//! The device side of tfhe-sbc: what runs on the Raspberry Pi or the microcontroller.
//!
//! `no_std` and heap-free: no `alloc` anywhere (a test counts the allocations of an encryption: 0).
//!
//! The wings follow the TFHE-SBC paper's Fig. 2 (the device side of §6.1 and §6.2); each wing
//! imports only the wings below it. The encryption path, by name:
//! 1. [`csprng`] (§6.2, "Pseudo-random number generation with BLAKE2"): the keyed BLAKE2 XOF
//!    [`csprng::KeyedXof`] (BLAKE2b on 64-bit targets, BLAKE2s on 32-bit ones: [`csprng::DeviceXof`]; one
//!    compression per block, key erasure after every encryption), seeded
//!    from the OS (feature `getrandom`) or from any caller's fallible rand_core 0.10 `TryCryptoRng` (a
//!    hardware TRNG; an RNG failure is [`Error::RngFailed`]; [`csprng::seeding`] adapts a HAL's rand_core
//!    0.6 / 0.9 RNG); [`csprng::mask`] expands a public mask seed.
//! 2. [`noise`] (§6.2, "Gaussian random number with Ziggurat method", replaced by constant-time TUniform
//!    by default; the Ziggurat is an opt-in).
//! 3. [`product`] (§2.3 and §6.2, "Memory reuse in PolyMul"): exact negacyclic products (the `f64` FFT,
//!    the integer NTT) and the key spectrum computed once and reused.
//! 4. [`encrypt`] (§6.1 step 2): the generic core [`encrypt::glwe_encryption`], the public-key algorithm,
//!    and one encryptor shell, [`encrypt::Encryptor`], whose instances are [`encrypt::GlweEncryptor`]
//!    (boolean bits, `k` = 1 by default, any `k` and exact product), [`encrypt::PublicKeyEncryptor`] (no
//!    secret on the device) and [`encrypt::IntegerEncryptor`] (tfhe-rs radix blocks on the 64-bit
//!    torus). Firmware builds one in place: `EMPTY` in a `static` (all zero bytes, `.bss`), then
//!    `set_key` / `set_packed_key` / `set_public_key_file` and `seed`. [`encrypt::FrameEncryptor`] seals
//!    frames for every one of them.
//! 5. [`compact_list`] (tfhe-rs's `CompactCiphertextList`): the list tfhe-rs's own
//!    compact public key encrypts, its packed plaintexts and bytes, which
//!    [`encrypt::CompactListEncryptor`] fills: an unmodified tfhe-rs server reads it.
//! 6. [`frame`] (wire format v2): authenticated v2 frames (fixed header with device id, key id and
//!    sequence number; seed; body; MAC tag) written into a caller slice, the body computed in the frame
//!    buffer itself, and the server's acknowledgements. Format only: no encryptor inside.
//! 7. [`files`]: the credential file and the public-key file provisioning gives the device.
//! 8. `std_io` (feature `std`): the same on Linux (a Raspberry Pi): files from paths, a persisted frame
//!    counter, stream framing, an encryptor for whatever a credential file names.
//!
//! [`Error`]'s `Display` and `Debug` use no float formatting, so printing an error costs a firmware no
//! `core::fmt::float` code.
//!
//! [`encrypt::decryption`] is for the trusted party and for tests.
//!
//! # Timing
//! The noise is as secret as the key (see [`noise`]), so the default path is constant-time in the key,
//! the message, the CSPRNG output and the noise:
//! * x86_64 and aarch64 (hardware FPU): the XOF, mask expansion, TUniform noise, the FFT product, the
//!   encoding and the frame MAC have no branch and no memory address that depends on a secret. This is
//!   checked mechanically: the workspace's constant-time check runs key-spectrum construction and encryptions under
//!   valgrind memcheck with the key, the CSPRNG's seed and output and the message marked undefined, and CI
//!   fails on any report. The same check flags the Ziggurat, so it can fail. It checks x86_64 code
//!   generation; aarch64 runs the same portable code but is not checked under valgrind here.
//! * Cortex-M (bare-metal ARM: thumbv6m, thumbv7m, thumbv7em): the default product is the integer NTT
//!   ([`negacyclic_ntt`], [`product::DefaultProduct`]), whose masks and loops are the same portable code
//!   (checked under valgrind through `NttPlan32` on x86_64, the Cortex-M assembly read by hand) and whose
//!   multiplier is chosen per core: `UMULL` on the M4/M7, 16x16-bit `MUL` partial products on the M3 (early
//!   terminating `UMULL`) and the M0/M0+ (no long multiply). Naming the `f64` FFT there instead runs it in
//!   software floating point, whose multiply exits early on zero operands: its time depends on the key.
//! * `noise::NoiseSampling::Ziggurat` (opt-in, feature `ziggurat`) is not constant-time on any target: its rejection path and
//!   its table loads depend on the samples.
//! * Not covered by any check: the time of `reseed_if_forked` (a `getpid` system call), and what the
//!   compiler may do on targets we do not build here.
//!
//! Threat model: the secret key, the MAC key, the CSPRNG state and the noise are secret (the noise as much
//! as the key). The attackers are the network (reads, replays, modifies and injects frames), an
//! honest-but-curious cloud (holds the server key and every MAC key), whoever sees decrypted results, a
//! stolen device, and side channels (a co-resident process's cache and timing, a probe's power, EM and timing).
//!
//! # Features
//! None is on by default: the default build is `no_std`, heap-free and fits a Cortex-M.
//! * `getrandom`: seed the CSPRNG from the operating system ([`csprng::seeding`]'s `from_os_entropy`,
//!   `Encryptor::seed_from_os`), with fork detection.
//! * `std`: `std_io`, what a device program on Linux needs around the encryption: credential files from a
//!   path, an encryptor for whatever key mode the file names, a persisted frame counter, stream framing and
//!   acknowledgements.
//! * `rand_core_06`, `rand_core_09`: a HAL's rand_core 0.6 / 0.9 RNG as the fallible rand_core 0.10 RNG that
//!   `seed` takes (`seeding::Rng06`, `seeding::Rng09`).
//! * `ziggurat`: the paper's Ziggurat as an opt-in noise source (`NoiseSampling::Ziggurat`); not
//!   constant-time, and absent from builds without it.
//! * `hazmat`: deterministic entry points that take the encryption's randomness explicitly, for
//!   known-answer tests; reusing their inputs breaks the encryption, never enable it in firmware.
//! * `test-utils`: test scaffolding for a host with std, not for production: `counting_alloc`, the counting
//!   global allocator of the tests that prove a path allocates nothing (this crate's and `tfhe-sbc-adapter`'s);
//!   empty on a bare-metal target.
//!
//! # Backend
//! On x86_64 the XOF's BLAKE2b lanes also run compiled for AVX-512F or AVX2 when the CPU has them (run-time
//! detection, no_std), and so do `negacyclic-fft`'s kernels (AVX2). `RUSTFLAGS='--cfg tfhe_sbc_backend="soft"'`
//! (after RustCrypto sha2's `sha2_backend`) compiles those out of both crates and keeps the portable code
//! only, and `--cfg tfhe_sbc_backend="avx2"` compiles out the AVX-512F lanes, so that each instance is
//! tested on a host that would otherwise never run it (`"avx512f"`, the widest, is the default); [`backend`]
//! and [`negacyclic_fft::backend`] say which instance runs.
//!
//! # Example
//! ```
//! use rand_core::SeedableRng;
//! use tfhe_sbc_core::entities::GlweSecretKey;
//! use tfhe_sbc_core::parameters::TFHE_LIB_GLWE_1024;
//! use tfhe_sbc_device::encrypt::decryption::{GlweDecryptor, decode_bits};
//! use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
//! use tfhe_sbc_device::csprng::xof::DeviceXof;
//!
//! let params = TFHE_LIB_GLWE_1024;
//! let mut rng = DeviceXof::from_seed([1; 32]); // use `seeding::from_os_entropy()` on a real device
//! let key = GlweSecretKey::generate_binary([0u8; 1024], params.polynomial_size(), &mut rng).unwrap();
//! let mut encryptor = GlweEncryptor::<1024>::new(&params, &key, DeviceXof::from_seed([2; 32])).unwrap();
//!
//! let message = [0xA5u8; 128]; // 1024 bits
//! let mut body = [0u32; 1024];
//! let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
//!
//! let mut decryptor = GlweDecryptor::<1024>::new(&key).unwrap();
//! let mut phase = [0u32; 1024];
//! decryptor.decrypt_seeded_phase_parts(&seed, &body, &mut phase).unwrap();
//! let mut decrypted = [0u8; 128];
//! decode_bits(&phase, &mut decrypted).unwrap();
//! assert_eq!(decrypted, message);
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's example, run as a doctest so that the published README compiles.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(any(
    feature = "getrandom",
    feature = "std",
    all(feature = "test-utils", not(target_os = "none"))
))]
extern crate std;

pub mod compact_list;
// Hosts only: a bare-metal target (`target_os = "none"`) has no std, so the feature is empty there (the
// feature matrix checks every feature alone on thumbv7em).
#[cfg(all(feature = "test-utils", not(target_os = "none")))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-utils")))]
pub mod counting_alloc;
pub mod csprng;
pub mod encrypt;
mod error;
pub mod files;
pub mod frame;
pub mod noise;
pub mod product;
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub mod std_io;

pub use csprng::dispatch::backend;
pub use error::{Error, PublicKeyDefect, Result};
