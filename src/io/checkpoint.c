/* checkpoint.c — the model side of model files (checkpoint.h), over the
 * container (ckpt_file.h): the config in the header's model block, the
 * tensor set a config implies (8-bit and 4-bit tensors validated whole), a
 * context's model saved (ngpt_context_save; its bytes:
 * ngpt_config_file_size) and a model's tensors copied into a context that
 * owns its weights (for io/context_init.c). Files are opened as an
 * ngpt_model (model.c). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/progress.h"
#include "io/adapter.h"
#include "io/checkpoint.h"
#include "io/tmpl_tensor.h"
#include "io/tok_tensor.h"
#include "io/train_ckpt.h"
#include "runtime/config.h"
#include "runtime/f32_panels.h"
#include "runtime/weights.h"
#include "tokenizer/tokenizer.h"

/* ----------------------------------------------------- the tensor set */

/* The bits of the canonical NaN scale of q8.h's rule. */
enum { Q8_NAN = 0x7fc00000 };

/* Whether the 16 scales at the start of a block are all valid (+0, the
 * canonical NaN, or finite and at least NGPT_Q8_MIN_SCALE; in magnitude
 * when either_sign): the whole check of a block that lies inside the
 * tensor, besides its values. */
static bool scales_ok(const unsigned char *blk, bool either_sign)
{
    /* on the bits, which order as the values do for positive floats: an
     * integer loop the compiler vectorizes (an open checks every block) */
    const float floor_scale = NGPT_Q8_MIN_SCALE, largest = FLT_MAX;
    uint32_t lo, hi, bad = 0;
    memcpy(&lo, &floor_scale, 4);
    memcpy(&hi, &largest, 4);
    for (int jj = 0; jj < NGPT_Q8_NR; jj++) {
        uint32_t bits;
        memcpy(&bits, blk + 4 * jj, 4);
        const uint32_t mag = either_sign ? bits & 0x7fffffffu : bits;
        /* lo <= mag <= hi, as one unsigned compare */
        bad |= (uint32_t)(bits != 0 && bits != Q8_NAN && mag - lo > hi - lo);
    }
    return bad == 0;
}

/* Whether any of n bytes is 0x80 (-128): a loop the compiler vectorizes. */
static bool has_0x80(const unsigned char *p, size_t n)
{
    unsigned char any = 0;
    for (size_t i = 0; i < n; i++) any |= p[i] == 0x80;
    return any;
}

/* Blocks b0..b1-1 of an 8-bit tensor (n, k) at data hold what quantize_q8
 * and pack_q8 make: values in -127..127 (never -128, which the SIMD
 * products rely on), scales +0, the canonical NaN or finite and at least
 * NGPT_Q8_MIN_SCALE (so no float of a product is subnormal), zero past n
 * and k. NULL, or what is wrong. */
static const char *q8_blocks_why(const unsigned char *data, int n, int k, size_t b0, size_t b1)
{
    const int groups = ngpt_q8_groups(k);
    const char *why = NULL;
    for (size_t b = b0; b < b1 && !why; b++) {
        const unsigned char *blk = data + b * NGPT_Q8_BLOCK;
        const int p = (int)(b / (size_t)groups), g = (int)(b % (size_t)groups);
        /* a block inside the tensor (every row and input real) has nothing
         * past its rows or inputs: its scales and no -128 are all there is
         * to check, fast; any other block, or a damaged one, value by value */
        const bool inside = ((int64_t)p + 1) * NGPT_Q8_NR <= n && ((int64_t)g + 1) * NGPT_Q8_GROUP <= k;
        if (inside && scales_ok(blk, false) &&
            !has_0x80(blk + NGPT_Q8_NR * 4, NGPT_Q8_BLOCK - NGPT_Q8_NR * 4))
            continue;
        for (int jj = 0; jj < NGPT_Q8_NR && !why; jj++) {
            const bool row = p * NGPT_Q8_NR + jj < n;
            uint32_t bits;
            float d;
            memcpy(&bits, blk + 4 * jj, 4);
            memcpy(&d, &bits, 4);
            if (bits != 0 && bits != Q8_NAN && !(d >= NGPT_Q8_MIN_SCALE && d <= FLT_MAX))
                why = "a scale that is negative, subnormal, infinite or below the floor";
            else if (!row && bits != 0)
                why = "a scale past its rows";
            for (int t = 0; t < NGPT_Q8_GROUP && !why; t++) {
                const int8_t q = (int8_t)blk[NGPT_Q8_NR * 4 + (t / 4) * 64 + jj * 4 + t % 4];
                if (q == -128) why = "the value -128";
                else if (q && (!row || g * NGPT_Q8_GROUP + t >= k)) why = "a value past its rows or inputs";
            }
        }
    }
    return why;
}

/* Blocks b0..b1-1 of a 4-bit tensor (n, k) hold what pack_q4 makes: scales
 * +0, the canonical NaN or finite with a magnitude at least
 * NGPT_Q8_MIN_SCALE (either sign: the scale of q4.h's rule has the
 * opposite sign of the group's largest value), zero past n and k. Every
 * nibble is a valid value (-8..7). NULL, or what is wrong. */
static const char *q4_blocks_why(const unsigned char *data, int n, int k, size_t b0, size_t b1)
{
    const int groups = ngpt_q8_groups(k);
    const char *why = NULL;
    for (size_t b = b0; b < b1 && !why; b++) {
        const unsigned char *blk = data + b * NGPT_Q4_BLOCK;
        const int p = (int)(b / (size_t)groups), g = (int)(b % (size_t)groups);
        /* inside the tensor every nibble is a valid value: the scales only */
        const bool inside = ((int64_t)p + 1) * NGPT_Q4_NR <= n && ((int64_t)g + 1) * NGPT_Q4_GROUP <= k;
        if (inside && scales_ok(blk, true)) continue;
        for (int jj = 0; jj < NGPT_Q4_NR && !why; jj++) {
            const bool row = p * NGPT_Q4_NR + jj < n;
            uint32_t bits;
            float d;
            memcpy(&bits, blk + 4 * jj, 4);
            memcpy(&d, &bits, 4);
            if (bits != 0 && bits != Q8_NAN && !(fabsf(d) >= NGPT_Q8_MIN_SCALE && fabsf(d) <= FLT_MAX))
                why = "a scale that is subnormal, infinite or below the floor";
            else if (!row && bits != 0)
                why = "a scale past its rows";
            for (int t = 0; t < NGPT_Q4_GROUP && !why; t++)
                if (ngpt_q4_value(blk + NGPT_Q4_NR * 4, jj, t) && (!row || g * NGPT_Q4_GROUP + t >= k))
                    why = "a value past its rows or inputs";
        }
    }
    return why;
}

/* The quantized values, checked as the checksum pass hashes them: after
 * each chunk, the blocks of every 8-bit and 4-bit tensor that the bytes
 * [0, end) now hold whole; the first damage found stops the checks (the
 * hashing goes on: a corrupted file is reported as such). */
typedef struct value_pass {
    const ngpt_ckpt_reader *r;
    size_t done;                /* bytes [0, done) checked */
    int64_t bad;                /* the damaged tensor's entry, or -1 */
    const char *why;
} value_pass;

/* Blocks of a tensor of block bytes at offset off lying whole in [0, end). */
static size_t blocks_before(size_t off, size_t bytes, size_t block, size_t end)
{
    if (end <= off) return 0;
    const size_t whole = (end - off) / block;
    return whole < bytes / block ? whole : bytes / block;
}

static void check_values_upto(void *user, size_t end)
{
    value_pass *v = user;
    for (uint32_t i = 0; i < v->r->n_tensors && v->bad < 0; i++) {
        const uint32_t dtype = ngpt_ckpt_tensor_dtype(v->r, i);
        if (dtype != NGPT_CKPT_Q8 && dtype != NGPT_CKPT_Q4) continue;
        size_t bytes;
        const unsigned char *data = ngpt_ckpt_tensor_data(v->r, i, &bytes);
        const size_t off = (size_t)(data - v->r->data);
        if (off >= end || off + bytes <= v->done) continue;
        const size_t block = dtype == NGPT_CKPT_Q8 ? NGPT_Q8_BLOCK : NGPT_Q4_BLOCK;
        const size_t b0 = blocks_before(off, bytes, block, v->done);
        const size_t b1 = blocks_before(off, bytes, block, end);
        const int n = ngpt_ckpt_tensor_dim(v->r, i, 0), k = ngpt_ckpt_tensor_dim(v->r, i, 1);
        v->why = dtype == NGPT_CKPT_Q8 ? q8_blocks_why(data, n, k, b0, b1)
                                       : q4_blocks_why(data, n, k, b0, b1);
        if (v->why) v->bad = i;
    }
    /* a block straddling end is checked in the chunk that completes it */
    v->done = end;
}

/* The checksum and every quantized value in one pass over the file. */
static ngpt_status check_values(ngpt_ckpt_reader *r)
{
    value_pass v = {r, 0, -1, NULL};
    bool quantized = false;     /* a float32 file: nothing to visit per chunk */
    for (uint32_t i = 0; i < r->n_tensors && !quantized; i++) {
        const uint32_t dtype = ngpt_ckpt_tensor_dtype(r, i);
        quantized = dtype == NGPT_CKPT_Q8 || dtype == NGPT_CKPT_Q4;
    }
    ngpt_status st = ngpt_ckpt_hash_pass(r, quantized ? check_values_upto : NULL, &v);
    if (st || v.bad < 0) return st;
    const bool q8 = ngpt_ckpt_tensor_dtype(r, (uint32_t)v.bad) == NGPT_CKPT_Q8;
    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s tensor %s of %s holds %s; the file is damaged",
                     q8 ? "8-bit" : "4-bit", ngpt_ckpt_tensor_name(r, (uint32_t)v.bad), r->src,
                     v.why);
}

/* The file's dtype of a tensor of the config. */
static uint32_t ckpt_dtype(ngpt_dtype d)
{
    return d == NGPT_DTYPE_Q8 ? NGPT_CKPT_Q8 : d == NGPT_DTYPE_Q4 ? NGPT_CKPT_Q4 : NGPT_CKPT_F32;
}

static const char *dtype_name(uint32_t d)
{
    return d == NGPT_CKPT_Q8 ? "8-bit" : d == NGPT_CKPT_Q4 ? "4-bit"
         : d == NGPT_CKPT_F32_PACKED ? "packed float32" : "float32";
}

/* The model tensors are exactly those the config implies; other names must
 * be optim.m.<model tensor> / optim.v.<model tensor> with the same shape.
 * The table only: the values (check_values) and the tokenizer come after. */
static ngpt_status check_tensor_set(const ngpt_ckpt_reader *r, const ngpt_config *cfg)
{
    ngpt_layout lay;
    ngpt_layout_compute(cfg, &lay);
    int32_t n_model = ngpt_layout_tensor_count(cfg);
    char name[NGPT_NAME_MAX];
    ngpt_tensor_info info;
    for (int32_t i = 0; i < n_model; i++) {
        ngpt_layout_tensor(cfg, &lay, i, name, &info);
        int64_t at = ngpt_ckpt_find_tensor(r, name);
        if (at < 0)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s is missing in %s", name,
                                  r->src);
        if (!ngpt_ckpt_tensor_shape_is(r, (uint32_t)at, info.ndim, info.shape))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s does not have the "
                                  "shape (%d%s%.0d) its config implies", name, r->src,
                                  (int)info.shape[0], info.ndim > 1 ? "," : "",
                                  info.ndim > 1 ? (int)info.shape[1] : 0);
        const uint32_t want = ckpt_dtype(info.dtype), got = ngpt_ckpt_tensor_dtype(r, (uint32_t)at);
        /* a float32 Linear's W may be stored either way */
        const bool packed_ok = got == NGPT_CKPT_F32_PACKED &&
                               ngpt_weights_linear_index(cfg, &lay, info.offset) >= 0;
        if (got != want && !packed_ok)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s is %s but its config "
                                  "(weights=%s) makes it %s", name, r->src, dtype_name(got),
                                  ngpt_weights_name(cfg->weights), dtype_name(want));
    }
    for (uint32_t i = 0; i < r->n_tensors; i++) {
        const char *tname = ngpt_ckpt_tensor_name(r, i);
        if (!strcmp(tname, NGPT_CKPT_TOKENIZER)) continue;  /* checked once hashed */
        if (!strcmp(tname, NGPT_CKPT_CHAT_TEMPLATE)) continue;
        if (ngpt_ckpt_tensor_dtype(r, i) == NGPT_CKPT_BYTES)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s holds bytes; only the "
                             "tokenizer and the chat template do", tname, r->src);
        const char *base = tname;
        if (!strncmp(tname, "optim.m.", 8) || !strncmp(tname, "optim.v.", 8)) base = tname + 8;
        bool known = false;
        for (int32_t j = 0; j < n_model && !known; j++) {
            ngpt_layout_tensor(cfg, &lay, j, name, &info);
            if (!strcmp(base, name)) {
                known = true;
                if (base != tname && (!ngpt_ckpt_tensor_shape_is(r, i, info.ndim, info.shape) ||
                                      info.dtype != NGPT_DTYPE_F32 ||
                                      ngpt_ckpt_tensor_dtype(r, i) != NGPT_CKPT_F32))
                    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s is not shaped "
                                          "like %s", tname, r->src, name);
            }
        }
        if (!known)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s holds unknown tensor %s", r->src,
                                  tname);
    }
    return NGPT_OK;
}

ngpt_status ngpt_ckpt_open_model(ngpt_ckpt_reader *r, const char *path, const void *data,
                                 size_t size, ngpt_config *cfg)
{
    /* one read of the file: the table first, then the checksum and the
     * quantized values together, then the tokenizer the checksum vouches for */
    ngpt_status st = ngpt_ckpt_open_unhashed(r, path, data, size);
    if (st) return st;
    ngpt_ckpt_meta lora;
    if (ngpt_ckpt_find_meta(r, NGPT_META_LORA_RANK, &lora))
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is a LoRA adapter, not a model: open it with "
                       "ngpt_adapter_open and apply it to its model (ngpt generate --adapter)",
                       r->src);
    if (!st) st = ngpt_ckpt_config_decode(r, cfg);
    if (!st) st = check_tensor_set(r, cfg);
    st = ngpt_ckpt_settle(r, st);
    if (!st) st = check_values(r);
    const int64_t tok = ngpt_ckpt_find_tensor(r, NGPT_CKPT_TOKENIZER);
    if (!st && tok >= 0) st = ngpt_ckpt_tokenizer_check(r, (uint32_t)tok, cfg);
    const int64_t tpl = ngpt_ckpt_find_tensor(r, NGPT_CKPT_CHAT_TEMPLATE);
    if (!st && tpl >= 0) st = ngpt_ckpt_template_check(r, (uint32_t)tpl);
    if (st) ngpt_ckpt_close(r);
    return st;
}

/* ------------------------------------------------------------ saving */

/* Bytes at..at+n-1 of an f32 inference context's parameters as the
 * state_dict lays them out (its Linears may be packed in place). */
static void read_params(const void *src, size_t at, void *dst, size_t n)
{
    ngpt_weights_read(src, at / sizeof(float), dst, n / sizeof(float));
}

/* Bytes at..at+n-1 of a Linear's W packed (dtype 4) from the W (n, k)
 * row-major at src + from (an f32 inference context's parameters before
 * its first pass, or while ngpt_context_params's pointer is out). */
static void read_packing(const void *src, size_t at, void *dst, size_t n)
{
    const ngpt_context *ctx = src;
    const size_t first = at / sizeof(float), count = n / sizeof(float);
    size_t off = 0;
    int32_t rows = 0, k = 0;
    for (int32_t i = 0; i < ctx->n_tensors; i++) {     /* the tensor holding float `first` */
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        if (t->ndim == 2 && t->offset <= first && first < t->offset + t->count)
            off = t->offset, rows = t->shape[0], k = t->shape[1];
    }
    const size_t panel = (size_t)NGPT_GEMM_NR * (size_t)k;
    const size_t full = (size_t)(rows / NGPT_GEMM_NR) * panel;
    float *out = dst;
    for (size_t e = first - off, c = 0; c < count; e++, c++) {
        size_t from = e;    /* past the full panels: the rows as they are */
        if (e < full) {
            const size_t p = e / panel, kk = e % panel / NGPT_GEMM_NR, j = e % NGPT_GEMM_NR;
            from = (p * NGPT_GEMM_NR + j) * (size_t)k + kk;
        }
        out[c] = ctx->plan.params[off + from];
    }
}

void ngpt_ckpt_model_tensor(const ngpt_context *ctx, const float *base, int32_t i,
                            ngpt_ckpt_tensor *out)
{
    const ngpt_tensor_info *info = &ctx->plan.tensors[i];
    ngpt_ckpt_tensor t = {.name = info->name, .ndim = info->ndim, .data = base + info->offset};
    t.shape[0] = info->shape[0];
    t.shape[1] = info->ndim > 1 ? info->shape[1] : 0;
    /* an f32 inference context writes its Linears as it multiplies by them */
    const bool packed = base == ctx->plan.params && ctx->shape.mode == NGPT_MODE_INFER &&
                        ngpt_weights_linear_index(&ctx->cfg, &ctx->lay, info->offset) >= 0;
    if (info->dtype == NGPT_DTYPE_Q8 || info->dtype == NGPT_DTYPE_Q4) {
        t.dtype = ckpt_dtype(info->dtype);
        t.data = ngpt_weights_q8_at(ctx, info->offset);
    } else if (packed) {
        t.dtype = NGPT_CKPT_F32_PACKED;
        if (!ctx->run.weights_packed) {
            t.data = NULL;
            t.read = read_packing, t.src = ctx, t.from = info->offset * sizeof(float);
        }
    } else if (base == ctx->plan.params && ctx->run.weights_packed) {
        t.data = NULL;
        t.read = read_params, t.src = ctx, t.from = info->offset * sizeof(float);
    }
    *out = t;
}

static void model_tensor_fn(void *user, size_t i, ngpt_ckpt_tensor *out)
{
    const ngpt_context *ctx = user;
    if (i >= (size_t)ctx->n_tensors) ngpt_ckpt_bytes_tensor(ctx, i - (size_t)ctx->n_tensors, out);
    else ngpt_ckpt_model_tensor(ctx, ctx->plan.params, (int32_t)i, out);
}

ngpt_status ngpt_context_save(const ngpt_context *ctx, const char *path)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_save: NULL argument");
    if (ctx->lora.training)     /* what it trains: the adapter */
        return ngpt_prefixed("ngpt_context_save", ngpt_adapter_save_training(ctx, path, NULL));
    unsigned char block[NGPT_CKPT_MODEL_BYTES];
    ngpt_ckpt_config_encode(&ctx->cfg, block);
    /* a quantized model records its float32 original's identity, which its
     * adapters carry (io/adapter.c) */
    const bool quantized = ctx->cfg.weights != NGPT_WEIGHTS_F32;
    const ngpt_ckpt_meta id = {NGPT_META_IDENTITY, NGPT_META_U64,
                               {.u = !quantized     ? 0
                                     : ctx->identity ? ctx->identity
                                                     : ngpt_weights_checksum(ctx)}};
    return ngpt_prefixed("ngpt_context_save",
                         ngpt_ckpt_write(path, block, (size_t)ctx->n_tensors +
                                         ngpt_ckpt_bytes_count(ctx), model_tensor_fn,
                                         (void *)ctx, quantized ? &id : NULL, quantized));
}

/* The bytes ngpt_ckpt_write lays out for the model of cfg: the header and
 * tensor table (64-aligned), each tensor 64-aligned, the checksum. */
static ngpt_status file_size(const ngpt_config *cfg, const ngpt_tokenizer *tok, size_t *bytes)
{
    ngpt_status st = ngpt_config_check(cfg);
    if (st) return st;
    if (tok && tok->n_tokens != cfg->vocab_size)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "the tokenizer has %d tokens but the "
                         "model's V is %d", (int)tok->n_tokens, (int)cfg->vocab_size);
    ngpt_layout lay;
    if (!ngpt_layout_compute(cfg, &lay))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the model's size overflows size_t");
    const int32_t n = ngpt_layout_tensor_count(cfg);
    /* a quantized model's one metadata entry: its identity (ngpt_context_save) */
    const size_t n_meta = cfg->weights != NGPT_WEIGHTS_F32;
    size_t total = ngpt_align64(NGPT_CKPT_HEADER + NGPT_CKPT_TENSOR_ENTRY * ((size_t)n + (tok != NULL)) +
                                NGPT_CKPT_META_ENTRY * n_meta);
    bool ok = true;
    for (int32_t i = 0; i < n && ok; i++) {
        char name[NGPT_NAME_MAX];
        ngpt_tensor_info t;
        size_t b;
        ngpt_layout_tensor(cfg, &lay, i, name, &t);
        if (t.dtype == NGPT_DTYPE_Q8) b = ngpt_q8_packed_bytes(t.shape[0], t.shape[1]);
        else if (t.dtype == NGPT_DTYPE_Q4) b = ngpt_q4_packed_bytes(t.shape[0], t.shape[1]);
        else ok = ngpt_mul_ok(t.count, sizeof(float), &b);
        ok = ok && b <= SIZE_MAX - 63 && ngpt_add_ok(total, ngpt_align64(b), &total);
    }
    if (tok) ok = ok && ngpt_add_ok(total, ngpt_align64(tok->image_size), &total);
    if (!ok || !ngpt_add_ok(total, 8, &total))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the file's size overflows size_t");
    *bytes = total;
    return NGPT_OK;
}

ngpt_status ngpt_config_file_size(const ngpt_config *cfg, const ngpt_tokenizer *tok, size_t *bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!cfg || !bytes) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_config_file_size: NULL argument");
    return ngpt_prefixed("ngpt_config_file_size", file_size(cfg, tok, bytes));
}

/* ----------------------------------------------------------- loading */

/* Quantizing a float32 file as it loads reports its weights done so far
 * (NGPT_PROGRESS_QUANTIZE); a cancel is seen between panels. */
typedef struct quantize_progress {
    uint64_t done, total;
    bool cancelled;
} quantize_progress;

/* An 8-bit or 4-bit tensor of the context from the file's: a copy of its
 * bytes (the same dtype: check_tensor_set), or
 * its float32 values quantized 16 rows at a time (through the aligned
 * panel scratch: a buffer in memory may hold them unaligned). */
static void load_q8(ngpt_context *ctx, const ngpt_ckpt_reader *r, const ngpt_tensor_info *t,
                    quantize_progress *q)
{
    const uint32_t at = (uint32_t)ngpt_ckpt_find_tensor(r, t->name);
    size_t bytes;
    const unsigned char *src = ngpt_ckpt_tensor_data(r, at, &bytes);
    const uint32_t dtype = ngpt_ckpt_tensor_dtype(r, at);
    if (dtype != NGPT_CKPT_F32 && dtype != NGPT_CKPT_F32_PACKED) {
        memcpy(ctx->plan.q8_w + t->offset, src, bytes);
        return;
    }
    const int n = t->shape[0], k = t->shape[1];
    for (int j0 = 0; j0 < n && !q->cancelled; j0 += NGPT_Q8_NR) {
        const int nr = n - j0 < NGPT_Q8_NR ? n - j0 : NGPT_Q8_NR;
        if (dtype == NGPT_CKPT_F32_PACKED)     /* the rows of a panel (16: NGPT_GEMM_NR) */
            ngpt_f32_panels_rows(ctx->plan.threads.panel, src, n, k, j0, nr);
        else
            memcpy(ctx->plan.threads.panel, src + (size_t)j0 * k * sizeof(float),
                   (size_t)nr * k * sizeof(float));
        ngpt_weights_quantize(ctx, t->dtype, t->offset, n, k, j0, ctx->plan.threads.panel, nr);
        q->done += (uint64_t)nr * (uint64_t)k;
        q->cancelled = !ngpt_progress_report(NGPT_PROGRESS_QUANTIZE, q->done, q->total);
    }
}

/* The weights of the context's quantized tensors that come from a float32 file. */
static uint64_t quantized_weights(const ngpt_context *ctx, const ngpt_ckpt_reader *r)
{
    uint64_t n = 0;
    for (int32_t i = 0; i < ctx->n_tensors; i++) {
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        if (t->dtype != NGPT_DTYPE_Q8 && t->dtype != NGPT_DTYPE_Q4) continue;
        const uint32_t d = ngpt_ckpt_tensor_dtype(r, (uint32_t)ngpt_ckpt_find_tensor(r, t->name));
        if (d == NGPT_CKPT_F32 || d == NGPT_CKPT_F32_PACKED)    /* quantized as it loads */
            n += (uint64_t)t->shape[0] * (uint64_t)t->shape[1];
    }
    return n;
}

/* Checks the config against the context's and copies every model tensor;
 * the reader is verified, so only a cancel stops it halfway. An 8-bit or
 * 4-bit context also takes the float32 original of its model and
 * quantizes it, reporting progress. */
ngpt_status ngpt_ckpt_load_into(ngpt_context *ctx, const ngpt_ckpt_reader *r,
                                const ngpt_config *file_cfg)
{
    ngpt_config file = *file_cfg;
    if (ctx->cfg.weights != NGPT_WEIGHTS_F32 && file.weights == NGPT_WEIGHTS_F32)
        file.weights = ctx->cfg.weights, file.lm_head_q4 = ctx->cfg.lm_head_q4;   /* quantized as it loads */
    if (ctx->cfg.weights == NGPT_WEIGHTS_Q4 &&
        (file.weights == NGPT_WEIGHTS_Q8 || (ctx->cfg.lm_head_q4 && !file.lm_head_q4)))
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "%s holds 8-bit %s, which do not become "
                         "4-bit (rounding rounded values again loses more than either); "
                         "quantize the float32 original to q4%s", r->src,
                         file.weights == NGPT_WEIGHTS_Q8 ? "weights (weights=q8)"
                                                         : "lm_head weights (weights=q4)",
                         ctx->cfg.lm_head_q4 ? " with lm_head_q4" : "");
    ngpt_status st = ngpt_config_compare(&ctx->cfg, &file);
    quantize_progress q = {0};
    if (!st && ngpt_progress_wanted()) q.total = quantized_weights(ctx, r);
    /* a context that multiplies by packed Linears takes a file's packed
     * ones as they are, when every Linear of the file is packed */
    bool as_is = !st && ngpt_weights_packs(ctx);
    for (int32_t i = 0; as_is && i < ctx->n_tensors; i++) {
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        as_is = ngpt_weights_linear_index(&ctx->cfg, &ctx->lay, t->offset) < 0 ||
                ngpt_ckpt_tensor_dtype(r, (uint32_t)ngpt_ckpt_find_tensor(r, t->name)) ==
                    NGPT_CKPT_F32_PACKED;
    }
    for (int32_t i = 0; !st && i < ctx->n_tensors && !q.cancelled; i++) {
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        if (t->dtype == NGPT_DTYPE_Q8 || t->dtype == NGPT_DTYPE_Q4) {
            load_q8(ctx, r, t, &q);
            continue;
        }
        size_t bytes;
        const unsigned char *data = ngpt_ckpt_tensor_data(
            r, (uint32_t)ngpt_ckpt_find_tensor(r, t->name), &bytes);
        if (as_is) memcpy(ctx->plan.params + t->offset, data, bytes);     /* checked: open */
        else st = ngpt_ckpt_read_tensor(r, t->name, t->ndim, t->shape, ctx->plan.params + t->offset);
    }
    if (q.cancelled) {       /* the caller discards the half-copied context */
        st = ngpt_fail(NGPT_ERR_STOPPED, "cancelled by the progress callback after %llu of %llu "
                       "weights quantized; no context was made",
                       (unsigned long long)q.done, (unsigned long long)q.total);
    }
    if (!st) {
        ngpt_weights_written(ctx);
        ctx->run.weights_packed = as_is;
        ngpt_run_params_changed(ctx);
    }
    return st;
}
