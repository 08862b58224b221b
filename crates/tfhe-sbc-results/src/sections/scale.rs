//! Scale: frames per second and acknowledgement latency against the number of workers, from the server's
//! service bench (`crates/tfhe-sbc-server/benches/service.rs`, which needs a nats-server): its printed table
//! is parsed from a log (`--service-log`), or the bench is run (`cargo bench -p tfhe-sbc-server --bench
//! service`) in a full run when `TSBC_NATS_SERVER` names a nats-server binary.

use crate::axis::Unit;
use crate::plot::BarChart;
use crate::report::{Context, Section, table};
use std::path::Path;
use std::process::Command;

/// One row of the bench's table: configuration, frames/s, ack p50 ms, ack p99 ms.
type Row = (String, f64, f64, f64);

/// The bench's rows and its other lines worth keeping.
fn parse(log: &str) -> (Vec<Row>, Vec<String>) {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut in_table = false;
    for line in log.lines() {
        if line.starts_with("configuration | frames/s") {
            in_table = true;
            rows.clear();
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if in_table
            && cells.len() == 4
            && let (Ok(f), Ok(p50), Ok(p99)) = (cells[1].parse(), cells[2].parse(), cells[3].parse())
        {
            rows.push((cells[0].to_string(), f, p50, p99));
            continue;
        }
        if line.contains("devices x") || line.starts_with("gateway RSS") {
            notes.push(line.trim().to_string());
        }
    }
    (rows, notes)
}

/// The service bench's log committed beside the page (`cargo bench -p tfhe-sbc-server --bench service`).
const COMMITTED_LOG: &str = "docs/results/service-bench.log";

/// The scale section.
pub fn run(ctx: &Context, log: Option<&Path>) -> Section {
    ctx.step("Scale: service bench");
    let text: Result<(String, String), String> = match log {
        Some(path) => std::fs::read_to_string(path)
            .map(|t| (t, format!("parsed from `{}`", path.display())))
            .map_err(|e| format!("{}: {e}", path.display())),
        // Quick mode runs no service: the committed log of the last full run, so the page keeps its plots.
        None if ctx.quick => {
            let path = crate::sections::firmware::workspace_root().join(COMMITTED_LOG);
            std::fs::read_to_string(&path)
                .map(|t| {
                    let source = format!("read from the committed log `{COMMITTED_LOG}` (quick mode runs no service)");
                    (t, source)
                })
                .map_err(|e| format!("{}: {e} (quick mode reads the committed service log)", path.display()))
        }
        None if std::env::var_os("TSBC_NATS_SERVER").is_none() => Err(
            "not measured: no nats-server (set TSBC_NATS_SERVER, e.g. to `bash scripts/nats-server.sh`'s output)"
                .into(),
        ),
        None => Command::new("cargo")
            .args(["bench", "-p", "tfhe-sbc-server", "--bench", "service"])
            .current_dir(crate::sections::firmware::workspace_root())
            .output()
            .map_err(|e| format!("cargo bench: {e}"))
            .and_then(|o| {
                let t = String::from_utf8_lossy(&o.stdout).into_owned();
                if o.status.success() {
                    Ok((
                        t,
                        "run by this command: `cargo bench -p tfhe-sbc-server --bench service`".into(),
                    ))
                } else {
                    Err("the service bench failed".into())
                }
            }),
    };
    let mut md = String::new();
    let mut rows = Vec::new();
    match text {
        Err(e) => md.push_str(&format!("**Scale: not measured**: {e}.\n")),
        Ok((t, source)) => {
            let (r, notes) = parse(&t);
            rows = r;
            if rows.is_empty() {
                md.push_str("**Scale: not measured**: the log holds no service table.\n");
            } else {
                md.push_str(&format!(
                    "Integer set, fleet meters, one 16 KiB frame per message, each configuration on a fresh \
                     nats-server on loopback ({source}). {}\n\n",
                    notes.join("; ")
                ));
                let cells: Vec<Vec<String>> = rows
                    .iter()
                    .map(|r| {
                        vec![
                            r.0.clone(),
                            format!("{:.0}", r.1),
                            format!("{:.2}", r.2),
                            format!("{:.2}", r.3),
                        ]
                    })
                    .collect();
                md.push_str(&table(
                    &["configuration", "frames/s", "ack p50 [ms]", "ack p99 [ms]"],
                    &cells,
                ));
            }
        }
    }
    let mut section = Section::new("6. Scale (frames per second and ack latency vs workers)", md);
    if !rows.is_empty() {
        let fps = BarChart {
            title: "Service: frames per second per configuration",
            value: ("frames per second", Unit::PerSecond),
            bars: rows
                .iter()
                .map(|r| ("frames/s".to_string(), r.0.clone(), r.1))
                .collect(),
        };
        let caption = "the single process against the JetStream deployment: the gateway alone acknowledges \
                       once a frame is stored, and the rows with workers count frames until their conversion \
                       is committed, so adding a worker should lengthen the bar."
            .to_string();
        section.bars(ctx, "scale-fps.svg", caption, &fps);
        let latency = BarChart {
            title: "Service: acknowledgement latency per configuration",
            value: ("ack latency", Unit::Seconds),
            bars: rows
                .iter()
                .flat_map(|r| {
                    // The configuration without its parenthesis, so that the percentile survives the
                    // label area's cut (plot::fit cuts a long label at its first parenthesis).
                    let name = r.0.split(" (").next().unwrap_or(&r.0);
                    [
                        ("p50".to_string(), format!("{name}: p50"), r.2 * 1e-3),
                        ("p99".to_string(), format!("{name}: p99"), r.3 * 1e-3),
                    ]
                })
                .collect(),
        };
        let caption = "the time from a frame sent to its acknowledgement, median (p50) and tail (p99): \
                       JetStream's acknowledgement waits for the stream's store, so its bars are the longer."
            .to_string();
        section.bars(ctx, "scale-latency.svg", caption, &latency);
    }
    section
}
