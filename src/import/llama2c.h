/* llama2c.h — llama2.c's model.bin (version 0, run.c's layout) streamed
 * into a .ngpt checkpoint (llama2c.c; docs/IMPORT.md, "llama2.c's
 * TinyStories"). */
#ifndef NGPT_IMPORT_LLAMA2C_H
#define NGPT_IMPORT_LLAMA2C_H

#include <stdint.h>

#include "ngpt.h"

#define NGPT_LLAMA2C_HEADER 28      /* 7 int32: dim, hidden, layers, heads, kv_heads, vocab, seq */

/* The ngpt config of a model.bin header (hdr: its 28 bytes; weights f32),
 * checked: every field positive (vocab's sign aside), dim % heads,
 * heads % kv_heads, an even head size; and *file_bytes, the size run.c
 * reads. A v1/v2 export (magic "ak42") is refused by name. Bare messages
 * naming src. */
ngpt_status ngpt_llama2c_config(const unsigned char hdr[NGPT_LLAMA2C_HEADER], const char *src,
                                ngpt_config *cfg, uint64_t *file_bytes);

/* Imports model.bin at path (its size checked exactly) with tok into a
 * checkpoint at out, weights stored as `store`. A bare message. */
ngpt_status ngpt_llama2c_write(const char *path, const ngpt_tokenizer *tok, ngpt_weights store,
                               const char *out);

#endif
