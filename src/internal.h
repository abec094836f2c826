/* internal.h — the context, the parameter layout and shared helpers. */
#ifndef NGPT_INTERNAL_H
#define NGPT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "ngpt.h"

#define NGPT_ALIGN 64
#define NGPT_NAME_MAX 64        /* tensor names, NUL included */

/* ---- errors (status.c) */

/* Messages (ngpt.h, Conventions): ngpt_last_error() reads
 * "ngpt_<function>: <one sentence>", named after the public function the
 * user called. A public function writes its own checks' messages with that
 * prefix; an internal function that fails (a validator, the checkpoint
 * reader, ...) leaves the bare sentence, and the public function that called
 * it returns ngpt_prefixed("ngpt_<function>", status), so the prefix is
 * written once, at the boundary. */

/* Records a message for ngpt_last_error() and returns status. */
ngpt_status ngpt_fail(ngpt_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Puts "fn: " in front of the current (bare) message when status is a
 * failure; returns status either way. */
ngpt_status ngpt_prefixed(const char *fn, ngpt_status status);
/* Internal invariant: calls the abort hook and returns NGPT_ERR_INTERNAL. */
ngpt_status ngpt_internal_fail(const char *file, int line, const char *what);
#define NGPT_CHECK_INTERNAL(cond) \
    do { if (!(cond)) return ngpt_internal_fail(__FILE__, __LINE__, #cond); } while (0)

/* ---- validators without a message prefix (the public ngpt_*_validate
 * functions and every other public function that takes these structs call
 * them and prefix their own name) */
ngpt_status ngpt_config_check(const ngpt_config *cfg);
ngpt_status ngpt_optim_check(const ngpt_optim_config *opt);
ngpt_status ngpt_sampler_check(const ngpt_sampler *s, int32_t vocab_size);

/* ---- checked size arithmetic: return false on overflow */

static inline bool ngpt_mul_ok(size_t a, size_t b, size_t *r)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *r = a * b;
    return true;
}
static inline bool ngpt_add_ok(size_t a, size_t b, size_t *r)
{
    if (b > SIZE_MAX - a) return false;
    *r = a + b;
    return true;
}

/* ---- parameter layout (floats), in state_dict order:
 * tok_emb (V,C) | [pos_emb (T,C)] | blocks[L] | [ln_f.weight (C) ln_f.bias (C)]
 * | [lm_head (V,C)]
 * block: ln1.weight (C) ln1.bias (C) attn.qkv.weight (3C,C) [attn.qkv.bias (3C)]
 *        attn.proj.weight (C,C) ln2.weight (C) ln2.bias (C) mlp.fc1.weight (d_ff,C)
 *        mlp.fc1.bias (d_ff) mlp.fc2.weight (C,d_ff) mlp.fc2.bias (C)
 * [..] only with the variant that has it (pos=learned, final_norm, untied
 * lm_head, qkv_bias); an absent tensor has no floats. Tied, lm_head is
 * tok_emb's offset, so the wiring reads and accumulates into one tensor.
 * The same layout is used for gradients and AdamW moments. */
typedef struct ngpt_layout {
    size_t tok_emb, pos_emb, blocks, block_stride, lnf_w, lnf_b, lm_head, total;
    /* offsets inside one block */
    size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, ln2_w, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
} ngpt_layout;

/* Fills the layout; false if the count overflows size_t. */
bool ngpt_layout_compute(const ngpt_config *cfg, ngpt_layout *lay);

static inline float *ngpt_block_ptr(const ngpt_layout *lay, float *base, int layer, size_t field)
{
    return base + lay->blocks + (size_t)layer * lay->block_stride + field;
}

/* Tensor table entries (names + shapes), in state_dict order. */
int32_t ngpt_layout_tensor_count(const ngpt_config *cfg);
/* Entry i: name into buf[NGPT_NAME_MAX], shape, offset, count. */
void ngpt_layout_tensor(const ngpt_config *cfg, const ngpt_layout *lay, int32_t i,
                        char name[NGPT_NAME_MAX], ngpt_tensor_info *info);

/* ---- activations of one layer (pointers into the arena). In infer mode all
 * layers share one set and x_in == x_out (the residual stream is updated in
 * place); in train mode each layer has its own, kept for backward. */
typedef struct ngpt_layer_acts {
    float *x_in;        /* (B,T,C) layer input */
    float *ln1_mean;    /* (B,T) */
    float *ln1_rstd;    /* (B,T) */
    float *qkv;         /* (B,T,3C) q and k after RoPE */
    float *att;         /* (B,H,T,T) pre-dropout probabilities, or NULL */
    float *atty;        /* (B,T,C) attention output, heads merged, before proj */
    float *res1;        /* (B,T,C) x_in + dropout(proj(atty)) (post-norm: ln1's input) */
    float *res2;        /* post-norm only: (B,T,C) ln2's input; else NULL */
    float *ln2_mean;    /* (B,T) */
    float *ln2_rstd;    /* (B,T) */
    float *fc1;         /* (B,T,d_ff) before GELU */
    float *x_out;       /* (B,T,C) layer output */
} ngpt_layer_acts;

/* ---- the arena plan: one walker both sizes (base NULL) and carves. */
/* Query rows the attention op hands its tile kernels at once (ops_attention.c). */
enum { NGPT_ATTN_TILE = 16 };

typedef struct ngpt_plan {
    size_t bytes;               /* total, including alignment slack */
    /* tensor table */
    ngpt_tensor_info *tensors;  /* (n_tensors) */
    char *tensor_names;         /* (n_tensors, NGPT_NAME_MAX) */
    /* model state */
    float *params;              /* (P) */
    float *grads;               /* (P) train */
    float *adam_m;              /* (P) train */
    float *adam_v;              /* (P) train */
    float *rope_cos;            /* (T, D/2) */
    float *rope_sin;            /* (T, D/2) */
    float *pos_table;           /* pos=sinusoidal: (T, C) sin/cos table, else NULL */
    int32_t *pos_ids;           /* absolute positions: (B,T) position of each row, else NULL */
    /* activations; per layer arrays have L copies in train mode, 1 in infer */
    float *x;                   /* train (L+1,B,T,C) layer inputs + output; infer (B,T,C) */
    float *ln_mean, *ln_rstd;   /* (L',2,B,T) ln1 then ln2 */
    float *qkv;                 /* (L',B,T,3C) */
    float *att;                 /* train (L,B,H,T,T); infer: the FULL trace or NULL */
    float *trace_rows;          /* LAST_ROW trace (L,B,H,T), or NULL */
    float *atty;                /* (L',B,T,C) */
    float *res1;                /* (L',B,T,C) */
    float *res2;                /* post-norm: (L',B,T,C), else NULL */
    float *fc1;                 /* (L',B,T,d_ff) */
    float *lnf;                 /* (B,T,C) ln_f output */
    float *lnf_mean, *lnf_rstd; /* (B,T) */
    float *logits;              /* (B,T,V) */
    float *losses;              /* (B,T) */
    /* scratch shared by the layers */
    float *ln_out;              /* (B,T,C) ln1/ln2 output */
    float *hidden;              /* (B,T,d_ff) GELU output */
    float *branch;              /* (B,T,C) proj/fc2 output before dropout */
    int32_t *batch_buf;         /* (2,B,T) tokens then targets staged by the data loader */
    /* train mode: gradients of activations (backward.c); the ln outputs and
     * GELU outputs are recomputed into ln_out/hidden instead of being kept,
     * and those two also carry d(attention output) and d(hidden) */
    int32_t *tokens;            /* (B,T) of the last forward */
    int32_t *targets;           /* (B,T) of the last forward */
    float *g_logits;            /* (B,T,V) */
    float *g_res;               /* (B,T,C) residual stream */
    float *g_branch;            /* (B,T,C) sublayer output before dropout */
    float *g_ln;                /* (B,T,C) LayerNorm output */
    float *g_qkv;               /* (B,T,3C) */
    float *gelu_grad;           /* (B,T,F) GELU derivative at fc1, from the recompute's erf */
    float *thread_rows;         /* (threads, D + 2*NGPT_ATTN_TILE, Tctx) attention scratch:
                                 * transposed keys, probability rows (Tctx = context_len) */
    float *gemm_work;           /* (threads, NGPT_GEMM_WORK_FLOATS) gemm packing space (gemm.h) */
    struct ngpt_pool *pool;     /* the thread pool's state (pool.h) */
    struct ngpt_pool_worker *pool_workers;  /* (threads - 1) */
    /* generation (infer mode only; see generate.c, sampler.c, beam.c) */
    float *kv_k, *kv_v;         /* (L, B, Tctx, C) keys after RoPE / values, per sequence slot */
    int32_t *kv_len;            /* (B) tokens cached per slot */
    int32_t *kv_tokens;         /* (B, Tctx) the tokens each slot's cache holds, in order */
    float *kv_trace;            /* (L, B, H, Tctx) last new token's probabilities, or NULL */
    float *kv_tmp;              /* (Tctx, C) one slot-layer block: beam reordering */
    float *packed_w;            /* the Linear weights packed for gemm_packed (packed.h) */
    float *samp_z;              /* (V) sampler working logits */
    float *samp_p;              /* (V) sampler probabilities in sorted order */
    int32_t *samp_idx;          /* (V) token ids sorted by logit (desc, ties by id) */
    int32_t *samp_tmp;          /* (V) repetition marks */
    uint64_t *samp_keys;        /* (2, V) the sort's keys and merge buffer */
    float *beam_score;          /* (B) summed log-probabilities of the live beams */
    int32_t *beam_parent;       /* (B) slot each new beam continues */
    int32_t *beam_tok;          /* (B) token each new beam appends */
    int32_t *beam_work;         /* (4, B) slot permutation work, finished reasons */
    struct ngpt_beam_cand *beam_cand; /* (2B) best candidates of one step */
    int32_t *beam_fin_tok;      /* (B, Tctx) finished hypotheses' generated tokens */
    int32_t *beam_fin_len;      /* (B) */
    float *beam_fin_score;      /* (B) length-penalised scores */
} ngpt_plan;

/* Sizes (base == NULL) or carves (base 64-aligned) the whole arena, starting
 * with the context struct itself. */
ngpt_status ngpt_plan_walk(const ngpt_config *cfg, const ngpt_shape *shape, void *base,
                           ngpt_plan *plan);

/* ---- the run state: what one call leaves behind for the next. Nothing here
 * is saved in a checkpoint; each group says who sets it and when it stops
 * being valid. */
typedef struct ngpt_run_state {
    /* Dropout of later full forwards. Set by ngpt_dropout_set (ngpt_train_step
     * sets it per micro-batch); kept until set again (ngpt_model_evaluate and
     * ngpt_model_generate turn it off and restore it). Backward recomputes
     * the forward's masks from it, so it must not change between a forward
     * and its backward. Every mask's key comes from ngpt_dropout_key_of
     * (context.c). */
    struct ngpt_dropout_state {
        bool on;
        uint64_t seed, step;
    } dropout;
    /* The last pass (full forward, prefill or decode): what plan.logits and
     * the trace buffers hold (ngpt_logits_data, ngpt_trace_data). Recorded by
     * ngpt_run_pass_done after every pass; replaced by the next pass; cleared
     * when the parameters change (ngpt_run_params_changed). */
    struct {
        bool valid;
        int32_t batch, seq;     /* sequences, tokens per sequence */
        bool cached;            /* prefill/decode: the trace rows are in kv_trace */
        int32_t slot0;          /* cached: its first KV slot */
    } pass;
    /* Gradient accumulation (train mode). backward_ready: the last pass was a
     * full forward with targets over the current parameters, so its kept
     * activations and targets are what ngpt_model_backward differentiates;
     * any other pass, an optimizer step or skip, ngpt_model_evaluate and a
     * parameter change clear it. n_backward: backward passes summed into
     * plan.grads since ngpt_grads_zero (the optimizer averages over them). */
    bool backward_ready;
    int32_t n_backward;
    /* Infer mode: plan.packed_w holds the current parameters (packed.c).
     * Set by ngpt_packed_refresh; cleared by a parameter change
     * (ngpt_run_params_changed), by ngpt_params_data (its pointer can write
     * them) and when ngpt_model_generate starts. */
    bool packed_valid;
} ngpt_run_state;

struct ngpt_context {
    ngpt_config cfg;
    ngpt_shape shape;           /* seq resolved (never 0) */
    ngpt_layout lay;
    ngpt_plan plan;
    const ngpt_kernels *k;
    void *owned;                /* the internal allocation, or NULL */
    int32_t n_tensors;
    /* Training state that persists like the parameters and AdamW moments:
     * AdamW steps taken (the t of the bias correction, and the step of the
     * schedule and of the data). Saved and restored by the training
     * checkpoint; counted by ngpt_optim_step and ngpt_optim_skip. */
    uint64_t optim_steps;
    ngpt_run_state run;
};

/* Records a pass over nseq sequences of len tokens (cached: KV slots
 * slot0..): the logits and trace now belong to it, and it is not a training
 * batch unless ngpt_forward_run then marks it so. */
static inline void ngpt_run_pass_done(ngpt_context *ctx, int32_t nseq, int32_t len, bool cached,
                                      int32_t slot0)
{
    ctx->run.pass.valid = true;
    ctx->run.pass.batch = nseq;
    ctx->run.pass.seq = len;
    ctx->run.pass.cached = cached;
    ctx->run.pass.slot0 = slot0;
    ctx->run.backward_ready = false;
}

/* The parameters changed (init, load): the last pass no longer describes
 * them, its activations cannot be differentiated, and the packed weights
 * are stale. */
static inline void ngpt_run_params_changed(ngpt_context *ctx)
{
    ctx->run.pass.valid = false;
    ctx->run.backward_ready = false;
    ctx->run.packed_valid = false;
}

/* Dropout (context.c): whether full forwards drop now, and the key of the
 * masks of one site (layer, NGPT_SITE_*; the embedding uses layer L). */
bool ngpt_dropout_active(const ngpt_context *ctx);
ngpt_dropout_key ngpt_dropout_key_of(const ngpt_context *ctx, int layer, int site);

/* One beam-search candidate: continue beam `beam` with token `tok`. */
typedef struct ngpt_beam_cand {
    float score;                /* beam score + log p(tok) */
    float z;                    /* the token's logit (tie-break: width 1 == greedy) */
    int32_t beam, tok;
} ngpt_beam_cand;

/* One pass of the model over nseq sequences of len new tokens each (rows
 * r = s*len + i). Full forward: positions 0..len-1, keys/values from the
 * pass's own qkv. Cached (generation): sequence s is KV slot slot0+s; its new
 * tokens sit at positions kv_len[slot]..+len-1, their keys (after RoPE) and
 * values are appended to the cache and attention reads the cache. Both use
 * the same wiring and kernel chains, so the logits are bit-identical. */
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

/* Runs the model (forward.c); logits land in plan.logits (nseq, len, V), or
 * (1, 1, V) for a last_only pass. */
void ngpt_model_pass(ngpt_context *ctx, const ngpt_pass *pass);

/* ngpt_model_forward after its checks (tokens and targets valid, the shape
 * within the plan): internal callers (training, evaluation, uncached
 * generation) have validated their inputs once already. */
void ngpt_forward_run(ngpt_context *ctx, const int32_t *tokens, int32_t batch, int32_t seq,
                      const int32_t *targets, float *loss);

/* The training pieces after their checks (the public functions validate
 * and call these; ngpt_train_step validates once and calls them per step):
 * backward of the last forward (backward.c; run.backward_ready is set),
 * zeroing the gradients, the learning rate of a step and one AdamW step
 * (optim.c; the config is valid, run.n_backward >= 1; NGPT_ERR_NUMERIC with
 * nothing changed when the gradient norm is not finite). */
void ngpt_backward_run(ngpt_context *ctx);
void ngpt_grads_reset(ngpt_context *ctx);
float ngpt_lr_schedule(const ngpt_optim_config *opt, int64_t step);
ngpt_status ngpt_optim_apply(ngpt_context *ctx, const ngpt_optim_config *opt, float lr,
                             float *grad_norm);

/* Data (data.c): ngpt_data_check says whether a split holds windows of
 * seq+1 bytes and (vocab_size > 0) only bytes below vocab_size; then
 * ngpt_data_draw fills batch `index` without checks. */
ngpt_status ngpt_data_check(const ngpt_data *data, ngpt_split split, int32_t seq,
                            int32_t vocab_size);
void ngpt_data_draw(const ngpt_data *data, ngpt_split split, uint64_t seed, uint64_t index,
                    int32_t batch, int32_t seq, int32_t *tokens, int32_t *targets);

ngpt_layer_acts ngpt_layer_acts_get(const ngpt_context *ctx, int layer);

/* RoPE tables for positions 0..T-1 (context.c). */
void ngpt_rope_tables(const ngpt_config *cfg, float *cos_t, float *sin_t);
/* pos=sinusoidal's table (T, C): pe[p][2i] = sin(p w_i), pe[p][2i+1] =
 * cos(p w_i), w_i = rope_theta^(-2i/C), computed like the RoPE tables. */
void ngpt_sinusoid_table(const ngpt_config *cfg, float *pe);

#endif
