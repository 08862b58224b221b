//! The command line: bad input is one line on stderr and exit status 2. (Also makes `cargo test` build the
//! binary, so that scripts/test-all.sh runs the quick mode with the host tests' build.)

use std::process::Command;

#[test]
fn bad_arguments_are_one_line() {
    for args in [&["--no-such-option"][..], &["--out"][..], &["extra"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_results"))
            .args(args)
            .output()
            .expect("the binary runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_names_the_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_results"))
        .arg("--help")
        .output()
        .expect("the binary runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for option in ["--quick", "--out", "--firmware-log", "--service-log"] {
        assert!(help.contains(option), "{option}");
    }
}
