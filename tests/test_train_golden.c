/* test_train_golden.c — backward and AdamW against PyTorch (tools/golden.py,
 * docs/GOLDEN.md): on the tiny config with the golden weights, every
 * parameter's gradient against grad.<name>, and the parameters after 1 and
 * 10 AdamW steps (lr 1e-3, betas 0.9/0.95, eps 1e-8, weight decay 0.1 on
 * everything, clip to norm 1.0, the same batch every step) against
 * adamw1.<name> / adamw10.<name>, with the loss before each step against
 * adamw.loss. PyTorch computed in float64, so the errors are ngpt's own
 * float32 error; each check prints the largest one observed.
 *
 * Tolerances: a gradient tensor within 2e-5 * max|grad of that tensor| +
 * 1e-8 per element (float32 chains over <= 256 terms). Parameters: every
 * element within 1e-5 after 1 step and 3e-5 after 10 (1-3% of lr), and the
 * mean error of each tensor within 1e-7 * (1 + 4 max|w|) (a few ulp). AdamW's first steps move a
 * parameter by about lr * g/(|g| + eps), so where |g| is within a few eps
 * (seen: g = -1.18e-7 against torch's -1.25e-7, clipped by 1/2.23) float32's
 * absolute gradient error shows up as ~0.7% of lr; elsewhere it is
 * invisible. Losses within 1e-5 relative. */
#include <math.h>
#include <stdlib.h>

#include "test.h"

#include "golden.h"

enum { B = 2, T = 16 };

/* The tiny config [with the switches of a Llama: tools/golden.py's LLAMA]. */
static ngpt_context *golden_ctx(bool llama)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 256, c.context_len = T, c.d_model = 32, c.n_layers = 2, c.n_heads = 4;
    c.d_ff = 64, c.dropout = 0.0f;
    if (llama)
        CHECK(test_config_apply(&c, "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 "
                                    "mlp=swiglu mlp_bias=0 rope_pairs=halves tie_lm_head=0"),
              "%s", ngpt_last_error());
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = B, sh.seq = T;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &sh, NULL, 0));
    if (ctx) CHECK_OK(golden_fill_weights(ctx, 42));
    return ctx;
}

/* Max |got - want| over a tensor, and whether every element is within
 * abs_tol + rel_tol * max|want|. */
static void compare(const char *what, const char *name, const float *got, const golden_entry *e,
                    size_t count, double rel_tol, double abs_tol, double mean_tol, double *worst)
{
    if (!e) {
        CHECK(0, "%s: golden entry for %s is missing", what, name);
        return;
    }
    CHECK(e->count == count, "%s %s: %zu golden values, %zu in ngpt", what, name, e->count, count);
    if (e->count != count) return;
    double maxw = 0, maxerr = 0, sum = 0;
    for (size_t i = 0; i < count; i++) maxw = fmax(maxw, fabs((double)e->data[i]));
    for (size_t i = 0; i < count; i++) {
        double err = fabs((double)got[i] - e->data[i]);
        maxerr = fmax(maxerr, err);
        sum += err;
    }
    if (mean_tol > 0) {   /* scaled like float32's ulp of the values */
        double mt = mean_tol * (1.0 + 4.0 * maxw);
        CHECK(sum / (double)count <= mt, "%s %s: mean abs err %.3g > %.3g", what, name,
              sum / (double)count, mt);
    }
    double tol = abs_tol + rel_tol * maxw;
    CHECK(maxerr <= tol, "%s %s: max abs err %.3g > tolerance %.3g (max |torch| %.3g)", what,
          name, maxerr, tol, maxw);
    if (maxerr > *worst) *worst = maxerr;
}

static void run(const char *file, bool llama)
{
    golden_bundle g;
    if (golden_load(&g, file) != 0) {
        CHECK(0, "tests/golden/%s is missing or unreadable", file);
        return;
    }
    printf("%s:\n", file);
    ngpt_context *ctx = golden_ctx(llama);
    const golden_entry *tk = golden_find(&g, "tokens"), *tg = golden_find(&g, "targets");
    const golden_entry *al = golden_find(&g, "adamw.loss");
    CHECK(tk && tg && al && tk->count == B * T && tg->count == B * T && al->count == 10,
          "tokens/targets/adamw.loss missing or mis-shaped");
    if (!ctx || !tk || !tg || !al || tk->count != B * T || tg->count != B * T) {
        golden_free(&g);
        ngpt_context_free(ctx);
        return;
    }
    int32_t tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)tk->data[i], tgt[i] = (int32_t)tg->data[i];

    /* gradients */
    float loss, *grads, *params, norm;
    size_t n;
    CHECK_OK(ngpt_context_grads_zero(ctx));
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, &loss));
    CHECK_OK(ngpt_context_backward(ctx));
    CHECK_OK(ngpt_context_grads(ctx, &grads, &n));
    CHECK_OK(ngpt_context_params(ctx, &params, &n));
    char name[128];
    double worst = 0;
    for (int32_t t = 0; t < test_tensor_count(ctx); t++) {
        ngpt_tensor_info ti;
        ngpt_context_tensor_at(ctx, t, &ti);
        snprintf(name, sizeof name, "grad.%s", ti.name);
        compare("gradient", ti.name, grads + ti.offset, golden_find(&g, name), ti.count, 2e-5,
                1e-8, 0.0, &worst);
    }
    printf("gradients of %d tensors: max abs err %.3g\n", (int)test_tensor_count(ctx), worst);

    /* AdamW, 10 steps on the same batch */
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.weight_decay = 0.1f, o.clip = 1.0f, o.decay_all = true;
    double worst_loss = 0, worst1 = 0, worst10 = 0;
    for (int s = 1; s <= 10; s++) {
        CHECK_OK(ngpt_context_grads_zero(ctx));
        CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, &loss));
        double want = al->data[s - 1], err = fabs((double)loss - want);
        worst_loss = fmax(worst_loss, err);
        CHECK(err <= 1e-5 * fabs(want), "loss before step %d: %.8f torch %.8f", s, (double)loss, want);
        CHECK_OK(ngpt_context_backward(ctx));
        CHECK_OK(ngpt_context_optim_step(ctx, &o, 1e-3f, &norm));
        if (s != 1 && s != 10) continue;
        for (int32_t t = 0; t < test_tensor_count(ctx); t++) {
            ngpt_tensor_info ti;
            ngpt_context_tensor_at(ctx, t, &ti);
            snprintf(name, sizeof name, "adamw%d.%s", s, ti.name);
            compare(s == 1 ? "adamw 1 step" : "adamw 10 steps", ti.name, params + ti.offset,
                    golden_find(&g, name), ti.count, 0.0, s == 1 ? 1e-5 : 3e-5, 1e-7,
                    s == 1 ? &worst1 : &worst10);
        }
    }
    printf("AdamW: losses max abs err %.3g; parameters after 1 step %.3g, after 10 steps %.3g\n",
           worst_loss, worst1, worst10);
    ngpt_context_free(ctx);
    golden_free(&g);
}

int main(void)
{
    run("tiny.bin", false);
    run("llama.bin", true);     /* RMSNorm, SwiGLU, GQA, head_dim, halves: their backward */
    return test_summary("test_train_golden");
}
