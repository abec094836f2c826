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

/* JSON Lines conversations (text, size bytes; its first line is line
 * first_line in messages) rendered in tok's ChatML (tpl NULL) or by tpl
 * with opt: *ids (*count, malloc'd) and *trained (1: an assistant's content
 * or its end marker, which a batch keeps as targets; *n_trained of them),
 * train/chat_data.c. Bare messages naming the line. */
ngpt_status ngpt_chat_encode(const ngpt_tokenizer *tok, const ngpt_template *tpl,
                             const ngpt_template_options *opt, const uint8_t *text, size_t size,
                             size_t first_line, int32_t **ids, uint8_t **trained, size_t *count,
                             size_t *n_trained);

#endif
