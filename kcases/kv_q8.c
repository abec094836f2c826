/* kv_q8.c — the cases of the 8-bit KV cache's kernels, attn_scores_q8 and
 * attn_wsum_q8. Shape: n dim heads kind rows — `rows` causal queries, the
 * first seeing n cached positions (n + rows - 1 in all), or with kind +
 * K_SHARED rows that all see n (the kernels' step 0), of `heads`
 * key/value heads of dim values (a row of the cache is heads compact head
 * rows, ngpt_q8_head_bytes(dim) each; the kernels read head 1, or 0 when
 * there is one), quantized by the reference quantizer in the setup.
 * Kinds:
 *   K_PLAIN   uniform values in [-1, 1), probabilities in [0, 1);
 *   K_WILD    groups of every size: huge, tiny (below the scale floor: a
 *             zero group), all zero, at the floor;
 *   K_TINY    probabilities whose products with the scales are subnormal
 *             (p * d below 2^-126: ARMv7's NEON flushes them) and the band
 *             product (kcase.h) starting each output's chain;
 *   K_EXTREME every value +-1, so every q is +-127: the largest integer sums.
 * Byte buffers sit in float slots (whole floats, so every byte is compared). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant_cases.h"

enum { G = NGPT_Q8_GROUP, K_TINY = 2, K_SHARED = 4 };

static void tests(kc_shapes *out)
{
    static const int ns[] = {1, 2, 3, 5, 8, 17, 40}, dims[] = {1, 7, 16, 31, 32, 33, 64, 65, 100, 128};
    for (int in = 0; in < 7; in++)
        for (int id = 0; id < 10; id++)
            for (int kind = 0; kind < 2 * K_SHARED; kind++)
                kc_add_shape(out, ns[in], dims[id], 1 + (in + id + kind) % 3, kind,
                             (in + 2 * id + kind) % 4 ? 1 + (in + id) % 6 : 16 + id % 2);
}

/* One decode step's head at 256 and 2048 cached positions, SmolLM2's (D 64,
 * 3 key/value heads) and the default model's (D 64, 4 heads); the 7 heads
 * of a Qwen2.5-0.5B key/value head (2 of them) at 256; a prefill's tile of
 * 16 queries at 256. */
static void bench(kc_shapes *out)
{
    kc_add_shape(out, 256, 64, 4, K_PLAIN, 1);
    kc_add_shape(out, 2048, 64, 3, K_PLAIN, 1);
    kc_add_shape(out, 256, 64, 2, K_PLAIN + K_SHARED, 7);
    kc_add_shape(out, 256, 64, 4, K_PLAIN, 16);
}

/* The kind of values, and the kernels' step (0: shared keys) */
static int kind_of(const kc_state *st) { return kc_int(st, 3) % K_SHARED; }
static int step_of(const kc_state *st) { return kc_int(st, 3) < K_SHARED; }

static ptrdiff_t stride_of(const kc_state *st)
{
    return (ptrdiff_t)kc_int(st, 2) * (ptrdiff_t)ngpt_q8_head_bytes(kc_int(st, 1));
}

static ptrdiff_t head_of(const kc_state *st)
{
    return kc_int(st, 2) > 1 ? (ptrdiff_t)ngpt_q8_head_bytes(kc_int(st, 1)) : 0;
}

/* rows of dim floats of the kind, row r at x + r*dim */
static void values(float *x, int rows, int dim, int kind)
{
    for (int r = 0; r < rows; r++)
        for (int d = 0; d < dim; d++) {
            float *v = x + (size_t)r * dim + d;
            if (kind == K_EXTREME) *v = (r + d / G) % 3 == 2 ? (d % 2 ? -1.0f : 1.0f)
                                                              : ((r + d / G) % 3 ? -1.0f : 1.0f);
            if (kind != K_WILD) continue;
            switch ((r * 5 + d / G) % 5) {
            case 0: *v *= 1e30f; break;
            case 1: *v *= 1e-14f; break;
            case 2: *v = 0.0f; break;
            case 3: *v = d % G ? *v * 126.0f * NGPT_Q8_MIN_SCALE : 127.0f * NGPT_Q8_MIN_SCALE; break;
            default: break;
            }
        }
}

/* Slot `slot` holds rows quantized heads to a row (every head from the same
 * kind of values), stride_of apart. */
static int8_t *quantized(kc_state *st, int slot, int rows, int kind)
{
    const int dim = kc_int(st, 1), heads = kc_int(st, 2);
    float *x = malloc((size_t)rows * heads * dim * sizeof(float) + 4);
    if (!x) abort();
    for (size_t i = 0; i < (size_t)rows * heads * dim; i++)
        x[i] = (float)((i * 2654435761u) % 2001u) / 1000.0f - 1.0f;
    values(x, rows * heads, dim, kind);
    int8_t *q = bytes_slot(st, slot, (size_t)rows * (size_t)stride_of(st));
    for (int r = 0; r < rows; r++)
        ngpt_f32_quantize_q8_ref(q + r * stride_of(st), (ptrdiff_t)ngpt_q8_head_bytes(dim),
                                 x + (size_t)r * heads * dim, dim, heads, dim);
    free(x);
    return q;
}

/* Positions the last query sees. */
static int keys_of(const kc_state *st) { return kc_int(st, 0) + kc_int(st, 4) - 1; }

/* ---- attn_scores_q8: the queries (rows head rows), the keys, the scores
 * (rows rows of n + rows + 2: the guard past each row's last is compared) */

enum { SQ, SK, SS };

/* Products of a call: the rows' positions */
static double seen(const kc_state *st)
{
    const int rows = kc_int(st, 4);
    return rows * (kc_int(st, 0) + step_of(st) * (rows - 1) / 2.0);
}

static void scores_setup(kc_state *st)
{
    const int dim = kc_int(st, 1), kind = kind_of(st);
    const int rows = kc_int(st, 4), keys = keys_of(st);
    quantized(st, SQ, rows, kind == K_TINY ? K_PLAIN : kind);
    quantized(st, SK, keys, kind == K_TINY ? K_WILD : kind);
    kc_rand(st, SS, (size_t)rows * (size_t)(keys + 3), 1.0f);
    st->flops = 2.0 * seen(st) * dim;
    st->bytes = (double)keys * (double)ngpt_q8_head_bytes(dim) + 4.0 * seen(st);
}

static void scores_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_scores_q8(st->buf[SS], keys_of(st) + 3, (const int8_t *)(void *)st->buf[SQ] + head_of(st),
                      stride_of(st), kc_int(st, 4),
                      (const int8_t *)(void *)st->buf[SK] + head_of(st), stride_of(st),
                      kc_int(st, 0), step_of(st), kc_int(st, 1), 0.125f);
}

const kc_case kc_attn_scores_q8 = {"n dim heads kind rows", tests, bench, scores_setup, scores_run, NULL};

/* ---- attn_wsum_q8: the probabilities (rows rows of n + rows - 1), the
 * values, the outputs (rows rows of dim + 3) */

enum { WP, WV, WO };

static void wsum_setup(kc_state *st)
{
    const int dim = kc_int(st, 1), kind = kind_of(st);
    const int rows = kc_int(st, 4), keys = keys_of(st);
    float *p = kc_rand(st, WP, (size_t)rows * (size_t)keys, 1.0f);
    for (int j = 0; j < rows * keys; j++) p[j] = fabsf(p[j]);
    int8_t *v = quantized(st, WV, keys, kind == K_TINY ? K_PLAIN : kind);
    if (kind == K_TINY) {
        /* p * d subnormal for every other position; the band product first */
        for (int j = 1; j < rows * keys; j += 2) p[j] *= 0x1p-120f;
        for (int r = 0; r < rows; r++) p[r * keys] = KC_BAND_A;
        const float band = KC_BAND_B;
        for (int g = 0; g < ngpt_q8_groups(dim); g++)
            memcpy(v + head_of(st) + (size_t)ngpt_q8_groups(dim) * G + 4 * (size_t)g, &band, 4);
        for (int d = 0; d < dim; d++) v[head_of(st) + d] = (int8_t)(d % 2 ? 1 : -1);
    }
    kc_rand(st, WO, (size_t)rows * (size_t)(dim + 3), 1.0f);
    st->flops = 2.0 * seen(st) * dim;
    st->bytes = (double)keys * (double)ngpt_q8_head_bytes(dim) + 4.0 * seen(st);
}

static void wsum_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_wsum_q8(st->buf[WO], kc_int(st, 1) + 3, st->buf[WP], keys_of(st), kc_int(st, 4),
                    (const int8_t *)(void *)st->buf[WV] + head_of(st), stride_of(st), kc_int(st, 0),
                    step_of(st), kc_int(st, 1));
}

const kc_case kc_attn_wsum_q8 = {"n dim heads kind rows", tests, bench, wsum_setup, wsum_run, NULL};
