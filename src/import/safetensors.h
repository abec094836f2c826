/* safetensors.h — the safetensors reader (safetensors.c; docs/IMPORT.md):
 * a u64 header length N, N bytes of UTF-8 JSON naming each tensor's dtype,
 * shape and data offsets, then the raw little-endian tensors. A file is
 * checked whole when it opens (every offset, length, dtype and shape
 * against the header and the file's size: no duplicates, no holes, no
 * overlap, no trailing bytes); only then are its tensors handed out.
 * A set of files (a sharded model, model.safetensors.index.json) is a
 * weight set: one namespace over its files. The writer (ngpt_st_write)
 * writes float32 tensors, as PEFT adapters' are exported.
 *
 * Failures leave a bare sentence naming the file; the public function
 * prefixes its name. */
#ifndef NGPT_IMPORT_SAFETENSORS_H
#define NGPT_IMPORT_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define NGPT_ST_MAX_HEADER 100000000u  /* the reference reader's limit */
#define NGPT_ST_MAX_DIMS 8

typedef enum ngpt_st_dtype {
    NGPT_ST_F32 = 0, NGPT_ST_F16, NGPT_ST_BF16,     /* the ones that import */
    NGPT_ST_OTHER                                   /* valid safetensors, not weights */
} ngpt_st_dtype;

typedef struct ngpt_st_tensor {
    const char *name;           /* as in the file */
    char dtype_name[12];        /* "F32", "I64", ... */
    ngpt_st_dtype dtype;
    int ndim;
    int64_t shape[NGPT_ST_MAX_DIMS];
    size_t count;               /* elements */
    const unsigned char *data;  /* count * element bytes, inside the file */
    size_t bytes;
    const char *src;            /* the file, for messages */
} ngpt_st_tensor;

typedef struct ngpt_st_file {
    char *src;                  /* the path, or the name given to a buffer */
    void *map;                  /* mmap of a file, or NULL */
    size_t map_size;
    ngpt_st_tensor *t;          /* sorted by name */
    size_t n;
    char *names;                /* the names' bytes */
} ngpt_st_file;

/* Checks a file image of size bytes and indexes its tensors (data is
 * borrowed: it must outlive f). src names it in messages. */
ngpt_status ngpt_st_parse(ngpt_st_file *f, const void *data, size_t size, const char *src);
/* Maps the file at path read-only and parses it. */
ngpt_status ngpt_st_open(ngpt_st_file *f, const char *path);
/* Safe on a zeroed or failed f. */
void ngpt_st_close(ngpt_st_file *f);

/* The tensor `name`, or NULL. */
const ngpt_st_tensor *ngpt_st_find(const ngpt_st_file *f, const char *name);

/* Elements first..first+n-1 of t (F32, F16 or BF16) as float32, exactly:
 * BF16 is the upper half of a float32; F16's every value, subnormals,
 * infinities and NaNs included, is a float32. */
void ngpt_st_to_f32(const ngpt_st_tensor *t, size_t first, size_t n, float *dst);

/* The float32 of one IEEE half (bits h). */
float ngpt_st_half_to_f32(uint16_t h);

/* A float32 tensor to write: its name, its shape (rows, cols) and values. */
typedef struct ngpt_st_out {
    const char *name;
    int64_t rows, cols;
    const float *data;
} ngpt_st_out;

/* Writes the n tensors (F32, in the order given, the data of each right
 * after the previous one's; the header space-padded to 8 bytes, with
 * {"format": "pt"} metadata as PyTorch's writer has) as the file at path,
 * atomically. */
ngpt_status ngpt_st_write(const char *path, const ngpt_st_out *t, size_t n);

#endif
