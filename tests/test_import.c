/* test_import.c — ngpt_import_hf on small Hugging Face GPT-2 directories
 * this test writes itself (config.json, safetensors in F32, F16 and BF16,
 * with and without the "transformer." prefix, one sharded with an index,
 * vocab.json + merges.txt and tokenizer.json of a tiny byte-level BPE),
 * with random weights from a fixed seed:
 *  - every imported parameter equals the value written, bit for bit
 *    (Conv1D transposes, F16 and BF16 widened by an independent formula);
 *  - the imported model's logits have one golden checksum on every build
 *    and thread count; the 8-bit import is byte for byte the file `ngpt
 *    quantize` makes of the float32 one; both tokenizer routes give one
 *    tokenizer;
 *  - bad files (truncated, wrong dtype, offsets past the end, overlapping
 *    or holey offsets, a duplicate name, shapes that disagree with
 *    config.json, an unknown activation, bad JSON, a foreign pre-tokenizer)
 *    are refused with one line naming ngpt_import_hf, and nothing is
 *    written;
 *  - the published configs of gpt2, gpt2-medium, gpt2-large, gpt2-xl and
 *    distilgpt2 are accepted and have their published parameter counts. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fpmode.h"
#include "test.h"

enum { V = 300, T = 32, C = 64, L = 2, H = 4, F = 4 * C, N_MERGES = V - 257 };

/* The logits of the float32 import on tokens (i * 7 + 3) % V, 1 x T: the
 * same on every build and thread count (made by the scalar reference). */
#define GOLDEN_LOGITS 0x8ff4b8025f65b9ceull
/* ... and of its 8-bit import. */
#define GOLDEN_LOGITS_Q8 0x0e942402540b365bull

static char root[512];          /* the test's temporary folder */

/* ------------------------------------------------------------ values */

static uint64_t rng;
static uint64_t next_u64(void)     /* splitmix64 */
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static float uniform(void) { return (float)(next_u64() >> 40) * 0x1p-24f * 2.0f - 1.0f; }

enum { DT_F32, DT_F16, DT_BF16 };
static const char *const dt_name[] = {"F32", "F16", "BF16"};
static const int dt_bytes[] = {4, 2, 2};

/* A half's value, written out from IEEE 754's definition (not the
 * library's converter): e = 0: m 2^-24; else (1024 + m) 2^(e - 25). */
static float half_value(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const float v = e ? ldexpf((float)(1024 + m), e - 25) : ldexpf((float)m, -24);
    return h & 0x8000 ? -v : v;
}

/* x cut to a half (truncated; |x| < 65504): its bits. */
static uint16_t half_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    const uint16_t sign = (uint16_t)(b >> 16 & 0x8000);
    const float a = fabsf(x);
    if (a < 0x1p-14f) return sign | (uint16_t)(a * 0x1p24f);    /* subnormal or zero */
    const int e = (int)(b >> 23 & 255) - 127;
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(b >> 13 & 1023);
}

/* One tensor of the Hugging Face model: its values as float32 (exactly
 * what its dtype holds) and its bytes in that dtype. */
typedef struct hf_tensor {
    char name[64];
    int ndim;
    int shape[2];
    size_t count;
    float *val;
    unsigned char *bytes;
} hf_tensor;

static hf_tensor tensors[64];
static int n_tensors;

/* kind: 'w' ~ U(-0.1, 0.1), 'g' a LayerNorm gain ~ 1 + U(-0.2, 0.2),
 * 'b' a bias ~ U(-0.02, 0.02); a few F16 values are subnormal. */
static void add(const char *name, int rows, int cols, char kind, int dt)
{
    hf_tensor *t = &tensors[n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = cols ? 2 : 1, t->shape[0] = rows, t->shape[1] = cols;
    t->count = (size_t)rows * (size_t)(cols ? cols : 1);
    t->val = malloc(t->count * sizeof(float));
    t->bytes = malloc(t->count * 4);
    for (size_t i = 0; i < t->count; i++) {
        float x = kind == 'g' ? 1.0f + 0.2f * uniform() : (kind == 'b' ? 0.02f : 0.1f) * uniform();
        if (i % 97 == 5) x *= 0x1p-16f;             /* tiny: F16 subnormals */
        uint32_t bits;
        memcpy(&bits, &x, 4);
        if (dt == DT_F32) {
            memcpy(t->bytes + 4 * i, &x, 4);
        } else if (dt == DT_BF16) {
            const uint16_t hi = (uint16_t)(bits >> 16);
            bits = (uint32_t)hi << 16;
            memcpy(&x, &bits, 4);
            memcpy(t->bytes + 2 * i, &hi, 2);
        } else {
            const uint16_t h = half_bits(x);
            x = half_value(h);
            memcpy(t->bytes + 2 * i, &h, 2);
        }
        t->val[i] = x;
    }
}

static void free_tensors(void)
{
    for (int i = 0; i < n_tensors; i++) free(tensors[i].val), free(tensors[i].bytes);
    n_tensors = 0;
}

/* GPT-2's state_dict for the test's shape, drawn from seed. */
static void make_model(uint64_t seed, int dt)
{
    char n[64];
    rng = seed;
    free_tensors();
    add("wte.weight", V, C, 'w', dt);
    add("wpe.weight", T, C, 'w', dt);
    for (int l = 0; l < L; l++) {
#define ADD(suffix, r, c, kind) (snprintf(n, sizeof n, "h.%d.%s", l, suffix), add(n, r, c, kind, dt))
        ADD("ln_1.weight", C, 0, 'g');
        ADD("ln_1.bias", C, 0, 'b');
        ADD("attn.c_attn.weight", C, 3 * C, 'w');
        ADD("attn.c_attn.bias", 3 * C, 0, 'b');
        ADD("attn.c_proj.weight", C, C, 'w');
        ADD("attn.c_proj.bias", C, 0, 'b');
        ADD("ln_2.weight", C, 0, 'g');
        ADD("ln_2.bias", C, 0, 'b');
        ADD("mlp.c_fc.weight", C, F, 'w');
        ADD("mlp.c_fc.bias", F, 0, 'b');
        ADD("mlp.c_proj.weight", F, C, 'w');
        ADD("mlp.c_proj.bias", C, 0, 'b');
#undef ADD
    }
    add("ln_f.weight", C, 0, 'g', dt);
    add("ln_f.bias", C, 0, 'b', dt);
}

/* --------------------------------------------------------- the files */

static bool write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    const bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static void path_of(char *buf, size_t size, const char *dir, const char *file)
{
    snprintf(buf, size, "%s/%s/%s", root, dir, file);
}

/* How a safetensors file is spoilt. */
typedef enum spoil {
    SP_NONE, SP_TRUNCATED, SP_DTYPE, SP_PAST_END, SP_OVERLAP, SP_HOLE, SP_DUPLICATE, SP_SPAN,
    SP_BAD_JSON, SP_BIG_HEADER, SP_EXTRA_TENSOR, SP_MISSING
} spoil;

typedef struct dir_opts {
    int dt;
    bool prefix;                /* "transformer." names */
    bool masks;                 /* transformers' attn.bias / attn.masked_bias buffers */
    bool lm_head;               /* a tied lm_head.weight copy of wte (GPT2LMHeadModel's save) */
    bool lm_head_neg;           /* ... holding -wte instead (F32) */
    bool untied;                /* config.json: tie_word_embeddings false */
    int shards;                 /* 0: model.safetensors; n: n shards + index */
    spoil sp;
    const char *activation;     /* "gelu_new" */
    int n_positions;            /* config.json's (T) */
} dir_opts;

/* Appends text to a growing buffer. */
typedef struct text { char *p; size_t n, cap; } text;
static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

/* One safetensors file of tensors [first, last) (+ extras), spoilt as asked. */
static bool write_safetensors(const char *path, int first, int last, const dir_opts *o,
                              bool extras)
{
    text h = {0};
    size_t off = 0, data_bytes = 0;
    const int eb = dt_bytes[o->dt];
    put(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = first; i < last; i++) {
        const hf_tensor *t = &tensors[i];
        size_t bytes = t->count * (size_t)eb, b = off, e = off + bytes;
        const char *dt = dt_name[o->dt];
        if (o->sp == SP_DTYPE && i == first) dt = o->dt == DT_F32 ? "I32" : "I16";
        if (o->sp == SP_OVERLAP && i == first + 1) b = 0, e = t->count * (size_t)eb;
        if (o->sp == SP_HOLE && i > first) b += 8, e += 8;
        if (o->sp == SP_SPAN && i == first) e -= (size_t)eb, b -= 0;
        put(&h, ",\"%s%s\":{\"dtype\":\"%s\",\"shape\":[%d", o->prefix ? "transformer." : "",
            t->name, dt, t->shape[0]);
        if (t->ndim == 2) put(&h, ",%d", t->shape[1]);
        put(&h, "],\"data_offsets\":[%zu,%zu]}", b, e);
        off += bytes;
    }
    data_bytes = off + (o->sp == SP_HOLE ? 8 : 0);
    size_t extra_at = data_bytes;
    if (extras && o->masks)
        for (int l = 0; l < L; l++) {
            put(&h, ",\"%sh.%d.attn.bias\":{\"dtype\":\"F32\",\"shape\":[1,1,%d,%d],"
                "\"data_offsets\":[%zu,%zu]}", o->prefix ? "transformer." : "", l, T, T,
                extra_at, extra_at + (size_t)T * T * 4);
            extra_at += (size_t)T * T * 4;
            put(&h, ",\"%sh.%d.attn.masked_bias\":{\"dtype\":\"F32\",\"shape\":[],"
                "\"data_offsets\":[%zu,%zu]}", o->prefix ? "transformer." : "", l, extra_at,
                extra_at + 4);
            extra_at += 4;
        }
    if (extras && o->lm_head) {
        put(&h, ",\"lm_head.weight\":{\"dtype\":\"%s\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}",
            dt_name[o->dt], V, C, extra_at, extra_at + (size_t)V * C * (size_t)eb);
        extra_at += (size_t)V * C * (size_t)eb;
    }
    if (o->sp == SP_PAST_END)
        put(&h, ",\"extra\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[%zu,%zu]}",
            extra_at, extra_at + 16);
    if (o->sp == SP_EXTRA_TENSOR) {
        put(&h, ",\"h.0.attn.rotary\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[%zu,%zu]}",
            extra_at, extra_at + 16);
    }
    if (o->sp == SP_DUPLICATE) {
        const hf_tensor *t = &tensors[first];
        put(&h, ",\"%s%s\":{\"dtype\":\"%s\",\"shape\":[%d", o->prefix ? "transformer." : "",
            t->name, dt_name[o->dt], t->shape[0]);
        if (t->ndim == 2) put(&h, ",%d", t->shape[1]);
        put(&h, "],\"data_offsets\":[%zu,%zu]}", extra_at, extra_at + t->count * (size_t)eb);
    }
    put(&h, o->sp == SP_BAD_JSON ? "" : "}");
    while (h.n % 8) put(&h, " ");
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    uint64_t hn = o->sp == SP_BIG_HEADER ? 200000000ull : h.n;
    fwrite(&hn, 8, 1, f);
    fwrite(h.p, 1, h.n, f);
    for (int i = first; i < last; i++) {
        fwrite(tensors[i].bytes, (size_t)eb, tensors[i].count, f);
        if (o->sp == SP_HOLE && i == first) fwrite("\0\0\0\0\0\0\0\0", 1, 8, f);
    }
    if (extras && o->masks)
        for (int l = 0; l < L; l++) {
            for (int i = 0; i < T * T; i++) {
                const float m = (float)(i % T <= i / T);
                fwrite(&m, 4, 1, f);
            }
            const float mb = -10000.0f;
            fwrite(&mb, 4, 1, f);
        }
    if (extras && o->lm_head)
        for (size_t i = 0; i < tensors[0].count; i++) {
            unsigned char e[4];
            memcpy(e, tensors[0].bytes + i * (size_t)eb, (size_t)eb);
            e[eb - 1] ^= o->lm_head_neg ? 0x80 : 0;     /* the sign bit */
            fwrite(e, (size_t)eb, 1, f);
        }
    if (o->sp == SP_EXTRA_TENSOR || o->sp == SP_DUPLICATE) {
        const size_t n = o->sp == SP_DUPLICATE ? tensors[first].count * (size_t)eb : 16;
        fwrite(tensors[first].bytes, 1, n, f);
    }
    free(h.p);
    long end = ftell(f);
    bool ok = fclose(f) == 0;
    if (o->sp == SP_TRUNCATED) ok = ok && truncate(path, end - 10) == 0;
    return ok;
}

/* GPT-2's byte characters: the character of byte b (UTF-8 into out). */
static int byte_char(int b, char out[4])
{
    int cp = b;
    if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
        int n = 0;
        for (int x = 0; x < b; x++)
            if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) n++;
        cp = 256 + n;
    }
    if (cp < 0x80) return out[0] = (char)cp, 1;
    out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 63));
    return 2;
}

/* The tiny tokenizer: ids 0..255 the bytes in GPT-2's order (the
 * printable ones first), then N_MERGES merges ("Ġ"+letter, then letter
 * pairs), then "<|endoftext|>". tok[id] is its characters; merge k joins
 * ma[k] and mb[k]. */
static char tok_chars[V][16];
static int ma[N_MERGES], mb[N_MERGES];

static void make_tokenizer(void)
{
    int order[256], n = 0;
    for (int b = 0; b < 256; b++)
        if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE) order[n++] = b;
    for (int b = 0; b < 256; b++)
        if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) order[n++] = b;
    int id_of[256];
    for (int i = 0; i < 256; i++) {
        char c[4];
        int k = byte_char(order[i], c);
        memcpy(tok_chars[i], c, (size_t)k);
        tok_chars[i][k] = 0;
        id_of[order[i]] = i;
    }
    const char *pairs = "thheinerantoenesreonatndstorarteitalhaseou";
    for (int k = 0; k < N_MERGES; k++) {
        if (k < 26) ma[k] = id_of[' '], mb[k] = id_of['a' + k];
        else ma[k] = id_of[(unsigned char)pairs[2 * (k - 26)]], mb[k] = id_of[(unsigned char)pairs[2 * (k - 26) + 1]];
        snprintf(tok_chars[256 + k], sizeof tok_chars[0], "%s%s", tok_chars[ma[k]], tok_chars[mb[k]]);
    }
    snprintf(tok_chars[V - 1], sizeof tok_chars[0], "<|endoftext|>");
}

/* A JSON string of token characters (escaping '"' and '\\'). */
static void put_json_string(text *t, const char *s)
{
    put(t, "\"");
    for (; *s; s++) put(t, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
    put(t, "\"");
}

static bool write_vocab(const char *dir)
{
    char p[600];
    text v = {0}, m = {0};
    put(&v, "{");
    for (int i = 0; i < V; i++) {
        put(&v, i ? ", " : "");
        put_json_string(&v, tok_chars[i]);
        put(&v, ": %d", i);
    }
    put(&v, "}");
    put(&m, "#version: 0.2\n");
    for (int k = 0; k < N_MERGES; k++) put(&m, "%s %s\n", tok_chars[ma[k]], tok_chars[mb[k]]);
    path_of(p, sizeof p, dir, "vocab.json");
    bool ok = write_file(p, v.p, v.n);
    path_of(p, sizeof p, dir, "merges.txt");
    ok = ok && write_file(p, m.p, m.n);
    free(v.p), free(m.p);
    return ok;
}

/* tokenizer.json: merges as "a b" strings or ["a", "b"] pairs; pre is the
 * pre_tokenizer's JSON. "<|endoftext|>" only among the added tokens. */
static bool write_tokenizer_json(const char *dir, bool pair_merges, const char *pre)
{
    char p[600];
    text t = {0};
    put(&t, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": "
            "[{\"id\": %d, \"content\": \"<|endoftext|>\", \"single_word\": false, \"lstrip\": "
            "false, \"rstrip\": false, \"normalized\": true, \"special\": true}], "
            "\"normalizer\": null, \"pre_tokenizer\": %s, \"post_processor\": {\"type\": "
            "\"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": false, \"use_regex\": "
            "true}, \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
            "\"trim_offsets\": true, \"use_regex\": true}, \"model\": {\"type\": \"BPE\", "
            "\"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": \"\", "
            "\"end_of_word_suffix\": \"\", \"fuse_unk\": false, \"byte_fallback\": false, "
            "\"vocab\": {", V - 1, pre);
    for (int i = 0; i < V - 1; i++) {
        put(&t, i ? ", " : "");
        put_json_string(&t, tok_chars[i]);
        put(&t, ": %d", i);
    }
    put(&t, "}, \"merges\": [");
    for (int k = 0; k < N_MERGES; k++) {
        if (pair_merges) {
            put(&t, k ? ", [" : "[");
            put_json_string(&t, tok_chars[ma[k]]);
            put(&t, ", ");
            put_json_string(&t, tok_chars[mb[k]]);
            put(&t, "]");
        } else {
            char s[40];
            snprintf(s, sizeof s, "%s %s", tok_chars[ma[k]], tok_chars[mb[k]]);
            put(&t, k ? ", " : "");
            put_json_string(&t, s);
        }
    }
    put(&t, "]}}");
    path_of(p, sizeof p, dir, "tokenizer.json");
    bool ok = write_file(p, t.p, t.n);
    free(t.p);
    return ok;
}

static const char *const GPT2_PRE = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
                                    "\"trim_offsets\": true, \"use_regex\": true}";

static bool write_config(const char *dir, const dir_opts *o)
{
    char p[600], buf[2048];
    int n = snprintf(buf, sizeof buf,
        "{\n  \"activation_function\": \"%s\",\n  \"architectures\": [\"GPT2LMHeadModel\"],\n"
        "  \"attn_pdrop\": 0.1,\n  \"bos_token_id\": %d,\n  \"embd_pdrop\": 0.1,\n"
        "  \"eos_token_id\": %d,\n  \"initializer_range\": 0.02,\n  \"layer_norm_epsilon\": 1e-05,\n"
        "  \"model_type\": \"gpt2\",\n  \"n_ctx\": %d,\n  \"n_embd\": %d,\n  \"n_head\": %d,\n"
        "  \"n_inner\": null,\n  \"n_layer\": %d,\n  \"n_positions\": %d,\n"
        "  \"reorder_and_upcast_attn\": false,\n  \"resid_pdrop\": 0.1,\n"
        "  \"scale_attn_by_inverse_layer_idx\": false,\n  \"scale_attn_weights\": true,\n"
        "  \"summary_activation\": null,\n  \"summary_first_dropout\": 0.1,\n"
        "  \"tie_word_embeddings\": %s,\n"
        "  \"torch_dtype\": \"float32\",\n  \"use_cache\": true,\n  \"vocab_size\": %d\n}\n",
        o->activation ? o->activation : "gelu_new", V - 1, V - 1, T, C, H, L,
        o->n_positions ? o->n_positions : T, o->untied ? "false" : "true", V);
    path_of(p, sizeof p, dir, "config.json");
    return write_file(p, buf, (size_t)n);
}

/* A whole directory: config.json, the weights, vocab.json + merges.txt. */
static bool write_dir(const char *dir, const dir_opts *o)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", root, dir);
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
    bool ok = write_config(dir, o) && write_vocab(dir);
    if (!o->shards) {
        path_of(p, sizeof p, dir, "model.safetensors");
        return ok && write_safetensors(p, 0, n_tensors, o, true);
    }
    text idx = {0};
    put(&idx, "{\"metadata\": {\"total_size\": 0}, \"weight_map\": {");
    for (int s = 0; s < o->shards; s++) {
        char file[64];
        snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", s + 1, o->shards);
        const int a = n_tensors * s / o->shards, b = n_tensors * (s + 1) / o->shards;
        path_of(p, sizeof p, dir, file);
        ok = ok && write_safetensors(p, a, b, o, s == o->shards - 1);
        for (int i = a; i < b; i++)
            put(&idx, "%s\"%s%s\": \"%s\"", i ? ", " : "", o->prefix ? "transformer." : "",
                tensors[i].name, file);
    }
    if (o->masks)
        for (int l = 0; l < L; l++)
            put(&idx, ", \"%sh.%d.attn.bias\": \"model-%05d-of-%05d.safetensors\", "
                "\"%sh.%d.attn.masked_bias\": \"model-%05d-of-%05d.safetensors\"",
                o->prefix ? "transformer." : "", l, o->shards, o->shards,
                o->prefix ? "transformer." : "", l, o->shards, o->shards);
    put(&idx, "}}");
    path_of(p, sizeof p, dir, "model.safetensors.index.json");
    ok = ok && write_file(p, idx.p, idx.n);
    free(idx.p);
    return ok;
}

/* ------------------------------------------------------------ checks */

static ngpt_context *load(const char *path, int threads)
{
    ngpt_config cfg;
    ngpt_context *ctx = NULL;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads;
    if (ngpt_checkpoint_config(path, &cfg) || ngpt_context_init(&ctx, &cfg, &s, NULL, 0) ||
        ngpt_checkpoint_load(ctx, path)) {
        fprintf(stderr, "load %s: %s\n", path, ngpt_last_error());
        ngpt_context_free(ctx);
        return NULL;
    }
    return ctx;
}

/* The ngpt name of each Hugging Face tensor, and whether it is transposed. */
static bool ngpt_name(const char *hf, char *out, size_t size, bool *transpose)
{
    static const char *const map[][2] = {
        {"ln_1.weight", "ln1.weight"}, {"ln_1.bias", "ln1.bias"},
        {"attn.c_attn.weight", "attn.qkv.weight"}, {"attn.c_attn.bias", "attn.qkv.bias"},
        {"attn.c_proj.weight", "attn.proj.weight"}, {"attn.c_proj.bias", "attn.proj.bias"},
        {"ln_2.weight", "ln2.weight"}, {"ln_2.bias", "ln2.bias"},
        {"mlp.c_fc.weight", "mlp.fc1.weight"}, {"mlp.c_fc.bias", "mlp.fc1.bias"},
        {"mlp.c_proj.weight", "mlp.fc2.weight"}, {"mlp.c_proj.bias", "mlp.fc2.bias"}};
    *transpose = false;
    if (!strcmp(hf, "wte.weight")) return snprintf(out, size, "tok_emb.weight"), true;
    if (!strcmp(hf, "wpe.weight")) return snprintf(out, size, "pos_emb.weight"), true;
    if (!strcmp(hf, "ln_f.weight") || !strcmp(hf, "ln_f.bias"))
        return snprintf(out, size, "ln_f.%s", hf + 5), true;
    int l, used = 0;
    if (sscanf(hf, "h.%d.%n", &l, &used) != 1 || !used) return false;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(hf + used, map[i][0])) {
            snprintf(out, size, "blocks.%d.%s", l, map[i][1]);
            *transpose = strstr(hf, ".weight") && strncmp(hf + used, "ln_", 3);
            return true;
        }
    return false;
}

/* Every parameter of the imported model equals the value written (but
 * `unlisted` of them, which the caller checks: an untied lm_head). */
static void check_params(const char *label, const char *model, size_t unlisted)
{
    ngpt_context *ctx = load(model, 1);
    CHECK(ctx != NULL, "%s: the import loads", label);
    if (!ctx) return;
    float *p;
    size_t count;
    CHECK_OK(ngpt_params_data(ctx, &p, &count));
    size_t seen = 0, wrong = 0;
    for (int i = 0; i < n_tensors; i++) {
        const hf_tensor *t = &tensors[i];
        char name[64];
        bool tr;
        ngpt_tensor_info info;
        if (!ngpt_name(t->name, name, sizeof name, &tr) || ngpt_tensor_find(ctx, name, &info)) {
            CHECK(false, "%s: %s has no ngpt tensor", label, t->name);
            continue;
        }
        seen += info.count;
        const int rows = info.shape[0], cols = info.ndim > 1 ? info.shape[1] : 1;
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                const float want = tr ? t->val[(size_t)c * rows + r] : t->val[(size_t)r * cols + c];
                const float got = p[info.offset + (size_t)r * cols + c];
                wrong += memcmp(&want, &got, 4) != 0;
            }
    }
    CHECK(seen + unlisted == count && wrong == 0, "%s: %zu of %zu parameters differ from the file's (%zu "
          "of %zu compared)", label, wrong, count, seen, count);
    ngpt_context_free(ctx);
}

static uint64_t logits_hash(const char *model, int threads)
{
    ngpt_context *ctx = load(model, threads);
    uint64_t h = 0;
    int32_t tokens[T];
    for (int i = 0; i < T; i++) tokens[i] = (i * 7 + 3) % V;
    if (ctx && !ngpt_model_forward(ctx, tokens, 1, T, NULL, NULL)) ngpt_logits_checksum(ctx, &h);
    ngpt_context_free(ctx);
    return h;
}

static uint64_t tokenizer_sum(const char *model)
{
    ngpt_tokenizer *tok = NULL;
    ngpt_tokenizer_info info = {0};
    if (ngpt_checkpoint_tokenizer(model, &tok) || !tok || ngpt_tokenizer_describe(tok, &info))
        fprintf(stderr, "tokenizer of %s: %s\n", model, ngpt_last_error());
    ngpt_tokenizer_free(tok);
    return info.checksum;
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static ngpt_status import_dir(const char *dir, const char *out, ngpt_weights store)
{
    char d[600], o[600];
    snprintf(d, sizeof d, "%s/%s", root, dir);
    snprintf(o, sizeof o, "%s/%s", root, out);
    ngpt_import_options opt = ngpt_import_options_default();
    opt.store = store;
    return ngpt_import_hf(d, &opt, o);
}

/* The F32 model in every layout: the same parameters; one golden. */
static void good_dirs(void)
{
    static const struct { const char *dir; dir_opts o; } cases[] = {
        {"f32", {.dt = DT_F32}},
        {"f32_prefix", {.dt = DT_F32, .prefix = true, .masks = true, .lm_head = true}},
        {"f32_sharded", {.dt = DT_F32, .shards = 3, .masks = true}},
        {"f16", {.dt = DT_F16}},
        {"bf16_prefix", {.dt = DT_BF16, .prefix = true, .masks = true}},
        {"bf16_sharded", {.dt = DT_BF16, .shards = 2, .prefix = true}},
    };
    char out[600], first[600];
    uint64_t golden = 0, tok_sum = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        make_model(27, cases[c].o.dt);
        CHECK(write_dir(cases[c].dir, &cases[c].o), "write %s", cases[c].dir);
        char name[64];
        snprintf(name, sizeof name, "%s.ngpt", cases[c].dir);
        snprintf(out, sizeof out, "%s/%s", root, name);
        CHECK_OK(import_dir(cases[c].dir, name, NGPT_WEIGHTS_F32));
        check_params(cases[c].dir, out, 0);
        const uint64_t h = logits_hash(out, 1);
        if (cases[c].o.dt == DT_F32) {
            if (!golden) golden = h, tok_sum = tokenizer_sum(out), snprintf(first, sizeof first, "%s", out);
            CHECK(h == golden, "%s: logits %016" PRIx64 ", the plain F32 import's %016" PRIx64,
                  cases[c].dir, h, golden);
            CHECK(test_same_file(out, first), "%s imports to the same file as f32", cases[c].dir);
        }
        CHECK(tokenizer_sum(out) == tok_sum, "%s: the same tokenizer", cases[c].dir);
    }
    printf("logits of the f32 import: %016" PRIx64 "\n", golden);
    if (GOLDEN_LOGITS) CHECK_HASH(golden, GOLDEN_LOGITS);
    CHECK(logits_hash(first, 3) == golden, "3 threads: the same logits");

    /* the 8-bit import is what ngpt quantize makes of the float32 one */
    snprintf(out, sizeof out, "%s/f32_q8.ngpt", root);
    CHECK_OK(import_dir("f32", "f32_q8.ngpt", NGPT_WEIGHTS_Q8));
    char quantized[600];
    snprintf(quantized, sizeof quantized, "%s/quantized.ngpt", root);
    ngpt_config cfg;
    ngpt_context *ctx = NULL;
    ngpt_tokenizer *tok = NULL;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = 1;
    CHECK_OK(ngpt_checkpoint_config(first, &cfg));
    cfg.weights = NGPT_WEIGHTS_Q8;
    CHECK_OK(ngpt_context_init(&ctx, &cfg, &s, NULL, 0));
    CHECK_OK(ngpt_checkpoint_tokenizer(first, &tok));
    CHECK_OK(ngpt_context_tokenizer_set(ctx, tok));
    CHECK_OK(ngpt_checkpoint_load(ctx, first));
    CHECK_OK(ngpt_checkpoint_save(ctx, quantized));
    ngpt_context_free(ctx);
    ngpt_tokenizer_free(tok);
    CHECK(test_same_file(out, quantized), "the q8 import is ngpt quantize's file, byte for byte");
    const uint64_t hq = logits_hash(out, 1);
    printf("logits of the q8 import: %016" PRIx64 "\n", hq);
    if (GOLDEN_LOGITS_Q8) CHECK_HASH(hq, GOLDEN_LOGITS_Q8);
    CHECK(logits_hash(out, 2) == hq, "q8, 2 threads: the same logits");
}

/* The progress callback: an import reports its bytes as it writes, makes
 * the same file, and cancelled leaves the previous file as it was. */
static int progress_calls, progress_cancel_at;
static bool on_progress(ngpt_progress_stage stage, uint64_t done, uint64_t total, void *user)
{
    (void)user;
    progress_calls++;
    CHECK(stage == NGPT_PROGRESS_WRITE && done <= total, "progress %d: %llu of %llu", (int)stage,
          (unsigned long long)done, (unsigned long long)total);
    return progress_calls != progress_cancel_at;
}

static void import_progress(void)
{
    char first[600], again[600];
    snprintf(first, sizeof first, "%s/f32.ngpt", root);
    snprintf(again, sizeof again, "%s/f32_again.ngpt", root);
    ngpt_progress_callback_set(on_progress, NULL);
    CHECK_OK(import_dir("f32", "f32_again.ngpt", NGPT_WEIGHTS_F32));
    CHECK(progress_calls > 1 && test_same_file(again, first),
          "a watched import: %d reports, the same file", progress_calls);
    progress_calls = 0, progress_cancel_at = 2;
    CHECK_STATUS(import_dir("f32", "f32.ngpt", NGPT_WEIGHTS_Q8), NGPT_ERR_STOPPED);
    CHECK(strstr(ngpt_last_error(), "ngpt_import_hf: cancelled by the progress callback") &&
              strstr(ngpt_last_error(), "unchanged") && test_same_file(again, first),
          "a cancelled import: %s", ngpt_last_error());
    ngpt_progress_callback_set(NULL, NULL);
}

/* FTZ + DAZ + round toward zero, with a sticky flag set (test_fpmode.c's). */
static ngpt_fpmode hostile_mode(void)
{
    ngpt_fpmode m = ngpt_fpmode_get();
#if defined(__x86_64__) || defined(__i386__)
    m.reg = 0x1F80u | 0x8000u | 0x0040u | 0x6000u | 0x0020u;
#elif defined(__aarch64__)
    m.fpcr = (1u << 24) | (3u << 22);
    m.fpsr = 0x10u;
#elif defined(__arm__)
    m.reg = (1u << 24) | (3u << 22) | 0x10u;
#endif
    return m;
}

static bool same_mode(const ngpt_fpmode *a, const ngpt_fpmode *b)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__arm__)
    return a->reg == b->reg;
#elif defined(__aarch64__)
    return a->fpcr == b->fpcr && a->fpsr == b->fpsr;
#else
    (void)a, (void)b;
    return true;
#endif
}

/* A caller in a hostile floating-point mode gets the same files (the F16
 * model has subnormal values; the 8-bit import divides and rounds) and its
 * mode back. */
static void caller_mode(void)
{
    char normal[600], hostile[600];
    snprintf(normal, sizeof normal, "%s/f16_q8.ngpt", root);
    snprintf(hostile, sizeof hostile, "%s/f16_q8_hostile.ngpt", root);
    CHECK_OK(import_dir("f16", "f16_q8.ngpt", NGPT_WEIGHTS_Q8));
    const ngpt_fpmode caller = hostile_mode();
    ngpt_fpmode_set(&caller);
    const ngpt_status st = import_dir("f16", "f16_q8_hostile.ngpt", NGPT_WEIGHTS_Q8);
    const ngpt_fpmode after = ngpt_fpmode_get();
    ngpt_fpmode_set_library();
    CHECK(st == NGPT_OK, "import in a hostile mode: %s", ngpt_last_error());
    CHECK(same_mode(&after, &caller), "ngpt_import_hf changed the caller's mode");
    CHECK(test_same_file(normal, hostile), "the same 8-bit file in the caller's hostile mode");
}

/* tie_word_embeddings false: lm_head.weight is the model's own (here -wte). */
static void untied(void)
{
    char out[600];
    make_model(27, DT_F32);
    CHECK(write_dir("untied", &(dir_opts){.lm_head = true, .lm_head_neg = true, .untied = true}),
          "write untied");
    snprintf(out, sizeof out, "%s/untied.ngpt", root);
    CHECK_OK(import_dir("untied", "untied.ngpt", NGPT_WEIGHTS_F32));
    check_params("untied", out, (size_t)V * C);
    ngpt_context *ctx = load(out, 1);
    ngpt_tensor_info head;
    float *p;
    size_t count, wrong = 0;
    if (!ctx || ngpt_tensor_find(ctx, "lm_head.weight", &head) || ngpt_params_data(ctx, &p, &count)) {
        CHECK(false, "untied: lm_head.weight: %s", ngpt_last_error());
    } else {
        for (size_t i = 0; i < head.count; i++) wrong += p[head.offset + i] != -tensors[0].val[i];
        CHECK(wrong == 0 && head.count == (size_t)V * C, "untied: lm_head.weight is the file's "
              "(%zu differ)", wrong);
    }
    ngpt_context_free(ctx);
}

/* tokenizer.json in both merge forms gives vocab.json + merges.txt's tokenizer. */
static void tokenizer_json(void)
{
    char d[600], o[600], ref[600], p[600];
    snprintf(ref, sizeof ref, "%s/f32.ngpt", root);
    const uint64_t want = tokenizer_sum(ref);
    for (int pairs = 0; pairs < 2; pairs++) {
        make_model(27, DT_F32);
        dir_opts opt = {.dt = DT_F32};
        CHECK(write_dir("tokjson", &opt), "write tokjson");
        path_of(p, sizeof p, "tokjson", "vocab.json");
        unlink(p);
        path_of(p, sizeof p, "tokjson", "merges.txt");
        unlink(p);
        CHECK(write_tokenizer_json("tokjson", pairs, GPT2_PRE), "write tokenizer.json");
        snprintf(d, sizeof d, "%s/tokjson", root);
        snprintf(o, sizeof o, "%s/tokjson.ngpt", root);
        CHECK_OK(ngpt_import_hf(d, NULL, o));
        CHECK(tokenizer_sum(o) == want, "tokenizer.json (%s merges) is vocab.json + merges.txt's "
              "tokenizer", pairs ? "pair" : "string");
        CHECK(test_same_file(o, ref), "the same file as from vocab.json + merges.txt");
    }
    /* a foreign pre-tokenizer or normalizer is refused by name */
    static const char *const foreign[] = {
        "{\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true}",
        "{\"type\": \"Whitespace\"}",
        "{\"type\": \"Sequence\", \"pretokenizers\": []}",
    };
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        CHECK(write_tokenizer_json("tokjson", false, foreign[i]), "write");
        unlink(o);
        CHECK_STATUS(ngpt_import_hf(d, NULL, o), NGPT_ERR_UNSUPPORTED);
        CHECK(strstr(ngpt_last_error(), i == 0 ? "add_prefix_space" : i == 1 ? "Whitespace" : "Sequence"),
              "the message names it: %s", ngpt_last_error());
        CHECK(!exists(o), "nothing written");
    }
    /* files named one by one, no directory */
    const char *w[1];
    char cfgp[600], wp[600], vp[600], mp[600];
    path_of(cfgp, sizeof cfgp, "f32_sharded", "config.json");
    path_of(wp, sizeof wp, "f32_sharded", "model.safetensors.index.json");
    path_of(vp, sizeof vp, "f32", "vocab.json");
    path_of(mp, sizeof mp, "f32", "merges.txt");
    w[0] = wp;
    ngpt_import_options opt = ngpt_import_options_default();
    opt.config = cfgp, opt.weights = w, opt.n_weights = 1, opt.vocab = vp, opt.merges = mp;
    snprintf(o, sizeof o, "%s/named.ngpt", root);
    CHECK_OK(ngpt_import_hf(NULL, &opt, o));
    CHECK(test_same_file(o, ref), "files named one by one: the same file");
}

/* One bad directory: refused with one line naming ngpt_import_hf (and
 * `needle`), nothing written. */
static void refused(const char *dir, const dir_opts *o, ngpt_status want, const char *needle)
{
    char out[600];
    make_model(27, o->dt);
    CHECK(write_dir(dir, o), "write %s", dir);
    snprintf(out, sizeof out, "%s/%s.ngpt", root, dir);
    ngpt_status st = import_dir(dir, strrchr(out, '/') + 1, NGPT_WEIGHTS_F32);
    const char *msg = ngpt_last_error();
    CHECK(st == want, "%s: %s (want %s): %s", dir, ngpt_status_string(st), ngpt_status_string(want), msg);
    CHECK(!strncmp(msg, "ngpt_import_hf: ", 16) && !strchr(msg, '\n') && strstr(msg, needle),
          "%s: one line naming ngpt_import_hf and \"%s\": %s", dir, needle, msg);
    CHECK(!exists(out), "%s: nothing written", dir);
}

static void bad_dirs(void)
{
    refused("truncated", &(dir_opts){.sp = SP_TRUNCATED}, NGPT_ERR_BAD_FORMAT, "truncated");
    refused("dtype", &(dir_opts){.sp = SP_DTYPE}, NGPT_ERR_BAD_FORMAT, "is I32");
    refused("dtype16", &(dir_opts){.dt = DT_BF16, .sp = SP_DTYPE}, NGPT_ERR_BAD_FORMAT, "is I16");
    refused("past_end", &(dir_opts){.sp = SP_PAST_END}, NGPT_ERR_BAD_FORMAT, "past the end");
    refused("overlap", &(dir_opts){.sp = SP_OVERLAP}, NGPT_ERR_BAD_FORMAT, "overlaps");
    refused("hole", &(dir_opts){.sp = SP_HOLE}, NGPT_ERR_BAD_FORMAT, "hole");
    refused("duplicate", &(dir_opts){.sp = SP_DUPLICATE}, NGPT_ERR_BAD_FORMAT, "named twice");
    refused("span", &(dir_opts){.sp = SP_SPAN}, NGPT_ERR_BAD_FORMAT, "spans");
    refused("bad_json", &(dir_opts){.sp = SP_BAD_JSON}, NGPT_ERR_BAD_FORMAT, "not valid JSON");
    refused("big_header", &(dir_opts){.sp = SP_BIG_HEADER}, NGPT_ERR_BAD_FORMAT, "100,000,000");
    refused("extra", &(dir_opts){.sp = SP_EXTRA_TENSOR}, NGPT_ERR_BAD_FORMAT, "h.0.attn.rotary");
    refused("shape", &(dir_opts){.n_positions = T / 2}, NGPT_ERR_BAD_FORMAT, "wpe.weight");
    refused("shard_bad", &(dir_opts){.shards = 2, .sp = SP_HOLE}, NGPT_ERR_BAD_FORMAT, "hole");
    refused("activation", &(dir_opts){.activation = "relu"}, NGPT_ERR_UNSUPPORTED, "relu");
    refused("lm_head", &(dir_opts){.lm_head = true, .lm_head_neg = true}, NGPT_ERR_BAD_FORMAT,
            "differs from wte.weight");
    refused("no_lm_head", &(dir_opts){.untied = true}, NGPT_ERR_BAD_FORMAT, "lm_head.weight");
    refused("gelu_fast", &(dir_opts){.activation = "gelu_fast"}, NGPT_ERR_UNSUPPORTED, "gelu_fast");

    /* a config.json that is not JSON, and one that says another epsilon */
    char p[600];
    dir_opts ok = {0};
    make_model(27, DT_F32);
    CHECK(write_dir("cfg", &ok), "write cfg");
    path_of(p, sizeof p, "cfg", "config.json");
    CHECK(write_file(p, "{\"model_type\": \"gpt2\", ", 24), "write");
    CHECK_STATUS(import_dir("cfg", "cfg.ngpt", NGPT_WEIGHTS_F32), NGPT_ERR_BAD_FORMAT);
    CHECK(strstr(ngpt_last_error(), "not valid JSON"), "%s", ngpt_last_error());
    static const char *const refuse[][2] = {
        {"{\"model_type\": \"gpt2\", \"layer_norm_epsilon\": 1e-6}", "layer_norm_epsilon"},
        {"{\"model_type\": \"gpt2\", \"scale_attn_by_inverse_layer_idx\": true}", "scale_attn_by_inverse_layer_idx"},
        {"{\"model_type\": \"llama\"}", "llama"},
        {"{\"model_type\": \"gpt2\", \"activation_function\": \"silu\"}", "silu"},
        {"{\"model_type\": \"gpt2\", \"scale_attn_weights\": false}", "scale_attn_weights"},
    };
    ngpt_config cfg;
    for (size_t i = 0; i < sizeof refuse / sizeof refuse[0]; i++) {
        ngpt_status st = ngpt_import_hf_config_mem(refuse[i][0], strlen(refuse[i][0]), &cfg);
        CHECK(st == NGPT_ERR_UNSUPPORTED && strstr(ngpt_last_error(), refuse[i][1]) &&
              !strncmp(ngpt_last_error(), "ngpt_import_hf_config_mem: ", 27),
              "%s: %s", refuse[i][0], ngpt_last_error());
    }
    static const char *const malformed[] = {
        "{\"model_type\": \"gpt2\", \"n_embd\": 64.5}", "{\"model_type\": \"gpt2\", \"n_head\": -1}",
        "{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_embd\": 128}", "[1, 2]", "{} x",
        "{\"model_type\": \"gpt2\", \"n_embd\": 65, \"n_head\": 4}",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        ngpt_status st = ngpt_import_hf_config_mem(malformed[i], strlen(malformed[i]), &cfg);
        CHECK(st != NGPT_OK && !strncmp(ngpt_last_error(), "ngpt_import_hf_config_mem: ", 27),
              "%s: %s", malformed[i], ngpt_last_error());
    }
}

/* The published configs (their config.json, abridged to what ngpt reads
 * plus a few it ignores) and their published parameter counts. */
static void published_configs(void)
{
    static const struct { const char *name; int layers, embd, heads; size_t params; } models[] = {
        {"gpt2", 12, 768, 12, 124439808u},
        {"gpt2-medium", 24, 1024, 16, 354823168u},
        {"gpt2-large", 36, 1280, 20, 774030080u},
        {"gpt2-xl", 48, 1600, 25, 1557611200u},
        {"distilgpt2", 6, 768, 12, 81912576u},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char json[1024];
        int n = snprintf(json, sizeof json,
            "{\"activation_function\": \"gelu_new\", \"architectures\": [\"GPT2LMHeadModel\"], "
            "\"attn_pdrop\": 0.1, \"bos_token_id\": 50256, \"embd_pdrop\": 0.1, "
            "\"eos_token_id\": 50256, \"initializer_range\": 0.02, \"layer_norm_epsilon\": 1e-05, "
            "\"model_type\": \"gpt2\", \"n_ctx\": 1024, \"n_embd\": %d, \"n_head\": %d, "
            "\"n_layer\": %d, \"n_positions\": 1024, \"resid_pdrop\": 0.1, "
            "\"summary_activation\": null, \"summary_first_dropout\": 0.1, "
            "\"summary_proj_to_labels\": true, \"summary_type\": \"cls_index\", "
            "\"summary_use_proj\": true, \"task_specific_params\": {\"text-generation\": "
            "{\"do_sample\": true, \"max_length\": 50}}, \"vocab_size\": 50257}",
            models[i].embd, models[i].heads, models[i].layers);
        ngpt_config cfg;
        size_t params = 0, f32 = 0, q8 = 0;
        CHECK_OK(ngpt_import_hf_config_mem(json, (size_t)n, &cfg));
        CHECK_OK(ngpt_config_param_count(&cfg, &params));
        CHECK(params == models[i].params, "%s: %zu parameters, published %zu", models[i].name,
              params, models[i].params);
        CHECK(cfg.vocab_size == 50257 && cfg.context_len == 1024 && cfg.d_ff == 4 * models[i].embd &&
              cfg.gelu == NGPT_GELU_TANH && cfg.proj_bias && cfg.qkv_bias && cfg.tie_lm_head &&
              cfg.pos == NGPT_POS_LEARNED && cfg.final_norm && cfg.norm == NGPT_NORM_PRE,
              "%s: GPT-2's switches", models[i].name);
        /* (a 32-bit machine cannot address gpt2-xl's float32 arena: overflow) */
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        ngpt_status st = ngpt_arena_size(&cfg, &s, &f32);
        CHECK(st == NGPT_OK || (sizeof(size_t) < 8 && st == NGPT_ERR_OVERFLOW), "%s: f32 arena: %s",
              models[i].name, ngpt_last_error());
        cfg.weights = NGPT_WEIGHTS_Q8;
        st = ngpt_arena_size(&cfg, &s, &q8);
        CHECK(st == NGPT_OK || (sizeof(size_t) < 8 && st == NGPT_ERR_OVERFLOW), "%s: q8 arena: %s",
              models[i].name, ngpt_last_error());
        size_t train = 0;
        ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
        ts.batch = 4, ts.seq = 256;
        cfg.weights = NGPT_WEIGHTS_F32;
        st = ngpt_arena_size(&cfg, &ts, &train);
        CHECK(st == NGPT_OK || (sizeof(size_t) < 8 && st == NGPT_ERR_OVERFLOW), "%s: train arena: %s",
              models[i].name, ngpt_last_error());
        printf("%-12s %13zu parameters; arena: infer B=1 T=1024 f32 %6.1f MiB, q8 %6.1f MiB; "
               "train B=4 T=256 %7.1f MiB\n", models[i].name, params, f32 / 1048576.0,
               q8 / 1048576.0, train / 1048576.0);
    }
}

static void api_defaults(void)
{
    ngpt_import_options o = ngpt_import_options_default();
    CHECK(o.store == NGPT_WEIGHTS_F32 && !o.config && !o.weights && !o.vocab && !o.merges &&
          !o.tokenizer_json, "defaults: everything from the directory, float32");
}

/* test_import --write DIR: DIR/gpt2 (F32, bare names) and DIR/gpt2_bf16
 * (BF16, "transformer.", 2 shards), for tests/test_cli_import.sh. */
static int write_only(const char *dir)
{
    snprintf(root, sizeof root, "%s", dir);
    make_tokenizer();
    make_model(27, DT_F32);
    bool ok = write_dir("gpt2", &(dir_opts){.dt = DT_F32});
    make_model(27, DT_BF16);
    ok = ok && write_dir("gpt2_bf16", &(dir_opts){.dt = DT_BF16, .prefix = true, .shards = 2});
    free_tensors();
    if (!ok) fprintf(stderr, "test_import: cannot write %s\n", dir);
    return !ok;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_only(argv[2]);
    snprintf(root, sizeof root, "%s/ngpt-test-import-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    make_tokenizer();
    api_defaults();
    good_dirs();
    import_progress();
    caller_mode();
    untied();
    tokenizer_json();
    bad_dirs();
    published_configs();
    free_tensors();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (test_failed == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return test_summary("test_import");
}
