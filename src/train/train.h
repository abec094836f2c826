/* train.h — the training layer's pieces after their checks (train/): the
 * public functions validate and call these; ngpt_train_step and
 * ngpt_model_evaluate validate once and call them per step or batch. */
#ifndef NGPT_TRAIN_TRAIN_H
#define NGPT_TRAIN_TRAIN_H

#include "runtime/context.h"

/* Validates an optimizer config (a bare message: the caller prefixes it). */
ngpt_status ngpt_optim_check(const ngpt_optim_config *opt);

/* ngpt_optim_lr without its checks: the learning rate of step `step`. */
float ngpt_optim_lr_unchecked(const ngpt_optim_config *opt, int64_t step);

/* ngpt_optim_step without its checks (the config is valid, run.n_backward
 * >= 1): one AdamW step at learning rate lr; NGPT_ERR_NUMERIC with nothing
 * changed when the gradient norm is not finite. */
ngpt_status ngpt_optim_step_unchecked(ngpt_context *ctx, const ngpt_optim_config *opt, float lr,
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
