/* peak_rows.c — ngpt bench's FMA peak per thread count: the probe
 * (bench/peak.c) on N threads at once, timed like every figure, each call
 * about a kernel run long. The peak is the CPU's widest FMA; a build whose
 * kernels use a narrower one (AVX2 on an AVX-512 CPU) also gets that
 * probe's row, to show what its width leaves. */
#include <stdlib.h>

#include "bench.h"
#include "ngpt_bench.h"

typedef double (*probe_fn)(long iters);

typedef struct probe_share {
    probe_fn probe;
    long iters;                 /* per chain */
    double flops;               /* what the probe did */
} probe_share;

typedef struct probe_job {
    probe_fn probe;
    int threads;
    long iters;
    double flops;               /* of the last call, all threads */
} probe_job;

static void *probe_thread(void *arg)
{
    probe_share *s = arg;
    s->flops = s->probe(s->iters);
    return NULL;
}

static ngpt_status run_probe(void *arg)
{
    probe_job *j = arg;
    probe_share *share = malloc((size_t)j->threads * sizeof *share);
    if (!share) return BENCH_ERR_MEMORY;
    for (int i = 0; i < j->threads; i++) share[i].probe = j->probe, share[i].iters = j->iters;
    ngpt_status st = bench_parallel(j->threads, probe_thread, share, sizeof *share);
    j->flops = 0;
    for (int i = 0; i < j->threads; i++) j->flops += share[i].flops;
    free(share);
    return st;
}

/* Probes per thread count: the peak, and the kernels' width when narrower. */
static int probes(void) { return bench_fma_kernels_widest() ? 1 : 2; }

int bench_peak_count(const bench_opts *o) { return o->n_threads * probes(); }

ngpt_status bench_peaks(const bench_opts *o, bench_report *r)
{
    for (int t = 0; t < o->n_threads; t++)
        for (int k = 0; k < probes() && r->n_peak < 2 * BENCH_MAX_THREADS; k++) {
            bench_peak *p = &r->peak[r->n_peak];
            probe_job j = {k ? bench_fma_probe_kernels : bench_fma_probe, o->threads[t], 1 << 14, 0};
            char label[64];
            snprintf(label, sizeof label, "FMA %s probe, %d thread%s", k ? "kernels'" : "peak",
                     j.threads, j.threads > 1 ? "s" : "");
            /* one call lasts about a kernel run: long enough to time, short under qemu */
            int reps;
            ngpt_status st = bench_calibrate(o, run_probe, &j, &reps);
            if (st) return st;
            j.iters *= reps;
            if ((st = bench_time(o, label, run_probe, &j, 1, &p->sec))) return st;
            p->threads = j.threads;
            p->kernels = k == 1;
            p->flops = j.flops;
            r->n_peak++;
        }
    return NGPT_OK;
}
