/* test_logits_rows.c — shape.logits_rows: a context that keeps only the last
 * n positions' logits gives exactly those rows of a full context (f32, q8,
 * q4; 1 and 3 threads; two sequences; with and without ln_f), plans a
 * smaller arena, generates the same tokens (greedy, sampled, no_cache past
 * the context, beam, speculative with a draft), and refuses the calls it
 * cannot serve with an error naming logits_rows. */
#include "test.h"

enum { B = 2, CAP = 64 };

static ngpt_context *make(const ngpt_config *c, int batch, int threads, int32_t rows, uint64_t seed)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = batch, s.threads = threads, s.logits_rows = rows;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, c, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, seed));
    return ctx;
}

/* The last pass's logits of `small` (k rows a sequence) are rows len-k.. of
 * each sequence of `full`'s (len rows a sequence), bit for bit, and its
 * checksum covers exactly them. */
static void same_rows(ngpt_context *full, ngpt_context *small, int32_t len, int32_t k, int32_t V,
                      const char *what)
{
    const float *a = NULL, *b = NULL;
    CHECK_OK(ngpt_context_logits(full, &a));
    CHECK_OK(ngpt_context_logits(small, &b));
    if (!a || !b) return;
    int bad = 0;
    for (int s = 0; s < B; s++)
        bad += memcmp(b + (size_t)s * k * V, a + ((size_t)s * len + (size_t)(len - k)) * V,
                      (size_t)k * V * sizeof(float)) != 0;
    CHECK(bad == 0, "%s: %d sequences' last %d rows differ from the full context's", what, bad,
          (int)k);
    uint64_t h = 0;
    CHECK_OK(ngpt_context_logits_checksum(small, &h));
    CHECK(h == ngpt_checksum_bytes(b, (size_t)B * k * V * sizeof(float)),
          "%s: the checksum is not over the %d kept rows", what, (int)k);
}

static void rows(const char *sw, ngpt_weights weights, int threads)
{
    ngpt_config c = test_config_tiny();
    CHECK(test_config_apply(&c, sw), "config %s: %s", sw, ngpt_last_error());
    c.weights = weights;
    const int32_t T = c.context_len, V = c.vocab_size;
    ngpt_context *full = make(&c, B, threads, NGPT_LOGITS_ALL, 9);
    int32_t tok[B * 16];
    for (int i = 0; i < B * T; i++) tok[i] = (i * 37 + 5) % V;
    char what[160];
    const int32_t keep[2] = {1, 3};
    for (int r = 0; r < 2; r++) {
        ngpt_context *small = make(&c, B, threads, keep[r], 9);
        if (!full || !small) break;
        const int32_t n = keep[r];
        /* full forwards: every position, and fewer tokens than rows kept */
        const int32_t lens[2] = {T, 2};
        for (int l = 0; l < 2; l++) {
            const int32_t len = lens[l], k = n < len ? n : len;
            int32_t t[B * 16];
            for (int s = 0; s < B; s++) memcpy(t + s * len, tok + s * T, (size_t)len * 4);
            CHECK_OK(ngpt_context_forward(full, t, B, len, NULL, NULL));
            CHECK_OK(ngpt_context_forward(small, t, B, len, NULL, NULL));
            snprintf(what, sizeof what, "[%s w%d t%d rows=%d] forward len %d", sw, (int)weights,
                     threads, (int)n, (int)len);
            same_rows(full, small, len, k, V, what);
        }
        /* cached passes: a 5-token prefill of both slots, then a decode */
        CHECK_OK(ngpt_context_cache_clear(full, -1));
        CHECK_OK(ngpt_context_cache_clear(small, -1));
        int32_t p[B * 5];
        for (int s = 0; s < B; s++) memcpy(p + s * 5, tok + s * T, 5 * 4);
        CHECK_OK(ngpt_context_cache_prefill(full, p, B, 5));
        CHECK_OK(ngpt_context_cache_prefill(small, p, B, 5));
        snprintf(what, sizeof what, "[%s w%d t%d rows=%d] prefill", sw, (int)weights, threads,
                 (int)n);
        same_rows(full, small, 5, n, V, what);
        CHECK_OK(ngpt_context_cache_decode(full, tok + 7, B));
        CHECK_OK(ngpt_context_cache_decode(small, tok + 7, B));
        snprintf(what, sizeof what, "[%s w%d t%d rows=%d] decode", sw, (int)weights, threads,
                 (int)n);
        same_rows(full, small, 1, 1, V, what);
        ngpt_context_free(small);
    }
    ngpt_context_free(full);
}

/* The arena: B x n x V logits instead of B x T x V; n >= T plans as
 * NGPT_LOGITS_ALL; the default (0) plans 1 + draft_tokens rows. */
static void arena(void)
{
    ngpt_config c = test_config_tiny();
    c.vocab_size = 1000;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = B;
    size_t all = 0, one = 0, many = 0, dflt = 0, four = 0, spec = 0;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &dflt));
    s.logits_rows = NGPT_LOGITS_ALL;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &all));
    s.logits_rows = 1;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &one));
    s.logits_rows = c.context_len + 5;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &many));
    s.logits_rows = 4;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &four));
    s.logits_rows = 0, s.draft_tokens = 3;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &spec));
    CHECK(dflt == one, "the default plans %zu bytes, logits_rows=1 %zu", dflt, one);
    CHECK(spec == four, "the default with draft_tokens=3 plans %zu bytes, logits_rows=4 %zu",
          spec, four);
    const size_t V = 1000, T = (size_t)c.context_len;
    /* both regions are multiples of 64 bytes here (V floats = 4000 bytes: rounded up) */
    const size_t full = (B * T * V * 4 + 63) / 64 * 64, kept = (B * V * 4 + 63) / 64 * 64;
    CHECK(all - one == full - kept, "logits_rows=1 saves %zu bytes, want %zu", all - one,
          full - kept);
    CHECK(many == all, "logits_rows > T plans %zu bytes, want every position's %zu", many, all);
}

typedef struct run {
    int32_t out[CAP];
    ngpt_generate_result r;
} run;

static void generate(ngpt_context *ctx, const ngpt_generate_config *gc, const int32_t *prompt,
                     int32_t n, run *g)
{
    memset(g, 0, sizeof *g);
    CHECK_OK(ngpt_context_generate(ctx, gc, prompt, n, g->out, CAP, NULL, NULL, &g->r));
}

static void same_text(ngpt_context *full, ngpt_context *small, const ngpt_generate_config *gc,
                      const int32_t *prompt, int32_t n, const char *what)
{
    run a, b;
    generate(full, gc, prompt, n, &a);
    generate(small, gc, prompt, n, &b);
    CHECK(a.r.n_tokens == b.r.n_tokens && a.r.n_tokens > 0 && a.r.reason == b.r.reason &&
              !memcmp(a.out, b.out, sizeof a.out),
          "%s: %d and %d tokens, or different ones", what, (int)a.r.n_tokens, (int)b.r.n_tokens);
}

static void generation(ngpt_weights weights)
{
    ngpt_config c = test_config_tiny();
    c.weights = weights;
    ngpt_context *full = make(&c, B, 1, NGPT_LOGITS_ALL, 3), *small = make(&c, B, 1, 1, 3);
    ngpt_context *draft = make(&c, 1, 1, 1, 3), *spec = make(&c, 1, 1, 4, 3);
    ngpt_context *other = make(&c, 1, 1, 1, 44);   /* a draft that misses */
    if (!full || !small || !draft || !spec || !other) goto out;
    int32_t prompt[12];
    for (int i = 0; i < 12; i++) prompt[i] = "the cat sat."[i];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 30;     /* past T = 16: the exact window slides */
    gc.sampler.temperature = 0.0f;
    same_text(full, small, &gc, prompt, 12, "greedy");
    gc.sampler.temperature = 0.9f, gc.sampler.seed = 5, gc.sampler.top_k = 20;
    same_text(full, small, &gc, prompt, 12, "sampled");
    gc.context_mode = NGPT_CONTEXT_SHIFT;
    same_text(full, small, &gc, prompt, 12, "sampled, shifting the context");
    gc.context_mode = NGPT_CONTEXT_EXACT;
    gc.no_cache = true;
    same_text(full, small, &gc, prompt, 12, "no_cache");
    gc.no_cache = false;
    /* speculative: draft_tokens 3 needs 4 rows; the full context against spec */
    for (int d = 0; d < 2; d++) {
        gc.draft = d ? other : draft, gc.draft_tokens = 3;
        same_text(full, spec, &gc, prompt, 12, d ? "speculative, another draft" : "speculative");
    }
    gc.draft = NULL, gc.draft_tokens = 0;
    gc.sampler = ngpt_sampler_default();
    gc.beam_width = 2, gc.max_tokens = 8;
    same_text(full, small, &gc, prompt, 12, "beam search");
out:
    ngpt_context_free(full);
    ngpt_context_free(small);
    ngpt_context_free(draft);
    ngpt_context_free(spec);
    ngpt_context_free(other);
}

#define CHECK_NAMES(what) \
    CHECK(strstr(ngpt_last_error(), "logits_rows") != NULL, "%s: %s", what, ngpt_last_error())

static void refusals(void)
{
    ngpt_config c = test_config_tiny();
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    size_t bytes = 0;
    ngpt_context *ctx = NULL;
    s.logits_rows = 1;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &s, &bytes), NGPT_ERR_BAD_ARG);
    CHECK_NAMES("train mode");
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0), NGPT_ERR_BAD_ARG);
    CHECK_NAMES("train mode init");
    s = ngpt_shape_default(NGPT_MODE_INFER);
    s.logits_rows = -2;     /* -1 is NGPT_LOGITS_ALL */
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &s, &bytes), NGPT_ERR_BAD_ARG);
    CHECK_NAMES("negative");

    ngpt_context *small = make(&c, 1, 1, 2, 3), *draft = make(&c, 1, 1, 1, 3);
    if (!small || !draft) goto out;
    int32_t tok[17];
    for (int i = 0; i < 17; i++) tok[i] = 'a' + i;
    float loss = 0.0f;
    CHECK_STATUS(ngpt_context_forward(small, tok, 1, 16, tok + 1, &loss), NGPT_ERR_BAD_ARG);
    CHECK_NAMES("a loss");
    CHECK_OK(ngpt_context_forward(small, tok, 1, 2, tok + 1, &loss));   /* 2 rows: all kept */
    CHECK_OK(ngpt_context_forward(small, tok, 1, 16, NULL, NULL));      /* no loss: fine */
    static const char text[] = "some text to evaluate on, long enough for a few windows of it.";
    ngpt_data *data = NULL;
    CHECK_OK(ngpt_data_open_mem(&data, text, sizeof text - 1, 0.5f, 8));
    if (data) {
        CHECK_STATUS(ngpt_context_evaluate(small, data, 1, 1, 1, 8, &loss), NGPT_ERR_BAD_ARG);
        CHECK_NAMES("evaluate");
        ngpt_data_free(data);
    }
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 4, gc.draft = draft, gc.draft_tokens = 2;   /* 3 rows, 2 kept */
    int32_t out[8];
    CHECK_STATUS(ngpt_context_generate(small, &gc, tok, 4, out, 8, NULL, NULL, NULL),
                 NGPT_ERR_EXCEEDS_PLAN);
    CHECK_NAMES("speculative");
    gc.draft_tokens = 1;    /* 2 rows: served */
    CHECK_OK(ngpt_context_generate(small, &gc, tok, 4, out, 8, NULL, NULL, NULL));
out:
    ngpt_context_free(small);
    ngpt_context_free(draft);
}

int main(void)
{
    static const char *const sws[2] = {"", "final_norm=0 pos=learned"};
    static const ngpt_weights ws[3] = {NGPT_WEIGHTS_F32, NGPT_WEIGHTS_Q8, NGPT_WEIGHTS_Q4};
    for (int s = 0; s < 2; s++)
        for (int w = 0; w < 3; w++)
            for (int t = 1; t <= 3; t += 2) rows(sws[s], ws[w], t);
    arena();
    for (int w = 0; w < 3; w++) generation(ws[w]);
    refusals();
    return test_summary("test_logits_rows");
}
