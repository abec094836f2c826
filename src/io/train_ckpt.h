/* train_ckpt.h — a training checkpoint's optimizer state read back
 * (io/train_ckpt.c; ngpt_context_save_train writes it). */
#ifndef NGPT_IO_TRAIN_CKPT_H
#define NGPT_IO_TRAIN_CKPT_H

#include "io/ckpt_file.h"
#include "runtime/context.h"

/* A training context made from r's model continues its training: r's AdamW
 * moments and step count into ctx (whose parameters are r's); nothing for
 * a model-only file. Everything is checked before anything is copied. A
 * bare message. */
ngpt_status ngpt_ckpt_train_restore(ngpt_context *ctx, const ngpt_ckpt_reader *r);

#endif
