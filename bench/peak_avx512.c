/* peak_avx512.c — the FMA peak probe in 512-bit registers (16 lanes,
 * _mm512_fmadd_ps), the one file of the bench layer compiled with AVX-512
 * flags (x86-64 builds, whatever their kernels): bench/peak.c runs it only
 * when cpuid says the CPU has AVX-512F. */
#include <immintrin.h>

#include "peak_probe.h"

double bench_fma_probe_zmm(long iters);

#define ZMM_FMA(acc, a, b) _mm512_fmadd_ps(acc, a, b)
PEAK_PROBE(bench_fma_probe_zmm, __m512, 16, _mm512_set1_ps, ZMM_FMA, _mm512_cvtss_f32)
