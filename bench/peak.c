/* peak.c — the FMA peak probe (bench.h): the floating-point peak this
 * build's ISA reaches on this core, with no memory traffic, to set kernel
 * rates against a peak measured in the same run (same clock, same load).
 * Independent FMA chains in the widest vector the build's flags allow: AVX2
 * (8 lanes), NEON (4 lanes; AArch64 and ARMv7 builds) or scalar fmaf. */
#include <math.h>
#include <stdlib.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define PROBE_LANES 8
#elif defined(__ARM_NEON) && (defined(__aarch64__) || defined(__ARM_FEATURE_FMA))
#include <arm_neon.h>
#define PROBE_LANES 4
#else
#define PROBE_LANES 1
#endif

#include "bench.h"

/* 12 chains, each in its own register (with the two constants, 14 of the 16
 * vector registers x86 and ARMv7 have): enough to cover the FMA latency
 * times the FMA ports of current cores (4 cycles x 2-3 ports), written out
 * so that no compiler keeps them in memory. */
enum { CHAINS = 12 };

#if PROBE_LANES == 8
typedef __m256 vec;
#define VSET(x) _mm256_set1_ps(x)
#define VFMA(acc, a, b) _mm256_fmadd_ps(acc, a, b)
#define VLANE0(v) _mm256_cvtss_f32(v)
#elif PROBE_LANES == 4
typedef float32x4_t vec;
#define VSET(x) vdupq_n_f32(x)
#define VFMA(acc, a, b) vfmaq_f32(b, acc, a)
#define VLANE0(v) vgetq_lane_f32(v, 0)
#else
typedef float vec;
#define VSET(x) (x)
#define VFMA(acc, a, b) fmaf(acc, a, b)
#define VLANE0(v) (v)
#endif

static volatile float sink;

/* CHAINS chains of `iters` dependent FMAs each; x = x*a + b stays finite. */
double bench_fma_probe(long iters)
{
    const vec a = VSET(0.999999f), b = VSET(1e-6f);
    vec c0 = VSET(0.f), c1 = VSET(1.f), c2 = VSET(2.f), c3 = VSET(3.f), c4 = VSET(4.f),
        c5 = VSET(5.f), c6 = VSET(6.f), c7 = VSET(7.f), c8 = VSET(8.f), c9 = VSET(9.f),
        c10 = VSET(10.f), c11 = VSET(11.f);
    for (long i = 0; i < iters; i++) {
        c0 = VFMA(c0, a, b), c1 = VFMA(c1, a, b), c2 = VFMA(c2, a, b), c3 = VFMA(c3, a, b);
        c4 = VFMA(c4, a, b), c5 = VFMA(c5, a, b), c6 = VFMA(c6, a, b), c7 = VFMA(c7, a, b);
        c8 = VFMA(c8, a, b), c9 = VFMA(c9, a, b), c10 = VFMA(c10, a, b), c11 = VFMA(c11, a, b);
    }
    sink = VLANE0(c0) + VLANE0(c1) + VLANE0(c2) + VLANE0(c3) + VLANE0(c4) + VLANE0(c5) +
           VLANE0(c6) + VLANE0(c7) + VLANE0(c8) + VLANE0(c9) + VLANE0(c10) + VLANE0(c11);
    return 2.0 * PROBE_LANES * CHAINS * (double)(iters > 0 ? iters : 0);
}

const char *bench_fma_isa(void)
{
    return PROBE_LANES == 8 ? "AVX2 FMA, 8 lanes" : PROBE_LANES == 4 ? "NEON FMA, 4 lanes" : "scalar fmaf";
}

