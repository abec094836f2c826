/* bench.h — what the bench's files share: the clock and the median. */
#ifndef NGPT_BENCH_H
#define NGPT_BENCH_H

double bench_now(void);                 /* seconds, monotonic */
double bench_median(double *t, int n);  /* sorts t[0..n) */
int bench_kernels(int reps);            /* kernels.c: the per-kernel table */

#endif
