/* bandwidth.c — the read-bandwidth probe (bench.h): how fast one core
 * streams memory that no cache holds, to set decode's bytes of weights per
 * token against a bandwidth measured in the same run. STREAM-style: a sum
 * of a large array in GCC/Clang vector extensions that become the
 * target's vector loads (8 independent chains of 4 wrapping integer sums:
 * an add's latency never limits the loads). A measurement, not a
 * kernel: its result only keeps the loads alive. */
#if !defined(__APPLE__)
#define _DEFAULT_SOURCE         /* glibc: madvise's MADV_HUGEPAGE */
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

/* 16 bytes: one SSE/NEON register, half an AVX one; GCC and Clang split it
 * into what the target has (scalar words on a build without vectors). */
typedef uint32_t u32x4 __attribute__((vector_size(16)));

enum { STEP = 8 * 4 };   /* 8 chains of 4 lanes: written out, so each stays in a register */

static u32x4 load(const uint32_t *p)
{
    u32x4 v;
    memcpy(&v, p, sizeof v);    /* an unaligned load, no aliasing question */
    return v;
}

static uint32_t lanes(u32x4 v) { return v[0] + v[1] + v[2] + v[3]; }

uint32_t bench_read_sum(const uint32_t *a, size_t n)
{
    u32x4 c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0}, c6 = {0}, c7 = {0};
    size_t i = 0;
    for (; i + STEP <= n; i += STEP) {
        c0 += load(a + i), c1 += load(a + i + 4), c2 += load(a + i + 8), c3 += load(a + i + 12);
        c4 += load(a + i + 16), c5 += load(a + i + 20), c6 += load(a + i + 24);
        c7 += load(a + i + 28);
    }
    uint32_t s = lanes(c0) + lanes(c1) + lanes(c2) + lanes(c3) + lanes(c4) + lanes(c5) +
                 lanes(c6) + lanes(c7);
    for (; i < n; i++) s += a[i];
    return s;
}

size_t bench_read_probe_bytes(void)
{
    const size_t floor = (size_t)512 << 20;
    long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE    /* glibc; elsewhere (macOS) the floor */
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    const size_t four_llc = llc > 0 ? 4 * (size_t)llc : 0;
    return four_llc > floor ? four_llc : floor;
}

/* The probe reads pages like the library's weights and arenas: 2 MiB
 * transparent huge pages where Linux has them (src/base/huge_pages.h says
 * why; the bench sees the library through its public API only, so the
 * advice is repeated here). */
static void advise_huge_pages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

uint32_t *bench_read_array(size_t n)
{
    uint32_t *a = malloc(n * sizeof *a);
    if (!a) return NULL;
    advise_huge_pages(a, n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = (uint32_t)i;
    return a;
}
