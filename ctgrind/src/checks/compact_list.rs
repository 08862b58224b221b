//! The tfhe-rs compact-list encryptors (`tfhe_sbc_device::encrypt::compact_list`): a public raw compact
//! public key `[a | b]` read in place from its little-endian bytes, the CSPRNG seeded from a secret RNG (so
//! `r`, `e1` and `e2` are secret), secret readings. Both forms write into a caller's buffer; the list is
//! public once written.

use super::inputs::{public_xof, secret_readings};
use super::outputs::{outcome, publish_frame};
use crate::check::Outcome;
use crate::classified_rng::ClassifiedRng;
use crate::digest::Digest;
use crate::valgrind::classify;
use negacyclic_ntt::NttPlan64;
use rand_core::Rng;
use tfhe_sbc_device::encrypt::compact_list::{
    COMPACT_PUBLIC_KEY_BYTES, CompactListEncryptor, CompactListNttEncryptor, compact_list_bytes,
};

/// The streaming form (the default: `CompactListEncryptor::EMPTY`, `set_public_key_le_bytes`, `seed`) on
/// lists of secret `u8`, `u16` and `bool` readings (one bin each: `N^2` masked additions on secret `r`
/// bits), then the NTT form on the `u8` list.
pub(crate) fn compact_list() -> Outcome {
    // A public key: uniform words pass the degenerate-key checks.
    let mut key = vec![0u8; COMPACT_PUBLIC_KEY_BYTES];
    public_xof(140).fill_bytes(&mut key);
    let mut digest = Digest::default();
    let mut taint = Vec::new();

    let bytes = secret_readings::<12>(141);
    let mut words: [u16; 5] = core::array::from_fn(|i| u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]));
    classify(&mut words);
    let mut bits: [bool; 3] = core::array::from_fn(|i| bytes[10 + i % 2] & 1 == 1);
    classify(&mut bits);
    let readings = secret_readings::<9>(142);

    let mut encryptor = CompactListEncryptor::EMPTY;
    encryptor.set_public_key_le_bytes(&key).expect("a uniform public key");
    encryptor
        .seed(&mut ClassifiedRng(public_xof(143)))
        .expect("an infallible RNG");
    let mut list = vec![0u8; compact_list_bytes::<u8>(readings.len())];
    let written = encryptor.encrypt_list(&readings, &mut list).expect("a ready encryptor");
    taint.push(publish_frame(&mut list, written, &mut digest));
    let mut list = vec![0u8; compact_list_bytes::<u16>(words.len())];
    let written = encryptor.encrypt_list(&words, &mut list).expect("a ready encryptor");
    taint.push(publish_frame(&mut list, written, &mut digest));
    let mut list = vec![0u8; compact_list_bytes::<bool>(bits.len())];
    let written = encryptor.encrypt_list(&bits, &mut list).expect("a ready encryptor");
    taint.push(publish_frame(&mut list, written, &mut digest));

    let mut ntt = Box::new(CompactListNttEncryptor::<NttPlan64>::EMPTY);
    ntt.set_public_key_le_bytes(&key).expect("a uniform public key");
    ntt.seed(&mut ClassifiedRng(public_xof(144)))
        .expect("an infallible RNG");
    let mut list = vec![0u8; compact_list_bytes::<u8>(readings.len())];
    let written = ntt.encrypt_list(&readings, &mut list).expect("a ready encryptor");
    taint.push(publish_frame(&mut list, written, &mut digest));
    outcome(&taint, &digest)
}
