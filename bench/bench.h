/* bench.h — the bench layer (bench/), linked into `ngpt bench` and the
 * microbenchmarks: the clock, the statistics of timed runs, the FMA peak
 * probe and the read-bandwidth probe, in one place. Like the tests it sits
 * below the public API, but it calls only kernels, never the model
 * (tests/test_structure.sh). */
#ifndef NGPT_BENCH_H
#define NGPT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

double bench_now(void);                 /* seconds, monotonic */

/* Sorts t[0..n) (n >= 1) and gives its median (the mean of the middle two
 * for an even n), its min and its max. */
void bench_stats(double *t, int n, double *median, double *min, double *max);
double bench_median(double *t, int n);  /* bench_stats' median */

/* The FMA peak probe: 12 independent chains of `iters` dependent FMAs each,
 * touching no memory, in the widest FMA vector this CPU executes
 * (bench_fma_isa: on x86-64 AVX-512 when cpuid says so, whatever the
 * build's kernels). Returns the flops done; time it to get the arithmetic
 * peak of the core it runs on (run it on N threads at once for N cores).
 * Every "% of peak" is against it. */
double bench_fma_probe(long iters);
/* "AVX-512 FMA, 16 lanes", "AVX2 FMA, 8 lanes", "NEON FMA, 4 lanes" or
 * "scalar fmaf". */
const char *bench_fma_isa(void);
/* The same probe in the FMA of the build's kernels (an AVX2 build on an
 * AVX-512 CPU: 8 lanes; the scalar reference: fmaf), and whether that is
 * the widest one. */
double bench_fma_probe_kernels(long iters);
const char *bench_fma_isa_kernels(void);
bool bench_fma_kernels_widest(void);

/* The read-bandwidth probe (bench/bandwidth.c): the wrapping sum of a[0..n)
 * with 32 independent lanes, loads the compiler vectorises; time it on an
 * array no cache holds for one core's read bandwidth. */
uint32_t bench_read_sum(const uint32_t *a, size_t n);
/* The probe's default array: 4x the last-level cache (sysconf, where the
 * C library says), at least 512 MiB. */
size_t bench_read_probe_bytes(void);
/* n words for the probe: written (no page fault is timed) and advised huge
 * pages like the library's weights; NULL if out of memory (free() it). */
uint32_t *bench_read_array(size_t n);

#endif
