/* bench.h — the bench layer (bench/), linked into `ngpt bench` and the
 * microbenchmarks: the clock, the statistics of timed runs and the FMA peak
 * probe, in one place. Like the tests it sits below the public API, but it
 * calls only kernels, never the model (tests/test_structure.sh). */
#ifndef NGPT_BENCH_H
#define NGPT_BENCH_H

double bench_now(void);                 /* seconds, monotonic */

/* Sorts t[0..n) (n >= 1) and gives its median (the mean of the middle two
 * for an even n), its min and its max. */
void bench_stats(double *t, int n, double *median, double *min, double *max);
double bench_median(double *t, int n);  /* bench_stats' median */

/* The FMA peak probe: 12 independent chains of `iters` dependent FMAs each,
 * in the widest FMA vector the build's flags allow (bench_fma_isa), touching
 * no memory. Returns the flops done; time it to get the arithmetic peak of
 * the core it runs on (run it on N threads at once for N cores). */
double bench_fma_probe(long iters);
/* "AVX2 FMA, 8 lanes", "NEON FMA, 4 lanes" or "scalar fmaf". */
const char *bench_fma_isa(void);

#endif
