/* kcase.c — the helpers the cases share: reproducible buffers and shape
 * lists (the list of cases itself is kcase_list.c). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcase.h"
#include "base/rng.h"

const int kc_sizes[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 257};
const int kc_nsizes = (int)(sizeof kc_sizes / sizeof kc_sizes[0]);

void kc_push(kc_shapes *out, kc_shape s)
{
    if (out->count == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 64;
        out->at = realloc(out->at, (size_t)out->cap * sizeof *out->at);
        if (!out->at) abort();
    }
    out->at[out->count++] = s;
}

static float *slot_alloc(kc_state *st, int slot, size_t n)
{
    if (slot < 0 || slot >= KC_SLOTS || st->buf[slot]) abort();
    st->buf[slot] = malloc((n ? n : 1) * sizeof(float));
    if (!st->buf[slot]) abort();
    st->len[slot] = n;
    return st->buf[slot];
}

/* Philox words keyed by the shape, one stream step per slot. */
float *kc_rand(kc_state *st, int slot, size_t n, float scale)
{
    const int64_t *v = st->shape.v;
    const uint64_t seed = (uint64_t)v[0] * 0x9E3779B97F4A7C15ull ^ (uint64_t)v[1] * 0xC2B2AE3D27D4EB4Full ^
                          (uint64_t)v[2] * 0x165667B19E3779F9ull ^ (uint64_t)v[3] * 0x27D4EB2F165667C5ull;
    float *x = slot_alloc(st, slot, n);
    uint32_t w[4];
    for (size_t i = 0; i < n; i++) {
        if (i % 4 == 0) ngpt_rng_block(seed, NGPT_STREAM_DATA | 0x77u, (uint64_t)slot, i / 4, w);
        x[i] = (2.0f * ngpt_rng_uniform(w[i % 4]) - 1.0f) * scale;
    }
    return x;
}

float *kc_tiny(kc_state *st, int slot, size_t n, float scale)
{
    float *x = kc_rand(st, slot, n, 1.0f);
    for (size_t i = 0; i < n; i++) x[i] *= i % 4 == 0 ? 0x1p-126f : scale;
    return x;
}

float *kc_zeros(kc_state *st, int slot, size_t n)
{
    float *x = slot_alloc(st, slot, n);
    memset(x, 0, n * sizeof(float));
    return x;
}

void kc_rotations(kc_state *st, int slot, size_t n)
{
    float *c = kc_rand(st, slot, n, 1.0f), *s = kc_rand(st, slot + 1, n, 1.0f);
    for (size_t i = 0; i < n; i++) {
        const float r = sqrtf(c[i] * c[i] + s[i] * s[i]);
        c[i] = r > 0.0f ? c[i] / r : 1.0f;
        s[i] = r > 0.0f ? s[i] / r : 0.0f;
    }
}

void kc_free(kc_state *st)
{
    for (int i = 0; i < KC_SLOTS; i++) free(st->buf[i]), st->buf[i] = NULL;
}

bool kc_same(const kc_state *a, const kc_state *b, int *slot, size_t *index)
{
    for (int s = 0; s < KC_SLOTS; s++)
        for (size_t i = 0; i < b->len[s]; i++)
            if (memcmp(&a->buf[s][i], &b->buf[s][i], sizeof(float)) != 0) {
                *slot = s, *index = i;
                return false;
            }
    return true;
}

void kc_format(char *out, size_t size, const kc_case *c, const kc_shape *s)
{
    const char *d = c->dims;
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < (int)(sizeof s->v / sizeof s->v[0]) && *d && used < size; i++) {
        const int len = (int)strcspn(d, " ");
        const int w = snprintf(out + used, size - used, "%s%.*s=%" PRId64, i ? " " : "", len, d, s->v[i]);
        used += w > 0 ? (size_t)w : 0;
        d += len + (d[len] == ' ');
    }
}
