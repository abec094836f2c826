/* ckpt_file.h — the .ngpt container (docs/FORMAT.md): named tensors
 * (float32, 8-bit in src/q8.h's packed layout, 4-bit in src/q4.h's, or
 * bytes: a tokenizer's
 * file) and typed metadata behind a fixed header, sealed by an XXH3-64
 * checksum.
 * ckpt_write.c writes one atomically; ckpt_read.c validates a whole file
 * before any of it is used. The container knows nothing about models: the
 * header's model block (the config) is bytes it carries, and which tensors
 * a file must hold is decided by the model side (checkpoint.c).
 *
 * Failures leave a bare sentence in ngpt_last_error() (naming the file);
 * the public function that called prefixes its name (ngpt_prefixed). */
#ifndef NGPT_IO_CKPT_FILE_H
#define NGPT_IO_CKPT_FILE_H

#include <stdint.h>
#include <sys/types.h>

#include "base/checked.h"
#include "base/error.h"
#include "q4.h"
#include "runtime/layout.h"

#define NGPT_CKPT_MAGIC "NGPTCKPT"     /* 8 bytes, no NUL */
#define NGPT_CKPT_VERSION 1             /* files without a byte tensor (all before them) */
#define NGPT_CKPT_VERSION_BYTES 2       /* files with one: the writer picks the version */
#define NGPT_CKPT_HEADER 128
#define NGPT_CKPT_MODEL_BLOCK 32        /* offset of the model block in the header */
#define NGPT_CKPT_MODEL_BYTES 96        /* its size: header bytes 32..127 */
#define NGPT_CKPT_MODEL_BYTES_V2 80     /* its part before Gemma 3's switches (the rest is zero
                                           without them) */
#define NGPT_CKPT_MODEL_BYTES_V1 56     /* its first part, all a model had before qk_norm and
                                           rope_scaling (the rest is zero without them):
                                           what a session file holds (model/session.c) */
#define NGPT_CKPT_TENSOR_ENTRY 128
#define NGPT_CKPT_META_ENTRY 64
#define NGPT_CKPT_META_KEY 48

/* Tensor dtypes: float32; 8-bit weights (2-D (n, k), stored as src/q8.h's
 * packed panels: ngpt_q8_packed_bytes(n, k) bytes); bytes (1-D; version 2
 * files only); 4-bit weights (2-D (n, k), src/q4.h's packed panels:
 * ngpt_q4_packed_bytes(n, k) bytes); packed float32 (a Linear's W (n, k),
 * 4nk bytes in the layout an inference context holds it: full panels of 16
 * rows as gemm.h packs them, then the last n % 16 rows as they are:
 * ngpt_f32_panels_pack in runtime/weights.h). */
enum { NGPT_CKPT_F32 = 0, NGPT_CKPT_Q8 = 1, NGPT_CKPT_BYTES = 2, NGPT_CKPT_Q4 = 3,
       NGPT_CKPT_F32_PACKED = 4 };

typedef struct ngpt_ckpt_tensor {
    const char *name;
    int32_t ndim;               /* 1..4 (NGPT_CKPT_Q8: 2, NGPT_CKPT_BYTES: 1) */
    int32_t shape[4];
    uint32_t dtype;             /* NGPT_CKPT_* */
    const void *data;           /* the bytes, or NULL when read is set */
    /* Or the bytes come from read(src, from + at, dst, n) for the tensor's
     * bytes at..at+n-1 (at and n multiples of 4): an f32 inference
     * context's parameters while its Linears are packed in place. */
    void (*read)(const void *src, size_t at, void *dst, size_t n);
    const void *src;
    size_t from;
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

/* Writes model_block, n_tensors tensors and the metadata to `path`
 * atomically (temp file, fsync, rename, fsync of the directory). On error
 * the previous file is intact. */
ngpt_status ngpt_ckpt_write(const char *path,
                            const unsigned char model_block[NGPT_CKPT_MODEL_BYTES],
                            size_t n_tensors, ngpt_ckpt_tensor_fn get, void *user,
                            const ngpt_ckpt_meta *meta, size_t n_meta);

typedef struct ngpt_ckpt_reader {
    const unsigned char *data;  /* the whole verified file */
    size_t size;
    const unsigned char *model_block;   /* NGPT_CKPT_MODEL_BYTES of the header */
    uint32_t version, n_tensors, n_meta, header_bytes;
    const char *src;            /* for messages: the path, or "the buffer" */
    void *map;                  /* mmap of a file, or NULL */
    size_t map_size;
    void *heap;                 /* the file read into memory where mapping failed, or NULL */
    bool hash_pending;          /* opened unhashed: the checksum is still owed */
} ngpt_ckpt_reader;

/* Validates the container (everything docs/FORMAT.md lists except the
 * model's config and tensor set); on success the reader is open. `path`
 * must outlive the reader (messages name it). A file is mapped read-only;
 * where the system cannot map it, it is read into a 64-byte-aligned block
 * (tensors then stay 64-byte aligned, as in a mapping). */
ngpt_status ngpt_ckpt_open_mem(ngpt_ckpt_reader *r, const void *data, size_t size);
ngpt_status ngpt_ckpt_open_file(ngpt_ckpt_reader *r, const char *path);
void ngpt_ckpt_close(ngpt_ckpt_reader *r);

/* Opening a large file for a caller that reads all of it anyway (a model's
 * values are checked block by block): every check of ngpt_ckpt_open_* but
 * the checksum, which the caller then owes. Before any of the data but the
 * tables is trusted it runs ngpt_ckpt_hash_pass, which hashes the file in
 * chunks of NGPT_CKPT_HASH_CHUNK bytes and after each calls visit(user,
 * end) while the chunk is still in cache (bytes [0, end) are hashed); NGPT_ERR_CHECKSUM
 * if the file is corrupted, whatever visit found. A failure found before
 * then goes through ngpt_ckpt_settle(r, st), which reports a corrupted
 * file as such rather than by its symptom (as a hashed open would). The
 * messages are those of a hashed open. */
ngpt_status ngpt_ckpt_open_unhashed(ngpt_ckpt_reader *r, const char *path, const void *data,
                                    size_t size);
typedef void (*ngpt_ckpt_chunk_fn)(void *user, size_t end);
#define NGPT_CKPT_HASH_CHUNK ((size_t)64 << 10)    /* still in L1/L2 when visit reads it */
ngpt_status ngpt_ckpt_hash_pass(ngpt_ckpt_reader *r, ngpt_ckpt_chunk_fn visit, void *user);
ngpt_status ngpt_ckpt_settle(ngpt_ckpt_reader *r, ngpt_status st);

/* Entry i of the tensor table: its name, and whether its shape is (ndim, shape). */
const char *ngpt_ckpt_tensor_name(const ngpt_ckpt_reader *r, uint32_t i);
bool ngpt_ckpt_tensor_shape_is(const ngpt_ckpt_reader *r, uint32_t i, int32_t ndim,
                               const int32_t *shape);
/* Index of tensor `name`, or -1. */
int64_t ngpt_ckpt_find_tensor(const ngpt_ckpt_reader *r, const char *name);

/* Entry i's dtype (NGPT_CKPT_*), and its data (*bytes of it, inside the
 * verified file). */
uint32_t ngpt_ckpt_tensor_dtype(const ngpt_ckpt_reader *r, uint32_t i);
/* Entry i's dimension d (0..3; 0 past its ndim). */
int32_t ngpt_ckpt_tensor_dim(const ngpt_ckpt_reader *r, uint32_t i, int d);
const unsigned char *ngpt_ckpt_tensor_data(const ngpt_ckpt_reader *r, uint32_t i, size_t *bytes);

/* Copies float32 tensor `name` into dst after checking its shape equals
 * (ndim, shape), in the state_dict layout (a packed one unpacked);
 * NGPT_ERR_BAD_FORMAT if absent, shaped differently or not float32. */
ngpt_status ngpt_ckpt_read_tensor(const ngpt_ckpt_reader *r, const char *name, int32_t ndim,
                                  const int32_t *shape, float *dst);
/* Finds a metadata entry; false if absent. */
bool ngpt_ckpt_find_meta(const ngpt_ckpt_reader *r, const char *key, ngpt_ckpt_meta *out);

/* Test hook: the write(2) the writer uses (simulates short writes, ENOSPC). */
extern ssize_t (*ngpt_ckpt_write_hook)(int fd, const void *buf, size_t n);

#endif
