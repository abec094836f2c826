/* test_grad.c — backward against finite differences on the tiny config, for
 * every parameter tensor: a directional derivative over a sample of elements
 * (random signs), the analytic side accumulated in double. Also with dropout
 * on (masks recomputed in backward), for every model variant (ngpt_config's
 * switches, one at a time and all together; the Llama family's too), the
 * GELU and SwiGLU kernels against their math in double, and the API's error
 * paths. */
#include <math.h>
#include <stdlib.h>

#include "test.h"
#include "kernels.h"

enum { B = 2, T = 16, SAMPLE = 12 };

/* A Llama's switches: RMSNorm, SwiGLU, no biases, GQA 3:1, head_dim != C/H,
 * RoPE on halves, an untied head */
#define LLAMA "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 mlp=swiglu mlp_bias=0 " \
              "rope_pairs=halves tie_lm_head=0"
/* Qwen's and Llama 3's on top: q, k and v biased (not o), an RMSNorm over
 * each head of q and k (Qwen3), RoPE's frequencies rescaled (Llama 3: the
 * tiny heads of 10 have pairs in all three of its bands at context 1000) */
#define ROPE_LLAMA3 "rope_scaling=llama3 rope_factor=8 rope_low_freq_factor=1 " \
                    "rope_high_freq_factor=4 rope_original_context=1000"
#define QWEN LLAMA " qkv_bias=1 qk_norm=1 " ROPE_LLAMA3
/* Gemma 3's on a Llama: (1 + w) norms, q/k norms, a norm of each branch,
 * GeGLU (tanh), the embedding scaled, scores by 1/sqrt(20) (not the head
 * size), capped logits, and layer 0 local with a window of 5 of the 16
 * positions and its own RoPE base (layer 1 global) */
#define GEMMA_SWITCHES "norm_offset=1 qk_norm=1 norm=sandwich mlp=geglu gelu=tanh emb_scale=5.5 " \
                       "attn_scalar=20 logit_softcap=8 sliding_window=5 sliding_pattern=2 " \
                       "rope_local_theta=100"
#define GEMMA LLAMA " " GEMMA_SWITCHES

static uint32_t lcg_state = 12345u;
static uint32_t lcg(void) { return lcg_state = lcg_state * 1664525u + 1013904223u; }
static float urand(void) { return (float)(lcg() >> 8) * 0x1p-24f * 2.0f - 1.0f; }

/* The tiny config with the space-separated "key=value" switches of variant. */
static ngpt_config tiny(float dropout, const char *variant)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 256, c.context_len = T, c.d_model = 32, c.n_layers = 2, c.n_heads = 4;
    c.d_ff = 64, c.dropout = dropout;
    CHECK(test_config_apply(&c, variant), "config %s: %s", variant, ngpt_last_error());
    return c;
}

/* Weights large enough for gradients well above float noise in the loss. */
static void fill(ngpt_context *ctx)
{
    float *w;
    size_t n;
    ngpt_context_params_init(ctx, 42);
    ngpt_context_params(ctx, &w, &n);
    for (int32_t t = 0; t < test_tensor_count(ctx); t++) {
        ngpt_tensor_info ti;
        ngpt_context_tensor_at(ctx, t, &ti);
        for (size_t i = 0; i < ti.count; i++) {
            float *x = w + ti.offset + i;
            *x = ti.ndim == 2 ? *x * 5.0f : *x + 0.1f * urand();
        }
    }
}

static float loss_of(ngpt_context *ctx, const int32_t *tok, const int32_t *tgt)
{
    float l = NAN;
    ngpt_context_forward(ctx, tok, B, T, tgt, &l);
    return l;
}

static void check_tensors(float dropout, int only_every, const char *variant)
{
    ngpt_config cfg = tiny(dropout, variant);
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = B, sh.seq = T;
    ngpt_context *ctx;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &sh, NULL, 0));
    if (!ctx) return;
    fill(ctx);
    int32_t tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)(lcg() >> 24), tgt[i] = (int32_t)(lcg() >> 24);
    CHECK_OK(ngpt_context_dropout_set(ctx, dropout > 0.0f, 7, 3));
    CHECK_OK(ngpt_context_grads_zero(ctx));
    float l0;
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, &l0));
    CHECK_OK(ngpt_context_backward(ctx));
    float *w, *g;
    size_t n, ng;
    ngpt_context_params(ctx, &w, &n);
    CHECK_OK(ngpt_context_grads(ctx, &g, &ng));
    float *g0 = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) g0[i] = g[i];

    const float h = 1e-2f;
    double worst = 0.0;
    for (int32_t t = 0; t < test_tensor_count(ctx); t += only_every) {
        ngpt_tensor_info ti;
        ngpt_context_tensor_at(ctx, t, &ti);
        size_t idx[SAMPLE];
        float sgn[SAMPLE];
        double analytic = 0.0, mag = 0.0;
        /* distinct elements: all of a tensor smaller than the sample (qk_norm's D) */
        const int ns = ti.count < SAMPLE ? (int)ti.count : SAMPLE;
        for (int s = 0; s < ns; s++) {
            idx[s] = ti.offset + (size_t)(lcg() % (uint32_t)ti.count);
            /* untied, only the rows of the batch's tokens have a gradient */
            if (!cfg.tie_lm_head && !strcmp(ti.name, "tok_emb.weight"))
                idx[s] = ti.offset + (size_t)tok[lcg() % (B * T)] * (size_t)ti.shape[1] +
                         lcg() % (uint32_t)ti.shape[1];
            for (int r = 0; r < s; r++)
                if (idx[r] == idx[s]) {
                    idx[s] = ti.offset + (idx[s] - ti.offset + 1) % ti.count;
                    if (ns < SAMPLE) r = -1;    /* (few elements: until it is distinct) */
                }
            sgn[s] = (lcg() & 0x100) ? 1.0f : -1.0f;
        }
        for (int s = 0; s < ns; s++) {
            analytic += (double)sgn[s] * (double)g0[idx[s]];
            mag += fabs((double)g0[idx[s]]);
        }
        float saved[SAMPLE];
        for (int s = 0; s < ns; s++) saved[s] = w[idx[s]], w[idx[s]] = saved[s] + sgn[s] * h;
        double lp = loss_of(ctx, tok, tgt);
        for (int s = 0; s < ns; s++) w[idx[s]] = saved[s] - sgn[s] * h;
        double lm = loss_of(ctx, tok, tgt);
        for (int s = 0; s < ns; s++) w[idx[s]] = saved[s];
        double fd = (lp - lm) / (2.0 * (double)h);
        double err = fabs(fd - analytic), tol = 2e-3 * mag + 5e-4;
        if (err / (mag + 1e-12) > worst) worst = err / (mag + 1e-12);
        CHECK(err <= tol, "[%s] dropout %g %s: finite difference %.6g, backward %.6g (|g| sum "
              "%.3g)", variant, (double)dropout, ti.name, fd, analytic, mag);
        CHECK(mag > 1e-4, "%s: sampled gradients are all ~0 (%.3g): the check would be empty",
              ti.name, mag);
    }
    printf("grad check [%s] dropout %g: worst |fd - backward| / sum|g| = %.3g\n", variant,
           (double)dropout, worst);
    free(g0);
    ngpt_context_free(ctx);
}

/* The GELU kernels (active build) against their math in double: y within
 * float rounding, and each derivative g its own function's (the exact and
 * the tanh forms differ by up to 9e-4 in g, which the model-level check
 * above cannot tell apart; this can). Past |x| = 10 the tanh form's g is
 * exactly 0 or 1 and finite for every finite x. */
static void check_gelu_kernels(void)
{
    enum { N = 4001 };
    static float x[N], y[N], g[N], y2[N];
    for (int i = 0; i < N; i++) x[i] = -10.0f + 0.005f * (float)i;
    x[0] = -3e38f, x[1] = -1e20f, x[2] = -1e13f, x[N - 1] = 3e38f, x[N - 2] = 1e20f;
    double worst[2][2] = {{0}};
    for (int form = 0; form < 2; form++) {
        const ngpt_kernels *k = &ngpt_kernels_active;
        (form ? k->gelu_tanh_fwd_grad : k->gelu_fwd_grad)(y, g, x, N);
        (form ? k->gelu_tanh_fwd : k->gelu_fwd)(y2, x, N);
        CHECK(!memcmp(y, y2, sizeof y), "[%s] the _grad kernel's y is the forward's",
              form ? "tanh" : "exact");
        for (int i = 0; i < N; i++) {
            const double v = x[i];
            double want_y, want_g;
            if (form) {
                const double k0 = sqrt(2.0 / 3.14159265358979323846), u = k0 * (v + 0.044715 * v * v * v);
                const double t = tanh(u), vc = fabs(v) > 10 ? 10 : fabs(v);
                want_y = 0.5 * v * (1.0 + t);
                want_g = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k0 * (1.0 + 3 * 0.044715 * vc * vc);
            } else {
                want_y = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
                want_g = 0.5 * (1.0 + erf(v / sqrt(2.0))) +
                         v * exp(-0.5 * v * v) / sqrt(2.0 * 3.14159265358979323846);
            }
            if (fabs(v) > 1e6) {    /* far tails: y = x or -0, g = 1 or 0 */
                CHECK(isfinite(g[i]) && g[i] == (v > 0 ? 1.0f : 0.0f), "[%s] g(%g) = %g",
                      form ? "tanh" : "exact", v, (double)g[i]);
                continue;
            }
            const double ey = fabs(y[i] - want_y) / (fabs(want_y) > 1.0 ? fabs(want_y) : 1.0);
            const double eg = fabs(g[i] - want_g);
            if (ey > worst[form][0]) worst[form][0] = ey;
            if (eg > worst[form][1]) worst[form][1] = eg;
        }
        CHECK(worst[form][0] < 1e-6 && worst[form][1] < 1e-5, "[%s] GELU: worst y error %.3g, "
              "g error %.3g", form ? "tanh" : "exact", worst[form][0], worst[form][1]);
    }
}

/* The SwiGLU kernels (active build) against their math in double: h =
 * silu(g) u within float rounding, and the derivatives d(gate), d(up) of
 * dh = 1; the far tails exact (silu(g) = g or -0, its derivative 1 or 0). */
static void check_swiglu_kernels(void)
{
    enum { N = 4001 };
    static float g[N], u[N], h[N], dg[N], du[N], dh[N];
    for (int i = 0; i < N; i++) g[i] = -20.0f + 0.01f * (float)i, u[i] = 1.5f - 0.0007f * (float)i, dh[i] = 1.0f;
    g[0] = -3e38f, g[1] = -1e20f, g[2] = -100.0f, g[N - 1] = 3e38f, g[N - 2] = 1e20f;
    const ngpt_kernels *k = &ngpt_kernels_active;
    k->swiglu_fwd(h, g, u, N);
    k->swiglu_bwd(dg, du, dh, g, u, N);
    double worst_h = 0, worst_d = 0;
    for (int i = 0; i < N; i++) {
        const double v = g[i], sg = 1.0 / (1.0 + exp(-v)), sil = v * sg;
        if (fabs(v) > 1e6) {
            CHECK(du[i] == (v > 0 ? g[i] : 0.0f) && dg[i] == (v > 0 ? u[i] : 0.0f),
                  "swiglu tail g=%g: du %g dg %g", v, (double)du[i], (double)dg[i]);
            continue;
        }
        const double wh = sil * u[i], wd = u[i] * (sg + sil * (1.0 - sg));
        const double eh = fabs(h[i] - wh) / (fabs(wh) > 1.0 ? fabs(wh) : 1.0);
        const double ed = fabs(dg[i] - wd) / (fabs(wd) > 1.0 ? fabs(wd) : 1.0);
        if (eh > worst_h) worst_h = eh;
        if (ed > worst_d) worst_d = ed;
        CHECK(du[i] == (float)(h[i] / u[i]) || fabs(du[i] - sil) <= 1e-6 * (fabs(sil) + 1.0),
              "swiglu du(%g) = %g, want %g", v, (double)du[i], sil);
    }
    CHECK(worst_h < 1e-6 && worst_d < 1e-6, "SwiGLU: worst h error %.3g, d(gate) error %.3g",
          worst_h, worst_d);
}

static void check_errors(void)
{
    ngpt_config cfg = tiny(0.0f, "");
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
    sh.seq = T;
    sh.logits_rows = NGPT_LOGITS_ALL;       /* a forward with targets: the loss */
    ngpt_context *ctx;
    CHECK_STATUS(ngpt_context_backward(NULL), NGPT_ERR_NULL_ARG);
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &sh, NULL, 0));
    int32_t tok[T] = {0};
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, T, tok, NULL));
    CHECK_STATUS(ngpt_context_backward(ctx), NGPT_ERR_WRONG_MODE);
    float *g;
    size_t n;
    CHECK_STATUS(ngpt_context_grads(ctx, &g, &n), NGPT_ERR_WRONG_MODE);
    ngpt_context_free(ctx);

    sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = 1, sh.seq = T;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &sh, NULL, 0));
    CHECK_STATUS(ngpt_context_backward(ctx), NGPT_ERR_WRONG_MODE);          /* no forward yet */
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, T, NULL, NULL));
    CHECK_STATUS(ngpt_context_backward(ctx), NGPT_ERR_WRONG_MODE);          /* no targets */
    CHECK_STATUS(ngpt_context_grads(ctx, NULL, &n), NGPT_ERR_NULL_ARG);
    /* accumulation: two backward passes of one batch give twice the gradient */
    CHECK_OK(ngpt_context_params_init(ctx, 1));
    CHECK_OK(ngpt_context_grads_zero(ctx));
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, T, tok, NULL));
    CHECK_OK(ngpt_context_backward(ctx));
    CHECK_OK(ngpt_context_grads(ctx, &g, &n));
    float *once = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) once[i] = g[i];
    CHECK_OK(ngpt_context_backward(ctx));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (fabsf(g[i] - 2.0f * once[i]) > 1e-6f * fabsf(once[i]) + 1e-12f) bad++;
    CHECK(bad == 0, "%zu gradients are not twice the single pass", bad);
    free(once);
    ngpt_context_free(ctx);
}

int main(void)
{
    check_tensors(0.0f, 1, "");
    check_tensors(0.2f, 3, "");
    static const char *const variants[] = {
        "qkv_bias=1", "tie_lm_head=0", "final_norm=0", "norm=post", "pos=sinusoidal",
        "pos=learned", "proj_bias=1", "gelu=tanh", "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
        "norm=post final_norm=0 qkv_bias=1 proj_bias=1 tie_lm_head=0 pos=learned gelu=tanh",
        "norm_type=rms", "norm_type=rms norm_eps=0.05 norm=post", "norm_type=rms norm=post", "norm_eps=0.05 norm=post", "norm_eps=0.05", "mlp=swiglu",
        "mlp=swiglu mlp_bias=0", "mlp_bias=0", "kv_heads=2", "kv_heads=1", "head_dim=6",
        "head_dim=12", "rope_pairs=halves", "qk_norm=1", "qk_norm=1 kv_heads=2 head_dim=6",
        "qk_norm=1 norm=post", ROPE_LLAMA3,
        LLAMA, QWEN,
        "norm_type=rms norm_offset=1", "norm_type=rms norm_offset=1 qk_norm=1", "norm=sandwich",
        "norm=sandwich norm_type=rms", "mlp=geglu", "mlp=geglu gelu=tanh mlp_bias=0",
        "emb_scale=3.5", "emb_scale=3.5 pos=learned", "attn_scalar=20", "logit_softcap=8",
        "sliding_window=5 sliding_pattern=2 rope_local_theta=100", "sliding_window=3",
        "sliding_window=4 kv_heads=2", GEMMA};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        check_tensors(0.0f, 1, variants[i]);
    check_tensors(0.2f, 2, variants[9]);
    check_tensors(0.2f, 2, LLAMA);
    check_tensors(0.2f, 2, QWEN);
    check_tensors(0.2f, 2, GEMMA);
    check_gelu_kernels();
    check_swiglu_kernels();
    check_errors();
    return test_summary("test_grad");
}
