/* hf_write.c — a Hugging Face state_dict into a .ngpt checkpoint
 * (hf_write.h). The family (hf_gpt2.c, hf_llama.c) names where each
 * tensor of the ngpt model (runtime/layout.c's table for the config) takes
 * its values from: one Hugging Face tensor, maybe transposed, or several
 * stacked by rows (Llama's q|k|v and gate|up).
 *
 * Everything is checked before the output is opened. stream.c then asks
 * for each tensor's floats in order, converted on the fly from the mapped
 * files to float32 (and transposed), and quantizes them when the output's
 * weights are 8-bit or 4-bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/hf_write.h"
#include "import/stream.h"
#include "runtime/config.h"
#include "tokenizer/tokenizer.h"

typedef struct writer writer;

/* One tensor of the output and where its values come from. */
typedef struct entry {
    char name[NGPT_NAME_MAX];
    ngpt_tensor_info info;      /* shape (out, in), dtype F32, Q8 or Q4 */
    const ngpt_st_tensor *src[NGPT_HF_MAX_SOURCES];     /* stacked by rows */
    int nsrc;
    bool transpose;             /* one source, stored (in, out) */
} entry;

struct writer {
    entry *e;
    int32_t n;
    const ngpt_hf_family *fam;
};

static inline float element(const ngpt_st_tensor *t, size_t i)
{
    float v;
    ngpt_st_to_f32(t, i, 1, &v);
    return v;
}

/* Floats first..first+n-1 of e in ngpt's (out, in) layout. */
static void read_floats(const entry *e, size_t first, size_t n, float *dst)
{
    if (!e->transpose) {        /* row-major: the sources one after another */
        for (int s = 0; n > 0; s++) {
            const size_t count = e->src[s]->count;
            if (first >= count) {
                first -= count;
                continue;
            }
            const size_t take = count - first < n ? count - first : n;
            ngpt_st_to_f32(e->src[s], first, take, dst);
            dst += take, n -= take, first = 0;
        }
        return;
    }
    const size_t rows = (size_t)e->info.shape[0], cols = (size_t)e->info.shape[1];
    size_t r = first / cols, c = first % cols;
    const ngpt_st_tensor *t = e->src[0];
    const unsigned char *f32 = t->dtype == NGPT_ST_F32 ? t->data : NULL;
    for (size_t i = 0; i < n; i++) {                /* source (in, out) = (cols, rows) */
        if (f32) memcpy(&dst[i], f32 + 4 * (c * rows + r), 4);     /* the common case, inline */
        else dst[i] = element(t, c * rows + r);
        if (++c == cols) c = 0, r++;
    }
}

static void floats_of(const void *src, size_t first, size_t n, float *dst)
{
    read_floats(src, first, n, dst);
}

/* ------------------------------------------------------------ the checks */

/* The tensor named hf, with or without the family's prefix. */
static ngpt_status find_source(const ngpt_hf_family *fam, const ngpt_shards *w, const char *hf,
                               const ngpt_st_tensor **out)
{
    if (!fam->prefix) {
        if ((*out = ngpt_shards_find(w, hf))) return NGPT_OK;
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the weights (%s%s) lack tensor %s, which the "
                         "model of config.json has", w->files[0].src,
                         w->n > 1 ? " and its other shards" : "", hf);
    }
    char prefixed[NGPT_HF_NAME_MAX + 32];
    snprintf(prefixed, sizeof prefixed, "%s%s", fam->prefix, hf);
    const ngpt_st_tensor *a = ngpt_shards_find(w, hf), *b = ngpt_shards_find(w, prefixed);
    if (a && b)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the weights hold both %s and %s; which one is "
                         "the model's?", hf, prefixed);
    if (!a && !b)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the weights (%s%s) lack tensor %s (or %s), which "
                         "the model of config.json has", w->files[0].src,
                         w->n > 1 ? " and its other shards" : "", hf, prefixed);
    *out = a ? a : b;
    return NGPT_OK;
}

static void format_shape(const ngpt_st_tensor *t, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < t->ndim && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

/* The source's dtype imports and its shape is the config's (rows of the
 * ngpt tensor's, from a stack). */
static ngpt_status check_source(const entry *e, const ngpt_st_tensor *t, int64_t rows)
{
    if (t->dtype == NGPT_ST_OTHER)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s is %s; ngpt imports F32, F16 and "
                         "BF16 weights", t->name, t->src, t->dtype_name);
    int64_t want[2] = {rows, e->info.ndim > 1 ? e->info.shape[1] : 0};
    if (e->transpose) want[0] = e->info.shape[1], want[1] = e->info.shape[0];
    bool ok = t->ndim == e->info.ndim && t->shape[0] == want[0] &&
              (t->ndim < 2 || t->shape[1] == want[1]);
    if (ok) return NGPT_OK;
    char got[128];
    format_shape(t, got, sizeof got);
    if (e->info.ndim > 1)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s has shape %s but config.json "
                         "makes it [%lld, %lld]", t->name, t->src, got, (long long)want[0],
                         (long long)want[1]);
    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s has shape %s but config.json makes "
                     "it [%lld]", t->name, t->src, got, (long long)want[0]);
}

/* The name without the family's prefix. */
static const char *bare(const ngpt_hf_family *fam, const char *name)
{
    const size_t n = fam->prefix ? strlen(fam->prefix) : 0;
    return n && !strncmp(name, fam->prefix, n) ? name + n : name;
}

/* Two tensors hold the same float32 values, bit for bit. */
static bool same_values(const ngpt_st_tensor *a, const ngpt_st_tensor *b)
{
    enum { CHUNK = 4096 };
    float x[CHUNK], y[CHUNK];
    if (a->count != b->count) return false;
    for (size_t at = 0; at < a->count; at += CHUNK) {
        const size_t n = a->count - at < CHUNK ? a->count - at : CHUNK;
        ngpt_st_to_f32(a, at, n, x);
        ngpt_st_to_f32(b, at, n, y);
        if (memcmp(x, y, n * sizeof(float))) return false;
    }
    return true;
}

/* Every tensor of the files is used, a mask buffer, or the tied head. */
static ngpt_status check_all_used(const ngpt_shards *w, const writer *wr, const ngpt_config *cfg)
{
    for (size_t f = 0; f < w->n; f++)
        for (size_t i = 0; i < w->files[f].n; i++) {
            const ngpt_st_tensor *t = &w->files[f].t[i];
            bool used = false;
            for (int32_t k = 0; k < wr->n && !used; k++)
                for (int s = 0; s < wr->e[k].nsrc; s++) used |= wr->e[k].src[s] == t;
            if (used || wr->fam->skipped(bare(wr->fam, t->name))) continue;
            if (cfg->tie_lm_head && !strcmp(bare(wr->fam, t->name), "lm_head.weight")) {
                const entry *emb = &wr->e[0];      /* tok_emb.weight, first */
                if (t->dtype != NGPT_ST_OTHER && t->ndim == 2 &&
                    t->shape[0] == emb->info.shape[0] && t->shape[1] == emb->info.shape[1] &&
                    same_values(t, emb->src[0]))
                    continue;
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s holds an lm_head.weight that differs "
                                 "from %s, but config.json ties them "
                                 "(tie_word_embeddings)", t->src, wr->fam->embedding);
            }
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s holds tensor %s, which is not part of the "
                             "%s model config.json describes", t->src, t->name, wr->fam->name);
        }
    return NGPT_OK;
}

/* cfg: the output's config; positions: the rows of config.json's position
 * table, of which a shorter context takes the first. */
static ngpt_status plan(writer *wr, const ngpt_config *cfg, int32_t positions,
                        const ngpt_shards *w)
{
    ngpt_layout lay;
    if (!ngpt_layout_compute(cfg, &lay))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the model is too large for this machine");
    wr->n = ngpt_layout_tensor_count(cfg);
    if (!(wr->e = calloc((size_t)wr->n, sizeof *wr->e)))
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    for (int32_t i = 0; i < wr->n; i++) {
        entry *e = &wr->e[i];
        ngpt_hf_sources from = {0};
        ngpt_layout_tensor(cfg, &lay, i, e->name, &e->info);
        e->info.name = e->name;
        /* every tensor the family's config implies has its counterpart */
        const bool known = wr->fam->sources(cfg, e->name, &from);
        NGPT_CHECK_INTERNAL(known && from.n >= 1 && from.n <= NGPT_HF_MAX_SOURCES &&
                            (from.n == 1 || !from.transpose));
        int64_t stacked = 0;
        for (int s = 0; s < from.n; s++) stacked += from.rows[s];
        NGPT_CHECK_INTERNAL(from.n == 1 || stacked == e->info.shape[0]);
        e->nsrc = from.n;
        e->transpose = from.transpose;
        for (int s = 0; s < from.n; s++) {
            ngpt_status st = find_source(wr->fam, w, from.hf[s], &e->src[s]);
            const int64_t rows = !strcmp(e->name, "pos_emb.weight") ? positions
                                 : from.n == 1                     ? e->info.shape[0]
                                                                   : from.rows[s];
            if (!st) st = check_source(e, e->src[s], rows);
            if (st) return st;
        }
    }
    return NGPT_OK;
}

ngpt_status ngpt_hf_write(const ngpt_hf_family *fam, const ngpt_config *cfg,
                          const ngpt_shards *w, const ngpt_stream_extras *x, ngpt_weights store,
                          bool lm_head_q4, int32_t context, int32_t positions, const char *path)
{
    writer wr = {.fam = fam};
    if (!ngpt_tok_fits(x->tok, cfg->vocab_size))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the tokenizer has %d tokens but config.json's "
                         "vocab_size is %d", (int)x->tok->n_tokens, (int)cfg->vocab_size);
    ngpt_config out = *cfg;
    out.weights = store, out.lm_head_q4 = lm_head_q4;
    if (context > positions)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "context %d is longer than the %d positions "
                         "config.json gives the model", (int)context, (int)positions);
    if (context > 0) out.context_len = context;
    if (context > cfg->context_len) {   /* past a RoPE model's default, up to config.json's */
        ngpt_status st = ngpt_config_check(&out);
        if (st) return st;
    }
    ngpt_status st = plan(&wr, &out, cfg->context_len, w);
    if (!st) st = check_all_used(w, &wr, &out);
    ngpt_stream_tensor *t = st ? NULL : calloc((size_t)wr.n, sizeof *t);
    if (!st && !t) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    for (int32_t i = 0; !st && i < wr.n; i++) t[i].info = wr.e[i].info, t[i].src = &wr.e[i];
    if (!st) st = ngpt_stream_write(path, &out, x, t, wr.n, floats_of);
    free(t);
    free(wr.e);
    return st;
}
