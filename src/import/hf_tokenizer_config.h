/* hf_tokenizer_config.h — what a Hugging Face tokenizer_config.json (and
 * generation_config.json) decides about an imported tokenizer: its end
 * tokens, its BOS, the chat template's kind
 * (hf_tokenizer_config.c; docs/IMPORT.md, "tokenizer_config.json"). */
#ifndef NGPT_IMPORT_HF_TOKENIZER_CONFIG_H
#define NGPT_IMPORT_HF_TOKENIZER_CONFIG_H

#include <stddef.h>

#include "base/error.h"

/* The text of tokenizer_config.json (size bytes) into *out (ngpt.h's
 * struct): eos_token and bos_token as strings or {"content": ...},
 * add_bos_token, chat_template's kind. A bare message naming src. */
ngpt_status ngpt_hf_tok_config_parse(const void *text, size_t size, const char *src,
                                     ngpt_hf_tokenizer_config *out);

/* Applies them to *tok: the end token becomes cfg's end_token (NULL cfg or
 * none: as it is), which must be a special token of *tok; gen (the text of
 * generation_config.json, gen_size bytes, or NULL) may name eos_token_id,
 * an id or a list: the end token must be one of them, and without
 * end_token its single (or first) id is the end. add_bos true makes
 * bos_token (a special token) the BOS prompts begin with; a BOS the
 * tokenizer.json's post-processor already adds must be the same (false
 * changes nothing: transformers.js encodes as the post-processor says).
 * Bare messages naming the files. */
ngpt_status ngpt_hf_tok_config_apply(ngpt_tokenizer **tok, const ngpt_hf_tokenizer_config *cfg,
                                     const char *cfg_src, const void *gen, size_t gen_size,
                                     const char *gen_src);

#endif
