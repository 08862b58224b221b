//! Secret-holding types are not `Clone`, and a forked child does not replay its parent's randomness.
#![allow(clippy::unwrap_used)]

mod common;

/// `assert_not_clone!(T)` fails to compile if `T: Clone`: with a blanket impl for every type and a second
/// one for `Clone` types, the call below is ambiguous exactly when `T` is `Clone`.
macro_rules! assert_not_clone {
    ($t:ty) => {{
        trait AmbiguousIfClone<A> {
            fn check() {}
        }
        impl<T: ?Sized> AmbiguousIfClone<()> for T {}
        #[allow(dead_code)]
        struct IsClone;
        impl<T: ?Sized + Clone> AmbiguousIfClone<IsClone> for T {}
        <$t as AmbiguousIfClone<_>>::check();
    }};
}

#[test]
fn secret_types_are_not_clone() {
    assert_not_clone!(tfhe_sbc_device::csprng::xof::Blake2bXof);
    assert_not_clone!(tfhe_sbc_device::encrypt::secret_key::GlweEncryptor<1024>);
    assert_not_clone!(tfhe_sbc_device::encrypt::decryption::GlweDecryptor<1024>);
    assert_not_clone!(tfhe_sbc_device::product::key_spectrum::GlweKeySpectrum<f64, [f64; 1024]>);
    assert_not_clone!(tfhe_sbc_device::encrypt::secret_key::GlweEncryptor<512, 3>);
    assert_not_clone!(tfhe_sbc_core::entities::GlweSecretKey<[u8; 1024]>);
    assert_not_clone!(tfhe_sbc_core::entities::GlweSecretKey<Vec<u8>>);
    assert_not_clone!(tfhe_sbc_device::frame::mac::MacKey);
    assert_not_clone!(tfhe_sbc_device::frame::mac::DeviceCredentials);
}

/// With the `getrandom` feature, a `fork()`ed child that inherits an encryptor reseeds from the OS before
/// its first encryption: parent and child produce different mask seeds and bodies. Without the pid check
/// they would be identical, and `b_child - b_parent` would reveal `m_child - m_parent` with no key.
#[cfg(all(feature = "getrandom", target_os = "linux"))]
#[test]
fn forked_child_does_not_repeat_the_parent() {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    let (_key, mut encryptor) = common::key_and_encryptor(0x31, 0x32);
    let (mut parent_end, mut child_end) = UnixStream::pair().unwrap();
    let message = [0u8; 128];
    // SAFETY: the child only encrypts (no allocation, no locks: the encryptor is heap-free), writes to a
    // socket and leaves with `_exit`, never returning into the test harness.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    let mut body = [0u32; 1024];
    if pid == 0 {
        let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
        let mut out = [0u8; 32 + 4096];
        out[..32].copy_from_slice(&seed);
        for (chunk, w) in out[32..].chunks_exact_mut(4).zip(&body) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        let ok = child_end.write_all(&out).is_ok();
        // SAFETY: ends the child at once, without running the parent's destructors or the harness.
        #[allow(unsafe_code)]
        unsafe {
            libc::_exit(if ok { 0 } else { 1 })
        };
    }
    drop(child_end);
    let seed = encryptor.encrypt_seeded_glwe_ciphertext(&message, &mut body).unwrap();
    let mut child = vec![0u8; 32 + 4096];
    parent_end.read_exact(&mut child).unwrap();
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    #[allow(unsafe_code)]
    unsafe {
        libc::waitpid(pid, &mut status, 0)
    };
    assert_eq!(status, 0, "child failed");
    assert_ne!(child[..32], seed, "the child repeated the parent's mask seed");
    let parent_body: Vec<u8> = body.iter().flat_map(|w| w.to_le_bytes()).collect();
    let same = child[32..]
        .chunks_exact(4)
        .zip(parent_body.chunks_exact(4))
        .filter(|(a, b)| a == b)
        .count();
    // Independent bodies agree on a coefficient with probability about 2^-32 each.
    assert!(same < 4, "{same} body coefficients repeated");
}
