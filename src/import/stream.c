/* stream.c — tensors into a checkpoint from an importer's floats
 * (stream.h). The checkpoint writer asks for each tensor's bytes in order;
 * float32 ones are the importer's floats, Linear weights packed (dtype 4,
 * as an inference context multiplies by them), 8-bit and 4-bit ones are
 * quantized; a packed or quantized tensor is made 16 rows (one panel) at a
 * time and kept until the writer moves on. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdlib.h>
#include <string.h>

#include "import/stream.h"
#include "io/checkpoint.h"
#include "io/tmpl_tensor.h"
#include "io/tok_tensor.h"
#include "kernels.h"
#include "runtime/f32_panels.h"
#include "runtime/weights.h"

struct ngpt_stream {
    ngpt_stream_tensor *t;
    int32_t n;
    const ngpt_stream_extras *x;     /* the tokenizer and chat template */
    ngpt_stream_floats_fn floats;
    const ngpt_config *cfg;
    ngpt_layout lay;            /* cfg's: which tensors are Linears */
    /* a packed tensor's current panel: 16 rows as floats, [quantized,] packed */
    float *rows;
    int8_t *qrows, *panel;
    const ngpt_stream_tensor *panel_tensor;
    size_t panel_index;
};

static void read_f32(const void *src, size_t at, void *dst, size_t n)
{
    const ngpt_stream_tensor *t = src;
    t->stream->floats(t->src, at / sizeof(float), n / sizeof(float), dst);
}

/* Panel p of a packed float32, 8-bit or 4-bit tensor into s->panel, as
 * ngpt_f32_panels_pack and ngpt_weights_quantize make it. */
static void make_panel(ngpt_stream *s, const ngpt_stream_tensor *t, size_t p)
{
    const int n = t->info.shape[0], k = t->info.shape[1];
    const int j0 = (int)p * NGPT_Q8_NR, nr = n - j0 < NGPT_Q8_NR ? n - j0 : NGPT_Q8_NR;
    const ptrdiff_t rs = (ptrdiff_t)ngpt_q8_row_bytes(k);
    s->floats(t->src, (size_t)j0 * (size_t)k, (size_t)nr * (size_t)k, s->rows);
    if (t->info.dtype == NGPT_DTYPE_F32) {
        ngpt_f32_panels_pack((float *)(void *)s->panel, s->rows, nr, k);
    } else if (t->info.dtype == NGPT_DTYPE_Q4) {
        ngpt_kernels_active.pack_q4((uint8_t *)s->panel, s->rows, k, nr, k);
    } else {
        ngpt_kernels_active.quantize_q8(s->qrows, rs, s->rows, k, nr, k);
        ngpt_kernels_active.pack_q8(s->panel, s->qrows, rs, nr, k);
    }
    s->panel_tensor = t, s->panel_index = p;
}

static void read_packed(const void *src, size_t at, void *dst, size_t n)
{
    const ngpt_stream_tensor *t = src;
    ngpt_stream *s = t->stream;
    const size_t panel_bytes =
        t->info.dtype == NGPT_DTYPE_F32  ? (size_t)NGPT_GEMM_NR * (size_t)t->info.shape[1] * sizeof(float)
        : t->info.dtype == NGPT_DTYPE_Q4 ? ngpt_q4_packed_bytes(NGPT_Q4_NR, t->info.shape[1])
                                         : ngpt_q8_packed_bytes(NGPT_Q8_NR, t->info.shape[1]);
    unsigned char *out = dst;
    while (n > 0) {
        const size_t p = at / panel_bytes, off = at % panel_bytes;
        if (s->panel_tensor != t || s->panel_index != p) make_panel(s, t, p);
        const size_t take = panel_bytes - off < n ? panel_bytes - off : n;
        memcpy(out, (const unsigned char *)s->panel + off, take);
        out += take, at += take, n -= take;
    }
}

/* Whether e is a float32 Linear's W (written packed). */
static bool linear(const ngpt_stream *s, const ngpt_stream_tensor *e)
{
    return ngpt_weights_linear_index(s->cfg, &s->lay, e->info.offset) >= 0;
}

static void tensor_fn(void *user, size_t i, ngpt_ckpt_tensor *out)
{
    const ngpt_stream *s = user;
    if (i == (size_t)s->n) {            /* the tokenizer, then the template (as a save writes them) */
        ngpt_ckpt_tensor t = {.name = NGPT_CKPT_TOKENIZER, .ndim = 1, .dtype = NGPT_CKPT_BYTES,
                              .data = s->x->tok->image};
        t.shape[0] = (int32_t)s->x->tok->image_size;
        *out = t;
        return;
    }
    if (i > (size_t)s->n) {
        *out = ngpt_ckpt_template_entry(s->x->chat_template, s->x->template_size);
        return;
    }
    const ngpt_stream_tensor *e = &s->t[i];
    ngpt_ckpt_tensor t = {.name = e->info.name, .ndim = e->info.ndim, .src = e};
    t.shape[0] = e->info.shape[0];
    t.shape[1] = e->info.ndim > 1 ? e->info.shape[1] : 0;
    t.dtype = e->info.dtype == NGPT_DTYPE_Q8   ? NGPT_CKPT_Q8
              : e->info.dtype == NGPT_DTYPE_Q4 ? NGPT_CKPT_Q4
              : linear(s, e)                   ? NGPT_CKPT_F32_PACKED
                                               : NGPT_CKPT_F32;
    t.read = t.dtype == NGPT_CKPT_F32 ? read_f32 : read_packed;
    *out = t;
}

ngpt_status ngpt_stream_write(const char *path, const ngpt_config *cfg, const ngpt_stream_extras *x,
                              ngpt_stream_tensor *t, int32_t n, ngpt_stream_floats_fn floats)
{
    ngpt_stream s = {.t = t, .n = n, .x = x, .floats = floats, .cfg = cfg};
    ngpt_status st = NGPT_OK;
    ngpt_layout_compute(cfg, &s.lay);   /* (checked by the importer's plan) */
    int kmax = 1;               /* the widest row of a packed tensor */
    for (int32_t i = 0; i < n; i++) {
        t[i].stream = &s;
        if ((t[i].info.dtype != NGPT_DTYPE_F32 || linear(&s, &t[i])) && t[i].info.shape[1] > kmax)
            kmax = t[i].info.shape[1];
    }
    /* 16 rows of floats; a panel: floats, or q8's (the larger of the quantized) */
    const size_t rs = ngpt_q8_row_bytes(kmax), rows = (size_t)NGPT_Q8_NR * (size_t)kmax * sizeof(float);
    const size_t q8 = ngpt_q8_packed_bytes(NGPT_Q8_NR, kmax);
    s.rows = malloc(rows);
    s.qrows = aligned_alloc(64, NGPT_Q8_NR * rs);
    s.panel = aligned_alloc(64, ngpt_align64(rows > q8 ? rows : q8));
    if (!s.rows || !s.qrows || !s.panel) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    /* a quantized model records its float32 original's identity (that
     * model's parameter checksum: every tensor's floats in order), as a
     * quantizing save does: one pass over the floats first */
    const bool quantized = cfg->weights != NGPT_WEIGHTS_F32;
    ngpt_ckpt_meta id = {NGPT_META_IDENTITY, NGPT_META_U64, {.u = 0}};
    if (!st && quantized) {
        XXH3_state_t h;
        XXH3_64bits_reset(&h);
        const size_t chunk = (size_t)NGPT_Q8_NR * (size_t)kmax;
        for (int32_t i = 0; i < n; i++) {
            const size_t count = (size_t)t[i].info.shape[0] *
                                 (size_t)(t[i].info.ndim > 1 ? t[i].info.shape[1] : 1);
            for (size_t at = 0; at < count; at += chunk) {
                const size_t take = count - at < chunk ? count - at : chunk;
                floats(t[i].src, at, take, s.rows);
                XXH3_64bits_update(&h, s.rows, take * sizeof(float));
            }
        }
        id.value.u = (uint64_t)XXH3_64bits_digest(&h);
    }
    if (!st) {
        unsigned char block[NGPT_CKPT_MODEL_BYTES];
        ngpt_ckpt_config_encode(cfg, block);
        st = ngpt_ckpt_write(path, block, (size_t)n + 1 + (x->chat_template != NULL), tensor_fn, &s,
                             quantized ? &id : NULL, quantized);
    }
    free(s.rows);
    free(s.qrows);
    free(s.panel);
    return st;
}
