/* test_optim.c — learning-rate schedule, clipping, AdamW (first step against
 * its closed form, the weight-decay switch) and a 10-step training checksum
 * on the tiny config that must be the same on every build. */
#include <math.h>
#include <stdlib.h>

#include "test.h"

enum { B = 2, T = 16 };

static ngpt_config tiny(void)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 256, c.context_len = T, c.d_model = 32, c.n_layers = 2, c.n_heads = 4;
    c.d_ff = 64;    /* dropout stays 0.1: the checksum covers the recomputed masks */
    return c;
}

static const char text[] =
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a wife. However little known the feelings or views of "
    "such a man may be on his first entering a neighbourhood, this truth is so well fixed "
    "in the minds of the surrounding families, that he is considered the rightful property "
    "of some one or other of their daughters.";

static void check_schedule(void)
{
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.min_lr = 1e-4f, o.warmup = 10, o.total_steps = 110;
    float lr;
    CHECK_OK(ngpt_optim_config_lr(&o, 0, &lr));
    CHECK(lr == 0.0f, "step 0 of warmup: %g", (double)lr);
    CHECK_OK(ngpt_optim_config_lr(&o, 5, &lr));
    CHECK(lr == (float)(1e-3f * 5.0 / 10.0), "mid warmup: %g", (double)lr);
    CHECK_OK(ngpt_optim_config_lr(&o, 10, &lr));
    CHECK(lr == o.lr, "end of warmup: %g", (double)lr);
    for (int s = 10; s <= 130; s += 7) {
        CHECK_OK(ngpt_optim_config_lr(&o, s, &lr));
        double p = (s - 10) / 100.0;
        p = p > 1 ? 1 : p;
        double want = 1e-4f + (1e-3f - 1e-4f) * 0.5 * (1 + cos(3.14159265358979 * p));
        CHECK(fabs(lr - want) <= 1e-6 * want, "cosine at %d: %g want %g", s, (double)lr, want);
        CHECK(lr >= o.min_lr && lr <= o.lr, "step %d: %g outside [min, base]", s, (double)lr);
    }
    CHECK_OK(ngpt_optim_config_lr(&o, 1000, &lr));
    CHECK(lr == o.min_lr, "after the end: %g", (double)lr);
    CHECK_STATUS(ngpt_optim_config_lr(&o, -1, &lr), NGPT_ERR_BAD_ARG);
    o.min_lr = 2e-3f;
    CHECK_STATUS(ngpt_optim_config_lr(&o, 0, &lr), NGPT_ERR_BAD_ARG);
    o = ngpt_optim_config_default();
    o.beta2 = 1.0f;
    CHECK_STATUS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = ngpt_optim_config_default();
    o.accum = 0;
    CHECK_STATUS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_optim_config_validate(NULL), NGPT_ERR_NULL_ARG);
}

static ngpt_context *train_ctx(void)
{
    ngpt_config cfg = tiny();
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = B, sh.seq = T;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &sh, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 42));
    return ctx;
}

/* First step from zero moments: p1 = p0*(1 - lr*wd) - lr*g/(|g| + eps), ~ a sign step. */
static void check_first_step(bool decay_all)
{
    ngpt_context *ctx = train_ctx();
    if (!ctx) return;
    int32_t tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = (uint8_t)text[i], tgt[i] = (uint8_t)text[i + 1];
    ngpt_optim_config o = ngpt_optim_config_default();
    o.clip = 0.0f, o.decay_all = decay_all;
    float *w, *g, norm;
    size_t n;
    ngpt_context_params(ctx, &w, &n);
    float *w0 = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) w0[i] = w[i];
    CHECK_STATUS(ngpt_context_optim_step(ctx, &o, 1e-3f, &norm), NGPT_ERR_WRONG_MODE); /* no backward */
    CHECK_OK(ngpt_context_grads_zero(ctx));
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, NULL));
    CHECK_OK(ngpt_context_backward(ctx));
    ngpt_context_grads(ctx, &g, &n);
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (double)g[i] * g[i];
    CHECK_OK(ngpt_context_optim_step(ctx, &o, 1e-3f, &norm));
    CHECK(fabs(norm - sqrt(ss)) <= 1e-5 * sqrt(ss), "norm %g want %g", (double)norm, sqrt(ss));
    size_t bad = 0;
    for (int32_t t = 0; t < test_tensor_count(ctx); t++) {
        ngpt_tensor_info ti;
        ngpt_context_tensor_at(ctx, t, &ti);
        bool decays = decay_all || (ti.ndim == 2 && t != 0);
        for (size_t i = ti.offset; i < ti.offset + ti.count; i++) {
            double gi = g[i], den = fabs(gi) + 1e-8;
            double want = (double)w0[i] * (decays ? 1 - 1e-4 : 1) - 1e-3 * gi / den;
            double err = fabs(w[i] - want);
            if (err > 4e-7 * fabs(want) + 1e-9) {
                if (bad < 3) printf("  %s[%zu]: %.9g want %.9g (g %g)\n", ti.name, i - ti.offset, (double)w[i], want, gi);
                bad++;
            }
        }
    }
    CHECK(bad == 0, "decay_all=%d: %zu parameters differ from the closed-form first step",
          (int)decay_all, bad);
    uint64_t steps;
    CHECK_OK(ngpt_context_step_count(ctx, &steps));
    CHECK(steps == 1, "steps %llu", (unsigned long long)steps);
    /* a non-finite gradient is refused and leaves the parameters alone */
    uint64_t before, after;
    ngpt_context_params_checksum(ctx, &before);
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, NULL));
    CHECK_OK(ngpt_context_backward(ctx));
    g[3] = NAN;
    CHECK_STATUS(ngpt_context_optim_step(ctx, &o, 1e-3f, &norm), NGPT_ERR_NUMERIC);
    ngpt_context_params_checksum(ctx, &after);
    CHECK(before == after, "parameters changed after a refused step");
    free(w0);
    ngpt_context_free(ctx);
}

/* Clipping: with clip c below the norm the update uses g * c/(norm+1e-6). */
static void check_clip(void)
{
    ngpt_context *a = train_ctx(), *b = train_ctx();
    if (!a || !b) return;
    int32_t tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = (uint8_t)text[i + 7], tgt[i] = (uint8_t)text[i + 8];
    ngpt_optim_config o = ngpt_optim_config_default();
    float norm, *ga, *gb, *wa, *wb;
    size_t n;
    for (int s = 0; s < 2; s++) {   /* second step: moments differ if clipping is wrong */
        ngpt_context *c[2] = {a, b};
        for (int k = 0; k < 2; k++) {
            ngpt_context_grads_zero(c[k]);
            ngpt_context_forward(c[k], tok, B, T, tgt, NULL);
            ngpt_context_backward(c[k]);
        }
        ngpt_context_grads(a, &ga, &n);
        ngpt_context_grads(b, &gb, &n);
        double ss = 0;
        for (size_t i = 0; i < n; i++) ss += (double)ga[i] * ga[i];
        o.clip = (float)(0.25 * sqrt(ss));
        CHECK_OK(ngpt_context_optim_step(a, &o, 1e-3f, &norm));
        float coef = o.clip / (norm + 1e-6f);
        for (size_t i = 0; i < n; i++) gb[i] = gb[i] * coef;   /* pre-clipped by hand */
        o.clip = 0.0f;
        CHECK_OK(ngpt_context_optim_step(b, &o, 1e-3f, &norm));
    }
    ngpt_context_params(a, &wa, &n);
    ngpt_context_params(b, &wb, &n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += wa[i] != wb[i];
    CHECK(bad == 0, "%zu parameters differ between clipping and clipping by hand", bad);
    ngpt_context_free(a);
    ngpt_context_free(b);
}

/* 10 steps of ngpt_context_train_step on fixed text (dropout 0.1, warmup 3, accum 2):
 * the parameter checksum is a golden constant for every build. */
static void check_train_checksum(void)
{
    ngpt_context *ctx = train_ctx();
    if (!ctx) return;
    ngpt_data *d;
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text - 1, 0.1f, T));
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.min_lr = 1e-4f, o.warmup = 3, o.total_steps = 10, o.accum = 2;
    float loss = 0, first = 0, lr, norm;
    for (int s = 0; s < 10; s++) {
        CHECK_OK(ngpt_context_train_step(ctx, &o, d, 42, B, T, &loss, &lr, &norm));
        if (s == 0) first = loss;
    }
    uint64_t h;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    printf("10 steps: loss %.6f -> %.6f, params %016" PRIx64 "\n", (double)first, (double)loss, h);
    CHECK(loss < first, "loss did not fall: %g -> %g", (double)first, (double)loss);
    CHECK_HASH(h, UINT64_C(0x27ec106dc6ecf5d6));
    ngpt_data_free(d);
    ngpt_context_free(ctx);
}

int main(void)
{
    check_schedule();
    check_first_step(true);
    check_first_step(false);
    check_clip();
    check_train_checksum();
    return test_summary("test_optim");
}
