# Set-up shared by scripts/firmware.sh and scripts/firmware-guide.sh (sourced, not run): the Cortex-M rustup
# and RISC-V targets given as arguments, llvm-tools (sets LLVM_SIZE), the pinned flip-link and Debian's
# qemu-system-arm and qemu-system-misc (qemu-system-riscv32).
FLIP_LINK_VERSION=0.1.12
# Every target the firmware test runs on (scripts/firmware.sh, firmware-ram-image.sh, firmware-ct-trace.sh).
ARM_FIRMWARE_TARGETS=(thumbv7em-none-eabihf thumbv7m-none-eabi thumbv6m-none-eabi)
RISCV_FIRMWARE_TARGETS=(riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf)
FIRMWARE_TARGETS=("${ARM_FIRMWARE_TARGETS[@]}" "${RISCV_FIRMWARE_TARGETS[@]}")

# flip-link as the linker of each Cortex-M target among the arguments (firmware/.cargo/config.toml does the
# same for a `cargo run` from firmware/; it is not read from the workspace root). RISC-V links with rust-lld
# and riscv-rt's script.
use_flip_link() {
  local t
  for t in "$@"; do
    case "$t" in thumbv*) export "CARGO_TARGET_$(echo "$t" | tr 'a-z-' 'A-Z_')_LINKER=flip-link" ;; esac
  done
}

firmware_setup() {
  rustup target add "$@"
  rustup component add llvm-tools
  LLVM_SIZE="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size"
  if ! cargo install --list | grep -qx "flip-link v$FLIP_LINK_VERSION:"; then
    cargo install flip-link --version "$FLIP_LINK_VERSION" --locked
  fi
  # Debian: qemu-system-arm for the Cortex-M models, qemu-system-misc for qemu-system-riscv32.
  local packages=()
  command -v qemu-system-arm >/dev/null || packages+=(qemu-system-arm)
  if printf '%s\n' "$@" | grep -q '^riscv' && ! command -v qemu-system-riscv32 >/dev/null; then
    packages+=(qemu-system-misc)
  fi
  if [ "${#packages[@]}" -ne 0 ]; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${packages[@]}"
  fi
}
