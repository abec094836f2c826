/* test_sampler.c — each sampler filter on crafted logits: exact survivors
 * (ties included), the repetition penalty's direction, argmax equivalences,
 * top-p 1 == unfiltered, bad values. Uses the internal filter to see the
 * survivors (src/generate/sampler.h). */
#include <math.h>

#include "test.h"
#include "generate/sampler.h"

enum { V = 8 };

static ngpt_context *ctx;

/* Survivor ids (descending order) into ids; returns their count. */
static int survivors(const ngpt_sampler *s, const float *logits, const int32_t *recent, int nr,
                     int32_t *ids, float *probs)
{
    float *z = ctx->plan.samp.z;
    CHECK_OK(ngpt_sampler_adjust(ctx, s, logits, recent, nr, NULL, z));
    int32_t n = 0;
    ngpt_sampler_filter(ctx, s, z, &n);
    for (int i = 0; i < n; i++) {
        ids[i] = ctx->plan.samp.idx[i];
        if (probs) probs[i] = ctx->plan.samp.p[i];
    }
    return n;
}

static int same_ids(const int32_t *got, int n, const int32_t *want, int m)
{
    return n == m && !memcmp(got, want, (size_t)m * sizeof(int32_t));
}

/* probability of token t among survivors (0 if filtered) */
static float prob_of(const int32_t *ids, const float *p, int n, int32_t t)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == t) return p[i];
    return 0.0f;
}

/* ngpt_sort_desc against the order's definition (a sort by comparison
 * with `before`, insertion) on many rows: few distinct values (ties), both
 * zeros, infinities, tiny and huge magnitudes, lengths 0..300. */
static bool before(const float *z, int32_t a, int32_t b)
{
    return z[a] > z[b] || (z[a] == z[b] && a < b);
}

static void test_sort_definition(void)
{
    enum { N = 300 };
    static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, 0x1p-140f,
                                 -0x1p-140f, 3.0e38f, -3.0e38f, 0.5f, -2.25f};
    float z[N];
    int32_t idx[N], want[N];
    uint64_t keys[2 * N];
    uint64_t state = 12345;
    int bad = 0;
    for (int row = 0; row < 400; row++) {
        const int n = row < 301 ? row : (int)(state >> 40) % (N + 1);
        const int distinct = 1 + row % 12;
        for (int i = 0; i < N; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            z[i] = vals[(state >> 33) % (uint64_t)distinct];
        }
        for (int i = 0; i < n; i++) idx[i] = want[i] = (i * 7 + row) % n;   /* a permutation when gcd(7, n) = 1 */
        if (n % 7 == 0)
            for (int i = 0; i < n; i++) idx[i] = want[i] = n - 1 - i;
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && before(z, want[j], want[j - 1]); j--) {
                const int32_t t = want[j];
                want[j] = want[j - 1], want[j - 1] = t;
            }
        ngpt_sort_desc(z, idx, keys, n);
        bad += n > 0 && memcmp(idx, want, (size_t)n * sizeof(int32_t)) != 0;
    }
    CHECK(bad == 0, "%d rows sorted otherwise than the definition", bad);
}

/* Temperature 0 against argmax's definition (the first id of the largest
 * value, -0 and +0 one value) at vocabularies around its 8 lanes and past
 * them, few distinct values (ties), -inf; a NaN or +Inf anywhere is refused
 * with its id. */
static void test_argmax_definition(void)
{
    static const int vocab[] = {2, 7, 8, 9, 16, 17, 23, 301};
    static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, -INFINITY, 0x1p-140f, 3.0e38f, 0.5f};
    enum { N = 301 };
    float z[N];
    uint64_t state = 777;
    int bad = 0;
    for (size_t v = 0; v < sizeof vocab / sizeof vocab[0]; v++) {
        const int n = vocab[v];
        ngpt_config c = ngpt_config_default();
        c.vocab_size = n, c.context_len = 8, c.d_model = 8, c.n_layers = 1, c.n_heads = 2, c.d_ff = 8;
        ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
        ngpt_context *cx = NULL;
        CHECK_OK(ngpt_context_init(&cx, NULL, &c, &sh, NULL, 0));
        if (!cx) continue;
        ngpt_sampler s = ngpt_sampler_default();
        s.temperature = 0.0f;
        for (int row = 0; row < 200; row++) {
            const int distinct = 1 + row % 8;
            for (int i = 0; i < n; i++) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                z[i] = vals[(state >> 33) % (uint64_t)distinct];
            }
            z[(state >> 20) % (uint64_t)n] = 0.0f;        /* never all -inf */
            int32_t want = 0, got = -1;
            for (int i = 1; i < n; i++)
                if (z[i] > z[want]) want = i;
            CHECK_OK(ngpt_context_sample(cx, &s, z, NULL, 0, 0, (uint64_t)row, &got));
            bad += got != want;
        }
        for (int i = 0; i < n; i++) z[i] = 1.0f;
        z[n - 1] = (n & 1) ? INFINITY : NAN;
        int32_t t;
        CHECK_STATUS(ngpt_context_sample(cx, &s, z, NULL, 0, 0, 0, &t), NGPT_ERR_NUMERIC);
        char want_msg[32];
        snprintf(want_msg, sizeof want_msg, "logit %d is", n - 1);
        CHECK(strstr(ngpt_last_error(), want_msg) != NULL, "message: %s", ngpt_last_error());
        ngpt_context_free(cx);
    }
    CHECK(bad == 0, "%d rows gave another id than argmax's definition", bad);
}

int main(void)
{
    test_sort_definition();
    test_argmax_definition();
    ngpt_config c = ngpt_config_default();
    c.vocab_size = V;
    c.context_len = 8;
    c.d_model = 8;
    c.n_layers = 1;
    c.n_heads = 2;
    c.d_ff = 8;
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &sh, NULL, 0));

    /*                    0     1     2     3      4     5     6     7 */
    const float lg[V] = {1.0f, 3.0f, 3.0f, 0.0f, -1.0f, 2.0f, 3.0f, -2.0f};
    int32_t ids[V];
    float p[V];
    ngpt_sampler s = ngpt_sampler_default();

    /* no filter: all, sorted by logit desc then id */
    int n = survivors(&s, lg, NULL, 0, ids, p);
    CHECK(same_ids(ids, n, (int32_t[]){1, 2, 6, 5, 0, 3, 4, 7}, 8), "unfiltered order");

    /* top-k: exactly k survive, ties to the lower id */
    s.top_k = 2;
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){1, 2}, 2), "top-k 2 kept %d", n);
    s.top_k = 4;
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){1, 2, 6, 5}, 4), "top-k 4");
    s.top_k = 0;

    /* top-p: p(1)=p(2)=p(6)~0.2795; the token crossing the threshold stays */
    s.top_p = 0.5f;
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){1, 2}, 2), "top-p 0.5 kept %d", n);
    s.top_p = 0.28f;
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){1, 2}, 2), "top-p 0.28 kept %d", n);
    s.top_p = 0.01f;                /* never empty */
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){1}, 1), "top-p 0.01 kept %d", n);
    s.top_p = 1.0f;

    /* min-p: p(5)/p(1) = e^-1 ~ 0.368, p(0)/p(1) = e^-2 ~ 0.135 */
    s.min_p = 0.3f;
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){1, 2, 6, 5}, 4), "min-p 0.3 kept %d", n);
    s.min_p = 0.4f;
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){1, 2, 6}, 3), "min-p 0.4 kept %d", n);
    s.min_p = 0.0f;

    /* ban and bias */
    s.banned = (int32_t[]){1, 6};
    s.n_banned = 2;
    s.logit_bias = (float[V]){0, 0, 0, 5.0f, 0, 0, 0, 0};
    n = survivors(&s, lg, NULL, 0, ids, NULL);
    CHECK(same_ids(ids, n, (int32_t[]){3, 2, 5, 0, 4, 7}, 6), "ban + bias");
    s.logit_bias = NULL;
    s.n_banned = 0;

    /* repetition penalty lowers a repeated token's probability for positive
     * and negative logits (and counts a token once however often it repeats) */
    float p0[V], p1[V];
    int32_t i0[V], i1[V];
    int n0 = survivors(&s, lg, NULL, 0, i0, p0);
    s.repeat_penalty = 1.5f;
    const int32_t recent[] = {5, 4, 4, 4};
    int n1 = survivors(&s, lg, recent, 4, i1, p1);
    CHECK(prob_of(i1, p1, n1, 5) < prob_of(i0, p0, n0, 5), "penalty on a positive logit");
    CHECK(prob_of(i1, p1, n1, 4) < prob_of(i0, p0, n0, 4), "penalty on a negative logit");
    CHECK(ctx->plan.samp.z[4] == -1.5f && ctx->plan.samp.z[5] == 2.0f / 1.5f,
          "penalised logits %g %g", (double)ctx->plan.samp.z[4], (double)ctx->plan.samp.z[5]);
    s.repeat_window = 3;            /* only the last 3: token 5 is out of the window */
    n1 = survivors(&s, lg, recent, 4, i1, p1);
    CHECK(ctx->plan.samp.z[5] == 2.0f, "window ignored");
    s.repeat_penalty = 1.0f;
    s.repeat_window = 0;

    /* temperature 0 and top-k 1 are argmax (ties to the lower id) */
    int32_t t;
    for (uint64_t i = 0; i < 50; i++) {
        s.temperature = 0.0f;
        CHECK_OK(ngpt_context_sample(ctx, &s, lg, NULL, 0, 0, i, &t));
        CHECK(t == 1, "temperature 0 gave %d", (int)t);
        s.temperature = 1.3f;
        s.top_k = 1;
        CHECK_OK(ngpt_context_sample(ctx, &s, lg, NULL, 0, 0, i, &t));
        CHECK(t == 1, "top-k 1 gave %d", (int)t);
        s.top_k = 0;
    }
    /* top-p 1.0 equals unfiltered sampling; draws cover the distribution */
    int counts[V] = {0};
    int differ = 0;
    for (uint64_t i = 0; i < 400; i++) {
        int32_t a, b;
        s.top_p = 1.0f;
        CHECK_OK(ngpt_context_sample(ctx, &s, lg, NULL, 0, 3, i, &a));
        s.top_p = 0.999999f;
        CHECK_OK(ngpt_context_sample(ctx, &s, lg, NULL, 0, 3, i, &b));
        differ += a != b;
        counts[a]++;
    }
    s.top_p = 1.0f;
    /* 0.999999 may only cut the tail token 7 (p ~ 0.0013) */
    CHECK(differ <= counts[7], "top-p near 1 changed %d draws", differ);
    CHECK(counts[1] > 60 && counts[2] > 60 && counts[6] > 60 && counts[4] > 0,
          "draw counts %d %d %d %d", counts[1], counts[2], counts[6], counts[4]);

    /* bad values */
    CHECK_STATUS(ngpt_sampler_validate(&(ngpt_sampler){.temperature = -0.5f, .top_p = 1,
                                                        .repeat_penalty = 1}, V),
                 NGPT_ERR_BAD_ARG);
    s.top_k = -1;
    CHECK_STATUS(ngpt_context_sample(ctx, &s, lg, NULL, 0, 0, 0, &t), NGPT_ERR_BAD_ARG);
    s.top_k = 0;
    s.min_p = 1.5f;
    CHECK_STATUS(ngpt_context_sample(ctx, &s, lg, NULL, 0, 0, 0, &t), NGPT_ERR_BAD_ARG);
    s.min_p = 0.0f;
    s.repeat_penalty = 0.0f;
    CHECK_STATUS(ngpt_context_sample(ctx, &s, lg, NULL, 0, 0, 0, &t), NGPT_ERR_BAD_ARG);
    s.repeat_penalty = 1.0f;
    s.banned = (int32_t[]){9};
    s.n_banned = 1;
    CHECK_STATUS(ngpt_context_sample(ctx, &s, lg, NULL, 0, 0, 0, &t), NGPT_ERR_BAD_TOKEN);
    s.banned = (int32_t[]){0, 1, 2, 3, 4, 5, 6, 7};
    s.n_banned = 8;
    CHECK_STATUS(ngpt_context_sample(ctx, &s, lg, NULL, 0, 0, 0, &t), NGPT_ERR_BAD_ARG);
    s.n_banned = 0;
    const float nanl[V] = {0, 0, 0, NAN, 0, 0, 0, 0};
    CHECK_STATUS(ngpt_context_sample(ctx, &s, nanl, NULL, 0, 0, 0, &t), NGPT_ERR_NUMERIC);
    CHECK_STATUS(ngpt_context_sample(ctx, NULL, lg, NULL, 0, 0, 0, &t), NGPT_ERR_NULL_ARG);
    ngpt_context_free(ctx);
    return test_summary("test_sampler");
}
