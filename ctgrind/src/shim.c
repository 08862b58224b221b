/*
 * Valgrind client requests for the ctgrind harness (src/valgrind.rs wraps them for Rust).
 *
 * Each request is a magic instruction sequence that does nothing on a real CPU and is intercepted by
 * valgrind: MAKE_MEM_UNDEFINED / SET_VBITS change memcheck's shadow "definedness" bits of a range (never
 * its contents), GET_VBITS reads them, COUNT_ERRORS returns the errors reported so far. Without
 * <valgrind/memcheck.h> everything compiles to stubs and tsbc_have_memcheck_h() returns 0.
 */
#include <stddef.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TSBC_HAVE_MEMCHECK_H 1
#endif
#endif

#ifdef TSBC_HAVE_MEMCHECK_H

int tsbc_have_memcheck_h(void) { return 1; }

unsigned tsbc_running_on_valgrind(void) { return (unsigned)RUNNING_ON_VALGRIND; }

unsigned tsbc_count_errors(void) { return VALGRIND_COUNT_ERRORS; }

void tsbc_make_undefined(const void *ptr, size_t len) { (void)VALGRIND_MAKE_MEM_UNDEFINED(ptr, len); }

void tsbc_make_defined(const void *ptr, size_t len) { (void)VALGRIND_MAKE_MEM_DEFINED(ptr, len); }

/* 0: not on valgrind, 1: done, 3: part of a range is not addressable. A set bit in vbits = undefined. */
unsigned tsbc_get_vbits(const void *ptr, void *vbits, size_t len) { return VALGRIND_GET_VBITS(ptr, vbits, len); }

unsigned tsbc_set_vbits(const void *ptr, const void *vbits, size_t len) {
    return VALGRIND_SET_VBITS(ptr, vbits, len);
}

#else

int tsbc_have_memcheck_h(void) { return 0; }
unsigned tsbc_running_on_valgrind(void) { return 0; }
unsigned tsbc_count_errors(void) { return 0; }
void tsbc_make_undefined(const void *ptr, size_t len) { (void)ptr; (void)len; }
void tsbc_make_defined(const void *ptr, size_t len) { (void)ptr; (void)len; }
unsigned tsbc_get_vbits(const void *ptr, void *vbits, size_t len) { (void)ptr; (void)vbits; (void)len; return 0; }
unsigned tsbc_set_vbits(const void *ptr, const void *vbits, size_t len) { (void)ptr; (void)vbits; (void)len; return 0; }

#endif
