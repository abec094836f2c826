/* sampler.c — turns one row of logits into a token (the pipeline is
 * documented at ngpt_sampler in ngpt.h). Every order is total (value, then
 * token id), so no result depends on a sort's stability or the platform.
 * Scratch lives in the arena: samp_z (V) working logits, samp_idx (V) ids in
 * descending order, samp_p (V) their probabilities, samp_keys (2V) the
 * sort's keys, samp_tmp (V) repetition marks. */
#include <math.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/rng.h"
#include "generate/sampler.h"
#include "tokenizer/tokenizer.h"

ngpt_sampler ngpt_sampler_default(void)
{
    NGPT_FPMODE_SCOPE;
    ngpt_sampler s = {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f,
                      .repeat_penalty = 1.0f, .repeat_window = 0, .banned = NULL,
                      .n_banned = 0, .logit_bias = NULL, .seed = 0};
    return s;
}

ngpt_status ngpt_sampler_validate(const ngpt_sampler *s, int32_t V)
{
    NGPT_FPMODE_SCOPE;
    if (!s) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_sampler_validate: NULL sampler");
    return ngpt_prefixed("ngpt_sampler_validate", ngpt_sampler_check(s, V));
}

ngpt_status ngpt_sampler_check(const ngpt_sampler *s, int32_t V)
{
    ngpt_status st = NGPT_RESERVED_CHECK("sampler", s);
    if (st) return st;
    if (!(s->temperature >= 0.0f) || isinf(s->temperature))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "temperature must be a finite value >= 0 "
                         "(0 = argmax), got %g", (double)s->temperature);
    if (s->top_k < 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "top_k must be >= 0 (0 = off), got %d",
                         (int)s->top_k);
    if (!(s->top_p > 0.0f && s->top_p <= 1.0f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "top_p must be in (0, 1] (1 = off), got %g",
                         (double)s->top_p);
    if (!(s->min_p >= 0.0f && s->min_p <= 1.0f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "min_p must be in [0, 1] (0 = off), got %g",
                         (double)s->min_p);
    if (!(s->repeat_penalty > 0.0f) || isinf(s->repeat_penalty))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "repeat_penalty must be a finite value > 0 "
                         "(1 = off), got %g", (double)s->repeat_penalty);
    if (s->repeat_window < 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "repeat_window must be >= 0, got %d",
                         (int)s->repeat_window);
    if (s->n_banned < 0 || (s->n_banned > 0 && !s->banned))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "n_banned = %d needs a banned array",
                         (int)s->n_banned);
    for (int32_t i = 0; i < s->n_banned; i++)
        if (s->banned[i] < 0 || s->banned[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "banned[%d] = %d is not a token id in "
                             "0..%d", (int)i, (int)s->banned[i], (int)V - 1);
    if (s->logit_bias)
        for (int32_t i = 0; i < V; i++)
            if (!isfinite(s->logit_bias[i]))
                return ngpt_fail(NGPT_ERR_BAD_ARG, "logit_bias[%d] is not finite (ban "
                                 "the token instead)", (int)i);
    return NGPT_OK;
}

/* The order of floats as unsigned integers: a < b exactly when x < y (no
 * NaN here), with -0 and +0 one value, as `==` has them. */
static uint32_t ordered_bits(float x)
{
    uint32_t u;
    if (x == 0.0f) x = 0.0f;
    memcpy(&u, &x, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

void ngpt_sort_desc(const float *z, int32_t *idx, uint64_t *keys, int32_t n)
{
    /* one integer per token, its place in the order: the value's bits
     * (larger first) above the id (lower first), all keys distinct */
    uint64_t *src = keys, *dst = keys + n;
    for (int32_t i = 0; i < n; i++)
        src[i] = (uint64_t)~ordered_bits(z[idx[i]]) << 32 | (uint32_t)idx[i];
    /* bottom-up merge sort of the keys; each step picks without a branch,
     * since which run wins is random */
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                const uint64_t a = src[i], b = src[j];
                const bool take_b = b < a;
                dst[o++] = take_b ? b : a;
                j += take_b;
                i += !take_b;
            }
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        uint64_t *t = src;
        src = dst, dst = t;
    }
    for (int32_t i = 0; i < n; i++) idx[i] = (int32_t)(uint32_t)src[i];
}

ngpt_status ngpt_sampler_adjust(ngpt_context *ctx, const ngpt_sampler *s, const float *logits,
                                const int32_t *recent, int32_t n_recent, const uint64_t *allowed,
                                float *z)
{
    const int32_t V = ctx->cfg.vocab_size;
    /* one pass without a branch a logit (a decode's whole vocabulary), then
     * the first bad one found again for the message */
    bool bad = false;
    for (int32_t i = 0; i < V; i++) bad |= !(logits[i] < INFINITY);    /* NaN or +Inf */
    if (bad)
        for (int32_t i = 0; i < V; i++)
            if (!(logits[i] < INFINITY))
                return ngpt_fail(NGPT_ERR_NUMERIC, "logit %d is %g, so no token can be sampled "
                                 "(the model's parameters hold NaN or Inf)", (int)i,
                                 (double)logits[i]);
    if (s->logit_bias)
        for (int32_t i = 0; i < V; i++) z[i] = logits[i] + s->logit_bias[i];
    else
        memcpy(z, logits, (size_t)V * sizeof(float));
    /* rows past the tokenizer's ids (Qwen's V is larger): no token, never sampled */
    const int32_t NT = ctx->tokenizer && ctx->tokenizer->n_tokens < V ? ctx->tokenizer->n_tokens : V;
    for (int32_t i = NT; i < V; i++) z[i] = -INFINITY;
    if (allowed)    /* a grammar's mask, before every other step */
        for (int32_t i = 0; i < V; i++)
            if (!((allowed[i >> 6] >> (i & 63)) & 1)) z[i] = -INFINITY;
    for (int32_t i = 0; i < s->n_banned; i++) z[s->banned[i]] = -INFINITY;
    if (s->repeat_penalty != 1.0f && n_recent > 0) {
        int32_t *seen = ctx->plan.samp.tmp;     /* marks: each distinct token once */
        memset(seen, 0, (size_t)V * sizeof(int32_t));
        int32_t first = ngpt_sampler_window_start(s, n_recent);
        for (int32_t i = first; i < n_recent; i++) {
            int32_t t = recent[i];
            if (seen[t]) continue;
            seen[t] = 1;
            /* lowers the probability whatever the sign (with penalty > 1) */
            z[t] = z[t] > 0.0f ? z[t] / s->repeat_penalty : z[t] * s->repeat_penalty;
        }
    }
    for (int32_t i = 0; i < V; i++)
        if (z[i] != -INFINITY) return NGPT_OK;
    if (allowed)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "every token the grammar allows here is banned (or "
                         "has a -inf logit); ban fewer");
    return ngpt_fail(NGPT_ERR_BAD_ARG, "every token is banned (or has a -inf logit); ban fewer");
}

/* Survivors after temperature, top-k, top-p and min-p: idx[0..*n) in
 * descending order with probabilities p[0..*n). */
void ngpt_sampler_filter(ngpt_context *ctx, const ngpt_sampler *s, float *z, int32_t *n_out)
{
    const ngpt_kernels *k = ctx->k;
    const int32_t V = ctx->cfg.vocab_size;
    int32_t *idx = ctx->plan.samp.idx;
    float *p = ctx->plan.samp.p;
    int32_t n = 0;
    for (int32_t i = 0; i < V; i++) {
        if (z[i] == -INFINITY) continue;
        z[i] = z[i] / s->temperature;
        idx[n++] = i;
    }
    ngpt_sort_desc(z, idx, ctx->plan.samp.keys, n);
    /* a logit that overflowed to -inf after the division drops out here */
    while (n > 1 && z[idx[n - 1]] == -INFINITY) n--;
    if (s->top_k > 0 && s->top_k < n) n = s->top_k;
    if (z[idx[0]] == INFINITY) {        /* a tiny temperature overflowed: argmax */
        p[0] = 1.0f;
        *n_out = 1;
        return;
    }

    for (int32_t i = 0; i < n; i++) p[i] = z[idx[i]];
    k->softmax(p, p, n);
    if (s->top_p < 1.0f) {
        float cum = 0.0f;
        int32_t keep = n;
        for (int32_t i = 0; i < n; i++) {
            cum = cum + p[i];
            if (cum >= s->top_p) {
                keep = i + 1;
                break;
            }
        }
        if (keep < n) {
            n = keep;
            for (int32_t i = 0; i < n; i++) p[i] = z[idx[i]];
            k->softmax(p, p, n);
        }
    }
    if (s->min_p > 0.0f) {
        const float floor_p = s->min_p * p[0];
        int32_t keep = n;
        while (keep > 1 && p[keep - 1] < floor_p) keep--;
        if (keep < n) {
            n = keep;
            for (int32_t i = 0; i < n; i++) p[i] = z[idx[i]];
            k->softmax(p, p, n);
        }
    }
    *n_out = n;
}

int32_t ngpt_sampler_window_start(const ngpt_sampler *s, int32_t n_recent)
{
    return s->repeat_window && n_recent > s->repeat_window ? n_recent - s->repeat_window : 0;
}

ngpt_status ngpt_context_sample_unchecked(ngpt_context *ctx, const ngpt_sampler *s,
                                          const float *logits, const int32_t *recent,
                                          int32_t n_recent, int32_t sequence, uint64_t index,
                                          int32_t *token)
{
    return ngpt_context_sample_masked(ctx, s, logits, recent, n_recent, sequence, index, NULL, token);
}

/* The first id of the largest value (no NaN here; -0 and +0 one value, as
 * `>` has them). Eight running bests, lane l over the ids l mod 8, so no
 * step waits on the last one (one chain of compares was 2% of a
 * Qwen2.5-0.5B decode at one thread); the lanes' bests then meet by value,
 * the lower id on a tie, and the ids past the last eight follow. */
static int32_t argmax(const float *z, int32_t V)
{
    enum { LANES = 8 };
    if (V < LANES) {
        int32_t best = 0;
        for (int32_t i = 1; i < V; i++)
            if (z[i] > z[best]) best = i;
        return best;
    }
    float best_z[LANES];
    int32_t best[LANES];
    for (int l = 0; l < LANES; l++) best_z[l] = z[l], best[l] = l;
    int32_t i = LANES;
    for (; i + LANES <= V; i += LANES)
        _Pragma("GCC unroll 8")     /* the bests in registers, not on the stack */
        for (int l = 0; l < LANES; l++)
            if (z[i + l] > best_z[l]) best_z[l] = z[i + l], best[l] = i + l;
    int32_t b = best[0];
    float bz = best_z[0];
    for (int l = 1; l < LANES; l++)
        if (best_z[l] > bz || (best_z[l] == bz && best[l] < b)) bz = best_z[l], b = best[l];
    for (; i < V; i++)
        if (z[i] > bz) bz = z[i], b = i;
    return b;
}

ngpt_status ngpt_context_sample_masked(ngpt_context *ctx, const ngpt_sampler *s, const float *logits,
                               const int32_t *recent, int32_t n_recent, int32_t sequence,
                               uint64_t index, const uint64_t *allowed, int32_t *token)
{
    float *z = ctx->plan.samp.z;
    ngpt_status st = ngpt_sampler_adjust(ctx, s, logits, recent, n_recent, allowed, z);
    if (st) return st;
    if (s->temperature == 0.0f) {
        *token = argmax(z, ctx->cfg.vocab_size);
        return NGPT_OK;
    }
    int32_t n;
    ngpt_sampler_filter(ctx, s, z, &n);
    const float *p = ctx->plan.samp.p;
    const int32_t *idx = ctx->plan.samp.idx;
    uint32_t w = ngpt_rng_u32(s->seed, NGPT_STREAM_SAMPLE, (uint64_t)(uint32_t)sequence, index);
    const float u = ngpt_rng_uniform(w);
    float cum = 0.0f;
    int32_t pick = 0;   /* if rounding leaves the sum below u: the last non-zero survivor */
    for (int32_t i = 0; i < n; i++) {
        if (p[i] > 0.0f) pick = i;
        cum = cum + p[i];
        if (cum > u) break;
    }
    *token = idx[pick];
    return NGPT_OK;
}

ngpt_status ngpt_context_sample(ngpt_context *ctx, const ngpt_sampler *s, const float *logits,
                        const int32_t *recent, int32_t n_recent, int32_t sequence,
                        uint64_t index, int32_t *token)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !s || !logits || !token)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_sample: NULL argument");
    if (!ctx->plan.samp.z)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_sample: the context was planned for "
                         "training; sampling needs an NGPT_MODE_INFER context");
    if (n_recent < 0 || (n_recent > 0 && !recent))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_sample: n_recent = %d needs a recent "
                         "array", (int)n_recent);
    const int32_t V = ctx->cfg.vocab_size;
    ngpt_status st = ngpt_sampler_check(s, V);
    if (st) return ngpt_prefixed("ngpt_context_sample", st);
    if (s->repeat_penalty != 1.0f)      /* recent tokens are read only with a penalty */
        for (int32_t i = ngpt_sampler_window_start(s, n_recent); i < n_recent; i++)
            if (recent[i] < 0 || recent[i] >= V)
                return ngpt_fail(NGPT_ERR_BAD_TOKEN, "ngpt_context_sample: recent[%d] = %d is not "
                                 "a token id in 0..%d", (int)i, (int)recent[i], (int)V - 1);
    return ngpt_prefixed("ngpt_context_sample",
                         ngpt_context_sample_unchecked(ctx, s, logits, recent, n_recent,
                                                       sequence, index, token));
}
