/* ckpt_write.c — the .ngpt container writer (ckpt_file.h, docs/FORMAT.md):
 * an atomic save of a model block, named tensors and metadata. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/progress.h"
#include "io/ckpt_file.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .ngpt format is little-endian; big-endian hosts are not supported"
#endif


ssize_t (*ngpt_ckpt_write_hook)(int fd, const void *buf, size_t n) = write;

/* ---------------------------------------------------------------- helpers */

static void put_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }


/* ----------------------------------------------------------------- writer */

typedef struct sink {
    int fd;
    XXH3_state_t hash;
    uint64_t written;
    const char *path;           /* for messages */
} sink;

static ngpt_status sink_write(sink *s, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    XXH3_64bits_update(&s->hash, buf, n);
    while (n > 0) {
        ssize_t w = ngpt_ckpt_write_hook(s->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return ngpt_fail(NGPT_ERR_IO, "writing %s failed: %s", s->path,
                             w < 0 ? strerror(errno) : "no progress (is the disk full?)");
        p += w, n -= (size_t)w, s->written += (uint64_t)w;
    }
    return NGPT_OK;
}

static ngpt_status sink_zeros(sink *s, size_t n)
{
    static const unsigned char zeros[64];
    ngpt_status st = NGPT_OK;
    while (n > 0 && !st) {
        size_t k = n < sizeof zeros ? n : sizeof zeros;
        st = sink_write(s, zeros, k);
        n -= k;
    }
    return st;
}

static bool tensor_bytes(const ngpt_ckpt_tensor *t, size_t *bytes)
{
    size_t n = t->dtype == NGPT_CKPT_BYTES ? 1 : sizeof(float);
    if (t->ndim < 1 || t->ndim > 4) return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 0 || !ngpt_mul_ok(n, (size_t)t->shape[d], &n)) return false;
    if (t->dtype == NGPT_CKPT_Q8 || t->dtype == NGPT_CKPT_Q4) {
        /* 2-D, sizes of a context's (checked at planning) */
        if (t->ndim != 2) return false;
        n = t->dtype == NGPT_CKPT_Q8 ? ngpt_q8_packed_bytes(t->shape[0], t->shape[1])
                                     : ngpt_q4_packed_bytes(t->shape[0], t->shape[1]);
    } else if (t->dtype == NGPT_CKPT_BYTES) {
        if (t->ndim != 1) return false;
    } else if (t->dtype == NGPT_CKPT_F32_PACKED) {
        if (t->ndim != 2) return false;     /* 4nk bytes, as float32 */
    } else if (t->dtype != NGPT_CKPT_F32) {
        return false;
    }
    if (n > SIZE_MAX - 63) return false;    /* ngpt_align64(n) must not wrap */
    *bytes = n;
    return true;
}

/* A tensor's data: its bytes, or read through its read function. */
static ngpt_status write_data(sink *s, const ngpt_ckpt_tensor *t, size_t bytes)
{
    if (t->data) return sink_write(s, t->data, bytes);
    enum { CHUNK = 4096 };
    unsigned char buf[CHUNK];
    ngpt_status st = NGPT_OK;
    for (size_t at = 0; at < bytes && !st; at += CHUNK) {
        const size_t n = bytes - at < CHUNK ? bytes - at : CHUNK;
        t->read(t->src, t->from + at, buf, n);
        st = sink_write(s, buf, n);
    }
    return st;
}

static ngpt_status write_all(sink *s, const unsigned char *model_block, size_t nt,
                             ngpt_ckpt_tensor_fn get, void *user, const ngpt_ckpt_meta *meta,
                             size_t nm)
{
    ngpt_status st;
    ngpt_ckpt_tensor t;
    /* header + tables, checked: on 32-bit 128 * nt wraps from 33.5M tensors
     * (a training checkpoint of an 11M-layer model), and the format stores
     * the header size in 32 bits anyway */
    size_t tables, part;
    if (!ngpt_mul_ok(nt, NGPT_CKPT_TENSOR_ENTRY, &tables) || !ngpt_mul_ok(nm, NGPT_CKPT_META_ENTRY, &part) ||
        !ngpt_add_ok(tables, part, &tables) || !ngpt_add_ok(tables, NGPT_CKPT_HEADER, &tables) ||
        tables > UINT32_MAX - 63)
        return ngpt_fail(NGPT_ERR_OVERFLOW, "%zu tensors are more than the format's header "
                         "can list", nt);
    size_t header = ngpt_align64(tables);
    size_t data_end = header;
    uint32_t version = NGPT_CKPT_VERSION;       /* a byte tensor makes it version 2 */
    for (size_t i = 0; i < nt; i++) {
        size_t b;
        get(user, i, &t);
        if (t.dtype == NGPT_CKPT_BYTES) version = NGPT_CKPT_VERSION_BYTES;
        if (!t.name || !(t.data || t.read) || strlen(t.name) >= NGPT_NAME_MAX)
            return ngpt_fail(NGPT_ERR_BAD_ARG, "tensor %zu has no data or a bad name", i);
        if (!tensor_bytes(&t, &b) || !ngpt_add_ok(data_end, ngpt_align64(b), &data_end))
            return ngpt_fail(NGPT_ERR_OVERFLOW, "tensor %s is too large for this machine",
                             t.name);
    }
    unsigned char h[NGPT_CKPT_HEADER] = {0};
    memcpy(h, NGPT_CKPT_MAGIC, 8);
    put_u32(h + 8, version);
    put_u32(h + 12, (uint32_t)header);
    put_u64(h + 16, (uint64_t)data_end + 8);
    put_u32(h + 24, (uint32_t)nt);
    put_u32(h + 28, (uint32_t)nm);
    memcpy(h + NGPT_CKPT_MODEL_BLOCK, model_block, NGPT_CKPT_MODEL_BYTES);
    if ((st = sink_write(s, h, sizeof h))) return st;

    size_t off = header;
    for (size_t i = 0; i < nt; i++) {
        unsigned char e[NGPT_CKPT_TENSOR_ENTRY] = {0};
        size_t b;
        get(user, i, &t);
        tensor_bytes(&t, &b);
        memcpy(e, t.name, strlen(t.name));
        put_u32(e + 64, t.dtype);
        put_u32(e + 68, (uint32_t)t.ndim);
        for (int d = 0; d < t.ndim; d++) put_u32(e + 72 + 4 * d, (uint32_t)t.shape[d]);
        put_u64(e + 88, off);
        put_u64(e + 96, b);
        if ((st = sink_write(s, e, sizeof e))) return st;
        off += ngpt_align64(b);
    }
    for (size_t i = 0; i < nm; i++) {
        unsigned char e[NGPT_CKPT_META_ENTRY] = {0};
        size_t klen = strlen(meta[i].key);
        if (klen >= NGPT_CKPT_META_KEY || meta[i].type > NGPT_META_I64)
            return ngpt_fail(NGPT_ERR_BAD_ARG, "bad metadata entry \"%s\"", meta[i].key);
        memcpy(e, meta[i].key, klen);
        put_u32(e + 48, meta[i].type);
        memcpy(e + 56, &meta[i].value, 8);
        if ((st = sink_write(s, e, sizeof e))) return st;
    }
    if ((st = sink_zeros(s, header - tables)))
        return st;
    for (size_t i = 0, done = 0; i < nt; i++) {
        size_t b;
        get(user, i, &t);
        tensor_bytes(&t, &b);
        if ((st = write_data(s, &t, b)) || (st = sink_zeros(s, ngpt_align64(b) - b)))
            return st;
        done += ngpt_align64(b);
        if (!ngpt_progress_report(NGPT_PROGRESS_WRITE, done, data_end - header))
            return ngpt_fail(NGPT_ERR_STOPPED, "cancelled by the progress callback while "
                             "writing %s", s->path);
    }
    unsigned char sum[8];
    put_u64(sum, (uint64_t)XXH3_64bits_digest(&s->hash));
    return sink_write(s, sum, 8);
}

ngpt_status ngpt_ckpt_write(const char *path,
                            const unsigned char model_block[NGPT_CKPT_MODEL_BYTES], size_t nt,
                            ngpt_ckpt_tensor_fn get, void *user, const ngpt_ckpt_meta *meta,
                            size_t nm)
{
    char tmp[PATH_MAX];
    int fd;
    ngpt_status st = ngpt_atomic_file_open(path, tmp, &fd);
    if (st) return st;
    sink s = {.fd = fd, .path = path};
    XXH3_64bits_reset(&s.hash);
    st = write_all(&s, model_block, nt, get, user, meta, nm);
    return ngpt_atomic_file_finish(fd, tmp, path, st);
}
