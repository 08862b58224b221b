//! Key generation and the key spectrum from secret key bits, and the message encodings of secret messages.

use super::inputs::{public_xof, secret_bits, secret_key, secret_message, secret_xof};
use super::outputs::{outcome, publish};
use super::sizes::N;
use crate::check::Outcome;
use crate::digest::Digest;
use crate::valgrind::{classify, declassify, is_tainted};
use rand_core::Rng;
use tfhe_sbc_core::dimensions::PolynomialSize;
use tfhe_sbc_core::encoding::{PaddedIntegerEncoding, encode_bool};
use tfhe_sbc_core::entities::GlweSecretKey;
use tfhe_sbc_device::frame::message::message_bit;
use tfhe_sbc_device::product::key_spectrum::{GlweKeySpectrum, compute_glwe_key_spectrum};

pub(super) fn keygen() -> Outcome {
    let key = GlweSecretKey::generate_binary([0u8; N], PolynomialSize(N), &mut secret_xof(2))
        .expect("a key buffer of N bytes");
    let mut copy = [0u8; N];
    copy.copy_from_slice(key.as_bytes());
    let mut digest = Digest::default();
    let taint = [publish(&mut copy, &mut digest)];
    outcome(&taint, &digest)
}

pub(super) fn key_spectrum() -> Outcome {
    let key = secret_key::<N>(3);
    let plan = negacyclic_fft::Plan::new(N).expect("N = 1024 is supported");
    let mut spectrum = GlweKeySpectrum::from_container([0f64; N], key.polynomial_size()).expect("k = 1, N = 1024");
    compute_glwe_key_spectrum(&plan, &key, spectrum.as_mut_slice()).expect("k = 1, N = 1024");
    Outcome {
        tainted: is_tainted(spectrum.as_slice()),
        digest: 0,
    }
}

pub(super) fn encoding() -> Outcome {
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
