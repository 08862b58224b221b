//! The three lists of checks, one per [`Mode`](crate::Mode): the one place that says which checks run, each
//! naming the function of the module of what it checks.

use super::{compact_list, encryption, frames, keys, products, randomness, self_test};
use crate::check::Check;

/// Everything the device does by default: must be clean.
pub static DEFAULT: &[Check] = &[
    Check {
        name: "tuniform",
        what: "TUniform(b).add_noise_torus (b = 8 on u32; b = 20, 40 on u64) and sample_torus, secret RNG output",
        run: randomness::tuniform,
    },
    Check {
        name: "xof",
        what: "Blake2bXof from a secret seed: fill_bytes, next_u32/next_u64, reseed(secret entropy), ratchet",
        run: randomness::xof,
    },
    Check {
        name: "xof-blake2s",
        what: "Blake2sXof (the 32-bit targets' default) from a secret seed: fill_bytes, next_u32/next_u64, reseed(secret entropy), ratchet",
        run: randomness::xof_blake2s,
    },
    Check {
        name: "keygen",
        what: "GlweSecretKey::generate_binary from a secret XOF",
        run: keys::keygen,
    },
    Check {
        name: "key-spectrum",
        what: "GlweSecretKey::from_container + compute_glwe_key_spectrum (FFT of the key), secret key bits",
        run: keys::key_spectrum,
    },
    Check {
        name: "encoding",
        what: "encode_bool, PaddedIntegerEncoding::encode, message_bit on secret messages",
        run: keys::encoding,
    },
    Check {
        name: "encrypt-seeded",
        what: "GlweEncryptor::<1024>::new (secret key, secret XOF seed) + seeded encryptions of secret messages, reseed",
        run: encryption::encrypt_seeded,
    },
    Check {
        name: "encrypt-k3",
        what: "GlweEncryptor::<512, 3>::new (secret k = 3 key, secret XOF seed) + seeded encryptions (tfhe-rs's 128-bit set)",
        run: encryption::encrypt_k3,
    },
    Check {
        name: "encrypt-public-key",
        what: "PublicKeyEncryptor::<1024> (public key, secret XOF seed): secret u, e1, e2 and messages",
        run: encryption::encrypt_public_key,
    },
    Check {
        name: "ntt-product",
        what: "NttPlan32 (the Cortex-M default product): key spectrum of a secret key, products with public masks, inverse + CRT",
        run: products::ntt_product,
    },
    Check {
        name: "encrypt-ntt",
        what: "seeded and full encryptions of secret messages through the NttPlan32 product (secret key, secret XOF)",
        run: encryption::encrypt_ntt,
    },
    Check {
        name: "encrypt-seeded-blake2s",
        what: "GlweEncryptor::<1024, 1, NttPlan32, Blake2sCounter> (the 32-bit targets' default: NTT, BLAKE2s XOF, mask id 3): secret key, secret XOF seed, seeded encryptions of secret messages, reseed",
        run: encryption::encrypt_seeded_blake2s,
    },
    Check {
        name: "ntt64-product",
        what: "NttPlan64 (64-bit torus, three primes) at N = 2048: key spectrum of a secret key, product, inverse + CRT",
        run: products::ntt64_product,
    },
    Check {
        name: "integer-encrypt",
        what: "IntegerEncryptor::<2048, NttPlan64>: set_key (secret key), seed_from_bytes (secret seed), encrypt_u8/u16/u32 of secret readings, reseed(secret entropy)",
        run: encryption::integer_encrypt,
    },
    Check {
        name: "integer-frame",
        what: "the integer firmware path: IntegerEncryptor::<2048, NttPlan64>::EMPTY, set_packed_key (secret packed key), seed (secret TryCryptoRng), encrypt_frame_into of secret u8 readings (a full and a short chunk, then a compact body) under a secret MAC key",
        run: frames::integer_frame,
    },
    Check {
        name: "integer-public-key-frame",
        what: "the integer public-key firmware path: IntegerPublicKeyEncryptor::<2048, NttPlan64>::EMPTY, set_integer_public_key_le_bytes (a public key), seed (secret TryCryptoRng), encrypt_frame_into of secret u8 readings (secret u, e1, e2) under a secret MAC key",
        run: frames::integer_public_key_frame,
    },
    Check {
        name: "frame-mac",
        what: "MacKey::tag of a public frame under a secret MAC key",
        run: frames::frame_mac,
    },
    Check {
        name: "seeded-frame",
        what: "encrypt_seeded_frame (wire v2): encryption, framing and MAC of secret chunks under a secret MAC key, with the full body and with an 11-bit compact body (rounding and bit packing)",
        run: frames::seeded_frame,
    },
    Check {
        name: "firmware-frame",
        what: "the firmware path: GlweEncryptor::<1024, 1, NttPlan32>::EMPTY, set_packed_key (secret packed key), seed (secret TryCryptoRng), encrypt_frame_into (secret chunks, secret MAC key); the FFT default too",
        run: frames::firmware_frame,
    },
    Check {
        name: "full-frame",
        what: "encrypt_full_frame (wire v2, the paper's full mask): same, with the mask expanded in full",
        run: frames::full_frame,
    },
    Check {
        name: "compact-list",
        what: "CompactListEncryptor (streaming, the default) and CompactListNttEncryptor::<NttPlan64>: set_public_key_le_bytes (a public raw key), seed (secret TryCryptoRng: secret r, e1, e2), encrypt_list of secret u8, u16 and bool readings into tfhe-rs's packed list",
        run: compact_list::compact_list,
    },
];

/// The Ziggurat (the paper's sampler, an opt-in): must be flagged.
pub static ZIGGURAT: &[Check] = &[
    Check {
        name: "ziggurat-u32",
        what: "Ziggurat.add_noise_torus::<u32> at sigma*q = 128, secret RNG output",
        run: randomness::ziggurat_u32,
    },
    Check {
        name: "ziggurat-u64",
        what: "Ziggurat.add_noise_torus::<u64> at sigma*q = 2^20, secret RNG output",
        run: randomness::ziggurat_u64,
    },
    Check {
        name: "encrypt-ziggurat",
        what: "GlweEncryptor::with_noise_sampling(.., NoiseSampling::Ziggurat): the device's opt-in",
        run: encryption::encrypt_ziggurat,
    },
    Check {
        name: "integer-ziggurat",
        what: "the integer encryption's core (N = 2048, u64, NttPlan64, secret key and XOF, secret readings) with the Ziggurat as its noise: integer-encrypt's negative control",
        run: encryption::integer_ziggurat,
    },
];

/// Deliberate leaks: must be flagged, once as a branch and once as an address.
pub static SELF_TEST: &[Check] = &[
    Check {
        name: "secret-branch",
        what: "`if secret_byte == 0` around a call: a conditional jump on a secret",
        run: self_test::secret_branch,
    },
    Check {
        name: "secret-index",
        what: "TABLE[secret_byte]: a load from a secret address",
        run: self_test::secret_index,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::self_test::{secret_branch, secret_bytes};

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
