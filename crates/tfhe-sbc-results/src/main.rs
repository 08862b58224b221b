//! Reruns the TFHE-SBC paper's evaluation on this machine and writes `docs/results.md` with SVG plots in
//! `docs/results/`: Table 1 (client encryption), Fig. 3 (server conversion), Tables 6 and 7 (CSPRNG, noise,
//! product), the microcontroller table, integers and scale, ours next to the peers measured in the same run
//! and the paper's printed values.
//!
//! `target/release/results` after `cargo build-tools` (the README's one build of every tool: the same tfhe-rs
//! build as the keys tool, the server and the client): full, about 3 minutes on 2 cores once the firmware is
//! built; `--quick`: reduced, under a minute.

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::time::Instant;

mod axis;
#[path = "../../../benches/common/mod.rs"]
mod common;
mod kit;
mod peak;
mod plot;
mod provenance;
mod report;
mod sections;
mod timing;

#[global_allocator]
static ALLOCATOR: peak::Counting = peak::Counting;

/// Reruns the TFHE-SBC paper's evaluation on this machine: docs/results.md and SVG plots.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// A reduced run (fewer sizes and samples, no firmware or service run), in well under a minute.
    #[arg(long)]
    quick: bool,
    /// The output directory: results.md goes there, the plots into its results/ folder.
    #[arg(long, default_value = "docs")]
    out: PathBuf,
    /// Take the firmware table and the aarch64 count from this log (of scripts/firmware.sh and
    /// scripts/aarch64-count.sh, or scripts/test-all.sh) instead of running the scripts.
    #[arg(long, value_name = "PATH")]
    firmware_log: Option<PathBuf>,
    /// Take the scale table from this log of `cargo bench -p tfhe-sbc-server --bench service`.
    #[arg(long, value_name = "PATH")]
    service_log: Option<PathBuf>,
    /// Write the page even when the work tree has changes (or no git commit is found); the page and every
    /// plot then say that it is not reproducible. Without it, such a run is refused (exit status 2).
    #[arg(long)]
    allow_dirty: bool,
}

fn main() {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            // One line: clap's first line of the error, and where to look.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!("{first} (see --help)");
            std::process::exit(2);
        }
        Err(e) => {
            let _ = e.print();
            return;
        }
    };
    let tree = provenance::Tree::read(&sections::firmware::workspace_root());
    if let Some(why) = tree.refusal()
        && !args.allow_dirty
    {
        eprintln!("error: {why}");
        std::process::exit(2);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run(&args, tree) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args, tree: provenance::Tree) -> Result<(), String> {
    let started = Instant::now();
    let plot_dir = args.out.join("results");
    std::fs::create_dir_all(&plot_dir).map_err(|e| format!("{}: {e}", plot_dir.display()))?;
    let progress = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    progress.enable_steady_tick(std::time::Duration::from_millis(120));
    let ctx = report::Context {
        quick: args.quick,
        budget: timing::Budget::new(args.quick),
        plot_dir,
        stamp: timing::Stamp::now(tree),
        progress,
    };
    tracing::info!("stamp: {}", ctx.stamp.line());
    ctx.step("tfhe-rs boolean keys (TFHE_LIB) and three devices");
    let boolean = kit::BooleanKit::new()?;
    ctx.step("tfhe-rs integer client key, per-device and public keys");
    let integers = sections::integers::IntegerKit::new()
        .map_err(|e| tracing::error!("integer keys: {e}"))
        .ok();
    let mut sections = vec![
        sections::table1::run(&ctx, &boolean),
        sections::fig3::run(&ctx, &boolean, integers.as_ref()),
        sections::sampling::run(&ctx),
        sections::firmware::run(&ctx, args.firmware_log.as_deref()),
    ];
    match &integers {
        Some(kit) => sections.push(sections::integers::run(&ctx, kit)),
        None => sections.push(report::Section::new(
            "5. Integers (FheUint8)",
            "**Not measured**: the integer keys could not be made (see the log).\n".into(),
        )),
    }
    sections.push(sections::scale::run(&ctx, args.service_log.as_deref()));
    ctx.progress.finish_and_clear();
    let elapsed = started.elapsed().as_secs_f64();
    let page = page(&ctx, args, &sections, elapsed);
    let path = args.out.join("results.md");
    std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    let plots: usize = sections.iter().map(|s| s.plots.len()).sum();
    println!("wrote {} and {plots} plots in {:.0} s", path.display(), elapsed);
    let failed: Vec<&String> = sections.iter().flat_map(|s| &s.errors).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} plot(s) failed", failed.len()))
    }
}

fn page(ctx: &report::Context, args: &Args, sections: &[report::Section], seconds: f64) -> String {
    let given: Vec<String> = std::env::args().skip(1).collect();
    let args_text = if given.is_empty() {
        String::new()
    } else {
        format!(" {}", given.join(" "))
    };
    let mode = if ctx.quick {
        "`--quick` (reduced sizes and samples)"
    } else {
        "full"
    };
    let mut s = format!(
        "# Results: the TFHE-SBC paper's evaluation, rerun on this machine\n\n\
         Generated by `target/release/results{args_text}` ({mode} run, {seconds:.0} s). Every figure below was \
         measured by that command in one run, next to its peers (tfhe-rs 1.8.2 and others) measured in the same \
         run; the paper's values are its printed ones (Raspberry Pi Zero 2 W client, TFHEpp peers), marked as \
         such. Regenerate: `cargo build-tools && target/release/results` (the README's one release build of \
         every tool; the run takes about 3 minutes on 2 cores, plus about 10 the first time \
         `scripts/firmware.sh` builds the firmware; `--quick` for a reduced run in seconds, `--help` for the \
         options).\n\n\
         **Machine:** {}\n\n",
        ctx.stamp.line()
    );
    if ctx.quick {
        s.push_str(
            "**Indicative only:** a `--quick` run measures reduced sizes with few samples, on whatever else the \
             machine is doing; its figures can differ several-fold from a full run's (even in which of two \
             configurations is faster), and its scale section is the committed service log's. Compare figures \
             within one page only; cite the full run's.\n\n",
        );
    }
    if ctx.stamp.tree.refusal().is_some() {
        s.push_str(&format!(
            "**Not reproducible:** written with `--allow-dirty`, {}. The figures may come from code that no \
             commit holds; a page for the repository is generated from a clean tree.\n\n",
            ctx.stamp.tree.stamp()
        ));
    }
    for (what, log) in [
        ("firmware table", &args.firmware_log),
        ("scale table", &args.service_log),
    ] {
        if let Some(path) = log {
            s.push_str(&format!(
                "The {what} was read from a log (`{}`), not run by this command.\n\n",
                path.display()
            ));
        }
    }
    for sec in sections {
        s.push_str(&sec.render());
    }
    s
}
