//! Encryption: the GLWE encryptors (secret key, k = 3, public key, integer) and the encryption core under
//! each product, with secret keys, secret generators and secret messages.

use super::inputs::{
    public_key, secret_bits, secret_encryptor, secret_key, secret_message, secret_readings, secret_xof, secret_xof_of,
    spectrum_of,
};
use super::outputs::{outcome, publish};
use super::sizes::{ENCRYPTIONS, N, N64};
use crate::check::Outcome;
use crate::digest::Digest;
use crate::valgrind::classify;
use negacyclic_ntt::{NttPlan32, NttPlan64};
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::encoding::encode_bool;
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_core::parameters::{DEFAULT_KS_PBS_GLWE_512_K3, MESSAGE_2_CARRY_2_TUNIFORM_2M128, TFHE_LIB_GLWE_1024};
use tfhe_sbc_device::csprng::{Blake2bCounter, Blake2sCounter, XofConstruction};
use tfhe_sbc_device::encrypt::integer::IntegerEncryptor;
use tfhe_sbc_device::encrypt::public_key::PublicKeyEncryptor;
use tfhe_sbc_device::encrypt::secret_key::GlweEncryptor;
use tfhe_sbc_device::frame::message::message_bit;
use tfhe_sbc_device::noise::{DeviceNoise, NoiseSampling};
use tfhe_sbc_device::product::NegacyclicProductPlan;

pub(super) fn encrypt_seeded() -> Outcome {
    seeded_encryptions(&mut secret_encryptor(7), 9)
}

/// The 32-bit targets' default path on the host: the secret-key encryptor through the integer NTT with the
/// BLAKE2s XOF (construction v3): secret key, secret XOF seed, seeded encryptions (mask id 3) of secret
/// messages, reseeded with secret entropy.
pub(super) fn encrypt_seeded_blake2s() -> Outcome {
    let mut encryptor = Box::new(
        GlweEncryptor::<N, 1, NttPlan32, Blake2sCounter>::new(
            &TFHE_LIB_GLWE_1024,
            &secret_key::<N>(110),
            secret_xof_of::<Blake2sCounter>(111),
        )
        .expect("TFHE_LIB_GLWE_1024"),
    );
    seeded_encryptions(&mut encryptor, 112)
}

/// [`ENCRYPTIONS`] seeded encryptions of secret messages (labels from `first_message`) by `encryptor`,
/// their ciphertexts published, a TRNG's secret entropy mixed in between them.
fn seeded_encryptions<P: NegacyclicProductPlan<N, Torus = u32>, X: XofConstruction>(
    encryptor: &mut GlweEncryptor<N, 1, P, X>,
    first_message: u8,
) -> Outcome {
    let mut digest = Digest::default();
    let mut taint = [None; 2 * ENCRYPTIONS];
    for (i, taint) in taint.chunks_exact_mut(2).enumerate() {
        let message = secret_message(first_message + i as u8);
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

pub(super) fn encrypt_k3() -> Outcome {
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

pub(super) fn encrypt_public_key() -> Outcome {
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

pub(super) fn encrypt_ntt() -> Outcome {
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
            encrypt_seeded_glwe_ciphertext_assign::<Blake2bCounter, _, _>(
                &plan,
                &spectrum,
                &noise,
                &mut body,
                &mut scratch,
                &mut rng,
            )
            .expect("N body words")
        } else {
            encrypt_glwe_ciphertext_assign::<Blake2bCounter, _, _>(
                &plan,
                &spectrum,
                &noise,
                &mut mask,
                &mut body,
                &mut scratch,
                &mut rng,
            )
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

/// The integer encryptor's own entry points: keyed from a secret unpacked key, seeded from secret bytes,
/// encrypting secret `u8`, `u16` and `u32` readings (a full, a partial and a one-reading ciphertext: the
/// encoding of 0 after the last reading), then reseeded with secret entropy.
pub(super) fn integer_encrypt() -> Outcome {
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

pub(super) fn encrypt_ziggurat() -> Outcome {
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

/// [`integer_encrypt`]'s negative control: the same core the integer encryptor calls
/// (`encrypt_seeded_glwe_ciphertext_assign` with `NttPlan64` at `N = 2048`, secret key spectrum, secret XOF,
/// secret readings radix-encoded in the body), with the Ziggurat at the scale of TUniform(17) as its noise
/// instead of TUniform(17). Memcheck must flag it: the taint reaches the same code, and a leaky sampler is seen.
pub(super) fn integer_ziggurat() -> Outcome {
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
    let mut seed = encrypt_seeded_glwe_ciphertext_assign::<Blake2bCounter, _, _>(
        &plan,
        &spectrum,
        &noise,
        &mut body,
        &mut scratch,
        &mut secret_xof(122),
    )
    .expect("N body words");
    let mut digest = Digest::default();
    let taint = [
        publish(&mut seed, &mut digest),
        publish(body.as_mut_slice(), &mut digest),
    ];
    outcome(&taint, &digest)
}
