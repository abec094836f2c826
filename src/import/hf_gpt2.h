/* hf_gpt2.h — GPT-2's tensors (a Hugging Face state_dict in safetensors)
 * streamed into a .ngpt checkpoint (hf_gpt2.c; docs/IMPORT.md, "The
 * weights"). */
#ifndef NGPT_IMPORT_HF_GPT2_H
#define NGPT_IMPORT_HF_GPT2_H

#include "import/shards.h"

/* Checks that the weights hold exactly the tensors cfg (config.json's
 * model, weights f32) implies, shaped as config.json says, in F32, F16 or
 * BF16 (names with or without "transformer.", the attention mask buffers
 * skipped, a tied lm_head.weight equal to wte); then writes the model with
 * its weights stored as `store` and tok attached to path, atomically,
 * tensor by tensor from the mapped files. A bare message. */
ngpt_status ngpt_hf_gpt2_write(const ngpt_config *cfg, const ngpt_shards *w,
                               const ngpt_tokenizer *tok, ngpt_weights store, const char *path);

#endif
