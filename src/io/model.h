/* model.h — the library side of ngpt_model (io/model.c): one opened,
 * verified model file whose weights every inference context of it reads in
 * place. The public functions are in include/ngpt.h. */
#ifndef NGPT_IO_MODEL_H
#define NGPT_IO_MODEL_H

#include "io/ckpt_file.h"
#include "runtime/context.h"

/* The verified file, its config and tokenizer (NULL: none). */
const ngpt_ckpt_reader *ngpt_model_reader(const ngpt_model *m);
const ngpt_config *ngpt_model_cfg(const ngpt_model *m);
const ngpt_tokenizer *ngpt_model_tok(const ngpt_model *m);

/* The weights an inference context of m reads, laid out on the first call
 * (under m's lock: any thread). */
ngpt_status ngpt_model_weights(ngpt_model *m, ngpt_shared_weights *w);

/* m's identity, which its adapters record: a quantized file's
 * model.identity (its float32 original's), else its parameters' checksum
 * (ngpt_context_params_checksum of any context of it), computed once
 * (lock held: any thread). */
ngpt_status ngpt_model_identity(ngpt_model *m, uint64_t *id);
/* m's count of the contexts made from it (ngpt_model_close reads it). */
atomic_int *ngpt_model_users(ngpt_model *m);

/* The bytes of parameters m copied from its file for its contexts: 0 when
 * they are used in place in the file (or not laid out). */
size_t ngpt_model_copied_bytes(const ngpt_model *m);

#endif
