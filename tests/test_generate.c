/* test_generate.c — KV cache and generation: prefill + decode logits equal
 * the full forward bit for bit at every position, also after the parameters
 * change (the packed weights follow); batched decode; the
 * generation loop (sliding window, stops, callback, beams); clear errors. */
#include <math.h>
#include <stdlib.h>

#include "model/kv.h"     /* the cache's keys and values; the run state (runtime/context.h) */
#include "test.h"

enum { V = 256, T = 16 };

static ngpt_config tiny(void)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = V;
    c.context_len = T;
    c.d_model = 32;
    c.n_layers = 2;
    c.n_heads = 4;
    c.d_ff = 64;
    return c;
}

static ngpt_context *make(int batch, ngpt_trace trace)
{
    ngpt_config c = tiny();
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = batch;
    s.trace = trace;
    s.logits_rows = NGPT_LOGITS_ALL;    /* the tests compare every position's logits */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    CHECK_OK(ngpt_context_params_init(ctx, 7));
    return ctx;
}

/* Full-forward logits of every prefix row: full[i] = logits at position i. */
static void full_logits(ngpt_context *ctx, const int32_t *tok, int n, float *full)
{
    const float *lg;
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, n, NULL, NULL));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    memcpy(full, lg, (size_t)n * V * sizeof(float));
}

static void test_cached_equals_full(void)
{
    ngpt_context *ctx = make(2, NGPT_TRACE_LAST_ROW);
    int32_t tok[T];
    for (int i = 0; i < T; i++) tok[i] = (i * 37 + 11) % V;
    static float full[T * V];
    full_logits(ctx, tok, T, full);
    const float *lg;
    /* prefill p tokens, then decode the rest one at a time */
    const int prefixes[] = {1, 2, 7, T};
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
        int p = prefixes[k];
        CHECK_OK(ngpt_context_cache_clear(ctx, -1));
        CHECK_OK(ngpt_context_cache_prefill(ctx, tok, 1, p));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        CHECK(!memcmp(lg, full, (size_t)p * V * sizeof(float)), "prefill %d rows differ", p);
        for (int i = p; i < T; i++) {
            CHECK_OK(ngpt_context_cache_decode(ctx, tok + i, 1));
            CHECK_OK(ngpt_context_logits(ctx, &lg));
            CHECK(!memcmp(lg, full + (size_t)i * V, V * sizeof(float)),
                  "prefill %d + decode: position %d differs", p, i);
        }
        int32_t n;
        CHECK_OK(ngpt_context_cache_len(ctx, 0, &n));
        CHECK(n == T, "cache holds %d", n);
    }
    /* chunked prefill: 3 + 5 + 8 */
    CHECK_OK(ngpt_context_cache_clear(ctx, 0));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, tok, 3));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, tok + 3, 5));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    CHECK(!memcmp(lg, full + 3 * V, 5 * V * sizeof(float)), "chunked prefill differs");

    /* the traced row of a decoded token equals the full forward's last row */
    const float *tr_full, *tr_dec;
    size_t nf, nd;
    static float row[4 * T];
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, 9, NULL, NULL));
    CHECK_OK(ngpt_context_trace(ctx, 1, &tr_full, &nf));
    memcpy(row, tr_full, nf * sizeof(float));
    CHECK_OK(ngpt_context_cache_decode(ctx, tok + 8, 1));
    CHECK_OK(ngpt_context_trace(ctx, 1, &tr_dec, &nd));
    CHECK(nf == 4 * 9 && nd == 4 * T, "trace counts %zu %zu", nf, nd);
    int same = 1;
    for (int h = 0; h < 4; h++)
        same &= !memcmp(row + h * 9, tr_dec + h * T, 9 * sizeof(float)) && tr_dec[h * T + 9] == 0.0f;
    CHECK(same, "decode trace row differs from the full forward's");

    /* batched decode: two sequences of different lengths in slots 0 and 1 */
    int32_t other[T];
    for (int i = 0; i < T; i++) other[i] = (i * 101 + 3) % V;
    static float full2[T * V];
    full_logits(ctx, other, T, full2);
    CHECK_OK(ngpt_context_cache_clear(ctx, -1));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, tok, 4));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 1, other, 9));
    for (int i = 0; i < 6; i++) {
        int32_t step[2] = {tok[4 + i], other[9 + i]};
        CHECK_OK(ngpt_context_cache_decode(ctx, step, 2));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        CHECK(!memcmp(lg, full + (size_t)(4 + i) * V, V * sizeof(float)) &&
                  !memcmp(lg + V, full2 + (size_t)(9 + i) * V, V * sizeof(float)),
              "batched decode step %d differs", i);
    }
    /* a fork: copy slot 1 into slot 0 and continue it */
    CHECK_OK(ngpt_context_cache_copy(ctx, 0, 1));
    CHECK_OK(ngpt_context_cache_decode(ctx, other + 15, 1));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    CHECK(!memcmp(lg, full2 + 15 * V, V * sizeof(float)), "forked slot differs");

    /* errors */
    CHECK_STATUS(ngpt_context_cache_decode(ctx, tok, 1), NGPT_ERR_TOO_LONG);     /* slot 0 is full */
    int32_t bad = V;
    CHECK_OK(ngpt_context_cache_clear(ctx, -1));
    CHECK_STATUS(ngpt_context_cache_decode(ctx, &bad, 1), NGPT_ERR_BAD_TOKEN);
    CHECK_STATUS(ngpt_context_cache_prefill(ctx, tok, 3, 1), NGPT_ERR_EXCEEDS_PLAN);
    CHECK_STATUS(ngpt_context_cache_prefill_slot(ctx, 2, tok, 1), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_cache_prefill(NULL, tok, 1, 1), NGPT_ERR_NULL_ARG);
    ngpt_context_free(ctx);
}

/* Records the streamed tokens; stops after `stop_after` when > 0. */
typedef struct sink {
    int32_t tok[512];
    int n, stop_after;
} sink;

static int on_token(int32_t t, void *user)
{
    sink *s = user;
    s->tok[s->n++] = t;
    return s->stop_after > 0 && s->n >= s->stop_after;
}

static ngpt_generate_result gen(ngpt_context *ctx, const ngpt_generate_config *gc,
                                const char *prompt, int32_t *out, sink *sk)
{
    int32_t p[T];
    int n = (int)strlen(prompt);
    for (int i = 0; i < n; i++) p[i] = (unsigned char)prompt[i];
    ngpt_generate_result r;
    memset(&r, 0, sizeof r);
    if (sk) sk->n = 0;
    CHECK_OK(ngpt_context_generate(ctx, gc, p, n, out, gc->max_tokens, sk ? on_token : NULL, sk, &r));
    if (sk) CHECK(sk->n == r.n_tokens && !memcmp(sk->tok, out, (size_t)sk->n * 4),
                  "streamed tokens differ from the output");
    return r;
}

/* Sampling by the original's definition, without the cache: at every step
 * a full forward over the last T tokens (ids[-T:]) and a draw from its last
 * row (the same sampler, counter = the token's index; the repetition
 * penalty sees the window). The prompt may be longer than T. */
static void sample_window(ngpt_context *ctx, const ngpt_sampler *s, const int32_t *prompt, int n,
                          int n_new, int32_t *out)
{
    static int32_t seq[4 * T + 256];
    memcpy(seq, prompt, (size_t)n * sizeof(int32_t));
    for (int g = 0; g < n_new; g++) {
        int w = n < T ? n : T;
        const float *lg;
        CHECK_OK(ngpt_context_forward(ctx, seq + n - w, 1, w, NULL, NULL));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        CHECK_OK(ngpt_context_sample(ctx, s, lg + (size_t)(w - 1) * V, seq + n - w, w, 0,
                                     (uint64_t)g, out + g));
        seq[n++] = out[g];
    }
}

/* Greedy by hand: full forward over the window, argmax, slide. */
static void greedy_by_hand(ngpt_context *ctx, const char *prompt, int n_new, int32_t *out)
{
    int32_t p[T];
    int n = (int)strlen(prompt);
    for (int i = 0; i < n; i++) p[i] = (unsigned char)prompt[i];
    ngpt_sampler s = ngpt_sampler_default();
    s.temperature = 0.0f;
    sample_window(ctx, &s, p, n, n_new, out);
}

static void test_generate(void)
{
    ngpt_context *ctx = make(3, NGPT_TRACE_NONE);
    static int32_t a[64], b[64], c[64];
    static sink sk;
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 40;                 /* > T: the window slides */

    /* greedy three ways (temperature 0, top-k 1, beam width 1) == by hand */
    greedy_by_hand(ctx, "hello", 40, c);
    gc.sampler.temperature = 0.0f;
    ngpt_generate_result r = gen(ctx, &gc, "hello", a, &sk);
    CHECK(r.n_tokens == 40 && r.reason == NGPT_STOP_MAX_TOKENS, "n=%d reason=%s", r.n_tokens,
          ngpt_stop_reason_string(r.reason));
    CHECK(!memcmp(a, c, 40 * 4), "temperature 0 is not argmax (sliding window)");
    gc.sampler.temperature = 1.0f;
    gc.sampler.top_k = 1;
    gen(ctx, &gc, "hello", b, NULL);
    CHECK(!memcmp(b, c, 40 * 4), "top-k 1 is not argmax");
    gc.sampler.top_k = 0;
    gc.beam_width = 1;
    gc.max_tokens = 10;                 /* beams do not slide: stay within T */
    r = gen(ctx, &gc, "hello", b, &sk);
    CHECK(r.n_tokens == 10 && !memcmp(b, c, 10 * 4), "beam width 1 is not greedy");
    gc.max_tokens = 40;
    gc.beam_width = 0;

    /* sampling: cached == no-cache (sliding), same seed same text, seeds differ */
    gc.sampler.temperature = 0.9f;
    gc.sampler.seed = 1234;
    gen(ctx, &gc, "hello", a, &sk);
    gc.no_cache = true;
    gen(ctx, &gc, "hello", b, NULL);
    CHECK(!memcmp(a, b, 40 * 4), "cached and uncached generation differ");
    /* generation is eval: dropout set on the context changes nothing, and
     * the setting is left as it was */
    CHECK_OK(ngpt_context_dropout_set(ctx, true, 99, 7));
    memset(b, 0, 40 * 4);
    gen(ctx, &gc, "hello", b, NULL);
    CHECK(!memcmp(a, b, 40 * 4), "uncached generation applied the context's dropout");
    CHECK(ctx->run.dropout.on && ctx->run.dropout.seed == 99 && ctx->run.dropout.step == 7,
          "generation changed the dropout setting");
    CHECK_OK(ngpt_context_dropout_set(ctx, false, 0, 0));
    gc.no_cache = false;
    CHECK_HASH(ngpt_checksum_bytes(a, 40 * 4), 0x627d06be35defe58);
    gc.sampler.seed = 1235;
    gen(ctx, &gc, "hello", b, NULL);
    CHECK(memcmp(a, b, 40 * 4) != 0, "different seeds gave the same text");
    gc.sampler.seed = 1234;

    /* stop at a full context instead of sliding */
    gc.stop_at_context_full = true;
    r = gen(ctx, &gc, "hello", b, NULL);
    CHECK(r.reason == NGPT_STOP_CONTEXT_FULL && r.n_tokens == T - 5 + 1 &&
              !memcmp(a, b, (size_t)r.n_tokens * 4),
          "context full: reason %s n=%d", ngpt_stop_reason_string(r.reason), r.n_tokens);
    gc.stop_at_context_full = false;

    /* end token: the first occurrence of a[5] ends the output before it */
    gc.end_tokens = &a[5], gc.n_end_tokens = 1;
    int first = 0;
    while (a[first] != a[5]) first++;
    r = gen(ctx, &gc, "hello", b, &sk);
    CHECK(r.reason == NGPT_STOP_END_TOKEN && r.n_tokens == first && r.n_generated == first + 1,
          "end token: %s n=%d", ngpt_stop_reason_string(r.reason), r.n_tokens);
    CHECK(r.end_token == a[5], "the result names end token %d, not %d", (int)r.end_token,
          (int)a[5]);
    gc.n_end_tokens = 0;

    /* a stop sequence spanning three tokens cuts exactly before it */
    int at = -1;
    for (int i = 3; i + 3 <= 40 && at < 0; i++)
        if (a[i] && a[i + 1] && a[i + 2]) at = i;
    char stop[4] = {(char)a[at], (char)a[at + 1], (char)a[at + 2], 0};
    int cut = 0;
    while (memcmp((int32_t[]){a[cut], a[cut + 1], a[cut + 2]}, a + at, 12)) cut++;
    const char *stops[2] = {"\xff\xfe\xfd\xfc", stop};
    gc.stop = stops;
    gc.n_stop = 2;
    r = gen(ctx, &gc, "hello", b, &sk);
    CHECK(r.reason == NGPT_STOP_SEQUENCE && r.n_tokens == cut && !memcmp(a, b, (size_t)cut * 4),
          "stop sequence: %s n=%d want %d", ngpt_stop_reason_string(r.reason), r.n_tokens, cut);
    gc.n_stop = 0;

    /* the callback stops */
    sk.stop_after = 7;
    r = gen(ctx, &gc, "hello", b, &sk);
    CHECK(r.reason == NGPT_STOP_CALLBACK && r.n_tokens == 7, "callback: %s n=%d",
          ngpt_stop_reason_string(r.reason), r.n_tokens);
    sk.stop_after = 0;

    /* beam search draws nothing: the sampling settings it would ignore are
     * refused, each by name; the ban, bias and penalty apply */
    gc.beam_width = 3;
    gc.max_tokens = 8;
    int32_t hi[2] = {'h', 'i'};
    CHECK(gc.sampler.temperature == 0.9f, "the sampling settings above are still set");
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, hi, 2, NULL, 0, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "ngpt_context_generate: beam search") &&
              strstr(ngpt_last_error(), "temperature, top_k, top_p and min_p do not apply"),
          "beam + temperature: %s", ngpt_last_error());
    gc.sampler.temperature = 1.0f;
    const ngpt_sampler sampling[3] = {{.temperature = 1, .top_k = 5, .top_p = 1},
                                      {.temperature = 1, .top_p = 0.9f},
                                      {.temperature = 1, .top_p = 1, .min_p = 0.1f}};
    for (int i = 0; i < 3; i++) {
        ngpt_generate_config g = gc;
        g.sampler.top_k = sampling[i].top_k, g.sampler.top_p = sampling[i].top_p;
        g.sampler.min_p = sampling[i].min_p;
        CHECK_STATUS(ngpt_context_generate(ctx, &g, hi, 2, NULL, 0, NULL, NULL, NULL),
                     NGPT_ERR_BAD_ARG);
    }

    /* beam width 3 and the length penalty run and are deterministic */
    gc.beam_width = 3;
    gc.max_tokens = 8;
    gc.length_penalty = 0.5f;
    r = gen(ctx, &gc, "hi", a, &sk);
    gen(ctx, &gc, "hi", b, NULL);
    CHECK(r.n_tokens >= 1 && !memcmp(a, b, (size_t)r.n_tokens * 4), "beam search n=%d",
          r.n_tokens);
    CHECK_HASH(ngpt_checksum_bytes(a, (size_t)r.n_tokens * 4), 0x84966dd69663b7cc);
    gc.beam_width = 4;
    int32_t p1 = 'x';
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, &p1, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    gc.beam_width = 0;

    /* errors: a bad token, bad sampler values */
    int32_t badp[2] = {'a', 300};
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, badp, 2, NULL, 0, NULL, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    gc.sampler.temperature = -1.0f;
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, badp, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    gc.sampler.temperature = 1.0f;
    gc.sampler.top_p = 0.0f;
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, badp, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    gc.sampler.top_p = 1.0f;
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, badp, 1, a, 3, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    ngpt_context_free(ctx);

    /* a training context cannot generate */
    ngpt_config cf = tiny();
    ngpt_shape st = ngpt_shape_default(NGPT_MODE_TRAIN);
    st.batch = 1;
    ngpt_context *tr = NULL;
    CHECK_OK(ngpt_context_init(&tr, NULL, &cf, &st, NULL, 0));
    CHECK_STATUS(ngpt_context_generate(tr, &gc, badp, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_context_cache_decode(tr, badp, 1), NGPT_ERR_WRONG_MODE);
    ngpt_context_free(tr);
}

/* Past T, NGPT_CONTEXT_EXACT is the original's definition bit for bit: the
 * text equals full forwards over the last T tokens (sampled with the same
 * draws; greedy and with a repetition penalty), also for a prompt longer
 * than T (cropped to its last T tokens, as the original does). */
static void test_exact_past_context(void)
{
    ngpt_context *ctx = make(1, NGPT_TRACE_NONE);
    enum { NP = T + 5, N = 3 * T };
    int32_t prompt[NP], want[N], got[N];
    for (int i = 0; i < NP; i++) prompt[i] = (i * 53 + 7) % V;
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = N;
    gc.sampler.seed = 99;
    ngpt_generate_result r;
    const int lens[] = {1, 5, T - 1, T, NP};
    for (int temp0 = 0; temp0 < 2; temp0++) {
        gc.sampler.temperature = temp0 ? 0.0f : 1.0f;
        gc.sampler.repeat_penalty = temp0 ? 1.0f : 1.3f;
        for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
            const int n = lens[k];
            sample_window(ctx, &gc.sampler, prompt + NP - n, n, N, want);
            for (int nc = 0; nc < 2; nc++) {
                gc.no_cache = nc;
                memset(got, 0, sizeof got);
                CHECK_OK(ngpt_context_generate(ctx, &gc, prompt + NP - n, n, got, N, NULL, NULL, &r));
                CHECK(r.n_tokens == N && !memcmp(got, want, sizeof want), "prompt of %d, "
                      "temperature %g, no_cache %d: the text past T is not the sliding window's",
                      n, (double)gc.sampler.temperature, nc);
                CHECK(r.prompt_tokens == (n < T ? n : T) && r.prompt_dropped == (n > T ? n - T : 0),
                      "prompt of %d: %d kept, %d dropped", n, (int)r.prompt_tokens,
                      (int)r.prompt_dropped);
            }
        }
    }
    ngpt_context_free(ctx);
}

/* NGPT_CONTEXT_SHIFT: the cache operation itself, then generation with it. */
static void test_shift(void)
{
    /* One layer: its keys and values come from the token alone (embedding,
     * LayerNorm, projection), before any attention, so a shifted cache holds
     * the values of a fresh prefill of the kept tokens bit for bit and its
     * keys up to the rounding of R(-d)R(p) vs R(p-d); the next logits then
     * match a fresh prefill's closely. Two layers: they do not (the kept
     * states saw the dropped tokens), which is why the mode is approximate. */
    for (int layers = 1; layers <= 2; layers++) {
        ngpt_config c = tiny();
        c.n_layers = layers;
        ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
        sh.batch = 2;
        ngpt_context *ctx = NULL;
        CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &sh, NULL, 0));
        CHECK_OK(ngpt_context_params_init(ctx, 11));
        int32_t tok[T + 1];
        for (int i = 0; i <= T; i++) tok[i] = (i * 29 + 5) % V;
        const int drop = T - T / 2, keep = T / 2;
        CHECK_OK(ngpt_context_cache_clear(ctx, -1));
        CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, tok, T));
        CHECK_OK(ngpt_context_cache_shift(ctx, 0, drop));
        CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 1, tok + drop, keep));    /* fresh */
        const int32_t *kt;
        int32_t n;
        CHECK_OK(ngpt_context_cache_tokens(ctx, 0, &kt, &n));
        CHECK(n == keep && !memcmp(kt, tok + drop, (size_t)keep * 4), "shift kept %d tokens", n);
        const size_t cnt = (size_t)keep * c.d_model;
        const float *k0 = ngpt_kv_keys(ctx, 0, 0), *k1 = ngpt_kv_keys(ctx, 0, 1);
        float err = 0.0f, mag = 0.0f;
        for (size_t i = 0; i < cnt; i++) {
            err = fmaxf(err, fabsf(k0[i] - k1[i]));
            mag = fmaxf(mag, fabsf(k1[i]));
        }
        CHECK(err <= 1e-5f * mag && mag > 0.0f, "layer 0 keys after the shift: error %g of %g",
              (double)err, (double)mag);
        CHECK(!memcmp(ngpt_kv_values(ctx, 0, 0), ngpt_kv_values(ctx, 0, 1), cnt * 4),
              "layer 0 values after the shift differ from a fresh prefill's");
        int32_t next[2] = {tok[T], tok[T]};
        const float *lg;
        CHECK_OK(ngpt_context_cache_decode(ctx, next, 2));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        float lerr = 0.0f, lmag = 0.0f;
        for (int j = 0; j < V; j++) {
            lerr = fmaxf(lerr, fabsf(lg[j] - lg[V + j]));
            lmag = fmaxf(lmag, fabsf(lg[V + j]));
        }
        if (layers == 1)
            CHECK(lerr <= 1e-4f * lmag, "one layer: logits after the shift off by %g of %g",
                  (double)lerr, (double)lmag);
        else
            CHECK(lerr > 1e-4f * lmag, "two layers: the shift was exact (%g of %g)?",
                  (double)lerr, (double)lmag);
        /* drop 0 changes nothing; dropping everything empties the slot */
        CHECK_OK(ngpt_context_cache_clear(ctx, 0));
        CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, tok, 5));
        static float before[T * 64];
        memcpy(before, ngpt_kv_keys(ctx, 0, 0), 5 * (size_t)c.d_model * 4);
        CHECK_OK(ngpt_context_cache_shift(ctx, 0, 0));
        CHECK(!memcmp(before, ngpt_kv_keys(ctx, 0, 0), 5 * (size_t)c.d_model * 4) &&
                  ngpt_context_cache_len(ctx, 0, &n) == NGPT_OK && n == 5, "drop 0 changed the slot");
        CHECK_OK(ngpt_context_cache_shift(ctx, 0, 5));
        CHECK(ngpt_context_cache_len(ctx, 0, &n) == NGPT_OK && n == 0, "drop all left %d", n);
        ngpt_context_free(ctx);
    }

    /* generation: below T the same as exact; past T the definition written
     * with the public calls (prefill, sample with the cache's tokens as the
     * recent ones, shift the oldest half when full, decode) */
    ngpt_context *ctx = make(1, NGPT_TRACE_NONE);
    enum { N = 3 * T };
    int32_t prompt[5] = {'h', 'e', 'l', 'l', 'o'}, want[N], got[N], exact[N];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = N;
    gc.sampler.seed = 5;
    gc.sampler.repeat_penalty = 1.3f;
    const float *lg;
    CHECK_OK(ngpt_context_cache_clear(ctx, -1));
    CHECK_OK(ngpt_context_cache_prefill(ctx, prompt, 1, 5));
    for (int g = 0; g < N; g++) {
        const int32_t *seen;
        int32_t n;
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        CHECK_OK(ngpt_context_cache_tokens(ctx, 0, &seen, &n));
        CHECK_OK(ngpt_context_sample(ctx, &gc.sampler, lg + (size_t)(g == 0 ? 4 : 0) * V, seen, n,
                                     0, (uint64_t)g, want + g));
        if (n == T) CHECK_OK(ngpt_context_cache_shift(ctx, 0, T - T / 2));
        CHECK_OK(ngpt_context_cache_decode(ctx, want + g, 1));
    }
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, exact, N, NULL, NULL, NULL));
    gc.context_mode = NGPT_CONTEXT_SHIFT;
    ngpt_generate_result r;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, got, N, NULL, NULL, &r));
    CHECK(r.n_tokens == N && !memcmp(got, want, sizeof want), "shift generation differs from "
          "its definition");
    CHECK(!memcmp(got, exact, (T - 5 + 1) * 4) && memcmp(got, exact, sizeof got),
          "below T, shift differs from exact (or past T it equals it)");

    /* stop sequences longer than what the shift keeps, ending just after a
     * shift, still stop exactly and stream the held tokens (the window's text
     * is kept apart from the cache) */
    gc.n_stop = 1;
    int tried = 0;
    for (int e = T - 5; e <= T - 3; e++) {          /* T-5: the first token fed by a shift */
        for (int m = T / 2 + 2; m <= T / 2 + 4; m++) {
            const int at = e - m + 1;
            bool nz = at >= 0;
            for (int j = 0; nz && j < m; j++) nz = got[at + j] != 0;
            if (!nz) continue;
            char stop[T + 1] = {0};
            for (int j = 0; j < m; j++) stop[j] = (char)got[at + j];
            int cut = 0;
            while (memcmp(got + cut, got + at, (size_t)m * 4)) cut++;
            const char *stops[1] = {stop};
            gc.stop = stops;
            static sink sk;
            sk.n = 0;
            CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, want, N, on_token, &sk, &r));
            CHECK(r.reason == NGPT_STOP_SEQUENCE && r.n_tokens == cut && sk.n == cut &&
                      !memcmp(sk.tok, got, (size_t)cut * 4),
                  "shift + a stop of %d ending at %d: %s n=%d streamed %d want %d", m, e,
                  ngpt_stop_reason_string(r.reason), (int)r.n_tokens, sk.n, cut);
            tried++;
        }
    }
    CHECK(tried >= 6, "only %d stop sequences tried", tried);
    ngpt_context_free(ctx);
}

/* Decode steps multiply by a packed copy of the weights: after the
 * parameters change (written through ngpt_context_params, or loaded) they
 * still equal the full forward. */
static void test_cached_after_param_change(void)
{
    ngpt_context *ctx = make(1, NGPT_TRACE_NONE);
    if (!ctx) return;
    int32_t tok[6] = {3, 1, 4, 1, 5, 9};
    static float full[6 * V];
    const float *lg;
    CHECK_OK(ngpt_context_cache_prefill(ctx, tok, 1, 6));     /* packs the weights of seed 7 */
    float *w;
    size_t n;
    ngpt_tensor_info fc1;
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.1.mlp.fc1.weight", &fc1));
    for (int round = 0; round < 2; round++) {
        if (round == 0) {
            CHECK_OK(ngpt_context_params(ctx, &w, &n));
            for (size_t i = 0; i < fc1.count; i++) w[fc1.offset + i] *= -1.5f;
        } else {
            CHECK_OK(ngpt_context_params_init(ctx, 8));
        }
        full_logits(ctx, tok, 6, full);
        CHECK_OK(ngpt_context_cache_clear(ctx, -1));
        CHECK_OK(ngpt_context_cache_prefill(ctx, tok, 1, 5));
        CHECK_OK(ngpt_context_cache_decode(ctx, tok + 5, 1));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        CHECK(!memcmp(lg, full + 5 * V, V * sizeof(float)),
              "decode after %s differs from the full forward", round ? "init" : "a write");
    }
    ngpt_context_free(ctx);
}

/* A fresh context whose first pass is a long prompt: generation's prefill
 * computes its last layer for one row, which takes the packed weights that
 * no earlier pass has made yet (the first text must still be the full
 * forward's argmax). Regression: the copy was refreshed only for passes of
 * at most 8 rows, so this read an unpacked (zero) copy. */
static void test_fresh_long_prompt(void)
{
    int32_t prompt[T], got[2];
    for (int i = 0; i < T; i++) prompt[i] = (i * 37 + 11) % V;
    for (int n = 9; n <= T; n += T - 9) {
        ngpt_context *ctx = make(1, NGPT_TRACE_NONE);
        if (!ctx) return;
        static float full[T * V];
        full_logits(ctx, prompt, n, full);
        ngpt_context_free(ctx);
        ctx = make(1, NGPT_TRACE_NONE);
        if (!ctx) return;
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.max_tokens = 1;
        gc.sampler.temperature = 0.0f;
        ngpt_generate_result r;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, n, got, 1, NULL, NULL, &r));
        const float *row = full + (size_t)(n - 1) * V;
        int best = 0;
        for (int j = 1; j < V; j++)
            if (row[j] > row[best]) best = j;
        CHECK(r.n_tokens == 1 && got[0] == best, "fresh context, prompt of %d: token %d, the "
              "full forward's argmax is %d", n, (int)got[0], best);
        ngpt_context_free(ctx);
    }
}

/* Greedy tokens of a generation, and the logits checksum it leaves. */
static uint64_t greedy_run(ngpt_context *ctx, const int32_t *prompt, int n, int32_t out[8])
{
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 8;
    gc.sampler.temperature = 0.0f;
    ngpt_generate_result r;
    uint64_t h = 0;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, n, out, 8, NULL, NULL, &r));
    CHECK_OK(ngpt_context_logits_checksum(ctx, &h));
    return h;
}

/* ngpt_context_prepare changes no result, and a generation sees parameters
 * written through a pointer handed out before an earlier generation (which
 * packed the old values): each generation after ngpt_context_params repacks. */
static void test_prepare_and_old_pointer(void)
{
    const int32_t prompt[5] = {7, 1, 8, 2, 8};
    int32_t a[8], b[8];
    ngpt_context *plain = make(1, NGPT_TRACE_NONE), *prepared = make(1, NGPT_TRACE_NONE);
    if (plain && prepared) {
        CHECK_OK(ngpt_context_prepare(prepared));
        uint64_t ha = greedy_run(plain, prompt, 5, a), hb = greedy_run(prepared, prompt, 5, b);
        CHECK(ha == hb && !memcmp(a, b, sizeof a), "a prepared context generates differently");
        float *w;
        size_t n;
        CHECK_OK(ngpt_context_params(prepared, &w, &n));
        greedy_run(prepared, prompt, 5, b);             /* packs the current values */
        for (size_t i = 0; i < n; i++) w[i] *= 0.5f;    /* then writes through the old pointer */
        uint64_t h_old_ptr = greedy_run(prepared, prompt, 5, b);
        float *w2;
        CHECK_OK(ngpt_context_params(plain, &w2, &n));
        for (size_t i = 0; i < n; i++) w2[i] *= 0.5f;
        uint64_t h_fresh = greedy_run(plain, prompt, 5, a);
        CHECK(h_old_ptr == h_fresh && h_fresh != ha && !memcmp(a, b, sizeof a),
              "a generation after a write through an old pointer used stale packed weights");
    }
    ngpt_context_free(plain);
    ngpt_context_free(prepared);
}

int main(void)
{
    test_cached_equals_full();
    test_generate();
    test_exact_past_context();
    test_shift();
    test_cached_after_param_change();
    test_fresh_long_prompt();
    test_prepare_and_old_pointer();
    return test_summary("test_generate");
}
