/* peak.c — the FMA peak probe (bench.h): the floating-point peak of this
 * core with no memory traffic, to set kernel rates against a peak measured
 * in the same run (same clock, same load). Two probes (the same one when
 * they coincide):
 *  - the CPU's widest FMA, the peak every "% of peak" is set against: on
 *    x86-64 512-bit (bench/peak_avx512.c) when cpuid says AVX-512F, else
 *    256-bit (the -mfma baseline); NEON on ARM (4 lanes; ARMv7 too);
 *    scalar fmaf elsewhere;
 *  - the FMA of the build's kernels: AVX2 8 lanes, AVX-512 16, NEON 4,
 *    the scalar reference fmaf.
 * The bodies are bench/peak_probe.h. */
#include <math.h>
#include <string.h>

#include "bench.h"
#include "kernels.h"
#include "peak_probe.h"

#define SCALAR_FMA(acc, a, b) fmaf(acc, a, b)
#define SCALAR_SET(x) (x)
#define SCALAR_LANE0(x) (x)
static PEAK_PROBE(probe_scalar, float, 1, SCALAR_SET, SCALAR_FMA, SCALAR_LANE0)

#if defined(__x86_64__) && defined(__FMA__)
#include <immintrin.h>
#define YMM_FMA(acc, a, b) _mm256_fmadd_ps(acc, a, b)
static PEAK_PROBE(probe_vector, __m256, 8, _mm256_set1_ps, YMM_FMA, _mm256_cvtss_f32)
double bench_fma_probe_zmm(long iters);     /* bench/peak_avx512.c */
#define VECTOR_ISA "AVX2 FMA, 8 lanes"
#define HAVE_VECTOR_PROBE 1
#elif defined(__ARM_NEON) && (defined(__aarch64__) || defined(__ARM_FEATURE_FMA))
#include <arm_neon.h>
#define NEON_FMA(acc, a, b) vfmaq_f32(b, acc, a)
#define NEON_LANE0(v) vgetq_lane_f32(v, 0)
static PEAK_PROBE(probe_vector, float32x4_t, 4, vdupq_n_f32, NEON_FMA, NEON_LANE0)
#define VECTOR_ISA "NEON FMA, 4 lanes"
#define HAVE_VECTOR_PROBE 1
#endif

typedef enum { PROBE_SCALAR, PROBE_VECTOR, PROBE_ZMM } probe_kind;

#ifndef VECTOR_ISA
#define VECTOR_ISA "scalar fmaf"   /* no vector probe: never chosen */
#endif
static const char *const probe_names[] = {"scalar fmaf", VECTOR_ISA, "AVX-512 FMA, 16 lanes"};

static probe_kind widest(void)
{
#if defined(__x86_64__) && defined(__FMA__)     /* cpuid, with the OS's support of zmm state */
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? PROBE_ZMM : PROBE_VECTOR;
#elif defined(HAVE_VECTOR_PROBE)
    return PROBE_VECTOR;
#else
    return PROBE_SCALAR;
#endif
}

/* The FMA the active kernel table computes with (never wider than the
 * CPU's: an avx512 build on a CPU without it runs no kernel at all). */
static probe_kind kernels(void)
{
    const char *k = ngpt_kernels_active.name;
    probe_kind p = PROBE_SCALAR;
    if (!strcmp(k, "avx512")) p = PROBE_ZMM;
    else if (!strcmp(k, "avx2") || !strcmp(k, "neon")) p = PROBE_VECTOR;
    return p > widest() ? widest() : p;
}

static double run(probe_kind p, long iters)
{
    switch (p) {
#ifdef HAVE_VECTOR_PROBE
    case PROBE_VECTOR: return probe_vector(iters);
#endif
#if defined(__x86_64__) && defined(__FMA__)
    case PROBE_ZMM: return bench_fma_probe_zmm(iters);
#endif
    default: return probe_scalar(iters);
    }
}

double bench_fma_probe(long iters) { return run(widest(), iters); }
const char *bench_fma_isa(void) { return probe_names[widest()]; }
double bench_fma_probe_kernels(long iters) { return run(kernels(), iters); }
const char *bench_fma_isa_kernels(void) { return probe_names[kernels()]; }
bool bench_fma_kernels_widest(void) { return kernels() == widest(); }
