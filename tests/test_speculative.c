/* test_speculative.c — speculative generation gives exactly the output of
 * plain generation (tokens, streamed tokens, stop reason, counts, the cache
 * left behind) with the same seed and settings: greedy and sampled, top-k/p,
 * min-p, penalty, ban and bias, stop sequences ending inside an accepted
 * run, the end token, max tokens, the sliding and shifted window; with a
 * draft that is the model itself (every proposal kept), a draft of other
 * weights (most refused) and prompt lookup; byte and BPE models; 1 and 3
 * threads. Then its errors. */
#include "test.h"

enum { T = 48, MAXTOK = 56, CAP = MAXTOK + 300 };

static const char TEXT[] =
    "it was the best of times, it was the worst of times, it was the age of wisdom, it was "
    "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity.\n";

static ngpt_config config(int32_t V, int32_t C, int32_t L)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = V, c.context_len = T, c.d_model = C, c.n_layers = L, c.n_heads = 4;
    c.d_ff = 2 * C;
    return c;
}

static ngpt_context *make(ngpt_config c, int threads, uint64_t seed, ngpt_tokenizer *tok)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads;
    s.draft_tokens = 8;         /* the largest K the tests check */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    CHECK_OK(ngpt_context_params_init(ctx, seed));
    if (tok) CHECK_OK(ngpt_context_tokenizer_set(ctx, tok));
    return ctx;
}

/* What one generation gives: out, the streamed tokens, the result, the cache. */
typedef struct run {
    int32_t out[CAP], streamed[CAP], cache[T];
    int n_streamed;
    int32_t n_cache;
    ngpt_generate_result r;
} run;

static int on_token(int32_t id, void *user)
{
    run *g = user;
    g->streamed[g->n_streamed++] = id;
    return 0;
}

static void generate(ngpt_context *ctx, const ngpt_generate_config *gc, const int32_t *prompt,
                     int32_t n, run *g)
{
    memset(g, 0, sizeof *g);
    CHECK_OK(ngpt_context_generate(ctx, gc, prompt, n, g->out, CAP, on_token, g, &g->r));
    const int32_t *ct;
    CHECK_OK(ngpt_context_cache_tokens(ctx, 0, &ct, &g->n_cache));
    memcpy(g->cache, ct, (size_t)g->n_cache * sizeof(int32_t));
}

static int32_t proposed, accepted, proposed_exact, accepted_exact;

/* Speculative (draft or lookup, K) against plain: identical in everything. */
static void same(ngpt_context *ctx, ngpt_generate_config gc, ngpt_context *draft, int32_t lookup,
                 int32_t K, const int32_t *prompt, int32_t n, const char *what)
{
    static run a, b;
    generate(ctx, &gc, prompt, n, &a);
    gc.draft = draft, gc.lookup = lookup, gc.draft_tokens = K;
    generate(ctx, &gc, prompt, n, &b);
    CHECK(a.r.n_tokens == b.r.n_tokens && a.r.n_generated == b.r.n_generated &&
              a.r.reason == b.r.reason && !memcmp(a.out, b.out, sizeof a.out) &&
              a.n_streamed == b.n_streamed && !memcmp(a.streamed, b.streamed, sizeof a.streamed),
          "%s (%s K=%d): speculative output differs from plain (%d/%d tokens, %s/%s)", what,
          draft ? "draft" : "lookup", (int)K, (int)a.r.n_tokens, (int)b.r.n_tokens,
          ngpt_stop_reason_string(a.r.reason), ngpt_stop_reason_string(b.r.reason));
    CHECK(a.n_cache == b.n_cache && !memcmp(a.cache, b.cache, (size_t)a.n_cache * 4),
          "%s (K=%d): the cache left behind differs", what, (int)K);
    CHECK(a.r.n_proposed == 0 && b.r.n_accepted <= b.r.n_proposed, "%s: counts %d %d", what,
          (int)b.r.n_accepted, (int)b.r.n_proposed);
    proposed += b.r.n_proposed;
    accepted += b.r.n_accepted;
    if (gc.context_mode == NGPT_CONTEXT_EXACT) {
        proposed_exact += b.r.n_proposed;
        accepted_exact += b.r.n_accepted;
    }
}

/* A stop sequence made of `len` bytes the plain text holds at `at`, so
 * that it ends inside a run the draft proposed. */
static const char *stop_from(const ngpt_tokenizer *tk, const int32_t *out, int32_t n, int at,
                             int len, char *buf)
{
    char text[4 * CAP];
    size_t got = 0;
    if (tk) CHECK_OK(ngpt_tokenizer_decode(tk, out, (size_t)n, text, sizeof text, &got));
    else for (int32_t i = 0; i < n; i++) text[got++] = (char)out[i];
    for (int i = 0; i < len; i++) {
        buf[i] = text[at + i];
        if (!buf[i]) buf[i] = 'x';  /* a stop sequence is a C string */
    }
    buf[len] = 0;
    return buf;
}

/* Every sampler setting, stop and window, for one model, draft and K. */
static void sweep(ngpt_context *ctx, const ngpt_tokenizer *tk, ngpt_context *draft,
                  int32_t lookup, int32_t K, const int32_t *prompt, int32_t n, const char *what)
{
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = MAXTOK;     /* past T: the window slides */
    gc.ignore_end = true;       /* not the tokenizer's <|endoftext|>: run on past T */
    static float bias[4096];
    const int32_t banned[2] = {'e', 3};
    ngpt_sampler samplers[3] = {ngpt_sampler_default(), ngpt_sampler_default(),
                                ngpt_sampler_default()};
    samplers[0].temperature = 0.0f;
    samplers[1].temperature = 0.9f, samplers[1].seed = 5;
    samplers[2].temperature = 0.7f, samplers[2].seed = 11, samplers[2].top_k = 30;
    samplers[2].top_p = 0.9f, samplers[2].min_p = 0.02f, samplers[2].repeat_penalty = 1.2f;
    samplers[2].repeat_window = 12, samplers[2].banned = banned, samplers[2].n_banned = 2;
    samplers[2].logit_bias = bias;
    for (int i = 0; i < 4096; i++) bias[i] = (float)(i % 7) * 0.05f;
    for (int s = 0; s < 3; s++) {
        gc.sampler = samplers[s];
        gc.context_mode = NGPT_CONTEXT_EXACT;
        same(ctx, gc, draft, lookup, K, prompt, n, what);
        gc.context_mode = NGPT_CONTEXT_SHIFT;
        same(ctx, gc, draft, lookup, K, prompt, n, what);
        gc.context_mode = NGPT_CONTEXT_EXACT;
        /* a stop sequence and an end token from the plain text */
        static run plain;
        generate(ctx, &gc, prompt, n, &plain);
        char buf[8];
        const char *stop[1] = {stop_from(tk, plain.out, plain.r.n_tokens, 9, 3, buf)};
        gc.stop = stop, gc.n_stop = 1;
        same(ctx, gc, draft, lookup, K, prompt, n, what);
        gc.stop = NULL, gc.n_stop = 0;
        const int32_t end = plain.out[13];
        gc.end_tokens = &end, gc.n_end_tokens = 1, gc.ignore_end = false;
        same(ctx, gc, draft, lookup, K, prompt, n, what);
        gc.end_tokens = NULL, gc.n_end_tokens = 0, gc.ignore_end = true;
        gc.max_tokens = 7;
        same(ctx, gc, draft, lookup, K, prompt, n, what);
        gc.max_tokens = MAXTOK;
    }
}

/* One model (bytes or BPE), threads: a draft of the same weights, one of
 * other weights, lookup; K 1, 3 and 8, or only 3 (kept small for qemu). */
static void model(ngpt_tokenizer *tk, int threads, bool every_k)
{
    int32_t V = 256;
    if (tk) {
        ngpt_tokenizer_info info;
        CHECK_OK(ngpt_tokenizer_describe(tk, &info));
        V = info.n_tokens;
    }
    ngpt_context *ctx = make(config(V, 32, 2), threads, 7, tk);
    ngpt_context *self = make(config(V, 32, 2), threads, 7, tk);
    ngpt_context *other = make(config(V, 16, 1), 1, 99, tk);
    static const char repeated[] = "the cat sat on the mat. the cat sat on the";
    int32_t prompt[64];
    size_t n = 0;
    if (tk) CHECK_OK(ngpt_tokenizer_encode(tk, repeated, sizeof repeated - 1, prompt, 64, &n));
    else for (n = 0; n < sizeof repeated - 1; n++) prompt[n] = (unsigned char)repeated[n];
    const int32_t Ks[3] = {1, 3, 8};
    for (int k = every_k ? 0 : 1; k < (every_k ? 3 : 2); k++) {
        /* the same weights: every proposal kept, except after a context
         * shift (the model's shifted keys are not the draft's fresh ones) */
        proposed_exact = accepted_exact = 0;
        sweep(ctx, tk, self, 0, Ks[k], prompt, (int32_t)n, "self draft");
        CHECK(proposed_exact > 0 && accepted_exact == proposed_exact,
              "a draft of the same weights: %d of %d kept", (int)accepted_exact,
              (int)proposed_exact);
        proposed = accepted = 0;
        sweep(ctx, tk, other, 0, Ks[k], prompt, (int32_t)n, "other draft");
        CHECK(proposed > 0 && accepted < proposed, "another draft: %d of %d kept", (int)accepted,
              (int)proposed);
        proposed = accepted = 0;
        sweep(ctx, tk, NULL, 4, Ks[k], prompt, (int32_t)n, "lookup");
        CHECK(accepted > 0, "lookup on a repetitive prompt: %d of %d kept", (int)accepted,
              (int)proposed);
    }
    ngpt_context_free(ctx);
    ngpt_context_free(self);
    ngpt_context_free(other);
}

static void errors(void)
{
    ngpt_context *ctx = make(config(256, 32, 2), 1, 7, NULL);
    ngpt_context *draft = make(config(256, 16, 1), 1, 8, NULL);
    ngpt_context *wide = make(config(300, 16, 1), 1, 8, NULL);
    ngpt_context *train = NULL;
    ngpt_config tc = config(256, 16, 1);
    ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
    ts.batch = 1;
    CHECK_OK(ngpt_context_init(&train, NULL, &tc, &ts, NULL, 0));
    ngpt_shape narrow_shape = ngpt_shape_default(NGPT_MODE_INFER);
    narrow_shape.seq = 4, narrow_shape.draft_tokens = 3;
    ngpt_config cc = config(256, 32, 2);
    ngpt_context *narrow = NULL;
    CHECK_OK(ngpt_context_init(&narrow, NULL, &cc, &narrow_shape, NULL, 0));
    int32_t prompt[3] = {'a', 'b', 'c'}, out[CAP];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 8;
    struct { ngpt_context *draft; int32_t lookup, K, beam; bool no_cache; ngpt_status want;
             const char *says; } bad[] = {
        {draft, 0, 0, 0, false, NGPT_ERR_BAD_ARG, "draft_tokens in 1..16"},
        {NULL, 2, 0, 0, false, NGPT_ERR_BAD_ARG, "draft_tokens in 1..16"},
        {draft, 0, 17, 0, false, NGPT_ERR_BAD_ARG, "draft_tokens in 1..16"},
        {NULL, 0, 4, 0, false, NGPT_ERR_BAD_ARG, "needs a draft"},
        {NULL, -1, 4, 0, false, NGPT_ERR_BAD_ARG, "lookup must be in 0..64"},
        {NULL, 65, 4, 0, false, NGPT_ERR_BAD_ARG, "lookup must be in 0..64"},
        {draft, 3, 4, 0, false, NGPT_ERR_BAD_ARG, "not both"},
        {draft, 0, 4, 1, false, NGPT_ERR_UNSUPPORTED, "beam search cannot be speculative"},
        {NULL, 3, 4, 0, true, NGPT_ERR_BAD_ARG, "no_cache"},
        {ctx, 0, 4, 0, false, NGPT_ERR_BAD_ARG, "a second context"},
        {wide, 0, 4, 0, false, NGPT_ERR_CONFIG_MISMATCH, "share the model's tokenizer"},
        {train, 0, 4, 0, false, NGPT_ERR_WRONG_MODE, "draft context was planned for training"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gc.draft = bad[i].draft, gc.lookup = bad[i].lookup, gc.draft_tokens = bad[i].K;
        gc.beam_width = bad[i].beam, gc.no_cache = bad[i].no_cache;
        if (gc.beam_width) gc.sampler = ngpt_sampler_default();
        CHECK_STATUS(ngpt_context_generate(ctx, &gc, prompt, 3, out, CAP, NULL, NULL, NULL),
                     bad[i].want);
        CHECK(strstr(ngpt_last_error(), "ngpt_context_generate: ") == ngpt_last_error() &&
                  strstr(ngpt_last_error(), bad[i].says),
              "case %zu says: %s", i, ngpt_last_error());
    }
    gc = ngpt_generate_config_default();
    gc.lookup = 2, gc.draft_tokens = 4;    /* 5 tokens in one pass; seq 4 */
    CHECK_STATUS(ngpt_context_generate(narrow, &gc, prompt, 3, out, CAP, NULL, NULL, NULL),
                 NGPT_ERR_EXCEEDS_PLAN);
    gc.draft_tokens = 3;
    CHECK_OK(ngpt_context_generate(narrow, &gc, prompt, 3, out, CAP, NULL, NULL, NULL));
    ngpt_context_free(ctx);
    ngpt_context_free(draft);
    ngpt_context_free(wide);
    ngpt_context_free(train);
    ngpt_context_free(narrow);
}

int main(void)
{
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = 320;
    const void *texts[1] = {TEXT};
    const size_t sizes[1] = {sizeof TEXT - 1};
    ngpt_tokenizer *tk = NULL;
    CHECK_OK(ngpt_tokenizer_train(&tk, &tc, texts, sizes, 1));
    model(NULL, 1, true);
    model(NULL, 3, false);
    model(tk, 1, false);
    model(tk, 3, false);
    ngpt_tokenizer_free(tk);
    errors();
    return test_summary("test_speculative");
}
