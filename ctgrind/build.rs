//! Compiles `src/shim.c`, the valgrind client requests the harness calls through FFI.
//!
//! The client requests are C macros of `<valgrind/memcheck.h>` (Debian package `valgrind`). Without that
//! header the shim compiles to stubs that report "no headers", so the workspace still builds everywhere;
//! the harness then refuses to run a check (see `scripts/ctgrind.sh`).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-changed=build.rs");
    // Picks up a valgrind installed after the first build (a missing file reruns this script every build).
    println!("cargo:rerun-if-changed=/usr/include/valgrind/memcheck.h");
    cc::Build::new()
        .file("src/shim.c")
        .warnings(true)
        .extra_warnings(true)
        .compile("tsbc_valgrind_shim");
}
