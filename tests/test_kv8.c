/* test_kv8.c — the 8-bit KV cache (shape.kv_k, kv_v = NGPT_KV_Q8), for keys
 * and values, keys only and values only:
 *   - a pass's logits do not depend on how its tokens entered the cache: one
 *     prefill of every position equals prefills in passes and decode steps,
 *     bit for bit, and the thread count changes nothing (1 and 3 threads);
 *     head sizes below a group (D = 8), across groups (D = 40), GQA;
 *   - the logits stay close to a float32 cache's (random weights: only a
 *     sanity bound, docs/GENERATION.md has the measured quality);
 *   - speculative decoding (prompt lookup) gives plain decoding's text with
 *     the same cache type; beam search of width 1 is greedy; the context
 *     shift runs on 8-bit keys; each gives the same tokens on 1 and 3 threads;
 *   - golden checksums of sampled text and of logits (the same on every
 *     build: docs/GOLDEN.md);
 *   - the arena's cache is at most 0.3x a float32 one's; bad kv values, a
 *     training shape with one, and no_cache on a q8 cache are refused. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { N = 40 };

static ngpt_context *make(const ngpt_config *c, int kk, int kv, int threads, int seq, int rows)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = 2, s.seq = seq, s.threads = threads, s.logits_rows = rows;
    s.kv_k = (int16_t)kk, s.kv_v = (int16_t)kv;
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, NULL, c, &s, NULL, 0) || ngpt_context_params_init(ctx, 17)) {
        fprintf(stderr, "make: %s\n", ngpt_last_error());
        ngpt_context_free(ctx);
        return NULL;
    }
    return ctx;
}

static void tokens_of(int32_t *t, int n, int V)
{
    for (int i = 0; i < n; i++) t[i] = (int32_t)((i * 73 + 5) % V);
}

/* The (N, V) logits of every position: one prefill (rows = all), or passes
 * of 7, 5 and then decode steps (slot 1), each pass's last row. */
static bool logits_all(ngpt_context *ctx, const int32_t *t, int V, float *out, bool passes)
{
    const float *lg = NULL;
    if (!passes) {
        if (ngpt_context_cache_prefill_slot(ctx, 1, t, N) || ngpt_context_logits(ctx, &lg)) return false;
        memcpy(out, lg, (size_t)N * V * sizeof(float));
        return true;
    }
    int at = 0;
    static const int chunks[] = {7, 5};
    for (int c = 0; c < 2; c++) {
        if (ngpt_context_cache_prefill_slot(ctx, 1, t + at, chunks[c]) || ngpt_context_logits(ctx, &lg))
            return false;
        memcpy(out + (size_t)at * V, lg, (size_t)chunks[c] * V * sizeof(float));
        at += chunks[c];
    }
    for (; at < N; at++) {
        if (ngpt_context_cache_prefill_slot(ctx, 1, t + at, 1) || ngpt_context_logits(ctx, &lg)) return false;
        memcpy(out + (size_t)at * V, lg, (size_t)V * sizeof(float));
    }
    return true;
}

static void consistency(const char *name, const char *settings)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = 64, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.d_ff = 64;
    CHECK(test_config_apply(&c, settings), "[%s] config", name);
    const int V = c.vocab_size;
    int32_t t[N];
    tokens_of(t, N, V);
    float *ref = malloc((size_t)N * V * sizeof(float));
    float *a = malloc((size_t)N * V * sizeof(float)), *b = malloc((size_t)N * V * sizeof(float));
    ngpt_context *f = make(&c, 0, 0, 1, N, NGPT_LOGITS_ALL);
    CHECK(ref && a && b && f && logits_all(f, t, V, ref, false), "[%s] float32 logits", name);
    static const int kinds[3][2] = {{1, 1}, {1, 0}, {0, 1}};
    for (int k = 0; k < 3 && f; k++) {
        ngpt_context *one = make(&c, kinds[k][0], kinds[k][1], 1, N, NGPT_LOGITS_ALL);
        ngpt_context *three = make(&c, kinds[k][0], kinds[k][1], 3, 16, NGPT_LOGITS_ALL);
        CHECK(one && three, "[%s] contexts", name);
        if (!one || !three) continue;
        CHECK(logits_all(one, t, V, a, false), "[%s %d%d] one prefill: %s", name, kinds[k][0],
              kinds[k][1], ngpt_last_error());
        CHECK(logits_all(three, t, V, b, true), "[%s %d%d] passes: %s", name, kinds[k][0],
              kinds[k][1], ngpt_last_error());
        CHECK(memcmp(a, b, (size_t)N * V * sizeof(float)) == 0,
              "[%s K%s V%s] one prefill on 1 thread != passes and decode steps on 3", name,
              kinds[k][0] ? "8" : "32", kinds[k][1] ? "8" : "32");
        double worst = 0.0, scale = 0.0;
        for (size_t i = 0; i < (size_t)N * V; i++) {
            worst = fmax(worst, fabs((double)a[i] - (double)ref[i]));
            scale = fmax(scale, fabs((double)ref[i]));
        }
        CHECK(worst > 0.0 && worst < 0.05 * scale + 1e-3,
              "[%s K%s V%s] logits differ from float32's by %g (largest %g)", name,
              kinds[k][0] ? "8" : "32", kinds[k][1] ? "8" : "32", worst, scale);
        ngpt_context_free(one);
        ngpt_context_free(three);
    }
    ngpt_context_free(f);
    free(ref), free(a), free(b);
}

/* Sampled text of a context; returns its checksum. */
static uint64_t text_of(ngpt_context *ctx, ngpt_generate_config *gc, int32_t *out, int cap,
                        int *n)
{
    int32_t prompt[12];
    for (int i = 0; i < 12; i++) prompt[i] = "hello, hello"[i];
    ngpt_generate_result r;
    ngpt_status st = ngpt_context_generate(ctx, gc, prompt, 12, out, cap, NULL, NULL, &r);
    CHECK(st == NGPT_OK, "generate: %s", ngpt_last_error());
    *n = st ? 0 : r.n_tokens;
    return ngpt_checksum_bytes(out, (size_t)*n * sizeof(int32_t));
}

static void generation(void)
{
    ngpt_config c = test_config_tiny();
    c.context_len = 32;
    c.dropout = 0.0f;
    int32_t a[80], b[80];
    int na = 0, nb = 0;
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 20;
    gc.sampler.temperature = 0.9f, gc.sampler.seed = 3;
    gc.ignore_end = true;
    uint64_t h[2];
    for (int th = 0; th < 2; th++) {
        ngpt_context *ctx = make(&c, 1, 1, th ? 3 : 1, 8, 0);
        CHECK(ctx != NULL, "context");
        if (!ctx) return;
        h[th] = text_of(ctx, &gc, th ? b : a, 80, th ? &nb : &na);
        ngpt_context_free(ctx);
    }
    CHECK(na == 20 && nb == 20 && h[0] == h[1], "sampled text on 1 and 3 threads differs");
    printf("kv8 sampled text %016" PRIx64 "\n", h[0]);
    CHECK_HASH(h[0], 0xfb5e67f9082a5556);

    /* speculative (prompt lookup) == plain, same cache type, both threads */
    gc.sampler.temperature = 0.0f;
    gc.max_tokens = 24;
    for (int th = 0; th < 2; th++) {
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        s.kv_k = s.kv_v = NGPT_KV_Q8, s.seq = 8, s.threads = th ? 3 : 1, s.draft_tokens = 4;
        ngpt_context *ctx = NULL;
        CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
        if (!ctx) return;
        CHECK_OK(ngpt_context_params_init(ctx, 17));
        const uint64_t plain = text_of(ctx, &gc, a, 80, &na);
        ngpt_generate_config sc = gc;
        sc.lookup = 2, sc.draft_tokens = 4;
        const uint64_t spec = text_of(ctx, &sc, b, 80, &nb);
        CHECK(na == nb && plain == spec, "[%d threads] speculative text != plain with a q8 cache",
              th ? 3 : 1);
        /* beam width 1 is greedy (beams do not slide: within T) */
        ngpt_generate_config bc = gc;
        bc.beam_width = 1;
        bc.sampler.temperature = 1.0f;
        bc.max_tokens = 16;
        text_of(ctx, &bc, b, 80, &nb);
        CHECK(nb == 16 && !memcmp(a, b, 16 * sizeof(int32_t)),
              "[%d threads] beam width 1 != greedy with a q8 cache", th ? 3 : 1);
        ngpt_context_free(ctx);
    }

    /* beam width 2, and the context shift on 8-bit keys: 1 thread == 3 */
    uint64_t beam[2], shift[2];
    for (int th = 0; th < 2; th++) {
        ngpt_context *ctx = make(&c, 1, 1, th ? 3 : 1, 8, 0);
        if (!ctx) return;
        ngpt_generate_config bc = gc;
        bc.beam_width = 2;
        bc.sampler.temperature = 1.0f;
        bc.max_tokens = 16;
        beam[th] = text_of(ctx, &bc, a, 80, &na);
        ngpt_generate_config sh = gc;
        sh.sampler.temperature = 0.8f;
        sh.context_mode = NGPT_CONTEXT_SHIFT;
        sh.max_tokens = 70;     /* past T = 32 twice */
        shift[th] = text_of(ctx, &sh, b, 80, &nb);
        CHECK(nb == 70, "shift: %d tokens", nb);
        ngpt_context_free(ctx);
    }
    CHECK(beam[0] == beam[1], "beam search: 1 thread != 3");
    CHECK(shift[0] == shift[1], "context shift: 1 thread != 3");
    printf("kv8 beam %016" PRIx64 " shift %016" PRIx64 "\n", beam[0], shift[0]);
    CHECK_HASH(beam[0], 0xed5ea54c297373bc);
    CHECK_HASH(shift[0], 0x8b762d327a7f2403);
}

/* Golden logits of a prefill (GQA, D = 40: two groups, the last short). */
static void golden_logits(void)
{
    ngpt_config c = test_config_tiny();
    c.context_len = 32;
    CHECK(test_config_apply(&c, "kv_heads=2 head_dim=40 norm_type=rms mlp=swiglu"), "config");
    int32_t t[N];
    tokens_of(t, 20, c.vocab_size);
    static const int kinds[3][2] = {{1, 1}, {1, 0}, {0, 1}};
    uint64_t h[3];
    for (int k = 0; k < 3; k++) {
        ngpt_context *ctx = make(&c, kinds[k][0], kinds[k][1], 2, 16, NGPT_LOGITS_ALL);
        if (!ctx) return;
        CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, t, 16));
        CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, t + 16, 4));
        CHECK_OK(ngpt_context_logits_checksum(ctx, &h[k]));
        ngpt_context_free(ctx);
    }
    printf("kv8 logits %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\n", h[0], h[1], h[2]);
    CHECK_HASH(h[0], 0x776045dabbc100d9);
    CHECK_HASH(h[1], 0x979c24a10e48dba9);
    CHECK_HASH(h[2], 0xfb07750e74f30c7f);
}

static void sizes_and_refusals(void)
{
    ngpt_config c = ngpt_config_default();       /* T=256 C=256 L=4: D = 64 */
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    size_t f32 = 0, q8 = 0, k8 = 0;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &f32));
    s.kv_k = NGPT_KV_Q8;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &k8));
    s.kv_v = NGPT_KV_Q8;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &q8));
    const size_t cache = 2u * 4 * 256 * 256 * 4;     /* K and V, L T C floats */
    /* 8-bit: 72 bytes a head row of 64 instead of 256, and one quantized query a thread */
    CHECK(f32 - q8 >= cache - cache * 72 / 256 - 4096 && f32 - q8 <= cache - cache * 72 / 256,
          "the q8 cache saves %zu bytes of %zu", f32 - q8, cache);
    CHECK(f32 - k8 >= (cache - cache * 72 / 256) / 2 - 4096, "keys alone save %zu", f32 - k8);
    s.kv_k = 2;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &s, &q8), NGPT_ERR_BAD_ARG);
    s.kv_k = 0, s.kv_v = -1;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &s, &q8), NGPT_ERR_BAD_ARG);
    ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
    ts.kv_v = NGPT_KV_Q8;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &ts, &q8), NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "kv_k") != NULL, "message: %s", ngpt_last_error());

    ngpt_config tiny = test_config_tiny();
    ngpt_shape is = ngpt_shape_default(NGPT_MODE_INFER);
    is.kv_v = NGPT_KV_Q8, is.seq = 16;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &tiny, &is, NULL, 0));
    if (!ctx) return;
    CHECK_OK(ngpt_context_params_init(ctx, 1));
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.no_cache = true;
    gc.max_tokens = 4;
    int32_t p[2] = {1, 2}, out[4];
    ngpt_generate_result r;
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, p, 2, out, 4, NULL, NULL, &r), NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "8-bit") != NULL, "message: %s", ngpt_last_error());
    ngpt_context_free(ctx);
}

int main(void)
{
    consistency("D=8", "");
    consistency("D=40 gqa", "kv_heads=2 head_dim=40");
    consistency("D=34 halves", "H=2 head_dim=34 rope_pairs=halves qk_norm=1");
    generation();
    golden_logits();
    sizes_and_refusals();
    return test_summary("test_kv8");
}
