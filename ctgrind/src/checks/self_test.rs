//! Deliberate leaks, which memcheck must flag: a branch on a secret and a load from a secret address.

use super::inputs::public_xof;
use crate::check::Outcome;
use crate::valgrind::{classify, is_tainted};
use rand_core::Rng;

/// 64 secret bytes, a few of them zero.
pub(super) fn secret_bytes() -> [u8; 64] {
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

pub(super) fn secret_branch() -> Outcome {
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

pub(super) fn secret_index() -> Outcome {
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
