//! A POSIX thread whose stack is a buffer the test owns, painted with a pattern before the thread starts:
//! after `pthread_join` the buffer can be scanned for how deep the thread went and for what it left
//! behind. glibc's `PTHREAD_STACK_MIN` differs between targets (16 KiB on x86_64, 128 KiB on aarch64), so a
//! thread-size limit cannot measure stack use; a painted stack of our own can, on any target.
#![allow(dead_code, clippy::unwrap_used)]
#![cfg(target_os = "linux")]

/// The painted thread stack.
pub const THREAD_STACK_BYTES: usize = 256 * 1024;
/// The paint.
pub const PAINT: u8 = 0xA5;

struct Job {
    work: Box<dyn FnMut() + Send>,
    /// The address of a local in the thread's first frame: the workload's stack starts below it.
    start: usize,
}

#[allow(unsafe_code)]
extern "C" fn run_job(arg: *mut libc::c_void) -> *mut libc::c_void {
    let marker = 0u8;
    // SAFETY: `arg` is the `&mut Job` `measure` passed to `pthread_create`, alive until `pthread_join`
    // returns, and no other thread touches it meanwhile.
    let job = unsafe { &mut *arg.cast::<Job>() };
    job.start = std::ptr::addr_of!(marker) as usize;
    (job.work)();
    std::hint::black_box(&marker);
    std::ptr::null_mut()
}

/// Runs `work` on a thread whose stack is a painted buffer of ours; returns the bytes of stack it used below
/// the thread's first frame.
#[allow(unsafe_code)]
pub fn run_painted(work: impl FnMut() + Send + 'static) -> (Vec<u8>, usize) {
    let mut stack = vec![PAINT; THREAD_STACK_BYTES];
    let mut job = Job {
        work: Box::new(work),
        start: 0,
    };
    // SAFETY: plain POSIX calls. The attribute object is initialized before use and destroyed after. The
    // stack buffer outlives the thread (joined below before `stack` is read or dropped), is not otherwise
    // accessed while the thread runs, and is 16-byte aligned (a Vec<u8> of this size comes from mmap or
    // malloc, both 16-aligned; checked). `job` outlives the thread too.
    unsafe {
        assert_eq!(stack.as_ptr() as usize % 16, 0);
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        assert_eq!(libc::pthread_attr_init(&mut attr), 0);
        assert_eq!(
            libc::pthread_attr_setstack(&mut attr, stack.as_mut_ptr().cast(), THREAD_STACK_BYTES),
            0
        );
        let mut thread: libc::pthread_t = std::mem::zeroed();
        let arg = std::ptr::addr_of_mut!(job).cast::<libc::c_void>();
        assert_eq!(libc::pthread_create(&mut thread, &attr, run_job, arg), 0);
        assert_eq!(libc::pthread_join(thread, std::ptr::null_mut()), 0);
        assert_eq!(libc::pthread_attr_destroy(&mut attr), 0);
    }
    let base = stack.as_ptr() as usize;
    assert!(job.start > base && job.start < base + THREAD_STACK_BYTES);
    let start = job.start - base;
    (stack, start)
}

/// Runs `work` on a painted thread; returns the bytes of stack it used below the thread's first frame.
pub fn measure(work: impl FnMut() + Send + 'static) -> usize {
    let (stack, start) = run_painted(work);
    let deepest = stack.iter().position(|&b| b != PAINT).unwrap();
    assert!(deepest > 0, "the workload reached the end of the painted stack");
    start - deepest
}

/// Whether this build's stack figures are the kind the budgets were measured on; `Err` says why not.
///
/// Release (opt-level 3) always qualifies: the budgets were measured with the workspace's `[profile.release]`
/// (thin LTO, one codegen unit) and with cargo's defaults (no LTO, 16 units), as a build of the unpacked
/// package gets. The test profile qualifies only with the workspace's `[profile.dev]` opt-level 2: cargo's
/// default there is opt-level 0, whose unoptimized frames say nothing about what a device ships (several
/// times deeper), so a budget test built so skips its budgets (and says so through [`skip_note`]).
///
/// Feature `std` never qualifies: after every call that handles the CSPRNG it scrubs the 64 KiB of stack
/// below (`std_io::scrub`), which erases the call's own depth and paints 64 KiB of zeros that the painting
/// cannot tell from use. The budgets are the firmware's build (no `std`; the same code otherwise), which
/// CI runs per instance (`scripts/test-all.sh`, the backend step).
pub fn budgets_apply() -> Result<(), String> {
    if cfg!(feature = "std") {
        return Err(
            "feature std scrubs 64 KiB of stack after each secret call (std_io::scrub), which the \
                    painting cannot tell from use; the budgets hold without it: cargo test -p tfhe-sbc-device \
                    --features hazmat,getrandom,test-utils --test stack --test compact_list"
                .to_owned(),
        );
    }
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    if let Ok(level) = std::env::var("CARGO_PROFILE_DEV_OPT_LEVEL") {
        return if level == "2" {
            Ok(())
        } else {
            Err(format!("CARGO_PROFILE_DEV_OPT_LEVEL={level}, not the workspace's 2"))
        };
    }
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let manifest = std::fs::read_to_string(workspace).unwrap_or_default();
    let dev = manifest
        .split("\n[")
        .find(|section| section.starts_with("profile.dev]"))
        .unwrap_or_default();
    if dev.lines().any(|line| line.replace(' ', "") == "opt-level=2") {
        Ok(())
    } else {
        Err(format!(
            "built outside the workspace ({workspace} has no [profile.dev] opt-level = 2), so the test profile \
             is cargo's opt-level 0; run `cargo test --release` or set CARGO_PROFILE_DEV_OPT_LEVEL=2"
        ))
    }
}

/// Says, on the terminal (straight to stderr: the test harness captures only `print!`), that `what`'s
/// budget was not checked and why: a skipped budget never passes silently.
pub fn skip_note(what: &str, reason: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n{what}: stack budget NOT CHECKED: {reason}");
}
