/* weights.c — the Linear weights of an inference context, held once
 * (weights.h): packing and unpacking f32 weights in place, reading and
 * hashing the parameters whatever their layout, quantizing 8-bit and 4-bit
 * ones. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <string.h>

#include "runtime/pool.h"
#include "runtime/weights.h"

enum { NR = NGPT_GEMM_NR };

static bool packs(const ngpt_context *ctx)
{
    return ctx->shape.mode == NGPT_MODE_INFER && ctx->cfg.weights == NGPT_WEIGHTS_F32;
}

/* The Linears: 0 is the lm_head (tied: tok_emb), then 4 per layer. */
static int linear_count(const ngpt_config *cfg) { return 1 + NGPT_LINEAR_PER_LAYER * cfg->n_layers; }

/* Linear i: its W's offset in the parameters and its (n, k). */
static size_t linear_of(const ngpt_config *cfg, const ngpt_layout *lay, int i, int *n, int *k)
{
    const int layer = i ? (i - 1) / NGPT_LINEAR_PER_LAYER : 0;
    const ngpt_linear which = i ? (ngpt_linear)((i - 1) % NGPT_LINEAR_PER_LAYER)
                                : NGPT_LINEAR_LM_HEAD;
    ngpt_linear_dims(cfg, which, n, k);
    return ngpt_linear_weight(lay, layer, which);
}

static size_t linear_at(const ngpt_context *ctx, int i, int *n, int *k)
{
    return linear_of(&ctx->cfg, &ctx->lay, i, n, k);
}

/* Packs W (n, k)'s full panels in place (the pack_w kernel), through tmp
 * (16 k floats). */
static void pack_panels(const ngpt_kernels *kern, float *w, int n, int k, float *tmp)
{
    const size_t panel = (size_t)NR * (size_t)k;
    for (int p = 0; p < n / NR; p++) {
        float *blk = w + (size_t)p * panel;
        memcpy(tmp, blk, panel * sizeof(float));
        kern->pack_w(blk, tmp, NR, k, k);
    }
}

int ngpt_weights_linear_index(const ngpt_config *cfg, const ngpt_layout *lay, size_t offset)
{
    if (cfg->weights != NGPT_WEIGHTS_F32) return -1;
    for (int i = 0; i < linear_count(cfg); i++) {
        int n, k;
        if (linear_of(cfg, lay, i, &n, &k) == offset) return i;
    }
    return -1;
}

bool ngpt_weights_packs(const ngpt_context *ctx) { return packs(ctx) && !ctx->run.params_exposed; }

void ngpt_weights_copy_packed(const ngpt_kernels *kern, const ngpt_config *cfg,
                              const ngpt_layout *lay, float *params, size_t offset,
                              const float *src, size_t count)
{
    for (int i = 0; i < linear_count(cfg); i++) {
        int n, k;
        if (linear_of(cfg, lay, i, &n, &k) != offset) continue;
        const size_t panel = (size_t)NR * (size_t)k, full = (size_t)(n / NR) * panel;
        for (size_t at = 0; at < full; at += panel)
            kern->pack_w(params + offset + at, src + at, NR, k, k);
        memcpy(params + offset + full, src + full, (count - full) * sizeof(float));
        return;
    }
    memcpy(params + offset, src, count * sizeof(float));
}

typedef struct convert_job {
    ngpt_context *ctx;
    bool pack;
} convert_job;

/* Task i: every full panel of Linear i, through the thread's panel scratch:
 * pack (rows -> panel, the pack_w kernel) or unpack (panel -> rows). */
static void convert_linear(void *arg, int i, int thread)
{
    const convert_job *j = arg;
    ngpt_context *ctx = j->ctx;
    int n, k;
    float *w = ctx->plan.params + linear_at(ctx, i, &n, &k);
    float *tmp = ctx->plan.threads.panel + (size_t)thread * ctx->plan.threads.panel_stride;
    if (j->pack) {
        pack_panels(ctx->k, w, n, k, tmp);
        return;
    }
    const size_t panel = (size_t)NR * (size_t)k;
    for (int p = 0; p < n / NR; p++) {
        float *blk = w + (size_t)p * panel;
        memcpy(tmp, blk, panel * sizeof(float));
        for (int jj = 0; jj < NR; jj++)
            for (int kk = 0; kk < k; kk++) blk[(size_t)jj * k + kk] = tmp[(size_t)kk * NR + jj];
    }
}

static void convert(ngpt_context *ctx, bool pack)
{
    convert_job j = {ctx, pack};
    ngpt_pool_run(ctx->plan.threads.pool, convert_linear, &j, linear_count(&ctx->cfg));
    ctx->run.weights_packed = pack;
}

void ngpt_weights_pack(ngpt_context *ctx)
{
    if (packs(ctx) && !ctx->run.weights_packed && !ctx->run.params_exposed) convert(ctx, true);
}

void ngpt_weights_settle(ngpt_context *ctx)
{
    ctx->run.params_exposed = false;
    ngpt_weights_pack(ctx);
}

void ngpt_weights_unpack(ngpt_context *ctx)
{
    if (ctx->run.weights_packed) convert(ctx, false);
}

/* ngpt_weights_read of parameters P of cfg (layout lay), packed or not. */
static void read_of(const ngpt_config *cfg, const ngpt_layout *lay, const float *P, bool packed,
                    size_t first, float *dst, size_t count)
{
    memcpy(dst, P + first, count * sizeof(float));
    if (!packed) return;
    const size_t end = first + count;
    for (int l = 0; l < linear_count(cfg); l++) {
        int n, k;
        const size_t off = linear_of(cfg, lay, l, &n, &k);
        const size_t lo = off > first ? off : first;
        const size_t packed_end = off + (size_t)(n - n % NR) * (size_t)k;
        const size_t hi = packed_end < end ? packed_end : end;
        for (size_t i = lo; i < hi;) {     /* runs along one row of W */
            const size_t e = i - off, row = e / (size_t)k, kk = e % (size_t)k;
            const size_t run = (size_t)k - kk < hi - i ? (size_t)k - kk : hi - i;
            const float *src = P + off + (row / NR) * NR * (size_t)k + row % NR;
            for (size_t t = 0; t < run; t++) dst[i - first + t] = src[(kk + t) * NR];
            i += run;
        }
    }
}

void ngpt_weights_read(const ngpt_context *ctx, size_t first, float *dst, size_t count)
{
    read_of(&ctx->cfg, &ctx->lay, ctx->plan.params, ctx->run.weights_packed, first, dst, count);
}

uint64_t ngpt_weights_checksum_of(const ngpt_config *cfg, const float *params, bool packed,
                                  const int8_t *q8_w, const int8_t *const *q8_linear)
{
    enum { CHUNK = 1024 };
    ngpt_layout lay;
    ngpt_layout_compute(cfg, &lay);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    float buf[CHUNK];
    for (size_t at = 0; at < lay.total; at += CHUNK) {
        const size_t n = lay.total - at < CHUNK ? lay.total - at : CHUNK;
        read_of(cfg, &lay, params, packed, at, buf, n);
        XXH3_64bits_update(&st, buf, n * sizeof(float));
    }
    if (q8_w) {
        size_t bytes = 0;
        ngpt_linear_q8_bytes(cfg, &bytes);
        XXH3_64bits_update(&st, q8_w, bytes);
    } else if (q8_linear) {    /* a model's: the same bytes, Linear by Linear */
        for (int i = 0; i < linear_count(cfg); i++) {
            size_t bytes;
            ngpt_linear_q8_span(cfg, i, &bytes);
            XXH3_64bits_update(&st, q8_linear[i], bytes);
        }
    }
    return (uint64_t)XXH3_64bits_digest(&st);
}

uint64_t ngpt_weights_checksum(const ngpt_context *ctx)
{
    return ngpt_weights_checksum_of(&ctx->cfg, ctx->plan.params, ctx->run.weights_packed,
                                    ctx->plan.q8_w, ctx->q8_linear);
}

void ngpt_weights_quantize(ngpt_context *ctx, ngpt_dtype dtype, size_t offset, int n, int k,
                           int j0, const float *w, int rows)
{
    if (dtype == NGPT_DTYPE_Q4) {   /* the rule and the packing in one kernel */
        uint8_t *base = (uint8_t *)ctx->plan.q8_w + offset;
        for (int r = 0; r < rows; r += NGPT_Q4_NR) {
            const int j = j0 + r, nr = n - j < NGPT_Q4_NR ? n - j : NGPT_Q4_NR;
            ctx->k->pack_q4((uint8_t *)ngpt_q4_panel(base, k, j), w + (size_t)r * (size_t)k, k, nr, k);
        }
        return;
    }
    /* rows of k values: the scratch holds NR of them for any Linear's k */
    const ptrdiff_t rs = (ptrdiff_t)ngpt_q8_row_bytes(k);
    int8_t *base = ctx->plan.q8_w + offset;
    for (int r = 0; r < rows; r += NGPT_Q8_NR) {
        const int j = j0 + r, nr = n - j < NGPT_Q8_NR ? n - j : NGPT_Q8_NR;
        ctx->k->quantize_q8(ctx->plan.q8_x, rs, w + (size_t)r * (size_t)k, k, nr, k);
        ctx->k->pack_q8((int8_t *)ngpt_q8_panel(base, k, j), ctx->plan.q8_x, rs, nr, k);
    }
}

size_t ngpt_linear_q8_span(const ngpt_config *cfg, int i, size_t *bytes)
{
    const int layer = i ? (i - 1) / NGPT_LINEAR_PER_LAYER : 0;
    const ngpt_linear which = i ? (ngpt_linear)((i - 1) % NGPT_LINEAR_PER_LAYER)
                                : NGPT_LINEAR_LM_HEAD;
    const size_t at = ngpt_linear_q8_offset(cfg, layer, which);
    size_t end = 0;
    if (i + 1 < linear_count(cfg)) {
        const int nl = i / NGPT_LINEAR_PER_LAYER;      /* Linear i + 1's layer */
        end = ngpt_linear_q8_offset(cfg, nl, (ngpt_linear)(i % NGPT_LINEAR_PER_LAYER));
    } else {
        ngpt_linear_q8_bytes(cfg, &end);
    }
    *bytes = end - at;
    return at;
}

const int8_t *ngpt_weights_q8_at(const ngpt_context *ctx, size_t offset)
{
    if (!ctx->q8_linear) return ctx->plan.q8_w + offset;
    for (int i = 0; i < linear_count(&ctx->cfg); i++) {
        size_t bytes;
        if (ngpt_linear_q8_span(&ctx->cfg, i, &bytes) == offset) return ctx->q8_linear[i];
    }
    return NULL;    /* not a tensor's offset: the callers pass ngpt_tensor_info's */
}
