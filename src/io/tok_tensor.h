/* tok_tensor.h — a model's tokenizer inside a checkpoint (tok_tensor.c):
 * the byte tensor `tokenizer` holding the tokenizer's file image, which
 * makes the file version 2 (docs/FORMAT.md, "The tokenizer"). */
#ifndef NGPT_IO_TOK_TENSOR_H
#define NGPT_IO_TOK_TENSOR_H

#include "io/ckpt_file.h"
#include "runtime/context.h"

#define NGPT_CKPT_TOKENIZER "tokenizer"

/* The writer entry of the context's tokenizer; false when it has none. */
bool ngpt_ckpt_tokenizer_tensor(const ngpt_context *ctx, ngpt_ckpt_tensor *out);

/* Checks entry i, named `tokenizer`, of an open container whose model has
 * config cfg: bytes, a tokenizer image whose container is sound (magic,
 * version, size, checksum, counts; ngpt_tok_image_check) and whose token
 * count is the model's V. Cheap: nothing is built. A bare message. */
ngpt_status ngpt_ckpt_tokenizer_check(const ngpt_ckpt_reader *r, uint32_t i, const ngpt_config *cfg);

#endif
