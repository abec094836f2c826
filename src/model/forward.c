/* forward.c — the model's wiring (docs/DESIGN.md §1), written once over the
 * ops (ops/ops.h: the kernels, split across the thread pool). Shapes: B batch,
 * T sequence, C model width, H heads, D head size (C/H by default), KV
 * key/value heads (H by default), F = d_ff, V vocabulary.
 *
 *   tokens (B,T) -> tok_emb -> dropout -> L x Block -> ln_f -> x tok_emb^T -> logits (B,T,V)
 *   Block: x = x + drop(Attn(ln1(x)));  x = x + drop(MLP(ln2(x)))
 *
 * The variants (ngpt_config) change parts of it: [+ pos table] after tok_emb,
 * post-norm blocks, a bias on qkv and on proj, GELU's tanh form, no ln_f, an
 * untied lm_head (lay.lm_head); the Llama family's RMSNorm (in the norm op),
 * SwiGLU MLP, no MLP biases, grouped-query attention (KV heads, in the
 * attention op and the KV cache), a head size other than C/H (D = head_dim:
 * qkv is (H + 2 KV) D wide, the merged heads H D) and RoPE on halves (the
 * RoPE op); Qwen3's RMSNorm over each head of q and k before RoPE (qk_norm)
 * and Llama 3's rescaled RoPE frequencies (rope_scaling: in the tables,
 * runtime/positions.c); Gemma 3's (1 + w) RMSNorm (norm_offset, in the norm
 * ops), the embedding times emb_scale, GeGLU, a norm of each branch before
 * its residual add (norm=sandwich), the scores' attn_scalar (in the
 * attention op), local layers with a window and their own RoPE base
 * (sliding_window: the attention op's window, the tables of the layer) and
 * capped logits (logit_softcap, in the head).
 */
#include <math.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/rng.h"
#include "model/acts.h"
#include "model/kv.h"
#include "model/lora.h"
#include "model/model.h"
#include "ops/ops.h"
#include "runtime/dropout.h"
#include "runtime/weights.h"

/* One pass of the model over nseq sequences of len new tokens each (rows
 * r = s*len + i). Full forward: positions 0..len-1, keys/values from the
 * pass's own qkv. Cached (generation): sequence s is KV slot slot0+s; its new
 * tokens sit at positions ngpt_kv_len(slot)..+len-1, their keys (after RoPE)
 * and values are written to the cache and attention reads the cache. Both
 * use the same wiring and kernel chains, so the logits are bit-identical. */
typedef struct ngpt_pass {
    const int32_t *tokens;      /* (nseq, len), already validated */
    int32_t nseq, len;
    bool cached;
    int32_t slot0;              /* cached: first KV slot */
    /* Cached, one sequence, and only its last token's logits are wanted
     * (generation's own prefills): every layer still caches the keys and
     * values of every token, but the last layer's attention, projection and
     * MLP, ln_f and the lm_head run for the last token only (each row's
     * chains are its own: the same bits). Logits (1, 1, V). */
    bool last_only;
} ngpt_pass;

/* Applies dropout of one site in place (the caller checks that it is on). */
static void drop(ngpt_context *ctx, float *x, size_t n, int layer, int kind)
{
    const ngpt_dropout_key key = ngpt_dropout_key_of(ctx, layer, kind);
    ngpt_op_dropout(ctx, x, x, n, 0, &key);
}

/* ids[0..n) are token ids (targets: or NGPT_TARGET_IGNORE). */
static ngpt_status check_ids(const int32_t *ids, size_t n, int32_t V, bool targets)
{
    for (size_t i = 0; i < n; i++)
        if ((ids[i] < 0 || ids[i] >= V) && !(targets && ids[i] == NGPT_TARGET_IGNORE))
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "ngpt_context_forward: %s[%zu] = %d is not a "
                             "token id in 0..%d%s", targets ? "targets" : "tokens", i,
                             (int)ids[i], (int)V - 1,
                             targets ? " (nor NGPT_TARGET_IGNORE, -1)" : "");
    return NGPT_OK;
}

/* Causal self-attention of one layer: a.qkv (nseq,len,QKV) -> a.atty (nseq,len,H*D),
 * the rows of queries q0..len-1 (q0 > 0: a last_only pass's last layer).
 * Query i of sequence s attends to keys 0..pos0+i: in a full pass they are the
 * pass's own qkv rows (stride 3C); in a cached pass the new keys/values are
 * first appended to the slot's cache (stride C). Same kernels, same chains. */
static void attention(ngpt_context *ctx, const ngpt_layer_acts *a, int layer, const ngpt_pass *ps,
                      bool dropping, int q0)
{
    const ngpt_plan *pl = &ctx->plan;
    const int H = ctx->cfg.n_heads, D = ngpt_cfg_head_dim(&ctx->cfg);
    const int KVD = (int)ngpt_kv_width(ctx);     /* KV heads of D: C by default */
    const int B = ps->nseq, T = ps->len;
    const size_t TC = ngpt_kv_rows(ctx, layer);     /* a slot's rows: Tctx, or a ring's */
    const ptrdiff_t row = ngpt_cfg_qkv_width(&ctx->cfg), k0 = (ptrdiff_t)H * D;
    ngpt_attn at = {.qkv = a->qkv, .k = a->qkv + k0, .v = a->qkv + k0 + KVD,
                    .kv_seq = (ptrdiff_t)T * row, .kv_row = row, .nseq = B, .len = T,
                    .out = a->atty, .q0 = q0, .window = ngpt_cfg_layer_window(&ctx->cfg, layer),
                    .dropping = dropping,
                    .key = ngpt_dropout_key_of(ctx, layer, NGPT_SITE_ATTN_PROBS)};
    if (ps->cached) {
        /* the new rows go after each slot's cached ones; attention reads the cache */
        for (int b = 0; b < B; b++) {
            const float *src = a->qkv + (size_t)b * T * row;
            ngpt_kv_write(ctx, layer, ps->slot0 + b, T, src + k0, src + k0 + KVD, row);
        }
        /* slots slot0.. are consecutive blocks of TC rows: KV*D floats,
         * or KV quantized head rows (an 8-bit cache) */
        at.kv_seq = (ptrdiff_t)(TC * (size_t)KVD);
        at.kv_row = KVD;
        if (ngpt_kv_keys_q8(ctx)) {
            at.k8 = ngpt_kv_keys(ctx, layer, ps->slot0);
            at.k8_row = (ptrdiff_t)ngpt_kv_key_row(ctx);
            at.k8_seq = (ptrdiff_t)TC * at.k8_row;
            at.query8 = pl->kv.query;
        } else {
            at.k = ngpt_kv_keys(ctx, layer, ps->slot0);
        }
        if (ngpt_kv_values_q8(ctx)) {
            at.v8 = ngpt_kv_values(ctx, layer, ps->slot0);
            at.v8_row = (ptrdiff_t)ngpt_kv_value_row(ctx);
            at.v8_seq = (ptrdiff_t)TC * at.v8_row;
        } else {
            at.v = ngpt_kv_values(ctx, layer, ps->slot0);
        }
        at.pos0 = ngpt_kv_lens(ctx, ps->slot0);
        at.ring = ngpt_kv_ring(ctx, layer);
        /* the last new token's row, (H, Tctx) per slot */
        at.cache_rows = ngpt_kv_trace(ctx, layer, ps->slot0);
        at.row_len = ctx->cfg.context_len;
    } else {
        at.probs = a->att;      /* the full (B,H,T,T) map: training, or a FULL trace */
        if (pl->trace_rows)
            at.last_rows = pl->trace_rows + (size_t)layer * ctx->shape.batch * H * ctx->shape.seq;
    }
    ngpt_op_attention_fwd(ctx, &at);
}

/* A Linear's product [and GELU in its job] in the storage the context holds. */
static void linear_gelu_product(ngpt_context *ctx, int l, ngpt_linear which, float *y,
                                const float *x, const float *w, const float *bias, int rows,
                                int in, int out, ngpt_gelu_fwd_fn act, float *gelu)
{
    if (ngpt_linear_dtype(&ctx->cfg, which) == NGPT_DTYPE_Q4)
        ngpt_op_linear_q4(ctx, y, x, ngpt_weights_q4(ctx, l, which), bias, rows, in, out, act, gelu);
    else if (ctx->cfg.weights != NGPT_WEIGHTS_F32)
        ngpt_op_linear_q8(ctx, y, x, ngpt_weights_q8(ctx, l, which), bias, rows, in, out, act, gelu);
    else if (ctx->run.weights_packed)
        ngpt_op_linear_packed(ctx, y, x, w, bias, rows, in, out, act, gelu);
    else
        ngpt_op_linear(ctx, y, x, w, bias, rows, in, out, act, gelu);
}

/* y (rows, out) = x (rows, in) W^T + bias for Linear `which` of layer l
 * [and gelu = GELU(y)],
 * W = w stored (out, in) as in PyTorch, as the context holds it
 * (runtime/weights.h): 8-bit, packed in place (inference, the panels that
 * model_pass packs before every pass), or as it is (training; inference
 * while ngpt_context_params's pointer is out), through gemm, which packs its
 * blocks itself. The same bits for both float paths. An adapted Linear
 * (model/lora.h) adds its LoRA terms to y before the GELU. */
static void linear_gelu(ngpt_context *ctx, int l, ngpt_linear which, float *y, const float *x,
                        const float *w, const float *bias, int rows, int in, int out, float *gelu)
{
    /* the MLP's activation: exact (erf) or GPT-2's tanh form */
    const ngpt_gelu_fwd_fn act =
        ctx->cfg.gelu == NGPT_GELU_TANH ? ctx->k->gelu_tanh_fwd : ctx->k->gelu_fwd;
    if (ngpt_lora_on(ctx, l, which)) {   /* the product, its LoRA terms, then GELU */
        linear_gelu_product(ctx, l, which, y, x, w, bias, rows, in, out, act, NULL);
        ngpt_lora_fwd(ctx, l, which, y, x, rows, out);
        if (gelu) ngpt_op_gelu_fwd(ctx, act, gelu, y, (size_t)rows * (size_t)out);
        return;
    }
    linear_gelu_product(ctx, l, which, y, x, w, bias, rows, in, out, act, gelu);
}

/* A Linear without GELU; linear_gelu also writes gelu = GELU(y) in the
 * product's own job (fc1: ops.h). */
static void linear(ngpt_context *ctx, int l, ngpt_linear which, float *y, const float *x,
                   const float *w, const float *bias, int rows, int in, int out)
{
    linear_gelu(ctx, l, which, y, x, w, bias, rows, in, out, NULL);
}

/* norm=sandwich: a branch's post norm (rows R) into out, which it returns. */
static const float *branch_norm(ngpt_context *ctx, float *out, float *mean, float *rstd,
                                const float *branch, const float *w, const float *b, size_t R)
{
    const int C = ctx->cfg.d_model;
    ngpt_acts_handover(out, R * (size_t)C);
    ngpt_op_norm_fwd(ctx, out, mean, rstd, branch, w, b, R, C);
    return out;
}

/* One transformer block (docs/DESIGN.md §1), in place on the residual stream.
 * Pre-norm (the original): x = x + drop(Attn(ln1(x))); x = x + drop(MLP(ln2(x))).
 * Post-norm: x = ln1(x + drop(Attn(x))); x = ln2(x + drop(MLP(x))). */
static void block(ngpt_context *ctx, int l, const ngpt_pass *ps, bool dropping)
{
    const ngpt_layout *lay = &ctx->lay;
    const ngpt_config *cfg = &ctx->cfg;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = cfg->d_model, F = cfg->d_ff, F1 = ngpt_cfg_fc1_width(cfg);
    const int QKV = ngpt_cfg_qkv_width(cfg), A = ngpt_cfg_attn_width(cfg);
    const int B = ps->nseq, T = ps->len;
    const size_t BT = (size_t)B * (size_t)T;
    const bool post = cfg->norm == NGPT_NORM_POST, gated = ngpt_cfg_gated(cfg);
    const bool sandwich = cfg->norm == NGPT_NORM_SANDWICH;
    ngpt_layer_acts a = ngpt_layer_acts_get(ctx, l);
    /* rows r0..BT-1 go on past the attention: all of them, or only the last
     * in the last layer of a last_only pass (one sequence) */
    const bool last = ps->last_only && l == cfg->n_layers - 1;
    const size_t r0 = last ? BT - 1 : 0, R = BT - r0;
#define WB(field) ngpt_block_ptr(lay, W, l, lay->field)     /* layer l's parameter */
#define MLP_BIAS(field) (cfg->mlp_bias ? WB(field) : NULL)

    /* attention sublayer: [ln1] (BT,C) -> qkv (BT,QKV) [+ bias] -> [qk_norm] -> [RoPE on q,k]
     * -> attention (R,A) -> proj (R,C) [+ bias] -> dropout -> + residual */
    /* each buffer shared in inference (acts.h) is handed over before it is written */
    const float *attn_in = a.x_in;
    if (!post) {
        ngpt_acts_handover(a.ln_out, BT * C);
        ngpt_op_norm_fwd(ctx, a.ln_out, a.ln1_mean, a.ln1_rstd, a.x_in, WB(ln1_w), WB(ln1_b), BT, C);
        attn_in = a.ln_out;
    }
    ngpt_acts_handover(a.qkv, BT * QKV);
    linear(ctx, l, NGPT_LINEAR_QKV, a.qkv, attn_in, WB(qkv_w), cfg->qkv_bias ? WB(qkv_b) : NULL,
           (int)BT, C, QKV);
    if (cfg->qk_norm) {     /* each head of q and k, its input kept for the backward */
        ngpt_acts_handover(a.qk_x, BT * (size_t)(cfg->n_heads + ngpt_cfg_kv_heads(cfg)) *
                                       (size_t)ngpt_cfg_head_dim(cfg));
        ngpt_op_qk_norm_fwd(ctx, a.qkv, a.qk_x, a.qk_rstd, WB(q_norm), WB(k_norm), BT);
    }
    if (cfg->pos == NGPT_POS_ROPE)
        ngpt_op_rope(ctx, a.qkv, B, T, ps->cached ? ngpt_kv_lens(ctx, ps->slot0) : NULL, l, false);
    float *atty = a.atty + r0 * A, *res1 = a.res1 + r0 * C;
    ngpt_acts_handover(atty, R * A);
    attention(ctx, &a, l, ps, dropping, last ? T - 1 : 0);
    const float *x_in = a.x_in + r0 * C;
    ngpt_acts_handover(a.branch, R * C);
    linear(ctx, l, NGPT_LINEAR_PROJ, a.branch, atty, WB(proj_w),
           cfg->proj_bias ? WB(proj_b) : NULL, (int)R, A, C);
    if (dropping) drop(ctx, a.branch, BT * C, l, NGPT_SITE_ATTN_OUT);
    /* [post_attn_norm of the branch, before the residual add] */
    const float *attn_out = !sandwich ? a.branch
                                      : branch_norm(ctx, a.pa_out, a.pa_mean + r0, a.pa_rstd + r0,
                                                    a.branch, WB(pa_w), WB(pa_b), R);
    ngpt_op_add(ctx, res1, x_in, attn_out, R * C);
    /* MLP sublayer: ln (R,C) -> fc1 (R,F) -> GELU -> fc2 (R,C) -> dropout [-> post_mlp_norm]
     * -> + residual, or SwiGLU (GeGLU): fc1 (R,2F) = [gate | up] -> silu(gate) * up
     * (gelu(gate) * up) (R,F) -> fc2;
     * pre-norm: ln2(res1), residual res1; post-norm: ln1(res1) is both, and ln2
     * normalises the sum */
    ngpt_acts_handover(a.ln_out, R * C);
    if (post)
        ngpt_op_norm_fwd(ctx, a.ln_out, a.ln1_mean + r0, a.ln1_rstd + r0, res1, WB(ln1_w),
                         WB(ln1_b), R, C);
    else
        ngpt_op_norm_fwd(ctx, a.ln_out, a.ln2_mean + r0, a.ln2_rstd + r0, res1, WB(ln2_w),
                         WB(ln2_b), R, C);
    ngpt_acts_handover(a.fc1, R * F1);
    ngpt_acts_handover(a.hidden, R * F);
    if (gated) {
        linear(ctx, l, NGPT_LINEAR_FC1, a.fc1, a.ln_out, WB(fc1_w), MLP_BIAS(fc1_b), (int)R, C, F1);
        ngpt_op_glu_fwd(ctx, a.hidden, a.fc1, R, F);
    } else {
        linear_gelu(ctx, l, NGPT_LINEAR_FC1, a.fc1, a.ln_out, WB(fc1_w), MLP_BIAS(fc1_b), (int)R,
                    C, F, a.hidden);
    }
    ngpt_acts_handover(a.mlp_out, R * C);
    linear(ctx, l, NGPT_LINEAR_FC2, a.mlp_out, a.hidden, WB(fc2_w), MLP_BIAS(fc2_b), (int)R, F, C);
    if (dropping) drop(ctx, a.mlp_out, BT * C, l, NGPT_SITE_MLP_OUT);
    const float *mlp_out = !sandwich ? a.mlp_out     /* [post_mlp_norm, likewise] */
                                     : branch_norm(ctx, a.pm_out, a.pm_mean + r0, a.pm_rstd + r0,
                                                   a.mlp_out, WB(pm_w), WB(pm_b), R);
    float *x_out = a.x_out + r0 * C;
    if (x_out != res1) ngpt_acts_handover(x_out, R * C);   /* (inference: in place) */
    if (post) {
        float *res2 = a.res2 + r0 * C;
        if (res2 != a.mlp_out + r0 * C) ngpt_acts_handover(res2, R * C);
        ngpt_op_add(ctx, res2, a.ln_out, a.mlp_out, R * C);
        ngpt_op_norm_fwd(ctx, x_out, a.ln2_mean + r0, a.ln2_rstd + r0, res2, WB(ln2_w),
                         WB(ln2_b), R, C);
    } else {
        ngpt_op_add(ctx, x_out, res1, mlp_out, R * C);
    }
#undef MLP_BIAS
#undef WB
}

/* Absolute positions (pos=sinusoidal|learned): x (rows, C) += table[position]
 * of each row: 0.. in a full pass, after the slot's cached tokens in a
 * cached one. The positions stay in plan.pos_ids for the backward. */
static void add_positions(ngpt_context *ctx, const ngpt_pass *ps, float *x)
{
    ngpt_plan *p = &ctx->plan;
    const size_t BT = (size_t)ps->nseq * (size_t)ps->len;
    for (int s = 0; s < ps->nseq; s++) {
        const int32_t pos0 = ps->cached ? ngpt_kv_len(ctx, ps->slot0 + s) : 0;
        for (int i = 0; i < ps->len; i++) p->pos_ids[(size_t)s * ps->len + i] = pos0 + i;
    }
    const float *table = ctx->cfg.pos == NGPT_POS_LEARNED ? p->params + ctx->lay.pos_emb
                                                          : p->pos_table;
    float *rows = ngpt_acts_positions(ctx);
    ngpt_acts_handover(rows, BT * (size_t)ctx->cfg.d_model);
    ngpt_op_embed(ctx, rows, table, p->pos_ids, BT, ctx->cfg.d_model);
    ngpt_op_add(ctx, x, x, rows, BT * (size_t)ctx->cfg.d_model);
}

/* A pass up to the lm_head: the embedding and every block, then [ln_f]
 * over the rows the head reads (the last k of each sequence, gathered as
 * (nseq, k): shape.logits_rows; a last_only pass: its one last row);
 * returns those rows (R, C). */
static const float *model_body(ngpt_context *ctx, const ngpt_pass *ps)
{
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = ctx->cfg.d_model, V = ctx->cfg.vocab_size, L = ctx->cfg.n_layers;
    const size_t BT = (size_t)ps->nseq * (size_t)ps->len;
    /* generation is always eval: dropout only in a full pass */
    const bool dropping = !ps->cached && ngpt_dropout_active(ctx);
    ngpt_weights_pack(ctx);     /* inference: once after init, load or prepare */

    /* embedding (B,T) -> (B,T,C) [+ positions], then dropout (site: layer
     * index L); tied, the table is the lm_head's W as the context holds it */
    float *x = ngpt_layer_acts_get(ctx, 0).x_in;
    const ngpt_dtype head = ngpt_linear_dtype(&ctx->cfg, NGPT_LINEAR_LM_HEAD);
    if (ctx->cfg.tie_lm_head && head == NGPT_DTYPE_Q8)
        ngpt_op_embed_q8(ctx, x, ngpt_weights_q8(ctx, 0, NGPT_LINEAR_LM_HEAD), ps->tokens, BT, C);
    else if (ctx->cfg.tie_lm_head && head == NGPT_DTYPE_Q4)
        ngpt_op_embed_q4(ctx, x, ngpt_weights_q4(ctx, 0, NGPT_LINEAR_LM_HEAD), ps->tokens, BT, C);
    else if (ctx->cfg.tie_lm_head && ctx->run.weights_packed)
        ngpt_op_embed_packed(ctx, x, W + lay->tok_emb, V, ps->tokens, BT, C);
    else
        ngpt_op_embed(ctx, x, W + lay->tok_emb, ps->tokens, BT, C);
    if (ctx->cfg.emb_scale != 0.0f) ngpt_op_scale(ctx, x, x, ctx->cfg.emb_scale, BT * C);
    if (ctx->cfg.pos != NGPT_POS_ROPE) add_positions(ctx, ps, x);
    if (dropping) drop(ctx, x, BT * C, L, NGPT_SITE_EMBED);

    for (int l = 0; l < L; l++) block(ctx, l, ps, dropping);
    /* the head runs on the last k rows of each sequence (shape.logits_rows;
     * a last_only pass: its one last row), gathered as (nseq, k) */
    const int32_t k = ps->last_only ? 1 : ngpt_logits_kept(ctx, ps->len);
    const size_t K = (size_t)k, R = (size_t)ps->nseq * K;
    const float *last = ngpt_layer_acts_get(ctx, L - 1).x_out;
    const size_t skip = (size_t)(ps->len - k) * C;     /* each sequence's rows before its k */

    /* [ln_f] (R,C), which the lm_head reads */
    const float *head_in = last + skip;
    if (ctx->cfg.final_norm || (ps->nseq > 1 && k < ps->len)) {
        float *lnf = ngpt_acts_lnf(ctx);
        ngpt_acts_handover(lnf, R * C);
        /* every row: one call over them all; else one per sequence */
        const int groups = k == ps->len ? 1 : ps->nseq;
        const size_t G = R / (size_t)groups;
        for (int s = 0; s < groups; s++) {
            const float *src = last + (size_t)s * ps->len * C + skip;
            float *dst = lnf + (size_t)s * G * C;
            if (ctx->cfg.final_norm)
                ngpt_op_norm_fwd(ctx, dst, p->lnf_mean + s * G, p->lnf_rstd + s * G, src,
                                 W + lay->lnf_w, W + lay->lnf_b, G, C);
            else
                memcpy(dst, src, G * C * sizeof(float));
        }
        head_in = lnf;
    }
    return head_in;
}

void ngpt_model_head(ngpt_context *ctx, const float *rows, int32_t n)
{
    /* logits (n,V) = x W_head^T (tied: tok_emb); every row is its own
     * chain, so fewer rows (or rows in chunks) give the same bits */
    linear(ctx, 0, NGPT_LINEAR_LM_HEAD, ctx->plan.logits, rows, ctx->plan.params + ctx->lay.lm_head,
           NULL, (int)n, ctx->cfg.d_model, ctx->cfg.vocab_size);
    if (ctx->cfg.logit_softcap != 0.0f)
        ngpt_op_softcap(ctx, ctx->plan.logits, (size_t)n * (size_t)ctx->cfg.vocab_size,
                        ctx->cfg.logit_softcap);
}

static void model_pass(ngpt_context *ctx, const ngpt_pass *ps)
{
    const float *head_in = model_body(ctx, ps);
    const int32_t k = ps->last_only ? 1 : ngpt_logits_kept(ctx, ps->len);
    ngpt_model_head(ctx, head_in, ps->nseq * k);
}

void ngpt_model_block_again(ngpt_context *ctx, int layer, int32_t batch, int32_t seq)
{
    const ngpt_pass pass = {NULL, batch, seq, false, 0, false};
    block(ctx, layer, &pass, ngpt_dropout_active(ctx));
}

ngpt_status ngpt_context_forward(ngpt_context *ctx, const int32_t *tokens, int32_t B, int32_t T,
                         const int32_t *targets, float *loss)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !tokens)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_forward: NULL context or tokens");
    const ngpt_config *cfg = &ctx->cfg;
    if (T > cfg->context_len)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "ngpt_context_forward: a sequence of %d tokens is "
                         "longer than the model's context T=%d", (int)T, (int)cfg->context_len);
    if (B < 1 || T < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_forward: batch and seq must be >= 1, got "
                         "%d and %d", (int)B, (int)T);
    if (B > ctx->shape.batch || T > ctx->shape.seq)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "ngpt_context_forward: (batch=%d, seq=%d) exceeds "
                         "the context's planned (batch=%d, seq=%d); plan a larger shape",
                         (int)B, (int)T, (int)ctx->shape.batch, (int)ctx->shape.seq);
    if (!targets && ctx->shape.loss_chunk)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_forward: the context computes the loss "
                         "in chunks of rows (shape.loss_chunk) and keeps no logits: pass targets");
    if (targets && ngpt_logits_kept(ctx, T) < T)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_forward: a loss needs the logits of every "
                         "position, but the context keeps only the last %d "
                         "(shape.logits_rows); plan logits_rows = NGPT_LOGITS_ALL", (int)ctx->shape.logits_rows);
    const size_t BT = (size_t)B * (size_t)T;
    ngpt_status st = check_ids(tokens, BT, cfg->vocab_size, false);
    if (!st && targets) st = check_ids(targets, BT, cfg->vocab_size, true);
    if (st) return st;
    ngpt_context_forward_unchecked(ctx, tokens, B, T, targets, loss);
    return NGPT_OK;
}

void ngpt_context_forward_unchecked(ngpt_context *ctx, const int32_t *tokens, int32_t B,
                                  int32_t T, const int32_t *targets, float *loss)
{
    const ngpt_pass pass = {tokens, B, T, false, 0, false};
    ngpt_plan *p = &ctx->plan;
    const int V = ctx->cfg.vocab_size, C = ctx->cfg.d_model;
    const size_t BT = (size_t)B * (size_t)T;
    const size_t chunk = (size_t)ctx->shape.loss_chunk;
    if (chunk && targets) {     /* the head and the loss a chunk of rows at a time */
        const float *head_in = model_body(ctx, &pass);
        for (size_t r0 = 0; r0 < BT; r0 += chunk) {
            const size_t n = BT - r0 < chunk ? BT - r0 : chunk;
            ngpt_model_head(ctx, head_in + r0 * C, (int32_t)n);
            ngpt_op_xent(ctx, p->losses + r0, p->logits, targets + r0, n, V);
        }
    } else {
        model_pass(ctx, &pass);
        if (targets) ngpt_op_xent(ctx, p->losses, p->logits, targets, BT, V);
    }
    if (targets) {
        /* the mean over the rows with a target: one canonical sum over
         * every row (the others hold 0), on this thread; no target: 0 */
        const size_t kept = ngpt_targets_kept(targets, BT);
        const float mean = kept ? ctx->k->rsum(p->losses, BT) / (float)kept : 0.0f;
        if (loss) *loss = mean;
    } else if (loss) {
        *loss = NAN;
    }
    ngpt_run_pass_done(ctx, B, T, ngpt_logits_kept(ctx, T), false, 0);
    if (targets && p->bwd.targets) {    /* train mode: kept for ngpt_context_backward */
        memcpy(p->bwd.tokens, tokens, BT * sizeof(int32_t));
        memcpy(p->bwd.targets, targets, BT * sizeof(int32_t));
        ctx->run.backward_ready = true;
    }
}

/* One cached pass; last_only: see ngpt_pass (nseq 1, logits (1, 1, V)). */
static void append(ngpt_context *ctx, int32_t slot0, int32_t nseq, const int32_t *tokens,
                   int32_t len, bool last_only)
{
    const ngpt_pass pass = {tokens, nseq, len, true, slot0, last_only};
    model_pass(ctx, &pass);
    for (int32_t s = 0; s < nseq; s++)
        ngpt_kv_commit(ctx, slot0 + s, tokens + (size_t)s * len, len);
    ngpt_run_pass_done(ctx, nseq, last_only ? 1 : len,
                       last_only ? 1 : ngpt_logits_kept(ctx, len), true, slot0);
}

void ngpt_model_append(ngpt_context *ctx, int32_t slot0, int32_t nseq, const int32_t *tokens,
                       int32_t len)
{
    append(ctx, slot0, nseq, tokens, len, false);
}

void ngpt_model_truncate(ngpt_context *ctx, int32_t slot, int32_t n)
{
    if (ngpt_kv_truncate(ctx, slot, n)) return;
    /* a re-feed: the slot's own tokens, which each pass records in place */
    const int32_t *tokens = ngpt_kv_tokens(ctx, slot);
    ngpt_kv_clear(ctx, slot);
    for (int32_t at = 0, c = 0; at < n; at += c) {
        c = n - at < ctx->shape.seq ? n - at : ctx->shape.seq;
        append(ctx, slot, 1, tokens + at, c, true);
    }
}

void ngpt_model_prefill(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len,
                        const float **last_row)
{
    const int32_t chunk = ctx->shape.seq;
    int32_t c = 0;
    for (int32_t at = 0; at < len; at += c) {
        c = len - at < chunk ? len - at : chunk;
        append(ctx, slot, 1, tokens + at, c, true);
    }
    *last_row = ctx->plan.logits;
}
