/* llama2c.h — llama2.c's model.bin (version 0, run.c's layout, 1 or 2) streamed
 * into a .ngpt checkpoint (llama2c.c; docs/IMPORT.md, "llama2.c's
 * TinyStories"). */
#ifndef NGPT_IMPORT_LLAMA2C_H
#define NGPT_IMPORT_LLAMA2C_H

#include <stdint.h>

#include "ngpt.h"

#define NGPT_LLAMA2C_HEADER_MAX 256     /* version 1's header; version 0's is 28 bytes */

typedef struct ngpt_llama2c_header {
    ngpt_config cfg;            /* the model (weights f32) */
    int version;                /* 0: run.c's 7 int32; 1, 2: export.py's "ak42" header */
    int32_t group_size;         /* version 2's int8 group size (0 for 0 and 1) */
    uint64_t data_at;           /* where the values start: 28 or 256 */
    uint64_t file_bytes;        /* the size the header implies */
} ngpt_llama2c_header;

/* The header of a model.bin (its first n bytes, n <= 256; version 0 needs
 * 28, versions 1 and 2 all 256), checked: every field positive (version
 * 0's vocab sign aside), dim % heads, heads % kv_heads, an even head size,
 * the flag and padding of versions 1 and 2, version 2's group size
 * positive and dividing dim. Another version is NGPT_ERR_UNSUPPORTED. Bare
 * messages naming src. */
ngpt_status ngpt_llama2c_parse_header(const unsigned char *p, size_t n, const char *src,
                                      ngpt_llama2c_header *h);

/* Imports model.bin at path (its size checked exactly) with tok into a
 * checkpoint at out, weights stored as `store` (the lm_head 4-bit too with
 * lm_head_q4). A bare message. */
ngpt_status ngpt_llama2c_write(const char *path, const ngpt_tokenizer *tok, ngpt_weights store,
                               bool lm_head_q4, const char *out);

#endif
