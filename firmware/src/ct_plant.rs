//! Planted timing leaks, the negative controls of the constant-time trace (`scripts/firmware-ct-trace.sh`):
//! a build with one of these must give different traces for different secrets, or the check proves nothing.
//! Firmware only, built with `TSBC_FIRMWARE_CT_PLANT=branch` or `=lookup` in the environment (build.rs sets
//! `cfg(firmware_ct_plant)`); never in a measured build.

/// A table for [`look_up`] to index.
#[cfg(firmware_ct_plant = "lookup")]
static TABLE: [u8; 64] = [0; 64];

/// A branch on bit 0 of `secret`: a call made or not.
#[cfg(firmware_ct_plant = "branch")]
#[inline(never)]
pub fn branch_on(secret: u8) {
    if core::hint::black_box(secret) & 1 == 1 {
        planted_call();
    }
}

/// Not inlined, so that the branch in [`branch_on`] cannot become a select.
#[cfg(firmware_ct_plant = "branch")]
#[inline(never)]
fn planted_call() {
    core::hint::black_box(());
}

/// A load whose address depends on bits 1..6 of `secret`, with no branch.
#[cfg(firmware_ct_plant = "lookup")]
#[inline(never)]
pub fn look_up(secret: u8) {
    let index = usize::from(core::hint::black_box(secret) >> 1) & 63;
    // The table through `black_box`, so that the load is made (its contents are not known to the compiler).
    core::hint::black_box(core::hint::black_box(&TABLE)[index]);
}
