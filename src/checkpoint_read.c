/* checkpoint_read.c — the .ngpt reader: validates a whole file before any of
 * it is trusted (docs/FORMAT.md, "Validation on load"), then ngpt_checkpoint_load. */
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

#include "checkpoint.h"

static uint32_t get_u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static ngpt_status config_decode(const unsigned char *h, ngpt_config *c)
{
    int32_t ints[6];
    memcpy(ints, h + 32, sizeof ints);
    c->vocab_size = ints[0], c->context_len = ints[1], c->d_model = ints[2];
    c->n_layers = ints[3], c->n_heads = ints[4], c->d_ff = ints[5];
    memcpy(&c->dropout, h + 56, 4);
    memcpy(&c->rope_theta, h + 60, 4);
    for (int i = 64; i < 67; i++)
        if (h[i] > 1)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: config flag byte %d is %u, not 0/1",
                             i, h[i]);
    c->qkv_bias = h[64], c->tie_lm_head = h[65], c->final_norm = h[66];
    c->norm = (ngpt_norm_placement)h[67];
    c->pos = (ngpt_pos_encoding)h[68];
    ngpt_status st = ngpt_config_validate(c);
    if (st)
        return ngpt_fail(st == NGPT_ERR_UNSUPPORTED ? st : NGPT_ERR_BAD_FORMAT,
                         "checkpoint: stored config is invalid: %s", ngpt_last_error());
    return NGPT_OK;
}

/* A config value for a message: integers exactly, floats with the digits
 * that tell them apart (%g, else %.9g). */
static void format_value(char out[32], double v, bool is_float)
{
    if (!is_float) {
        snprintf(out, 32, "%.0f", v);
        return;
    }
    snprintf(out, 32, "%g", v);
    if (strtof(out, NULL) != (float)v) snprintf(out, 32, "%.9g", v);
}

ngpt_status ngpt_config_compare(const ngpt_config *want, const ngpt_config *got)
{
    const struct { const char *name; double a, b; bool is_float; } f[] = {
        {"V", want->vocab_size, got->vocab_size, false},
        {"T", want->context_len, got->context_len, false},
        {"C", want->d_model, got->d_model, false},
        {"L", want->n_layers, got->n_layers, false},
        {"H", want->n_heads, got->n_heads, false},
        {"d_ff", want->d_ff, got->d_ff, false},
        {"dropout", want->dropout, got->dropout, true},
        {"rope_theta", want->rope_theta, got->rope_theta, true},
        {"qkv_bias", want->qkv_bias, got->qkv_bias, false},
        {"tie_lm_head", want->tie_lm_head, got->tie_lm_head, false},
        {"final_norm", want->final_norm, got->final_norm, false},
        {"norm", want->norm, got->norm, false},
        {"pos", want->pos, got->pos, false},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].a != f[i].b) {
            char in_ckpt[32], in_ctx[32];
            format_value(in_ckpt, f[i].b, f[i].is_float);
            format_value(in_ctx, f[i].a, f[i].is_float);
            return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH,
                             "checkpoint config differs from the context's: %s is %s in the "
                             "checkpoint but %s in the context", f[i].name, in_ckpt, in_ctx);
        }
    return NGPT_OK;
}

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

/* Index of tensor `name`, or -1. */
static int64_t find_tensor(const ngpt_ckpt_reader *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_tensors; i++)
        if (!strncmp((const char *)tensor_entry(r, i), name, NGPT_NAME_MAX)) return i;
    return -1;
}

/* Checks entry i's own fields: name, dtype, ndim, shape, data range. */
static ngpt_status check_tensor_entry(const ngpt_ckpt_reader *r, uint32_t i, size_t data_end)
{
    const unsigned char *e = tensor_entry(r, i);
    if (!name_ok(e, NGPT_NAME_MAX))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %u has a malformed name", i);
    const char *name = (const char *)e;
    uint32_t dtype = get_u32(e + 64), ndim = get_u32(e + 68);
    if (dtype != 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s has unknown dtype %u", name, dtype);
    if (ndim < 1 || ndim > 4)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s has ndim %u (1..4)", name, ndim);
    size_t bytes = sizeof(float);
    for (uint32_t d = 0; d < 4; d++) {
        uint32_t dim = get_u32(e + 72 + 4 * d);
        if (d >= ndim) {
            if (dim != 0)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s: unused dim %u is %u",
                                 name, d, dim);
        } else if (dim > INT32_MAX || !ngpt_mul_ok(bytes, dim, &bytes)) {
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s has an impossible shape", name);
        }
    }
    uint64_t off = get_u64(e + 88), nbytes = get_u64(e + 96);
    if (nbytes != bytes)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s holds %llu bytes, its shape "
                         "needs %zu", name, (unsigned long long)nbytes, bytes);
    if (off % 64 != 0 || off < r->header_bytes || off > data_end || nbytes > data_end - off)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s lies outside the data area",
                         name);
    for (uint32_t j = 0; j < i; j++)
        if (!strncmp((const char *)tensor_entry(r, j), name, NGPT_NAME_MAX))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s appears twice", name);
    return NGPT_OK;
}

static bool entry_shape_is(const unsigned char *e, int32_t ndim, const int32_t *shape)
{
    if (get_u32(e + 68) != (uint32_t)ndim) return false;
    for (int32_t d = 0; d < ndim; d++)
        if (get_u32(e + 72 + 4 * d) != (uint32_t)shape[d]) return false;
    return true;
}

/* The model tensors are exactly those the config implies; other names must
 * be optim.m.<model tensor> / optim.v.<model tensor> with the same shape. */
static ngpt_status check_tensor_set(const ngpt_ckpt_reader *r)
{
    ngpt_layout lay;
    ngpt_layout_compute(&r->cfg, &lay);
    int32_t n_model = ngpt_layout_tensor_count(&r->cfg);
    char name[NGPT_NAME_MAX];
    ngpt_tensor_info info;
    for (int32_t i = 0; i < n_model; i++) {
        ngpt_layout_tensor(&r->cfg, &lay, i, name, &info);
        int64_t at = find_tensor(r, name);
        if (at < 0)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s is missing", name);
        if (!entry_shape_is(tensor_entry(r, (uint32_t)at), info.ndim, info.shape))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s does not have the shape "
                             "(%d%s%.0d) the config implies", name, (int)info.shape[0],
                             info.ndim > 1 ? "," : "", info.ndim > 1 ? (int)info.shape[1] : 0);
    }
    for (uint32_t i = 0; i < r->n_tensors; i++) {
        const char *tname = (const char *)tensor_entry(r, i);
        const char *base = tname;
        if (!strncmp(tname, "optim.m.", 8) || !strncmp(tname, "optim.v.", 8)) base = tname + 8;
        bool known = false;
        for (int32_t j = 0; j < n_model && !known; j++) {
            ngpt_layout_tensor(&r->cfg, &lay, j, name, &info);
            if (!strcmp(base, name)) {
                known = true;
                if (base != tname && !entry_shape_is(tensor_entry(r, i), info.ndim, info.shape))
                    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s is not shaped "
                                     "like %s", tname, name);
            }
        }
        if (!known)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: unknown tensor %s", tname);
    }
    return NGPT_OK;
}

ngpt_status ngpt_ckpt_open_mem(ngpt_ckpt_reader *r, const void *data, size_t size)
{
    if (!r || !data) return ngpt_fail(NGPT_ERR_NULL_ARG, "checkpoint: NULL argument");
    memset(r, 0, sizeof *r);
    const unsigned char *p = data;
    if (size < NGPT_CKPT_HEADER + 8 || memcmp(p, NGPT_CKPT_MAGIC, 8) != 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, size < 8 || memcmp(p, NGPT_CKPT_MAGIC, 8)
                         ? "checkpoint: not an ngpt checkpoint (bad magic)"
                         : "checkpoint: truncated header (%zu bytes)", size);
    uint32_t version = get_u32(p + 8);
    if (version != NGPT_CKPT_VERSION)
        return ngpt_fail(NGPT_ERR_VERSION, "checkpoint: format version %u, this build reads "
                         "version %d", version, NGPT_CKPT_VERSION);
    uint64_t file_bytes = get_u64(p + 16);
    if (file_bytes != size)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: the header says %llu bytes but there "
                         "are %zu (truncated or padded file)", (unsigned long long)file_bytes, size);
    uint64_t want = get_u64(p + size - 8);
    if ((uint64_t)XXH3_64bits(p, size - 8) != want)
        return ngpt_fail(NGPT_ERR_CHECKSUM, "checkpoint: checksum mismatch: the file is corrupted");
    r->data = p;
    r->size = size;
    r->header_bytes = get_u32(p + 12);
    r->n_tensors = get_u32(p + 24);
    r->n_meta = get_u32(p + 28);
    for (int i = 69; i < NGPT_CKPT_HEADER; i++)
        if (p[i]) return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: reserved header byte %d is set", i);
    size_t tables = NGPT_CKPT_HEADER, part;
    if (!ngpt_mul_ok(r->n_tensors, NGPT_CKPT_TENSOR_ENTRY, &part) || !ngpt_add_ok(tables, part, &tables) ||
        !ngpt_mul_ok(r->n_meta, NGPT_CKPT_META_ENTRY, &part) || !ngpt_add_ok(tables, part, &tables) ||
        r->header_bytes % 64 != 0 || tables > r->header_bytes || r->header_bytes > size - 8)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: the tensor and metadata tables do not "
                         "fit in the header");
    ngpt_status st = config_decode(p, &r->cfg);
    for (uint32_t i = 0; !st && i < r->n_tensors; i++) st = check_tensor_entry(r, i, size - 8);
    for (uint32_t i = 0; !st && i < r->n_meta; i++) {
        const unsigned char *e = meta_entry(r, i);
        if (!name_ok(e, NGPT_CKPT_META_KEY) || get_u32(e + 48) > NGPT_META_I64)
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: metadata entry %u is malformed", i);
    }
    if (!st) st = check_tensor_set(r);
    if (st) memset(r, 0, sizeof *r);
    return st;
}

ngpt_status ngpt_ckpt_open_file(ngpt_ckpt_reader *r, const char *path)
{
    if (!r || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "checkpoint: NULL argument");
    memset(r, 0, sizeof *r);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ngpt_fail(NGPT_ERR_IO, "checkpoint: cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {     /* e.g. EOVERFLOW: a file over 2 GiB on a 32-bit build */
        int e = errno;
        close(fd);
        return ngpt_fail(NGPT_ERR_IO, "checkpoint: cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return ngpt_fail(NGPT_ERR_IO, "checkpoint: %s is not a regular file", path);
    }
    if (sb.st_size < NGPT_CKPT_HEADER + 8 || (uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: %s is %s (%lld bytes)", path,
                         sb.st_size < NGPT_CKPT_HEADER + 8 ? "too short to be a checkpoint"
                                                            : "too large for this machine",
                         (long long)sb.st_size);
    }
    size_t size = (size_t)sb.st_size;
    /* A mapping, not a heap copy: loading allocates nothing. */
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return ngpt_fail(NGPT_ERR_IO, "checkpoint: cannot map %s: %s", path, strerror(errno));
    ngpt_status st = ngpt_ckpt_open_mem(r, map, size);
    if (st) {
        munmap(map, size);
        char msg[512];
        snprintf(msg, sizeof msg, "%s", ngpt_last_error());
        return ngpt_fail(st, "%s: %s", path, msg);
    }
    r->map = map;
    r->map_size = size;
    return NGPT_OK;
}

void ngpt_ckpt_close(ngpt_ckpt_reader *r)
{
    if (r && r->map) munmap(r->map, r->map_size);
    if (r) memset(r, 0, sizeof *r);
}

bool ngpt_ckpt_has_tensor(const ngpt_ckpt_reader *r, const char *name)
{
    return find_tensor(r, name) >= 0;
}

ngpt_status ngpt_ckpt_read_tensor(const ngpt_ckpt_reader *r, const char *name, int32_t ndim,
                                  const int32_t *shape, float *dst)
{
    int64_t at = find_tensor(r, name);
    if (at < 0) return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s is missing", name);
    const unsigned char *e = tensor_entry(r, (uint32_t)at);
    if (!entry_shape_is(e, ndim, shape))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "checkpoint: tensor %s has an unexpected shape", name);
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

/* --------------------------------------------------------- model loading */

ngpt_status ngpt_checkpoint_config_mem(const void *data, size_t size, ngpt_config *cfg)
{
    if (!data || !cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "checkpoint_read_config: NULL argument");
    ngpt_ckpt_reader r;
    ngpt_status st = ngpt_ckpt_open_mem(&r, data, size);
    if (!st) *cfg = r.cfg;
    return st;
}

ngpt_status ngpt_checkpoint_config(const char *path, ngpt_config *cfg)
{
    if (!path || !cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "checkpoint_read_config: NULL argument");
    ngpt_ckpt_reader r;
    ngpt_status st = ngpt_ckpt_open_file(&r, path);
    if (!st) *cfg = r.cfg;
    ngpt_ckpt_close(&r);
    return st;
}

/* Copies every model tensor; the reader is verified, so this cannot fail
 * halfway and leave the parameters half-loaded. */
static ngpt_status load_from(ngpt_context *ctx, const ngpt_ckpt_reader *r)
{
    ngpt_status st = ngpt_config_compare(&ctx->cfg, &r->cfg);
    for (int32_t i = 0; !st && i < ctx->n_tensors; i++) {
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        st = ngpt_ckpt_read_tensor(r, t->name, t->ndim, t->shape, ctx->plan.params + t->offset);
    }
    if (!st) ngpt_run_params_changed(ctx);
    return st;
}

ngpt_status ngpt_checkpoint_load_mem(ngpt_context *ctx, const void *data, size_t size)
{
    if (!ctx || !data) return ngpt_fail(NGPT_ERR_NULL_ARG, "load_mem: NULL argument");
    ngpt_ckpt_reader r;
    ngpt_status st = ngpt_ckpt_open_mem(&r, data, size);
    return st ? st : load_from(ctx, &r);
}

ngpt_status ngpt_checkpoint_load(ngpt_context *ctx, const char *path)
{
    if (!ctx || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "load: NULL argument");
    ngpt_ckpt_reader r;
    ngpt_status st = ngpt_ckpt_open_file(&r, path);
    if (!st) st = load_from(ctx, &r);
    ngpt_ckpt_close(&r);
    return st;
}
