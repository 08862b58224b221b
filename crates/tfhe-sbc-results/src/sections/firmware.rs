//! Microcontrollers: the firmware table of `scripts/firmware.sh` (every target and variant: flash, RAM,
//! instructions per phase under qemu-system-arm and qemu-system-riscv32) and the aarch64 count of `scripts/aarch64-count.sh`, with
//! SEAL-Embedded's published Cortex-M4 figures beside them.

use crate::report::{Context, Section, table};
use std::path::Path;
use std::process::Command;

/// SEAL-Embedded (Natarajan and Dai, TCHES 2021), Table 5: CKKS encode-and-encrypt of 2048 values, n = 4096,
/// 3 primes, on the nRF52840 Cortex-M4 at 64 MHz: (key type, configuration, RAM KB, flash KB, µs).
const SEAL_EMBEDDED: [(&str, &str, u32, u32, u64); 6] = [
    ("symmetric", "memory efficient", 65, 1, 1_348_602),
    ("symmetric", "balanced", 129, 121, 735_826),
    ("symmetric", "high performance", 137, 169, 680_790),
    ("asymmetric", "memory efficient", 85, 96, 1_550_116),
    ("asymmetric", "balanced", 128, 216, 824_403),
    ("asymmetric", "high performance", 136, 264, 737_342),
];

/// The firmware table's rows (cells) and the aarch64 line, from a log of `scripts/firmware.sh` and
/// `scripts/aarch64-count.sh` (or of `scripts/test-all.sh`, which runs both).
fn parse(log: &str) -> (Vec<String>, Vec<Vec<String>>, Option<String>) {
    let mut header = Vec::new();
    let mut rows = Vec::new();
    let cells = |l: &str| {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect::<Vec<_>>()
    };
    for line in log.lines() {
        let t = line.trim_start();
        if t.starts_with("| target") {
            header = cells(t);
            rows.clear();
        } else if t.starts_with("| thumb") || t.starts_with("| riscv32") {
            rows.push(cells(t));
        }
    }
    let aarch64 = log
        .lines()
        .rev()
        .find(|l| l.contains("instructions per N = 1024"))
        .map(|l| l.trim().to_string());
    (header, rows, aarch64)
}

/// The workspace root (the scripts `cd` there themselves).
pub fn workspace_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_script(script: &str) -> Result<String, String> {
    let out = Command::new("bash")
        .arg(workspace_root().join(script))
        .output()
        .map_err(|e| format!("bash {script}: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("bash {script} failed: {}", text.lines().last().unwrap_or("")))
    }
}

/// The microcontroller section: from `log` when given, else by running the scripts (not in quick mode).
pub fn run(ctx: &Context, log: Option<&Path>) -> Section {
    ctx.step("Microcontrollers: firmware table");
    let (text, source) = match log {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => (Ok(t), format!("parsed from `{}`", path.display())),
            Err(e) => (Err(format!("{}: {e}", path.display())), String::new()),
        },
        None if ctx.quick => (
            Err("not run in quick mode (pass --firmware-log PATH to include a log)".into()),
            String::new(),
        ),
        None => {
            let firmware = run_script("scripts/firmware.sh");
            let count = run_script("scripts/aarch64-count.sh");
            let text = match (firmware, count) {
                (Ok(f), Ok(c)) => Ok(format!("{f}\n{c}")),
                (Ok(f), Err(e)) => Ok(format!("{f}\n(aarch64 count: {e})")),
                (Err(e), _) => Err(e),
            };
            (
                text,
                "from `scripts/firmware.sh` and `scripts/aarch64-count.sh`, run by this command".into(),
            )
        }
    };
    let mut md = String::new();
    match text {
        Err(e) => md.push_str(&format!("**Firmware table: not measured**: {e}.\n\n")),
        Ok(t) => {
            let (header, rows, aarch64) = parse(&t);
            if rows.is_empty() {
                md.push_str("**Firmware table: not measured**: the log holds no firmware table.\n\n");
            } else {
                md.push_str(&format!(
                    "Our firmware under qemu-system-arm (Cortex-M) and qemu-system-riscv32 (RV32) ({source}): flash and RAM in bytes, instructions per \
                     phase (construct: key and CSPRNG set-up; encrypt: one N = 1024 seeded encryption, integer: \
                     N = 2048; frame: the encryption, header and MAC). Instructions, not cycles: qemu counts \
                     executed instructions.\n\n"
                ));
                md.push_str(&table(&header, &rows));
            }
            match aarch64 {
                Some(line) => md.push_str(&format!(
                    "\naarch64 (Pi class, instructions in place of energy): {line}\n\n"
                )),
                None => md.push_str("\naarch64 count: not in the log.\n\n"),
            }
        }
    }
    md.push_str(
        "**From the SEAL-Embedded paper, not measured here** (Natarajan and Dai, TCHES 2021, Table 5; a different \
         scheme: CKKS encode-and-encrypt of 2048 values, n = 4096, 3 primes, nRF52840 Cortex-M4 at 64 MHz; the \
         cycle column is their time x 64 MHz, for scale against our instruction counts):\n\n",
    );
    let seal: Vec<Vec<String>> = SEAL_EMBEDDED
        .iter()
        .map(|s| {
            vec![
                s.0.into(),
                s.1.into(),
                format!("{} KB", s.2),
                format!("{} KB", s.3),
                format!("{:.1} ms", s.4 as f64 / 1e3),
                format!("{:.1} M", s.4 as f64 * 64.0 / 1e6),
            ]
        })
        .collect();
    md.push_str(&table(
        &["key", "configuration", "RAM", "flash", "Cortex-M4 time", "≈ cycles"],
        &seal,
    ));
    Section::new(
        "4. Microcontrollers (firmware table; SEAL-Embedded's published figures)",
        md,
    )
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn the_table_keeps_cortex_m_and_risc_v_rows_only() {
        let log = "\
| target | build | product |
|---|---|---|
| thumbv7em-none-eabihf | default | NttPlan<2> |
| riscv32imc-unknown-none-elf | default | NttPlan<2> |
| riscv32imac-unknown-none-elf | fft | Plan |
build: default = DefaultProduct
aarch64: 156840 instructions per N = 1024 encryption
";
        let (header, rows, aarch64) = parse(log);
        assert_eq!(header, ["target", "build", "product"]);
        let targets: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            targets,
            [
                "thumbv7em-none-eabihf",
                "riscv32imc-unknown-none-elf",
                "riscv32imac-unknown-none-elf"
            ]
        );
        assert!(aarch64.is_some_and(|l| l.contains("156840")));
    }
}
