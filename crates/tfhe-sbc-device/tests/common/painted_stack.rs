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
