/* checkpoint.h — the .ngpt container (docs/FORMAT.md): an atomic writer of
 * named float32 tensors + metadata, and a reader that validates a whole file
 * before anything in it is used. The model's save/load are built on these;
 * training adds its optimizer tensors and train.* metadata the same way. */
#ifndef NGPT_CHECKPOINT_H
#define NGPT_CHECKPOINT_H

#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

#define NGPT_CKPT_MAGIC "NGPTCKPT"     /* 8 bytes, no NUL */
#define NGPT_CKPT_VERSION 1
#define NGPT_CKPT_HEADER 128
#define NGPT_CKPT_TENSOR_ENTRY 128
#define NGPT_CKPT_META_ENTRY 64
#define NGPT_CKPT_META_KEY 48

typedef struct ngpt_ckpt_tensor {
    const char *name;
    int32_t ndim;               /* 1..4 */
    int32_t shape[4];
    const float *data;          /* writer: the values; reader: NULL (use read_tensor) */
} ngpt_ckpt_tensor;

enum { NGPT_META_U64 = 0, NGPT_META_F64 = 1, NGPT_META_I64 = 2 };

typedef struct ngpt_ckpt_meta {
    const char *key;            /* < 48 bytes */
    uint32_t type;              /* NGPT_META_* */
    union { uint64_t u; double f; int64_t i; } value;
} ngpt_ckpt_meta;

/* Produces writer entry i (called more than once per entry, in any order:
 * entries are made on the fly, so a save allocates nothing). */
typedef void (*ngpt_ckpt_tensor_fn)(void *user, size_t i, ngpt_ckpt_tensor *out);

/* Writes n_tensors tensors + metadata to `path` atomically (temp file, fsync,
 * rename, fsync of the directory). On error the previous file is intact. */
ngpt_status ngpt_ckpt_write(const char *path, const ngpt_config *cfg, size_t n_tensors,
                            ngpt_ckpt_tensor_fn get, void *user,
                            const ngpt_ckpt_meta *meta, size_t n_meta);

/* The model's own tensors (state_dict order) as writer entries. */
void ngpt_ckpt_model_tensor(const ngpt_context *ctx, const float *base, int32_t i,
                            ngpt_ckpt_tensor *out);

typedef struct ngpt_ckpt_reader {
    const unsigned char *data;  /* the whole verified file */
    size_t size;
    ngpt_config cfg;
    uint32_t n_tensors, n_meta, header_bytes;
    void *map;                  /* mmap of a file, or NULL */
    size_t map_size;
} ngpt_ckpt_reader;

/* Validates everything docs/FORMAT.md lists; on success the reader is open. */
ngpt_status ngpt_ckpt_open_mem(ngpt_ckpt_reader *r, const void *data, size_t size);
ngpt_status ngpt_ckpt_open_file(ngpt_ckpt_reader *r, const char *path);
void ngpt_ckpt_close(ngpt_ckpt_reader *r);

/* Copies tensor `name` into dst after checking its shape equals
 * (ndim, shape); NGPT_ERR_BAD_FORMAT if absent or shaped differently. */
ngpt_status ngpt_ckpt_read_tensor(const ngpt_ckpt_reader *r, const char *name, int32_t ndim,
                                  const int32_t *shape, float *dst);
bool ngpt_ckpt_has_tensor(const ngpt_ckpt_reader *r, const char *name);
/* Finds a metadata entry; false if absent. */
bool ngpt_ckpt_find_meta(const ngpt_ckpt_reader *r, const char *key, ngpt_ckpt_meta *out);

/* NGPT_ERR_CONFIG_MISMATCH naming the first differing field, or OK. */
ngpt_status ngpt_config_compare(const ngpt_config *want, const ngpt_config *got);

static inline size_t ngpt_align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Test hook: the write(2) the writer uses (simulates short writes, ENOSPC). */
extern ssize_t (*ngpt_ckpt_write_hook)(int fd, const void *buf, size_t n);

#endif
