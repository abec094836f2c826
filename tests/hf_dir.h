/* hf_dir.h — small Hugging Face GPT-2 directories written by the tests
 * themselves (test_import, test_fpmode): config.json, safetensors in F32,
 * F16 or BF16 (with or without the "transformer." prefix, sharded with an
 * index, or spoilt in one of the ways `spoil` lists), vocab.json +
 * merges.txt or tokenizer.json of a tiny byte-level BPE, with random
 * weights from a fixed seed. Usage: set root (the parent folder), call
 * make_tokenizer() once, then make_model(seed, dtype) and
 * write_dir(name, &opts); free_tensors() at the end. The values written
 * are kept in hf_tensors[] (as float32) for the tests to compare. */
#ifndef NGPT_TEST_HF_DIR_H
#define NGPT_TEST_HF_DIR_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The model's shape: V tokens (256 bytes, N_MERGES merges, <|endoftext|>),
 * T positions, C channels, L layers, H heads, F the MLP's width. */
enum { V = 300, T = 32, C = 64, L = 2, H = 4, F = 4 * C, N_MERGES = V - 257 };

static char root[512];          /* the folder the directories are written in */

/* ------------------------------------------------------------ values */

static uint64_t rng;
static inline uint64_t next_u64(void)     /* splitmix64 */
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline float uniform(void) { return (float)(next_u64() >> 40) * 0x1p-24f * 2.0f - 1.0f; }

enum { DT_F32, DT_F16, DT_BF16 };
static const char *const dt_name[] = {"F32", "F16", "BF16"};
static const int dt_bytes[] = {4, 2, 2};

/* A half's value, written out from IEEE 754's definition (not the
 * library's converter): e = 0: m 2^-24; else (1024 + m) 2^(e - 25). */
static inline float half_value(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const float v = e ? ldexpf((float)(1024 + m), e - 25) : ldexpf((float)m, -24);
    return h & 0x8000 ? -v : v;
}

/* x cut to a half (truncated; |x| < 65504): its bits. */
static inline uint16_t half_bits(float x)
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
    char name[96];
    int ndim;
    int shape[2];
    size_t count;
    float *val;
    unsigned char *bytes;
} hf_tensor;

static hf_tensor hf_tensors[64];
static int n_hf_tensors;

/* kind: 'w' ~ U(-0.1, 0.1), 'g' a LayerNorm gain ~ 1 + U(-0.2, 0.2),
 * 'b' a bias ~ U(-0.02, 0.02); a few F16 values are subnormal. */
static inline void add(const char *name, int rows, int cols, char kind, int dt)
{
    hf_tensor *t = &hf_tensors[n_hf_tensors++];
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

static inline void free_tensors(void)
{
    for (int i = 0; i < n_hf_tensors; i++) free(hf_tensors[i].val), free(hf_tensors[i].bytes);
    n_hf_tensors = 0;
}

/* GPT-2's state_dict for the test's shape, drawn from seed. */
static inline void make_model(uint64_t seed, int dt)
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

static inline bool write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    const bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static inline void path_of(char *buf, size_t size, const char *dir, const char *file)
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
typedef struct hf_text { char *p; size_t n, cap; } hf_text;
static inline void put(hf_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void put(hf_text *t, const char *fmt, ...)
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

/* One safetensors file of hf_tensors [first, last) (+ extras), spoilt as asked. */
static inline bool write_safetensors(const char *path, int first, int last, const dir_opts *o,
                              bool extras)
{
    hf_text h = {0};
    size_t off = 0, data_bytes = 0;
    const int eb = dt_bytes[o->dt];
    put(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = first; i < last; i++) {
        const hf_tensor *t = &hf_tensors[i];
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
        const hf_tensor *t = &hf_tensors[first];
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
        fwrite(hf_tensors[i].bytes, (size_t)eb, hf_tensors[i].count, f);
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
        for (size_t i = 0; i < hf_tensors[0].count; i++) {
            unsigned char e[4];
            memcpy(e, hf_tensors[0].bytes + i * (size_t)eb, (size_t)eb);
            e[eb - 1] ^= o->lm_head_neg ? 0x80 : 0;     /* the sign bit */
            fwrite(e, (size_t)eb, 1, f);
        }
    if (o->sp == SP_EXTRA_TENSOR || o->sp == SP_DUPLICATE) {
        const size_t n = o->sp == SP_DUPLICATE ? hf_tensors[first].count * (size_t)eb : 16;
        fwrite(hf_tensors[first].bytes, 1, n, f);
    }
    free(h.p);
    long end = ftell(f);
    bool ok = fclose(f) == 0;
    if (o->sp == SP_TRUNCATED) ok = ok && truncate(path, end - 10) == 0;
    return ok;
}

/* GPT-2's byte characters: the character of byte b (UTF-8 into out). */
static inline int byte_char(int b, char out[4])
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

static inline void make_tokenizer(void)
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
static inline void put_json_string(hf_text *t, const char *s)
{
    put(t, "\"");
    for (; *s; s++) put(t, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
    put(t, "\"");
}

static inline bool write_vocab(const char *dir)
{
    char p[600];
    hf_text v = {0}, m = {0};
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
 * pre_tokenizer's JSON. "<|endoftext|>" only among the added tokens; chat:
 * the last two merges give their ids (V-3, V-2) to the added tokens
 * "<|im_start|>" and "<|im_end|>" instead (V unchanged). */
static inline bool write_tokenizer_json_chat(const char *dir, bool pair_merges, const char *pre,
                                             bool chat)
{
    char p[600];
    hf_text t = {0};
    const int n_merges = chat ? N_MERGES - 2 : N_MERGES;
    put(&t, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": [");
    if (chat)
        for (int i = 0; i < 2; i++)
            put(&t, "{\"id\": %d, \"content\": \"%s\", \"single_word\": false, \"lstrip\": "
                    "false, \"rstrip\": false, \"normalized\": false, \"special\": true}, ",
                V - 3 + i, i ? "<|im_end|>" : "<|im_start|>");
    put(&t, "{\"id\": %d, \"content\": \"<|endoftext|>\", \"single_word\": false, \"lstrip\": "
            "false, \"rstrip\": false, \"normalized\": true, \"special\": true}], "
            "\"normalizer\": null, \"pre_tokenizer\": %s, \"post_processor\": {\"type\": "
            "\"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": false, \"use_regex\": "
            "true}, \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
            "\"trim_offsets\": true, \"use_regex\": true}, \"model\": {\"type\": \"BPE\", "
            "\"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": \"\", "
            "\"end_of_word_suffix\": \"\", \"fuse_unk\": false, \"byte_fallback\": false, "
            "\"vocab\": {", V - 1, pre);
    for (int i = 0; i < 256 + n_merges; i++) {
        put(&t, i ? ", " : "");
        put_json_string(&t, tok_chars[i]);
        put(&t, ": %d", i);
    }
    put(&t, "}, \"merges\": [");
    for (int k = 0; k < n_merges; k++) {
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

static inline bool write_tokenizer_json(const char *dir, bool pair_merges, const char *pre)
{
    return write_tokenizer_json_chat(dir, pair_merges, pre, false);
}

static inline bool write_config(const char *dir, const dir_opts *o)
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

/* ------------------------------------------------------------ Llama */

/* A small Llama (LlamaForCausalLM's names): C channels, H query heads of
 * LD, LKV key/value heads (grouped-query attention 2:1), LF the MLP's
 * width; the GPT-2 test's tokenizer (V) and layers (L). */
enum { LH = 4, LKV = 2, LD = 24, LF = 96 };

/* Llama's state_dict for that shape, drawn from seed; untied adds lm_head.
 * make_llama_as: kind 2 adds Qwen2's q, k and v biases, kind 3 Qwen3's
 * per-head q and k norms (LD each), kind 4 Gemma 3's (those norms and its
 * four a block, weights w of 1 + w near 0); rows rows of the embedding
 * (and the lm_head): V, or more (Qwen's rows without a token). */
static inline void make_llama_as(uint64_t seed, int dt, bool untied, int kind, int rows)
{
    char n[64];
    rng = seed;
    free_tensors();
    add("model.embed_tokens.weight", rows, C, 'w', dt);
    const char g = kind == 4 ? 'w' : 'g';      /* a norm's weight */
    for (int l = 0; l < L; l++) {
#define ADD(suffix, r, c, kind) \
    (snprintf(n, sizeof n, "model.layers.%d.%s", l, suffix), add(n, r, c, kind, dt))
        ADD("input_layernorm.weight", C, 0, g);
        ADD("self_attn.q_proj.weight", LH * LD, C, 'w');
        ADD("self_attn.k_proj.weight", LKV * LD, C, 'w');
        ADD("self_attn.v_proj.weight", LKV * LD, C, 'w');
        if (kind == 2) {
            ADD("self_attn.q_proj.bias", LH * LD, 0, 'w');
            ADD("self_attn.k_proj.bias", LKV * LD, 0, 'w');
            ADD("self_attn.v_proj.bias", LKV * LD, 0, 'w');
        }
        ADD("self_attn.o_proj.weight", C, LH * LD, 'w');
        if (kind >= 3) {
            ADD("self_attn.q_norm.weight", LD, 0, g);
            ADD("self_attn.k_norm.weight", LD, 0, g);
        }
        ADD("post_attention_layernorm.weight", C, 0, g);
        if (kind == 4) ADD("pre_feedforward_layernorm.weight", C, 0, g);
        ADD("mlp.gate_proj.weight", LF, C, 'w');
        ADD("mlp.up_proj.weight", LF, C, 'w');
        ADD("mlp.down_proj.weight", C, LF, 'w');
        if (kind == 4) ADD("post_feedforward_layernorm.weight", C, 0, g);
#undef ADD
    }
    add("model.norm.weight", C, 0, g, dt);
    if (untied) add("lm_head.weight", rows, C, 'w', dt);
}

static inline void make_llama(uint64_t seed, int dt, bool untied)
{
    make_llama_as(seed, dt, untied, 0, V);
}

/* config.json of make_llama's model (as SmolLM2's hub copy writes it),
 * where `extra` (JSON members, each followed by a comma) replaces the
 * members of the keys it names; the weights (o: dtype and spoils; prefix,
 * masks and shards do not apply) and vocab.json + merges.txt. */
static inline bool write_llama_dir(const char *dir, const dir_opts *o, const char *extra)
{
    char p[600], num[7][16];
    snprintf(p, sizeof p, "%s/%s", root, dir);
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
    const int nums[7] = {LD, C, LF, T, LH, L, LKV};
    for (int i = 0; i < 7; i++) snprintf(num[i], sizeof num[i], "%d", nums[i]);
    char vocab[16];
    snprintf(vocab, sizeof vocab, "%d", V);
    const char *const members[][2] = {
        {"architectures", "[\"LlamaForCausalLM\"]"}, {"attention_bias", "false"},
        {"attention_dropout", "0.0"}, {"bos_token_id", "0"}, {"eos_token_id", "0"},
        {"head_dim", num[0]}, {"hidden_act", "\"silu\""}, {"hidden_size", num[1]},
        {"initializer_range", "0.02"}, {"intermediate_size", num[2]},
        {"max_position_embeddings", num[3]}, {"mlp_bias", "false"}, {"model_type", "\"llama\""},
        {"num_attention_heads", num[4]}, {"num_hidden_layers", num[5]},
        {"num_key_value_heads", num[6]}, {"pretraining_tp", "1"}, {"rms_norm_eps", "1e-05"},
        {"rope_scaling", "null"}, {"rope_theta", "100000"},
        {"tie_word_embeddings", o->untied ? "false" : "true"}, {"torch_dtype", "\"bfloat16\""},
        {"use_cache", "true"}, {"vocab_size", vocab},
    };
    hf_text t = {0};
    put(&t, "{%s", extra ? extra : "");
    const size_t n = sizeof members / sizeof members[0];
    size_t last = n - 1;        /* the last member written: no comma after it */
    while (extra && last > 0) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", members[last][0]);
        if (!strstr(extra, quoted)) break;
        last--;
    }
    for (size_t i = 0; i < n; i++) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", members[i][0]);
        if (extra && strstr(extra, quoted)) continue;
        put(&t, "\n  %s: %s%s", quoted, members[i][1], i < last ? "," : "\n}\n");
    }
    path_of(p, sizeof p, dir, "config.json");
    bool ok = write_file(p, t.p, t.n) && write_vocab(dir);
    free(t.p);
    path_of(p, sizeof p, dir, "model.safetensors");
    return ok && write_safetensors(p, 0, n_hf_tensors, o, false);
}

/* A whole directory: config.json, the weights, vocab.json + merges.txt. */
static inline bool write_dir(const char *dir, const dir_opts *o)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", root, dir);
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
    bool ok = write_config(dir, o) && write_vocab(dir);
    if (!o->shards) {
        path_of(p, sizeof p, dir, "model.safetensors");
        return ok && write_safetensors(p, 0, n_hf_tensors, o, true);
    }
    hf_text idx = {0};
    put(&idx, "{\"metadata\": {\"total_size\": 0}, \"weight_map\": {");
    for (int s = 0; s < o->shards; s++) {
        char file[64];
        snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", s + 1, o->shards);
        const int a = n_hf_tensors * s / o->shards, b = n_hf_tensors * (s + 1) / o->shards;
        path_of(p, sizeof p, dir, file);
        ok = ok && write_safetensors(p, a, b, o, s == o->shards - 1);
        for (int i = a; i < b; i++)
            put(&idx, "%s\"%s%s\": \"%s\"", i ? ", " : "", o->prefix ? "transformer." : "",
                hf_tensors[i].name, file);
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

static const char *const GPT2_PRE = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
                                    "\"trim_offsets\": true, \"use_regex\": true}";

/* A SmolLM2-like directory: tokenizer.json with <|im_start|> (V-3),
 * <|im_end|> (V-2) and <|endoftext|> (V-1), no vocab.json + merges.txt. */
static inline bool write_chat_dir(const char *dir)
{
    char p[600];
    make_llama(41, DT_F32, false);
    bool ok = write_llama_dir(dir, &(dir_opts){.dt = DT_F32}, NULL);
    path_of(p, sizeof p, dir, "vocab.json");
    unlink(p);
    path_of(p, sizeof p, dir, "merges.txt");
    unlink(p);
    return ok && write_tokenizer_json_chat(dir, false, GPT2_PRE, true);
}

#endif
