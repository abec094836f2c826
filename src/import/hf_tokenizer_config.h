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

/* The bytes of a model's chat_template tensor (io/tmpl_tensor.h): a JSON
 * object of tokenizer_config.json's chat template (cfg, cfg_size bytes,
 * or NULL) and the special tokens apply_chat_template renders it with
 * (bos_token, eos_token, unk_token, sep_token, pad_token, cls_token,
 * mask_token, those it names). jinja (jinja_size bytes, or NULL): a
 * chat_template.jinja, which takes the place of the config's template as
 * it does for transformers. *blob NULL: neither holds a template; else
 * malloc'd. Bare messages naming cfg_src. */
ngpt_status ngpt_hf_chat_template(const void *cfg, size_t cfg_size, const char *cfg_src,
                                  const void *jinja, size_t jinja_size, char **blob,
                                  size_t *blob_size);

#endif
