/* model.h — the library side of ngpt_model (io/model.c): one opened,
 * verified checkpoint whose weights every inference context of it reads in
 * place. The public functions are in include/ngpt.h. */
#ifndef NGPT_IO_MODEL_H
#define NGPT_IO_MODEL_H

#include "io/ckpt_file.h"
#include "runtime/context.h"

/* Opens path (or data/size when path is NULL) as a model checkpoint: every
 * check a load makes, the tokenizer built. weights: also lay the weights
 * out for contexts (ngpt_model_open); without, the model answers
 * questions and loads into contexts only (the ngpt_checkpoint_* wrappers).
 * Bare messages (the caller prefixes). */
ngpt_status ngpt_model_open_internal(ngpt_model **m, const char *path, const void *data,
                                     size_t size, bool weights);

/* The verified file and its config. */
const ngpt_ckpt_reader *ngpt_model_reader(const ngpt_model *m);
const ngpt_config *ngpt_model_cfg(const ngpt_model *m);

/* Takes the tokenizer out of m (the caller frees it); m keeps none. */
ngpt_tokenizer *ngpt_model_take_tokenizer(ngpt_model *m);

/* The bytes of parameters m copied from its file for its contexts: 0 when
 * they are used in place in the file (or not laid out). */
size_t ngpt_model_copied_bytes(const ngpt_model *m);

/* Closes m, whatever its contexts (the wrappers' own models have none). */
void ngpt_model_destroy(ngpt_model *m);

#endif
