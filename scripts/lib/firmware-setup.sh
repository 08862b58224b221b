# Set-up shared by scripts/firmware.sh and scripts/firmware-guide.sh (sourced, not run): the Cortex-M rustup
# targets given as arguments, llvm-tools (sets LLVM_SIZE), the pinned flip-link and Debian's qemu-system-arm.
FLIP_LINK_VERSION=0.1.12

firmware_setup() {
  rustup target add "$@"
  rustup component add llvm-tools
  LLVM_SIZE="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size"
  if ! cargo install --list | grep -qx "flip-link v$FLIP_LINK_VERSION:"; then
    cargo install flip-link --version "$FLIP_LINK_VERSION" --locked
  fi
  if ! command -v qemu-system-arm >/dev/null; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y qemu-system-arm
  fi
}
