/* lora.h — a LoRA adapter's shape (runtime/lora.c): the modules a model's
 * config and a LoRA config adapt (which Linear, which rows of its output),
 * and where each one's A and B sit in the adapter's floats. The wiring
 * (model/lora.c) applies and differentiates them; io/adapter.c stores them. */
#ifndef NGPT_RUNTIME_LORA_H
#define NGPT_RUNTIME_LORA_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "runtime/layout.h"

enum { NGPT_LORA_KINDS = 9 };   /* the NGPT_LORA_* bits */

/* One adapted module of a layer: y[:, row0 .. row0 + rows) of Linear
 * `linear` gains B (s A x), A (r, in), B (rows, r). */
typedef struct ngpt_lora_module {
    uint32_t target;            /* its NGPT_LORA_* bit */
    int32_t kind;               /* the bit's index (0..NGPT_LORA_KINDS-1) */
    ngpt_linear linear;
    int32_t row0, rows, in;
    const char *name;           /* "attn.q", ...: an adapter file's tensors are
                                   blocks.<l>.<name>.lora_A / .lora_B */
    size_t a, b;                /* floats from the layer's block to A, to B */
    size_t pa, pb;              /* the same in an adapter's packed copy (below) */
} ngpt_lora_module;

typedef struct ngpt_lora_layout {
    int32_t rank;
    float scale;                /* alpha / r, or alpha / sqrt(r) (rslora) */
    float dropout;              /* on the adapted inputs while training */
    int32_t n_modules;          /* per adapted layer, in the order of their bits */
    ngpt_lora_module mod[NGPT_LORA_KINDS];
    uint64_t layers;            /* the config's bits (0: every layer) */
    int32_t n_layers;           /* the model's L */
    size_t layer_floats;        /* one adapted layer's A and B, back to back */
    size_t total;               /* every adapted layer's */
    /* An adapter's packed copy, what inference multiplies by (gemm.h's
     * panels, zero-padded: A as a W of ceil(r/16)*16 rows, B as a W of its
     * rows by r): per adapted layer, each module's A then B */
    size_t packed_layer, packed_total;
} ngpt_lora_layout;

/* Validates a LoRA config alone (bare message). */
ngpt_status ngpt_lora_check(const ngpt_lora_config *lc);

/* The layout of lc's adapter of a model of cfg: the targets resolved
 * against its Linears (gate_proj needs SwiGLU, c_fc a GELU MLP, c_attn and
 * q_proj do not mix, layers within L). Bare messages. */
ngpt_status ngpt_lora_layout_compute(const ngpt_config *cfg, const ngpt_lora_config *lc,
                                     ngpt_lora_layout *ll);

static inline bool ngpt_lora_layer_on(const ngpt_lora_layout *ll, int l)
{
    return ll->layers == 0 || (l < 64 && ((ll->layers >> l) & 1));
}

/* The adapted layers below l, without a walk over the layers (a model
 * file may say L is a hundred million): l, or the bits below it. */
size_t ngpt_lora_layers_below(const ngpt_lora_layout *ll, int l);
/* The layer of the on-th adapted layer (0-based among them), or -1. */
int ngpt_lora_adapted_layer(const ngpt_lora_layout *ll, size_t on);

/* Layer l's block in the adapter's floats (l adapted). */
size_t ngpt_lora_layer_offset(const ngpt_lora_layout *ll, int l);

/* Whether an adapter made on a model of config a applies to one of b: the
 * same model but for the weights' storage and the dropout. */
bool ngpt_lora_same_model(const ngpt_config *a, const ngpt_config *b);

/* An adapter (ngpt.h): created, or read from a file (its floats used in
 * place in the mapping, or copied: a few MB); io/adapter.c and
 * io/adapter_file.c make and free them. Immutable but for users. */
struct ngpt_adapter {
    ngpt_lora_config lc;
    ngpt_lora_layout ll;
    ngpt_config cfg;            /* its model's (weights: whatever it was made on) */
    uint64_t base;              /* its model's identity (io/adapter.c) */
    const float *w;             /* ll.total: each adapted layer's A and B, by module */
    /* a training file's (ngpt_context_save_train of an adapter's training
     * context), else NULL: AdamW moments (ll.total each) and the steps */
    const float *adam_m, *adam_v;
    uint64_t steps;
    ngpt_train_state state;
    void *owned;                /* copied: the floats (w, and the moments after them) */
    float *packed;              /* w packed for inference (layout's packed_*), owned */
    struct ngpt_ckpt_reader *file;  /* or the open file they are in (io/adapter_file.c) */
    atomic_int users;           /* contexts applying it or training from it */
};

/* A context's adapters are no longer used by it (ngpt_context_free). */
struct ngpt_context;
void ngpt_lora_release(struct ngpt_context *ctx);

/* XXH3-64 of the adapters an inference context applies (each one's floats
 * and scale, in order), or 0 for none: what a session of it depends on
 * besides the weights. */
uint64_t ngpt_lora_checksum(const struct ngpt_context *ctx);

/* The columns of a frozen Linear's W that its backward unpacks at once
 * (model/lora.c): a multiple of the 8-bit groups, up to 32 MiB of them
 * (each block's product packs all of d(y) again: few blocks, even for a
 * large vocabulary's lm_head). */
static inline int ngpt_lora_cols_width(int out)
{
    const long w = (1L << 23) / ((long)out * 32);
    return 32 * (int)(w < 1 ? 1 : w > 16 ? 16 : w);
}

#endif
