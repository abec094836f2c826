/* hf_config.h — a Hugging Face GPT-2 or Llama config.json as an ngpt config
 * (hf_config.c; docs/IMPORT.md, "config.json"). */
#ifndef NGPT_IMPORT_HF_CONFIG_H
#define NGPT_IMPORT_HF_CONFIG_H

#include <stddef.h>

#include "base/error.h"
#include "import/hf_write.h"

/* Maps the JSON text (size bytes) to *cfg (weights f32) and validates it,
 * and *fam (unless NULL) to the family whose tensors the weights hold;
 * what ngpt cannot compute exactly is NGPT_ERR_UNSUPPORTED naming the key.
 * A RoPE model's T is at most NGPT_IMPORT_CONTEXT_DEFAULT; *positions
 * (unless NULL) gets config.json's own (max_position_embeddings,
 * n_positions). A bare message naming src. */
ngpt_status ngpt_hf_config_parse(const void *text, size_t size, const char *src, ngpt_config *cfg,
                                 const ngpt_hf_family **fam, int32_t *positions);

#endif
