/* golden.h — golden vectors from PyTorch (tools/golden.py, docs/GOLDEN.md):
 * the bundle reader and the deterministic golden weight fill. Header-only,
 * for tests (which may malloc). Bundle format, little-endian:
 *   "NGPTGOLD", u32 version = 1, u32 n_entries, then per entry
 *   name[64] (NUL-padded), u32 ndim (1..4), u32 shape[4], float32 data[prod(shape)].
 * Files are found as $NGPT_GOLDEN_DIR/<name> or else tests/golden/<name>
 * (make test runs from the repository root). */
#ifndef NGPT_TEST_GOLDEN_H
#define NGPT_TEST_GOLDEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngpt.h"
#include "base/rng.h"

typedef struct golden_entry {
    char name[65];
    int ndim;
    int shape[4];
    size_t count;               /* prod(shape) */
    float *data;                /* points into golden_bundle.blob */
} golden_entry;

typedef struct golden_bundle {
    int n;
    golden_entry *entries;
    unsigned char *blob;
} golden_bundle;

static inline uint32_t golden_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void golden_free(golden_bundle *g)
{
    if (!g) return;
    free(g->entries);
    free(g->blob);
    memset(g, 0, sizeof *g);
}

/* Loads tests/golden/<file> (or $NGPT_GOLDEN_DIR/<file>). 0 on success; on
 * failure prints why to stderr and returns -1. */
static inline int golden_load(golden_bundle *g, const char *file)
{
    memset(g, 0, sizeof *g);
    const char *dir = getenv("NGPT_GOLDEN_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "tests/golden", file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "golden: cannot open %s (run from the repo root or set NGPT_GOLDEN_DIR)\n",
                path);
        return -1;
    }
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < 16 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        fprintf(stderr, "golden: %s: too short\n", path);
        return -1;
    }
    g->blob = malloc((size_t)size);
    size_t got = g->blob ? fread(g->blob, 1, (size_t)size, f) : 0;
    fclose(f);
    if (got != (size_t)size || memcmp(g->blob, "NGPTGOLD", 8) != 0 || golden_le32(g->blob + 8) != 1) {
        fprintf(stderr, "golden: %s: not a version-1 golden bundle\n", path);
        golden_free(g);
        return -1;
    }
    uint32_t n = golden_le32(g->blob + 12);
    g->entries = calloc(n ? n : 1, sizeof *g->entries);
    size_t pos = 16;
    for (uint32_t i = 0; g->entries && i < n; i++) {
        golden_entry *e = &g->entries[i];
        if ((size_t)size - pos < 84) goto bad;
        memcpy(e->name, g->blob + pos, 64);
        e->ndim = (int)golden_le32(g->blob + pos + 64);
        if (e->ndim < 1 || e->ndim > 4) goto bad;
        e->count = 1;
        for (int d = 0; d < 4; d++) {
            e->shape[d] = (int)golden_le32(g->blob + pos + 68 + 4 * d);
            if (d < e->ndim) e->count *= (size_t)e->shape[d];
        }
        pos += 84;
        if (((size_t)size - pos) / 4 < e->count) goto bad;
        e->data = (float *)(g->blob + pos);   /* 84-byte records keep 4-byte alignment */
        pos += 4 * e->count;
        g->n++;
    }
    if (!g->entries || pos != (size_t)size) goto bad;
    return 0;
bad:
    fprintf(stderr, "golden: %s: truncated or inconsistent\n", path);
    golden_free(g);
    return -1;
}

/* The entry called `name`, or NULL (and a message on stderr). */
static inline const golden_entry *golden_find(const golden_bundle *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->entries[i].name, name) == 0) return &g->entries[i];
    fprintf(stderr, "golden: no entry \"%s\"\n", name);
    return NULL;
}

/* Fills every parameter with the golden weights (docs/GOLDEN.md): tensor t,
 * element e: w = ngpt_rng_u32(seed, 0x70000000 | t, 0, e), u = (w>>8)*2^-24,
 * r = 2u - 1, value = base + scale*r in float32, (base, scale) = (1, 0.1) for
 * LayerNorm weights, (0, 0.1) LayerNorm biases, (0, 0.02) other 1-D tensors,
 * (0, 0.035) 2-D tensors. */
static inline ngpt_status golden_fill_weights(ngpt_context *ctx, uint64_t seed)
{
    float *params;
    size_t total;
    ngpt_status st = ngpt_context_params(ctx, &params, &total);
    if (st) return st;
    int32_t n;
    if ((st = ngpt_context_tensor_count(ctx, &n))) return st;
    for (int32_t t = 0; t < n; t++) {
        ngpt_tensor_info info;
        if ((st = ngpt_context_tensor_at(ctx, t, &info))) return st;
        const char *dot = strrchr(info.name, '.');
        size_t stem = (size_t)(dot - info.name);
        int is_ln = stem >= 3 && (strncmp(dot - 3, "ln1", 3) == 0 || strncmp(dot - 3, "ln2", 3) == 0 ||
                                  strncmp(dot - 3, "n_f", 3) == 0);
        float base = 0.0f, scale = 0.035f;
        if (is_ln && strcmp(dot, ".weight") == 0) base = 1.0f, scale = 0.1f;
        else if (is_ln) scale = 0.1f;
        else if (info.ndim == 1) scale = 0.02f;
        float *w = params + info.offset;
        for (size_t e = 0; e < info.count; e += 4) {
            uint32_t block[4];
            ngpt_rng_block(seed, 0x70000000u | (uint32_t)t, 0, e / 4, block);
            for (size_t j = 0; j < 4 && e + j < info.count; j++) {
                float u = (float)(block[j] >> 8) * 0x1p-24f;
                float r = 2.0f * u - 1.0f;
                w[e + j] = base + scale * r;
            }
        }
    }
    return NGPT_OK;
}

#endif
