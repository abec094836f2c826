/* hf_write.h — a Hugging Face state_dict (safetensors) streamed into a
 * .ngpt checkpoint, for any family whose tensors map onto ngpt's one by
 * one or stacked by rows (hf_write.c; hf_gpt2.c and hf_llama.c give the
 * names; docs/IMPORT.md, "The weights"). */
#ifndef NGPT_IMPORT_HF_WRITE_H
#define NGPT_IMPORT_HF_WRITE_H

#include "import/shards.h"
#include "import/stream.h"
#include "runtime/layout.h"

enum { NGPT_HF_NAME_MAX = NGPT_NAME_MAX + 32, NGPT_HF_MAX_SOURCES = 3 };

/* Where one ngpt tensor's values come from: n tensors stacked by rows (the
 * first dimension: rows[k] rows each, all of the ngpt tensor's columns),
 * or one tensor (rows unused), stored (in, out) when transposed. */
typedef struct ngpt_hf_sources {
    char hf[NGPT_HF_MAX_SOURCES][NGPT_HF_NAME_MAX];
    int64_t rows[NGPT_HF_MAX_SOURCES];
    int n;
    bool transpose;
} ngpt_hf_sources;

typedef struct ngpt_hf_family {
    const char *name;           /* "GPT-2", in messages */
    const char *embedding;      /* the token embedding's name, for the tied head */
    const char *prefix;         /* names may also carry it ("transformer."), or NULL */
    /* where ngpt tensor `name` of cfg's model comes from, into *out;
     * false if the family has no such tensor */
    bool (*sources)(const ngpt_config *cfg, const char *name, ngpt_hf_sources *out);
    /* a tensor of the files that is not the model's and is skipped
     * (mask buffers, RoPE tables), given its name without the prefix */
    bool (*skipped)(const char *name);
} ngpt_hf_family;

/* Checks that the weights hold exactly the tensors cfg (config.json's
 * model, weights f32) implies, shaped as config.json says, in F32, F16 or
 * BF16 (the skipped ones aside, a lm_head.weight of a tied model equal to
 * the embedding); then writes the model with its weights stored as `store`
 * (its lm_head 4-bit too with lm_head_q4) and x's tokenizer and chat
 * template attached to path, atomically, tensor by tensor from the mapped
 * files. context: 0 (cfg's T), or another T up to config.json's positions
 * (learned positions: the first rows of the table; RoPE: cfg's T may be
 * NGPT_IMPORT_CONTEXT_DEFAULT, shorter than config.json's). A bare message. */
ngpt_status ngpt_hf_write(const ngpt_hf_family *fam, const ngpt_config *cfg,
                          const ngpt_shards *w, const ngpt_stream_extras *x, ngpt_weights store,
                          bool lm_head_q4, int32_t context, int32_t positions, const char *path);

#endif
