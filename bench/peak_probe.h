/* peak_probe.h — the body of the FMA peak probe (bench/peak.c,
 * bench/peak_avx512.c): PEAK_PROBE(name, vec, lanes, set, fma, lane0)
 * defines `double name(long iters)`, 12 independent chains of `iters`
 * dependent FMAs each in the vector type `vec` of `lanes` floats, touching
 * no memory; it returns the flops done. 12 chains, each in its own register
 * (with the two constants, 14 of the 16 vector registers x86 and ARMv7
 * have), cover the FMA latency times the FMA ports of current cores (4
 * cycles x 2-3 ports), written out so that no compiler keeps them in
 * memory; x = x*a + b stays finite. */
#ifndef NGPT_PEAK_PROBE_H
#define NGPT_PEAK_PROBE_H

#define PEAK_PROBE(name, vec, lanes, set, fma, lane0)                                       \
    double name(long iters)                                                                 \
    {                                                                                       \
        static volatile float sink;                                                         \
        const vec a = set(0.999999f), b = set(1e-6f);                                       \
        vec c0 = set(0.f), c1 = set(1.f), c2 = set(2.f), c3 = set(3.f), c4 = set(4.f),      \
            c5 = set(5.f), c6 = set(6.f), c7 = set(7.f), c8 = set(8.f), c9 = set(9.f),      \
            c10 = set(10.f), c11 = set(11.f);                                               \
        for (long i = 0; i < iters; i++) {                                                  \
            c0 = fma(c0, a, b), c1 = fma(c1, a, b), c2 = fma(c2, a, b), c3 = fma(c3, a, b); \
            c4 = fma(c4, a, b), c5 = fma(c5, a, b), c6 = fma(c6, a, b), c7 = fma(c7, a, b); \
            c8 = fma(c8, a, b), c9 = fma(c9, a, b), c10 = fma(c10, a, b);                   \
            c11 = fma(c11, a, b);                                                           \
        }                                                                                   \
        sink = lane0(c0) + lane0(c1) + lane0(c2) + lane0(c3) + lane0(c4) + lane0(c5) +      \
               lane0(c6) + lane0(c7) + lane0(c8) + lane0(c9) + lane0(c10) + lane0(c11);     \
        (void)sink;                                                                         \
        return 2.0 * (lanes) * 12 * (double)(iters > 0 ? iters : 0);                        \
    }

#endif
