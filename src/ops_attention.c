/* ops_attention.c — causal self-attention forward and backward (ops.h),
 * split across the pool. The forward's queries are independent: its parts
 * are blocks of query rows of one (sequence, head). The backward accumulates
 * dK and dV of a (sequence, head) over its query rows in increasing order,
 * so its parts are whole (sequence, head) pairs. Probability rows that are
 * not kept live in the thread's own scratch (plan.thread_rows). */
#include <math.h>
#include <string.h>

#include "ops.h"

enum { QUERY_BLOCK = 16 };     /* query rows per forward part */

typedef struct attn_job {
    const ngpt_context *ctx;
    const ngpt_attn *at;
    const float *dout;
    float *dqkv;
    int H, D, C, qblocks;
    float scale;
} attn_job;

/* Two rows of context_len floats of the thread's scratch. */
static float *thread_scratch(const ngpt_context *ctx, int thread)
{
    return ctx->plan.thread_rows + (size_t)thread * 2 * (size_t)ctx->cfg.context_len;
}

/* Query rows of blocks begin..end-1; block b is (sequence, head, rows). */
static void fwd_range(void *arg, size_t begin, size_t end, int thread)
{
    const attn_job *j = arg;
    const ngpt_attn *at = j->at;
    const ngpt_kernels *k = j->ctx->k;
    const int H = j->H, D = j->D, C = j->C, len = at->len;
    const ptrdiff_t row = 3 * (ptrdiff_t)C;
    float *prow = thread_scratch(j->ctx, thread), *drow = prow + j->ctx->cfg.context_len;
    for (size_t blk = begin; blk < end; blk++) {
        const size_t sh = blk / (size_t)j->qblocks;         /* s*H + h */
        const int s = (int)(sh / (size_t)H), h = (int)(sh % (size_t)H);
        const int b0 = (int)(blk % (size_t)j->qblocks) * QUERY_BLOCK;
        const int i0 = b0 > at->q0 ? b0 : at->q0;
        const int i1 = b0 + QUERY_BLOCK < len ? b0 + QUERY_BLOCK : len;
        const int n0 = at->pos0 ? at->pos0[s] : 0;
        const float *q = at->qkv + (size_t)s * len * row + h * D;
        const float *keys = at->k + s * at->kv_seq + h * D, *vals = at->v + s * at->kv_seq + h * D;
        for (int i = i0; i < i1; i++) {
            const int n = n0 + i + 1;                       /* keys visible to query i */
            const size_t row_index = sh * (size_t)len + (size_t)i;   /* (s,h,i) of (nseq,H,len,len) */
            float *p = at->probs ? at->probs + row_index * len : prow;
            k->attn_scores(p, q + i * row, keys, at->kv_row, n, D, j->scale);
            k->softmax(p, p, n);
            if (at->probs) memset(p + n, 0, (size_t)(len - n) * sizeof(float));
            if (i == len - 1 && at->last_rows)
                memcpy(at->last_rows + sh * len, p, (size_t)len * sizeof(float));
            if (i == len - 1 && at->cache_rows) {
                float *tr = at->cache_rows + sh * (size_t)at->row_len;
                memcpy(tr, p, (size_t)n * sizeof(float));
                memset(tr + n, 0, (size_t)(at->row_len - n) * sizeof(float));
            }
            const float *pv = p;
            if (at->dropping) {
                k->dropout(drow, p, (size_t)n, row_index * len, &at->key);
                pv = drow;
            }
            k->attn_wsum(at->out + ((size_t)s * len + i) * C + h * D, pv, vals, at->kv_row, n, D);
        }
    }
}

static attn_job job_of(const ngpt_context *ctx, const ngpt_attn *at)
{
    const int C = ctx->cfg.d_model, H = ctx->cfg.n_heads, D = C / H;
    attn_job j = {ctx, at, NULL, NULL, H, D, C, (at->len + QUERY_BLOCK - 1) / QUERY_BLOCK,
                  1.0f / sqrtf((float)D)};
    return j;
}

void ngpt_op_attention_fwd(ngpt_context *ctx, const ngpt_attn *at)
{
    attn_job j = job_of(ctx, at);
    const size_t blocks = (size_t)at->nseq * j.H * j.qblocks;
    /* per block: QUERY_BLOCK queries, each a dot and a weighted sum over its keys */
    const double keys = (at->pos0 ? ctx->cfg.context_len / 2.0 : 0.0) + at->len / 2.0 + 1.0;
    const double unit = (at->len < QUERY_BLOCK ? at->len : QUERY_BLOCK) * keys * (2.0 * j.D + 8.0);
    ngpt_par_for(ctx, blocks, 1, unit, fwd_range, &j);
}

/* (sequence, head) pairs begin..end-1, each over its query rows in order. */
static void bwd_range(void *arg, size_t begin, size_t end, int thread)
{
    const attn_job *j = arg;
    const ngpt_attn *at = j->at;
    const ngpt_kernels *k = j->ctx->k;
    const int H = j->H, D = j->D, C = j->C, T = at->len;
    const ptrdiff_t row = 3 * (ptrdiff_t)C;
    float *pd = thread_scratch(j->ctx, thread);         /* (T) dropped probabilities */
    float *dp = pd + j->ctx->cfg.context_len;           /* (T) dP, then dS */
    for (size_t sh = begin; sh < end; sh++) {
        const int s = (int)(sh / (size_t)H), h = (int)(sh % (size_t)H);
        const float *base = at->qkv + (size_t)s * T * row;
        float *gbase = j->dqkv + (size_t)s * T * row;
        const float *keys = base + C + h * D, *vals = base + 2 * C + h * D;
        float *gkeys = gbase + C + h * D, *gvals = gbase + 2 * C + h * D;
        for (int i = 0; i < T; i++) {           /* dK, dV of this head accumulate from zero */
            memset(gkeys + i * row, 0, (size_t)D * sizeof(float));
            memset(gvals + i * row, 0, (size_t)D * sizeof(float));
        }
        for (int i = 0; i < T; i++) {           /* query rows in increasing order */
            const size_t row_index = sh * (size_t)T + (size_t)i;
            const float *p = at->probs + row_index * T;
            const float *go = j->dout + ((size_t)s * T + i) * C + h * D;
            const float *pv = p;
            if (at->dropping) {
                k->dropout(pd, p, (size_t)i + 1, row_index * T, &at->key);
                pv = pd;
            }
            /* o_i = sum_j pv_j v_j:  dV_j += pv_j dO_i;  dPv_j = dO_i . v_j */
            k->outer_acc(gvals, row, pv, go, i + 1, D);
            k->attn_scores(dp, go, vals, row, i + 1, D, 1.0f);
            if (at->dropping) k->dropout(dp, dp, (size_t)i + 1, row_index * T, &at->key);
            /* softmax and the 1/sqrt(D) scale: dS (scores = q.k * scale) */
            k->softmax_bwd(dp, p, dp, i + 1, j->scale);
            /* dQ_i = sum_j dS_j k_j (written whole);  dK_j += dS_j q_i */
            k->attn_wsum(gbase + (size_t)i * row + h * D, dp, keys, row, i + 1, D);
            k->outer_acc(gkeys, row, dp, base + (size_t)i * row + h * D, i + 1, D);
        }
    }
}

void ngpt_op_attention_bwd(ngpt_context *ctx, const ngpt_attn *at, const float *dout,
                           float *dqkv)
{
    attn_job j = job_of(ctx, at);
    j.dout = dout;
    j.dqkv = dqkv;
    const double unit = (double)at->len * (at->len / 2.0 + 1.0) * (5.0 * j.D + 16.0);
    ngpt_par_for(ctx, (size_t)at->nseq * j.H, 1, unit, bwd_range, &j);
}
