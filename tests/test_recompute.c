/* test_recompute.c — the training arena's two savings (ngpt_shape.recompute
 * and loss_chunk): recomputing each block in the backward gives the same
 * bits as keeping every layer's activations, for full training and for a
 * LoRA adapter, every model variant, dropout on; a chunked loss gives the
 * same loss and every gradient's bits but a trained lm_head's (whose sum
 * over rows goes chunk by chunk: within float rounding), and an adapter's
 * training all of them; both shrink the arena; and their refusals. */
#include <math.h>
#include <unistd.h>

#include "test.h"

enum { B = 3, T = 16, STEPS = 3 };

#define LLAMA "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 mlp=swiglu mlp_bias=0 " \
              "rope_pairs=halves tie_lm_head=0"

static char path[200], apath[200];

static ngpt_config tiny(const char *variant)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 256, c.context_len = T, c.d_model = 32, c.n_layers = 3, c.n_heads = 4;
    c.d_ff = 64, c.dropout = 0.1f;
    CHECK(test_config_apply(&c, variant), "config %s: %s", variant, ngpt_last_error());
    return c;
}

static void batch(int step, int32_t *tok, int32_t *tgt)
{
    uint32_t s = 99u + (uint32_t)step;
    for (int i = 0; i < B * T; i++) {
        s = s * 1664525u + 1013904223u;
        tok[i] = (int32_t)(s >> 24), tgt[i] = (tok[i] * 7 + 3) % 256;
    }
}

/* STEPS AdamW steps (dropout on); the gradients of the last step's backward
 * copied to grads (n floats), its losses summed in *loss. */
static void run(ngpt_context *ctx, float *grads, size_t n, double *loss)
{
    ngpt_optim_config o = ngpt_optim_config_default();
    o.warmup = 0;
    *loss = 0;
    for (int s = 0; s < STEPS; s++) {
        int32_t tok[B * T], tgt[B * T];
        batch(s, tok, tgt);
        float l = 0;
        CHECK_OK(ngpt_context_grads_zero(ctx));
        CHECK_OK(ngpt_context_dropout_set(ctx, true, 5, (uint64_t)s));
        CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, &l));
        CHECK_OK(ngpt_context_backward(ctx));
        *loss += l;
        float *g;
        size_t ng;
        CHECK_OK(ngpt_context_grads(ctx, &g, &ng));
        if (s == STEPS - 1 && g && ng == n) memcpy(grads, g, n * sizeof(float));
        if (s < STEPS - 1) CHECK_OK(ngpt_context_optim_step(ctx, &o, 1e-3f, NULL));
    }
}

/* A context of m (an adapter's, or the model's copy) with recompute and
 * loss_chunk; its arena size in *bytes. */
static ngpt_context *make(ngpt_model *m, const ngpt_adapter *ad, int recompute, int chunk,
                          size_t *bytes)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = B, s.seq = T, s.threads = 2, s.adapter = ad, s.recompute = recompute;
    s.loss_chunk = chunk;
    ngpt_config cfg;
    CHECK_OK(ngpt_model_config(m, &cfg));
    const ngpt_config *c = ad ? NULL : &cfg;
    CHECK_OK(ngpt_context_arena_size(m, c, &s, bytes));
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, m, c, &s, NULL, 0));
    return ctx;
}

/* The variants of one model: plain, recompute, chunked (13 rows: the last
 * chunk short), both; with an adapter or the model itself trained. */
static void check(const char *variant, bool lora)
{
    ngpt_config cfg = tiny(variant);
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = 1;
    ngpt_context *init = NULL;
    ngpt_model *m = NULL;
    ngpt_adapter *ad = NULL;
    CHECK_OK(ngpt_context_init(&init, NULL, &cfg, &s, NULL, 0));
    if (init) CHECK_OK(ngpt_context_params_init(init, 17));
    if (init) CHECK_OK(ngpt_context_save(init, path));
    ngpt_context_free(init);
    CHECK_OK(ngpt_model_open(&m, path));
    if (!m) return;
    if (lora) {
        ngpt_lora_config lc = ngpt_lora_config_default();
        CHECK_OK(ngpt_lora_config_set(&lc, "targets=all-linear"));
        CHECK_OK(ngpt_lora_config_set(&lc, "dropout=0.1"));
        CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 4));
    }
    static const int modes[4][2] = {{0, 0}, {1, 0}, {0, 13}, {1, 13}};
    size_t bytes[4], n = 0;
    uint64_t params[4];
    double loss[4];
    float *grads[4] = {NULL};
    ngpt_context *c0 = make(m, ad, 0, 0, &bytes[0]);
    float *p0;
    if (c0) CHECK_OK(ngpt_context_params(c0, &p0, &n));
    ngpt_context_free(c0);
    for (int i = 0; i < 4 && n; i++) {
        ngpt_context *ctx = make(m, ad, modes[i][0], modes[i][1], &bytes[i]);
        grads[i] = calloc(n, sizeof(float));
        if (!ctx) continue;
        run(ctx, grads[i], n, &loss[i]);
        CHECK_OK(ngpt_context_params_checksum(ctx, &params[i]));
        ngpt_context_free(ctx);
    }
    const char *what = lora ? "adapter" : "model";
    for (int i = 1; i < 4 && n; i++) {
        CHECK(bytes[i] < bytes[0], "[%s %s] mode %d: arena %zu, not below %zu", variant, what, i,
              bytes[i], bytes[0]);
        CHECK(loss[i] == loss[0], "[%s %s] mode %d: the losses differ", variant, what, i);
        if (!modes[i][1] || lora) {     /* every bit */
            CHECK(params[i] == params[0], "[%s %s] mode %d: other parameters after %d steps",
                  variant, what, i, STEPS);
            CHECK(!memcmp(grads[i], grads[0], n * sizeof(float)), "[%s %s] mode %d: other "
                  "gradients", variant, what, i);
            continue;
        }
        /* chunked, the model trained: all bits but the lm_head's gradient
         * before the first step; after it, within rounding */
        double worst = 0, big = 0;
        for (size_t k = 0; k < n; k++) {
            const double d = fabs((double)grads[i][k] - grads[0][k]), a = fabs(grads[0][k]);
            if (d > worst) worst = d;
            if (a > big) big = a;
        }
        CHECK(worst <= 1e-4 * big, "[%s %s] chunked: gradients differ by %.3g (largest %.3g)",
              variant, what, worst, big);
    }
    printf("recompute [%s, %s]: arena %zu, recompute %zu (%.0f%%), chunked %zu, both %zu (%.0f%%)\n",
           variant, what, bytes[0], bytes[1], 100.0 * bytes[1] / bytes[0], bytes[2], bytes[3],
           100.0 * bytes[3] / bytes[0]);
    for (int i = 0; i < 4; i++) free(grads[i]);
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

/* A chunked model's first step: every gradient bit but the lm_head's. */
static void first_step_bits(void)
{
    ngpt_config cfg = tiny("tie_lm_head=0");
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = B, s.seq = T;
    ngpt_context *a = NULL, *b = NULL;
    CHECK_OK(ngpt_context_init(&a, NULL, &cfg, &s, NULL, 0));
    s.loss_chunk = 7;
    CHECK_OK(ngpt_context_init(&b, NULL, &cfg, &s, NULL, 0));
    if (!a || !b) goto out;
    CHECK_OK(ngpt_context_params_init(a, 3));
    CHECK_OK(ngpt_context_params_init(b, 3));
    int32_t tok[B * T], tgt[B * T];
    batch(0, tok, tgt);
    float la, lb, *ga, *gb;
    size_t n;
    CHECK_OK(ngpt_context_forward(a, tok, B, T, tgt, &la));
    CHECK_OK(ngpt_context_forward(b, tok, B, T, tgt, &lb));
    CHECK(la == lb, "a chunked loss differs: %.9g %.9g", (double)la, (double)lb);
    CHECK_OK(ngpt_context_grads_zero(a));
    CHECK_OK(ngpt_context_grads_zero(b));
    CHECK_OK(ngpt_context_backward(a));
    CHECK_OK(ngpt_context_backward(b));
    CHECK_OK(ngpt_context_grads(a, &ga, &n));
    CHECK_OK(ngpt_context_grads(b, &gb, &n));
    ngpt_tensor_info head;
    CHECK_OK(ngpt_context_tensor_find(a, "lm_head.weight", &head));
    CHECK(!memcmp(ga, gb, head.offset * sizeof(float)), "a chunked loss changed a gradient "
          "before the lm_head's");
    /* refused: logits, a forward without targets */
    const float *lg;
    CHECK_STATUS(ngpt_context_logits(b, &lg), NGPT_ERR_WRONG_MODE);
    uint64_t h;
    CHECK_STATUS(ngpt_context_logits_checksum(b, &h), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_context_forward(b, tok, B, T, NULL, NULL), NGPT_ERR_BAD_ARG);
out:
    ngpt_context_free(a);
    ngpt_context_free(b);
}

static void refusals(void)
{
    ngpt_config cfg = tiny("");
    ngpt_context *ctx = NULL;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.recompute = 1;
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0), NGPT_ERR_BAD_ARG);
    s = ngpt_shape_default(NGPT_MODE_INFER);
    s.loss_chunk = 4;
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0), NGPT_ERR_BAD_ARG);
    s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.recompute = 2;
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0), NGPT_ERR_BAD_ARG);
    s.recompute = 1, s.trace = NGPT_TRACE_FULL;
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0), NGPT_ERR_BAD_ARG);
    s.trace = NGPT_TRACE_NONE, s.loss_chunk = -1;
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0), NGPT_ERR_BAD_ARG);
    s.loss_chunk = 1 << 30;     /* past every row: no chunking */
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0));
    ngpt_shape got;
    if (ctx) CHECK_OK(ngpt_context_shape(ctx, &got));
    CHECK(ctx && got.loss_chunk == 0, "a chunk past every row is no chunking");
    ngpt_context_free(ctx);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/ngpt_recompute_%d.ngpt", (int)getpid());
    snprintf(apath, sizeof apath, "/tmp/ngpt_recompute_%d.lora", (int)getpid());
    check("", false);
    check("norm=post pos=learned qkv_bias=1 proj_bias=1", false);
    check(LLAMA, false);
    check("", true);
    check(LLAMA, true);
    first_step_bits();
    refusals();
    unlink(path);
    return test_summary("test_recompute");
}
