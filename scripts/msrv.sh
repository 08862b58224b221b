#!/usr/bin/env bash
# The minimum supported Rust version: the library crates compiled (`cargo check`: every language and library
# feature they use, without code generation, which takes minutes more on a fresh machine and which the
# stable toolchain's builds cover) with the toolchain that `rust-version` in the workspace's Cargo.toml names
# (every crate inherits it, and each crate's README states it).
#
#  - installs that toolchain with rustup when it is missing (minimal profile), and its thumbv7em-none-eabihf
#    target;
#  - negacyclic-fft, negacyclic-ntt, tfhe-sbc-core, tfhe-sbc-device: host and thumbv7em-none-eabihf without
#    default features (the firmware's build), and the host with all features (std, getrandom, ...);
#  - tfhe-sbc-adapter on the host without its `tfhe` feature (a server that only validates frames), and with
#    it: tfhe-rs 1.8.2 declares rust-version 1.91.1, which is why ours is 1.91.1 and not 1.91.0. That check
#    of tfhe-rs (several minutes) runs only with MSRV_TFHE=1.
#
# `--locked`: the repository's Cargo.lock, so that a dependency release needing a newer rustc does not fail
# this check (crates.io users resolve their own versions; cargo's resolver prefers ones this rustc can build).
# Own target directory (target/msrv; MSRV_TARGET_DIR overrides it): nothing else builds with this toolchain.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
start=$SECONDS

msrv="$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
if [ -z "$msrv" ]; then
    echo "msrv.sh: no rust-version in $root/Cargo.toml" >&2
    exit 1
fi
if ! rustup run "$msrv" rustc --version >/dev/null 2>&1; then
    rustup toolchain install "$msrv" --profile minimal
fi
rustup target add --toolchain "$msrv" thumbv7em-none-eabihf
echo "== rust-version $msrv: $(rustup run "$msrv" rustc --version)"
export CARGO_TARGET_DIR="${MSRV_TARGET_DIR:-$root/target/msrv}"

LIBRARIES=(-p negacyclic-fft -p negacyclic-ntt -p tfhe-sbc-core -p tfhe-sbc-device)
echo "== the no_std libraries: host and thumbv7em-none-eabihf without default features, host with all features"
cargo +"$msrv" check --locked "${LIBRARIES[@]}" --lib --no-default-features
cargo +"$msrv" check --locked "${LIBRARIES[@]}" --lib --no-default-features --target thumbv7em-none-eabihf
cargo +"$msrv" check --locked "${LIBRARIES[@]}" --lib --all-features

echo "== tfhe-sbc-adapter without tfhe-rs (default features; rayon, test-utils)"
cargo +"$msrv" check --locked -p tfhe-sbc-adapter --lib
cargo +"$msrv" check --locked -p tfhe-sbc-adapter --lib --features rayon,test-utils
if [ "${MSRV_TFHE:-0}" = "1" ]; then
    echo "== tfhe-sbc-adapter with tfhe-rs (all features)"
    cargo +"$msrv" check --locked -p tfhe-sbc-adapter --lib --all-features
fi
echo "msrv.sh: $((SECONDS - start)) s"
