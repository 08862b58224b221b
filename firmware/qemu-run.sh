#!/usr/bin/env bash
# Runs a firmware ELF under qemu-system-arm or qemu-system-riscv32 on the machine its target runs on, with semihosting (output and
# exit code) and -icount shift=0 (the virtual clock advances a fixed 1 ns per instruction, so SysTick ticks
# count instructions; on RISC-V, minstret does). Usage: firmware/qemu-run.sh ELF [TARGET]; TARGET defaults to the triple in ELF's path.
# The cargo runner of firmware/.cargo/config.toml. A hung or locked-up run is killed after $QEMU_TIMEOUT s.
set -euo pipefail
elf=$1
target=${2:-$(echo "$elf" | grep -oE '(thumbv[0-9a-z]+-none-eabi(hf)?|riscv32[a-z]+-unknown-none-elf)' | head -n 1)}
case "$target" in
  thumbv7em-none-eabihf) qemu=qemu-system-arm machine=(-machine mps2-an386 -cpu cortex-m4) ;;
  # The LM3S6965's Cortex-M3 runs thumbv6m (Cortex-M0/M0+) code as well.
  thumbv7m-none-eabi | thumbv6m-none-eabi) qemu=qemu-system-arm machine=(-machine lm3s6965evb -cpu cortex-m3) ;;
  # The `virt` machine's default hart (rv32gc) runs RV32IMC and RV32IMAC code; -bios none starts it in M-mode
  # at 0x80000000, where firmware/memory/qemu-riscv-virt.x puts the program. Under -icount shift=0 its
  # minstret counts instructions.
  riscv32imc-unknown-none-elf | riscv32imac-unknown-none-elf) qemu=qemu-system-riscv32 machine=(-machine virt -bios none) ;;
  *) echo "qemu-run.sh: no machine for target '$target'" >&2; exit 2 ;;
esac
# QEMU_EXTRA_ARGS: more qemu options, split on spaces (scripts/firmware-ct-trace.sh passes its -plugin).
read -r -a extra <<<"${QEMU_EXTRA_ARGS:-}"
exec timeout "${QEMU_TIMEOUT:-60}" "$qemu" "${machine[@]}" "${extra[@]}" -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -icount shift=0 -kernel "$elf"
