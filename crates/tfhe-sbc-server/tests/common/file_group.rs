//! One group of tests at a time: tests that enter the same group may run together, a test of another group
//! waits until every test of the running group has left. The service tests (`tests/service/`) were one
//! binary per module, which libtest ran one after another; their group is their module, so they keep that
//! schedule inside one binary.

use std::sync::{Condvar, Mutex, MutexGuard};

struct Running {
    group: Option<&'static str>,
    tests: usize,
}

static RUNNING: Mutex<Running> = Mutex::new(Running { group: None, tests: 0 });
static LEFT: Condvar = Condvar::new();

fn running() -> MutexGuard<'static, Running> {
    // A test that panicked while holding the lock (it never does: no code between lock and unlock panics)
    // leaves the counts right: go on.
    RUNNING.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Held by a test while it runs (dropped on return and on panic).
#[must_use = "the test leaves its group when this is dropped"]
pub struct Entered;

/// Waits until no test of another group runs, then enters `group` (`module_path!()` at the call).
pub fn enter(group: &'static str) -> Entered {
    let mut state = running();
    while state.tests > 0 && state.group != Some(group) {
        state = LEFT.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
    }
    state.group = Some(group);
    state.tests += 1;
    Entered
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut state = running();
        state.tests -= 1;
        if state.tests == 0 {
            state.group = None;
            LEFT.notify_all();
        }
    }
}
