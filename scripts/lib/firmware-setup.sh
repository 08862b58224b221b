# Set-up shared by scripts/firmware.sh and scripts/firmware-guide.sh (sourced, not run): the Cortex-M rustup
# and RISC-V targets given as arguments, llvm-tools (sets LLVM_SIZE), the pinned flip-link and Debian's
# qemu-system-arm and qemu-system-misc (qemu-system-riscv32).
FLIP_LINK_VERSION=0.1.12

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
  command -v qemu-system-riscv32 >/dev/null || packages+=(qemu-system-misc)
  if [ "${#packages[@]}" -ne 0 ]; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${packages[@]}"
  fi
}
