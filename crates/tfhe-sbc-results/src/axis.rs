//! A plot's axes chosen from its data: linear, or logarithmic only where the data span more than
//! [`LOG_SPAN`] times; the range of the data with a margin; ticks at every measured x (plaintext sizes) or at
//! round values; tick labels in the unit a reader would choose for their magnitude (µs, ms, s; B, KiB, MiB).
//!
//! Plotting happens in "plot space": a linear axis holds the values divided by its unit (ms on an axis in
//! ms), a log axis holds their base-10 logarithms, so that every chart has plain `f64` coordinates and the
//! ticks are exactly the ones chosen here.

/// Data spanning more than this ratio (max / min) get a log axis; less, a linear one from zero.
pub const LOG_SPAN: f64 = 20.0;

/// What an axis measures, in its base unit: the values handed to a chart are in this unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Seconds (shown as ns, µs, ms or s).
    Seconds,
    /// Bytes (shown as B, KiB, MiB or GiB).
    Bytes,
    /// Events per second (frames/s), shown as a plain number.
    PerSecond,
    /// Plaintext bits, shown as a plain number.
    Bits,
}

impl Unit {
    /// The unit to show `v` (in the base unit) in: (the base values per shown unit, its name), chosen so that
    /// the shown number is at least 1 and below 1000 (1024 for bytes) where a unit allows.
    pub fn scale(self, v: f64) -> (f64, &'static str) {
        let a = v.abs();
        match self {
            Unit::Seconds => {
                if a >= 1.0 {
                    (1.0, "s")
                } else if a >= 1e-3 {
                    (1e-3, "ms")
                } else if a >= 1e-6 {
                    (1e-6, "µs")
                } else {
                    (1e-9, "ns")
                }
            }
            Unit::Bytes => {
                const K: f64 = 1024.0;
                if a >= K * K * K {
                    (K * K * K, "GiB")
                } else if a >= K * K {
                    (K * K, "MiB")
                } else if a >= K {
                    (K, "KiB")
                } else {
                    (1.0, "B")
                }
            }
            Unit::PerSecond => (1.0, "1/s"),
            Unit::Bits => (1.0, "bits"),
        }
    }

    /// Whether a log axis' tick labels carry their own unit (a log axis of seconds spans µs to s), rather
    /// than the axis label.
    fn unit_per_tick(self) -> bool {
        match self {
            Unit::Seconds | Unit::Bytes => true,
            Unit::PerSecond | Unit::Bits => false,
        }
    }

    /// `v` with three significant digits in its own unit: "35.9 µs", "66.1 KiB", "4730 1/s".
    pub fn text(self, v: f64) -> String {
        if !v.is_finite() {
            return "-".into();
        }
        let (per, name) = self.scale(v);
        format!("{} {name}", significant(v / per, 3))
    }
}

/// `v` with `digits` significant digits, no exponent, trailing zeros after the point kept only up to the
/// significance (`significant(35.91, 3)` is "35.9", `significant(4730.2, 3)` is "4730").
pub fn significant(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i64;
    let decimals = (digits as i64 - 1 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A round tick value without trailing zeros: "2.5", "10", "0.25".
fn plain(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// One axis: log or linear, its range and ticks in plot space, its label.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Logarithmic (plot space holds log10 of the values).
    pub log: bool,
    /// The range, in plot space.
    pub range: (f64, f64),
    /// The ticks, in plot space.
    pub ticks: Vec<f64>,
    /// The axis' label: the quantity, with its unit unless the ticks carry it.
    pub label: String,
    unit: Unit,
    /// A linear axis' shown unit: base values per shown unit.
    per: f64,
}

/// The least and the greatest of the finite values (positive ones only when `positive`).
fn extent(values: &[f64], positive: bool) -> Option<(f64, f64)> {
    let mut it = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && (!positive || *v > 0.0));
    let first = it.next()?;
    Some(it.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v))))
}

/// A round step for about `count` intervals over `span`: 1, 2, 2.5 or 5 times a power of ten.
fn round_step(span: f64, count: f64) -> f64 {
    let raw = (span / count).max(f64::MIN_POSITIVE);
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * power)
}

impl Axis {
    /// A value axis for `values` (in `unit`'s base unit) of `quantity` ("encryption time"): log when they
    /// span more than [`LOG_SPAN`] times, else linear from zero, its unit chosen from the greatest value.
    pub fn values(quantity: &str, unit: Unit, values: &[f64]) -> Axis {
        let Some((lo, hi)) = extent(values, true) else {
            return Self::linear(quantity, unit, 1.0);
        };
        if hi / lo > LOG_SPAN {
            let (l0, l1) = (lo.log10(), hi.log10());
            let margin = (0.05 * (l1 - l0)).max(0.06);
            let range = (l0 - margin, l1 + margin);
            let ticks = log_ticks(unit, range);
            let label = if unit.unit_per_tick() {
                format!("{quantity} (log scale)")
            } else {
                format!("{quantity} [{}] (log scale)", unit.scale(hi).1)
            };
            Axis {
                log: true,
                range,
                ticks,
                label,
                unit,
                per: 1.0,
            }
        } else {
            Self::linear(quantity, unit, hi)
        }
    }

    /// A linear axis from zero to a little over `hi`, in the unit of `hi`.
    fn linear(quantity: &str, unit: Unit, hi: f64) -> Axis {
        let (per, name) = unit.scale(hi);
        let top = hi / per;
        let step = round_step(top, 6.0);
        let count = (top / step).floor() as usize;
        let ticks = (0..=count).map(|i| i as f64 * step).collect();
        Axis {
            log: false,
            range: (0.0, top * 1.12),
            ticks,
            label: format!("{quantity} [{name}]"),
            unit,
            per,
        }
    }

    /// An axis of measured x values (plaintext sizes) with a tick at every one of them: log when they span
    /// more than [`LOG_SPAN`] times (sizes that double are evenly spaced), else linear; a margin each side.
    pub fn measured(quantity: &str, unit: Unit, xs: &[f64]) -> Axis {
        let mut at: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
        at.sort_by(f64::total_cmp);
        at.dedup();
        let (lo, hi) = match (at.first(), at.last()) {
            (Some(lo), Some(hi)) => (*lo, *hi),
            _ => (1.0, 2.0),
        };
        let log = hi / lo > LOG_SPAN;
        let (per, name) = unit.scale(hi);
        let map = |v: f64| if log { v.log10() } else { v / per };
        let (p0, p1) = (map(lo), map(hi));
        let margin = if p1 > p0 {
            0.05 * (p1 - p0)
        } else {
            0.5 * p0.abs().max(1.0)
        };
        Axis {
            log,
            range: (p0 - margin, p1 + margin),
            ticks: at.iter().map(|v| map(*v)).collect(),
            label: if log {
                format!("{quantity} [{name}] (log scale)")
            } else {
                format!("{quantity} [{name}]")
            },
            unit,
            per: if log { 1.0 } else { per },
        }
    }

    /// `v` (in the base unit) in plot space; `None` where the axis cannot show it (not finite; not
    /// positive on a log axis).
    pub fn to_plot(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            None
        } else if self.log {
            Some(v.log10())
        } else {
            Some(v / self.per)
        }
    }

    /// Where bars start: zero on a linear axis, the axis' start on a log one.
    pub fn base(&self) -> f64 {
        if self.log { self.range.0 } else { 0.0 }
    }

    /// The label of the tick at `p` (plot space).
    pub fn tick_label(&self, p: f64) -> String {
        if !self.log {
            return plain(p);
        }
        let v = 10f64.powf(p);
        if self.unit.unit_per_tick() {
            let (per, name) = self.unit.scale(v * 1.0000001);
            format!("{} {name}", plain(v / per))
        } else {
            plain(v)
        }
    }
}

/// A log axis' ticks over `range` (log10 of base values): 1, 2 and 5 times the powers of ten (seconds,
/// rates) or the powers of 4 (bytes: 1, 4, 16, 64, 256 B, 1 KiB, ...), thinned to at most 9, and never fewer
/// than two.
fn log_ticks(unit: Unit, range: (f64, f64)) -> Vec<f64> {
    let candidates = |mantissas: &[f64], base: f64| -> Vec<f64> {
        let (k0, k1) = (
            (range.0 / base.log10()).floor() as i64 - 1,
            (range.1 / base.log10()).ceil() as i64 + 1,
        );
        (k0..=k1)
            .flat_map(|k| mantissas.iter().map(move |m| (m * base.powi(k as i32)).log10()))
            .filter(|p| *p >= range.0 - 1e-9 && *p <= range.1 + 1e-9)
            .collect()
    };
    let families: Vec<Vec<f64>> = match unit {
        Unit::Bytes => vec![
            candidates(&[1.0], 4.0),
            candidates(&[1.0], 16.0),
            candidates(&[1.0], 1024.0),
        ],
        Unit::Seconds | Unit::PerSecond | Unit::Bits => vec![
            candidates(&[1.0, 2.0, 5.0], 10.0),
            candidates(&[1.0], 10.0),
            candidates(&[1.0], 100.0),
        ],
    };
    let mut chosen = families.iter().find(|t| t.len() <= 9).cloned().unwrap_or_default();
    if chosen.len() < 2 {
        chosen = vec![range.0 + 0.1 * (range.1 - range.0), range.1 - 0.1 * (range.1 - range.0)];
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(axis: &Axis) -> Vec<String> {
        axis.ticks.iter().map(|t| axis.tick_label(*t)).collect()
    }

    /// Table 1's times (11 µs to 62 s, the paper's Pi figures included) on a log axis that ends within a
    /// margin of the data, labelled µs/ms/s, not "10.0k ms" and not up to 100 M ms.
    #[test]
    fn table1_times_fit_their_axis() {
        let seconds = [11.37e-6, 186.39e-6, 3.204e-3, 102.3e-3, 1922.6e-3, 61.5875];
        let axis = Axis::values("encryption time", Unit::Seconds, &seconds);
        assert!(axis.log);
        let (lo, hi) = (10f64.powf(axis.range.0), 10f64.powf(axis.range.1));
        assert!(lo < 11.37e-6 && lo > 11.37e-6 / 3.0, "{lo}");
        assert!(hi > 61.5875 && hi < 61.5875 * 3.0, "{hi}");
        let text = labels(&axis);
        assert_eq!(
            text,
            ["10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s"]
        );
        assert_eq!(axis.label, "encryption time (log scale)");
    }

    /// Every measured plaintext size has a tick, 256 bits included, and the sizes that double are on a
    /// log axis.
    #[test]
    fn every_measured_size_has_a_tick() {
        let axis = Axis::measured("plaintext size", Unit::Bits, &[256.0, 1024.0, 4096.0, 8192.0, 1024.0]);
        assert!(axis.log);
        assert_eq!(labels(&axis), ["256", "1024", "4096", "8192"]);
        assert!(axis.range.0 < 256f64.log10() && axis.range.1 > 8192f64.log10());
        let near = Axis::measured("plaintext size", Unit::Bits, &[4096.0, 8192.0]);
        assert!(!near.log);
        assert_eq!(labels(&near), ["4096", "8192"]);
    }

    /// Data within a decade (Table 6's CSPRNG: 36 to 174 µs) get a linear axis from zero in µs, with round
    /// ticks that cover the data.
    #[test]
    fn narrow_data_get_a_linear_axis_in_their_unit() {
        let axis = Axis::values("time per call", Unit::Seconds, &[35.9e-6, 46.1e-6, 144e-6, 174e-6]);
        assert!(!axis.log);
        assert_eq!(axis.label, "time per call [µs]");
        assert_eq!(axis.range.0, 0.0);
        assert!(axis.range.1 > 174.0 && axis.range.1 < 174.0 * 1.3);
        assert_eq!(labels(&axis), ["0", "50", "100", "150"]);
        assert!(axis.to_plot(144e-6).is_some_and(|p| (p - 144.0).abs() < 1e-9));
        // The quick run's CSPRNG bars (up to 263 µs): about six intervals, not three.
        let wider = Axis::values("time per call", Unit::Seconds, &[36.4e-6, 263e-6]);
        assert_eq!(labels(&wider), ["0", "50", "100", "150", "200", "250"]);
    }

    /// Bytes on a log axis: ticks at powers of 4 in B/KiB/MiB.
    #[test]
    fn bytes_ticks_are_powers_of_four() {
        let axis = Axis::values("bytes per value", Unit::Bytes, &[32.2, 64.1, 80.4, 66.1 * 1024.0]);
        assert!(axis.log);
        assert_eq!(labels(&axis), ["64 B", "256 B", "1 KiB", "4 KiB", "16 KiB", "64 KiB"]);
        let heap = Axis::values("peak heap", Unit::Bytes, &[5.0 * 1048576.0, 2048.0 * 1048576.0]);
        assert_eq!(labels(&heap), ["4 MiB", "16 MiB", "64 MiB", "256 MiB", "1 GiB"]);
    }

    #[test]
    fn units_follow_the_magnitude() {
        assert_eq!(Unit::Seconds.text(35.91e-6), "35.9 µs");
        assert_eq!(Unit::Seconds.text(0.0102299), "10.2 ms");
        assert_eq!(Unit::Seconds.text(61.5875), "61.6 s");
        assert_eq!(Unit::Bytes.text(67686.4), "66.1 KiB");
        assert_eq!(Unit::Bytes.text(32.2), "32.2 B");
        assert_eq!(Unit::PerSecond.text(4730.2), "4730 1/s");
        assert_eq!(significant(545.4, 3), "545");
        assert_eq!(plain(2.5), "2.5");
        assert_eq!(plain(100.0), "100");
    }

    #[test]
    fn no_data_still_gives_an_axis() {
        let axis = Axis::values("time", Unit::Seconds, &[f64::NAN]);
        assert!(!axis.log && axis.range.1 > axis.range.0);
        assert_eq!(axis.to_plot(f64::NAN), None);
        let log = Axis::values("time", Unit::Seconds, &[1e-6, 1.0]);
        assert_eq!(log.to_plot(0.0), None);
    }
}
