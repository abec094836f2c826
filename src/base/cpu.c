/* cpu.c — the run-time check of the CPU against the build (cpu.h). Compiled
 * like every file outside arch/ at the baseline flags only, so it runs on
 * any x86-64 CPU and can refuse one that lacks the kernels' instruction set
 * with a message instead of letting the kernels die of SIGILL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "base/error.h"

#ifndef NGPT_ARCH_NAME
#define NGPT_ARCH_NAME "scalar"
#endif

#if defined(__x86_64__)
#include <cpuid.h>

/* A feature: its cpuid bit (leaf 1 ecx, or leaf 7 subleaf 0 ebx), the
 * register state the OS must save for it (XCR0 bits), and which builds need
 * it (a list of ARCH names, "" for every x86-64 build). */
typedef struct cpu_feature {
    const char *name, *label;
    unsigned leaf, bit, xcr0;
    const char *builds;
} cpu_feature;

enum { XCR0_YMM = 0x6, XCR0_ZMM = 0xe6 };   /* SSE+AVX state; + opmask and zmm */

static const cpu_feature features[] = {
    {"fma", "FMA", 1, 12, XCR0_YMM, ""},
    {"avx", "AVX", 1, 28, XCR0_YMM, ""},
    {"avx2", "AVX2", 7, 5, XCR0_YMM, "avx2 avx512"},
    {"avx512f", "AVX-512F", 7, 16, XCR0_ZMM, "avx512"},
    {"avx512bw", "AVX-512BW", 7, 30, XCR0_ZMM, "avx512"},
    {"avx512vl", "AVX-512VL", 7, 31, XCR0_ZMM, "avx512"},
    {"avx512dq", "AVX-512DQ", 7, 17, XCR0_ZMM, "avx512"},
};
enum { FEATURES = sizeof features / sizeof features[0] };

/* Whether `word` is an item of the list `list` (separated by any of seps). */
static bool listed(const char *list, const char *word, const char *seps)
{
    const size_t n = strlen(word);
    for (const char *p = list; p && *p; p += strcspn(p, seps), p += *p != 0)
        if (!strncmp(p, word, n) && (p[n] == 0 || strchr(seps, p[n]))) return true;
    return false;
}

static bool needed(const cpu_feature *f)
{
    return !f->builds[0] || listed(f->builds, NGPT_ARCH_NAME, " ");
}

static bool present(const cpu_feature *f)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))   /* OSXSAVE: xgetbv works */
        return false;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & f->xcr0) != f->xcr0) return false;
    if (f->leaf == 1) return (c >> f->bit) & 1u;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (b >> f->bit) & 1u;
}

ngpt_status ngpt_cpu_check(void)
{
    const char *hide = getenv("NGPT_CPU_HIDE");
    char needs[160] = "", lacks[160] = "";
    bool hidden = false, lacks_avx2 = false, lacks_base = false;
    for (int i = 0; i < FEATURES; i++) {
        const cpu_feature *f = &features[i];
        if (!needed(f)) continue;
        snprintf(needs + strlen(needs), sizeof needs - strlen(needs), "%s%s", needs[0] ? ", " : "", f->label);
        const bool h = listed(hide, f->name, ",");
        if (!h && present(f)) continue;
        hidden |= h;
        lacks_avx2 |= !strcmp(f->name, "avx2");
        lacks_base |= !f->builds[0];
        snprintf(lacks + strlen(lacks), sizeof lacks - strlen(lacks), "%s%s", lacks[0] ? ", " : "", f->label);
    }
    if (!lacks[0]) return NGPT_OK;
    return ngpt_fail(NGPT_ERR_UNSUPPORTED,
                     "this library was built for the %s kernels, which need %s, but this CPU "
                     "lacks %s%s; %s", NGPT_ARCH_NAME, needs, lacks,
                     hidden ? " (NGPT_CPU_HIDE)" : "",
                     lacks_base ? "ngpt needs an x86-64 CPU with FMA (Haswell, Zen or later)"
                     : lacks_avx2 ? "build it for this CPU with make ARCH=scalar"
                                  : "build it for this CPU with make ARCH=avx2");
}

#else

ngpt_status ngpt_cpu_check(void) { return NGPT_OK; }

#endif
