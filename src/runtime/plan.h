/* plan.h — the arena plan (runtime/plan.c): every buffer of a context, as
 * pointers into the one arena. One walker both sizes the arena (base NULL)
 * and carves it, so the two can never disagree (docs/DESIGN.md §3).
 *
 * Shapes: B, T the planned batch and sequence (ngpt_shape), Tctx the model's
 * context length, L layers, L' = L in train mode and 1 in infer mode (the
 * layers share one set of activations), P parameters. Each group says who
 * owns it: only its owner writes it; the wiring (model/) reads the model's
 * state and writes the activations. */
#ifndef NGPT_RUNTIME_PLAN_H
#define NGPT_RUNTIME_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ngpt.h"

/* Query rows the attention op hands its tile kernels at once (ops/attention.c). */
enum { NGPT_ATTN_TILE = 16 };

/* A grammar matcher's state (grammar/automaton.h) holds at most this many
 * stacks of at most shape.grammar_depth states; its words, and those of the
 * walk a mask takes (grammar/mask.c). */
enum { NGPT_GRAMMAR_STACKS = 16 };
static inline size_t ngpt_gram_state_words(int32_t depth, int32_t stacks)
{
    return 2 + (size_t)stacks * ((size_t)depth + 1);
}
static inline size_t ngpt_gram_walk_words(size_t state_words)
{
    return 8 * state_words + 1024;
}

/* The bytes of one beam-search candidate (generate/beam.h's ngpt_beam_cand,
 * which checks it). */
enum { NGPT_BEAM_CAND_BYTES = 16 };

typedef struct ngpt_plan {
    size_t bytes;               /* total, including alignment slack */

    /* the tensor table (runtime/params.c) */
    ngpt_tensor_info *tensors;  /* (n_tensors) */
    char *tensor_names;         /* (n_tensors, NGPT_NAME_MAX) */
    /* the model's state: parameters (runtime/params.c, io/, train/optim.c),
     * gradients (model/backward.c), AdamW moments (train/optim.c) */
    float *params;              /* (P) */
    float *grads;               /* (P) train; training an adapter: its floats' (lora below) */
    float *adam_m;              /* (P) train, likewise */
    float *adam_v;              /* (P) train, likewise */
    /* position tables, written once at init (runtime/positions.c) */
    float *rope_cos;            /* (Tctx, D/2) */
    float *rope_sin;            /* (Tctx, D/2) */
    float *rope_local_cos, *rope_local_sin;     /* sliding_window: local layers', else NULL */
    float *pos_table;           /* pos=sinusoidal: (Tctx, C) sin/cos table, else NULL */
    int32_t *pos_ids;           /* absolute positions: (B,T) position of each row, else NULL */

    /* activations (model/forward.c writes them, model/backward.c reads
     * them). The wiring sees them through model/acts.c, which in infer mode
     * shares the buffers carved here among values that are never live at
     * once: the fields marked "train" are NULL then (and branch, but for
     * post-norm), and qkv is as wide as the widest of a layer's values */
    float *x;                   /* train (L+1,B,T,C) layer inputs + output; infer (B,T,C) */
    float *ln_mean, *ln_rstd;   /* (L',2,B,T) ln1 then ln2 (norm=sandwich: (L',4,B,T), then
                                   post_attn_norm, post_mlp_norm) */
    float *post_x;              /* train, norm=sandwich: (L',2,B,T,C) the post norms' inputs */
    float *norm_w1;             /* norm_offset: (max(C, 2D)) 1 + w of the norm being run */
    float *qkv;                 /* train (L,B,T,3C); infer (B,T,max(3C,d_ff)): model/acts.c */
    float *qk_x;                /* qk_norm: its inputs, (B,T,(H+KV)D) per layer in train */
    float *qk_rstd;             /* qk_norm, train: (L,B,T,H+KV) */
    float *att;                 /* train (L,B,H,T,T); infer: the FULL trace or NULL */
    float *trace_rows;          /* LAST_ROW trace (L,B,H,T), or NULL */
    float *atty;                /* train (L,B,T,C) */
    float *res1;                /* train (L,B,T,C) */
    float *res2;                /* train, post-norm: (L,B,T,C); else NULL */
    float *fc1;                 /* train (L,B,T,d_ff) */
    float *lnf;                 /* train (B,T,C) ln_f output */
    float *lnf_mean, *lnf_rstd; /* (B,T) */
    float *logits;              /* (B,T,V) */
    float *losses;              /* (B,T) */
    /* scratch shared by the layers */
    float *ln_out;              /* (B,T,C) ln1/ln2 output */
    float *hidden;              /* train (B,T,d_ff) GELU output */
    float *branch;              /* train, or post-norm: (B,T,C) proj (and fc2) output before
                                 * dropout; position rows in a pass's embedding */
    int32_t *batch_buf;         /* (2,B,T) tokens then targets staged by the data loader */

    /* train mode: what backward keeps and its gradients of activations
     * (model/backward.c); the ln and GELU outputs are recomputed into
     * ln_out/hidden instead of being kept, and those two also carry
     * d(attention output) and d(hidden) */
    struct ngpt_plan_bwd {
        int32_t *tokens;        /* (B,T) of the last forward with targets */
        int32_t *targets;       /* (B,T) */
        float *g_logits;        /* (B,T,V) */
        float *g_res;           /* (B,T,C) residual stream */
        float *g_branch;        /* (B,T,C) sublayer output before dropout */
        float *g_ln;            /* (B,T,C) LayerNorm output */
        float *g_qkv;           /* (B,T,3C) */
        float *g_qk;            /* qk_norm: d(q), d(k) gathered (B,T,(H+KV)D) */
        float *gelu_grad;       /* (B,T,F) GELU derivative at fc1, from the recompute's erf */
    } bwd;

    /* the thread pool (runtime/pool.c) and each thread's scratch (ops/) */
    struct ngpt_plan_threads {
        float *attn_rows;       /* (threads, D + 2*NGPT_ATTN_TILE, Tctx) attention scratch:
                                 * transposed keys, probability rows */
        float *gemm_work;       /* (threads, NGPT_GEMM_WORK_FLOATS) gemm packing space (gemm.h);
                                 * NULL for weights=q8 (no float product) */
        float *panel;           /* infer: (threads, 16, max(C, d_ff)) one panel of a Linear's W
                                 * while runtime/weights.c packs it in place (f32: gemm_work,
                                 * which no pass is using then, when it fits), or while
                                 * runtime/params.c or io/ stage it to be quantized (q8) */
        size_t panel_stride;    /* floats from one thread's panel to the next */
        struct ngpt_pool *pool;
        struct ngpt_pool_worker *workers;   /* (threads - 1) */
    } threads;

    /* infer mode: the KV cache's storage (model/kv.c, its only reader and writer) */
    struct ngpt_plan_kv {
        /* (L, B, rows, row) keys after RoPE / values, per slot (rows: Tctx, or a
         * local layer's ring: ngpt_cfg_kv_rows); a row is KV*D floats (NGPT_KV_F32)
         * or KV quantized head rows (NGPT_KV_Q8: ngpt_q8_head_bytes(D) each) */
        unsigned char *k, *v;
        size_t k_row, v_row;    /* a row's bytes */
        size_t span;            /* bytes from k to v's end (context.c: no huge pages) */
        int8_t *query;          /* (threads, NGPT_ATTN_TILE, ngpt_q8_head_bytes(D)): a tile of
                                 * queries quantized against q8 keys (ops/attention.c), or NULL */
        int32_t *len;           /* (B) tokens cached per slot */
        int32_t *held;          /* sliding_window: (B) the first position local layers hold */
        int32_t *tokens;        /* (B, Tctx) the tokens each slot holds, in order */
        float *trace;           /* (L, B, H, Tctx) last new token's probabilities, or NULL */
        float *tmp;             /* one slot-layer block (Tctx rows, and at least a row of
                                 * KV*D floats): beam reordering and the shift's scratch,
                                 * between passes; NULL when model/kv.c borrows qkv's buffer */
    } kv;
    /* infer mode, weights=q8 or q4: the quantized weights, 8-bit and 4-bit
     * panels (runtime/weights.c writes them, the products read them), and the quantized rows of a product's input
     * (ops/ops.c; runtime/weights.c's scratch while it quantizes a weight) */
    int8_t *q8_w;               /* ngpt_linear_q8_bytes */
    int8_t *q8_x;               /* (max(B*T, 16), ngpt_q8_row_bytes(max(C, H*D, d_ff))) */
    /* LoRA (model/lora.c): an adapter's training copy (shape.adapter: the
     * model's weights shared and frozen, so grads and the AdamW moments
     * above are the adapter's, its layout's total floats), and what the
     * adapted Linears keep */
    struct ngpt_plan_lora {
        float *w;               /* train: the adapter's floats */
        float *t;               /* train (L adapted, modules, B, T, r): s A x' of each module,
                                 * kept for backward (one layer's with recompute); infer
                                 * (B, T, adapter_rank rounded up to 16) */
        float *u;               /* train (modules, B, T, r): d(A x') of each module of a
                                 * Linear; infer (B, T, a module's rows rounded up to 16):
                                 * t B^T before it is added */
        float *xd;              /* train with LoRA dropout: (B, T, widest in) x' = dropout(x) */
        float *cols;            /* train: a frozen Linear's column block (ngpt_lora_cols_width) */
    } lora;
    /* infer mode: the sampler's working rows (generate/sampler.c) */
    struct ngpt_plan_samp {
        float *z;               /* (V) working logits */
        float *p;               /* (V) probabilities in sorted order */
        int32_t *idx;           /* (V) token ids sorted by logit (desc, ties by id) */
        int32_t *tmp;           /* (V) repetition marks */
        uint64_t *keys;         /* (2, V) the sort's keys and merge buffer */
    } samp;
    /* infer mode: beam search's bookkeeping (generate/beam.c) */
    struct ngpt_plan_beam {
        float *score;           /* (B) summed log-probabilities of the live beams */
        int32_t *parent;        /* (B) slot each new beam continues */
        int32_t *tok;           /* (B) token each new beam appends */
        int32_t *work;          /* (4, B) slot permutation work, finished reasons */
        void *cand;             /* (2B) best candidates of one step (ngpt_beam_cand) */
        int32_t *fin_tok;       /* (B, Tctx) finished hypotheses' generated tokens */
        int32_t *fin_len;       /* (B) */
        float *fin_score;       /* (B) length-penalised scores */
        float *z;               /* (V) one beam's adjusted logits */
        float *p;               /* (V) their softmax */
    } beam;
    /* infer mode: the sampling loop's window (generate/generate.c) */
    struct ngpt_plan_gen {
        int32_t *window;        /* (Tctx) its own copy of the window's tokens */
    } gen;
    /* infer mode: a grammar's matcher (generate/constrain.c): states of
     * state_words (depth shape.grammar_depth, NGPT_GRAMMAR_STACKS stacks):
     * two per beam, then the sampling loop's current one and its next, a
     * speculative draft's copy and its next, and the three a mask uses */
    struct ngpt_plan_gram {
        size_t state_words;
        uint32_t *states;       /* (2B + 7, state_words) */
        uint32_t *walk;         /* (ngpt_gram_walk_words(state_words)) a mask's walk */
        uint64_t *mask, *tmp;   /* (V bits) each: the allowed tokens, a mask's scratch */
    } gram;
} ngpt_plan;

/* Sizes (base == NULL) or carves (base 64-aligned) the whole arena, starting
 * with the context struct itself. shared: an inference context of an
 * ngpt_model, whose weights (params, q8_w) live in the model, not the
 * arena (both stay NULL). Bare messages (the caller prefixes). */
ngpt_status ngpt_plan_walk(const ngpt_config *cfg, const ngpt_shape *shape, bool shared, void *base,
                           ngpt_plan *plan);

#endif
