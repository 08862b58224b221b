//! How the commands describe what they did: file sizes, parameter sets, the key generation spinner.

use crate::{KeySetParameters, parameters_name};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_core::parameters::MESSAGE_2_CARRY_2_TUNIFORM_2M128;

/// `bytes` in B, KiB or MiB.
pub(super) fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    } else if bytes >= 1 << 10 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

/// A boolean parameter set: its names, dimensions and what intake does with its bits.
fn describe(set: BooleanSet) -> String {
    format!(
        "{} ({}, set {}: k = {}, N = {}; {})",
        parameters_name(set),
        set.tfhe_name(),
        set.glwe_parameters().id().0,
        set.glwe_dimension(),
        set.polynomial_size(),
        if set.is_big_key() {
            "gates take extracted bits as they are"
        } else {
            "a key switch per bit at intake"
        }
    )
}

/// A key set's parameters, boolean or integer, in one line.
pub(super) fn describe_key_set(parameters: KeySetParameters) -> String {
    match parameters {
        KeySetParameters::Boolean(set) => describe(set),
        KeySetParameters::Integer => {
            let glwe = MESSAGE_2_CARRY_2_TUNIFORM_2M128.glwe();
            format!(
                "integer ({}, set {}: k = {}, N = {}, q = 2^64; FheUint8 .. FheUint64, 2-bit blocks; fleet and \
                 public-key frames are extracted as they are, per-device frames key-switched once, then extracted)",
                parameters.tfhe_name(),
                glwe.id().0,
                glwe.glwe_dimension().0,
                glwe.polynomial_size().0,
            )
        }
    }
}

/// A spinner showing `message` and the time elapsed, until it is finished. indicatif draws only on a
/// terminal: to a log or a pipe, `message` is written as one line instead.
pub(super) fn spinner(message: String) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        eprintln!("{message} ...");
    }
    let spinner = ProgressBar::new_spinner();
    spinner.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    spinner.set_message(message);
    spinner.enable_steady_tick(Duration::from_millis(100));
    spinner
}

/// A bar of `length` steps showing `message`, the count and the time left, until it is finished (on a
/// terminal; to a log or a pipe, `message` as one line).
pub(super) fn bar(length: u64, message: String) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        eprintln!("{message} ...");
    }
    let bar = ProgressBar::new(length);
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} {elapsed} (left {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(message);
    bar
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_read_well() {
        assert_eq!(size(212), "212 B");
        assert_eq!(size(32_784), "32.0 KiB");
        assert_eq!(size(3 << 20), "3.0 MiB");
    }
}
