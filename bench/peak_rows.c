/* peak_rows.c — ngpt bench's FMA peak per thread count: the probe
 * (bench/peak.c) on N threads at once, timed like every figure, each call
 * about a kernel run long. */
#include <stdlib.h>

#include "bench.h"
#include "cmd_bench.h"

typedef struct probe_share {
    long iters;                 /* per chain */
    double flops;               /* what the probe did */
} probe_share;

typedef struct probe_job {
    int threads;
    long iters;
    double flops;               /* of the last call, all threads */
} probe_job;

static void *probe_thread(void *arg)
{
    probe_share *s = arg;
    s->flops = bench_fma_probe(s->iters);
    return NULL;
}

static ngpt_status run_probe(void *arg)
{
    probe_job *j = arg;
    probe_share *share = malloc((size_t)j->threads * sizeof *share);
    if (!share) return BENCH_ERR_MEMORY;
    for (int i = 0; i < j->threads; i++) share[i].iters = j->iters;
    ngpt_status st = bench_parallel(j->threads, probe_thread, share, sizeof *share);
    j->flops = 0;
    for (int i = 0; i < j->threads; i++) j->flops += share[i].flops;
    free(share);
    return st;
}

int bench_peak_count(const bench_opts *o) { return o->n_threads; }

ngpt_status bench_peaks(const bench_opts *o, bench_report *r)
{
    for (int t = 0; t < o->n_threads && r->n_peak < BENCH_MAX_THREADS; t++) {
        bench_peak *p = &r->peak[r->n_peak];
        probe_job j = {o->threads[t], 1 << 14, 0};
        char label[48];
        snprintf(label, sizeof label, "FMA peak probe, %d thread%s", j.threads, j.threads > 1 ? "s" : "");
        /* one call lasts about a kernel run: long enough to time, short under qemu */
        int reps;
        ngpt_status st = bench_calibrate(o, run_probe, &j, &reps);
        if (st) return st;
        j.iters *= reps;
        if ((st = bench_time(o, label, run_probe, &j, 1, &p->sec))) return st;
        p->threads = j.threads;
        p->flops = j.flops;
        r->n_peak++;
    }
    return NGPT_OK;
}
