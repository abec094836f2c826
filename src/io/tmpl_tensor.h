/* tmpl_tensor.h — a model's chat template inside a checkpoint
 * (tmpl_tensor.c): the byte tensor `chat_template`, the part of
 * tokenizer_config.json a template renders with (docs/FORMAT.md, "A
 * model's chat template"), which an import writes and every save of a
 * context made from the model carries on. A file without one is what it
 * always was. */
#ifndef NGPT_IO_TMPL_TENSOR_H
#define NGPT_IO_TMPL_TENSOR_H

#include "io/ckpt_file.h"
#include "runtime/context.h"

#define NGPT_CKPT_CHAT_TEMPLATE "chat_template"
#define NGPT_CKPT_TEMPLATE_MAX ((size_t)4 << 20)    /* its bytes, at most */

/* The byte tensors a save writes after the model's (and the optimizer's)
 * tensors: the context's tokenizer, then its model's chat template, each
 * when it has one. */
size_t ngpt_ckpt_bytes_count(const ngpt_context *ctx);
void ngpt_ckpt_bytes_tensor(const ngpt_context *ctx, size_t j, ngpt_ckpt_tensor *out);

/* The writer entry of a chat template's bytes. */
ngpt_ckpt_tensor ngpt_ckpt_template_entry(const void *data, size_t size);

/* Checks entry i, named `chat_template`, of an open container: bytes, at
 * most NGPT_CKPT_TEMPLATE_MAX of them. Its text is read when it is used
 * (ngpt_model_template). A bare message. */
ngpt_status ngpt_ckpt_template_check(const ngpt_ckpt_reader *r, uint32_t i);

/* The template bytes of an open model file (NULL, *size 0: none). */
const void *ngpt_ckpt_template_bytes(const ngpt_ckpt_reader *r, size_t *size);

#endif
