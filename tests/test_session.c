/* test_session.c — sessions: 100 tokens in one go equal 40, a session saved
 * and restored into a fresh context (from a file and from memory), and 60
 * more, token for token (sampled and argmax; float32, 8-bit and BPE
 * models); ngpt_context_cache_truncate equals a prefill of the kept tokens alone;
 * a session of another model, config, a damaged or truncated file is
 * refused with one line and changes nothing. Sessions of an 8-bit KV cache
 * (keys, values, both) resume the same way; one of another KV type is
 * refused; a version 1 file (float32 rows, no KV bytes) still loads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define PROMPT 5
#define ALL 100
#define FIRST 40

static const char *path = "build/tests/test_session.sess";

static ngpt_config small_config(void)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = 128;
    c.d_model = 32;
    c.n_layers = 2;
    c.n_heads = 4;
    c.d_ff = 64;
    return c;
}

static int16_t kv_k, kv_v;      /* the KV types make() plans */

static ngpt_context *make(const ngpt_config *c, uint64_t seed, const ngpt_tokenizer *tk)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.kv_k = kv_k, s.kv_v = kv_v;
    s.batch = 2;
    s.seq = 16;         /* the 45-token resume prompt prefills in passes */
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, NULL, c, &s, NULL, 0) || ngpt_context_params_init(ctx, seed)) return NULL;
    if (tk && ngpt_context_tokenizer_set(ctx, tk)) return NULL;
    return ctx;
}

/* A session image of slot 0 in memory (malloc'd). */
static unsigned char *snapshot(const ngpt_context *ctx, size_t *size)
{
    if (ngpt_context_cache_save_mem(ctx, 0, NULL, 0, size)) return NULL;
    unsigned char *b = malloc(*size);
    if (b && ngpt_context_cache_save_mem(ctx, 0, b, *size, size)) {
        free(b);
        return NULL;
    }
    return b;
}

/* generate 100 == generate 40, save, restore into a fresh context, 60 more. */
static void resume(const char *name, const ngpt_config *c, const ngpt_tokenizer *tk,
                   float temperature)
{
    int32_t prompt[PROMPT + FIRST] = {'h', 'e', 'l', 'l', 'o'}, all[ALL], first[FIRST], rest[ALL];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler.temperature = temperature;
    gc.sampler.top_k = 20;
    gc.sampler.seed = 7;
    gc.max_tokens = ALL;
    ngpt_generate_result r;
    ngpt_context *a = make(c, 11, tk), *b = make(c, 11, tk), *f = make(c, 11, tk);
    CHECK(a && b && f, "[%s] contexts: %s", name, ngpt_last_error());
    if (!a || !b || !f) return;
    CHECK_OK(ngpt_context_generate(a, &gc, prompt, PROMPT, all, ALL, NULL, NULL, &r));
    CHECK(r.n_tokens == ALL, "[%s] %d tokens", name, (int)r.n_tokens);
    gc.max_tokens = FIRST;
    CHECK_OK(ngpt_context_generate(b, &gc, prompt, PROMPT, first, FIRST, NULL, NULL, &r));
    CHECK(memcmp(first, all, sizeof first) == 0, "[%s] the first 40 differ", name);
    CHECK_OK(ngpt_context_cache_save(b, 0, path));
    size_t size = 0;
    unsigned char *image = snapshot(b, &size);
    const size_t heads = (size_t)(c->n_kv_heads ? c->n_kv_heads : c->n_heads);
    const size_t D = (size_t)(c->head_dim ? c->head_dim : c->d_model / c->n_heads);
    const size_t q8row = heads * (D + 31) / 32 * 36;     /* compact head rows */
    const size_t row = (kv_k ? q8row : 4 * heads * D) + (kv_v ? q8row : 4 * heads * D);
    CHECK(image && size == 104 + 4 * (PROMPT + FIRST - 1) +
                               row * (size_t)(PROMPT + FIRST - 1) * c->n_layers + 8,
          "[%s] session image of %zu bytes", name, size);

    memcpy(prompt + PROMPT, first, sizeof first);
    gc.max_tokens = ALL - FIRST;
    gc.keep_cache = true;
    gc.first_draw = FIRST;
    for (int from_mem = 0; from_mem < 2; from_mem++) {
        if (from_mem) CHECK_OK(ngpt_context_cache_load_mem(f, 0, image, size));
        else CHECK_OK(ngpt_context_cache_load(f, 0, path));
        int32_t len = 0;
        CHECK_OK(ngpt_context_cache_len(f, 0, &len));
        CHECK(len == PROMPT + FIRST - 1, "[%s] restored %d tokens", name, (int)len);
        memset(rest, 0, sizeof rest);
        CHECK_OK(ngpt_context_generate(f, &gc, prompt, PROMPT + FIRST, rest, ALL, NULL, NULL, &r));
        CHECK(r.n_tokens == ALL - FIRST &&
                  memcmp(rest, all + FIRST, (ALL - FIRST) * sizeof(int32_t)) == 0,
              "[%s] the 60 tokens after a restore (%s) differ from the uninterrupted run", name,
              from_mem ? "memory" : "file");
    }
    /* without the session, keep_cache finds nothing to keep: a full prefill, same tokens */
    CHECK_OK(ngpt_context_cache_clear(f, -1));
    CHECK_OK(ngpt_context_generate(f, &gc, prompt, PROMPT + FIRST, rest, ALL, NULL, NULL, &r));
    CHECK(memcmp(rest, all + FIRST, (ALL - FIRST) * sizeof(int32_t)) == 0,
          "[%s] a full prefill of the resume prompt differs", name);
    free(image);
    ngpt_context_free(a);
    ngpt_context_free(b);
    ngpt_context_free(f);
}

/* Truncating to n, then feeding x == prefilling n tokens, then feeding x. */
static void truncate_equals_prefill(void)
{
    ngpt_config c = small_config();
    ngpt_context *a = make(&c, 3, NULL), *b = make(&c, 3, NULL);
    CHECK(a && b, "contexts");
    if (!a || !b) return;
    int32_t toks[30];
    for (int i = 0; i < 30; i++) toks[i] = (i * 37 + 11) % 256;
    CHECK_OK(ngpt_context_cache_prefill_slot(a, 1, toks, 16));
    CHECK_OK(ngpt_context_cache_prefill_slot(a, 1, toks + 16, 14));
    CHECK_OK(ngpt_context_cache_truncate(a, 1, 12));
    int32_t len = 0;
    CHECK_OK(ngpt_context_cache_len(a, 1, &len));
    CHECK(len == 12, "truncated to %d", (int)len);
    CHECK_OK(ngpt_context_cache_prefill_slot(a, 1, toks + 20, 3));
    CHECK_OK(ngpt_context_cache_prefill_slot(b, 1, toks, 12));
    CHECK_OK(ngpt_context_cache_prefill_slot(b, 1, toks + 20, 3));
    uint64_t ha, hb;
    CHECK_OK(ngpt_context_logits_checksum(a, &ha));
    CHECK_OK(ngpt_context_logits_checksum(b, &hb));
    CHECK(ha == hb, "logits after a truncate %016llx, after a prefill %016llx",
          (unsigned long long)ha, (unsigned long long)hb);
    CHECK_STATUS(ngpt_context_cache_truncate(a, 1, 16), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_cache_truncate(a, 1, -1), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_cache_truncate(a, 2, 0), NGPT_ERR_BAD_ARG);
    ngpt_context_free(a);
    ngpt_context_free(b);
}

static void write_bytes(const char *p, const unsigned char *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    if (f) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
}

/* The load is refused with st and a message containing want, and the
 * target's slot 0 is what it was. */
static void refused(ngpt_context *ctx, const unsigned char *data, size_t n, ngpt_status st,
                    const char *want, const char *what)
{
    size_t before_n = 0, after_n = 0;
    unsigned char *before = snapshot(ctx, &before_n);
    write_bytes(path, data, n);
    CHECK_STATUS(ngpt_context_cache_load(ctx, 0, path), st);
    const char *msg = ngpt_last_error();
    CHECK(strncmp(msg, "ngpt_context_cache_load: ", 17) == 0 && strstr(msg, want) && !strchr(msg, '\n'),
          "%s: \"%s\"", what, msg);
    CHECK_STATUS(ngpt_context_cache_load_mem(ctx, 0, data, n), st);
    unsigned char *after = snapshot(ctx, &after_n);
    CHECK(before && after && before_n == after_n && memcmp(before, after, after_n) == 0,
          "%s: the refused load changed the slot", what);
    free(before);
    free(after);
}

static void refusals(void)
{
    ngpt_config c = small_config(), other = c;
    other.d_ff = 128;
    ngpt_context *src = make(&c, 5, NULL), *dst = make(&c, 5, NULL);
    ngpt_context *foreign = make(&c, 6, NULL), *shaped = make(&other, 5, NULL);
    CHECK(src && dst && foreign && shaped, "contexts");
    if (!src || !dst || !foreign || !shaped) return;
    int32_t toks[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK_OK(ngpt_context_cache_prefill_slot(src, 0, toks, 10));
    CHECK_OK(ngpt_context_cache_prefill_slot(dst, 0, toks + 3, 4));
    CHECK_OK(ngpt_context_cache_prefill_slot(foreign, 0, toks, 10));
    CHECK_OK(ngpt_context_cache_prefill_slot(shaped, 0, toks, 10));
    size_t n = 0, fn = 0, sn = 0;
    unsigned char *good = snapshot(src, &n), *alien = snapshot(foreign, &fn);
    unsigned char *misfit = snapshot(shaped, &sn);
    CHECK(good && alien && misfit, "snapshots");
    if (!good || !alien || !misfit) return;
    refused(dst, alien, fn, NGPT_ERR_CONFIG_MISMATCH, "another model", "another model");
    refused(dst, misfit, sn, NGPT_ERR_CONFIG_MISMATCH, "another config", "another config");
    refused(dst, good, n - 100, NGPT_ERR_CHECKSUM, "damaged or truncated", "truncated");
    refused(dst, good, 20, NGPT_ERR_BAD_FORMAT, "not an ngpt session", "a stub");
    for (size_t at = 0; at < n; at += n / 7) {  /* one flipped bit anywhere */
        good[at] ^= 0x10;
        refused(dst, good, n, at < 8 ? NGPT_ERR_BAD_FORMAT : NGPT_ERR_CHECKSUM,
                at < 8 ? "not an ngpt session" : "damaged", "a flipped bit");
        good[at] ^= 0x10;
    }
    /* resealed (a valid checksum over a wrong field): the checks behind the checksum */
    unsigned char *forged = malloc(n + 4);
    if (forged) {
        const struct { size_t at; uint32_t value; ngpt_status st; const char *want; } f[] = {
            {8, 3, NGPT_ERR_BAD_FORMAT, "version 3"},
            {96, 1, NGPT_ERR_CONFIG_MISMATCH, "keys q8 and values f32"},
            {96, 0x100, NGPT_ERR_CONFIG_MISMATCH, "keys f32 and values q8"},
            {96, 7, NGPT_ERR_CONFIG_MISMATCH, "keys (unknown type)"},
            {98, 1, NGPT_ERR_BAD_FORMAT, "reserved header byte 98"},
            {12, 11, NGPT_ERR_BAD_FORMAT, "holds 11 tokens"},
            {12, 1000, NGPT_ERR_BAD_FORMAT, "holds 1000 tokens"},
            {104 + 4 * 3, 256, NGPT_ERR_BAD_TOKEN, "token 3 is 256"},
            {104 + 4 * 9, (uint32_t)-1, NGPT_ERR_BAD_TOKEN, "token 9 is -1"},
            {32, 64, NGPT_ERR_CONFIG_MISMATCH, "another config"},
            {92, 1, NGPT_ERR_BAD_FORMAT, "reserved header byte 92"},
        };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            memcpy(forged, good, n);
            memcpy(forged + f[i].at, &f[i].value, 4);
            const uint64_t sum = ngpt_checksum_bytes(forged, n - 8);
            memcpy(forged + n - 8, &sum, 8);
            refused(dst, forged, n, f[i].st, f[i].want, f[i].want);
        }
        memcpy(forged, good, n - 8);                 /* 4 extra bytes, resealed */
        memset(forged + n - 8, 0, 4);
        const uint64_t sum = ngpt_checksum_bytes(forged, n - 4);
        memcpy(forged + n - 4, &sum, 8);
        refused(dst, forged, n + 4, NGPT_ERR_BAD_FORMAT, "bytes", "a longer file");
        free(forged);
    }
    /* version 1 (an older ngpt's: no KV bytes, float32 rows) still loads, into
     * a float32 cache only, and gives the same slot as the version 2 file */
    unsigned char *v1 = malloc(n);
    if (v1) {
        const uint32_t one = 1;
        memcpy(v1, good, 96);
        memcpy(v1 + 8, &one, 4);
        memcpy(v1 + 96, good + 104, n - 104 - 8);
        const size_t n1 = n - 8;
        const uint64_t sum = ngpt_checksum_bytes(v1, n1 - 8);
        memcpy(v1 + n1 - 8, &sum, 8);
        CHECK_OK(ngpt_context_cache_load_mem(dst, 1, v1, n1));
        size_t m = 0;
        unsigned char *again = NULL;
        if (ngpt_context_cache_save_mem(dst, 1, NULL, 0, &m) == NGPT_OK && (again = malloc(m)))
            CHECK_OK(ngpt_context_cache_save_mem(dst, 1, again, m, &m));
        CHECK(again && m == n && memcmp(again + 8, good + 8, n - 16) == 0,
              "a version 1 file restored and saved again is not the version 2 file");
        free(again);
        kv_v = NGPT_KV_Q8;
        ngpt_context *q8 = make(&c, 5, NULL);
        kv_v = NGPT_KV_F32;
        CHECK(q8, "a q8 context");
        if (q8) refused(q8, v1, n1, NGPT_ERR_CONFIG_MISMATCH, "keys f32 and values f32",
                        "a version 1 file into a q8 cache");
        if (q8) refused(q8, good, n, NGPT_ERR_CONFIG_MISMATCH, "this context's stores keys f32 "
                        "and values q8", "a float32 session into a q8 cache");
        ngpt_context_free(q8);
        free(v1);
    }
    CHECK_STATUS(ngpt_context_cache_load(dst, 0, "build/tests/no/such.sess"), NGPT_ERR_IO);
    CHECK_OK(ngpt_context_cache_load_mem(dst, 1, good, n));     /* the good one still loads */
    int32_t len = 0;
    CHECK_OK(ngpt_context_cache_len(dst, 1, &len));
    CHECK(len == 10, "slot 1 holds %d", (int)len);
    /* a session of a training context cannot exist */
    ngpt_context *train = NULL;
    ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
    ts.batch = 1, ts.seq = 8;
    CHECK_OK(ngpt_context_init(&train, NULL, &c, &ts, NULL, 0));
    CHECK_STATUS(ngpt_context_cache_save(train, 0, path), NGPT_ERR_WRONG_MODE);
    ngpt_context_free(train);
    free(good);
    free(alien);
    free(misfit);
    ngpt_context_free(src);
    ngpt_context_free(dst);
    ngpt_context_free(foreign);
    ngpt_context_free(shaped);
}

int main(void)
{
    ngpt_config c = small_config();
    resume("f32 sampled", &c, NULL, 0.8f);
    resume("f32 argmax", &c, NULL, 0.0f);
    ngpt_config q = c;
    q.weights = NGPT_WEIGHTS_Q8;
    resume("q8 sampled", &q, NULL, 0.8f);
    ngpt_config g = c;     /* grouped-query attention: the cache holds 2 KV heads of 4 */
    g.n_kv_heads = 2;
    resume("gqa sampled", &g, NULL, 0.8f);
    ngpt_config gm = g;    /* Gemma 3's switches: header bytes past the first tail, windows */
    CHECK(test_config_apply(&gm, "norm_type=rms norm_offset=1 norm=sandwich mlp=geglu gelu=tanh "
                                 "qk_norm=1 sliding_window=6 sliding_pattern=2 "
                                 "rope_local_theta=100 attn_scalar=20 emb_scale=2 "
                                 "logit_softcap=20"), "%s", ngpt_last_error());
    resume("gemma sampled", &gm, NULL, 0.8f);

    static const char text[] = "the cat sat on the mat, the cat ate the rat; a bat sat on a hat";
    const void *texts[1] = {text};
    const size_t sizes[1] = {sizeof text - 1};
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = 280;
    ngpt_tokenizer *tk = NULL;
    ngpt_tokenizer_info ti;
    CHECK_OK(ngpt_tokenizer_train(&tk, &tc, texts, sizes, 1));
    CHECK_OK(ngpt_tokenizer_describe(tk, &ti));
    ngpt_config bpe = c;
    bpe.vocab_size = ti.n_tokens;
    resume("bpe sampled", &bpe, tk, 0.8f);
    ngpt_tokenizer_free(tk);

    /* an 8-bit KV cache: keys and values, keys only, values only; with GQA */
    kv_k = kv_v = NGPT_KV_Q8;
    resume("f32 kv q8", &c, NULL, 0.8f);
    resume("q8 kv q8 argmax", &q, NULL, 0.0f);
    resume("gqa kv q8", &g, NULL, 0.8f);
    resume("gemma kv q8", &gm, NULL, 0.8f);
    kv_v = NGPT_KV_F32;
    resume("f32 kv k8", &c, NULL, 0.8f);
    kv_k = NGPT_KV_F32, kv_v = NGPT_KV_Q8;
    resume("f32 kv v8", &c, NULL, 0.8f);
    kv_k = kv_v = NGPT_KV_F32;

    truncate_equals_prefill();
    refusals();
    remove(path);
    return test_summary("test_session");
}
