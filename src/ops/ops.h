/* ops.h — the model's operations, between the wiring (forward.c,
 * backward.c, optim.c) and the single-threaded kernels of ctx->k.
 *
 * Each op cuts its *outputs* into parts (rows of a matrix product, columns
 * of a weight gradient, heads, elements, vocabulary rows) and runs the
 * kernels on the parts across the context's thread pool. Every output is
 * still computed by exactly one kernel call with its whole chain, so which
 * thread computes which part, and how many parts there are, cannot change a
 * bit (docs/DESIGN.md §4): the results are the same for any thread count. A job
 * whose work is below pool->inline_below runs whole on the calling thread
 * (the dispatch: par_for.h).
 *
 * The few reductions whose chain crosses every row (the loss mean, the
 * gradient norm for clipping) stay single-threaded in their callers: they
 * are canonical 8-lane sums over all elements, and cost about a millisecond
 * per training step.
 */
#ifndef NGPT_OPS_OPS_H
#define NGPT_OPS_OPS_H

#include "runtime/config.h"
#include "runtime/context.h"

/* C(i,j) = [C(i,j) +] sum_k A(i,k) B(k,j) [+ bias[j]]: the gemm kernel's
 * contract (kernels.h), split by row blocks of C, or by column panels when
 * C has few rows (decoding). */
void ngpt_op_gemm(ngpt_context *ctx, int m, int n, int k, const float *a, ptrdiff_t a_rs,
                  ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs,
                  const float *bias, float *c, ptrdiff_t c_rs, bool accumulate);

/* y (rows, out) = x (rows, in) W^T + bias, W stored (out, in) as in PyTorch;
 * with gelu set, also gelu (rows, out) = act(y) (it may be y; act: the
 * GELU kernel the wiring picks, gelu_fwd or gelu_tanh_fwd), each part
 * of the product followed by its own outputs' GELU in the same job (fc1:
 * one job instead of two, and its GELU split like the product). */
void ngpt_op_linear(ngpt_context *ctx, float *y, const float *x, const float *w,
                    const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                    float *gelu);
/* The same with W's full panels packed in place (runtime/weights.h: wp is
 * the Linear's W in the parameters, its rows past out - out % 16 as they
 * are): gemm_packed, and gemm for those rows, split the same way. */
void ngpt_op_linear_packed(ngpt_context *ctx, float *y, const float *x, const float *wp,
                           const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                           float *gelu);
/* The same with an 8-bit W (src/q8.h): x's rows quantized into plan.q8_x,
 * then gemm_q8. */
void ngpt_op_linear_q8(ngpt_context *ctx, float *y, const float *x, const int8_t *wq,
                       const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                       float *gelu);
/* The same with a 4-bit W (src/q4.h): gemm_q4 on the same quantized rows. */
void ngpt_op_linear_q4(ngpt_context *ctx, float *y, const float *x, const uint8_t *wq,
                       const float *bias, int rows, int in, int out, ngpt_gelu_fwd_fn act,
                       float *gelu);
/* dW (out, in) += dy^T (rows, out) x (rows, in): each dW(i,j) one chain over
 * all rows, split by 256-column blocks of dW where it has one for every
 * thread, else by rows of dW, one part per thread (each part packs its
 * operands: gemm.h). */
void ngpt_op_linear_bwd_weight(ngpt_context *ctx, float *dw, const float *dy, const float *x,
                               int rows, int in, int out);
/* dx (rows, in) = dy (rows, out) W (out, in). */
void ngpt_op_linear_bwd_input(ngpt_context *ctx, float *dx, const float *dy, const float *w,
                              int rows, int in, int out);

/* The config's norm (LayerNorm, or RMSNorm: norm_type; eps: norm_eps) over
 * rows of c, split by rows. mean/rstd may be NULL; RMSNorm keeps rstd only
 * (mean and b are not read). */
void ngpt_op_norm_fwd(ngpt_context *ctx, float *out, float *mean, float *rstd, const float *x,
                      const float *w, const float *b, size_t rows, int c);
/* Its backward: dx += ... split by rows; dw [and LayerNorm's db] continue
 * one chain per column over every row, split by columns (dw NULL: frozen
 * weights, d(x) only). */
void ngpt_op_norm_bwd(ngpt_context *ctx, float *dx, float *dw, float *db, const float *dy,
                      const float *x, const float *mean, const float *rstd, const float *w,
                      size_t rows, int c);
/* qk_norm: RMSNorm (norm_eps) over each head of D of q (H heads, weight
 * wq) and of k (KV heads, wk) in qkv (rows, QKV), in place; split by rows.
 * Their inputs are kept in x (q's (rows H, D) then k's (rows KV, D)), their
 * rstd in rstd (rows H then rows KV; NULL: inference). */
void ngpt_op_qk_norm_fwd(ngpt_context *ctx, float *qkv, float *x, float *rstd, const float *wq,
                         const float *wk, size_t rows);
/* Its backward, in place in g_qkv (rows, QKV): d(q) and d(k) after the norm
 * in, before it out. dy (as large as x) holds d(q) and d(k) gathered as x
 * is; dwq and dwk (NULL: frozen) continue one chain per column over the
 * rows (row, head) in increasing order. */
void ngpt_op_qk_norm_bwd(ngpt_context *ctx, float *g_qkv, float *dy, const float *x,
                         const float *rstd, const float *wq, const float *wk, float *dwq,
                         float *dwk, size_t rows);
/* The gated MLP (mlp=swiglu: silu, mlp=geglu: GELU of the config's form):
 * h (rows, F) = act(gate) * up of fc1 (rows, 2F), gate columns [0, F), up
 * [F, 2F); split by rows. */
void ngpt_op_glu_fwd(ngpt_context *ctx, float *h, const float *fc1, size_t rows, int F);
/* Its backward: dfc1 (rows, 2F) = d(gate) | d(up) from dh (rows, F). */
void ngpt_op_glu_bwd(ngpt_context *ctx, float *dfc1, const float *dh, const float *fc1,
                     size_t rows, int F);
/* db[j] += dy[r][j] over rows r in order (bias gradients), split by columns. */
void ngpt_op_colsum_acc(ngpt_context *ctx, float *db, const float *dy, size_t rows, int n);

/* Elementwise, split by element ranges. */
/* y = GELU(x) and g = its derivative by the kernel act_grad (gelu_fwd_grad
 * or gelu_tanh_fwd_grad: the wiring picks) */
void ngpt_op_gelu_fwd_grad(ngpt_context *ctx, ngpt_gelu_fwd_grad_fn act_grad, float *y, float *g,
                           const float *x, size_t n);
/* y = act(x) alone (act: gelu_fwd or gelu_tanh_fwd): the same bits as a
 * Linear's GELU epilogue, for a product that is added to first (LoRA) */
void ngpt_op_gelu_fwd(ngpt_context *ctx, ngpt_gelu_fwd_fn act, float *y, const float *x, size_t n);
/* dx = dy * g, g from ngpt_op_gelu_fwd_grad */
void ngpt_op_gelu_bwd(ngpt_context *ctx, float *dx, const float *g, const float *dy, size_t n);
void ngpt_op_add(ngpt_context *ctx, float *y, const float *a, const float *b, size_t n);
/* y = x * s (emb_scale) */
void ngpt_op_scale(ngpt_context *ctx, float *y, const float *x, float s, size_t n);
/* logit_softcap: x = cap * tanh(x / cap) in place; its backward from the
 * capped y: dx *= 1 - (y / cap)^2 */
void ngpt_op_softcap(ngpt_context *ctx, float *x, size_t n, float cap);
void ngpt_op_softcap_bwd(ngpt_context *ctx, float *dx, const float *y, size_t n, float cap);
/* y[i] = dropout of x[i] as element first+i of the key's stream. */
void ngpt_op_dropout(ngpt_context *ctx, float *y, const float *x, size_t n, uint64_t first,
                     const ngpt_dropout_key *key);
/* AdamW over n elements of one tensor (kernels.h). */
void ngpt_op_adamw(ngpt_context *ctx, float *p, const float *g, float *m, float *v, size_t n,
                   const ngpt_adamw_coef *c);

/* RoPE (or its transpose when backward; pairs as rope_pairs says) on the q
 * (H heads) and k (KV heads) parts of rows of (nseq, len, (H + 2 KV) D); row
 * i of sequence s is at position (pos0 ? pos0[s] : 0) + i; the tables of
 * layer `layer` (a local layer's own base: sliding_window). */
void ngpt_op_rope(ngpt_context *ctx, float *qkv, int nseq, int len, const int32_t *pos0,
                  int layer, bool backward);
/* The RoPE tables (Tctx, D/2) of a layer. */
void ngpt_op_rope_tables(const ngpt_context *ctx, int layer, const float **cos_t,
                        const float **sin_t);

/* Embedding lookup x[r] = table[tokens[r]] (rows of c), split by rows. */
void ngpt_op_embed(ngpt_context *ctx, float *x, const float *table, const int32_t *tokens,
                   size_t rows, int c);
/* The same from the W (n, c) of a Linear packed in place (the tied lm_head
 * of an f32 inference context), or from an 8-bit or 4-bit one (embed_q8,
 * embed_q4). */
void ngpt_op_embed_packed(ngpt_context *ctx, float *x, const float *wp, int n,
                          const int32_t *tokens, size_t rows, int c);
void ngpt_op_embed_q8(ngpt_context *ctx, float *x, const int8_t *wq, const int32_t *tokens,
                      size_t rows, int c);
void ngpt_op_embed_q4(ngpt_context *ctx, float *x, const uint8_t *wq, const int32_t *tokens,
                      size_t rows, int c);
/* dtable[tokens[r]] += dx[r] for rows r in order, split by table rows (each
 * scans every token, so each table row's chain keeps the row order). */
void ngpt_op_embed_bwd(ngpt_context *ctx, float *dtable, const float *dx, const int32_t *tokens,
                       size_t rows, int c, int vocab);

/* Cross-entropy per row: losses[r] of logits row r (n classes) against
 * targets[r]; and its backward with scale (1 / the rows of the mean). A
 * target < 0 (NGPT_TARGET_IGNORE) gives the row loss 0 and gradient 0. */
void ngpt_op_xent(ngpt_context *ctx, float *losses, const float *logits, const int32_t *targets,
                  size_t rows, int n);
void ngpt_op_xent_bwd(ngpt_context *ctx, float *dlogits, const float *logits,
                      const int32_t *targets, size_t rows, int n, float scale);

/* Causal self-attention of one layer over nseq sequences of len queries
 * (ops/attention.c). Query i of sequence s sits at position n0 = pos0[s]
 * (0 without pos0) + i and sees keys 0..n0+i of its sequence: key j of
 * sequence s at k + s*kv_seq + j*kv_row (v likewise). */
typedef struct ngpt_attn {
    const float *qkv;           /* (nseq, len, (H + 2 KV) D); q of head h at column h*D */
    const float *k, *v;         /* keys/values of sequence 0, key/value head 0; query
                                   head h reads key/value head h / (H / KV) */
    ptrdiff_t kv_seq, kv_row;   /* strides between sequences, between positions */
    /* an 8-bit KV cache (cached passes): keys and/or values as compact
     * quantized head rows (kernels.inc, kv_q8), in place of k and v; strides
     * in bytes. NULL: k / v are floats. */
    const int8_t *k8, *v8;
    ptrdiff_t k8_seq, k8_row, v8_seq, v8_row;
    int8_t *query8;             /* (threads, NGPT_ATTN_TILE, ngpt_q8_head_bytes(D)): queries quantized */
    const int32_t *pos0;        /* (nseq) first position of each sequence, or NULL */
    int nseq, len;
    int q0;                     /* queries 0..q0-1 are skipped (forward only) */
    int window;                 /* 0, or W: query n0 + i sees keys n0 + i - W + 1..n0 + i
                                   only (sliding_window; the others' probabilities are 0) */
    int ring;                   /* 0, or R: key j is at row j % R (a cached local layer's
                                   ring, model/kv.h: any W keys in a row are consecutive) */
    float *out;                 /* (nseq, len, H D) heads merged; rows from q0 */
    /* forward outputs besides out (each may be NULL) */
    float *probs;               /* (nseq, H, len, len) full map, zero past the causal edge */
    float *last_rows;           /* (nseq, H, len) the last query's probabilities */
    float *cache_rows;          /* (nseq, H, row_len) the last query's, zero padded to row_len */
    int row_len;
    /* attention dropout (train) */
    bool dropping;
    ngpt_dropout_key key;
} ngpt_attn;

/* Forward: out, and the probability outputs that are set. */
void ngpt_op_attention_fwd(ngpt_context *ctx, const ngpt_attn *at);
/* Backward of a full pass (pos0 NULL, k/v inside qkv, probs = the forward's
 * map): d(out) (nseq, len, H D) -> dqkv (nseq, len, (H + 2 KV) D), q and k
 * before the RoPE backward; split by (sequence, key/value head): dK and dV of
 * a key/value head accumulate over its query heads in increasing order, each
 * over its query rows in increasing order. */
void ngpt_op_attention_bwd(ngpt_context *ctx, const ngpt_attn *at, const float *dout,
                           float *dqkv);

#endif
