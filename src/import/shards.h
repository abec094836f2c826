/* shards.h — a model's weights as one set of named tensors over one or
 * more safetensors files (shards.c): model.safetensors, the files named
 * one by one, or the shards a model.safetensors.index.json lists. */
#ifndef NGPT_IMPORT_SHARDS_H
#define NGPT_IMPORT_SHARDS_H

#include "import/safetensors.h"

typedef struct ngpt_shards {
    ngpt_st_file *files;
    size_t n;
} ngpt_shards;

/* Opens and checks every file; a tensor name in two files is an error. */
ngpt_status ngpt_shards_open(ngpt_shards *s, const char *const *paths, size_t n);
/* Opens the shards index_path's weight_map names (files in the index's own
 * folder), each checked whole; every tensor of a shard must be mapped to
 * that shard, and every name of the map found in its shard. */
ngpt_status ngpt_shards_open_index(ngpt_shards *s, const char *index_path);
void ngpt_shards_close(ngpt_shards *s);

/* The tensor `name` in any file, or NULL. */
const ngpt_st_tensor *ngpt_shards_find(const ngpt_shards *s, const char *name);

#endif
