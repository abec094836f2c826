/* bandwidth_rows.c — ngpt bench's read bandwidth: the probe
 * (bench/bandwidth.c) over o->bandwidth_bytes of memory written first (no
 * page fault is timed), on one thread and, when --threads has a count of 2
 * or more, on two at once (each summing its half: what two decoding
 * threads can read), timed like every figure;
 * decode's bytes of weights per token are set against the probe of its
 * thread count (report.c). */
#include <stdint.h>
#include <stdlib.h>

#include "bench.h"
#include "ngpt_bench.h"

typedef struct read_job {
    const uint32_t *a;
    size_t n;
    uint32_t sum;               /* kept, so the loads are not dead */
} read_job;

static ngpt_status run_read(void *arg)
{
    read_job *j = arg;
    j->sum += bench_read_sum(j->a, j->n);
    return NGPT_OK;
}

static void *read_half(void *arg)
{
    run_read(arg);
    return NULL;
}

/* Both halves at once: each thread is started per call, as a call's two
 * pool threads would already be (the start is microseconds, the sum
 * hundreds of milliseconds). */
static ngpt_status run_read_two(void *arg)
{
    return bench_parallel(2, read_half, arg, sizeof(read_job));
}

size_t bench_bandwidth_default_bytes(void) { return bench_read_probe_bytes(); }

/* The two-thread probe: only when a figure runs on two threads or more (the
 * one it is set against). */
static bool two_threads(const bench_opts *o)
{
    for (int t = 0; t < o->n_threads; t++)
        if (o->threads[t] >= 2) return true;
    return false;
}

int bench_bandwidth_count(const bench_opts *o)
{
    return o->bandwidth_bytes > 0 ? 1 + two_threads(o) : 0;
}

ngpt_status bench_bandwidth(const bench_opts *o, bench_report *r)
{
    if (!o->bandwidth_bytes) return NGPT_OK;
    const size_t n = o->bandwidth_bytes / sizeof(uint32_t);
    uint32_t *a = bench_read_array(n);
    if (!a) return BENCH_ERR_MEMORY;
    read_job j = {a, n, 0};
    char label[64];
    snprintf(label, sizeof label, "read bandwidth probe, %zu MiB", n * sizeof *a >> 20);
    ngpt_status st = bench_time(o, label, run_read, &j, 0, &r->read_bw.sec);
    if (!st) r->read_bw.bytes = n * sizeof *a;
    read_job halves[2] = {{a, n / 2, 0}, {a + n / 2, n - n / 2, 0}};
    snprintf(label, sizeof label, "read bandwidth probe, %zu MiB, 2 threads", n * sizeof *a >> 20);
    if (!st && two_threads(o) && !(st = bench_time(o, label, run_read_two, halves, 0, &r->read_bw2.sec)))
        r->read_bw2.bytes = n * sizeof *a;
    free(a);
    return st;
}
