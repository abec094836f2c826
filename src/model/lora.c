/* lora.c — the LoRA terms of the adapted Linears (lora.h), written once over
 * the float gemm (ops.h): each product's bits are the gemm's contract, the
 * same on every build, and a Linear's own product is the one it has
 * without an adapter. Per module, rows of x (rows, in):
 *
 *   forward   t = x' A^T (rows, r), t = s t, y[:, row0..] += t B^T
 *   backward  dB += dy_m^T t;  u = s (dy_m B);  dA += u^T x';  dx += u A
 *
 * with x' = x, or its dropout (site NGPT_SITE_LORA + kind) while an adapter
 * trains, dy_m the module's columns of dy, s the layout's scale (times the
 * adapter's scale at inference). */
#include <string.h>

#include "model/lora.h"
#include "ops/ops.h"
#include "q4.h"
#include "runtime/weights.h"

bool ngpt_lora_on(const ngpt_context *ctx, int l, ngpt_linear which)
{
    if (which == NGPT_LINEAR_LM_HEAD) return false;
    const int n = ctx->lora.training ? 1 : ctx->lora.n;
    for (int i = 0; i < n; i++) {
        const ngpt_lora_layout *ll = ctx->lora.training ? &ctx->lora.train : &ctx->lora.ads[i]->ll;
        if (!ngpt_lora_layer_on(ll, l)) continue;
        for (int m = 0; m < ll->n_modules; m++)
            if (ll->mod[m].linear == which) return true;
    }
    return false;
}

/* Module i of layer l's t in a training context: kept per adapted layer,
 * or one layer's with recompute (the block's forward runs again before its
 * backward); rt floats each. */
static float *kept_t(const ngpt_context *ctx, int l, int i, size_t rt)
{
    const ngpt_lora_layout *ll = &ctx->lora.train;
    const size_t before = ctx->shape.recompute ? 0 : ngpt_lora_layers_below(ll, l);
    return ctx->plan.lora.t + (before * (size_t)ll->n_modules + (size_t)i) * rt;
}

static void scale_rows(float *t, size_t n, float s)
{
    for (size_t i = 0; i < n; i++) t[i] *= s;
}

static bool dropping(const ngpt_context *ctx)
{
    return ctx->lora.training && ctx->run.dropout.on && ctx->lora.train.dropout > 0.0f;
}

/* x' of a module: its input's dropout into plan.lora.xd, or x itself. */
static const float *module_input(ngpt_context *ctx, int l, const ngpt_lora_module *m,
                                 const float *x, int rows)
{
    if (!dropping(ctx)) return x;
    const ngpt_dropout_key key = {ctx->run.dropout.seed, ctx->run.dropout.step,
                                  ngpt_rng_site_dropout(l, NGPT_SITE_LORA + m->kind),
                                  ctx->lora.train.dropout};
    ngpt_op_dropout(ctx, ctx->plan.lora.xd, x, (size_t)rows * (size_t)m->in, 0, &key);
    return ctx->plan.lora.xd;
}

/* The trained adapter's terms of layer l's Linear `which` (a training
 * context): its floats w (layout ll), scale s times the layout's; t kept
 * for the backward. */
static void adapter_fwd(ngpt_context *ctx, const ngpt_lora_layout *ll, const float *w, float s,
                        int l, ngpt_linear which, float *y, const float *x, int rows, int out)
{
    if (!ngpt_lora_layer_on(ll, l)) return;
    const float *lw = w + ngpt_lora_layer_offset(ll, l);
    const int r = ll->rank;
    const size_t rt = (size_t)ctx->shape.batch * (size_t)ctx->shape.seq * (size_t)r;
    for (int i = 0; i < ll->n_modules; i++) {
        const ngpt_lora_module *m = &ll->mod[i];
        if (m->linear != which) continue;
        float *t = kept_t(ctx, l, i, rt);
        const float *xin = module_input(ctx, l, m, x, rows);
        ngpt_op_gemm(ctx, rows, r, m->in, xin, m->in, 1, lw + m->a, 1, m->in, NULL, t, r, false);
        scale_rows(t, (size_t)rows * (size_t)r, s * ll->scale);
        ngpt_op_gemm(ctx, rows, m->rows, r, t, r, 1, lw + m->b, 1, r, NULL, y + m->row0, out,
                     true);
    }
}

static int round16(int n) { return (n + NGPT_GEMM_NR - 1) / NGPT_GEMM_NR * NGPT_GEMM_NR; }

/* An applied adapter's terms (inference), through its packed copy: the
 * same chains as adapter_fwd's (gemm_packed keeps gemm's contract, and y +
 * t B^T is what gemm's accumulate adds), streamed at decode's few rows. t
 * = x A16^T (rows, r rounded up to 16: A's padding rows give zeros), its
 * first r columns scaled into (rows, r); u = t B^T (rows, the module's
 * rows rounded up), whose first columns are added to y. */
static void applied_fwd(ngpt_context *ctx, const ngpt_adapter *ad, float s, int l,
                        ngpt_linear which, float *y, const float *x, int rows, int out)
{
    const ngpt_lora_layout *ll = &ad->ll;
    if (!ngpt_lora_layer_on(ll, l)) return;
    const float *pk = ad->packed + ngpt_lora_layer_offset(ll, l) / ll->layer_floats * ll->packed_layer;
    const int r = ll->rank, R16 = round16(r);
    const float scale = s * ll->scale;
    float *t = ctx->plan.lora.t, *u = ctx->plan.lora.u;
    for (int i = 0; i < ll->n_modules; i++) {
        const ngpt_lora_module *m = &ll->mod[i];
        if (m->linear != which) continue;
        ngpt_op_linear_packed(ctx, t, x, pk + m->pa, NULL, rows, m->in, R16, NULL, NULL);
        for (int k = 0; k < rows; k++)      /* in place: row k moves down, or stays */
            for (int j = 0; j < r; j++) t[(size_t)k * r + j] = t[(size_t)k * R16 + j] * scale;
        const int N16 = round16(m->rows);
        ngpt_op_linear_packed(ctx, u, t, pk + m->pb, NULL, rows, r, N16, NULL, NULL);
        for (int k = 0; k < rows; k++) {
            float *yk = y + (size_t)k * out + m->row0;
            const float *uk = u + (size_t)k * N16;
            for (int j = 0; j < m->rows; j++) yk[j] += uk[j];
        }
    }
}

void ngpt_lora_fwd(ngpt_context *ctx, int l, ngpt_linear which, float *y, const float *x,
                   int rows, int out)
{
    if (ctx->lora.training) {
        adapter_fwd(ctx, &ctx->lora.train, ctx->plan.lora.w, 1.0f, l, which, y, x, rows, out);
        return;
    }
    for (int i = 0; i < ctx->lora.n; i++)
        applied_fwd(ctx, ctx->lora.ads[i], ctx->lora.scale[i], l, which, y, x, rows, out);
}

void ngpt_lora_frozen_cols(const ngpt_context *ctx, int l, ngpt_linear which, int c0, int n,
                        int out, int in, float *dst)
{
    const ngpt_dtype dt = ngpt_linear_dtype(&ctx->cfg, which);
    if (dt == NGPT_DTYPE_F32) {
        const float *w = ctx->plan.params + ngpt_linear_weight(&ctx->lay, l, which);
        const int full = out - out % NGPT_GEMM_NR;
        for (int j = 0; j < out; j++) {
            float *row = dst + (size_t)j * n;
            if (j < full) {
                const float *p = ngpt_gemm_panel(w, in, j - j % NGPT_GEMM_NR) + j % NGPT_GEMM_NR;
                for (int c = 0; c < n; c++) row[c] = p[(size_t)(c0 + c) * NGPT_GEMM_NR];
            } else {
                memcpy(row, w + (size_t)j * in + c0, (size_t)n * sizeof(float));
            }
        }
        return;
    }
    const int8_t *wq = ngpt_weights_q8(ctx, l, which);
    const size_t block = dt == NGPT_DTYPE_Q4 ? NGPT_Q4_BLOCK : NGPT_Q8_BLOCK;
    for (int j = 0; j < out; j++) {
        const int jj = j % NGPT_Q8_NR;
        const int8_t *panel = ngpt_q8_panel(wq, in, j - jj);
        if (dt == NGPT_DTYPE_Q4)
            panel = (const int8_t *)ngpt_q4_panel((const uint8_t *)wq, in, j - jj);
        for (int c = 0; c < n; c++) {
            const int kk = c0 + c, t = kk % NGPT_Q8_GROUP;
            const int8_t *b = panel + (size_t)(kk / NGPT_Q8_GROUP) * block;
            float d;
            memcpy(&d, b + (size_t)jj * sizeof(float), sizeof d);
            const int q = dt == NGPT_DTYPE_Q4
                              ? ngpt_q4_value((const uint8_t *)b + NGPT_Q8_NR * 4, jj, t)
                              : b[NGPT_Q8_NR * 4 + (t / 4) * NGPT_Q8_NR * 4 + jj * 4 + t % 4];
            dst[(size_t)j * n + c] = (float)q * d;
        }
    }
}

/* dx (rows, in) = dy (rows, out) W of a frozen W, a block of columns at a time. */
static void frozen_bwd_input(ngpt_context *ctx, int l, ngpt_linear which, float *dx,
                             const float *dy, int rows, int in, int out)
{
    const int width = ngpt_lora_cols_width(out);
    float *cols = ctx->plan.lora.cols;
    for (int c0 = 0; c0 < in; c0 += width) {
        const int n = in - c0 < width ? in - c0 : width;
        ngpt_lora_frozen_cols(ctx, l, which, c0, n, out, in, cols);
        ngpt_op_gemm(ctx, rows, n, out, dy, out, 1, cols, n, 1, NULL, dx + c0, in, false);
    }
}

void ngpt_lora_linear_bwd(ngpt_context *ctx, int l, ngpt_linear which, float *dx,
                          const float *dy, const float *x, int rows, int in, int out)
{
    const ngpt_lora_layout *ll = &ctx->lora.train;
    const bool on = ngpt_lora_layer_on(ll, l);
    const int r = ll->rank;
    const size_t layer = on ? ngpt_lora_layer_offset(ll, l) : 0;
    const size_t rt = (size_t)ctx->shape.batch * (size_t)ctx->shape.seq * (size_t)r;
    const float *lw = ctx->plan.lora.w + layer;
    float *lg = ctx->plan.grads + layer;
    /* the gradients first: x may be dx's buffer */
    for (int i = 0; on && i < ll->n_modules; i++) {
        const ngpt_lora_module *m = &ll->mod[i];
        if (m->linear != which) continue;
        const float *t = kept_t(ctx, l, i, rt);
        float *u = ctx->plan.lora.u + (size_t)i * rt;
        const float *dym = dy + m->row0;
        ngpt_op_gemm(ctx, m->rows, r, rows, dym, 1, out, t, r, 1, NULL, lg + m->b, r, true);
        ngpt_op_gemm(ctx, rows, r, m->rows, dym, out, 1, lw + m->b, r, 1, NULL, u, r, false);
        scale_rows(u, (size_t)rows * (size_t)r, ll->scale);
        const float *xin = module_input(ctx, l, m, x, rows);
        ngpt_op_gemm(ctx, r, m->in, rows, u, 1, r, xin, m->in, 1, NULL, lg + m->a, m->in, true);
    }
    frozen_bwd_input(ctx, l, which, dx, dy, rows, in, out);
    for (int i = 0; on && i < ll->n_modules; i++) {
        const ngpt_lora_module *m = &ll->mod[i];
        if (m->linear != which) continue;
        const float *u = ctx->plan.lora.u + (size_t)i * rt;
        if (!dropping(ctx)) {
            ngpt_op_gemm(ctx, rows, in, r, u, r, 1, lw + m->a, in, 1, NULL, dx, in, true);
            continue;
        }
        /* d(x') = u A, then the dropout's backward (its mask again), added */
        float *xd = ctx->plan.lora.xd;
        const ngpt_dropout_key key = {ctx->run.dropout.seed, ctx->run.dropout.step,
                                      ngpt_rng_site_dropout(l, NGPT_SITE_LORA + m->kind),
                                      ll->dropout};
        ngpt_op_gemm(ctx, rows, in, r, u, r, 1, lw + m->a, in, 1, NULL, xd, in, false);
        ngpt_op_dropout(ctx, xd, xd, (size_t)rows * (size_t)in, 0, &key);
        ngpt_op_add(ctx, dx, dx, xd, (size_t)rows * (size_t)in);
    }
}
