/* test_golden.c — ngpt's eval forward against PyTorch (tools/golden.py):
 * logits, loss and every layer's attention map, for the tiny config, the
 * default config and the tiny config with a Llama's switches (RMSNorm,
 * SwiGLU, no biases, GQA 3:1, head_dim != C/H, RoPE on halves, untied), with
 * the deterministic golden weights (seed 42).
 *
 * The references were computed in float64 and rounded once to float32, so
 * the difference is ngpt's own float32 error. Why the tolerances hold:
 * every value is reached through chains of at most max(C, d_ff) fmaf steps
 * per layer (tiny: C=32, d_ff=64, L=2; default: C=256, d_ff=1024, L=4),
 * LayerNorm rescales by rstd ~ 1/std, and SLEEF's exp/erf/log/sincos are
 * within 1 ulp. A chain of n terms has a worst-case relative error ~ n*u
 * (u = 6e-8) and a typical one ~ sqrt(n)*u, compounded over L layers: with
 * |logit| < ~1.5 that is ~1e-7..1e-6 for the tiny config and ~1e-6..1e-5 for
 * the default (observed, x86 scalar: tiny logits 1.2e-7, attention 6e-8;
 * default logits 1.4e-6, attention 1.2e-7; loss equal). Tolerances:
 * logits/loss abs 1e-5 (tiny), 5e-5 (default); attention probabilities
 * (in [0,1]) abs 1e-6 / 5e-6 — 30-80x above what we observe, yet far below
 * what a real bug gives (a wrong RoPE pairing, mask, GELU form or LayerNorm
 * eps moves logits by >= 1e-4 here). The observed maxima are printed. */
#include <math.h>
#include <stdlib.h>

#include "golden.h"
#include "test.h"

typedef struct tol {
    double logits, loss, att;
} tol;

/* Max |a-b| and max |b| over n floats. */
static double max_abs_err(const float *a, const float *b, size_t n, double *max_ref)
{
    double err = 0.0, ref = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= err)) err = d;      /* NaN propagates as a failure */
        if (fabs((double)b[i]) > ref) ref = fabs((double)b[i]);
    }
    if (max_ref) *max_ref = ref;
    return err;
}

static void run(const char *file, ngpt_config cfg, tol t)
{
    golden_bundle g;
    int loaded = golden_load(&g, file);
    CHECK(loaded == 0, "cannot load golden bundle %s", file);
    if (loaded) return;
    const golden_entry *tok = golden_find(&g, "tokens"), *tgt = golden_find(&g, "targets");
    const golden_entry *lg = golden_find(&g, "logits"), *ls = golden_find(&g, "loss");
    CHECK(tok && tgt && lg && ls, "%s: missing entries", file);
    if (!tok || !tgt || !lg || !ls) return golden_free(&g);
    const int B = tok->shape[0], T = tok->shape[1];
    CHECK(lg->count == (size_t)B * T * cfg.vocab_size, "%s: logits has %zu floats", file, lg->count);

    int32_t *x = malloc(sizeof(int32_t) * (size_t)B * T), *y = malloc(sizeof(int32_t) * (size_t)B * T);
    for (int i = 0; i < B * T; i++) x[i] = (int32_t)tok->data[i], y[i] = (int32_t)tgt->data[i];

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = B;
    shape.seq = T;
    shape.trace = NGPT_TRACE_FULL;
    shape.logits_rows = NGPT_LOGITS_ALL;    /* every position's logits and the loss */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &shape, NULL, 0));
    if (ctx) {
        CHECK_OK(golden_fill_weights(ctx, 42));
        float loss = NAN;
        CHECK_OK(ngpt_context_forward(ctx, x, B, T, y, &loss));
        const float *logits = NULL;
        CHECK_OK(ngpt_context_logits(ctx, &logits));
        if (logits && lg->count == (size_t)B * T * cfg.vocab_size) {
            double ref, e = max_abs_err(logits, lg->data, lg->count, &ref);
            printf("%s logits: max abs err %.3g (max |logit| %.3g, rel %.3g), tolerance %.0e\n",
                   file, e, ref, e / ref, t.logits);
            CHECK(e <= t.logits, "%s logits: max abs err %.3g > %.0e", file, e, t.logits);
        }
        double le = fabs((double)loss - (double)ls->data[0]);
        printf("%s loss: ngpt %.8f torch %.8f abs err %.3g (rel %.3g), tolerance %.0e\n", file,
               loss, ls->data[0], le, le / fabs((double)ls->data[0]), t.loss);
        CHECK(le <= t.loss, "%s loss: err %.3g > %.0e", file, le, t.loss);

        double worst = 0.0;
        for (int l = 0; l < cfg.n_layers; l++) {
            char name[32];
            snprintf(name, sizeof name, "att.%d", l);
            const golden_entry *at = golden_find(&g, name);
            const float *p = NULL;
            size_t count = 0;
            CHECK_OK(ngpt_context_trace(ctx, l, &p, &count));
            CHECK(at && p && count == at->count, "%s %s: trace has %zu floats", file, name, count);
            if (!at || !p || count != at->count) continue;
            double e = max_abs_err(p, at->data, count, NULL);
            if (!(e <= worst)) worst = e;
            CHECK(e <= t.att, "%s %s: max abs err %.3g > %.0e", file, name, e, t.att);
        }
        printf("%s attention (%d layers): max abs err %.3g, tolerance %.0e\n", file,
               cfg.n_layers, worst, t.att);
        ngpt_context_free(ctx);
    }
    free(x);
    free(y);
    golden_free(&g);
}

int main(void)
{
    ngpt_config tiny = ngpt_config_default();
    tiny.context_len = 16, tiny.d_model = 32, tiny.n_layers = 2, tiny.n_heads = 4, tiny.d_ff = 64;
    run("tiny.bin", tiny, (tol){1e-5, 1e-5, 1e-6});
    run("default.bin", ngpt_config_default(), (tol){5e-5, 5e-5, 5e-6});
    /* the tiny config with a Llama's switches (tools/golden.py's LLAMA) */
    ngpt_config llama = tiny;
    CHECK(test_config_apply(&llama, "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 "
                                    "mlp=swiglu mlp_bias=0 rope_pairs=halves tie_lm_head=0"),
          "%s", ngpt_last_error());
    run("llama.bin", llama, (tol){1e-5, 1e-5, 1e-6});
    return test_summary("test_golden");
}
