/* checkpoint.h — the model side of checkpoints (checkpoint.c): the config in
 * the container's model block, the set of tensors a config implies, and
 * opening a file as a model checkpoint. The container itself (header,
 * tables, checksum, atomic writes) is ckpt_file.h; training checkpoints
 * (train_ckpt.c) add optimizer tensors and train.* metadata through both. */
#ifndef NGPT_IO_CHECKPOINT_H
#define NGPT_IO_CHECKPOINT_H

#include "io/ckpt_file.h"
#include "runtime/context.h"

/* The config as the header's model block (docs/FORMAT.md, offsets 32..87). */
void ngpt_ckpt_config_encode(const ngpt_config *cfg, unsigned char block[NGPT_CKPT_MODEL_BYTES]);

/* Metadata keys: a quantized model's identity (the float32 original's
 * parameter checksum, which its adapters record), and the key that makes a
 * file an adapter (io/adapter.c). */
#define NGPT_META_IDENTITY "model.identity"
#define NGPT_META_LORA_RANK "lora.rank"

/* The config in an open container's model block, validated. Bare messages. */
ngpt_status ngpt_ckpt_config_decode(const ngpt_ckpt_reader *r, ngpt_config *cfg);

/* Opens a container (path, or data/size when path is NULL) and checks it is
 * a model checkpoint: a valid config, and exactly the tensors the config
 * implies plus optional optim.m.* / optim.v.* twins. *cfg gets the config. */
ngpt_status ngpt_ckpt_open_model(ngpt_ckpt_reader *r, const char *path, const void *data,
                                 size_t size, ngpt_config *cfg);

/* The model's own tensors (state_dict order) as writer entries. */
void ngpt_ckpt_model_tensor(const ngpt_context *ctx, const float *base, int32_t i,
                            ngpt_ckpt_tensor *out);

/* Copies an open, verified model file r (its config file_cfg) into ctx, a
 * new context that owns its weights: checks the configs agree, then copies
 * every model tensor (quantizing a float32 file for an 8-bit or 4-bit
 * context, with progress; cancelled: NGPT_ERR_STOPPED); all or nothing.
 * Bare messages. */
ngpt_status ngpt_ckpt_load_into(ngpt_context *ctx, const ngpt_ckpt_reader *r,
                                const ngpt_config *file_cfg);

#endif
