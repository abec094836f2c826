/* context.h — the context (runtime/context.c creates it) and its run
 * state: what one call leaves behind for the next. */
#ifndef NGPT_RUNTIME_CONTEXT_H
#define NGPT_RUNTIME_CONTEXT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "kernels.h"
#include "runtime/layout.h"
#include "runtime/lora.h"
#include "runtime/plan.h"

/* Nothing here is saved in a checkpoint; each group says who writes it and
 * when it stops being valid. */
typedef struct ngpt_run_state {
    /* Dropout of later full forwards: written only through runtime/dropout.h
     * (ngpt_context_dropout_set, a training step per micro-batch, and evaluation and
     * generation, which pause it and resume it). Backward recomputes the
     * forward's masks from it, so it must not change between a forward and
     * its backward. */
    struct ngpt_dropout_state {
        bool on;
        uint64_t seed, step;
    } dropout;
    /* The last pass (full forward, prefill or decode): what plan.logits and
     * the trace buffers hold (ngpt_context_logits, ngpt_context_trace). Recorded by
     * ngpt_run_pass_done after every pass; replaced by the next pass; cleared
     * when the parameters change (ngpt_run_params_changed). */
    struct {
        bool valid;
        int32_t batch, seq;     /* sequences, tokens per sequence */
        int32_t rows;           /* logits rows per sequence: seq or fewer (shape.logits_rows) */
        bool cached;            /* prefill/decode: the trace rows are in the KV cache's */
        int32_t slot0;          /* cached: its first KV slot */
    } pass;
    /* Gradient accumulation (train mode). backward_ready: the last pass was a
     * full forward with targets over the current parameters, so its kept
     * activations and targets are what ngpt_context_backward differentiates
     * (set by model/forward.c); any other pass, an optimizer step or skip,
     * ngpt_context_evaluate and a parameter change clear it. n_backward:
     * backward passes summed into plan.grads since the gradients were zeroed
     * (the optimizer averages over them). */
    bool backward_ready;
    int32_t n_backward;
    /* Where an f32 inference context's Linear weights are (runtime/weights.c,
     * their only writer besides init and load): weights_packed set, each
     * Linear's full panels of 16 rows are packed in place in the parameters
     * (gemm.h's layout) for gemm_packed; clear, every tensor is in the
     * state_dict layout. params_exposed: ngpt_context_params handed out a
     * pointer, so the weights stay in the state_dict layout until
     * ngpt_context_prepare (runtime/params.c sets it, weights.c clears it). */
    bool weights_packed;
    bool params_exposed;
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
     * checkpoint; counted by ngpt_context_optim_step and ngpt_context_optim_skip. */
    uint64_t optim_steps;
    /* The model's tokenizer, borrowed (NULL: none; tokens are whatever the
     * caller makes them, e.g. bytes): the model's for a context made from
     * one (io/context_init.c), else ngpt_context_tokenizer_set's
     * (io/tok_attach.c, which checks it has V tokens). Saves write it,
     * generation reads its tokens' bytes (stop sequences) and end tokens. */
    const ngpt_tokenizer *tokenizer;
    /* The chat template of the model the context was made from (the bytes
     * of its file's chat_template tensor, borrowed: the model outlives its
     * contexts; NULL: none). Saves write it (io/tmpl_tensor.c). */
    const void *chat_template;
    size_t chat_template_size;
    /* An inference context sharing a model's weights (ngpt_context_init
     * with a model and no config): the model, whose weights plan.params
     * points to (never written through: f32 Linears packed already,
     * run.weights_packed set for life), and its quantized Linears in place
     * (Linear i: see ngpt_linear_q8_span), which replace plan.q8_w. NULL
     * for a context that owns its weights. */
    const struct ngpt_model *model;
    const int8_t *const *q8_linear;
    /* A quantized context's model identity (docs/FORMAT.md): its model's,
     * or the model's it quantized (io/context_init.c), which its save
     * records and adapters are checked against; 0: its own parameters'
     * checksum. */
    uint64_t identity;
    /* LoRA (model/lora.c). Training an adapter (shape.adapter): its layout,
     * its floats in plan.lora.w, the model's weights frozen. Inference: the
     * adapters ngpt_context_adapters_set gave and their scales. */
    struct ngpt_lora_state {
        bool training;
        ngpt_lora_layout train;
        int32_t n;
        const struct ngpt_adapter *ads[NGPT_ADAPTERS_MAX];
        float scale[NGPT_ADAPTERS_MAX];
    } lora;
    /* the count of contexts of the model this one was made from (this one
     * included; counted down by ngpt_context_free), or NULL: made from a config */
    atomic_int *model_users;
    ngpt_run_state run;
};

/* The weights an ngpt_model lends its inference contexts (io/model.c). */
typedef struct ngpt_shared_weights {
    const struct ngpt_model *model;
    float *params;              /* f32 Linears packed */
    const int8_t *const *q8_linear;     /* or NULL (weights=f32) */
    const ngpt_tokenizer *tokenizer;
    atomic_int *users;          /* counted up by a context's init, down by its free */
} ngpt_shared_weights;

/* A context of cfg for shape: owning its weights (zeros, norm weights 1),
 * or with shared (not NULL) an inference context on a model's weights; fn
 * names the public caller in messages. io/context_init.c's
 * ngpt_context_init is the one caller. */
ngpt_status ngpt_context_create(const char *fn, ngpt_context **out, const ngpt_config *cfg,
                                const ngpt_shared_weights *shared, const ngpt_shape *shape,
                                void *arena, size_t arena_bytes);
/* The arena ngpt_context_create plans (shared: a model's inference
 * context, without the weights). Bare messages. */
ngpt_status ngpt_context_size(const ngpt_config *cfg, const ngpt_shape *shape, bool shared,
                              size_t *bytes);

/* How many of a sequence's last len positions get logits: all, or the
 * shape's logits_rows when fewer. */
static inline int32_t ngpt_logits_kept(const ngpt_context *ctx, int32_t len)
{
    const int32_t n = ctx->shape.logits_rows;
    return n > 0 && n < len ? n : len;
}

/* Records a pass over nseq sequences of len tokens with rows logits rows
 * each (cached: KV slots slot0..): the logits and trace now belong to it,
 * and it is not a training batch unless the full forward then marks it so. */
static inline void ngpt_run_pass_done(ngpt_context *ctx, int32_t nseq, int32_t len, int32_t rows,
                                      bool cached, int32_t slot0)
{
    ctx->run.pass.valid = true;
    ctx->run.pass.batch = nseq;
    ctx->run.pass.seq = len;
    ctx->run.pass.rows = rows;
    ctx->run.pass.cached = cached;
    ctx->run.pass.slot0 = slot0;
    ctx->run.backward_ready = false;
}

/* The parameters changed (init, load): the last pass no longer describes
 * them and its activations cannot be differentiated. */
static inline void ngpt_run_params_changed(ngpt_context *ctx)
{
    ctx->run.pass.valid = false;
    ctx->run.backward_ready = false;
}

#endif
