/* hf_tokenizer.h — a Hugging Face GPT-2 tokenizer as an ngpt tokenizer
 * (hf_tokenizer.c; docs/IMPORT.md, "The tokenizer"). */
#ifndef NGPT_IMPORT_HF_TOKENIZER_H
#define NGPT_IMPORT_HF_TOKENIZER_H

#include <stddef.h>

#include "base/error.h"

/* vocab.json + merges.txt: the content of GPT-2's encoder.json and
 * vocab.bpe, read as ngpt_tokenizer_load_gpt2 reads those. */
ngpt_status ngpt_hf_tokenizer_files(ngpt_tokenizer **tok, const char *vocab, const char *merges);

/* tokenizer.json text (size bytes): a byte-level BPE with GPT-2's
 * pre-tokenizer; its vocabulary, merges (either form) and added tokens
 * make the same tokenizer as vocab.json + merges.txt. Anything that would
 * encode differently is refused by name. A bare message naming src. */
ngpt_status ngpt_hf_tokenizer_json(ngpt_tokenizer **tok, const void *text, size_t size,
                                   const char *src);

#endif
