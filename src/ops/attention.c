/* attention.c — causal self-attention forward and backward (ops.h),
 * split across the pool. The forward's queries are independent: its parts
 * are blocks of query rows of one (sequence, head). The backward accumulates
 * dK and dV of a (sequence, key/value head) over its query heads (one, or
 * H/KV with grouped-query attention) and their query rows in increasing
 * order, so its parts are whole (sequence, key/value head) pairs.
 *
 * Both run tiles of NGPT_ATTN_TILE query rows through the multi-row kernels
 * (attn_scores_t, attn_wsum, outer_acc), which do no work past the causal
 * edge. Scores need the keys (forward) or values (backward, dP = dO . v_j)
 * transposed: each part copies those it reads into the thread's scratch
 * (plan.threads.attn_rows), with the probability rows that are not kept. A block
 * of fewer than MIN_TILED rows (decoding, a last-only prefill) runs a row at
 * a time against the keys as they are, which needs no copy, the query heads
 * of one key/value head together (the scores and weighted sums, float or
 * 8-bit, take them as rows that share their keys: each key and value is
 * read once for the group, where grouped-query attention has 2-8 heads a
 * group). More rows against an 8-bit cache read it as it is, a tile of rows
 * at a time (its kernels take the rows). A window (sliding_window) gives a
 * query's softmax its last W keys only (in a tile, the rows' earlier keys
 * get probability 0: the same sums); the backward runs over the whole
 * causal rows, whose probabilities before the window are 0 in the
 * forward's map. */
#include <math.h>
#include <string.h>

#include "ops/ops.h"
#include "ops/par_for.h"

enum { QUERY_BLOCK = 64,       /* query rows per forward part when parts are scarce */
       MIN_TILED = 4 };

typedef struct attn_job {
    const ngpt_context *ctx;
    const ngpt_attn *at;
    const float *dout;
    float *dqkv;
    int H, KV, G, D, C, qblock, qblocks;   /* G = H/KV query heads a key/value head;
                                             C = H D, the merged heads' width */
    ptrdiff_t row;                          /* qkv's row, (H + 2 KV) D */
    float scale;
} attn_job;

/* The thread's scratch: D rows of transposed keys (kt), then two tiles of
 * NGPT_ATTN_TILE rows, each row context_len floats (ld). */
typedef struct attn_scratch {
    float *kt, *rows0, *rows1;
    ptrdiff_t ld;
} attn_scratch;

static attn_scratch scratch_of(const attn_job *j, int thread)
{
    const ptrdiff_t ld = j->ctx->cfg.context_len;
    float *base = j->ctx->plan.threads.attn_rows + (size_t)thread * (size_t)(j->D + 2 * NGPT_ATTN_TILE) * (size_t)ld;
    attn_scratch s = {base, base + j->D * ld, base + (j->D + NGPT_ATTN_TILE) * ld, ld};
    return s;
}

/* kt[d*ld + i] = x_i[d] for i < n, x_i = x + i*stride (a copy). */
static void transpose_rows(float *kt, ptrdiff_t ld, const float *x, ptrdiff_t stride, int n, int dim)
{
    /* 8 rows at a time: each row of kt gets 8 consecutive floats per store
     * run, not one (a short pass over a long cache transposes every key) */
    for (int i0 = 0; i0 < n; i0 += 8) {
        const int i1 = n - i0 < 8 ? n : i0 + 8;
        for (int d = 0; d < dim; d++)
            for (int i = i0; i < i1; i++) kt[d * ld + i] = x[i * stride + d];
    }
}

/* What the forward keeps of query i's probability row p (n of row_len). */
/* Whether keep_row reads query i's row (the map, or the last row's copies):
 * only then do a window's earlier keys need their zeros written. */
static bool row_kept(const ngpt_attn *at, int i)
{
    return at->probs || (i == at->len - 1 && (at->last_rows || at->cache_rows));
}

static void keep_row(const attn_job *j, size_t sh, int i, float *p, int n)
{
    const ngpt_attn *at = j->at;
    const int len = at->len;
    if (at->probs) memset(p + n, 0, (size_t)(len - n) * sizeof(float));
    if (i == len - 1 && at->last_rows) memcpy(at->last_rows + sh * len, p, (size_t)len * sizeof(float));
    if (i == len - 1 && at->cache_rows) {
        float *tr = at->cache_rows + sh * (size_t)at->row_len;
        memcpy(tr, p, (size_t)n * sizeof(float));
        memset(tr + n, 0, (size_t)(at->row_len - n) * sizeof(float));
    }
}

/* The first key a query that sees n keys (0..n-1) attends to: 0, or with a
 * window W the last W. Its softmax runs over those keys only (their 8
 * lanes start there), in a full pass and a cached one alike. */
static int window_start(const ngpt_attn *at, int n)
{
    return at->window && n > at->window ? n - at->window : 0;
}

/* The row of key j0, the first of a query's window: j0, or in a ring j0 % R
 * (its window's rows follow it in order: model/kv.h). */
static ptrdiff_t key_row(const ngpt_attn *at, int j0)
{
    return at->ring ? j0 % at->ring : j0;
}

/* Where the forward of (sequence s, head h) = sh reads. */
typedef struct attn_head {
    int s, h, n0;               /* n0: cached positions before query 0 */
    const float *q, *keys, *vals;
    float *out;                 /* output row of query 0 */
} attn_head;

static attn_head head_of(const attn_job *j, size_t sh)
{
    const ngpt_attn *at = j->at;
    const int s = (int)(sh / (size_t)j->H), h = (int)(sh % (size_t)j->H), kvh = h / j->G;
    attn_head a = {s, h, at->pos0 ? at->pos0[s] : 0, at->qkv + (size_t)s * at->len * j->row + h * j->D,
                   at->k ? at->k + s * at->kv_seq + kvh * j->D : NULL,
                   at->v ? at->v + s * at->kv_seq + kvh * j->D : NULL,
                   at->out + (size_t)s * at->len * j->C + h * j->D};
    return a;
}

/* Queries i0..i1-1 of (s, h) against an 8-bit cache (keys, values or
 * both), a tile of NGPT_ATTN_TILE rows at a time, so that a tile reads the
 * cached rows once: the queries quantized like a product's input rows and
 * the exact integer scores, the weighted sums of the values in position
 * order (kernels.inc, kv_q8). A cached pass: no map, no dropout. */
static void fwd_rows_q8(const attn_job *j, size_t sh, int i0, int i1, const attn_scratch *sc,
                        int thread)
{
    const ngpt_attn *at = j->at;
    const ngpt_kernels *k = j->ctx->k;
    const int D = j->D, len = at->len;
    const attn_head a = head_of(j, sh);
    const int kvh = a.h / j->G;
    const ptrdiff_t hb = (ptrdiff_t)ngpt_q8_head_bytes(D);
    int8_t *qq = at->query8 ? at->query8 + (size_t)thread * NGPT_ATTN_TILE * (size_t)hb : NULL;
    for (int t0 = i0; t0 < i1; t0 += NGPT_ATTN_TILE) {
        const int R = i1 - t0 < NGPT_ATTN_TILE ? i1 - t0 : NGPT_ATTN_TILE;
        const int n = a.n0 + t0 + 1;                    /* keys visible to query t0 */
        const int j0 = window_start(at, n), m = n - j0; /* the tile's keys from j0 */
        float *p = at->probs ? at->probs + (sh * (size_t)len + (size_t)t0) * len : sc->rows0;
        const ptrdiff_t ps = at->probs ? len : sc->ld;
        float *pw = p + j0;
        if (at->k8) {
            k->quantize_q8(qq, hb, a.q + t0 * j->row, j->row, R, D);
            k->attn_scores_q8(pw, ps, qq, hb, R,
                              at->k8 + a.s * at->k8_seq + kvh * hb + key_row(at, j0) * at->k8_row,
                              at->k8_row, m, 1, D, j->scale);
        } else {
            for (int r = 0; r < R; r++)
                k->attn_scores(pw + r * ps, 0, a.q + (t0 + r) * j->row, 0, 1,
                               a.keys + key_row(at, j0) * at->kv_row, at->kv_row, m + r, D, j->scale);
        }
        for (int r = 0; r < R; r++) {
            float *pr = p + r * ps;
            const int jr = window_start(at, n + r);     /* row r's first key */
            k->softmax(pr + jr, pr + jr, n + r - jr);
            /* the tile's keys before row r's window weigh 0 in its sums */
            memset(pr + j0, 0, (size_t)(jr - j0) * sizeof(float));
            if (j0 && row_kept(at, t0 + r)) memset(pr, 0, (size_t)j0 * sizeof(float));
            keep_row(j, sh, t0 + r, pr, n + r);
        }
        float *o = a.out + (size_t)t0 * j->C;
        if (at->v8)
            k->attn_wsum_q8(o, j->C, pw, ps, R,
                            at->v8 + a.s * at->v8_seq + kvh * hb + key_row(at, j0) * at->v8_row,
                            at->v8_row, m, 1, D);
        else
            k->attn_wsum(o, j->C, pw, ps, R, a.vals + key_row(at, j0) * at->kv_row, at->kv_row, m, 1,
                         D);
    }
}

/* Queries i0..i1-1 of heads sh0..sh0+nh-1 (one sequence; nh <=
 * NGPT_ATTN_TILE heads of one key/value head) a row at a time, against the
 * keys as they are (no copy), float or 8-bit: the heads' scores of row i in
 * one call and their weighted sums in another, which read each key and
 * value once for all of them. */
static void fwd_rows(const attn_job *j, size_t sh0, int nh, int i0, int i1, const attn_scratch *sc,
                     int thread)
{
    const ngpt_attn *at = j->at;
    const ngpt_kernels *k = j->ctx->k;
    const int D = j->D, C = j->C, len = at->len;
    const ptrdiff_t row = j->row;
    const attn_head a = head_of(j, sh0);
    const int kvh = a.h / j->G;
    const ptrdiff_t hb = (ptrdiff_t)ngpt_q8_head_bytes(D);
    int8_t *qq = at->query8 ? at->query8 + (size_t)thread * NGPT_ATTN_TILE * (size_t)hb : NULL;
    for (int i = i0; i < i1; i++) {
        const int n = a.n0 + i + 1;                     /* keys visible to query i */
        const int j0 = window_start(at, n), m = n - j0;  /* from j0 (a window) */
        const size_t row_index = sh0 * (size_t)len + (size_t)i;  /* (s,h,i) of (nseq,H,len,len) */
        /* head hh's row: the map's, len*len floats apart, or the scratch's */
        float *p = at->probs ? at->probs + row_index * len : sc->rows0;
        const ptrdiff_t ps = at->probs ? (ptrdiff_t)len * len : sc->ld;
        if (at->k8) {   /* the heads' queries quantized like a product's input rows */
            k->quantize_q8(qq, hb, a.q + i * row, D, nh, D);
            k->attn_scores_q8(p + j0, ps, qq, hb, nh,
                              at->k8 + a.s * at->k8_seq + kvh * hb + key_row(at, j0) * at->k8_row,
                              at->k8_row, m, 0, D, j->scale);
        } else {
            k->attn_scores(p + j0, ps, a.q + i * row, D, nh, a.keys + key_row(at, j0) * at->kv_row,
                           at->kv_row, m, D, j->scale);
        }
        for (int hh = 0; hh < nh; hh++) {
            float *ph = p + hh * ps, *pw = ph + j0;
            const size_t head_row = row_index + (size_t)hh * len;
            k->softmax(pw, pw, m);
            if (j0 && row_kept(at, i)) memset(ph, 0, (size_t)j0 * sizeof(float));
            keep_row(j, sh0 + hh, i, ph, n);
            if (at->dropping)       /* the mask of the full row's elements j0..n-1 */
                k->dropout(sc->rows1 + hh * sc->ld, pw, (size_t)m, head_row * len + (size_t)j0,
                           &at->key);
        }
        const float *pv = at->dropping ? sc->rows1 : p + j0;
        const ptrdiff_t pvs = at->dropping ? sc->ld : ps;
        if (at->v8)
            k->attn_wsum_q8(a.out + (size_t)i * C, D, pv, pvs, nh,
                            at->v8 + a.s * at->v8_seq + kvh * hb + key_row(at, j0) * at->v8_row,
                            at->v8_row, m, 0, D);
        else
            k->attn_wsum(a.out + (size_t)i * C, D, pv, pvs, nh,
                         a.vals + key_row(at, j0) * at->kv_row, at->kv_row, m, 0, D);
    }
}

/* Queries i0..i1-1 of (s, h) in tiles, against the transposed keys. */
static void fwd_tiles(const attn_job *j, size_t sh, int i0, int i1, const attn_scratch *sc)
{
    const ngpt_attn *at = j->at;
    const ngpt_kernels *k = j->ctx->k;
    const int D = j->D, C = j->C, len = at->len;
    const ptrdiff_t row = j->row;
    const attn_head a = head_of(j, sh);
    transpose_rows(sc->kt, sc->ld, a.keys, at->kv_row, a.n0 + i1, D);
    for (int t0 = i0; t0 < i1; t0 += NGPT_ATTN_TILE) {
        const int R = i1 - t0 < NGPT_ATTN_TILE ? i1 - t0 : NGPT_ATTN_TILE;
        const size_t first = sh * (size_t)len + (size_t)t0;     /* row index of query t0 */
        float *p = at->probs ? at->probs + first * len : sc->rows0;
        const ptrdiff_t ps = at->probs ? len : sc->ld;
        k->attn_scores_t(p, ps, a.q + t0 * row, row, R, sc->kt, sc->ld, a.n0 + t0 + 1, D, j->scale);
        for (int r = 0; r < R; r++) {
            const int n = a.n0 + t0 + r + 1;
            float *pr = p + r * ps;
            k->softmax(pr, pr, n);
            keep_row(j, sh, t0 + r, pr, n);
            if (at->dropping)
                k->dropout(sc->rows1 + r * sc->ld, pr, (size_t)n, (first + r) * len, &at->key);
        }
        k->attn_wsum(a.out + (size_t)t0 * C, C, at->dropping ? sc->rows1 : p,
                     at->dropping ? sc->ld : ps, R, a.vals, at->kv_row, a.n0 + t0 + 1, 1, D);
    }
}

/* Query rows of blocks begin..end-1; block b is (sequence, head, rows). */
static void fwd_range(void *arg, size_t begin, size_t end, int thread)
{
    const attn_job *j = arg;
    const attn_scratch sc = scratch_of(j, thread);
    for (size_t blk = begin; blk < end; blk++) {
        const size_t sh = blk / (size_t)j->qblocks;         /* s*H + h */
        const int b0 = (int)(blk % (size_t)j->qblocks) * j->qblock;
        const int i0 = b0 > j->at->q0 ? b0 : j->at->q0;
        const int i1 = b0 + j->qblock < j->at->len ? b0 + j->qblock : j->at->len;
        /* a few rows (decoding) run one by one, the heads of a key/value
         * head together; more, against an 8-bit cache, a tile of rows at a
         * time, or tiles against the transposed keys; rows that a window
         * cuts one by one (the tiles' keys start at 0) */
        const bool cut = window_start(j->at, head_of(j, sh).n0 + i1) > 0;
        const bool few = i1 - i0 < MIN_TILED;
        if (!few && (j->at->k8 || j->at->v8)) {
            fwd_rows_q8(j, sh, i0, i1, &sc, thread);
        } else if (!few && !cut) {
            fwd_tiles(j, sh, i0, i1, &sc);
        } else {
            /* with one block a head, the range's next heads of the same
             * key/value head run with this one */
            const int h = (int)(sh % (size_t)j->H);
            int nh = 1;
            while (j->qblocks == 1 && blk + (size_t)nh < end && nh < NGPT_ATTN_TILE &&
                   (h + nh) / j->G == h / j->G)
                nh++;
            fwd_rows(j, sh, nh, i0, i1, &sc, thread);
            blk += (size_t)nh - 1;
        }
    }
}

/* The scores' divisor under the square root: D, or attn_scalar (Gemma's
 * query_pre_attn_scalar). */
static float attn_scalar(const ngpt_config *c, int D)
{
    return c->attn_scalar != 0.0f ? c->attn_scalar : (float)D;
}

static attn_job job_of(const ngpt_context *ctx, const ngpt_attn *at)
{
    const int H = ctx->cfg.n_heads, KV = ngpt_cfg_kv_heads(&ctx->cfg);
    const int D = ngpt_cfg_head_dim(&ctx->cfg), C = H * D;
    /* whole (sequence, head) pairs copy their keys once; blocks of rows when
     * the pairs are too few to share among the threads */
    const bool few = (size_t)at->nseq * (size_t)H < 8 * (size_t)ctx->shape.threads;
    const int qblock = few && at->len > QUERY_BLOCK ? QUERY_BLOCK : at->len;
    attn_job j = {ctx, at, NULL, NULL, H, KV, H / KV, D, C, qblock, (at->len + qblock - 1) / qblock,
                  ngpt_cfg_qkv_width(&ctx->cfg), 1.0f / sqrtf(attn_scalar(&ctx->cfg, D))};
    return j;
}

void ngpt_op_attention_fwd(ngpt_context *ctx, const ngpt_attn *at)
{
    attn_job j = job_of(ctx, at);
    const size_t blocks = (size_t)at->nseq * j.H * j.qblocks;
    /* per block: qblock queries, each a dot and a weighted sum over its keys */
    const double keys = (at->pos0 ? ctx->cfg.context_len / 2.0 : 0.0) + at->len / 2.0 + 1.0;
    const double unit = j.qblock * keys * (2.0 * j.D + 8.0);
    /* a few rows a head (decoding) run a row at a time, the heads of a
     * key/value head together: parts of whole groups while there are enough
     * for the threads (the largest such divisor of G heads) */
    size_t align = 1;
    if (j.qblocks == 1 && at->len - at->q0 < MIN_TILED)
        for (size_t g = (size_t)j.G; g > 1 && align == 1; g--)
            if ((size_t)j.G % g == 0 && blocks / g >= (size_t)ctx->shape.threads) align = g;
    ngpt_par_for(ctx, blocks, align, unit, fwd_range, &j);
}

/* (sequence, key/value head) pairs begin..end-1: the pair's query heads in
 * increasing order, each over its query rows in order, a tile of rows at a
 * time; dK and dV of the pair accumulate over all of them. */
static void bwd_range(void *arg, size_t begin, size_t end, int thread)
{
    const attn_job *j = arg;
    const ngpt_attn *at = j->at;
    const ngpt_kernels *k = j->ctx->k;
    const int H = j->H, KV = j->KV, D = j->D, C = j->C, T = at->len;
    const ptrdiff_t row = j->row;
    const attn_scratch sc = scratch_of(j, thread);
    float *pd = sc.rows0, *dp = sc.rows1;       /* dropped probabilities; dP, then dS */
    for (size_t sg = begin; sg < end; sg++) {
        const int s = (int)(sg / (size_t)KV), g = (int)(sg % (size_t)KV);
        const float *base = at->qkv + (size_t)s * T * row;
        float *gbase = j->dqkv + (size_t)s * T * row;
        const ptrdiff_t koff = (ptrdiff_t)H * D + g * D, voff = (ptrdiff_t)(H + KV) * D + g * D;
        const float *keys = base + koff, *vals = base + voff;
        float *gkeys = gbase + koff, *gvals = gbase + voff;
        for (int i = 0; i < T; i++) {           /* dK, dV of this head accumulate from zero */
            memset(gkeys + i * row, 0, (size_t)D * sizeof(float));
            memset(gvals + i * row, 0, (size_t)D * sizeof(float));
        }
        transpose_rows(sc.kt, sc.ld, vals, row, T, D);
        for (int h = g * j->G; h < (g + 1) * j->G; h++) {
            const size_t sh = (size_t)s * H + (size_t)h;
            for (int t0 = 0; t0 < T; t0 += NGPT_ATTN_TILE) {    /* query rows in increasing order */
                const int R = T - t0 < NGPT_ATTN_TILE ? T - t0 : NGPT_ATTN_TILE;
                const size_t first = sh * (size_t)T + (size_t)t0;
                const float *p = at->probs + first * T;
                const float *go = j->dout + ((size_t)s * T + t0) * C + h * D;
                const float *pv = p;
                ptrdiff_t pvs = T;
                if (at->dropping) {
                    for (int r = 0; r < R; r++)
                        k->dropout(pd + r * sc.ld, p + r * T, (size_t)(t0 + r + 1), (first + r) * T,
                                   &at->key);
                    pv = pd, pvs = sc.ld;
                }
                /* o_i = sum_j pv_j v_j:  dV_j += pv_j dO_i;  dPv_j = dO_i . v_j */
                k->outer_acc(gvals, row, pv, pvs, go, C, R, t0 + 1, D);
                k->attn_scores_t(dp, sc.ld, go, C, R, sc.kt, sc.ld, t0 + 1, D, 1.0f);
                for (int r = 0; r < R; r++) {
                    const int n = t0 + r + 1;
                    float *dpr = dp + r * sc.ld;
                    if (at->dropping) k->dropout(dpr, dpr, (size_t)n, (first + r) * T, &at->key);
                    /* softmax and the 1/sqrt(D) scale: dS (scores = q.k * scale) */
                    k->softmax_bwd(dpr, p + r * T, dpr, n, j->scale);
                }
                /* dQ_i = sum_j dS_j k_j (written whole);  dK_j += dS_j q_i */
                k->attn_wsum(gbase + (size_t)t0 * row + h * D, row, dp, sc.ld, R, keys, row, t0 + 1, 1,
                             D);
                k->outer_acc(gkeys, row, dp, sc.ld, base + (size_t)t0 * row + h * D, row, R, t0 + 1, D);
            }
        }
    }
}

void ngpt_op_attention_bwd(ngpt_context *ctx, const ngpt_attn *at, const float *dout,
                           float *dqkv)
{
    attn_job j = job_of(ctx, at);
    j.dout = dout;
    j.dqkv = dqkv;
    const double unit = j.G * (double)at->len * (at->len / 2.0 + 1.0) * (5.0 * j.D + 16.0);
    ngpt_par_for(ctx, (size_t)at->nseq * j.KV, 1, unit, bwd_range, &j);
}
