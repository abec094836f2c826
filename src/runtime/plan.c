/* plan.c — the arena planner. One walker computes the exact size (base NULL)
 * and carves the regions (base set), so the two can never disagree. Every
 * region starts on a 64-byte boundary; all arithmetic is overflow-checked. */
#include "base/checked.h"
#include "runtime/context.h"
#include "runtime/lora.h"
#include "runtime/config.h"
#include "runtime/plan.h"
#include "runtime/pool.h"

typedef struct walker {
    unsigned char *base;        /* NULL while sizing */
    size_t off;
    bool overflow;
} walker;

/* Reserves count * elem bytes (count = a*b*c*d) and returns the region. */
static void *take(walker *w, size_t elem, size_t a, size_t b, size_t c, size_t d)
{
    size_t n = elem;
    if (!ngpt_mul_ok(n, a, &n) || !ngpt_mul_ok(n, b, &n) || !ngpt_mul_ok(n, c, &n) ||
        !ngpt_mul_ok(n, d, &n)) {
        w->overflow = true;
        return NULL;
    }
    size_t start = (w->off + (NGPT_ALIGN - 1)) & ~(size_t)(NGPT_ALIGN - 1);
    if (start < w->off || !ngpt_add_ok(start, n, &w->off)) {
        w->overflow = true;
        return NULL;
    }
    return w->base && n ? w->base + start : NULL;
}

#define TAKE_F(w, a, b, c, d) ((float *)take((w), sizeof(float), (a), (b), (c), (d)))

ngpt_status ngpt_plan_walk(const ngpt_config *cfg, const ngpt_shape *shape, bool shared, void *base,
                           ngpt_plan *plan)
{
    ngpt_layout lay;
    if (!ngpt_layout_compute(cfg, &lay))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the parameter count overflows size_t on this machine; "
                         "use a smaller model");
    const bool train = shape->mode == NGPT_MODE_TRAIN;
    const size_t B = (size_t)shape->batch, T = (size_t)shape->seq;
    const size_t C = (size_t)cfg->d_model, F = (size_t)cfg->d_ff, V = (size_t)cfg->vocab_size;
    const size_t H = (size_t)cfg->n_heads, L = (size_t)cfg->n_layers;
    const size_t D = (size_t)ngpt_cfg_head_dim(cfg), P = lay.total;
    /* the switches' widths: qkv (H + 2 KV) D, the merged heads H D, fc1 F or
     * 2F (SwiGLU), a key/value row of the cache KV D */
    const size_t QKV = (size_t)ngpt_cfg_qkv_width(cfg), A = H * D;
    const size_t F1 = (size_t)ngpt_cfg_fc1_width(cfg), KVD = (size_t)ngpt_cfg_kv_heads(cfg) * D;
    const bool gated = ngpt_cfg_gated(cfg), sandwich = cfg->norm == NGPT_NORM_SANDWICH;
    const size_t CA = C > A ? C : A;    /* ln_out also holds the attention output */
    size_t IW = QKV > F1 ? QKV : F1;    /* infer: qkv's buffer also holds fc1 [and the branch] */
    if (IW < C) IW = C;
    /* copies of per-layer activations: one in inference, and in training
     * with recompute (the blocks' inputs, in x, are all kept) */
    const size_t LL = train && !shape->recompute ? L : 1;
    const size_t NT = (size_t)ngpt_layout_tensor_count(cfg);
    walker w = {(unsigned char *)base, 0, false};
    ngpt_plan p = {0};

    take(&w, sizeof(struct ngpt_context), 1, 1, 1, 1);
    p.tensors = take(&w, sizeof(ngpt_tensor_info), NT, 1, 1, 1);
    p.tensor_names = take(&w, NGPT_NAME_MAX, NT, 1, 1, 1);

    /* training an adapter: the model's weights frozen, the adapter's trained */
    const ngpt_lora_layout *ll = train && shape->adapter ? &shape->adapter->ll : NULL;
    const size_t TP = ll ? ll->total : P;    /* the trained floats */
    if (!shared) p.params = TAKE_F(&w, P, 1, 1, 1);
    if (train) {
        p.grads = TAKE_F(&w, TP, 1, 1, 1);
        p.adam_m = TAKE_F(&w, TP, 1, 1, 1);
        p.adam_v = TAKE_F(&w, TP, 1, 1, 1);
    }
    if (ll) p.lora.w = TAKE_F(&w, TP, 1, 1, 1);
    p.rope_cos = TAKE_F(&w, (size_t)cfg->context_len, D / 2, 1, 1);
    p.rope_sin = TAKE_F(&w, (size_t)cfg->context_len, D / 2, 1, 1);
    if (cfg->sliding_window) {
        p.rope_local_cos = TAKE_F(&w, (size_t)cfg->context_len, D / 2, 1, 1);
        p.rope_local_sin = TAKE_F(&w, (size_t)cfg->context_len, D / 2, 1, 1);
    }
    if (cfg->pos == NGPT_POS_SINUSOIDAL) p.pos_table = TAKE_F(&w, (size_t)cfg->context_len, C, 1, 1);
    if (cfg->pos != NGPT_POS_ROPE) p.pos_ids = take(&w, sizeof(int32_t), B, T, 1, 1);

    p.x = TAKE_F(&w, train ? L + 1 : 1, B, T, C);
    p.ln_mean = TAKE_F(&w, LL, sandwich ? 4 : 2, B, T);
    p.ln_rstd = TAKE_F(&w, LL, sandwich ? 4 : 2, B, T);
    if (train && sandwich) p.post_x = TAKE_F(&w, LL, 2, B, T * C);
    if (cfg->norm_offset) p.norm_w1 = TAKE_F(&w, C > 2 * D ? C : 2 * D, 1, 1, 1);
    /* infer: the widest of a layer's activations (qkv, fc1 or C wide), which
     * model/acts.c shares out (qkv, then fc1 and its GELU) */
    p.qkv = TAKE_F(&w, LL, B, T, train ? QKV : IW);
    const size_t QK = (H + (size_t)ngpt_cfg_kv_heads(cfg)) * D;    /* qk_norm's heads */
    if (cfg->qk_norm) p.qk_x = TAKE_F(&w, LL, B, T, QK);
    if (cfg->qk_norm && train) p.qk_rstd = TAKE_F(&w, LL, B, T, QK / D);
    if (train || shape->trace == NGPT_TRACE_FULL) {
        size_t bh = 0;
        if (!ngpt_mul_ok(B, H, &bh)) w.overflow = true;
        p.att = TAKE_F(&w, train ? LL : L, bh, T, T);
    }
    if (shape->trace == NGPT_TRACE_LAST_ROW) p.trace_rows = TAKE_F(&w, L, B, H, T);
    if (train) {
        p.atty = TAKE_F(&w, LL, B, T, A);
        p.res1 = TAKE_F(&w, LL, B, T, C);
        if (cfg->norm == NGPT_NORM_POST) p.res2 = TAKE_F(&w, LL, B, T, C);
        p.fc1 = TAKE_F(&w, LL, B, T, F1);
        p.lnf = TAKE_F(&w, B, T, C, 1);
    }
    p.lnf_mean = TAKE_F(&w, B, T, 1, 1);
    p.lnf_rstd = TAKE_F(&w, B, T, 1, 1);
    /* the last logits_rows positions of each sequence, or all of them;
     * a chunked loss: loss_chunk rows */
    const size_t LR = shape->logits_rows > 0 && (size_t)shape->logits_rows < T
                          ? (size_t)shape->logits_rows : T;
    const size_t HR = shape->loss_chunk ? (size_t)shape->loss_chunk : B * LR;  /* head rows */
    p.logits = TAKE_F(&w, HR, V, 1, 1);
    p.losses = TAKE_F(&w, B, T, 1, 1);

    p.ln_out = TAKE_F(&w, B, T, CA, 1);
    /* a gated MLP's hidden layer is not fc1's elementwise image: a buffer of its own */
    if (train || gated) p.hidden = TAKE_F(&w, B, T, F, 1);
    /* (inference shares the rest: model/acts.c; post-norm keeps a branch) */
    if (train || cfg->norm == NGPT_NORM_POST) p.branch = TAKE_F(&w, B, T, C, 1);
    const size_t TC = (size_t)cfg->context_len;   /* a cached sequence grows up to T */
    p.threads.attn_rows = TAKE_F(&w, (size_t)shape->threads, D + 2 * NGPT_ATTN_TILE, TC, 1);
    const bool q8 = cfg->weights != NGPT_WEIGHTS_F32;   /* 8-bit or 4-bit */
    const size_t KMAX = CA > F ? CA : F;   /* the widest input of a Linear */
    /* LoRA's products are float gemms, whatever the model's weights */
    const size_t rank = ll ? (size_t)ll->rank : train ? 0 : (size_t)shape->adapter_rank;
    if (!q8 || rank) p.threads.gemm_work = TAKE_F(&w, (size_t)shape->threads, NGPT_GEMM_WORK_FLOATS, 1, 1);
    /* (packing in place runs between passes: in the gemm workspace when it fits) */
    p.threads.panel_stride = NGPT_GEMM_NR * KMAX;
    if (!train && !q8 && (size_t)NGPT_GEMM_NR * KMAX <= NGPT_GEMM_WORK_FLOATS) {
        p.threads.panel = p.threads.gemm_work;
        p.threads.panel_stride = NGPT_GEMM_WORK_FLOATS;
    } else if (!train) {
        p.threads.panel = TAKE_F(&w, (size_t)shape->threads, NGPT_GEMM_NR, KMAX, 1);
    }
    if (ll) {
        size_t on = 0;      /* the adapted layers whose t are kept: all, or one (recompute) */
        for (int32_t l = 0; l < cfg->n_layers; l++) on += ngpt_lora_layer_on(ll, l);
        if (shape->recompute && on) on = 1;
        p.lora.t = TAKE_F(&w, on * (size_t)ll->n_modules, B * T, rank, 1);
        p.lora.u = TAKE_F(&w, (size_t)ll->n_modules, B * T, rank, 1);
        if (shape->adapter->lc.dropout > 0.0f) p.lora.xd = TAKE_F(&w, B, T, KMAX, 1);
        /* the widest column block of any Linear's W, the lm_head's included */
        size_t cols = 0;
        for (int i = 0; i <= NGPT_LINEAR_PER_LAYER; i++) {
            int out, in;
            ngpt_linear_dims(cfg, (ngpt_linear)i, &out, &in);
            const size_t c = (size_t)out * (size_t)ngpt_lora_cols_width(out);
            if (c > cols) cols = c;
        }
        p.lora.cols = TAKE_F(&w, cols, 1, 1, 1);
    } else if (rank) {      /* inference: t as wide as the packed A's panels, and B's products */
        const size_t R16 = (rank + NGPT_GEMM_NR - 1) / NGPT_GEMM_NR * NGPT_GEMM_NR;
        size_t rows = QKV > C ? QKV : C;
        if (F > rows) rows = F;
        p.lora.t = TAKE_F(&w, B, T, R16, 1);
        p.lora.u = TAKE_F(&w, B, T, (rows + NGPT_GEMM_NR - 1) / NGPT_GEMM_NR * NGPT_GEMM_NR, 1);
    }
    p.threads.pool = take(&w, sizeof(ngpt_pool), 1, 1, 1, 1);
    p.threads.workers = take(&w, sizeof(ngpt_pool_worker), (size_t)shape->threads - 1, 1, 1, 1);
    p.batch_buf = take(&w, sizeof(int32_t), 2, B, T, 1);
    if (train) {
        p.bwd.tokens = take(&w, sizeof(int32_t), B, T, 1, 1);
        p.bwd.targets = take(&w, sizeof(int32_t), B, T, 1, 1);
        p.bwd.g_logits = TAKE_F(&w, HR, V, 1, 1);
        p.bwd.g_res = TAKE_F(&w, B, T, C, 1);
        p.bwd.g_branch = TAKE_F(&w, B, T, C, 1);
        p.bwd.g_ln = TAKE_F(&w, B, T, C, 1);
        p.bwd.g_qkv = TAKE_F(&w, B, T, QKV, 1);
        if (cfg->qk_norm) p.bwd.g_qk = TAKE_F(&w, B, T, QK, 1);
        /* GELU's derivative (B,T,F), or SwiGLU's d(fc1) (B,T,2F) */
        p.bwd.gelu_grad = TAKE_F(&w, B, T, F1, 1);
        /* an adapter trained on a quantized model: its products' rows */
        if (q8) p.q8_x = take(&w, 1, B * T < NGPT_Q8_NR ? NGPT_Q8_NR : B * T,
                              ngpt_q8_row_bytes((int)KMAX), 1, 1);
    } else {   /* generation: KV cache, packed weights, sampler, beam and window scratch */
        /* the key/value heads only, float32 or compact 8-bit head rows */
        const size_t KV = (size_t)ngpt_cfg_kv_heads(cfg);
        const size_t q8row = KV * ngpt_q8_head_bytes((int)D);
        p.kv.k_row = shape->kv_k == NGPT_KV_Q8 ? q8row : KVD * sizeof(float);
        p.kv.v_row = shape->kv_v == NGPT_KV_Q8 ? q8row : KVD * sizeof(float);
        size_t rows = 0;        /* a slot's rows over the layers (local layers' rings) */
        for (int l = 0; l < cfg->n_layers; l++) rows += ngpt_cfg_kv_rows(cfg, shape->seq, l);
        p.kv.k = take(&w, p.kv.k_row, rows, B, 1, 1);
        p.kv.v = take(&w, p.kv.v_row, rows, B, 1, 1);
        if (p.kv.v) p.kv.span = (size_t)(p.kv.v - p.kv.k) + p.kv.v_row * rows * B;
        if (shape->kv_k == NGPT_KV_Q8)
            p.kv.query = take(&w, ngpt_q8_head_bytes((int)D), (size_t)shape->threads, NGPT_ATTN_TILE, 1, 1);
        p.kv.len = take(&w, sizeof(int32_t), B, 1, 1, 1);
        if (cfg->sliding_window) p.kv.held = take(&w, sizeof(int32_t), B, 1, 1, 1);
        p.kv.tokens = take(&w, sizeof(int32_t), B, TC, 1, 1);
        if (shape->trace != NGPT_TRACE_NONE) p.kv.trace = TAKE_F(&w, L, B, H, TC);
        /* beam search reorders the cache between passes through one
         * slot-layer block: model/kv.c borrows the qkv buffer, which no
         * pass is using then, when it holds one; else it has its own */
        const size_t row = p.kv.k_row > p.kv.v_row ? p.kv.k_row : p.kv.v_row;
        const size_t tmp = TC * row > KVD * sizeof(float) ? TC * row : KVD * sizeof(float);
        if (B * T * IW * sizeof(float) < tmp) p.kv.tmp = TAKE_F(&w, (tmp + 3) / 4, 1, 1, 1);
        if (q8) {
            size_t bytes = 0, rows = B * T < NGPT_Q8_NR ? NGPT_Q8_NR : B * T;
            if (!ngpt_linear_q8_bytes(cfg, &bytes)) w.overflow = true;
            if (!shared) p.q8_w = take(&w, 1, bytes, 1, 1, 1);
            p.q8_x = take(&w, 1, rows, ngpt_q8_row_bytes((int)KMAX), 1, 1);
        }
        p.samp.z = TAKE_F(&w, V, 1, 1, 1);
        p.samp.p = TAKE_F(&w, V, 1, 1, 1);
        p.samp.idx = take(&w, sizeof(int32_t), V, 1, 1, 1);
        p.samp.tmp = take(&w, sizeof(int32_t), V, 1, 1, 1);
        p.samp.keys = take(&w, sizeof(uint64_t), 2, V, 1, 1);
        p.beam.score = TAKE_F(&w, B, 1, 1, 1);
        p.beam.parent = take(&w, sizeof(int32_t), B, 1, 1, 1);
        p.beam.tok = take(&w, sizeof(int32_t), B, 1, 1, 1);
        p.beam.work = take(&w, sizeof(int32_t), 4, B, 1, 1);
        p.beam.cand = take(&w, NGPT_BEAM_CAND_BYTES, 2, B, 1, 1);
        p.beam.fin_tok = take(&w, sizeof(int32_t), B, TC, 1, 1);
        p.beam.fin_len = take(&w, sizeof(int32_t), B, 1, 1, 1);
        p.beam.fin_score = TAKE_F(&w, B, 1, 1, 1);
        p.beam.z = TAKE_F(&w, V, 1, 1, 1);
        p.beam.p = TAKE_F(&w, V, 1, 1, 1);
        p.gen.window = take(&w, sizeof(int32_t), TC, 1, 1, 1);
        p.gram.state_words = ngpt_gram_state_words(shape->grammar_depth, NGPT_GRAMMAR_STACKS);
        p.gram.states = take(&w, sizeof(uint32_t), 2 * B + 7, p.gram.state_words, 1, 1);
        p.gram.walk = take(&w, sizeof(uint32_t), ngpt_gram_walk_words(p.gram.state_words), 1, 1, 1);
        p.gram.mask = take(&w, sizeof(uint64_t), (V + 63) / 64, 1, 1, 1);
        p.gram.tmp = take(&w, sizeof(uint64_t), (V + 63) / 64, 1, 1, 1);
    }

    if (w.overflow)
        return ngpt_fail(NGPT_ERR_OVERFLOW,
                         "the arena for this config and shape (batch=%d seq=%d) overflows "
                         "size_t on this machine; plan a smaller batch, seq or model",
                         (int)shape->batch, (int)shape->seq);
    /* Slack so that any caller buffer can be aligned up to 64 bytes. */
    if (!ngpt_add_ok(w.off, NGPT_ALIGN, &p.bytes))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the arena size overflows size_t on this machine; plan "
                         "a smaller batch, seq or model");
    *plan = p;
    return NGPT_OK;
}
