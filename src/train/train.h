/* train.h — the training layer's pieces after their checks (train/): the
 * public functions validate and call these; ngpt_context_train_step and
 * ngpt_context_evaluate validate once and call them per step or batch. */
#ifndef NGPT_TRAIN_TRAIN_H
#define NGPT_TRAIN_TRAIN_H

#include "runtime/context.h"
#include "runtime/optim_config.h"

/* ngpt_context_optim_step without its checks (the config is valid, run.n_backward
 * >= 1): one AdamW step at learning rate lr; NGPT_ERR_NUMERIC with nothing
 * changed when the gradient norm is not finite. */
ngpt_status ngpt_context_optim_step_unchecked(ngpt_context *ctx, const ngpt_optim_config *opt, float lr,
                                      float *grad_norm);

/* Whether a split holds windows of seq+1 bytes and (vocab_size > 0) only
 * bytes below vocab_size (a bare message). */
ngpt_status ngpt_data_check(const ngpt_data *data, ngpt_split split, int32_t seq,
                            int32_t vocab_size);

/* ngpt_data_batch without its checks: batch `index` of a split. */
void ngpt_data_batch_unchecked(const ngpt_data *data, ngpt_split split, uint64_t seed,
                               uint64_t index, int32_t batch, int32_t seq, int32_t *tokens,
                               int32_t *targets);

#endif
