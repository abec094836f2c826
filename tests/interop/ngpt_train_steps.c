/* ngpt_train_steps.c — the C side of the training-continuation interop test
 * (make test-interop, built once the training API is in include/ngpt.h):
 *
 *   ngpt_train_steps IN.ngpt OUT.ngpt STEPS LR WINDOWS.i32 B T
 *
 * Continues IN in a training context made from it (ngpt_context_init: a
 * model-only file starts fresh moments at step 0), runs STEPS optimizer
 * steps at constant learning rate LR on the same batch, dropout off:
 * zero_grads, forward, backward, clip 1.0 + AdamW (betas 0.9/0.95, eps
 * 1e-8, weight decay 0.1 on every parameter, like torch.optim.AdamW +
 * clip_grad_norm_), and saves OUT with ngpt_context_save_train.
 * WINDOWS.i32 holds B windows of T+1 int32 tokens: x = w[:-1], y = w[1:].
 * Prints "step <n> loss <loss before the step>" per step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngpt.h"

static int fail(const char *what)
{
    fprintf(stderr, "ngpt_train_steps: %s: %s\n", what, ngpt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: ngpt_train_steps IN.ngpt OUT.ngpt STEPS LR WINDOWS.i32 B T\n");
        return 2;
    }
    const int steps = atoi(argv[3]), B = atoi(argv[6]), T = atoi(argv[7]);
    const float lr = strtof(argv[4], NULL);
    if (steps < 1 || B < 1 || T < 1) return 2;
    ngpt_model *model;
    ngpt_train_state ts;
    if (ngpt_model_open(&model, argv[1]) || ngpt_model_train_state(model, &ts))
        return fail(argv[1]);
    size_t n = (size_t)B * (size_t)(T + 1);
    int32_t *w = malloc(n * sizeof *w), *x = malloc((size_t)B * T * sizeof *x),
            *y = malloc((size_t)B * T * sizeof *y);
    FILE *f = fopen(argv[5], "rb");
    if (!w || !x || !y || !f || fread(w, sizeof *w, n, f) != n) {
        fprintf(stderr, "ngpt_train_steps: %s: cannot read %zu int32 tokens\n", argv[5], n);
        return 1;
    }
    fclose(f);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            x[b * T + t] = w[b * (T + 1) + t];
            y[b * T + t] = w[b * (T + 1) + t + 1];
        }
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_TRAIN);
    shape.batch = B;
    shape.seq = T;
    ngpt_context *ctx;
    if (ngpt_context_init(&ctx, model, NULL, &shape, NULL, 0)) return fail(argv[1]);
    ngpt_optim_config opt = ngpt_optim_config_default();
    opt.lr = lr, opt.min_lr = lr, opt.warmup = 0;
    ts.opt = opt, ts.batch = B, ts.seq = T;
    if (!ts.has_state) ts.seed = 42;
    uint64_t step0;
    ngpt_context_step_count(ctx, &step0);
    for (int s = 0; s < steps; s++) {
        float loss, norm;
        if (ngpt_context_dropout_set(ctx, false, 0, 0) || ngpt_context_grads_zero(ctx) ||
            ngpt_context_forward(ctx, x, B, T, y, &loss) || ngpt_context_backward(ctx) ||
            ngpt_context_optim_step(ctx, &opt, lr, &norm))
            return fail("train step");
        printf("step %llu loss %.9g\n", (unsigned long long)(step0 + (uint64_t)s + 1), loss);
    }
    if (ngpt_context_save_train(ctx, argv[2], &ts)) return fail(argv[2]);
    ngpt_context_free(ctx);
    ngpt_model_close(model);
    free(w), free(x), free(y);
    return 0;
}
