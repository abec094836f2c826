/* wall_bench.c — decode against the memory wall, run by run (make
 * bench-wall; docs/BENCH.md, "Decode against a probe of the same minute").
 * A model larger than the caches decodes at the pace its weights stream
 * from memory, and a shared machine's bandwidth moves from one minute to
 * the next (by 1.5x on the 2-vCPU VMs we measure on). So each run here
 * reads the bench's probe array (bench/bandwidth.c, split over THREADS
 * threads like a decode; twice, the second pass timed) and then decodes TOKENS tokens from an empty
 * cache, and the figure is each run's decode bandwidth (the bench's
 * estimate of weight bytes a token, bench_weight_bytes, times tok/s) over
 * the probe's just before it: the median and range of those ratios, after
 * a warm-up run. The model file is mapped as apps open it; tokens are the
 * bench's fixed ones ((i*31+7) % V), no sampling.
 *
 *   ngpt-wall-bench MODEL [THREADS=1] [TOKENS=64] [RUNS=7]
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "ngpt_bench.h"

typedef struct part {
    const uint32_t *a;
    size_t n;
    uint32_t sum;               /* kept, so the loads are not dead */
} part;

static void *read_part(void *arg)
{
    part *p = arg;
    p->sum += bench_read_sum(p->a, p->n);
    return NULL;
}

/* GB/s of `threads` threads each summing its share of a[0..n), timed on
 * the second of two passes: the first read of the array after a decode
 * ran at 0.6x the second on an Intel Xeon VM (8 against 13 GB/s, one
 * thread), where a decode step re-reads weights it read a token ago. */
static double probe(const uint32_t *a, size_t n, int threads, part *parts)
{
    for (int t = 0; t < threads; t++) {
        const size_t b0 = n * (size_t)t / (size_t)threads, b1 = n * (size_t)(t + 1) / (size_t)threads;
        parts[t].a = a + b0, parts[t].n = b1 - b0;
    }
    if (bench_parallel(threads, read_part, parts, sizeof *parts)) return 0;
    const double t0 = bench_now();
    if (bench_parallel(threads, read_part, parts, sizeof *parts)) return 0;
    return (double)(n * sizeof *a) / (bench_now() - t0) * 1e-9;
}

static int fail(const char *what)
{
    fprintf(stderr, "ngpt-wall-bench: %s: %s\n", what, ngpt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: ngpt-wall-bench MODEL [THREADS=1] [TOKENS=64] [RUNS=7]\n");
        return 2;
    }
    const int threads = argc > 2 ? atoi(argv[2]) : 1, steps = argc > 3 ? atoi(argv[3]) : 64,
              runs = argc > 4 ? atoi(argv[4]) : 7;
    if (threads < 1 || threads > 256 || steps < 1 || runs < 1) {
        fprintf(stderr, "ngpt-wall-bench: THREADS must be 1..256, TOKENS and RUNS at least 1\n");
        return 2;
    }
    ngpt_model *m = NULL;
    ngpt_context *ctx = NULL;
    ngpt_config cfg;
    if (ngpt_model_open(&m, argv[1]) || ngpt_model_config(m, &cfg)) return fail(argv[1]);
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.threads = threads;
    if (ngpt_context_init(&ctx, m, NULL, &shape, NULL, 0)) return fail("context");
    const double bytes = bench_weight_bytes(ctx, &cfg);
    const size_t n = bench_read_probe_bytes() / sizeof(uint32_t);
    uint32_t *a = bench_read_array(n);
    int32_t *tok = malloc((size_t)steps * sizeof *tok);
    double *ratio = malloc((size_t)runs * sizeof *ratio), *bw = malloc((size_t)runs * sizeof *bw);
    part *parts = calloc((size_t)threads, sizeof *parts);
    if (!a || !tok || !ratio || !bw || !parts) {
        fprintf(stderr, "ngpt-wall-bench: out of memory\n");
        return 1;
    }
    for (int i = 0; i < steps; i++) tok[i] = (int32_t)(((int64_t)i * 31 + 7) % cfg.vocab_size);
    printf("%s: %.1f MB of weights a token, %d thread%s, %d tokens a run; probe %zu MiB\n", argv[1],
           bytes * 1e-6, threads, threads > 1 ? "s" : "", steps, n * sizeof *a >> 20);
    printf("run  probe GB/s  decode tok/s  decode GB/s  decode / probe\n");
    for (int r = -1; r < runs; r++) {           /* r = -1: the warm-up */
        const double gbs = probe(a, n, threads, parts);
        if (gbs <= 0) {
            fprintf(stderr, "ngpt-wall-bench: cannot start the probe's threads\n");
            return 1;
        }
        const double t0 = bench_now();
        if (ngpt_context_cache_clear(ctx, -1)) return fail("cache clear");
        for (int i = 0; i < steps; i++)
            if (ngpt_context_cache_decode(ctx, tok + i, 1)) return fail("decode");
        const double tok_s = steps / (bench_now() - t0), dec = bytes * tok_s * 1e-9;
        if (r < 0) continue;
        ratio[r] = dec / gbs, bw[r] = gbs;
        printf("%3d  %10.2f  %12.1f  %11.2f  %14.3f\n", r + 1, gbs, tok_s, dec, ratio[r]);
    }
    double med, lo, hi, bw_med, bw_lo, bw_hi;
    bench_stats(ratio, runs, &med, &lo, &hi);
    bench_stats(bw, runs, &bw_med, &bw_lo, &bw_hi);
    printf("decode / probe: median %.3f (%.3f - %.3f) over %d runs; probe %.2f - %.2f GB/s\n", med,
           lo, hi, runs, bw_lo, bw_hi);
    ngpt_context_free(ctx);
    ngpt_model_close(m);
    free(a), free(tok), free(ratio), free(bw), free(parts);
    return 0;
}
