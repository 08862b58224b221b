//! `ctgrind MODE [--native]`: runs the checks of one mode; meant to run under valgrind memcheck, as
//! `scripts/ctgrind.sh` does. See the library documentation.
//!
//! Exit status: 0 when every check ran and (under valgrind) carried its secrets to its output; 2 when a
//! check's output carried no secret bit (the check would pass vacuously); 3 on a usage error or when not
//! under valgrind without `--native`. Memcheck's own verdict is valgrind's `--error-exitcode`.

use std::process::ExitCode;
use tfhe_sbc_ctgrind::{Mode, run_mode, valgrind};

fn usage() -> ExitCode {
    let modes: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
    eprintln!("usage: ctgrind <{}|list> [--native]", modes.join("|"));
    eprintln!("  run it under valgrind: scripts/ctgrind.sh (--native runs the checks without valgrind, unchecked)");
    ExitCode::from(3)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let native = args.iter().any(|a| a == "--native");
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let [name] = positional.as_slice() else {
        return usage();
    };
    if name.as_str() == "list" {
        for mode in Mode::ALL {
            let verdict = if mode.expect_flagged() {
                "must be flagged"
            } else {
                "must be clean"
            };
            println!("{} ({verdict}):", mode.name());
            for check in mode.checks() {
                println!("  {:<16} {}", check.name, check.what);
            }
        }
        return ExitCode::SUCCESS;
    }
    let Some(mode) = Mode::from_name(name) else {
        return usage();
    };
    let on_valgrind = valgrind::running_on_valgrind();
    if !native {
        if !valgrind::have_memcheck_h() {
            eprintln!("ctgrind: built without <valgrind/memcheck.h> (apt-get install valgrind, then rebuild)");
            return ExitCode::from(3);
        }
        if !on_valgrind {
            eprintln!("ctgrind: not running under valgrind: use scripts/ctgrind.sh, or --native to only run the code");
            return ExitCode::from(3);
        }
    }
    println!(
        "ctgrind: mode {}, under valgrind: {}",
        mode.name(),
        if on_valgrind { "yes" } else { "no" }
    );
    // The instances the run-time dispatch picked (under valgrind's CPUID): scripts/ctgrind.sh checks them.
    println!(
        "ctgrind: instances: xof {} fft {}",
        tfhe_sbc_device::backend(),
        negacyclic_fft::backend()
    );
    let mut vacuous = Vec::new();
    let (mut checks, mut errors) = (0, 0);
    for report in run_mode(mode) {
        let name = report.check.name;
        let taint = match report.outcome.tainted {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "n/a",
        };
        println!(
            "check {name:<16} {:>6} memcheck error(s); secrets reached the output: {taint:<3} (digest {:016x})",
            report.errors, report.outcome.digest
        );
        if on_valgrind && report.outcome.tainted != Some(true) {
            vacuous.push(name);
        }
        checks += 1;
        errors += report.errors;
    }
    if !vacuous.is_empty() {
        println!(
            "ctgrind: FAILED: no secret bit reached the output of {}: such a check proves nothing",
            vacuous.join(", ")
        );
        return ExitCode::from(2);
    }
    println!(
        "ctgrind: mode {} done: {checks} checks, {errors} memcheck error(s)",
        mode.name()
    );
    ExitCode::SUCCESS
}
