/* hf_tokenizer.h — a Hugging Face GPT-2 tokenizer as an ngpt tokenizer
 * (hf_tokenizer.c; docs/IMPORT.md, "The tokenizer"). */
#ifndef NGPT_IMPORT_HF_TOKENIZER_H
#define NGPT_IMPORT_HF_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* vocab.json + merges.txt: the content of GPT-2's encoder.json and
 * vocab.bpe, read as ngpt_tokenizer_load_gpt2 reads those. */
ngpt_status ngpt_hf_tokenizer_files(ngpt_tokenizer **tok, const char *vocab, const char *merges);

/* tokenizer.json text (size bytes): a byte-level BPE with GPT-2's
 * pre-tokenizer, SmolLM2's (each digit alone, then GPT-2's), or GPT-4's
 * pattern (Llama 3's, Qwen's), optionally after NFC. In GPT-2's
 * layout (bytes at ids 0..255, merge k making id 256 + k, added tokens
 * after) its vocabulary, merges (either form) and added tokens make the
 * same tokenizer as vocab.json + merges.txt; in any other layout the
 * tokenizer keeps the file's ids (ngpt_hf_tokenizer_ids). Anything that
 * would encode differently is refused by name. A bare message naming src. */
ngpt_status ngpt_hf_tokenizer_json(ngpt_tokenizer **tok, const void *text, size_t size,
                                   const char *src);

/* What a tokenizer.json asks around its BPE model, as hf_tokenizer.c read
 * it: the pre-tokenizer, tokenizer/tables.h's NGPT_TOK_* flags (NFC, Llama
 * 3's ignore_merges, the special tokens split out of text: the GPT-4-style
 * Split pipelines, which Hugging Face's tokenizers read), and the special
 * token the post-processor begins every encoding with. */
typedef struct ngpt_hf_pipeline {
    ngpt_pretokenizer pretok;
    int flags;
    const char *bos;            /* a name, or NULL */
} ngpt_hf_pipeline;

/* hf_tokenizer_ids.c: the model of a checked tokenizer.json (root) as a
 * tokenizer with the file's ids as model ids, the pipeline pipe and
 * Hugging Face's merge rule (NGPT_MERGE_PAIRS). When the file has GPT-2's
 * layout and pipeline it sets *gpt2_layout and makes nothing (the caller
 * reads it as GPT-2's files). Bare messages naming src. */
struct cJSON;
ngpt_status ngpt_hf_tokenizer_ids(ngpt_tokenizer **tok, const struct cJSON *root,
                                  const struct cJSON *model, const ngpt_hf_pipeline *pipe,
                                  bool *gpt2_layout, const char *src);

#endif
