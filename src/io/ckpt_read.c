/* ckpt_read.c — the .ngpt container reader (ckpt_file.h): validates the
 * container of a whole file before any of it is trusted (docs/FORMAT.md,
 * "Validation on load"); the model side (checkpoint.c) then checks the
 * config and the tensor set. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/huge_pages.h"
#include "io/ckpt_file.h"
#include "runtime/f32_panels.h"

static uint32_t get_u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static const unsigned char *tensor_entry(const ngpt_ckpt_reader *r, uint32_t i)
{
    return r->data + NGPT_CKPT_HEADER + (size_t)i * NGPT_CKPT_TENSOR_ENTRY;
}

static const unsigned char *meta_entry(const ngpt_ckpt_reader *r, uint32_t i)
{
    return r->data + NGPT_CKPT_HEADER + (size_t)r->n_tensors * NGPT_CKPT_TENSOR_ENTRY +
           (size_t)i * NGPT_CKPT_META_ENTRY;
}

static bool name_ok(const unsigned char *p, size_t cap)
{
    size_t n = strnlen((const char *)p, cap);
    if (n == 0 || n == cap) return false;
    for (size_t i = n; i < cap; i++)       /* NUL-padded */
        if (p[i]) return false;
    return true;
}

const char *ngpt_ckpt_tensor_name(const ngpt_ckpt_reader *r, uint32_t i)
{
    return (const char *)tensor_entry(r, i);
}

int64_t ngpt_ckpt_find_tensor(const ngpt_ckpt_reader *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_tensors; i++)
        if (!strncmp((const char *)tensor_entry(r, i), name, NGPT_NAME_MAX)) return i;
    return -1;
}

bool ngpt_ckpt_tensor_shape_is(const ngpt_ckpt_reader *r, uint32_t i, int32_t ndim,
                               const int32_t *shape)
{
    const unsigned char *e = tensor_entry(r, i);
    if (get_u32(e + 68) != (uint32_t)ndim) return false;
    for (int32_t d = 0; d < ndim; d++)
        if (get_u32(e + 72 + 4 * d) != (uint32_t)shape[d]) return false;
    return true;
}

/* Checks entry i's own fields: name, dtype, ndim, shape, data range. */
static ngpt_status check_tensor_entry(const ngpt_ckpt_reader *r, uint32_t i, size_t data_end)
{
    const unsigned char *e = tensor_entry(r, i);
    if (!name_ok(e, NGPT_NAME_MAX))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %u of %s has a malformed name; "
                              "the file is damaged", i, r->src);
    const char *name = (const char *)e;
    uint32_t dtype = get_u32(e + 64), ndim = get_u32(e + 68);
    if (dtype == NGPT_CKPT_BYTES && r->version < NGPT_CKPT_VERSION_BYTES)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s holds bytes (dtype 2), which "
                              "a version %u file cannot; the file is damaged", name, r->src,
                              r->version);
    if (dtype > NGPT_CKPT_F32_PACKED)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s has unknown dtype %u "
                              "(this build reads float32, dtype 0, 8-bit, dtype 1, bytes, "
                              "dtype 2, 4-bit, dtype 3, and packed float32, dtype 4)", name,
                              r->src, dtype);
    if (ndim < 1 || ndim > 4 || (dtype == NGPT_CKPT_BYTES && ndim != 1))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s has ndim %u, not %s", name,
                              r->src, ndim, dtype == NGPT_CKPT_BYTES ? "1 (bytes)" : "1..4");
    if ((dtype == NGPT_CKPT_Q8 || dtype == NGPT_CKPT_Q4 || dtype == NGPT_CKPT_F32_PACKED) &&
        ndim != 2)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s tensor %s of %s has ndim %u, not 2",
                              dtype == NGPT_CKPT_Q8   ? "8-bit"
                              : dtype == NGPT_CKPT_Q4 ? "4-bit"
                                                      : "packed float32",
                              name, r->src, ndim);
    size_t bytes = dtype == NGPT_CKPT_BYTES ? 1 : sizeof(float);
    for (uint32_t d = 0; d < 4; d++) {
        uint32_t dim = get_u32(e + 72 + 4 * d);
        if (d >= ndim) {
            if (dim != 0)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s sets unused "
                                      "dimension %u to %u", name, r->src, d, dim);
        } else if (dim > INT32_MAX || !ngpt_mul_ok(bytes, dim, &bytes)) {
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s has an impossible "
                                  "shape", name, r->src);
        }
    }
    if (dtype == NGPT_CKPT_Q8 || dtype == NGPT_CKPT_Q4) {
        /* panels of 16 rows x groups of 32 x 576 (8-bit) or 320 (4-bit) bytes */
        const size_t n = get_u32(e + 72), k = get_u32(e + 76);
        const size_t groups = (k + NGPT_Q8_GROUP - 1) / NGPT_Q8_GROUP;
        if (!ngpt_mul_ok((n + NGPT_Q8_NR - 1) / NGPT_Q8_NR, groups, &bytes) ||
            !ngpt_mul_ok(bytes, dtype == NGPT_CKPT_Q8 ? NGPT_Q8_BLOCK : NGPT_Q4_BLOCK, &bytes))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s has an impossible "
                                  "shape", name, r->src);
    }
    uint64_t off = get_u64(e + 88), nbytes = get_u64(e + 96);
    if (nbytes != bytes)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s holds %llu bytes but its "
                              "shape needs %zu", name, r->src, (unsigned long long)nbytes, bytes);
    if (off % 64 != 0 || off < r->header_bytes || off > data_end || nbytes > data_end - off)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s lies outside the data "
                              "area", name, r->src);
    for (uint32_t j = 0; j < i; j++)
        if (!strncmp((const char *)tensor_entry(r, j), name, NGPT_NAME_MAX))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s appears twice in %s", name,
                                  r->src);
    return NGPT_OK;
}

static ngpt_status checksum_fail(const ngpt_ckpt_reader *r)
{
    return ngpt_fail(NGPT_ERR_CHECKSUM, "%s is corrupted: its checksum does not match its "
                     "contents", r->src);
}

static bool checksum_matches(const unsigned char *p, size_t size)
{
    return (uint64_t)XXH3_64bits(p, size - 8) == get_u64(p + size - 8);
}

/* Validates the container of data[0..size) for a reader whose src is set;
 * the checksum now, or (hash_later) when a check fails or at
 * ngpt_ckpt_hash_pass, which the caller then owes. */
static ngpt_status verify(ngpt_ckpt_reader *r, const unsigned char *p, size_t size, bool hash_later)
{
    if (size < 8 || memcmp(p, NGPT_CKPT_MAGIC, 8) != 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not an ngpt checkpoint (its first "
                              "bytes are not NGPTCKPT)", r->src);
    if (size < NGPT_CKPT_HEADER + 8)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: %zu bytes, shorter than "
                              "the header", r->src, size);
    uint32_t version = get_u32(p + 8);
    if (version < NGPT_CKPT_VERSION || version > NGPT_CKPT_VERSION_BYTES)
        return ngpt_fail(NGPT_ERR_VERSION, "%s has format version %u but this build "
                              "reads versions %d and %d; use a matching ngpt", r->src, version,
                              NGPT_CKPT_VERSION, NGPT_CKPT_VERSION_BYTES);
    uint64_t file_bytes = get_u64(p + 16);
    if (file_bytes != size)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated or padded: its header "
                              "says %llu bytes but there are %zu", r->src,
                              (unsigned long long)file_bytes, size);
    if (!hash_later && !checksum_matches(p, size)) return checksum_fail(r);
    r->hash_pending = hash_later;
    r->data = p;
    r->size = size;
    r->version = version;
    r->model_block = p + NGPT_CKPT_MODEL_BLOCK;
    r->header_bytes = get_u32(p + 12);
    r->n_tensors = get_u32(p + 24);
    r->n_meta = get_u32(p + 28);
    for (int i = NGPT_CKPT_MODEL_BLOCK + NGPT_CKPT_MODEL_BYTES; i < NGPT_CKPT_HEADER; i++)
        if (p[i])
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s sets reserved header byte %d; it "
                                  "was written by a newer or broken writer", r->src, i);
    size_t tables = NGPT_CKPT_HEADER, part;
    if (!ngpt_mul_ok(r->n_tensors, NGPT_CKPT_TENSOR_ENTRY, &part) || !ngpt_add_ok(tables, part, &tables) ||
        !ngpt_mul_ok(r->n_meta, NGPT_CKPT_META_ENTRY, &part) || !ngpt_add_ok(tables, part, &tables) ||
        r->header_bytes % 64 != 0 || tables > r->header_bytes || r->header_bytes > size - 8)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the tensor and metadata tables of %s do "
                              "not fit in its header", r->src);
    ngpt_status st = NGPT_OK;
    for (uint32_t i = 0; !st && i < r->n_tensors; i++) st = check_tensor_entry(r, i, size - 8);
    for (uint32_t i = 0; !st && i < r->n_meta; i++) {
        const unsigned char *e = meta_entry(r, i);
        if (!name_ok(e, NGPT_CKPT_META_KEY) || get_u32(e + 48) > NGPT_META_I64)
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "metadata entry %u of %s is malformed",
                                i, r->src);
    }
    return st;
}

ngpt_status ngpt_ckpt_settle(ngpt_ckpt_reader *r, ngpt_status st)
{
    if (!st || !r->hash_pending) return st;
    r->hash_pending = false;
    return checksum_matches(r->data, r->size) ? st : checksum_fail(r);
}

ngpt_status ngpt_ckpt_hash_pass(ngpt_ckpt_reader *r, ngpt_ckpt_chunk_fn visit, void *user)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    const size_t n = r->size - 8;
    for (size_t at = 0; at < n;) {
        const size_t len = n - at < NGPT_CKPT_HASH_CHUNK ? n - at : NGPT_CKPT_HASH_CHUNK;
        XXH3_64bits_update(&state, r->data + at, len);
        at += len;
        if (visit) visit(user, at);
    }
    r->hash_pending = false;
    return (uint64_t)XXH3_64bits_digest(&state) == get_u64(r->data + n) ? NGPT_OK
                                                                        : checksum_fail(r);
}

static ngpt_status open_mem(ngpt_ckpt_reader *r, const void *data, size_t size, bool hash_later)
{
    memset(r, 0, sizeof *r);
    r->src = "the checkpoint in memory";
    ngpt_status st = ngpt_ckpt_settle(r, verify(r, data, size, hash_later));
    if (st) ngpt_ckpt_close(r);
    return st;
}

ngpt_status ngpt_ckpt_open_mem(ngpt_ckpt_reader *r, const void *data, size_t size)
{
    return open_mem(r, data, size, false);
}

/* The fallback where a file cannot be mapped (some file systems, devices):
 * its size bytes read into r->heap. */
static ngpt_status read_whole(ngpt_ckpt_reader *r, int fd, const char *path, size_t size)
{
    r->heap = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (!r->heap)
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot map %s and cannot allocate %zu bytes to "
                         "read it", path, size);
    ngpt_huge_pages_advise(r->heap, size);
    for (size_t at = 0; at < size;) {
        const ssize_t n = read(fd, (unsigned char *)r->heap + at, size - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : 0;
            free(r->heap);
            r->heap = NULL;
            return ngpt_fail(NGPT_ERR_IO, "cannot read %s: %s", path,
                             e ? strerror(e) : "it ended early");
        }
        at += (size_t)n;
    }
    return NGPT_OK;
}

static ngpt_status open_file(ngpt_ckpt_reader *r, const char *path, bool hash_later)
{
    memset(r, 0, sizeof *r);
    r->src = path;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return ngpt_fail(NGPT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {     /* e.g. EOVERFLOW: a file over 2 GiB on a 32-bit build */
        int e = errno;
        close(fd);
        return ngpt_fail(NGPT_ERR_IO, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return ngpt_fail(NGPT_ERR_IO, "%s is not a regular file", path);
    }
    if (sb.st_size < NGPT_CKPT_HEADER + 8 || (uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is %s (%lld bytes)", path,
                              sb.st_size < NGPT_CKPT_HEADER + 8 ? "too short to be a checkpoint"
                                                                 : "too large for this machine",
                              (long long)sb.st_size);
    }
    size_t size = (size_t)sb.st_size;
    /* A mapping, not a heap copy: loading allocates nothing. */
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const void *data = map;
    if (map == MAP_FAILED) {
        ngpt_status st = read_whole(r, fd, path, size);
        close(fd);
        if (st) return st;
        data = r->heap;
    } else {
        close(fd);
        r->map = map;
        r->map_size = size;
        ngpt_huge_pages_advise(map, size);      /* before verify reads it: huge folios */
    }
    ngpt_status st = ngpt_ckpt_settle(r, verify(r, data, size, hash_later));
    if (st) ngpt_ckpt_close(r);
    return st;
}

ngpt_status ngpt_ckpt_open_file(ngpt_ckpt_reader *r, const char *path)
{
    return open_file(r, path, false);
}

ngpt_status ngpt_ckpt_open_unhashed(ngpt_ckpt_reader *r, const char *path, const void *data,
                                    size_t size)
{
    return path ? open_file(r, path, true) : open_mem(r, data, size, true);
}

void ngpt_ckpt_close(ngpt_ckpt_reader *r)
{
    if (r->map) munmap(r->map, r->map_size);
    free(r->heap);
    memset(r, 0, sizeof *r);
}

uint32_t ngpt_ckpt_tensor_dtype(const ngpt_ckpt_reader *r, uint32_t i)
{
    return get_u32(tensor_entry(r, i) + 64);
}

int32_t ngpt_ckpt_tensor_dim(const ngpt_ckpt_reader *r, uint32_t i, int d)
{
    return (int32_t)get_u32(tensor_entry(r, i) + 72 + 4 * d);
}

const unsigned char *ngpt_ckpt_tensor_data(const ngpt_ckpt_reader *r, uint32_t i, size_t *bytes)
{
    const unsigned char *e = tensor_entry(r, i);
    *bytes = (size_t)get_u64(e + 96);
    return r->data + get_u64(e + 88);
}

ngpt_status ngpt_ckpt_read_tensor(const ngpt_ckpt_reader *r, const char *name, int32_t ndim,
                                  const int32_t *shape, float *dst)
{
    int64_t at = ngpt_ckpt_find_tensor(r, name);
    if (at < 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s is missing in %s", name, r->src);
    const uint32_t dtype = ngpt_ckpt_tensor_dtype(r, (uint32_t)at);
    if (!ngpt_ckpt_tensor_shape_is(r, (uint32_t)at, ndim, shape) ||
        (dtype != NGPT_CKPT_F32 && dtype != NGPT_CKPT_F32_PACKED))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s has an unexpected shape "
                              "or dtype", name, r->src);
    const unsigned char *e = tensor_entry(r, (uint32_t)at);
    if (dtype == NGPT_CKPT_F32_PACKED)  /* 2-D (check_tensor_entry) */
        ngpt_f32_panels_unpack(dst, r->data + get_u64(e + 88), shape[0], shape[1]);
    else
        memcpy(dst, r->data + get_u64(e + 88), (size_t)get_u64(e + 96));
    return NGPT_OK;
}

bool ngpt_ckpt_find_meta(const ngpt_ckpt_reader *r, const char *key, ngpt_ckpt_meta *out)
{
    for (uint32_t i = 0; i < r->n_meta; i++) {
        const unsigned char *e = meta_entry(r, i);
        if (!strncmp((const char *)e, key, NGPT_CKPT_META_KEY)) {
            out->key = (const char *)e;
            out->type = get_u32(e + 48);
            memcpy(&out->value, e + 56, 8);
            return true;
        }
    }
    return false;
}
