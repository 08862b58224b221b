//! Thumb-2 / A32 assembly twins of the small primes' radix-4 passes (`crate::small_ntt`), for Armv7 and
//! Armv8-M Mainline cores with a 32x32->64 multiplier (Cortex-M4/M7/M33, Armv7-A/R; `build.rs` sets
//! `negacyclic_ntt_arm_asm` from the target triple). Each pass is a naked function that owns all fourteen
//! general registers, so that a pass keeps its four values, both Montgomery temporaries, the three twiddles
//! of a group, `p`, `-p^-1` and its pointers in registers (LLVM, with the frame pointer reserved and 13
//! registers, spilled a twiddle and shuffled pointers: 37-39 instructions per radix-4 butterfly against
//! 30 here), and the passes over groups of four consecutive values load and store them with one `LDM` and
//! one `STM`.
//!
//! The arithmetic is exactly that of the portable kernels (the same butterflies, the same signed Montgomery
//! products `SMULL`, `MUL`, `SMLAL`, the same signed Barrett reductions `SMMUL`, `MLS`, in the same places),
//! so each pass writes the same words as its portable twin; the tests run on Arm compare them (`cargo test
//! -p negacyclic-ntt --target armv7-unknown-linux-gnueabihf` under qemu-arm, see the crate docs). No branch
//! depends on the data: every loop bound is a pointer derived from `N`, and the addresses are the portable
//! kernels' (the order of the groups and of the rows within a group is the same).
//!
//! Registers: `r2 = p`, `r3 = -p^-1`, values and temporaries in `r7..r12`; every instruction used exists in
//! both Thumb-2 and A32 (`LDRD` on the even pair `r4, r5`, as A32 needs), so an Armv7 build in either
//! instruction set assembles it.
#![allow(unsafe_code)]

use crate::arith::{Prime, Twiddle};

/// The operands of one pass, read by the naked functions at fixed offsets (`repr(C)`, 32-bit pointers).
#[repr(C)]
struct Args {
    /// Offset 0: the first value.
    data: *mut u32,
    /// Offset 4: where the loop over values ends (the passes with one loop: one past the last value, or
    /// for the first forward pass one past the first quarter).
    end: *const u32,
    /// Offset 8: the twiddle pointer of the group loop (`tw + m` forward, `tw + h` inverse).
    t1: *const u32,
    /// Offset 12: its end (`tw + 2m` forward, `tw + h/2` inverse).
    t_end: *const u32,
    /// Offset 16: the twiddle table.
    base: *const u32,
    /// Offset 20: `p`.
    p: u32,
    /// Offset 24: `-p^-1 mod 2^32`.
    neg_inv: u32,
    /// Offset 28: `floor(2^32 / p)`.
    barrett: u32,
    /// Offset 32: the second twiddle pointer of the passes over groups of four consecutive values.
    t2: *const u32,
}

/// Cooley-Tukey butterfly in registers: `x, y = x + w y, x - w y` (Montgomery, temporaries `r11`, `r12`):
/// `ct(x, y, w)` of `crate::small_ntt`.
macro_rules! ct {
    ($x:literal, $y:literal, $w:literal) => {
        concat!(
            "smull r11, r12, ",
            $y,
            ", ",
            $w,
            "\n",
            "mul ",
            $y,
            ", r11, r3\n",
            "smlal r11, r12, ",
            $y,
            ", r2\n",
            "sub ",
            $y,
            ", ",
            $x,
            ", r12\n",
            "add ",
            $x,
            ", ",
            $x,
            ", r12\n",
        )
    };
}

/// Gentleman-Sande butterfly in registers: `x + y` into `x`, `(y - x) w` into `hi`; `y` and `lo` are
/// clobbered (the temporaries of the next butterfly): `gs(x, y, w)` of `crate::small_ntt`.
macro_rules! gs {
    ($x:literal, $y:literal, $w:literal, $lo:literal, $hi:literal) => {
        concat!(
            "sub ",
            $y,
            ", ",
            $y,
            ", ",
            $x,
            "\n",
            "add ",
            $x,
            ", ",
            $y,
            ", ",
            $x,
            ", lsl #1\n",
            "smull ",
            $lo,
            ", ",
            $hi,
            ", ",
            $y,
            ", ",
            $w,
            "\n",
            "mul ",
            $y,
            ", ",
            $lo,
            ", r3\n",
            "smlal ",
            $lo,
            ", ",
            $hi,
            ", ",
            $y,
            ", r2\n",
        )
    };
}

/// The four Gentleman-Sande butterflies of a radix-4 inverse group: values `a0..a3` in `r7, r9, r10, r11`
/// (`r8`, `r12` free), `w1a = r5`, `w1b = r4`, `w2 = r6`; leaves `a0..a3` in `r7, r8, r11, r12` (ascending,
/// for `STM`), `r9`, `r10` free.
macro_rules! gs4 {
    ($w2:literal) => {
        concat!(
            gs!("r7", "r9", "r5", "r12", "r8"),
            gs!("r10", "r11", "r4", "r12", "r9"),
            gs!("r7", "r10", $w2, "r12", "r11"),
            gs!("r8", "r9", $w2, "r10", "r12"),
        )
    };
}

/// A forward pass of two stages, `m` groups of `4Q` values (`Q > 1`, a constant of the function).
macro_rules! forward_pass_asm {
    ($name:ident, $q:literal) => {
        /// A forward pass of two stages with quarter `Q` (see [`forward_pass`]).
        ///
        /// # Safety
        /// `args` as [`forward_pass`] fills it.
        #[unsafe(naked)]
        unsafe extern "C" fn $name(args: *const Args) {
            core::arch::naked_asm!(
                "push {{r4-r11, lr}}",
                "ldr r1, [r0, #16]",
                "ldr r2, [r0, #12]",
                "push {{r1, r2}}",
                "ldr lr, [r0, #8]",
                "ldr r2, [r0, #20]",
                "ldr r3, [r0, #24]",
                "ldr r0, [r0]",
                // Group i: w1 = tw[m + i], then (w2a, w2b) = tw[2m + 2i..] at 2 lr - base.
                "2:",
                "ldr r6, [lr], #4",
                "ldr r11, [sp]",
                "rsb r11, r11, lr, lsl #1",
                "ldrd r4, r5, [r11, #-8]",
                "add r1, r0, #{q4}",
                "3:",
                "ldr r7, [r0]",
                "ldr r8, [r0, #{q4}]",
                "ldr r9, [r0, #{q8}]",
                "ldr r10, [r0, #{q12}]",
                ct!("r7", "r9", "r6"),
                ct!("r8", "r10", "r6"),
                ct!("r7", "r8", "r4"),
                ct!("r9", "r10", "r5"),
                "str r8, [r0, #{q4}]",
                "str r9, [r0, #{q8}]",
                "str r10, [r0, #{q12}]",
                "str r7, [r0], #4",
                "cmp r0, r1",
                "bne 3b",
                "add r0, r0, #{q12}",
                "ldr r11, [sp, #4]",
                "cmp lr, r11",
                "bne 2b",
                "add sp, sp, #8",
                "pop {{r4-r11, pc}}",
                q4 = const 4 * $q,
                q8 = const 8 * $q,
                q12 = const 12 * $q,
            )
        }
    };
}

forward_pass_asm!(forward_pass_4, 4);
forward_pass_asm!(forward_pass_16, 16);
forward_pass_asm!(forward_pass_64, 64);
forward_pass_asm!(forward_pass_256, 256);

/// An inverse pass of two stages, `h/2` groups of `4T` values (`T > 1`, a constant of the function), the
/// second stage's sums reduced (signed Barrett) when the second argument is `reduce`.
macro_rules! inverse_pass_asm {
    ($name:ident, $t:literal, $($reduce:ident)?) => {
        /// An inverse pass of two stages with `t = T` (see [`inverse_pass`]).
        ///
        /// # Safety
        /// `args` as [`inverse_pass`] fills it.
        #[unsafe(naked)]
        unsafe extern "C" fn $name(args: *const Args) {
            core::arch::naked_asm!(
                "push {{r4-r11, lr}}",
                "ldr r1, [r0, #16]",
                "ldr r2, [r0, #12]",
                "ldr r3, [r0, #28]",
                "push {{r1, r2, r3}}",
                "ldr lr, [r0, #8]",
                "ldr r2, [r0, #20]",
                "ldr r3, [r0, #24]",
                "ldr r0, [r0]",
                // Group g: w2 = tw[h - 1 - g], then (w1b, w1a) = tw[2h - 2 - 2g..] at 2 lr - base.
                "2:",
                "ldr r6, [lr, #-4]!",
                "ldr r11, [sp]",
                "rsb r11, r11, lr, lsl #1",
                "ldrd r4, r5, [r11]",
                "add r1, r0, #{t4}",
                "3:",
                "ldr r7, [r0]",
                "ldr r9, [r0, #{t4}]",
                "ldr r10, [r0, #{t8}]",
                "ldr r11, [r0, #{t12}]",
                gs4!("r6"),
                $(
                    inverse_pass_asm!(@$reduce),
                )?
                "str r8, [r0, #{t4}]",
                "str r11, [r0, #{t8}]",
                "str r12, [r0, #{t12}]",
                "str r7, [r0], #4",
                "cmp r0, r1",
                "bne 3b",
                "add r0, r0, #{t12}",
                "ldr r11, [sp, #4]",
                "cmp lr, r11",
                "bne 2b",
                "add sp, sp, #12",
                "pop {{r4-r11, pc}}",
                t4 = const 4 * $t,
                t8 = const 8 * $t,
                t12 = const 12 * $t,
            )
        }
    };
    (@reduce) => {
        concat!(
            "ldr r10, [sp, #8]\n",
            "smmul r9, r7, r10\n",
            "mls r7, r9, r2, r7\n",
            "smmul r9, r8, r10\n",
            "mls r8, r9, r2, r8\n",
        )
    };
}

inverse_pass_asm!(inverse_pass_4_reduce, 4, reduce);
inverse_pass_asm!(inverse_pass_4, 4,);
inverse_pass_asm!(inverse_pass_16, 16,);
inverse_pass_asm!(inverse_pass_64, 64,);
inverse_pass_asm!(inverse_pass_256, 256,);

/// The forward transform's first pass at quarter 256 (`N = 1024`, one group), the untwiddled operands of
/// its first stage reduced first (signed Barrett), as `small_ntt::forward_first`.
///
/// # Safety
/// `args` as [`forward_first`] fills it.
#[unsafe(naked)]
unsafe extern "C" fn forward_first_256(args: *const Args) {
    core::arch::naked_asm!(
        "push {{r4-r11, lr}}",
        "ldr r1, [r0, #16]",
        "ldr r6, [r1, #4]",
        "ldrd r4, r5, [r1, #8]",
        "ldr r1, [r0, #4]",
        "ldr r2, [r0, #20]",
        "ldr r3, [r0, #24]",
        "ldr lr, [r0, #28]",
        "ldr r0, [r0]",
        "2:",
        "ldr r7, [r0]",
        "ldr r8, [r0, #1024]",
        "ldr r9, [r0, #2048]",
        "ldr r10, [r0, #3072]",
        "smmul r11, r7, lr",
        "mls r7, r11, r2, r7",
        "smmul r11, r8, lr",
        "mls r8, r11, r2, r8",
        ct!("r7", "r9", "r6"),
        ct!("r8", "r10", "r6"),
        ct!("r7", "r8", "r4"),
        ct!("r9", "r10", "r5"),
        "str r8, [r0, #1024]",
        "str r9, [r0, #2048]",
        "str r10, [r0, #3072]",
        "str r7, [r0], #4",
        "cmp r0, r1",
        "bne 2b",
        "pop {{r4-r11, pc}}",
    )
}

/// The forward transform's last pass (quarter 1: groups of four consecutive values, one `LDM`, one `STM`).
///
/// # Safety
/// `args` as [`forward_pass_last`] fills it.
#[unsafe(naked)]
unsafe extern "C" fn forward_last(args: *const Args) {
    core::arch::naked_asm!(
        "push {{r4-r11, lr}}",
        "ldr r1, [r0, #4]",
        "ldr r2, [r0, #20]",
        "ldr r3, [r0, #24]",
        "ldr r5, [r0, #8]",
        "ldr r6, [r0, #32]",
        "ldr r0, [r0]",
        "2:",
        "ldm r0, {{r7, r8, r9, r10}}",
        "ldr r4, [r5], #4",
        ct!("r7", "r9", "r4"),
        ct!("r8", "r10", "r4"),
        "ldr r4, [r6], #4",
        ct!("r7", "r8", "r4"),
        "ldr r4, [r6], #4",
        ct!("r9", "r10", "r4"),
        "stm r0!, {{r7, r8, r9, r10}}",
        "cmp r0, r1",
        "bne 2b",
        "pop {{r4-r11, pc}}",
    )
}

/// The inverse transform's first pass (`t = 1`: groups of four consecutive values, one `LDM`, one `STM`),
/// without reduction.
///
/// # Safety
/// `args` as [`inverse_pass_first`] fills it.
#[unsafe(naked)]
unsafe extern "C" fn inverse_first(args: *const Args) {
    core::arch::naked_asm!(
        "push {{r4-r11, lr}}",
        "ldr r1, [r0, #4]",
        "ldr r2, [r0, #20]",
        "ldr r3, [r0, #24]",
        "ldr lr, [r0, #8]",
        "ldr r6, [r0, #32]",
        "ldr r0, [r0]",
        // Group g: (w1b, w1a) = tw[2h - 2 - 2g..], then w2 = tw[h - 1 - g] (both pointers move down).
        "2:",
        "ldrd r4, r5, [r6, #-8]!",
        "ldm r0, {{r7, r9, r10, r11}}",
        gs!("r7", "r9", "r5", "r12", "r8"),
        gs!("r10", "r11", "r4", "r12", "r9"),
        "ldr r4, [lr, #-4]!",
        gs!("r7", "r10", "r4", "r12", "r11"),
        gs!("r8", "r9", "r4", "r10", "r12"),
        "stm r0!, {{r7, r8, r11, r12}}",
        "cmp r0, r1",
        "bne 2b",
        "pop {{r4-r11, pc}}",
    )
}

/// `a *= b` pointwise, four values of each per step (`LDM`, `STM`): `small_crt::pointwise`.
///
/// # Safety
/// As [`pointwise`] calls it: `a` and `b` of the same length, a non-zero multiple of 4 words, ending at
/// `end`; `consts` is `[p, -p^-1 mod 2^32]`.
#[unsafe(naked)]
unsafe extern "C" fn pointwise_4(a: *mut u32, b: *const u32, end: *const u32, consts: *const [u32; 2]) {
    core::arch::naked_asm!(
        "push {{r4-r11, lr}}",
        "mov r12, r2",
        "ldrd r2, r3, [r3]",
        "2:",
        "ldm r0, {{r4, r5, r6, r7}}",
        "ldm r1!, {{r8, r9, r10, r11}}",
        "smull lr, r8, r4, r8",
        "mul r4, lr, r3",
        "smlal lr, r8, r4, r2",
        "smull lr, r9, r5, r9",
        "mul r5, lr, r3",
        "smlal lr, r9, r5, r2",
        "smull lr, r10, r6, r10",
        "mul r6, lr, r3",
        "smlal lr, r10, r6, r2",
        "smull lr, r11, r7, r11",
        "mul r7, lr, r3",
        "smlal lr, r11, r7, r2",
        "stm r0!, {{r8, r9, r10, r11}}",
        "cmp r0, r12",
        "bne 2b",
        "pop {{r4-r11, pc}}",
    )
}

/// `small_crt::pointwise`: `a *= b` (signed Montgomery products).
pub(crate) fn pointwise(a: &mut [u32], b: &[u32], q: Prime) {
    assert!(a.len() == b.len() && !a.is_empty() && a.len().is_multiple_of(4));
    let range = a.as_mut_ptr_range();
    let consts = [q.p, q.neg_inv];
    // SAFETY: the function reads and writes `a` four words at a time from `range.start` to `range.end` and
    // reads as many words of `b` (the same length, asserted with the length a non-zero multiple of 4); `a`
    // is borrowed mutably, `b` and `consts` shared for the call. It saves and restores every callee-saved
    // register (r4-r11, lr) and the stack pointer.
    unsafe { pointwise_4(range.start, b.as_ptr(), range.end, &consts) }
}

/// The constants of [`crt_add_u32_asm`], read at fixed offsets.
#[repr(C)]
struct CrtArgs {
    /// Offset 0: one past the last residue of the first prime.
    end: *const u32,
    /// Offsets 4 to 28: `own_0`, `-p_0^-1`, `p_0`, `own_1`, `p_1 - cross` (`-cross mod p_1`), `-p_1^-1`, `p_1`.
    consts: [u32; 7],
}

/// `out += X mod 2^32`, Garner's two digits as `small_crt::crt` computes them, one coefficient per step.
///
/// # Safety
/// As [`crt_add_u32`] calls it: `first`, `second` and `out` of the same non-zero length, `args.end` one past
/// `first`'s last word.
#[unsafe(naked)]
unsafe extern "C" fn crt_add_u32_asm(first: *const u32, second: *const u32, out: *mut u32, args: *const CrtArgs) {
    core::arch::naked_asm!(
        "push {{r4-r11, lr}}",
        "ldr r4, [r3]",
        "push {{r4}}",
        "ldrd r4, r5, [r3, #8]",
        "ldrd r6, r7, [r3, #16]",
        "ldrd r8, r9, [r3, #24]",
        "ldr r3, [r3, #4]",
        "2:",
        "ldr r10, [r0], #4",
        "ldr r11, [r1], #4",
        // d0 = mont(x0, own0), in lr.
        "smull r12, lr, r10, r3",
        "mul r10, r12, r4",
        "smlal r12, lr, r10, r5",
        // d1 = mont_reduce(x1 own1 + d0 (p1 - cross)), in r12.
        "smull r10, r12, r11, r6",
        "smlal r10, r12, lr, r7",
        "mul r11, r10, r8",
        "smlal r10, r12, r11, r9",
        // out += d0 + d1 p0.
        "mla r12, r12, r5, lr",
        "ldr r10, [r2]",
        "add r10, r10, r12",
        "str r10, [r2], #4",
        "ldr r11, [sp]",
        "cmp r0, r11",
        "bne 2b",
        "add sp, sp, #4",
        "pop {{r4-r11, pc}}",
    )
}

/// `small_crt::crt` for a `u32` output combined by a wrapping addition.
pub(crate) fn crt_add_u32(
    first: &[u32],
    second: &[u32],
    out: &mut [u32],
    [own0, own1, cross]: [u32; 3],
    [q0, q1]: [Prime; 2],
) {
    assert!(first.len() == out.len() && second.len() == out.len() && !out.is_empty());
    let args = CrtArgs {
        end: first.as_ptr_range().end,
        consts: [own0, q0.neg_inv, q0.p, own1, q1.p - cross, q1.neg_inv, q1.p],
    };
    // SAFETY: the function reads `first` word by word to `args.end` and as many words of `second`, and
    // reads and writes as many of `out` (the three lengths equal and non-zero, asserted); `out` is borrowed
    // mutably, the rest shared for the call. It saves and restores every callee-saved register (r4-r11, lr)
    // and the stack pointer.
    unsafe { crt_add_u32_asm(first.as_ptr(), second.as_ptr(), out.as_mut_ptr(), &args) }
}

/// The operands of a pass over `a` with table `tw`.
fn args(a: &mut [u32], tw: &[Twiddle], q: Prime) -> Args {
    let range = a.as_mut_ptr_range();
    Args {
        data: range.start,
        end: range.end,
        t1: tw.as_ptr(),
        t_end: tw.as_ptr(),
        base: tw.as_ptr(),
        p: q.p,
        neg_inv: q.neg_inv,
        barrett: q.barrett,
        t2: tw.as_ptr(),
    }
}

/// `small_ntt::forward_first` at `N = 1024` (quarter 256).
pub(crate) fn forward_first(a: &mut [u32], tw: &[Twiddle], q: Prime) {
    assert!(a.len() == 1024 && tw.len() >= 4);
    let mut args = args(a, tw, q);
    args.end = a[256..].as_ptr();
    // SAFETY: the function reads `tw[1..4]` and reads and writes `a[0..1024]` (rows of four at offsets 0,
    // 256, 512, 768 words, for the 256 positions from `data` to `end`); the lengths are asserted
    // above, `a` is borrowed mutably and `tw` shared for the call. It saves and restores every callee-saved
    // register (r4-r11, lr) and leaves the stack as it found it.
    unsafe { forward_first_256(&args) }
}

/// `small_ntt::forward_pass_body` with quarter `Q` (4, 16, 64 or 256), stages `m` and `2m`.
pub(crate) fn forward_pass<const Q: usize>(a: &mut [u32], tw: &[Twiddle], m: usize, q: Prime) {
    assert!(m >= 1 && a.len() == 4 * Q * m && tw.len() >= 4 * m);
    let mut args = args(a, tw, q);
    args.t1 = tw[m..].as_ptr();
    args.t_end = tw[2 * m..].as_ptr();
    let pass = match Q {
        4 => forward_pass_4,
        16 => forward_pass_16,
        64 => forward_pass_64,
        256 => forward_pass_256,
        _ => unreachable!("no assembly pass for this quarter"),
    };
    // SAFETY: for each of the `m` groups `i` the function reads `tw[m + i]`, `tw[2m + 2i]`, `tw[2m + 2i + 1]`
    // (below `4m <= tw.len()`) and reads and writes the group's `4Q` values, `a[4Qi..4Q(i + 1)]`
    // (`a.len() = 4Qm`); the lengths are asserted above, `a` is borrowed mutably and `tw` shared for the
    // call. It saves and restores every callee-saved register (r4-r11, lr) and the stack pointer.
    unsafe { pass(&args) }
}

/// `small_ntt::forward_pass_last` (quarter 1), stages `m` and `2m`.
pub(crate) fn forward_pass_last(a: &mut [u32], tw: &[Twiddle], m: usize, q: Prime) {
    assert!(m >= 1 && a.len() == 4 * m && tw.len() >= 4 * m);
    let mut args = args(a, tw, q);
    args.t1 = tw[m..].as_ptr();
    args.t2 = tw[2 * m..].as_ptr();
    // SAFETY: for each of the `m` groups `i` the function reads `tw[m + i]`, `tw[2m + 2i]`, `tw[2m + 2i + 1]`
    // (below `4m <= tw.len()`) and reads and writes `a[4i..4i + 4]` (`a.len() = 4m`); the lengths are
    // asserted above, `a` is borrowed mutably and `tw` shared for the call. It saves and restores every
    // callee-saved register (r4-r11, lr) and the stack pointer.
    unsafe { forward_last(&args) }
}

/// `small_ntt::inverse_pass_body` with `t = T` (4, 16, 64 or 256), stages `h` and `h/2`, the second
/// stage's sums reduced when `REDUCE` (`T = 4` only).
pub(crate) fn inverse_pass<const T: usize, const REDUCE: bool>(a: &mut [u32], tw: &[Twiddle], h: usize, q: Prime) {
    assert!(h >= 2 && a.len() == 2 * T * h && tw.len() >= 2 * h);
    let mut args = args(a, tw, q);
    args.t1 = tw[h..].as_ptr();
    args.t_end = tw[h / 2..].as_ptr();
    let pass = match (T, REDUCE) {
        (4, true) => inverse_pass_4_reduce,
        (4, false) => inverse_pass_4,
        (16, false) => inverse_pass_16,
        (64, false) => inverse_pass_64,
        (256, false) => inverse_pass_256,
        _ => unreachable!("no assembly pass for this t"),
    };
    // SAFETY: for each of the `h/2` groups `g` the function reads `tw[h - 1 - g]`, `tw[2h - 2 - 2g]`,
    // `tw[2h - 1 - 2g]` (from `h/2` to below `2h <= tw.len()`) and reads and writes the group's `4T` values,
    // `a[4Tg..4T(g + 1)]` (`a.len() = 2Th`); the lengths are asserted above, `a` is borrowed mutably and `tw`
    // shared for the call. It saves and restores every callee-saved register (r4-r11, lr) and the stack
    // pointer.
    unsafe { pass(&args) }
}

/// `small_ntt::inverse_pass_first` (`t = 1`, no reduction), stages `h` and `h/2`.
pub(crate) fn inverse_pass_first(a: &mut [u32], tw: &[Twiddle], h: usize, q: Prime) {
    assert!(h >= 2 && a.len() == 2 * h && tw.len() >= 2 * h);
    let mut args = args(a, tw, q);
    args.t1 = tw[h..].as_ptr();
    args.t2 = tw[2 * h..].as_ptr();
    // SAFETY: for each of the `h/2` groups `g` the function reads `tw[2h - 2 - 2g]`, `tw[2h - 1 - 2g]` and
    // `tw[h - 1 - g]` (from `h/2` to below `2h <= tw.len()`) and reads and writes `a[4g..4g + 4]`
    // (`a.len() = 2h`); the lengths are asserted above, `a` is borrowed mutably and `tw` shared for the
    // call. It saves and restores every callee-saved register (r4-r11, lr) and the stack pointer.
    unsafe { inverse_first(&args) }
}
