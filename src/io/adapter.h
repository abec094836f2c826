/* adapter.h — LoRA adapters' memory and files (io/adapter_file.c) and
 * their checks against a model (io/adapter.c); the public functions are in
 * include/ngpt.h. */
#ifndef NGPT_IO_ADAPTER_H
#define NGPT_IO_ADAPTER_H

#include "runtime/context.h"

/* A new adapter of cfg and lc (layout ll) with room for its floats and,
 * with moments, AdamW's two; every float zero. NULL: out of memory. */
ngpt_adapter *ngpt_adapter_alloc(const ngpt_config *cfg, const ngpt_lora_config *lc,
                                 const ngpt_lora_layout *ll, bool moments);

/* ad's packed copy (ad->packed), what inference multiplies by: made once,
 * when the adapter is made or read. Bare messages. */
ngpt_status ngpt_adapter_pack(ngpt_adapter *ad);

/* Whether ad applies to m: the same model (config and identity), else
 * NGPT_ERR_CONFIG_MISMATCH. Bare messages. */
ngpt_status ngpt_adapter_check_model(const ngpt_adapter *ad, ngpt_model *m);

/* An adapter's training context saved: the adapter, and with ts (not
 * NULL) its AdamW moments, steps and ts, which ngpt_adapter_open reads back
 * to go on training. Bare messages. */
ngpt_status ngpt_adapter_save_training(const ngpt_context *ctx, const char *path,
                                       const ngpt_train_state *ts);

#endif
