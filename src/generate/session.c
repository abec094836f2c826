/* session.c — ngpt_context_cache_save / ngpt_context_cache_load (and their _mem twins) and
 * ngpt_context_cache_truncate: one KV slot's tokens and key/value rows as a sealed
 * session file (docs/FORMAT.md, "Session files"). Version 2 (what saves write):
 *
 *   0   "NGPTSESS"   8 bytes
 *   8   version      u32 (2)
 *   12  n            u32, the tokens the slot holds (0..T)
 *   16  params       u64, the parameters' checksum of the model that saved it,
 *                    mixed with the adapters' (and their scales') when it applied any
 *   24  tokenizer    u64, the attached tokenizer's checksum (0: none)
 *   32  config       56 bytes, the checkpoint header's model block's first part
 *   88  config tail  u64: 0 when the rest of the model block is zero (every
 *                    model without qk_norm and rope_scaling), else XXH3-64 of
 *                    that rest (its 24 bytes; 40 when a Gemma 3 switch sets
 *                    one of the last 16) with the low bit set
 *   96  kv_k, kv_v   u8 each: how the cache stores keys and values (ngpt_kv_type)
 *   98  held         u32: 0, or (sliding windows) the first position whose keys
 *                    the local layers hold: their rows before it are zeros
 *                    (a ring's; model/kv.h), which a truncate before it feeds again
 *   102 reserved     2 zero bytes
 *   104 tokens       n x i32
 *       rows         per layer: n key rows then n value rows, each as the
 *                    cache stores it (model/kv.h): W x f32 (W = KV heads x
 *                    head_dim), or KV compact 8-bit head rows (q8)
 *   end checksum     u64, XXH3-64 of every byte before it
 *
 * Version 1 (older ngpt) has no kv bytes (its tokens at 96) and float32
 * rows: it loads into a context whose cache is float32 for keys and values.
 * A load verifies the whole image (size, checksum, model, config, KV types,
 * tokenizer, token ids) before it touches the slot: a refused file changes
 * nothing. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/fpmode.h"
#include "io/checkpoint.h"
#include "model/kv.h"
#include "model/model.h"
#include "runtime/weights.h"
#include "tokenizer/tokenizer.h"

#define SESS_MAGIC "NGPTSESS"
#define SESS_VERSION 2u
#define SESS_HEADER_V1 96
#define SESS_HEADER 104
#define SESS_CONFIG 32
#define SESS_HELD 98        /* u32: the first position local layers hold (0: all) */

/* The model block as a session file holds it: its first 56 bytes, and
 * the tail's u64 (above). */
static void session_config(const ngpt_context *ctx, unsigned char out[NGPT_CKPT_MODEL_BYTES_V1 + 8])
{
    unsigned char b[NGPT_CKPT_MODEL_BYTES];
    ngpt_ckpt_config_encode(&ctx->cfg, b);
    memcpy(out, b, NGPT_CKPT_MODEL_BYTES_V1);
    const unsigned char *tail = b + NGPT_CKPT_MODEL_BYTES_V1;
    /* the bytes Gemma 3's switches took join the hash only when set, so a
     * session of an earlier model keeps its bytes */
    size_t n = NGPT_CKPT_MODEL_BYTES_V2 - NGPT_CKPT_MODEL_BYTES_V1;
    for (size_t i = NGPT_CKPT_MODEL_BYTES_V2; i < NGPT_CKPT_MODEL_BYTES; i++)
        if (b[i]) n = NGPT_CKPT_MODEL_BYTES - NGPT_CKPT_MODEL_BYTES_V1;
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++)
        if (tail[i]) h = (uint64_t)XXH3_64bits(tail, n) | 1u;
    memcpy(out + NGPT_CKPT_MODEL_BYTES_V1, &h, 8);
}

static uint64_t tokenizer_sum(const ngpt_context *ctx)
{
    return ctx->tokenizer ? ctx->tokenizer->checksum : 0;
}

/* Bytes of the key/value rows of n tokens. */
static size_t rows_bytes(const ngpt_context *ctx, int32_t n)
{
    return (size_t)ctx->cfg.n_layers * (size_t)n * (ngpt_kv_key_row(ctx) + ngpt_kv_value_row(ctx));
}

/* Bytes of a file of n tokens with a header of `header` bytes. */
static size_t file_bytes(const ngpt_context *ctx, int32_t n, size_t header)
{
    return header + (size_t)n * sizeof(int32_t) + rows_bytes(ctx, n) + 8;
}

static const char *kv_name(int type) { return type == NGPT_KV_Q8 ? "q8" : "f32"; }

static ngpt_status check_ctx(const ngpt_context *ctx, int32_t slot, const char *fn)
{
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL context", fn);
    if (!ngpt_kv_planned(ctx))
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "%s: the context was planned for training; "
                         "sessions need an NGPT_MODE_INFER context", fn);
    if (slot < 0 || slot >= ctx->shape.batch)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: slot %d is not in 0..%d (the planned batch)", fn,
                         (int)slot, (int)ctx->shape.batch - 1);
    return NGPT_OK;
}

/* ------------------------------------------------------------------ saving */

/* Where the image goes: a file descriptor or a buffer; hashed on the way. */
typedef struct sink {
    int fd;                     /* -1: buf */
    unsigned char *buf;
    size_t at;
    XXH3_state_t hash;
    const char *path;
} sink;

static ngpt_status put(sink *s, const void *data, size_t n, bool hash)
{
    if (hash) XXH3_64bits_update(&s->hash, data, n);
    if (s->fd < 0) {
        memcpy(s->buf + s->at, data, n);
        s->at += n;
        return NGPT_OK;
    }
    const unsigned char *p = data;
    while (n > 0) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return ngpt_fail(NGPT_ERR_IO, "writing %s failed: %s", s->path,
                             w < 0 ? strerror(errno) : "no progress (is the disk full?)");
        p += w, n -= (size_t)w, s->at += (size_t)w;
    }
    return NGPT_OK;
}

/* What the cache was made with: the parameters' checksum, mixed with the
 * adapters' when the context applies any. */
static uint64_t model_sum(const ngpt_context *ctx)
{
    const uint64_t sums[2] = {ngpt_weights_checksum(ctx), ngpt_lora_checksum(ctx)};
    return sums[1] ? ngpt_checksum_bytes(sums, sizeof sums) : sums[0];
}

/* A ring's rows in position order 0..n-1: zeros for the positions it no
 * longer holds (before held), which nothing reads. */
static ngpt_status ring_rows(const ngpt_context *ctx, sink *s, const void *block, size_t bytes,
                             int l, int32_t n, uint32_t held)
{
    static const unsigned char zeros[4096];
    ngpt_status st = NGPT_OK;
    for (int32_t p = 0; p < n && !st; p++) {
        if ((uint32_t)p >= held) {
            st = put(s, ngpt_kv_row_at(block, bytes, ngpt_kv_ring(ctx, l), p), bytes, true);
            continue;
        }
        for (size_t done = 0; done < bytes && !st; done += sizeof zeros)
            st = put(s, zeros, bytes - done < sizeof zeros ? bytes - done : sizeof zeros, true);
    }
    return st;
}

static ngpt_status emit(const ngpt_context *ctx, int32_t slot, sink *s)
{
    const int32_t n = ngpt_kv_len(ctx, slot);
    const size_t krows = (size_t)n * ngpt_kv_key_row(ctx), vrows = (size_t)n * ngpt_kv_value_row(ctx);
    unsigned char h[SESS_HEADER] = {0};
    const uint32_t version = SESS_VERSION, un = (uint32_t)n;
    const uint64_t params = model_sum(ctx), tk = tokenizer_sum(ctx);
    memcpy(h, SESS_MAGIC, 8);
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &un, 4);
    memcpy(h + 16, &params, 8);
    memcpy(h + 24, &tk, 8);
    session_config(ctx, h + SESS_CONFIG);
    h[SESS_HEADER_V1] = (unsigned char)ctx->shape.kv_k;
    h[SESS_HEADER_V1 + 1] = (unsigned char)ctx->shape.kv_v;
    const uint32_t held = (uint32_t)ngpt_kv_held(ctx, slot);
    memcpy(h + SESS_HELD, &held, 4);
    XXH3_64bits_reset(&s->hash);
    ngpt_status st = put(s, h, sizeof h, true);
    if (!st) st = put(s, ngpt_kv_tokens(ctx, slot), (size_t)n * sizeof(int32_t), true);
    for (int l = 0; l < ctx->cfg.n_layers && !st; l++) {
        if (!ngpt_kv_ring(ctx, l)) {
            st = put(s, ngpt_kv_keys(ctx, l, slot), krows, true);
            if (!st) st = put(s, ngpt_kv_values(ctx, l, slot), vrows, true);
            continue;
        }
        st = ring_rows(ctx, s, ngpt_kv_keys(ctx, l, slot), ngpt_kv_key_row(ctx), l, n, held);
        if (!st) st = ring_rows(ctx, s, ngpt_kv_values(ctx, l, slot), ngpt_kv_value_row(ctx), l, n,
                                held);
    }
    const uint64_t sum = (uint64_t)XXH3_64bits_digest(&s->hash);
    return st ? st : put(s, &sum, 8, false);
}

ngpt_status ngpt_context_cache_save(const ngpt_context *ctx, int32_t slot, const char *path)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = check_ctx(ctx, slot, "ngpt_context_cache_save");
    if (st) return st;
    if (!path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_cache_save: NULL path");
    char tmp[PATH_MAX];
    sink s = {.fd = -1, .path = path};
    if ((st = ngpt_atomic_file_open(path, tmp, &s.fd)))
        return ngpt_prefixed("ngpt_context_cache_save", st);
    st = emit(ctx, slot, &s);
    return ngpt_prefixed("ngpt_context_cache_save", ngpt_atomic_file_finish(s.fd, tmp, path, st));
}

ngpt_status ngpt_context_cache_save_mem(const ngpt_context *ctx, int32_t slot, void *buf, size_t cap,
                                size_t *size)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = check_ctx(ctx, slot, "ngpt_context_cache_save_mem");
    if (st) return st;
    if (!size) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_cache_save_mem: NULL size");
    const size_t need = file_bytes(ctx, ngpt_kv_len(ctx, slot), SESS_HEADER);
    *size = need;
    if (!buf) return NGPT_OK;
    if (cap < need)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_cache_save_mem: the buffer holds %zu bytes, "
                         "the session needs %zu (pass buf = NULL to ask)", cap, need);
    sink s = {.fd = -1, .buf = buf};
    return emit(ctx, slot, &s);
}

/* ----------------------------------------------------------------- loading */

/* Verifies a whole image against the context; on success the slot may take
 * it. Leaves a bare sentence naming src. */
static ngpt_status verify(const ngpt_context *ctx, const unsigned char *d, size_t size,
                          const char *src, int32_t *n_out, size_t *header_out, int32_t *held_out)
{
    if (size < SESS_HEADER_V1 + 8 || memcmp(d, SESS_MAGIC, 8) != 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not an ngpt session file%s", src,
                         size < SESS_HEADER_V1 + 8 ? " (too short)" : " (no NGPTSESS magic)");
    uint32_t version, n;
    uint64_t params, tk, sum;
    memcpy(&version, d + 8, 4);
    memcpy(&n, d + 12, 4);
    memcpy(&params, d + 16, 8);
    memcpy(&tk, d + 24, 8);
    if (version != 1 && version != SESS_VERSION)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is a session file of version %u; this "
                         "library reads versions 1 and %u", src, version, SESS_VERSION);
    const size_t header = version == 1 ? SESS_HEADER_V1 : SESS_HEADER;
    if (size < header + 8)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not an ngpt session file (too short)", src);
    memcpy(&sum, d + size - 8, 8);
    if ((uint64_t)XXH3_64bits(d, size - 8) != sum)
        return ngpt_fail(NGPT_ERR_CHECKSUM, "%s is damaged or truncated: its contents do not "
                         "match its checksum", src);
    unsigned char block[NGPT_CKPT_MODEL_BYTES_V1 + 8];
    session_config(ctx, block);
    uint64_t tail;
    memcpy(&tail, block + NGPT_CKPT_MODEL_BYTES_V1, 8);
    for (size_t i = SESS_CONFIG + NGPT_CKPT_MODEL_BYTES_V1; !tail && i < SESS_HEADER_V1; i++)
        if (d[i])       /* (a model without the tail's switches: reserved, as before them) */
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: reserved header byte %zu is %u, not 0 (a "
                             "newer format?)", src, i, d[i]);
    if (memcmp(block, d + SESS_CONFIG, sizeof block) != 0)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "%s was saved by a model of another config",
                         src);
    for (size_t i = SESS_HEADER_V1 + 2; i < header; i++)
        if (d[i] && !(i >= SESS_HELD && i < SESS_HELD + 4 && ctx->cfg.sliding_window))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: reserved header byte %zu is %u, not 0 (a "
                             "newer format?)", src, i, d[i]);
    const int kk = version == 1 ? NGPT_KV_F32 : d[SESS_HEADER_V1];
    const int kv = version == 1 ? NGPT_KV_F32 : d[SESS_HEADER_V1 + 1];
    if (kk != ctx->shape.kv_k || kv != ctx->shape.kv_v)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "%s holds a KV cache of keys %s and values %s; "
                         "this context's stores keys %s and values %s (resume with the same "
                         "--kv)", src, kk <= NGPT_KV_Q8 ? kv_name(kk) : "(unknown type)",
                         kv <= NGPT_KV_Q8 ? kv_name(kv) : "(unknown type)",
                         kv_name(ctx->shape.kv_k), kv_name(ctx->shape.kv_v));
    const uint64_t mine = model_sum(ctx);
    if (params != mine)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "%s was saved by another model, or under "
                         "other adapters (checksum %016llx, this context's %016llx)", src,
                         (unsigned long long)params, (unsigned long long)mine);
    if (tk && tokenizer_sum(ctx) && tk != tokenizer_sum(ctx))
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "%s was saved with another tokenizer", src);
    const int32_t T = ctx->cfg.context_len, V = ctx->cfg.vocab_size;
    if (n > (uint32_t)T || size != file_bytes(ctx, (int32_t)n, header))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s holds %u tokens in %zu bytes; this model's "
                         "context is T=%d", src, n, size, (int)T);
    uint32_t held = 0;
    if (header > SESS_HELD) memcpy(&held, d + SESS_HELD, 4);
    if (held > n)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: its local layers hold keys from position %u "
                         "of its %u", src, held, n);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t;
        memcpy(&t, d + header + 4 * (size_t)i, 4);
        if (t < 0 || t >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "%s: token %u is %d, not a token id in 0..%d",
                             src, i, (int)t, (int)V - 1);
    }
    *n_out = (int32_t)n;
    *header_out = header;
    *held_out = (int32_t)held;
    return NGPT_OK;
}

static ngpt_status restore(ngpt_context *ctx, int32_t slot, const unsigned char *d, size_t size,
                           const char *src)
{
    int32_t n = 0, held = 0;
    size_t header = 0;
    ngpt_status st = verify(ctx, d, size, src, &n, &header, &held);
    if (st) return st;
    ngpt_kv_restore(ctx, slot, n, d + header, d + header + (size_t)n * sizeof(int32_t), held);
    return NGPT_OK;
}

ngpt_status ngpt_context_cache_load_mem(ngpt_context *ctx, int32_t slot, const void *data, size_t size)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = check_ctx(ctx, slot, "ngpt_context_cache_load_mem");
    if (st) return st;
    if (!data) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_cache_load_mem: NULL data");
    return ngpt_prefixed("ngpt_context_cache_load_mem", restore(ctx, slot, data, size, "the buffer"));
}

ngpt_status ngpt_context_cache_load(ngpt_context *ctx, int32_t slot, const char *path)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = check_ctx(ctx, slot, "ngpt_context_cache_load");
    if (st) return st;
    if (!path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_cache_load: NULL path");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ngpt_fail(NGPT_ERR_IO, "ngpt_context_cache_load: cannot open %s: %s", path,
                         strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ngpt_fail(NGPT_ERR_IO, "ngpt_context_cache_load: %s is not a regular file", path);
    }
    const size_t size = (size_t)sb.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (map == MAP_FAILED)
        return ngpt_fail(NGPT_ERR_IO, "ngpt_context_cache_load: cannot map %s: %s", path,
                         strerror(errno));
    static const unsigned char none[1];
    st = restore(ctx, slot, map ? map : none, size, path);
    if (map) munmap(map, size);
    return ngpt_prefixed("ngpt_context_cache_load", st);
}

ngpt_status ngpt_context_cache_truncate(ngpt_context *ctx, int32_t slot, int32_t n)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = check_ctx(ctx, slot, "ngpt_context_cache_truncate");
    if (st) return st;
    const int32_t len = ngpt_kv_len(ctx, slot);
    if (n < 0 || n > len)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_cache_truncate: n = %d is not in 0..%d (the "
                         "tokens slot %d holds)", (int)n, (int)len, (int)slot);
    ngpt_model_truncate(ctx, slot, n);
    return NGPT_OK;
}
