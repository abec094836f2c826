/* ops.c — the model's operations split across the thread pool (ops.h;
 * the dispatch: par_for.h): matrix products (float, packed in place, 8-bit)
 * by row blocks or column panels, row-wise ops by rows, elementwise ops by
 * element ranges, the embedding gradient by table rows. Every part is one
 * call of the single-threaded kernel on a sub-range of outputs, so the bits
 * do not depend on where the cuts fall. */
#include <sleef.h>
#include <string.h>

#include "ops/ops.h"
#include "ops/par_for.h"
#include "runtime/pool.h"

/* Cuts of a matrix product (gemm.h): row blocks of whole register tiles
 * (4 x NGPT_GEMM_MR = 24 rows), column panels of NGPT_GEMM_NR = 16. Column
 * cuts of other ops (weight and bias gradients) fall on 64-byte lines. */
enum { GEMM_ROW_ALIGN = 4 * NGPT_GEMM_MR, GEMM_COL_ALIGN = NGPT_GEMM_NR, COL_ALIGN = 16,
       ROWS_PER_PACK = 128, GEMM_PART_ALIGN = 8 };

/* Column cuts of a packed product: whole groups of 4 panels, as the m <= 8
 * path streams them (arch/gemv.h), so a part of a decode step's fc2 (16
 * panels, 8 parts by work) is one 1x4 block with 8 fma chains in flight,
 * not two 1x1 blocks with 2 (latency-bound, slower than L3 streams). */
enum { PACKED_COL_ALIGN = 4 * NGPT_GEMM_NR };

/* The work of an 8-bit multiply-add against a float one's (par_for's unit):
 * a decode step's gemm_q8 takes 0.4-0.5 of gemm_packed's time at the
 * default model's shapes (ngpt bench, AVX2). */
#define Q8_WORK 0.5

/* Elementwise cuts: whole cache lines, whole Philox blocks for dropout. */
enum { ELEM_ALIGN = 64 };

/* ---- matrix products */

typedef struct gemm_job {
    const ngpt_kernels *k;
    float *work;                /* the threads' workspaces (gemm.h), one after another */
    int m, n, kk;
    const float *a, *b, *bias;
    ptrdiff_t a_rs, a_cs, b_rs, b_cs, c_rs;
    float *c;
    ngpt_gelu_fwd_fn act;       /* the GELU kernel of gelu_part */
    float *gelu;                /* a Linear's GELU of C, or NULL (gelu_part) */
    bool accumulate, by_cols;
} gemm_job;

/* Rows i0..i0+m-1, columns j0..j0+n-1 of y (row stride rs) through the
 * GELU kernel act into gelu (the same layout; it may be y): the epilogue a
 * product part runs on its own outputs, so fc1 and its GELU are one job.
 * Elementwise: the same bits as a GELU op after the product. */
static void gelu_part(ngpt_gelu_fwd_fn act, float *gelu, const float *y, ptrdiff_t rs, ptrdiff_t i0,
                      int m, ptrdiff_t j0, int n)
{
    if (!gelu) return;
    if (j0 == 0 && n == rs) {
        act(gelu + i0 * rs, y + i0 * rs, (size_t)m * (size_t)n);
        return;
    }
    for (int r = 0; r < m; r++) act(gelu + (i0 + r) * rs + j0, y + (i0 + r) * rs + j0, (size_t)n);
}

/* The work par_for counts for GELU, per element (as for its gradient op). */
#define GELU_WORK 16.0

/* Split a product's C (m, n) by column panels rather than row blocks: when
 * it has too few rows to feed the threads and more panels than row blocks
 * (decoding: m = 1). */
static bool split_columns(const ngpt_context *ctx, int m, int n)
{
    const size_t row_parts = ((size_t)m + GEMM_ROW_ALIGN - 1) / GEMM_ROW_ALIGN;
    const size_t col_parts = ((size_t)n + GEMM_COL_ALIGN - 1) / GEMM_COL_ALIGN;
    return row_parts < 2 * (size_t)ctx->plan.threads.pool->threads && col_parts > row_parts;
}

static void gemm_range(void *arg, size_t begin, size_t end, int thread)
{
    const gemm_job *g = arg;
    const ptrdiff_t i0 = g->by_cols ? 0 : (ptrdiff_t)begin, j0 = g->by_cols ? (ptrdiff_t)begin : 0;
    const int m = g->by_cols ? g->m : (int)(end - begin), n = g->by_cols ? (int)(end - begin) : g->n;
    g->k->gemm(m, n, g->kk, g->a + i0 * g->a_rs, g->a_rs, g->a_cs, g->b + j0 * g->b_cs, g->b_rs,
               g->b_cs, g->bias ? g->bias + j0 : NULL, g->c + i0 * g->c_rs + j0, g->c_rs,
               g->accumulate, g->work + (size_t)thread * NGPT_GEMM_WORK_FLOATS);
    gelu_part(g->act, g->gelu, g->c, g->c_rs, i0, m, j0, n);
}

/* ngpt_op_gemm with the GELU epilogue (gelu_part) when gelu is set. */
static void gemm_run(ngpt_context *ctx, int m, int n, int k, const float *a, ptrdiff_t a_rs,
                     ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs,
                     const float *bias, float *c, ptrdiff_t c_rs, bool accumulate,
                     ngpt_gelu_fwd_fn act, float *gelu)
{
    if (m <= 0 || n <= 0) return;
    gemm_job g = {ctx->k, ctx->plan.threads.gemm_work, m, n, k, a, b, bias, a_rs, a_cs, b_rs, b_cs, c_rs,
                  c, act, gelu, accumulate, split_columns(ctx, m, n)};
    const double chain = (k > 0 ? (double)k : 1.0) + (gelu ? GELU_WORK : 0.0);
    const size_t threads = (size_t)ctx->plan.threads.pool->threads;
    if (g.by_cols) {
        ngpt_par_for(ctx, (size_t)n, GEMM_COL_ALIGN, (double)m * chain, gemm_range, &g);
    } else if (a_cs != 1 && (size_t)n >= threads * NGPT_GEMM_NC) {
        /* A weight gradient dY^T X (A transposed: the kernel packs it, once
         * per NC-column block of B) with a block for every thread: parts of
         * whole blocks pack neither operand more than one call would */
        g.by_cols = true;
        ngpt_par_for_at_most(ctx, (size_t)n, NGPT_GEMM_NC, (double)m * chain,
                        (size_t)n / NGPT_GEMM_NC, gemm_range, &g);
    } else {
        /* every part packs all of B again (the weight gradient's B is k = B*T
         * rows of X, as much packing per part as a 64-row part's products):
         * a weight gradient is cut into one part per thread, other products
         * into parts of at least ROWS_PER_PACK rows */
        size_t most = (size_t)m / ROWS_PER_PACK;
        if (most > threads * NGPT_TASKS_PER_THREAD) most = threads * NGPT_TASKS_PER_THREAD;
        if (a_cs != 1 || most < threads) most = threads;
        ngpt_par_for_at_most(ctx, (size_t)m, a_cs != 1 ? GEMM_PART_ALIGN : GEMM_ROW_ALIGN,
                        (double)n * chain, most, gemm_range, &g);
    }
}

void ngpt_op_gemm(ngpt_context *ctx, int m, int n, int k, const float *a, ptrdiff_t a_rs,
                  ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs,
                  const float *bias, float *c, ptrdiff_t c_rs, bool accumulate)
{
    gemm_run(ctx, m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bias, c, c_rs, accumulate, NULL, NULL);
}

void ngpt_op_linear(ngpt_context *ctx, float *y, const float *x, const float *w,
                    const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                    float *gelu)
{
    gemm_run(ctx, rows, out, in, x, in, 1, w, 1, in, bias, y, out, false, act, gelu);
}

void ngpt_op_linear_bwd_weight(ngpt_context *ctx, float *dw, const float *dy, const float *x,
                               int rows, int in, int out)
{
    ngpt_op_gemm(ctx, out, in, rows, dy, 1, out, x, in, 1, NULL, dw, in, true);
}

void ngpt_op_linear_bwd_input(ngpt_context *ctx, float *dx, const float *dy, const float *w,
                              int rows, int in, int out)
{
    ngpt_op_gemm(ctx, rows, in, out, dy, out, 1, w, in, 1, NULL, dx, in, false);
}

/* A Linear whose full panels are packed in place (runtime/weights.h):
 * columns below nfull from gemm_packed on the panels, the others (the rows
 * of W past the last full panel, as they are: B(k, j) = tail[j*k + k]) from
 * gemm with the thread's workspace. */
#define PACKED_STREAM_ROWS 4

typedef struct packed_job {
    const ngpt_kernels *k;
    float *work;
    int m, n, kk, nfull;
    const float *a, *wp, *bias;
    float *c;
    ngpt_gelu_fwd_fn act;
    float *gelu;
    bool by_cols;
} packed_job;

/* Rows i0..i0+m-1 and columns j0..j1-1 of C. */
static void packed_part(const packed_job *g, int i0, int m, int j0, int j1, int thread)
{
    const int jp = j1 < g->nfull ? j1 : g->nfull;     /* [j0, jp) packed, [max(j0, jp), j1) not */
    const float *a = g->a + (size_t)i0 * g->kk;
    float *c = g->c + (size_t)i0 * g->n;
    if (j0 < jp)
        g->k->gemm_packed(m, jp - j0, g->kk, a, g->kk, ngpt_gemm_panel(g->wp, g->kk, j0),
                          g->bias ? g->bias + j0 : NULL, c + j0, g->n);
    const int jt = j0 > jp ? j0 : jp;
    if (jt < j1)
        g->k->gemm(m, j1 - jt, g->kk, a, g->kk, 1, g->wp + (size_t)jt * g->kk, 1, g->kk,
                   g->bias ? g->bias + jt : NULL, c + jt, g->n, false,
                   g->work + (size_t)thread * NGPT_GEMM_WORK_FLOATS);
    gelu_part(g->act, g->gelu, g->c, g->n, i0, m, j0, j1 - j0);
}

static void packed_range(void *arg, size_t begin, size_t end, int thread)
{
    const packed_job *g = arg;
    if (g->by_cols)     /* from j0 = begin, a multiple of 16 */
        packed_part(g, 0, g->m, (int)begin, (int)end, thread);
    else
        packed_part(g, (int)begin, (int)(end - begin), 0, g->n, thread);
}

void ngpt_op_linear_packed(ngpt_context *ctx, float *y, const float *x, const float *wp,
                           const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                           float *gelu)
{
    if (rows <= 0 || out <= 0) return;
    packed_job g = {ctx->k, ctx->plan.threads.gemm_work, rows, out, in,
                    out - out % NGPT_GEMM_NR, x, wp, bias, y, act, gelu,
                    split_columns(ctx, rows, out)};
    const double chain = (in > 0 ? (double)in : 1.0) + (gelu ? GELU_WORK : 0.0);
    /* at decode's few rows the product streams its float weights, each read
     * for those rows only: its cost is their bytes, worth a second thread
     * sooner than a multiply-add's count says (an adapter's B, 1536 x 16
     * floats, is 98 KB) */
    const double streamed = rows < PACKED_STREAM_ROWS ? PACKED_STREAM_ROWS : rows;
    if (g.by_cols)
        ngpt_par_for(ctx, (size_t)out, PACKED_COL_ALIGN, streamed * chain, packed_range, &g);
    else
        ngpt_par_for(ctx, (size_t)rows, GEMM_ROW_ALIGN, (double)out * chain, packed_range, &g);
}

/* ---- 8-bit products: the input rows quantized (plan.q8_x), then gemm_q8
 * split like the packed products (panels of 16 columns, or row blocks) */

typedef struct q8_job {
    const ngpt_kernels *k;
    int m, n, kk;
    const float *a, *bias;
    int8_t *xq;
    ptrdiff_t xq_rs;
    const int8_t *wq;           /* 8-bit panels, or (q4) 4-bit ones */
    float *c;
    ngpt_gelu_fwd_fn act;
    float *gelu;
    bool by_cols, q4;
} q8_job;

/* gemm_q8 or gemm_q4 of the job's weights, from output j0 (a multiple of 16). */
static void q8_gemm(const q8_job *g, int m, int n, const int8_t *xq, int j0, float *c)
{
    const float *bias = g->bias ? g->bias + j0 : NULL;
    if (g->q4)
        g->k->gemm_q4(m, n, g->kk, xq, g->xq_rs, ngpt_q4_panel((const uint8_t *)g->wq, g->kk, j0),
                      bias, c, g->n);
    else
        g->k->gemm_q8(m, n, g->kk, xq, g->xq_rs, ngpt_q8_panel(g->wq, g->kk, j0), bias, c, g->n);
}

static void quantize_range(void *arg, size_t i0, size_t i1, int thread)
{
    const q8_job *g = arg;
    (void)thread;
    g->k->quantize_q8(g->xq + (ptrdiff_t)i0 * g->xq_rs, g->xq_rs, g->a + i0 * (size_t)g->kk, g->kk,
                      (int)(i1 - i0), g->kk);
}

static void q8_range(void *arg, size_t begin, size_t end, int thread)
{
    const q8_job *g = arg;
    (void)thread;
    if (g->by_cols) {   /* panels from j0 = begin, a multiple of 16 */
        q8_gemm(g, g->m, (int)(end - begin), g->xq, (int)begin, g->c + begin);
        gelu_part(g->act, g->gelu, g->c, g->n, 0, g->m, (ptrdiff_t)begin, (int)(end - begin));
    } else {
        q8_gemm(g, (int)(end - begin), g->n, g->xq + (ptrdiff_t)begin * g->xq_rs, 0,
                g->c + begin * (size_t)g->n);
        gelu_part(g->act, g->gelu, g->c, g->n, (ptrdiff_t)begin, (int)(end - begin), 0, g->n);
    }
}

static void linear_quantized(ngpt_context *ctx, float *y, const float *x, const int8_t *wq,
                             bool q4, const float *bias, int rows, int in, int out,
                             ngpt_gelu_fwd_fn act, float *gelu)
{
    if (rows <= 0 || out <= 0) return;
    q8_job g = {ctx->k, rows, out, in, x, bias, ctx->plan.q8_x, (ptrdiff_t)ngpt_q8_row_bytes(in),
                wq, y, act, gelu, split_columns(ctx, rows, out), q4};
    ngpt_par_for(ctx, (size_t)rows, 1, 4.0 * in, quantize_range, &g);
    /* an int8 multiply-add costs a fraction of a float one */
    const double chain = (in > 0 ? Q8_WORK * in : 1.0) + (gelu ? GELU_WORK : 0.0);
    if (g.by_cols)
        ngpt_par_for(ctx, (size_t)out, PACKED_COL_ALIGN, (double)rows * chain, q8_range, &g);
    else
        ngpt_par_for(ctx, (size_t)rows, GEMM_ROW_ALIGN, (double)out * chain, q8_range, &g);
}

void ngpt_op_linear_q8(ngpt_context *ctx, float *y, const float *x, const int8_t *wq,
                       const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                       float *gelu)
{
    linear_quantized(ctx, y, x, wq, false, bias, rows, in, out, act, gelu);
}

void ngpt_op_linear_q4(ngpt_context *ctx, float *y, const float *x, const uint8_t *wq,
                       const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                       float *gelu)
{
    linear_quantized(ctx, y, x, (const int8_t *)wq, true, bias, rows, in, out, act, gelu);
}

/* ---- row-wise ops */

typedef struct rows_job {
    const ngpt_context *ctx;
    float *out, *mean, *rstd, *dw, *db;
    const float *x, *w, *b;     /* b: a bias, or dy of a backward */
    const int32_t *idx;         /* tokens or targets */
    const int32_t *pos0;
    const int8_t *q8;           /* an 8-bit table */
    const uint8_t *q4;          /* or a 4-bit one */
    int c, len;                 /* c: row length (columns) */
    size_t rows;
    bool backward;
    float scale;
} rows_job;

static void ln_fwd_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    float *rstd = j->rstd ? j->rstd + r0 : NULL;
    if (j->ctx->cfg.norm_type == NGPT_NORM_RMS)
        j->ctx->k->rmsnorm_fwd(j->out + r0 * j->c, rstd, j->x + r0 * j->c, j->w, r1 - r0, j->c,
                               j->scale);
    else
        j->ctx->k->layernorm_fwd(j->out + r0 * j->c, j->mean ? j->mean + r0 : NULL, rstd,
                                 j->x + r0 * j->c, j->w, j->b, r1 - r0, j->c, j->scale);
}

/* The multiplier of a norm's weight w (n floats): w, or with norm_offset
 * 1 + w (rounded to float, as Gemma's float32 RMSNorm has it) in dst. */
static const float *norm_weight(const ngpt_context *ctx, float *dst, const float *w, size_t n)
{
    if (!ctx->cfg.norm_offset) return w;
    for (size_t i = 0; i < n; i++) dst[i] = 1.0f + w[i];
    return dst;
}

void ngpt_op_norm_fwd(ngpt_context *ctx, float *out, float *mean, float *rstd, const float *x,
                      const float *w, const float *b, size_t rows, int c)
{
    w = norm_weight(ctx, ctx->plan.norm_w1, w, (size_t)c);
    rows_job j = {.ctx = ctx, .out = out, .mean = mean, .rstd = rstd, .x = x, .w = w, .b = b, .c = c,
                  .scale = ngpt_cfg_norm_eps(&ctx->cfg)};
    ngpt_par_for(ctx, rows, 1, 4.0 * c, ln_fwd_range, &j);
}

static void ln_bwd_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    if (j->ctx->cfg.norm_type == NGPT_NORM_RMS)
        j->ctx->k->rmsnorm_bwd(j->out + r0 * j->c, j->b + r0 * j->c, j->x + r0 * j->c,
                               j->rstd + r0, j->w, r1 - r0, j->c);
    else
        j->ctx->k->layernorm_bwd(j->out + r0 * j->c, j->b + r0 * j->c, j->x + r0 * j->c,
                                 j->mean + r0, j->rstd + r0, j->w, r1 - r0, j->c);
}

/* Columns c0..c1-1 of dw [and db], each one chain over every row. */
static void ln_wb_range(void *arg, size_t c0, size_t c1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    if (j->ctx->cfg.norm_type == NGPT_NORM_RMS)
        j->ctx->k->rmsnorm_bwd_w(j->dw + c0, j->b + c0, j->x + c0, j->c, j->rstd, j->rows,
                                 (int)(c1 - c0));
    else
        j->ctx->k->layernorm_bwd_wb(j->dw + c0, j->db + c0, j->b + c0, j->x + c0, j->c, j->mean,
                                    j->rstd, j->rows, (int)(c1 - c0));
}

void ngpt_op_norm_bwd(ngpt_context *ctx, float *dx, float *dw, float *db, const float *dy,
                      const float *x, const float *mean, const float *rstd, const float *w,
                      size_t rows, int c)
{
    w = norm_weight(ctx, ctx->plan.norm_w1, w, (size_t)c);    /* d(w) is d(1 + w) */
    rows_job j = {.ctx = ctx, .out = dx, .dw = dw, .db = db, .b = dy, .x = x,
                  .mean = (float *)mean, .rstd = (float *)rstd, .w = w, .c = c, .rows = rows};
    ngpt_par_for(ctx, rows, 1, 8.0 * c, ln_bwd_range, &j);
    if (dw) ngpt_par_for(ctx, (size_t)c, COL_ALIGN, 3.0 * (double)rows, ln_wb_range, &j);
}

/* qk_norm by rows: each row's q heads (H rows of D) and k heads (KV rows of D). */
typedef struct qk_norm_job {
    const ngpt_context *ctx;
    float *qkv, *x, *dy, *dw;
    const float *rstd_in, *wq, *wk;
    float *rstd;
    size_t rows, H, KV, D, QKV;
    bool backward, keys;        /* dw: of q's columns, or (keys) of k's */
} qk_norm_job;

static void qk_norm_range(void *arg, size_t r0, size_t r1, int thread)
{
    const qk_norm_job *j = arg;
    const ngpt_kernels *k = j->ctx->k;
    const size_t H = j->H, KV = j->KV, D = j->D, HD = H * D, KD = KV * D;
    float *xk = j->x + j->rows * HD;     /* k's inputs follow q's (rows H, D) */
    const float eps = ngpt_cfg_norm_eps(&j->ctx->cfg);
    (void)thread;
    for (size_t r = r0; r < r1; r++) {
        float *q = j->qkv + r * j->QKV, *kk = q + HD;
        if (!j->backward) {
            memcpy(j->x + r * HD, q, HD * sizeof(float));
            memcpy(xk + r * KD, kk, KD * sizeof(float));
            k->rmsnorm_fwd(q, j->rstd ? j->rstd + r * H : NULL, j->x + r * HD, j->wq, H, (int)D, eps);
            k->rmsnorm_fwd(kk, j->rstd ? j->rstd + j->rows * H + r * KV : NULL, xk + r * KD, j->wk,
                           KV, (int)D, eps);
        } else {
            float *dq = j->dy + r * HD, *dk = j->dy + j->rows * HD + r * KD;
            memcpy(dq, q, HD * sizeof(float));
            memcpy(dk, kk, KD * sizeof(float));
            memset(q, 0, (HD + KD) * sizeof(float));
            k->rmsnorm_bwd(q, dq, j->x + r * HD, j->rstd_in + r * H, j->wq, H, (int)D);
            k->rmsnorm_bwd(kk, dk, xk + r * KD, j->rstd_in + j->rows * H + r * KV, j->wk, KV, (int)D);
        }
    }
}

/* Columns c0..c1-1 of q_norm's or k_norm's weight gradient. */
static void qk_norm_w_range(void *arg, size_t c0, size_t c1, int thread)
{
    const qk_norm_job *j = arg;
    const size_t skip = j->keys ? j->rows * j->H : 0;     /* k's rows follow q's */
    const size_t n = j->rows * (j->keys ? j->KV : j->H);
    (void)thread;
    j->ctx->k->rmsnorm_bwd_w(j->dw + c0, j->dy + skip * j->D + c0, j->x + skip * j->D + c0,
                             (ptrdiff_t)j->D, j->rstd_in + skip, n, (int)(c1 - c0));
}

static qk_norm_job qk_norm_job_of(ngpt_context *ctx, float *qkv, float *x, size_t rows)
{
    const ngpt_config *c = &ctx->cfg;
    return (qk_norm_job){.ctx = ctx, .qkv = qkv, .x = x, .rows = rows,
                         .H = (size_t)c->n_heads, .KV = (size_t)ngpt_cfg_kv_heads(c),
                         .D = (size_t)ngpt_cfg_head_dim(c), .QKV = (size_t)ngpt_cfg_qkv_width(c)};
}

void ngpt_op_qk_norm_fwd(ngpt_context *ctx, float *qkv, float *x, float *rstd, const float *wq,
                         const float *wk, size_t rows)
{
    qk_norm_job j = qk_norm_job_of(ctx, qkv, x, rows);
    j.rstd = rstd, j.wq = norm_weight(ctx, ctx->plan.norm_w1, wq, j.D);
    j.wk = norm_weight(ctx, ctx->plan.norm_w1 + j.D, wk, j.D);
    ngpt_par_for(ctx, rows, 1, 6.0 * (double)((j.H + j.KV) * j.D), qk_norm_range, &j);
}

void ngpt_op_qk_norm_bwd(ngpt_context *ctx, float *g_qkv, float *dy, const float *x,
                         const float *rstd, const float *wq, const float *wk, float *dwq,
                         float *dwk, size_t rows)
{
    qk_norm_job j = qk_norm_job_of(ctx, g_qkv, (float *)x, rows);
    j.dy = dy, j.rstd_in = rstd, j.backward = true;
    j.wq = norm_weight(ctx, ctx->plan.norm_w1, wq, j.D);
    j.wk = norm_weight(ctx, ctx->plan.norm_w1 + j.D, wk, j.D);
    ngpt_par_for(ctx, rows, 1, 10.0 * (double)((j.H + j.KV) * j.D), qk_norm_range, &j);
    if (dwq) {
        j.dw = dwq;
        ngpt_par_for(ctx, j.D, COL_ALIGN, 3.0 * (double)(rows * j.H), qk_norm_w_range, &j);
        j.dw = dwk, j.keys = true;
        ngpt_par_for(ctx, j.D, COL_ALIGN, 3.0 * (double)(rows * j.KV), qk_norm_w_range, &j);
    }
}

/* The gated MLP by rows: row r's gate and up are columns [0, F) and
 * [F, 2F) of fc1's row (2F floats). SwiGLU has its kernels; GeGLU is the
 * GELU kernels of the config's form and a product (elementwise and
 * correctly rounded: the same bits on every build). */
static void geglu_row(const ngpt_context *ctx, float *out, const float *dh, const float *gate,
                      size_t F, bool backward)
{
    const ngpt_kernels *k = ctx->k;
    const bool tanh_form = ctx->cfg.gelu == NGPT_GELU_TANH;
    const float *up = gate + F;
    if (!backward) {    /* h = gelu(gate) * up */
        (tanh_form ? k->gelu_tanh_fwd : k->gelu_fwd)(out, gate, F);
        for (size_t i = 0; i < F; i++) out[i] = out[i] * up[i];
        return;
    }
    /* d(up) = dh * gelu(gate); d(gate) = (dh * up) * gelu'(gate) */
    float *dg = out, *du = out + F;
    (tanh_form ? k->gelu_tanh_fwd_grad : k->gelu_fwd_grad)(du, dg, gate, F);
    for (size_t i = 0; i < F; i++) {
        dg[i] = (dh[i] * up[i]) * dg[i];
        du[i] = dh[i] * du[i];
    }
}

static void glu_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    const size_t F = (size_t)j->c;
    const bool geglu = j->ctx->cfg.mlp == NGPT_MLP_GEGLU;
    (void)thread;
    for (size_t r = r0; r < r1; r++) {
        const float *gate = j->x + r * 2 * F;
        float *out = j->out + r * (j->backward ? 2 : 1) * F;
        if (geglu)
            geglu_row(j->ctx, out, j->backward ? j->b + r * F : NULL, gate, F, j->backward);
        else if (j->backward)
            j->ctx->k->swiglu_bwd(out, out + F, j->b + r * F, gate, gate + F, F);
        else
            j->ctx->k->swiglu_fwd(out, gate, gate + F, F);
    }
}

void ngpt_op_glu_fwd(ngpt_context *ctx, float *h, const float *fc1, size_t rows, int F)
{
    rows_job j = {.ctx = ctx, .out = h, .x = fc1, .c = F};
    ngpt_par_for(ctx, rows, 1, 24.0 * F, glu_range, &j);
}

void ngpt_op_glu_bwd(ngpt_context *ctx, float *dfc1, const float *dh, const float *fc1,
                     size_t rows, int F)
{
    rows_job j = {.ctx = ctx, .out = dfc1, .b = dh, .x = fc1, .c = F, .backward = true};
    ngpt_par_for(ctx, rows, 1, 30.0 * F, glu_range, &j);
}

static void colsum_range(void *arg, size_t c0, size_t c1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    j->ctx->k->colsum_acc(j->db + c0, j->b + c0, j->c, j->rows, (int)(c1 - c0));
}

void ngpt_op_colsum_acc(ngpt_context *ctx, float *db, const float *dy, size_t rows, int n)
{
    rows_job j = {.ctx = ctx, .db = db, .b = dy, .c = n, .rows = rows};
    ngpt_par_for(ctx, (size_t)n, COL_ALIGN, (double)rows, colsum_range, &j);
}

static void xent_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    for (size_t r = r0; r < r1; r++) {
        const float *row = j->x + r * (size_t)j->c;
        if (j->idx[r] < 0) {    /* NGPT_TARGET_IGNORE: no loss, no gradient */
            if (j->backward) memset(j->out + r * (size_t)j->c, 0, (size_t)j->c * sizeof(float));
            else j->out[r] = 0.0f;
        } else if (j->backward) {
            j->ctx->k->xent_bwd(j->out + r * (size_t)j->c, row, j->c, j->idx[r], j->scale);
        } else {
            j->out[r] = j->ctx->k->xent(row, j->c, j->idx[r]);
        }
    }
}

void ngpt_op_xent(ngpt_context *ctx, float *losses, const float *logits, const int32_t *targets,
                  size_t rows, int n)
{
    rows_job j = {.ctx = ctx, .out = losses, .x = logits, .idx = targets, .c = n};
    ngpt_par_for(ctx, rows, 1, 8.0 * n, xent_range, &j);
}

void ngpt_op_xent_bwd(ngpt_context *ctx, float *dlogits, const float *logits,
                      const int32_t *targets, size_t rows, int n, float scale)
{
    rows_job j = {.ctx = ctx, .out = dlogits, .x = logits, .idx = targets, .c = n,
                  .backward = true, .scale = scale};
    ngpt_par_for(ctx, rows, 1, 10.0 * n, xent_range, &j);
}

static void rope_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    const ngpt_context *ctx = j->ctx;
    const ngpt_config *cfg = &ctx->cfg;
    const int H = cfg->n_heads, KV = ngpt_cfg_kv_heads(cfg), D = ngpt_cfg_head_dim(cfg);
    const size_t row = (size_t)ngpt_cfg_qkv_width(cfg);
    const bool halves = cfg->rope_pairs == NGPT_ROPE_HALVES;
    ngpt_rope_fn rot = halves ? (j->backward ? ctx->k->rope_halves_bwd : ctx->k->rope_halves)
                              : (j->backward ? ctx->k->rope_bwd : ctx->k->rope);
    (void)thread;
    for (size_t r = r0; r < r1; r++) {
        const size_t s = r / (size_t)j->len, i = r % (size_t)j->len;
        const size_t t = (size_t)(j->pos0 ? j->pos0[s] : 0) + i;
        const float *cs = j->w + t * (D / 2), *sn = j->b + t * (D / 2);
        float *q = j->out + r * row;
        rot(q, H, D, cs, sn);                   /* H query heads */
        rot(q + (size_t)H * D, KV, D, cs, sn);  /* then KV key heads */
    }
}

void ngpt_op_rope_tables(const ngpt_context *ctx, int layer, const float **cos_t,
                        const float **sin_t)
{
    const bool local = ngpt_cfg_layer_window(&ctx->cfg, layer) > 0;
    *cos_t = local ? ctx->plan.rope_local_cos : ctx->plan.rope_cos;
    *sin_t = local ? ctx->plan.rope_local_sin : ctx->plan.rope_sin;
}

void ngpt_op_rope(ngpt_context *ctx, float *qkv, int nseq, int len, const int32_t *pos0,
                  int layer, bool backward)
{
    rows_job j = {.ctx = ctx, .out = qkv, .pos0 = pos0, .len = len, .backward = backward};
    ngpt_op_rope_tables(ctx, layer, &j.w, &j.b);     /* (w: cos, b: sin) */
    ngpt_par_for(ctx, (size_t)nseq * (size_t)len, 1, 6.0 * ngpt_cfg_qkv_width(&ctx->cfg),
                 rope_range, &j);
}

static void embed_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    for (size_t r = r0; r < r1; r++)
        memcpy(j->out + r * j->c, j->x + (size_t)j->idx[r] * j->c, (size_t)j->c * sizeof(float));
}

void ngpt_op_embed(ngpt_context *ctx, float *x, const float *table, const int32_t *tokens,
                   size_t rows, int c)
{
    rows_job j = {.ctx = ctx, .out = x, .x = table, .idx = tokens, .c = c};
    ngpt_par_for(ctx, rows, 1, (double)c, embed_range, &j);
}

/* Row t of a table whose full panels of 16 rows are packed (a packed
 * Linear's W): lane t % 16 of panel t / 16, every 16th float; the rows past
 * the last full panel as they are. */
static void embed_packed_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    const size_t c = (size_t)j->c, nfull = (size_t)j->len;
    (void)thread;
    for (size_t r = r0; r < r1; r++) {
        const size_t t = (size_t)j->idx[r];
        float *out = j->out + r * c;
        if (t >= nfull) {
            memcpy(out, j->x + t * c, c * sizeof(float));
            continue;
        }
        const float *src = j->x + (t / NGPT_GEMM_NR) * NGPT_GEMM_NR * c + t % NGPT_GEMM_NR;
        for (size_t i = 0; i < c; i++) out[i] = src[i * NGPT_GEMM_NR];
    }
}

void ngpt_op_embed_packed(ngpt_context *ctx, float *x, const float *wp, int n,
                          const int32_t *tokens, size_t rows, int c)
{
    rows_job j = {.ctx = ctx, .out = x, .x = wp, .idx = tokens, .c = c,
                  .len = n - n % NGPT_GEMM_NR};
    ngpt_par_for(ctx, rows, 1, (double)c, embed_packed_range, &j);
}

static void embed_quantized_range(void *arg, size_t r0, size_t r1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    for (size_t r = r0; r < r1; r++)
        if (j->q4)
            j->ctx->k->embed_q4(j->out + r * j->c, j->q4, j->c, j->idx[r]);
        else
            j->ctx->k->embed_q8(j->out + r * j->c, j->q8, j->c, j->idx[r]);
}

void ngpt_op_embed_q8(ngpt_context *ctx, float *x, const int8_t *wq, const int32_t *tokens,
                      size_t rows, int c)
{
    rows_job j = {.ctx = ctx, .out = x, .q8 = wq, .idx = tokens, .c = c};
    ngpt_par_for(ctx, rows, 1, 2.0 * c, embed_quantized_range, &j);
}

void ngpt_op_embed_q4(ngpt_context *ctx, float *x, const uint8_t *wq, const int32_t *tokens,
                      size_t rows, int c)
{
    rows_job j = {.ctx = ctx, .out = x, .q4 = wq, .idx = tokens, .c = c};
    ngpt_par_for(ctx, rows, 1, 2.0 * c, embed_quantized_range, &j);
}

/* Table rows v0..v1-1: every token in order, adding those in range. */
static void embed_bwd_range(void *arg, size_t v0, size_t v1, int thread)
{
    const rows_job *j = arg;
    (void)thread;
    for (size_t r = 0; r < (size_t)j->len; r++) {
        const size_t t = (size_t)j->idx[r];
        if (t < v0 || t >= v1) continue;
        float *row = j->out + t * j->c;
        j->ctx->k->add(row, row, j->x + r * j->c, (size_t)j->c);
    }
}

void ngpt_op_embed_bwd(ngpt_context *ctx, float *dtable, const float *dx, const int32_t *tokens,
                       size_t rows, int c, int vocab)
{
    rows_job j = {.ctx = ctx, .out = dtable, .x = dx, .idx = tokens, .c = c, .len = (int)rows};
    ngpt_par_for(ctx, (size_t)vocab, 1, (double)rows * c / vocab + (double)rows, embed_bwd_range, &j);
}

/* ---- elementwise ops */

typedef struct elem_job {
    const ngpt_kernels *k;
    float *y, *m, *v;
    const float *a, *b;
    uint64_t first;
    const ngpt_dropout_key *key;
    const ngpt_adamw_coef *coef;
    ngpt_gelu_fwd_grad_fn act_grad;
    ngpt_gelu_fwd_fn act;
    float s;
} elem_job;

static void gelu_fwd_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    j->act(j->y + i0, j->a + i0, i1 - i0);
}

void ngpt_op_gelu_fwd(ngpt_context *ctx, ngpt_gelu_fwd_fn act, float *y, const float *x, size_t n)
{
    elem_job j = {.k = ctx->k, .y = y, .a = x, .act = act};
    ngpt_par_for(ctx, n, ELEM_ALIGN, GELU_WORK, gelu_fwd_range, &j);
}

static void gelu_fwd_grad_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    j->act_grad(j->y + i0, j->m + i0, j->a + i0, i1 - i0);
}

static void gelu_bwd_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    j->k->gelu_bwd(j->y + i0, j->a + i0, j->b + i0, i1 - i0);
}

static void add_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    j->k->add(j->y + i0, j->a + i0, j->b + i0, i1 - i0);
}

static void dropout_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    j->k->dropout(j->y + i0, j->a + i0, i1 - i0, j->first + i0, j->key);
}

static void adamw_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    j->k->adamw(j->y + i0, j->a + i0, j->m + i0, j->v + i0, i1 - i0, j->coef);
}

void ngpt_op_gelu_fwd_grad(ngpt_context *ctx, ngpt_gelu_fwd_grad_fn act_grad, float *y, float *g,
                           const float *x, size_t n)
{
    elem_job j = {.k = ctx->k, .y = y, .m = g, .a = x, .act_grad = act_grad};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 24.0, gelu_fwd_grad_range, &j);
}

void ngpt_op_gelu_bwd(ngpt_context *ctx, float *dx, const float *g, const float *dy, size_t n)
{
    elem_job j = {.k = ctx->k, .y = dx, .a = g, .b = dy};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 2.0, gelu_bwd_range, &j);
}

void ngpt_op_add(ngpt_context *ctx, float *y, const float *a, const float *b, size_t n)
{
    elem_job j = {.k = ctx->k, .y = y, .a = a, .b = b};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 1.0, add_range, &j);
}

static void scale_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    for (size_t i = i0; i < i1; i++) j->y[i] = j->a[i] * j->s;
}

void ngpt_op_scale(ngpt_context *ctx, float *y, const float *x, float s, size_t n)
{
    elem_job j = {.k = ctx->k, .y = y, .a = x, .s = s};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 1.0, scale_range, &j);
}

/* cap * tanh(x / cap) by SLEEF's scalar finz tanh (the same bits on every
 * build, as the kernels' vector forms would give). */
static void softcap_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    for (size_t i = i0; i < i1; i++)
        j->y[i] = j->s * Sleef_finz_tanhf1_u10purecfma(j->y[i] / j->s);
}

/* d(x) = d(y) (1 - t^2), t = y / cap from the capped y. */
static void softcap_bwd_range(void *arg, size_t i0, size_t i1, int thread)
{
    const elem_job *j = arg;
    (void)thread;
    for (size_t i = i0; i < i1; i++) {
        const float t = j->a[i] / j->s;
        j->y[i] = j->y[i] * (1.0f - t * t);
    }
}

void ngpt_op_softcap(ngpt_context *ctx, float *x, size_t n, float cap)
{
    elem_job j = {.k = ctx->k, .y = x, .s = cap};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 20.0, softcap_range, &j);
}

void ngpt_op_softcap_bwd(ngpt_context *ctx, float *dx, const float *y, size_t n, float cap)
{
    elem_job j = {.k = ctx->k, .y = dx, .a = y, .s = cap};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 3.0, softcap_bwd_range, &j);
}

void ngpt_op_dropout(ngpt_context *ctx, float *y, const float *x, size_t n, uint64_t first,
                     const ngpt_dropout_key *key)
{
    elem_job j = {.k = ctx->k, .y = y, .a = x, .first = first, .key = key};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 8.0, dropout_range, &j);
}

void ngpt_op_adamw(ngpt_context *ctx, float *p, const float *g, float *m, float *v, size_t n,
                   const ngpt_adamw_coef *c)
{
    elem_job j = {.k = ctx->k, .y = p, .a = g, .m = m, .v = v, .coef = c};
    ngpt_par_for(ctx, n, ELEM_ALIGN, 8.0, adamw_range, &j);
}
