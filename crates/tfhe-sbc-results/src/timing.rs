//! Wall-clock medians with a time budget, and the machine's stamp (date, commit, CPU, cores, load).

use crate::provenance::Tree;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long to measure one case.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Samples taken at least (after one warm-up call).
    pub min_samples: usize,
    /// Samples taken at most.
    pub max_samples: usize,
    /// Stop after this much time once `min_samples` are in.
    pub time: Duration,
}

impl Budget {
    /// The budget of a quick (`--quick`) or a full run.
    pub fn new(quick: bool) -> Self {
        if quick {
            Self {
                min_samples: 3,
                max_samples: 15,
                time: Duration::from_millis(60),
            }
        } else {
            Self {
                min_samples: 7,
                max_samples: 101,
                time: Duration::from_millis(1500),
            }
        }
    }

    /// The same with at most `samples` samples (slow cases).
    pub fn at_most(self, samples: usize) -> Self {
        Self {
            min_samples: self.min_samples.min(samples),
            max_samples: samples.max(1),
            ..self
        }
    }
}

/// The median seconds of one call of `f`. Calls shorter than 1 ms are repeated within a sample, so that the
/// clock's resolution does not show.
pub fn median_seconds<R>(budget: Budget, mut f: impl FnMut() -> R) -> f64 {
    let t = Instant::now();
    black_box(f());
    let first = t.elapsed().as_secs_f64().max(1e-9);
    let inner = ((1e-3 / first).ceil() as usize).clamp(1, 100_000);
    let mut samples = Vec::with_capacity(budget.max_samples);
    let start = Instant::now();
    while samples.len() < budget.max_samples && (samples.len() < budget.min_samples || start.elapsed() < budget.time) {
        let t = Instant::now();
        for _ in 0..inner {
            black_box(f());
        }
        samples.push(t.elapsed().as_secs_f64() / inner as f64);
    }
    median(&mut samples)
}

/// The median of `values` (NaN when empty).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Where and when a run was made: printed on the page and in every plot.
#[derive(Clone, Debug)]
pub struct Stamp {
    /// UTC date and time.
    pub date: String,
    /// The source tree: a clean commit, or why the page is not reproducible.
    pub tree: Tree,
    /// The CPU model from /proc/cpuinfo.
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// The 1, 5 and 15 minute load averages at the start of the run.
    pub load: String,
}

impl Stamp {
    /// Reads this machine's stamp now, for a run from `tree`.
    pub fn now(tree: Tree) -> Self {
        let date = std::process::Command::new("date")
            .args(["-u", "+%Y-%m-%d %H:%M UTC"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map_or_else(
                || "unknown date".into(),
                |o| String::from_utf8_lossy(&o.stdout).trim().to_string(),
            );
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| "unknown".into());
        Self {
            date,
            tree,
            cpu,
            cores,
            load,
        }
    }

    /// One line: date, commit (or why not reproducible), CPU, cores, load.
    pub fn line(&self) -> String {
        format!(
            "{} · {} · {} · {} cores · load {}",
            self.date,
            self.tree.stamp(),
            self.cpu,
            self.cores,
            self.load
        )
    }
}

/// Seconds in a readable unit.
pub fn human(seconds: f64) -> String {
    if !seconds.is_finite() {
        "-".into()
    } else if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else if seconds >= 1e-6 {
        format!("{:.2} µs", seconds * 1e6)
    } else {
        format!("{:.1} ns", seconds * 1e9)
    }
}

/// Bytes in KiB with one decimal (or bytes below 1 KiB).
pub fn kib(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}
