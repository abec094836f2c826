/* optim_config.h — the optimizer settings' check and schedule
 * (runtime/optim_config.c); the public functions are in include/ngpt.h. */
#ifndef NGPT_RUNTIME_OPTIM_CONFIG_H
#define NGPT_RUNTIME_OPTIM_CONFIG_H

#include "base/error.h"

/* Validates an optimizer config (a bare message: the caller prefixes it). */
ngpt_status ngpt_optim_check(const ngpt_optim_config *opt);

/* ngpt_optim_config_lr without its checks: the learning rate of step `step`. */
float ngpt_optim_config_lr_unchecked(const ngpt_optim_config *opt, int64_t step);

#endif
