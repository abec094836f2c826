/* llama2c.c — llama2.c's model.bin, version 0, 1 or 2, into a .ngpt
 * checkpoint (llama2c.h).
 *
 * The file (run.c's memory_map_weights): 7 int32 (dim, hidden_dim,
 * n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size
 * means an unshared classifier), then float32 tensors, each with all
 * layers one after another, every matrix (out, in):
 *   tok_emb [V,D], rms_att [L,D], wq [L,D,D], wk [L,KVD,D], wv [L,KVD,D],
 *   wo [L,D,D], rms_ffn [L,D], w1 [L,F,D], w2 [L,D,F], w3 [L,F,D],
 *   rms_final [D], freq_cis_real and _imag [T, hs/2] (skipped: ngpt computes
 *   RoPE itself), wcls [V,D] when unshared.
 * Version 1 (export.py): a 256-byte header (u32 magic "ak42", i32 version,
 * the 7 int32 with vocab_size positive, u8 shared classifier, zeros), then
 * rms_att, rms_ffn, rms_final, tok_emb, wq, wk, wv, wo, w1, w2, w3, [wcls];
 * no freq_cis.
 * Version 2 (export.py's int8 "Q8_0", runq.c's): the same header with the
 * group size GS (int32, byte 37) before the zeros; the norms as float32,
 * then every matrix of every layer (tok_emb; wq of layer 0, 1, ...; wk;
 * ...; w3; [wcls]) as int8 q[n] followed by float32 scales[n/GS]. Value
 * i = (float)q[i] * scales[i / GS], a float32 product (runq.c's
 * dequantize): that float is what ngpt stores, or quantizes again with
 * --weights q8/q4. GS must divide dim (then every matrix is whole groups).
 * Each ngpt tensor is one to three of these runs end to end:
 *   blocks.i.ln1.weight <- rms_att[i]       blocks.i.ln2.weight <- rms_ffn[i]
 *   blocks.i.attn.qkv.weight <- wq[i] | wk[i] | wv[i]  (rows stacked)
 *   blocks.i.attn.proj.weight <- wo[i]
 *   blocks.i.mlp.fc1.weight <- w1[i] | w3[i]  (gate rows, then up rows)
 *   blocks.i.mlp.fc2.weight <- w2[i]
 *   tok_emb.weight <- tok_emb, ln_f.weight <- rms_final, lm_head.weight <- wcls
 * run.c's q/k pairs are interleaved, ngpt's default RoPE pairing; eps 1e-5
 * and theta 10000 are what run.c hard-codes. The file is mapped, and
 * stream.c asks for each tensor's floats in order: copied (version 2:
 * dequantized), or quantized panel by panel as ngpt quantize makes them (as
 * for Hugging Face files). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import/llama2c.h"
#include "import/stream.h"

#define AK42_MAGIC 0x616b3432u      /* "24ka": llama2.c's export.py, versions 1 and 2 */

/* Values of the file: count of them from byte `at` after the header, as
 * float32, or (int8) count int8 followed by count / group_size float32
 * scales, value i = q[i] * scale[i / group_size]. */
typedef struct run { uint64_t at, count; bool int8; } run;

typedef struct writer writer;

typedef struct entry {
    char name[NGPT_NAME_MAX];
    ngpt_tensor_info info;
    run part[3];
    const writer *w;
} entry;

struct writer {
    entry *e;
    int32_t n;
    const unsigned char *map;
    uint64_t data_at;           /* the values' start: the header's size */
    uint64_t group_size;        /* version 2's int8 groups */
};

static int32_t get_i32(const unsigned char *p) { int32_t v; memcpy(&v, p, 4); return v; }

/* Where each of the file's tensors begins, in bytes after the header;
 * group_size: version 2's (its matrices int8 with scales), else 0. */
typedef struct offsets {
    uint64_t emb, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, wcls, end;
    uint64_t group_size;
} offsets;

/* The bytes of a matrix of n values: float32, or int8 and a scale per group. */
static uint64_t matrix_bytes(const offsets *o, uint64_t n)
{
    return o->group_size ? n + 4 * (n / o->group_size) : 4 * n;
}

static offsets file_offsets(const ngpt_config *c, int version, uint64_t group_size)
{
    const uint64_t V = (uint64_t)c->vocab_size, D = (uint64_t)c->d_model,
                   L = (uint64_t)c->n_layers, F = (uint64_t)c->d_ff,
                   hs = D / (uint64_t)c->n_heads, KVD = hs * (uint64_t)c->n_kv_heads,
                   T = (uint64_t)c->context_len;
    offsets o = {.group_size = version == 2 ? group_size : 0};
    if (version == 0) {         /* run.c: embedding, then per kind all layers; freq_cis */
        o.emb = 0;
        o.rms_att = o.emb + 4 * V * D;
        o.wq = o.rms_att + 4 * L * D;
    } else {                    /* export.py versions 1 and 2: the norms first, no freq_cis */
        o.rms_att = 0;
        o.rms_ffn = o.rms_att + 4 * L * D;
        o.rms_final = o.rms_ffn + 4 * L * D;
        o.emb = o.rms_final + 4 * D;
        o.wq = o.emb + matrix_bytes(&o, V * D);
    }
    o.wk = o.wq + L * matrix_bytes(&o, D * D);
    o.wv = o.wk + L * matrix_bytes(&o, KVD * D);
    o.wo = o.wv + L * matrix_bytes(&o, KVD * D);
    const uint64_t after_wo = o.wo + L * matrix_bytes(&o, D * D);
    if (version == 0) o.rms_ffn = after_wo;
    o.w1 = version == 0 ? o.rms_ffn + 4 * L * D : after_wo;
    o.w2 = o.w1 + L * matrix_bytes(&o, F * D);
    o.w3 = o.w2 + L * matrix_bytes(&o, D * F);
    const uint64_t after_w3 = o.w3 + L * matrix_bytes(&o, F * D);
    if (version == 0) o.rms_final = after_w3;
    o.wcls = version == 0 ? o.rms_final + 4 * (D + T * hs)  /* freq_cis_real, _imag: T * hs/2 each */
                          : after_w3;
    o.end = o.wcls + (c->tie_lm_head ? 0 : matrix_bytes(&o, V * D));
    return o;
}

/* The "ak42" header after the 7 fields: the shared-classifier flag, version
 * 2's group size (int32 at byte 37, unaligned), zeros. */
static ngpt_status check_ak42_tail(const unsigned char *p, size_t n, const char *src, int version,
                                   bool *shared, int32_t *group_size)
{
    if (n < NGPT_LLAMA2C_HEADER_MAX)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is %zu bytes, shorter than a llama2.c "
                         "version-%d header (256)", src, n, version);
    if (p[36] > 1)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: the shared-classifier flag (byte 36) is %u, "
                         "not 0 or 1", src, (unsigned)p[36]);
    const size_t pad = version == 2 ? 41 : 37;
    for (size_t i = pad; i < NGPT_LLAMA2C_HEADER_MAX; i++)
        if (p[i])
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: header byte %zu is not zero (export.py "
                             "pads the version-%d header with zeros)", src, i, version);
    *shared = p[36] == 1;
    *group_size = version == 2 ? get_i32(p + 37) : 0;
    return NGPT_OK;
}

ngpt_status ngpt_llama2c_parse_header(const unsigned char *p, size_t n, const char *src,
                                      ngpt_llama2c_header *h)
{
    int version = 0;
    const unsigned char *fields = p;
    bool shared = true;
    int32_t group_size = 0;
    if (n >= 8 && (uint32_t)get_i32(p) == AK42_MAGIC) {
        version = get_i32(p + 4);
        if (version != 1 && version != 2)
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s is a llama2.c export of version %d "
                             "(magic \"ak42\"); ngpt reads versions 0 (run.c's), 1 (export.py's "
                             "float32) and 2 (its int8, runq.c's)", src, version);
        ngpt_status st = check_ak42_tail(p, n, src, version, &shared, &group_size);
        if (st) return st;
        fields = p + 8;
    } else if (n < 28) {
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is %zu bytes, shorter than a llama2.c header "
                         "(28)", src, n);
    }
    static const char *const names[7] = {"dim", "hidden_dim", "n_layers", "n_heads",
                                         "n_kv_heads", "vocab_size", "seq_len"};
    int64_t f[7];
    for (int i = 0; i < 7; i++) {
        f[i] = get_i32(fields + 4 * i);
        const bool signed_vocab = i == 5 && version == 0;
        if ((signed_vocab && f[i] < 0 ? -f[i] : f[i]) <= 0)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: header field %s is %lld; a llama2.c "
                             "model.bin's 7 int32 are positive (version 0: vocab_size negative "
                             "for an unshared classifier)", src, names[i], (long long)f[i]);
    }
    if (f[0] % f[3] || (f[0] / f[3]) % 2)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: dim %lld is not n_heads %lld times an even "
                         "head size", src, (long long)f[0], (long long)f[3]);
    if (f[3] % f[4])
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: n_heads %lld is not a multiple of n_kv_heads "
                         "%lld", src, (long long)f[3], (long long)f[4]);
    /* dim | group size makes every int8 tensor (n a multiple of dim) whole groups */
    if (version == 2 && (group_size <= 0 || f[0] % group_size))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: the int8 group size (bytes 37-40) is %d; it "
                         "must be positive and divide dim %lld (export.py halves 64 until it "
                         "does)", src, (int)group_size, (long long)f[0]);
    ngpt_config c = ngpt_config_default();
    c.d_model = (int32_t)f[0], c.d_ff = (int32_t)f[1], c.n_layers = (int32_t)f[2];
    c.n_heads = (int32_t)f[3], c.n_kv_heads = (int32_t)f[4];
    c.vocab_size = (int32_t)(f[5] < 0 ? -f[5] : f[5]), c.context_len = (int32_t)f[6];
    c.tie_lm_head = version == 0 ? f[5] > 0 : shared;
    c.dropout = 0.0f;
    c.rope_theta = 10000.0f;                    /* run.c's */
    c.qkv_bias = c.proj_bias = c.mlp_bias = false;
    c.final_norm = true;
    c.norm = NGPT_NORM_PRE;
    c.pos = NGPT_POS_ROPE;
    c.norm_type = NGPT_NORM_RMS;
    c.norm_eps = 1e-5f;                         /* run.c's */
    c.mlp = NGPT_MLP_SWIGLU;
    c.head_dim = 0;
    c.rope_pairs = NGPT_ROPE_INTERLEAVED;
    c.weights = NGPT_WEIGHTS_F32;
    ngpt_status st = ngpt_config_validate(&c);
    if (st) return ngpt_fail(st, "%s: its model is not one ngpt can run: %s", src, ngpt_last_error());
    /* The file's size is at most 5 bytes a parameter (version 2 with groups
     * of 1: an int8 and a float32 scale each), plus freq_cis (T * hs floats,
     * T * T < 2^31): with under 2^61 parameters it fits a uint64. */
    size_t params = 0;
    if (ngpt_config_param_count(&c, &params))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "%s: its header makes a model whose parameter "
                         "count overflows this machine's size_t", src);
    if ((uint64_t)params >> 61 != 0)
        return ngpt_fail(NGPT_ERR_OVERFLOW, "%s: its header makes a model of %zu parameters, "
                         "too large for a file's size to be computed", src, params);
    h->cfg = c;
    h->version = version;
    h->group_size = group_size;
    h->data_at = version == 0 ? 28 : NGPT_LLAMA2C_HEADER_MAX;
    h->file_bytes = h->data_at + file_offsets(&c, version, (uint64_t)group_size).end;
    return NGPT_OK;
}

/* ------------------------------------------------------------ streaming */

/* Values first..first+take-1 of run r into dst: copied, or dequantized as
 * runq.c's dequantize does (a float32 product; the range may start and end
 * mid-group). */
static void read_run(const writer *w, const run *r, size_t first, size_t take, float *dst)
{
    const unsigned char *at = w->map + w->data_at + r->at;
    if (!r->int8) {
        memcpy(dst, at + 4 * first, 4 * take);
        return;
    }
    const int8_t *q = (const int8_t *)at;
    const unsigned char *scales = at + r->count;   /* unaligned: memcpy */
    const size_t gs = (size_t)w->group_size;
    float s = 0.0f;
    for (size_t i = first; i < first + take; i++) {
        if (i == first || i % gs == 0) memcpy(&s, scales + 4 * (i / gs), 4);
        dst[i - first] = (float)q[i] * s;
    }
}

static void read_floats(const entry *e, size_t first, size_t n, float *dst)
{
    for (int p = 0; p < 3 && n > 0; p++) {
        const run *r = &e->part[p];
        if (first >= r->count) {
            first -= r->count;
            continue;
        }
        const size_t take = r->count - first < n ? (size_t)(r->count - first) : n;
        read_run(e->w, r, first, take, dst);
        dst += take, n -= take, first = 0;
    }
}

static void floats_of(const void *src, size_t first, size_t n, float *dst)
{
    read_floats(src, first, n, dst);
}

/* Layer l's matrix of n values, of a kind whose layers start at base. */
static run layer_run(const offsets *o, uint64_t base, uint64_t l, uint64_t n)
{
    return (run){base + l * matrix_bytes(o, n), n, o->group_size != 0};
}

/* The runs of ngpt tensor e (its name and shape set): norms float32,
 * matrices as the file stores them (each layer's one tensor). */
static void plan_entry(entry *e, const ngpt_config *c, const offsets *o)
{
    const uint64_t D = (uint64_t)c->d_model, F = (uint64_t)c->d_ff, V = (uint64_t)c->vocab_size;
    const uint64_t KVD = D / (uint64_t)c->n_heads * (uint64_t)c->n_kv_heads;
    const bool q = o->group_size != 0;
    int layer = 0, used = 0;
    const char *field = e->name;
    if (sscanf(e->name, "blocks.%d.%n", &layer, &used) == 1 && used) field = e->name + used;
    const uint64_t l = (uint64_t)layer;
    run *p = e->part;
    if (!strcmp(field, "tok_emb.weight")) p[0] = (run){o->emb, V * D, q};
    else if (!strcmp(field, "ln_f.weight")) p[0] = (run){o->rms_final, D, false};
    else if (!strcmp(field, "lm_head.weight")) p[0] = (run){o->wcls, V * D, q};
    else if (!strcmp(field, "ln1.weight")) p[0] = (run){o->rms_att + 4 * l * D, D, false};
    else if (!strcmp(field, "ln2.weight")) p[0] = (run){o->rms_ffn + 4 * l * D, D, false};
    else if (!strcmp(field, "attn.proj.weight")) p[0] = layer_run(o, o->wo, l, D * D);
    else if (!strcmp(field, "mlp.fc2.weight")) p[0] = layer_run(o, o->w2, l, D * F);
    else if (!strcmp(field, "mlp.fc1.weight")) {
        p[0] = layer_run(o, o->w1, l, F * D);
        p[1] = layer_run(o, o->w3, l, F * D);
    } else if (!strcmp(field, "attn.qkv.weight")) {
        p[0] = layer_run(o, o->wq, l, D * D);
        p[1] = layer_run(o, o->wk, l, KVD * D);
        p[2] = layer_run(o, o->wv, l, KVD * D);
    }
}

static ngpt_status plan(writer *w, const ngpt_config *c, const ngpt_llama2c_header *h)
{
    ngpt_layout lay;
    if (!ngpt_layout_compute(c, &lay))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the model is too large for this machine");
    const offsets o = file_offsets(c, h->version, (uint64_t)h->group_size);
    w->n = ngpt_layout_tensor_count(c);
    if (!(w->e = calloc((size_t)w->n, sizeof *w->e)))
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    for (int32_t i = 0; i < w->n; i++) {
        entry *e = &w->e[i];
        ngpt_layout_tensor(c, &lay, i, e->name, &e->info);
        e->info.name = e->name;
        e->w = w;
        plan_entry(e, c, &o);
        uint64_t count = 0;
        for (int p = 0; p < 3; p++) count += e->part[p].count;
        const uint64_t want = (uint64_t)e->info.shape[0] * (e->info.ndim > 1 ? (uint64_t)e->info.shape[1] : 1);
        NGPT_CHECK_INTERNAL(count == want);     /* every tensor of the config has its runs */
    }
    return NGPT_OK;
}

/* Maps the file, checked against its header: *h, *map, *size. */
static ngpt_status map_file(const char *path, ngpt_llama2c_header *h, const unsigned char **map,
                            size_t *size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ngpt_fail(NGPT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    unsigned char hdr[NGPT_LLAMA2C_HEADER_MAX];
    ssize_t got = 0;
    ngpt_status st = NGPT_OK;
    const ngpt_config *c = &h->cfg;
    char group[40] = "";
    if (fstat(fd, &sb) != 0)
        st = ngpt_fail(NGPT_ERR_IO, "cannot read the size of %s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = ngpt_fail(NGPT_ERR_IO, "%s is not a regular file", path);
    else if ((got = pread(fd, hdr, sizeof hdr, 0)) < 0)
        st = ngpt_fail(NGPT_ERR_IO, "reading %s failed: %s", path, strerror(errno));
    else if (!(st = ngpt_llama2c_parse_header(hdr, (size_t)got, path, h)) &&
             (uint64_t)sb.st_size != h->file_bytes) {
        if (h->version == 2) snprintf(group, sizeof group, ", int8 groups of %d", (int)h->group_size);
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is %lld bytes but its version-%d header (dim %d, "
                       "hidden %d, %d layers, %d heads, %d kv heads, vocab %d%s, seq_len %d%s) "
                       "makes it %llu: truncated, or not a llama2.c model.bin", path,
                       (long long)sb.st_size, h->version, (int)c->d_model, (int)c->d_ff,
                       (int)c->n_layers, (int)c->n_heads, (int)c->n_kv_heads, (int)c->vocab_size,
                       c->tie_lm_head ? "" : " unshared", (int)c->context_len, group,
                       (unsigned long long)h->file_bytes);
    } else if (h->file_bytes > SIZE_MAX)
        st = ngpt_fail(NGPT_ERR_IO, "%s is too large for this machine's address space", path);
    if (!st) {
        void *m = mmap(NULL, (size_t)h->file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) st = ngpt_fail(NGPT_ERR_IO, "cannot map %s: %s", path, strerror(errno));
        else *map = m, *size = (size_t)h->file_bytes;
    }
    close(fd);
    return st;
}

ngpt_status ngpt_llama2c_write(const char *path, const ngpt_tokenizer *tok, ngpt_weights store,
                               bool lm_head_q4, const char *out_path)
{
    ngpt_llama2c_header h;
    size_t size = 0;
    writer w = {0};
    ngpt_status st = map_file(path, &h, &w.map, &size);
    if (st) return st;
    ngpt_config cfg = h.cfg;
    w.data_at = h.data_at;
    w.group_size = (uint64_t)h.group_size;
    if (tok->n_tokens != cfg.vocab_size)
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "the tokenizer has %d tokens but %s's vocab_size "
                       "is %d", (int)tok->n_tokens, path, (int)cfg.vocab_size);
    cfg.weights = store, cfg.lm_head_q4 = lm_head_q4;
    if (!st) st = plan(&w, &cfg, &h);
    ngpt_stream_tensor *t = st ? NULL : calloc((size_t)w.n, sizeof *t);
    if (!st && !t) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    for (int32_t i = 0; !st && i < w.n; i++) t[i].info = w.e[i].info, t[i].src = &w.e[i];
    const ngpt_stream_extras x = {.tok = tok};
    if (!st) st = ngpt_stream_write(out_path, &cfg, &x, t, w.n, floats_of);
    munmap((void *)w.map, size);
    free(t);
    free(w.e);
    return st;
}
