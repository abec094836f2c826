/* llama2c.h — llama2.c's model.bin (version 0, run.c's layout, or 1) streamed
 * into a .ngpt checkpoint (llama2c.c; docs/IMPORT.md, "llama2.c's
 * TinyStories"). */
#ifndef NGPT_IMPORT_LLAMA2C_H
#define NGPT_IMPORT_LLAMA2C_H

#include <stdint.h>

#include "ngpt.h"

#define NGPT_LLAMA2C_HEADER_MAX 256     /* version 1's header; version 0's is 28 bytes */

typedef struct ngpt_llama2c_header {
    ngpt_config cfg;            /* the model (weights f32) */
    int version;                /* 0: run.c's 7 int32; 1: export.py's "ak42" header */
    uint64_t data_at;           /* where the floats start: 28 or 256 */
    uint64_t file_bytes;        /* the size the header implies */
} ngpt_llama2c_header;

/* The header of a model.bin (its first n bytes, n <= 256; version 0 needs
 * 28, version 1 all 256), checked: every field positive (version 0's
 * vocab sign aside), dim % heads, heads % kv_heads, an even head size,
 * version 1's flag and padding. A version 2 (int8) or unknown version is
 * NGPT_ERR_UNSUPPORTED. Bare messages naming src. */
ngpt_status ngpt_llama2c_parse_header(const unsigned char *p, size_t n, const char *src,
                                      ngpt_llama2c_header *h);

/* Imports model.bin at path (its size checked exactly) with tok into a
 * checkpoint at out, weights stored as `store`. A bare message. */
ngpt_status ngpt_llama2c_write(const char *path, const ngpt_tokenizer *tok, ngpt_weights store,
                               const char *out);

#endif
