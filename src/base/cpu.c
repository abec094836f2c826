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
#include <stdatomic.h>

/* A feature: its cpuid bit (leaf 1 ecx, or leaf 7 subleaf 0 ebx or ecx),
 * the register state the OS must save for it (XCR0 bits), which builds need
 * it (a list of ARCH names, "" for every x86-64 build), and what to do
 * without it (the advice of the first feature missing). */
typedef struct cpu_feature {
    const char *name, *label;
    unsigned leaf;
    char reg;       /* 'b' or 'c': the register of leaf 7 holding the bit */
    unsigned bit, xcr0;
    const char *builds, *instead;
} cpu_feature;

enum { XCR0_YMM = 0x6, XCR0_ZMM = 0xe6 };   /* SSE+AVX state; + opmask and zmm */

#define NO_X86_64 "ngpt needs an x86-64 CPU with FMA (Haswell, Zen or later)"
#define NO_AVX2 "build it for this CPU with make ARCH=scalar"
#define NO_AVX512 "build it for this CPU with make ARCH=avx2"
#define NO_VNNI "build it for this CPU with make ARCH=avx512 VNNI=0"

static const cpu_feature features[] = {
    {"fma", "FMA", 1, 'c', 12, XCR0_YMM, "", NO_X86_64},
    {"avx", "AVX", 1, 'c', 28, XCR0_YMM, "", NO_X86_64},
    {"avx2", "AVX2", 7, 'b', 5, XCR0_YMM, "avx2 avx512", NO_AVX2},
    {"avx512f", "AVX-512F", 7, 'b', 16, XCR0_ZMM, "avx512", NO_AVX512},
    {"avx512bw", "AVX-512BW", 7, 'b', 30, XCR0_ZMM, "avx512", NO_AVX512},
    {"avx512vl", "AVX-512VL", 7, 'b', 31, XCR0_ZMM, "avx512", NO_AVX512},
    {"avx512dq", "AVX-512DQ", 7, 'b', 17, XCR0_ZMM, "avx512", NO_AVX512},
#if defined(NGPT_ARCH_VNNI)     /* the Makefile's VNNI=1: arch/avx512 has -mavx512vnni */
    {"avx512vnni", "AVX-512 VNNI", 7, 'c', 11, XCR0_ZMM, "avx512", NO_VNNI},
#endif
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
    return ((f->reg == 'b' ? b : c) >> f->bit) & 1u;
}

/* Which features this CPU has (bit i: features[i]; bit FEATURES: asked
 * already), asked once per process: in a virtual machine every cpuid traps
 * to the hypervisor (24 us each on a KVM guest), and the check runs at
 * every context made and model opened. The answer never changes, so
 * threads racing here store the same value. */
static unsigned present_features(void)
{
    static atomic_uint known;
    unsigned mask = atomic_load_explicit(&known, memory_order_relaxed);
    if (!mask) {
        mask = 1u << FEATURES;
        for (int i = 0; i < FEATURES; i++) mask |= (unsigned)present(&features[i]) << i;
        atomic_store_explicit(&known, mask, memory_order_relaxed);
    }
    return mask;
}

ngpt_status ngpt_cpu_check(void)
{
    const char *hide = getenv("NGPT_CPU_HIDE");
    char needs[200] = "", lacks[200] = "";
    const char *instead = NULL;
    bool hidden = false;
    for (int i = 0; i < FEATURES; i++) {
        const cpu_feature *f = &features[i];
        if (!needed(f)) continue;
        snprintf(needs + strlen(needs), sizeof needs - strlen(needs), "%s%s", needs[0] ? ", " : "", f->label);
        const bool h = listed(hide, f->name, ",");
        if (!h && (present_features() >> i & 1u)) continue;
        hidden |= h;
        if (!instead) instead = f->instead;
        snprintf(lacks + strlen(lacks), sizeof lacks - strlen(lacks), "%s%s", lacks[0] ? ", " : "", f->label);
    }
    if (!instead) return NGPT_OK;
    return ngpt_fail(NGPT_ERR_UNSUPPORTED,
                     "this library was built for the %s kernels, which need %s, but this CPU "
                     "lacks %s%s; %s", NGPT_ARCH_NAME, needs, lacks,
                     hidden ? " (NGPT_CPU_HIDE)" : "", instead);
}

#else

ngpt_status ngpt_cpu_check(void) { return NGPT_OK; }

#endif
