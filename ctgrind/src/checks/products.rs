//! The negacyclic NTT products on their own: a secret key's spectrum times public masks, inverse and CRT.

use super::inputs::{secret_key, spectrum_of};
use super::outputs::{outcome, publish};
use super::sizes::{N, N64};
use crate::check::Outcome;
use crate::digest::Digest;
use crate::valgrind::is_tainted;
use negacyclic_ntt::{NttPlan32, NttPlan64};
use tfhe_sbc_device::csprng::DeviceConstruction;
use tfhe_sbc_device::product::NegacyclicProduct;

pub(super) fn ntt_product() -> Outcome {
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let plan = <NttPlan32 as NegacyclicProductPlan<N>>::PLAN;
    let spectrum = spectrum_of(&plan, &secret_key::<N>(80));
    let mut taint = [None; 3];
    let (mut scratch, mut out) = ([[0u32; 2]; N], [0u32; N]);
    for (i, taint) in taint.iter_mut().enumerate() {
        // A public mask, as on the device: only the key is secret.
        plan.forward_seeded_mask::<DeviceConstruction>(&[81 + i as u8; 32], 0, &mut scratch);
        plan.mul_assign(&mut scratch, &spectrum);
        plan.inverse_add(&mut scratch, &mut out);
        *taint = is_tainted(&out);
    }
    let mut digest = Digest::default();
    publish(&mut out, &mut digest);
    outcome(&taint, &digest)
}

pub(super) fn ntt64_product() -> Outcome {
    use tfhe_sbc_device::product::NegacyclicProductPlan;
    let plan = <NttPlan64 as NegacyclicProductPlan<N64>>::PLAN;
    let spectrum = spectrum_of(&plan, &secret_key::<N64>(90));
    let (mut scratch, mut out) = ([[0u32; 3]; N64], [0u64; N64]);
    plan.forward_seeded_mask::<DeviceConstruction>(&[91; 32], 0, &mut scratch);
    plan.mul_assign(&mut scratch, &spectrum);
    plan.inverse(&mut scratch, &mut out);
    let mut digest = Digest::default();
    let taint = [publish(&mut out, &mut digest)];
    outcome(&taint, &digest)
}
