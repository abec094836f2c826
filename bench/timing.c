/* timing.c — the bench's clock and the statistics of its timed runs. */
#include <stdlib.h>
#include <time.h>

#include "bench.h"

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_stats(double *t, int n, double *median, double *min, double *max)
{
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    *median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    *min = t[0];
    *max = t[n - 1];
}

double bench_median(double *t, int n)
{
    double median, min, max;
    bench_stats(t, n, &median, &min, &max);
    return median;
}
