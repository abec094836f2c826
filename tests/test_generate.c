/* test_generate.c — KV cache and generation: prefill + decode logits equal
 * the full forward bit for bit at every position; batched decode; the
 * generation loop (sliding window, stops, callback, beams); clear errors. */
#include <stdlib.h>

#include "internal.h"     /* the run state: generation leaves dropout as it was */
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
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, &c, &s, NULL, 0));
    CHECK_OK(ngpt_params_init(ctx, 7));
    return ctx;
}

/* Full-forward logits of every prefix row: full[i] = logits at position i. */
static void full_logits(ngpt_context *ctx, const int32_t *tok, int n, float *full)
{
    const float *lg;
    CHECK_OK(ngpt_model_forward(ctx, tok, 1, n, NULL, NULL));
    CHECK_OK(ngpt_logits_data(ctx, &lg));
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
        CHECK_OK(ngpt_cache_clear(ctx, -1));
        CHECK_OK(ngpt_cache_prefill(ctx, tok, 1, p));
        CHECK_OK(ngpt_logits_data(ctx, &lg));
        CHECK(!memcmp(lg, full, (size_t)p * V * sizeof(float)), "prefill %d rows differ", p);
        for (int i = p; i < T; i++) {
            CHECK_OK(ngpt_cache_decode(ctx, tok + i, 1));
            CHECK_OK(ngpt_logits_data(ctx, &lg));
            CHECK(!memcmp(lg, full + (size_t)i * V, V * sizeof(float)),
                  "prefill %d + decode: position %d differs", p, i);
        }
        int32_t n;
        CHECK_OK(ngpt_cache_len(ctx, 0, &n));
        CHECK(n == T, "cache holds %d", n);
    }
    /* chunked prefill: 3 + 5 + 8 */
    CHECK_OK(ngpt_cache_clear(ctx, 0));
    CHECK_OK(ngpt_cache_prefill_slot(ctx, 0, tok, 3));
    CHECK_OK(ngpt_cache_prefill_slot(ctx, 0, tok + 3, 5));
    CHECK_OK(ngpt_logits_data(ctx, &lg));
    CHECK(!memcmp(lg, full + 3 * V, 5 * V * sizeof(float)), "chunked prefill differs");

    /* the traced row of a decoded token equals the full forward's last row */
    const float *tr_full, *tr_dec;
    size_t nf, nd;
    static float row[4 * T];
    CHECK_OK(ngpt_model_forward(ctx, tok, 1, 9, NULL, NULL));
    CHECK_OK(ngpt_trace_data(ctx, 1, &tr_full, &nf));
    memcpy(row, tr_full, nf * sizeof(float));
    CHECK_OK(ngpt_cache_decode(ctx, tok + 8, 1));
    CHECK_OK(ngpt_trace_data(ctx, 1, &tr_dec, &nd));
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
    CHECK_OK(ngpt_cache_clear(ctx, -1));
    CHECK_OK(ngpt_cache_prefill_slot(ctx, 0, tok, 4));
    CHECK_OK(ngpt_cache_prefill_slot(ctx, 1, other, 9));
    for (int i = 0; i < 6; i++) {
        int32_t step[2] = {tok[4 + i], other[9 + i]};
        CHECK_OK(ngpt_cache_decode(ctx, step, 2));
        CHECK_OK(ngpt_logits_data(ctx, &lg));
        CHECK(!memcmp(lg, full + (size_t)(4 + i) * V, V * sizeof(float)) &&
                  !memcmp(lg + V, full2 + (size_t)(9 + i) * V, V * sizeof(float)),
              "batched decode step %d differs", i);
    }
    /* a fork: copy slot 1 into slot 0 and continue it */
    CHECK_OK(ngpt_cache_copy(ctx, 0, 1));
    CHECK_OK(ngpt_cache_decode(ctx, other + 15, 1));
    CHECK_OK(ngpt_logits_data(ctx, &lg));
    CHECK(!memcmp(lg, full2 + 15 * V, V * sizeof(float)), "forked slot differs");

    /* errors */
    CHECK_STATUS(ngpt_cache_decode(ctx, tok, 1), NGPT_ERR_TOO_LONG);     /* slot 0 is full */
    int32_t bad = V;
    CHECK_OK(ngpt_cache_clear(ctx, -1));
    CHECK_STATUS(ngpt_cache_decode(ctx, &bad, 1), NGPT_ERR_BAD_TOKEN);
    CHECK_STATUS(ngpt_cache_prefill(ctx, tok, 3, 1), NGPT_ERR_EXCEEDS_PLAN);
    CHECK_STATUS(ngpt_cache_prefill_slot(ctx, 2, tok, 1), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_cache_prefill(NULL, tok, 1, 1), NGPT_ERR_NULL_ARG);
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
    CHECK_OK(ngpt_model_generate(ctx, gc, p, n, out, gc->max_tokens, sk ? on_token : NULL, sk, &r));
    if (sk) CHECK(sk->n == r.n_tokens && !memcmp(sk->tok, out, (size_t)sk->n * 4),
                  "streamed tokens differ from the output");
    return r;
}

/* Greedy by hand: full forward over the window, argmax, slide. */
static void greedy_by_hand(ngpt_context *ctx, const char *prompt, int n_new, int32_t *out)
{
    int32_t seq[T + 64];
    int n = (int)strlen(prompt);
    for (int i = 0; i < n; i++) seq[i] = (unsigned char)prompt[i];
    for (int g = 0; g < n_new; g++) {
        int w = n < T ? n : T;
        const float *lg;
        CHECK_OK(ngpt_model_forward(ctx, seq + n - w, 1, w, NULL, NULL));
        CHECK_OK(ngpt_logits_data(ctx, &lg));
        lg += (size_t)(w - 1) * V;
        int best = 0;
        for (int j = 1; j < V; j++)
            if (lg[j] > lg[best]) best = j;
        out[g] = seq[n++] = best;
    }
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
    CHECK_OK(ngpt_dropout_set(ctx, true, 99, 7));
    memset(b, 0, 40 * 4);
    gen(ctx, &gc, "hello", b, NULL);
    CHECK(!memcmp(a, b, 40 * 4), "uncached generation applied the context's dropout");
    CHECK(ctx->run.dropout.on && ctx->run.dropout.seed == 99 && ctx->run.dropout.step == 7,
          "generation changed the dropout setting");
    CHECK_OK(ngpt_dropout_set(ctx, false, 0, 0));
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
    gc.end_token = a[5];
    int first = 0;
    while (a[first] != a[5]) first++;
    r = gen(ctx, &gc, "hello", b, &sk);
    CHECK(r.reason == NGPT_STOP_END_TOKEN && r.n_tokens == first && r.n_generated == first + 1,
          "end token: %s n=%d", ngpt_stop_reason_string(r.reason), r.n_tokens);
    gc.end_token = -1;

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
    CHECK_STATUS(ngpt_model_generate(ctx, &gc, &p1, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    gc.beam_width = 0;

    /* errors: a prompt longer than T, a bad token, bad sampler values */
    int32_t longp[T + 1] = {0};
    CHECK_STATUS(ngpt_model_generate(ctx, &gc, longp, T + 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_TOO_LONG);
    int32_t badp[2] = {'a', 300};
    CHECK_STATUS(ngpt_model_generate(ctx, &gc, badp, 2, NULL, 0, NULL, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    gc.sampler.temperature = -1.0f;
    CHECK_STATUS(ngpt_model_generate(ctx, &gc, badp, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    gc.sampler.temperature = 1.0f;
    gc.sampler.top_p = 0.0f;
    CHECK_STATUS(ngpt_model_generate(ctx, &gc, badp, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    gc.sampler.top_p = 1.0f;
    CHECK_STATUS(ngpt_model_generate(ctx, &gc, badp, 1, a, 3, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    ngpt_context_free(ctx);

    /* a training context cannot generate */
    ngpt_config cf = tiny();
    ngpt_shape st = ngpt_shape_default(NGPT_MODE_TRAIN);
    st.batch = 1;
    ngpt_context *tr = NULL;
    CHECK_OK(ngpt_context_init(&tr, &cf, &st, NULL, 0));
    CHECK_STATUS(ngpt_model_generate(tr, &gc, badp, 1, NULL, 0, NULL, NULL, NULL), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_cache_decode(tr, badp, 1), NGPT_ERR_WRONG_MODE);
    ngpt_context_free(tr);
}

int main(void)
{
    test_cached_equals_full();
    test_generate();
    return test_summary("test_generate");
}
