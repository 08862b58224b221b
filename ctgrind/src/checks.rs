//! The checks of each [`Mode`](crate::Mode): one device path each, with its secrets classified.
//!
//! Conventions: a secret generator is a [`Blake2bXof`] seeded from a classified seed (so its whole output
//! stream is secret, as on the device); [`ClassifiedRng`] instead marks each output of a public generator,
//! to check a sampler apart from the XOF. A binary key has only bit 0 of each byte classified: that each
//! coefficient is 0 or 1 is public (the key check `from_container` makes), which one is secret.

use crate::valgrind::{classify, classify_bits, declassify, is_tainted};
use crate::{Check, ClassifiedRng, Digest, Outcome, Word};
use negacyclic_ntt::{NttPlan32, NttPlan64};
use rand_core::{Rng, SeedableRng};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::encoding::{PaddedIntegerEncoding, encode_bool};
use tfhe_sbc_core::entities::pack_secret_key;
use tfhe_sbc_core::entities::{GlweCiphertext, GlweSecretKey, KeyStorage};
use tfhe_sbc_core::gaussian::{NormalSampler, Ziggurat};
use tfhe_sbc_core::parameters::{DEFAULT_KS_PBS_GLWE_512_K3, MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_core::torus::UnsignedTorus;
use tfhe_sbc_core::tuniform::TUniform;
use tfhe_sbc_device::csprng::xof::Blake2bXof;
use tfhe_sbc_device::encrypt::FrameEncryptor;
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::integer_public_key::IntegerPublicKeyEncryptor;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::public_key_encryption::generate_seeded_glwe_public_key;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::mac::{DeviceCredentials, MAC_KEY_BYTES, MacKey};
use tfhe_sbc_device::frame::message::{chunks, message_bit};
use tfhe_sbc_device::frame::{FULL_FRAME_BYTES_1024, FrameCounter, SEEDED_FRAME_BYTES_1024};
use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
use tfhe_sbc_device::product::NegacyclicProduct;
use tfhe_sbc_device::product::key_spectrum::{GlweKeySpectrum, compute_glwe_key_spectrum};

/// The polynomial size of every device check (`TFHE_LIB_GLWE_1024`).
const N: usize = 1024;
/// Encryptions per encryption check.
const ENCRYPTIONS: usize = 3;
/// Noise samples per sampler check.
const SAMPLES: usize = 4096;

/// Everything the device does by default: must be clean.
pub static DEFAULT: &[Check] = &[
    Check {
        name: "tuniform",
        what: "TUniform(b).add_noise_torus (b = 8 on u32; b = 20, 40 on u64) and sample_torus, secret RNG output",
        run: tuniform,
    },
    Check {
        name: "xof",
        what: "Blake2bXof from a secret seed: fill_bytes, next_u32/next_u64, reseed(secret entropy), ratchet",
        run: xof,
    },
    Check {
        name: "keygen",
        what: "GlweSecretKey::generate_binary from a secret XOF",
        run: keygen,
    },
    Check {
        name: "key-spectrum",
        what: "GlweSecretKey::from_container + compute_glwe_key_spectrum (FFT of the key), secret key bits",
        run: key_spectrum,
    },
    Check {
        name: "encoding",
        what: "encode_bool, PaddedIntegerEncoding::encode, message_bit on secret messages",
        run: encoding,
    },
    Check {
        name: "encrypt-seeded",
        what: "GlweEncryptor::<1024>::new (secret key, secret XOF seed) + seeded encryptions of secret messages, reseed",
        run: encrypt_seeded,
    },
    Check {
        name: "encrypt-k3",
        what: "GlweEncryptor::<512, 3>::new (secret k = 3 key, secret XOF seed) + seeded encryptions (tfhe-rs's 128-bit set)",
        run: encrypt_k3,
    },
    Check {
        name: "encrypt-public-key",
        what: "PublicKeyEncryptor::<1024> (public key, secret XOF seed): secret u, e1, e2 and messages",
        run: encrypt_public_key,
    },
    Check {
        name: "ntt-product",
        what: "NttPlan32 (the Cortex-M default product): key spectrum of a secret key, products with public masks, inverse + CRT",
        run: ntt_product,
    },
    Check {
        name: "encrypt-ntt",
        what: "seeded and full encryptions of secret messages through the NttPlan32 product (secret key, secret XOF)",
        run: encrypt_ntt,
    },
    Check {
        name: "ntt64-product",
        what: "NttPlan64 (64-bit torus, three primes) at N = 2048: key spectrum of a secret key, product, inverse + CRT",
        run: ntt64_product,
    },
    Check {
        name: "integer-encrypt",
        what: "IntegerEncryptor::<2048, NttPlan64>: set_key (secret key), seed_from_bytes (secret seed), encrypt_u8/u16/u32 of secret readings, reseed(secret entropy)",
        run: integer_encrypt,
    },
    Check {
        name: "integer-frame",
        what: "the integer firmware path: IntegerEncryptor::<2048, NttPlan64>::EMPTY, set_packed_key (secret packed key), seed (secret TryCryptoRng), encrypt_frame_into of secret u8 readings (a full and a short chunk, then a compact body) under a secret MAC key",
        run: integer_frame,
    },
    Check {
        name: "integer-public-key-frame",
        what: "the integer public-key firmware path: IntegerPublicKeyEncryptor::<2048, NttPlan64>::EMPTY, set_integer_public_key_le_bytes (a public key), seed (secret TryCryptoRng), encrypt_frame_into of secret u8 readings (secret u, e1, e2) under a secret MAC key",
        run: integer_public_key_frame,
    },
    Check {
        name: "frame-mac",
        what: "MacKey::tag of a public frame under a secret MAC key",
        run: frame_mac,
    },
    Check {
        name: "seeded-frame",
        what: "encrypt_seeded_frame (wire v2): encryption, framing and MAC of secret chunks under a secret MAC key, with the full body and with an 11-bit compact body (rounding and bit packing)",
        run: seeded_frame,
    },
    Check {
        name: "firmware-frame",
        what: "the firmware path: GlweEncryptor::<1024, 1, NttPlan32>::EMPTY, set_packed_key (secret packed key), seed (secret TryCryptoRng), encrypt_frame_into (secret chunks, secret MAC key); the FFT default too",
        run: firmware_frame,
    },
    Check {
        name: "full-frame",
        what: "encrypt_full_frame (wire v2, the paper's full mask): same, with the mask expanded in full",
        run: full_frame,
    },
];

/// The Ziggurat (the paper's sampler, an opt-in): must be flagged.
pub static ZIGGURAT: &[Check] = &[
    Check {
        name: "ziggurat-u32",
        what: "Ziggurat.add_noise_torus::<u32> at sigma*q = 128, secret RNG output",
        run: ziggurat_u32,
    },
    Check {
        name: "ziggurat-u64",
        what: "Ziggurat.add_noise_torus::<u64> at sigma*q = 2^20, secret RNG output",
        run: ziggurat_u64,
    },
    Check {
        name: "encrypt-ziggurat",
        what: "GlweEncryptor::with_noise_sampling(.., NoiseSampling::Ziggurat): the device's opt-in",
        run: encrypt_ziggurat,
    },
    Check {
        name: "integer-ziggurat",
        what: "the integer encryption's core (N = 2048, u64, NttPlan64, secret key and XOF, secret readings) with the Ziggurat as its noise: integer-encrypt's negative control",
        run: integer_ziggurat,
    },
];

/// Deliberate leaks: must be flagged, once as a branch and once as an address.
pub static SELF_TEST: &[Check] = &[
    Check {
        name: "secret-branch",
        what: "`if secret_byte == 0` around a call: a conditional jump on a secret",
        run: secret_branch,
    },
    Check {
        name: "secret-index",
        what: "TABLE[secret_byte]: a load from a secret address",
        run: secret_index,
    },
];

/// `Some(true)` when every output was tainted, `None` when not under valgrind.
fn all_tainted(outputs: &[Option<bool>]) -> Option<bool> {
    outputs.iter().try_fold(true, |acc, t| t.map(|t| acc && t))
}

/// The outcome of a check whose outputs had the taints `taint` and went into `digest`.
fn outcome(taint: &[Option<bool>], digest: &Digest) -> Outcome {
    Outcome {
        tainted: all_tainted(taint),
        digest: digest.finish(),
    }
}

/// A public output: whether `words` carried secret bits, then declassified and absorbed by `digest`.
fn publish<W: Word>(words: &mut [W], digest: &mut Digest) -> Option<bool> {
    let tainted = is_tainted(words);
    declassify(words);
    digest.update_words(words);
    tainted
}

/// A frame of `len` bytes at the start of `buffer`: whether it carried secret bits, then the whole buffer
/// declassified and the frame absorbed by `digest`.
fn publish_frame(buffer: &mut [u8], len: usize, digest: &mut Digest) -> Option<bool> {
    let tainted = is_tainted(&buffer[..len]);
    declassify(buffer);
    digest.update(&buffer[..len]);
    tainted
}

/// A public generator: the harness's own inputs (message bytes, key bits) before they are classified.
fn public_xof(label: u8) -> Blake2bXof {
    Blake2bXof::from_seed([label; 32])
}

/// A generator seeded from a classified seed: its whole stream is secret.
fn secret_xof(label: u8) -> Blake2bXof {
    let mut seed = [label; 32];
    classify(&mut seed);
    Blake2bXof::from_seed(seed)
}

/// `M` public bytes, each 0 or 1.
fn binary_bytes<const M: usize>(label: u8) -> [u8; M] {
    let mut bytes = [0u8; M];
    public_xof(label).fill_bytes(&mut bytes);
    for b in &mut bytes {
        *b &= 1;
    }
    bytes
}

/// `M` bytes, each 0 or 1, with bit 0 of each classified.
fn secret_bits<const M: usize>(label: u8) -> [u8; M] {
    let mut bytes = binary_bytes(label);
    classify_bits(&mut bytes, 0x01);
    bytes
}

/// A binary key of `M` coefficients with bit 0 of each classified.
fn secret_key<const M: usize>(label: u8) -> GlweSecretKey<[u8; M]> {
    GlweSecretKey::from_container(secret_bits(label), PolynomialSize(M)).expect("a binary key of M coefficients")
}

/// The spectrum of the `k = 1` key `key` under `plan`.
fn spectrum_of<P: NegacyclicProduct>(plan: &P, key: &GlweSecretKey<impl KeyStorage>) -> Vec<P::Spectral> {
    let mut spectrum = vec![P::SPECTRAL_ZERO; plan.polynomial_size()];
    compute_glwe_key_spectrum(plan, key, &mut spectrum).expect("k = 1, a key of the plan's size");
    spectrum
}

/// A seeded public key `(seed, body)` under `plan`, public throughout: made from the public binary key
/// `label` and the public randomness `label + 1`.
fn public_key<P: NegacyclicProduct>(plan: &P, noise: &DeviceNoise, label: u8) -> ([u8; 32], Vec<P::Torus>) {
    let n = plan.polynomial_size();
    let mut key_bytes = vec![0u8; n];
    public_xof(label).fill_bytes(&mut key_bytes);
    key_bytes.iter_mut().for_each(|b| *b &= 1);
    let key = GlweSecretKey::from_container(key_bytes, PolynomialSize(n)).expect("a binary key");
    let spectrum = spectrum_of(plan, &key);
    let (mut body, mut scratch) = (vec![P::Torus::ZERO; n], vec![P::SPECTRAL_ZERO; n]);
    let seed = generate_seeded_glwe_public_key(
        plan,
        &spectrum,
        noise,
        &mut body,
        &mut scratch,
        &mut public_xof(label + 1),
    )
    .expect("N words");
    (seed, body)
}

/// A `TFHE_LIB_GLWE_1024` encryptor of the secret key `label`, its XOF seeded from the secret `label + 1`.
fn secret_encryptor(label: u8) -> GlweEncryptor<N> {
    GlweEncryptor::<N>::new(&TFHE_LIB_GLWE_1024, &secret_key::<N>(label), secret_xof(label + 1))
        .expect("TFHE_LIB_GLWE_1024")
}

/// The integer set's polynomial size (`MESSAGE_2_CARRY_2_TUNIFORM_2M128`).
const N64: usize = 2048;

/// `M` classified reading bytes.
fn secret_readings<const M: usize>(label: u8) -> [u8; M] {
    let mut readings = [0u8; M];
    public_xof(label).fill_bytes(&mut readings);
    classify(&mut readings);
    readings
}

/// A classified message of `N / 8` bytes.
fn secret_message(label: u8) -> [u8; N / 8] {
    secret_readings(label)
}

fn tuniform() -> Outcome {
    let mut digest = Digest::default();
    let mut taint = [None; 4];
    let mut noise = [0u32; SAMPLES];
    let t8 = TUniform::new(8).expect("b = 8");
    t8.add_noise_torus(&mut ClassifiedRng(public_xof(40)), &mut noise);
    taint[0] = publish(&mut noise, &mut digest);
    for (i, b) in [20, 40].into_iter().enumerate() {
        let mut noise = [0u64; SAMPLES / 4];
        TUniform::new(b)
            .expect("b <= 62")
            .add_noise_torus(&mut ClassifiedRng(public_xof(41 + i as u8)), &mut noise);
        taint[1 + i] = publish(&mut noise, &mut digest);
    }
    let mut single = [0u32; 16];
    let mut rng = ClassifiedRng(public_xof(43));
    for x in &mut single {
        *x = t8.sample_torus(&mut rng);
    }
    taint[3] = publish(&mut single, &mut digest);
    outcome(&taint, &digest)
}

fn xof() -> Outcome {
    let mut rng = secret_xof(1);
    let mut bytes = [0u8; 3000];
    rng.fill_bytes(&mut bytes[..1000]);
    let mut entropy = [0x5au8; 32];
    classify(&mut entropy);
    rng.reseed(&entropy);
    rng.fill_bytes(&mut bytes[1000..2000]);
    rng.ratchet();
    rng.fill_bytes(&mut bytes[2000..]);
    let mut words = [0u64; 96];
    for (i, w) in words.iter_mut().enumerate() {
        *w = if i % 2 == 0 {
            u64::from(rng.next_u32())
        } else {
            rng.next_u64()
        };
    }
    let mut digest = Digest::default();
    let taint = [publish(&mut bytes, &mut digest), publish(&mut words, &mut digest)];
    outcome(&taint, &digest)
}

fn keygen() -> Outcome {
    let key = GlweSecretKey::generate_binary([0u8; N], PolynomialSize(N), &mut secret_xof(2))
        .expect("a key buffer of N bytes");
    let mut copy = [0u8; N];
    copy.copy_from_slice(key.as_bytes());
    let mut digest = Digest::default();
    let taint = [publish(&mut copy, &mut digest)];
    outcome(&taint, &digest)
}

fn key_spectrum() -> Outcome {
    let key = secret_key::<N>(3);
    let plan = negacyclic_fft::Plan::new(N).expect("N = 1024 is supported");
    let mut spectrum = GlweKeySpectrum::from_container([0f64; N], key.polynomial_size()).expect("k = 1, N = 1024");
    compute_glwe_key_spectrum(&plan, &key, spectrum.as_mut_slice()).expect("k = 1, N = 1024");
    Outcome {
        tainted: is_tainted(spectrum.as_slice()),
        digest: 0,
    }
}

fn encoding() -> Outcome {
    let bits = secret_bits::<64>(4);
    let mut booleans = [0u32; 64];
    let mut booleans64 = [0u64; 64];
    for ((e, e64), b) in booleans.iter_mut().zip(&mut booleans64).zip(bits) {
        *e = encode_bool::<u32>(b == 1);
        *e64 = encode_bool::<u64>(b == 1);
    }
    let encoding = PaddedIntegerEncoding::new(16, 64).expect("p = 16 on a 64-bit torus");
    let mut messages = [0u64; 64];
    let mut source = public_xof(5);
    for m in &mut messages {
        *m = source.next_u64();
    }
    classify(&mut messages);
    let mut integers = [0u64; 64];
    for (e, &m) in integers.iter_mut().zip(&messages) {
        *e = encoding.encode::<u64>(m);
    }
    let packed = secret_message(6);
    let mut unpacked = [false; 3 * 64];
    for (i, bit) in unpacked.iter_mut().enumerate() {
        // Bits 0..64, then past the end of a 16-byte message (public indices, secret bytes).
        *bit = message_bit(&packed[..16], if i < 64 { i } else { 128 + i });
    }
    let mut digest = Digest::default();
    let taint = [
        publish(&mut booleans, &mut digest),
        publish(&mut booleans64, &mut digest),
        publish(&mut integers, &mut digest),
        is_tainted(&unpacked[..64]),
    ];
    declassify(&mut unpacked);
    digest.update(&unpacked.map(u8::from));
    outcome(&taint, &digest)
}

fn encrypt_seeded() -> Outcome {
    let mut encryptor = secret_encryptor(7);
    let mut digest = Digest::default();
    let mut taint = [None; 2 * ENCRYPTIONS];
    for (i, taint) in taint.chunks_exact_mut(2).enumerate() {
        let message = secret_message(9 + i as u8);
        let mut body = [0u32; N];
        let mut seed = encryptor
            .encrypt_seeded_glwe_ciphertext(&message, &mut body)
            .expect("N/8 message bytes, N body words");
        // The ciphertext is public: the device sends it.
        taint[1] = publish(&mut seed, &mut digest);
        taint[0] = publish(&mut body, &mut digest);
        // A TRNG's entropy mixed in between encryptions.
        let mut entropy = [i as u8; 32];
        classify(&mut entropy);
        encryptor.reseed(&entropy);
    }
    outcome(&taint, &digest)
}

fn encrypt_k3() -> Outcome {
    let params = DEFAULT_KS_PBS_GLWE_512_K3;
    let key =
        GlweSecretKey::from_container(secret_bits::<{ 3 * 512 }>(60), PolynomialSize(512)).expect("a binary k = 3 key");
    let mut encryptor = GlweEncryptor::<512, 3>::new(&params, &key, secret_xof(61)).expect("k = 3, N = 512");
    let mut digest = Digest::default();
    let mut taint = [None; ENCRYPTIONS];
    for (i, taint) in taint.iter_mut().enumerate() {
        let message = secret_readings::<64>(62 + i as u8);
        let mut body = [0u32; 512];
        let mut seed = encryptor
            .encrypt_seeded_glwe_ciphertext(&message, &mut body)
            .expect("N/8 message bytes, N body words");
        publish(&mut seed, &mut digest);
        *taint = publish(&mut body, &mut digest);
    }
    outcome(&taint, &digest)
}

fn encrypt_public_key() -> Outcome {
    let params = TFHE_LIB_GLWE_1024;
    // The public key is public: made from a public key and public randomness.
    let plan = negacyclic_fft::Plan::new(N).expect("N = 1024 is supported");
    let noise = DeviceNoise::for_parameters(&params, NoiseSampling::ConstantTime).expect("TFHE_LIB_GLWE_1024");
    let (pk_seed, pk_body) = public_key(&plan, &noise, 70);
    let mut encryptor =
        PublicKeyEncryptor::<N>::new(&params, &pk_seed, &pk_body, secret_xof(72)).expect("TFHE_LIB_GLWE_1024");
    let mut digest = Digest::default();
    let mut taint = [None; 2 * ENCRYPTIONS];
    for (i, taint) in taint.chunks_exact_mut(2).enumerate() {
        let message = secret_message(73 + i as u8);
        let (mut mask, mut body) = ([0u32; N], [0u32; N]);
        encryptor
            .encrypt_glwe_ciphertext(&message, &mut mask, &mut body)
            .expect("N/8 message bytes, N mask and body words");
        taint[0] = publish(&mut mask, &mut digest);
        taint[1] = publish(&mut body, &mut digest);
    }
    outcome(&taint, &digest)
}

fn ntt_product() -> Outcome {
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let plan = <NttPlan32 as NegacyclicProductPlan<N>>::PLAN;
    let spectrum = spectrum_of(&plan, &secret_key::<N>(80));
    let mut taint = [None; 3];
    let (mut scratch, mut out) = ([[0u32; 2]; N], [0u32; N]);
    for (i, taint) in taint.iter_mut().enumerate() {
        // A public mask, as on the device: only the key is secret.
        plan.forward_seeded_mask(&[81 + i as u8; 32], 0, &mut scratch);
        plan.mul_assign(&mut scratch, &spectrum);
        plan.inverse_add(&mut scratch, &mut out);
        *taint = is_tainted(&out);
    }
    let mut digest = Digest::default();
    publish(&mut out, &mut digest);
    outcome(&taint, &digest)
}

fn encrypt_ntt() -> Outcome {
    use tfhe_sbc_device::encrypt::glwe_encryption::{
        encrypt_glwe_ciphertext_assign, encrypt_seeded_glwe_ciphertext_assign,
    };
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let params = TFHE_LIB_GLWE_1024;
    let plan = <NttPlan32 as NegacyclicProductPlan<N>>::PLAN;
    let spectrum = spectrum_of(&plan, &secret_key::<N>(84));
    let noise = DeviceNoise::for_parameters(&params, NoiseSampling::ConstantTime).expect("TFHE_LIB_GLWE_1024");
    let mut rng = secret_xof(85);
    let mut scratch = [[0u32; 2]; N];
    let mut digest = Digest::default();
    let mut taint = [None; 2 * ENCRYPTIONS];
    for (i, taint) in taint.chunks_exact_mut(2).enumerate() {
        let message = secret_message(86 + i as u8);
        let (mut mask, mut body) = ([0u32; N], [0u32; N]);
        for (j, b) in body.iter_mut().enumerate() {
            *b = encode_bool::<u32>(message_bit(&message, j));
        }
        let seeded = i % 2 == 0;
        let mut seed = if seeded {
            encrypt_seeded_glwe_ciphertext_assign(&plan, &spectrum, &noise, &mut body, &mut scratch, &mut rng)
                .expect("N body words")
        } else {
            encrypt_glwe_ciphertext_assign(&plan, &spectrum, &noise, &mut mask, &mut body, &mut scratch, &mut rng)
                .expect("N mask and body words");
            [0u8; 32]
        };
        rng.ratchet();
        let seed_taint = publish(&mut seed, &mut digest);
        let mask_taint = publish(&mut mask, &mut digest);
        taint[0] = publish(&mut body, &mut digest);
        taint[1] = if seeded { seed_taint } else { mask_taint };
    }
    outcome(&taint, &digest)
}

fn ntt64_product() -> Outcome {
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let plan = <NttPlan64 as NegacyclicProductPlan<N64>>::PLAN;
    let spectrum = spectrum_of(&plan, &secret_key::<N64>(90));
    let (mut scratch, mut out) = ([[0u32; 3]; N64], [0u64; N64]);
    plan.forward_seeded_mask(&[91; 32], 0, &mut scratch);
    plan.mul_assign(&mut scratch, &spectrum);
    plan.inverse(&mut scratch, &mut out);
    let mut digest = Digest::default();
    let taint = [publish(&mut out, &mut digest)];
    outcome(&taint, &digest)
}

/// The integer encryptor's own entry points: keyed from a secret unpacked key, seeded from secret bytes,
/// encrypting secret `u8`, `u16` and `u32` readings (a full, a partial and a one-reading ciphertext: the
/// encoding of 0 after the last reading), then reseeded with secret entropy.
fn integer_encrypt() -> Outcome {
    let key = secret_key::<N64>(100);
    let mut encryptor = Box::new(IntegerEncryptor::<N64, NttPlan64>::EMPTY);
    encryptor
        .set_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &key)
        .expect("the integer set, 2048 coefficients");
    let mut seed = [101u8; 32];
    classify(&mut seed);
    encryptor.seed_from_bytes(&mut seed);
    let mut digest = Digest::default();
    let mut taint = [None; 8];
    let mut body = vec![0u64; N64];
    let mut record = |mut seed: [u8; 32], body: &mut [u64], taint: &mut [Option<bool>]| {
        taint[0] = publish(&mut seed, &mut digest);
        taint[1] = publish(body, &mut digest);
    };
    let readings8 = secret_readings::<512>(102);
    let s = encryptor.encrypt_u8(&readings8, &mut body).expect("512 u8 readings");
    record(s, &mut body, &mut taint[0..2]);
    let mut readings16 = [0u16; 200];
    for (r, b) in readings16.iter_mut().zip(secret_readings::<400>(103).chunks_exact(2)) {
        *r = u16::from_le_bytes([b[0], b[1]]);
    }
    let s = encryptor.encrypt_u16(&readings16, &mut body).expect("200 u16 readings");
    record(s, &mut body, &mut taint[2..4]);
    let mut readings32 = [0u32; 1];
    readings32[0] = u32::from_le_bytes(secret_readings::<4>(104));
    let s = encryptor.encrypt_u32(&readings32, &mut body).expect("one u32 reading");
    record(s, &mut body, &mut taint[4..6]);
    let mut entropy = [105u8; 32];
    classify(&mut entropy);
    encryptor.reseed(&entropy);
    let readings8 = secret_readings::<100>(106);
    let s = encryptor.encrypt_u8(&readings8, &mut body).expect("100 u8 readings");
    record(s, &mut body, &mut taint[6..8]);
    outcome(&taint, &digest)
}

/// The integer firmware's path (`firmware/src/integer_run.rs`): an empty encryptor keyed in place from the
/// packed key of a credential file and seeded from a (secret) hardware RNG, secret readings encrypted
/// straight into the frame buffer (its 8-aligned body window) and authenticated under a secret MAC key; then
/// the same message again with the set's compact body (the body rounded and packed in place).
fn integer_frame() -> Outcome {
    type Encryptor = IntegerEncryptor<N64, NttPlan64>;
    let key = secret_key::<N64>(110);
    let mut packed = [0u8; N64 / 8];
    pack_secret_key(key.as_bytes(), &mut packed).expect("N bits into N / 8 bytes");
    let mut encryptor = Box::new(Encryptor::EMPTY);
    encryptor
        .set_packed_key(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &packed)
        .expect("the integer set, 256 bytes");
    declassify(&mut packed);
    encryptor
        .seed(&mut ClassifiedRng(public_xof(111)))
        .expect("an infallible RNG");
    let mut sender = sender(10, 112);
    // A full chunk of 512 readings and a short one of 100.
    let readings = secret_readings::<{ Encryptor::MESSAGE_BYTES + 100 }>(113);
    let mut digest = Digest::default();
    // Three bytes of offset: the body's 8-aligned window is not where the body lands.
    let mut taint = seal_message(&mut *encryptor, &mut sender, &readings, 3, &mut digest);
    // The same message again with the set's compact body.
    let compact = encryptor.compact_body_bits();
    encryptor.set_body_bits(compact).expect("the set's compact width");
    taint.extend(seal_message(&mut *encryptor, &mut sender, &readings, 3, &mut digest));
    outcome(&taint, &digest)
}

/// Seals `message` through the [`FrameEncryptor`] trait as the next message of `sender` (its credentials and
/// frame counter), each frame `offset` bytes into its buffer (so that a payload's aligned window is not where
/// the payload lands), digests the declassified frames and returns each frame's taint.
fn seal_message(
    encryptor: &mut dyn FrameEncryptor,
    sender: &mut (DeviceCredentials, FrameCounter),
    message: &[u8],
    offset: usize,
    digest: &mut Digest,
) -> Vec<Option<bool>> {
    let (credentials, counter) = sender;
    let outgoing = encryptor
        .begin_message(counter, message.len())
        .expect("sequence numbers left");
    let mut buffer = vec![0u8; encryptor.frame_buffer_len() + offset];
    let frame = &mut buffer[offset..];
    chunks(message, encryptor.chunk_bytes())
        .map(|chunk| {
            let len = encryptor
                .encrypt_frame_into(credentials, &outgoing, &chunk, frame)
                .expect("a chunk of this message, a large enough buffer");
            publish_frame(frame, len, digest)
        })
        .collect()
}

/// A device's sender: the credentials of device `device` under its secret MAC key `mac_label`, and a fresh
/// frame counter.
fn sender(device: u64, mac_label: u8) -> (DeviceCredentials, FrameCounter) {
    (
        DeviceCredentials::new(device, 1, secret_mac_key(mac_label)),
        FrameCounter::new(0),
    )
}

/// The integer public-key firmware path (`firmware/`, feature `integer-public-key`): the public key (public,
/// from a public key and public randomness) read in place from its file's little-endian bytes, the encryptor
/// seeded from a secret RNG, secret readings sealed into public-key frames under a secret MAC key.
fn integer_public_key_frame() -> Outcome {
    type Encryptor = IntegerPublicKeyEncryptor<N64, NttPlan64>;
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let plan = <NttPlan64 as NegacyclicProductPlan<N64>>::PLAN;
    let noise =
        DeviceNoise::for_tuniform_parameters(&MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe()).expect("the integer set");
    let (pk_seed, pk_body) = public_key(&plan, &noise, 130);
    let pk_le: Vec<u8> = pk_body.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut encryptor = Box::new(Encryptor::EMPTY);
    encryptor
        .set_integer_public_key_le_bytes(&MESSAGE_2_CARRY_2_TUNIFORM_2M128, &pk_seed, &pk_le)
        .expect("the integer set, a real public key");
    encryptor
        .seed(&mut ClassifiedRng(public_xof(132)))
        .expect("an infallible RNG");
    let readings = secret_readings::<{ Encryptor::READING_BYTES + 100 }>(134);
    let mut digest = Digest::default();
    let taint = seal_message(&mut *encryptor, &mut sender(11, 133), &readings, 3, &mut digest);
    outcome(&taint, &digest)
}

/// [`integer_encrypt`]'s negative control: the same core the integer encryptor calls
/// (`encrypt_seeded_glwe_ciphertext_assign` with `NttPlan64` at `N = 2048`, secret key spectrum, secret XOF,
/// secret readings radix-encoded in the body), with the Ziggurat at the scale of TUniform(17) as its noise
/// instead of TUniform(17). Memcheck must flag it: the taint reaches the same code, and a leaky sampler is seen.
fn integer_ziggurat() -> Outcome {
    use tfhe_sbc_device::encrypt::glwe_encryption::encrypt_seeded_glwe_ciphertext_assign;
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let plan = <NttPlan64 as NegacyclicProductPlan<N64>>::PLAN;
    let spectrum = spectrum_of(&plan, &secret_key::<N64>(120));
    // TUniform(17)'s standard deviation is about 2^16.2 in units of 1/q = 2^-64.
    let noise = DeviceNoise::Ziggurat {
        std_dev_scaled: 75_674.5,
    };
    let encoding = MESSAGE_2_CARRY_2_TUNIFORM_2M128.encoding();
    let readings = secret_readings::<512>(121);
    let mut body = vec![0u64; N64];
    for (&r, blocks) in readings.iter().zip(body.chunks_exact_mut(4)) {
        encoding
            .encode_value(u64::from(r), 8, blocks)
            .expect("a u8 in four blocks");
    }
    let mut scratch = vec![[0u32; 3]; N64];
    let mut seed =
        encrypt_seeded_glwe_ciphertext_assign(&plan, &spectrum, &noise, &mut body, &mut scratch, &mut secret_xof(122))
            .expect("N body words");
    let mut digest = Digest::default();
    let taint = [
        publish(&mut seed, &mut digest),
        publish(body.as_mut_slice(), &mut digest),
    ];
    outcome(&taint, &digest)
}

/// A MAC key with every bit classified.
fn secret_mac_key(label: u8) -> MacKey {
    let mut bytes = [label; MAC_KEY_BYTES];
    classify(&mut bytes);
    MacKey::from_bytes(bytes)
}

fn frame_mac() -> Outcome {
    let key = secret_mac_key(50);
    let mut frame = [0u8; 600];
    public_xof(51).fill_bytes(&mut frame);
    let mut tag = key.tag(&frame);
    let mut digest = Digest::default();
    let taint = [publish(&mut tag, &mut digest)];
    outcome(&taint, &digest)
}

fn seeded_frame() -> Outcome {
    let params = TFHE_LIB_GLWE_1024;
    let mut encryptor = secret_encryptor(15);
    let credentials = DeviceCredentials::new(7, 1, secret_mac_key(17));
    let mut counter = FrameCounter::new(1000);
    // Two chunks: a full one and a short last one.
    let message = [secret_message(18), secret_message(19)];
    let bytes = &message.as_flattened()[..N / 8 + 40];
    let mut digest = Digest::default();
    let mut taint = [None; 4];
    for (round, body_bits) in [32, params.compact_body_bits()].into_iter().enumerate() {
        encryptor.set_body_bits(body_bits).expect("a width the set allows");
        let outgoing = encryptor
            .begin_message(&mut counter, bytes.len())
            .expect("sequence numbers left");
        for (chunk, taint) in chunks(bytes, N / 8).zip(&mut taint[2 * round..]) {
            let mut body = [0u32; N];
            let mut frame = [0u8; SEEDED_FRAME_BYTES_1024];
            let len = encryptor
                .encrypt_seeded_frame(&credentials, &outgoing, &chunk, &mut body, &mut frame)
                .expect("a chunk of this message, a large enough buffer");
            declassify(&mut body);
            *taint = publish_frame(&mut frame, len, &mut digest);
        }
    }
    outcome(&taint, &digest)
}

/// The firmware's path, as a microcontroller runs it: an empty encryptor keyed in place from the packed key
/// of a credential file and seeded from a (secret) hardware RNG, frames encrypted straight into the frame
/// buffer, with the Cortex-M default product (`NttPlan32`) and with the hosts' default (the FFT).
fn firmware_frame() -> Outcome {
    use tfhe_sbc_device::product::{DefaultProduct, NegacyclicProductPlan};

    fn run<P: NegacyclicProductPlan<N, Torus = u32>>(label: u8, digest: &mut Digest) -> Option<bool> {
        let params = TFHE_LIB_GLWE_1024;
        let key = secret_key::<N>(label);
        let mut packed = [0u8; N / 8];
        pack_secret_key(key.as_bytes(), &mut packed).expect("N bits into N / 8 bytes");
        let mut encryptor = Box::new(GlweEncryptor::<N, 1, P>::EMPTY);
        encryptor
            .set_packed_key(&params, &packed)
            .expect("TFHE_LIB_GLWE_1024, 128 bytes");
        declassify(&mut packed);
        let mut trng = ClassifiedRng(public_xof(label + 1));
        encryptor.seed(&mut trng).expect("an infallible RNG");
        let message = [secret_message(label + 3), secret_message(label + 4)];
        let bytes = &message.as_flattened()[..N / 8 + 17];
        // One byte of offset: the body's 4-aligned window is not where the body lands.
        let taint = seal_message(&mut *encryptor, &mut sender(9, label + 2), bytes, 1, digest);
        all_tainted(&taint)
    }

    let mut digest = Digest::default();
    let taint = [
        run::<NttPlan32>(70, &mut digest),
        run::<DefaultProduct>(75, &mut digest),
    ];
    outcome(&taint, &digest)
}

fn full_frame() -> Outcome {
    let mut encryptor = secret_encryptor(12);
    let credentials = DeviceCredentials::new(8, 1, secret_mac_key(14));
    let mut counter = FrameCounter::new(0);
    let message = secret_message(14);
    let outgoing = encryptor
        .begin_message(&mut counter, message.len())
        .expect("sequence numbers left");
    let chunk = chunks(&message, N / 8).next().expect("one chunk");
    let mut ciphertext =
        GlweCiphertext::<u32, _>::from_container([0u32; 2 * N], PolynomialSize(N)).expect("k = 1, N = 1024");
    let mut frame = [0u8; FULL_FRAME_BYTES_1024];
    let len = encryptor
        .encrypt_full_frame(&credentials, &outgoing, &chunk, &mut ciphertext, &mut frame)
        .expect("a chunk of this message, a large enough buffer");
    let (mask, body) = ciphertext.mask_and_body_mut();
    let (mask_taint, body_taint) = (is_tainted(mask), is_tainted(body));
    declassify(mask);
    declassify(body);
    let mut digest = Digest::default();
    let taint = [mask_taint, body_taint, publish_frame(&mut frame, len, &mut digest)];
    outcome(&taint, &digest)
}

fn encrypt_ziggurat() -> Outcome {
    let params = TFHE_LIB_GLWE_1024;
    let key = secret_key::<N>(22);
    let mut encryptor = GlweEncryptor::<N>::with_noise_sampling(&params, &key, secret_xof(23), NoiseSampling::Ziggurat)
        .expect("TFHE_LIB_GLWE_1024 is a Gaussian set");
    let message = secret_message(24);
    let mut body = [0u32; N];
    let mut seed = encryptor
        .encrypt_seeded_glwe_ciphertext(&message, &mut body)
        .expect("N/8 message bytes, N body words");
    let mut digest = Digest::default();
    let taint = [publish(&mut seed, &mut digest), publish(&mut body, &mut digest)];
    outcome(&taint, &digest)
}

fn ziggurat_u32() -> Outcome {
    let mut noise = [0u32; SAMPLES];
    Ziggurat.add_noise_torus(&mut ClassifiedRng(public_xof(20)), 128.0, &mut noise);
    let mut digest = Digest::default();
    let taint = [publish(&mut noise, &mut digest)];
    outcome(&taint, &digest)
}

fn ziggurat_u64() -> Outcome {
    let mut noise = [0u64; SAMPLES / 4];
    Ziggurat.add_noise_torus(&mut ClassifiedRng(public_xof(21)), 1_048_576.0, &mut noise);
    let mut digest = Digest::default();
    let taint = [publish(&mut noise, &mut digest)];
    outcome(&taint, &digest)
}

/// 64 secret bytes, a few of them zero.
fn secret_bytes() -> [u8; 64] {
    let mut bytes = [0u8; 64];
    public_xof(30).fill_bytes(&mut bytes);
    for b in bytes.iter_mut().step_by(5) {
        *b = 0;
    }
    classify(&mut bytes);
    bytes
}

#[inline(never)]
fn count(counter: &mut u32) {
    *counter += 1;
}

fn secret_branch() -> Outcome {
    let secrets = secret_bytes();
    let mut zeros = 0u32;
    for &s in &secrets {
        // A call cannot become a conditional move: this stays a jump on the secret.
        if s == 0 {
            count(&mut zeros);
        }
    }
    Outcome {
        tainted: is_tainted(&secrets),
        digest: u64::from(zeros),
    }
}

/// A table indexed by a secret byte, as an S-box or the Ziggurat's layer tables are.
static TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u32).wrapping_mul(0x9e37_79b9);
        i += 1;
    }
    t
};

fn secret_index() -> Outcome {
    let secrets = secret_bytes();
    let table = core::hint::black_box(&TABLE);
    let mut sum = 0u32;
    for &s in &secrets {
        sum = sum.wrapping_add(table[usize::from(s)]);
    }
    Outcome {
        tainted: is_tainted(&secrets),
        digest: u64::from(sum),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Natively (no valgrind) every check runs to the end, is deterministic, and reports no taint.
    #[test]
    fn every_check_runs_natively_and_deterministically() {
        if crate::valgrind::running_on_valgrind() {
            return;
        }
        for check in DEFAULT.iter().chain(ZIGGURAT).chain(SELF_TEST) {
            let first = (check.run)();
            let second = (check.run)();
            assert_eq!(first, second, "{}", check.name);
            assert_eq!(first.tainted, None, "{}", check.name);
        }
    }

    #[test]
    fn self_test_finds_the_planted_zeros() {
        let zeros = secret_bytes().iter().filter(|&&b| b == 0).count();
        assert!(zeros >= 13, "every fifth byte is zero");
        assert_eq!(secret_branch().digest, zeros as u64);
    }
}
