/* bench.c — tokens/sec of the model at the default config (or --config),
 * printed with the build info, the thread count and the arena size, like
 * llama-bench, then each kernel at the default model's shapes (kernels.c).
 * Timings are wall-clock medians of several repetitions.
 *
 *   ngpt-bench [--reps N] [--config key=value ...]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "ngpt.h"

/* Median seconds of `reps` full forwards over (batch, seq). */
static int bench_forward(const ngpt_config *cfg, int batch, int seq, int reps, bool with_loss)
{
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = batch, shape.seq = seq;
    ngpt_context *ctx;
    ngpt_status st = ngpt_context_init(&ctx, cfg, &shape, NULL, 0);
    if (st) {
        fprintf(stderr, "bench: %s\n", ngpt_last_error());
        return 1;
    }
    ngpt_params_init(ctx, 42);
    size_t bytes = 0;
    ngpt_context_arena_used(ctx, &bytes);
    size_t n = (size_t)batch * seq;
    int32_t *tok = malloc(n * sizeof *tok), *tgt = malloc(n * sizeof *tgt);
    for (size_t i = 0; i < n; i++) tok[i] = (int32_t)((i * 31) % 256), tgt[i] = (int32_t)((i * 17) % 256);
    double t[64];
    if (reps > 64) reps = 64;
    float loss;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        st = ngpt_model_forward(ctx, tok, batch, seq, with_loss ? tgt : NULL, &loss);
        t[r] = bench_now() - t0;
        if (st) break;
    }
    if (!st) {
        double med = bench_median(t, reps);
        printf("| forward%s | %5d | %4d | %10.1f | %9.2f | %12zu |\n", with_loss ? "+loss" : "     ",
               batch, seq, (double)n / med, med * 1e3, bytes);
    }
    free(tok);
    free(tgt);
    ngpt_context_free(ctx);
    return st ? 1 : 0;
}

int main(int argc, char **argv)
{
    ngpt_config cfg = ngpt_config_default();
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1) reps = 1;
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            if (ngpt_config_set(&cfg, argv[++i])) {
                fprintf(stderr, "ngpt-bench: %s\n", ngpt_last_error());
                return 2;
            }
        } else {
            fprintf(stderr, "usage: ngpt-bench [--reps N] [--config key=value ...]\n");
            return 2;
        }
    }
    char desc[256];
    ngpt_config_format(&cfg, desc, sizeof desc);
    printf("%s\nconfig: %s\nthreads: 1, reps: %d (median)\n\n", ngpt_build_info(), desc, reps);
    printf("| op            | batch |  seq |   tokens/s |   ms/call |  arena bytes |\n");
    printf("|---------------|-------|------|------------|-----------|--------------|\n");
    int T = cfg.context_len;
    int rc = bench_forward(&cfg, 1, T, reps, false);
    rc |= bench_forward(&cfg, 8, T / 2 > 0 ? T / 2 : 1, reps, true);
    rc |= bench_kernels(reps);
    return rc;
}
