//! The noise samplers (TUniform, the Ziggurat) and the XOF, on secret generator output.

use super::inputs::{public_xof, secret_xof_of};
use super::outputs::{outcome, publish};
use super::sizes::SAMPLES;
use crate::check::Outcome;
use crate::classified_rng::ClassifiedRng;
use crate::digest::Digest;
use crate::valgrind::classify;
use rand_core::Rng;
use tfhe_sbc_core::gaussian::{NormalSampler, Ziggurat};
use tfhe_sbc_core::tuniform::TUniform;
use tfhe_sbc_device::csprng::{Blake2bCounter, Blake2sCounter, XofConstruction};

pub(super) fn tuniform() -> Outcome {
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

pub(super) fn xof() -> Outcome {
    xof_of::<Blake2bCounter>(1)
}

/// The BLAKE2s generator (construction v3, the 32-bit targets' default) as [`xof`] checks the BLAKE2b one.
pub(super) fn xof_blake2s() -> Outcome {
    xof_of::<Blake2sCounter>(2)
}

/// A generator of construction `X` from a secret seed: fill_bytes, reseed with secret entropy, ratchet,
/// next_u32/next_u64.
fn xof_of<X: XofConstruction>(label: u8) -> Outcome {
    let mut rng = secret_xof_of::<X>(label);
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

pub(super) fn ziggurat_u32() -> Outcome {
    let mut noise = [0u32; SAMPLES];
    Ziggurat.add_noise_torus(&mut ClassifiedRng(public_xof(20)), 128.0, &mut noise);
    let mut digest = Digest::default();
    let taint = [publish(&mut noise, &mut digest)];
    outcome(&taint, &digest)
}

pub(super) fn ziggurat_u64() -> Outcome {
    let mut noise = [0u64; SAMPLES / 4];
    Ziggurat.add_noise_torus(&mut ClassifiedRng(public_xof(21)), 1_048_576.0, &mut noise);
    let mut digest = Digest::default();
    let taint = [publish(&mut noise, &mut digest)];
    outcome(&taint, &digest)
}
