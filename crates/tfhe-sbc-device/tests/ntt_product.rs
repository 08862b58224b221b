//! The integer NTT products (`NttPlan32`, `NttPlan64`) through the device's `NegacyclicProduct` trait: the
//! seeded mask expanded straight into a spectrum equals the transform of the expanded mask, and products
//! through the trait equal the schoolbook product, for the 32-bit torus (and the FFT) and the 64-bit torus.
#![allow(clippy::unwrap_used)]

use negacyclic_fft::Plan;
use negacyclic_ntt::{NttPlan32, NttPlan64};
use tfhe_sbc_core::torus::UnsignedTorus;
use tfhe_sbc_device::csprng::mask::expand_mask;
use tfhe_sbc_device::product::NegacyclicProductPlan;

/// The schoolbook negacyclic product over any torus.
fn naive<T: UnsignedTorus>(a: &[T], key: &[u8]) -> Vec<T> {
    let n = a.len();
    let mut out = vec![T::ZERO; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &s) in key.iter().enumerate() {
            if s == 0 {
                continue;
            }
            if i + j < n {
                out[i + j] = out[i + j].wrapping_add(ai);
            } else {
                out[i + j - n] = out[i + j - n].wrapping_sub(ai);
            }
        }
    }
    out
}

fn key(n: usize, label: u64) -> Vec<u8> {
    (0..n as u64)
        .map(|i| ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ label) >> 61) as u8 & 1)
        .collect()
}

/// `K` mask polynomials from a seed, through `forward_seeded_mask`, times a key, inverted: the naive product
/// of the expanded mask. Also `forward_torus` of the expanded mask gives the same spectrum.
fn seeded_masks_are_exact<P, const N: usize>()
where
    P: NegacyclicProductPlan<N>,
    P::Spectral: PartialEq + core::fmt::Debug,
{
    const K: usize = 3;
    let plan = P::PLAN;
    let seed = [0x5au8; 32];
    let mut mask = vec![P::Torus::ZERO; K * N];
    expand_mask::<tfhe_sbc_device::csprng::Blake2bCounter, _>(&seed, &mut mask);
    let s = key(N, 7);
    let mut key_spectrum = vec![P::SPECTRAL_ZERO; N];
    plan.forward_binary(&s, &mut key_spectrum);
    for (i, a_i) in mask.chunks_exact(N).enumerate() {
        let mut spectrum = vec![P::SPECTRAL_ZERO; N];
        plan.forward_seeded_mask::<tfhe_sbc_device::csprng::Blake2bCounter>(&seed, i, &mut spectrum);
        let mut direct = vec![P::SPECTRAL_ZERO; N];
        plan.forward_torus(a_i, &mut direct);
        assert!(spectrum == direct, "polynomial {i}: seeded expansion vs forward_torus");
        plan.mul_assign(&mut spectrum, &key_spectrum);
        let mut out = vec![P::Torus::ZERO; N];
        plan.inverse(&mut spectrum, &mut out);
        assert_eq!(out, naive(a_i, &s), "polynomial {i}");
    }
}

#[test]
fn seeded_masks_through_the_ntt_are_exact() {
    seeded_masks_are_exact::<NttPlan32, 1024>();
    seeded_masks_are_exact::<NttPlan32, 2048>();
    seeded_masks_are_exact::<NttPlan32, 64>();
    seeded_masks_are_exact::<NttPlan64, 2048>();
    seeded_masks_are_exact::<NttPlan64, 256>();
}

/// `mul_add_assign` then `inverse_add`, as the public-key encryption uses them (two torus spectra, one of
/// them a binary polynomial given as torus words), equals the naive sums; and the FFT agrees on `u32`.
fn accumulation_is_exact<P, const N: usize>() -> Vec<P::Torus>
where
    P: NegacyclicProductPlan<N>,
{
    let plan = P::PLAN;
    let seed = [0x21u8; 32];
    let mut a = vec![P::Torus::ZERO; 2 * N];
    expand_mask::<tfhe_sbc_device::csprng::Blake2bCounter, _>(&seed, &mut a);
    let (s, t) = (key(N, 1), key(N, 2));
    let as_torus = |k: &[u8]| {
        k.iter()
            .map(|&b| P::Torus::from_u64_wrapping(b.into()))
            .collect::<Vec<_>>()
    };
    let (mut a0, mut a1, mut s_hat, mut t_hat) = (
        vec![P::SPECTRAL_ZERO; N],
        vec![P::SPECTRAL_ZERO; N],
        vec![P::SPECTRAL_ZERO; N],
        vec![P::SPECTRAL_ZERO; N],
    );
    plan.forward_torus(&a[..N], &mut a0);
    plan.forward_torus(&a[N..], &mut a1);
    plan.forward_torus(&as_torus(&s), &mut s_hat);
    plan.forward_torus(&as_torus(&t), &mut t_hat);
    let mut acc = vec![P::SPECTRAL_ZERO; N];
    plan.mul_add_assign(&mut acc, &a0, &s_hat);
    plan.mul_add_assign(&mut acc, &a1, &t_hat);
    let mut out = vec![P::Torus::from_u64_wrapping(0x1234_5678_9abc_def0); N];
    plan.inverse_add(&mut acc, &mut out);
    let (p, q) = (naive(&a[..N], &s), naive(&a[N..], &t));
    for j in 0..N {
        let expected = P::Torus::from_u64_wrapping(0x1234_5678_9abc_def0)
            .wrapping_add(p[j])
            .wrapping_add(q[j]);
        assert_eq!(out[j], expected, "coefficient {j}");
    }
    out
}

#[test]
fn accumulation_through_the_ntt_is_exact() {
    let ntt = accumulation_is_exact::<NttPlan32, 1024>();
    let fft = accumulation_is_exact::<Plan, 1024>();
    assert_eq!(ntt, fft);
    accumulation_is_exact::<NttPlan64, 2048>();
}
