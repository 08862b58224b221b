/*
 * ct_trace: a QEMU TCG plugin that fingerprints what a program does that an attacker timing it or watching
 * its cache could see: the address of every executed guest instruction and of every load and store, in
 * order. Two runs of one binary on different secrets must give the same fingerprint if the code is
 * constant-time in the sense of the ctgrind check (no branch and no memory address depends on a secret).
 *
 * The fingerprint is a 64-bit FNV-1a style hash folded over (pc) per instruction and (vaddr, store?) per
 * memory access, with the instruction count beside it. Each time the instruction at the address given as
 * `checkpoint=0x...` executes, the plugin prints "ct_trace checkpoint <k> insns=<n> hash=<h>" to stderr
 * (the firmware calls that function at the end of each measured phase), and at exit the totals.
 *
 * QEMU's plugin API (version 1, as in Debian bookworm's qemu 7.2) is declared here for just the calls used,
 * so the plugin builds with gcc alone, as insn_count.c does:
 *
 *   gcc -O2 -shared -fPIC -o ct_trace.so ct_trace.c
 *   qemu-system-riscv32 ... -plugin ./ct_trace.so,checkpoint=0x80001234 -kernel firmware.elf
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W = 2, QEMU_PLUGIN_MEM_RW = 3 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                                          void *userdata);

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
extern void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                                   enum qemu_plugin_cb_flags flags, void *userdata);
extern void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                             enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
                                             void *userdata);
extern bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One vCPU in the traced firmware, so plain globals are exact. */
static uint64_t hash = 0xcbf29ce484222325ULL;
static uint64_t instructions;
static uint64_t accesses;
static uint64_t checkpoint = UINT64_MAX;
static unsigned checkpoints;
/* With `trace=FILE`: every executed instruction's address, one hex line each (to find where two runs part). */
static FILE *trace;

static inline void fold(uint64_t word)
{
    hash = (hash ^ word) * 0x100000001b3ULL;
}

static void on_insn(unsigned int vcpu_index, void *userdata)
{
    uint64_t pc = (uint64_t)(uintptr_t)userdata;
    (void)vcpu_index;
    instructions++;
    fold(pc);
    if (trace) {
        fprintf(trace, "%" PRIx64 "\n", pc);
    }
    if (pc == checkpoint) {
        fprintf(stderr, "ct_trace checkpoint %u insns=%" PRIu64 " accesses=%" PRIu64 " hash=%016" PRIx64 "\n",
                checkpoints++, instructions, accesses, hash);
    }
}

static void on_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata)
{
    (void)vcpu_index;
    (void)userdata;
    accesses++;
    fold(vaddr ^ (qemu_plugin_mem_is_store(info) ? (1ULL << 63) : 0));
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        void *pc = (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn);
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_insn, QEMU_PLUGIN_CB_NO_REGS, pc);
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
    }
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    if (trace) {
        fclose(trace);
    }
    fprintf(stderr, "ct_trace exit insns=%" PRIu64 " accesses=%" PRIu64 " hash=%016" PRIx64 "\n", instructions,
            accesses, hash);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
                                                               int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "checkpoint=", 11) == 0) {
            checkpoint = strtoull(argv[i] + 11, NULL, 0);
        } else if (strncmp(argv[i], "trace=", 6) == 0) {
            trace = fopen(argv[i] + 6, "w");
            if (!trace) {
                fprintf(stderr, "ct_trace: cannot write '%s'\n", argv[i] + 6);
                return -1;
            }
        } else {
            fprintf(stderr, "ct_trace: unknown argument '%s' (expected checkpoint=0xADDRESS or trace=FILE)\n",
                    argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
