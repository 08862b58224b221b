//! Safe wrappers over the valgrind client requests of `src/shim.c`.
//!
//! Memcheck keeps a shadow bit per bit of memory and registers: "defined" or not. The ctgrind method marks
//! secrets *undefined* ([`classify`]); memcheck then reports every conditional jump, and every memory
//! address, computed from them. What becomes public (a ciphertext) is marked defined again
//! ([`declassify`]) before anyone inspects it. A client request changes only the shadow bits, never the
//! bytes, and costs a few instructions (no effect) when the program does not run under valgrind.

use core::ffi::{c_int, c_uint, c_void};

unsafe extern "C" {
    safe fn tsbc_have_memcheck_h() -> c_int;
    safe fn tsbc_running_on_valgrind() -> c_uint;
    safe fn tsbc_count_errors() -> c_uint;
    fn tsbc_make_undefined(ptr: *const c_void, len: usize);
    fn tsbc_make_defined(ptr: *const c_void, len: usize);
    fn tsbc_get_vbits(ptr: *const c_void, vbits: *mut c_void, len: usize) -> c_uint;
    fn tsbc_set_vbits(ptr: *const c_void, vbits: *const c_void, len: usize) -> c_uint;
}

/// `GET_VBITS`/`SET_VBITS` result: done.
const VBITS_OK: c_uint = 1;
/// Bytes of shadow bits moved per client request (a stack buffer).
const VBITS_CHUNK: usize = 256;

/// Whether the shim was compiled against `<valgrind/memcheck.h>` (otherwise every request is a stub).
pub fn have_memcheck_h() -> bool {
    tsbc_have_memcheck_h() != 0
}

/// Whether this process runs under valgrind (`RUNNING_ON_VALGRIND`).
pub fn running_on_valgrind() -> bool {
    tsbc_running_on_valgrind() != 0
}

/// The errors valgrind has reported so far (`VALGRIND_COUNT_ERRORS`), 0 when not under valgrind.
pub fn error_count() -> u32 {
    tsbc_count_errors()
}

/// The address and length in bytes of `value`: its own bytes, so a `Vec` or a `Box` must be passed as its
/// contents (`v.as_slice()`, `&*b`); passed itself, only its pointer and length would be (de)classified or read.
fn bytes_of<T: ?Sized>(value: &T) -> (*const c_void, usize) {
    (core::ptr::from_ref(value).cast::<c_void>(), size_of_val(value))
}

/// Marks every bit of `value` secret (memcheck: undefined). Its bytes are unchanged. `value`'s own bytes: pass
/// a `Vec`'s contents (`v.as_mut_slice()`), not the `Vec`.
///
/// `&mut` on purpose: the compiler must then assume the call may have written `value`, and reload it from
/// memory afterwards instead of reusing a copy kept in a register (which would stay "defined").
pub fn classify<T: ?Sized>(value: &mut T) {
    let (ptr, len) = bytes_of(value);
    // SAFETY: `ptr..ptr + len` is the memory of `value`, valid for the whole call. The request only changes
    // valgrind's shadow state (a no-op without valgrind); it neither reads nor writes the bytes.
    unsafe { tsbc_make_undefined(ptr, len) }
}

/// Marks every bit of `value` public (memcheck: defined). Its bytes are unchanged.
pub fn declassify<T: ?Sized>(value: &mut T) {
    let (ptr, len) = bytes_of(value);
    // SAFETY: as in `classify`: the memory of `value`, shadow state only.
    unsafe { tsbc_make_defined(ptr, len) }
}

/// Marks secret only the bits of each byte of `bytes` that are set in `mask`; the other bits become
/// public. For example `mask = 0x01` on a binary key says "each coefficient is 0 or 1 (public), which one
/// is secret", the exact secret of a binary key.
///
/// Returns `false` when not under valgrind (nothing was marked).
pub fn classify_bits(bytes: &mut [u8], mask: u8) -> bool {
    let vbits = [mask; VBITS_CHUNK];
    let mut ok = true;
    for chunk in bytes.chunks_mut(VBITS_CHUNK) {
        let (ptr, len) = bytes_of(chunk);
        // SAFETY: `chunk` is valid for `len` bytes, `vbits` for `VBITS_CHUNK >= len` bytes; the request reads
        // `vbits` and writes only valgrind's shadow state of `chunk`.
        let rc = unsafe { tsbc_set_vbits(ptr, vbits.as_ptr().cast(), len) };
        ok &= rc == VBITS_OK;
    }
    ok
}

/// Whether any bit of `value` is secret (memcheck: undefined), without reporting an error: the proof that
/// the marked secrets reached an output. `None` when not under valgrind. `value`'s own bytes: pass a `Vec`'s
/// contents (`v.as_slice()`), not the `Vec` (its pointer and length are never tainted).
pub fn is_tainted<T: ?Sized>(value: &T) -> Option<bool> {
    let (ptr, len) = bytes_of(value);
    let mut vbits = [0u8; VBITS_CHUNK];
    let mut tainted = false;
    let mut offset = 0;
    while offset < len {
        let n = (len - offset).min(VBITS_CHUNK);
        // SAFETY: `ptr + offset .. ptr + offset + n` lies inside `value`, `vbits` holds `n` bytes; the request
        // reads valgrind's shadow state and writes `vbits` only.
        let rc = unsafe { tsbc_get_vbits(ptr.cast::<u8>().add(offset).cast(), vbits.as_mut_ptr().cast(), n) };
        if rc != VBITS_OK {
            return None;
        }
        tainted |= vbits[..n].iter().any(|&v| v != 0);
        offset += n;
    }
    Some(tainted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Natively every request is a no-op: the bytes are unchanged and nothing reads as tainted.
    #[test]
    fn requests_are_no_ops_natively() {
        if running_on_valgrind() {
            return;
        }
        let mut x = [1u8, 2, 3, 4];
        classify(&mut x);
        assert!(!classify_bits(&mut x, 1));
        declassify(&mut x[..2]);
        assert_eq!(x, [1, 2, 3, 4]);
        assert_eq!(is_tainted(&x), None);
        assert_eq!(error_count(), 0);
    }
}
