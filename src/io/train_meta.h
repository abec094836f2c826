/* train_meta.h — a training file's train.* metadata (docs/FORMAT.md): the
 * steps taken and the training state (io/train_meta.c), for the training
 * checkpoints of models (io/train_ckpt.c) and adapters (io/adapter_file.c). */
#ifndef NGPT_IO_TRAIN_META_H
#define NGPT_IO_TRAIN_META_H

#include "io/ckpt_file.h"

enum { NGPT_TRAIN_META = 20 };   /* entries written */

/* The entries of steps and ts. */
void ngpt_train_meta(uint64_t steps, const ngpt_train_state *ts, ngpt_ckpt_meta m[NGPT_TRAIN_META]);
/* Reads them back: every required entry, checked (a bare message naming
 * the file and the entry). */
ngpt_status ngpt_train_meta_read(const ngpt_ckpt_reader *r, ngpt_train_state *ts, uint64_t *steps);
/* A state to save: reserved bytes zero, the optimizer settings valid. */
ngpt_status ngpt_train_state_check(const ngpt_train_state *ts);

#endif
