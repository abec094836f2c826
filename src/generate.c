/* generate.c — the generation loop: prefill the prompt, then sample, stream
 * and feed one token at a time (DESIGN §1 "Generation"). Slot 0's cache and
 * token list are the window; when it holds T tokens the window slides like the
 * original (recompute the last T tokens from position 0). */
#include <string.h>

#include "fpmode.h"
#include "generate.h"

ngpt_generate_config ngpt_generate_config_default(void)
{
    ngpt_generate_config g = {.sampler = ngpt_sampler_default(), .max_tokens = 256,
                              .end_token = -1, .stop = NULL, .n_stop = 0,
                              .stop_at_context_full = false, .no_cache = false,
                              .beam_width = 0, .length_penalty = 1.0f, .on_prefilled = NULL};
    return g;
}

const char *ngpt_stop_reason_string(ngpt_stop_reason r)
{
    switch (r) {
    case NGPT_STOP_NONE: return "none";
    case NGPT_STOP_MAX_TOKENS: return "max tokens";
    case NGPT_STOP_END_TOKEN: return "end token";
    case NGPT_STOP_SEQUENCE: return "stop sequence";
    case NGPT_STOP_CALLBACK: return "stopped by the callback";
    case NGPT_STOP_CONTEXT_FULL: return "context full";
    }
    return "unknown";
}

/* The j-th newest generated token: j = 0 is tok, j >= 1 is prior_end[-j]. */
static int32_t gen_at(const int32_t *prior_end, int32_t tok, int32_t j)
{
    return j == 0 ? tok : prior_end[-j];
}

int32_t ngpt_stop_match(const ngpt_generate_config *gc, const int32_t *prior_end, int32_t avail,
                        int32_t tok, int32_t *hold)
{
    int32_t done = 0, partial = 0;
    for (int32_t s = 0; s < gc->n_stop; s++) {
        const unsigned char *str = (const unsigned char *)gc->stop[s];
        const int32_t m = (int32_t)strlen(gc->stop[s]);
        /* the tail of length k equals str[0..k) for k <= m */
        for (int32_t k = m; k >= 1; k--) {
            if (k > avail + 1 || (k == m ? k <= done : k <= partial)) continue;
            bool eq = true;
            for (int32_t j = 0; j < k && eq; j++)
                eq = gen_at(prior_end, tok, j) == (int32_t)str[k - 1 - j];
            if (!eq) continue;
            if (k == m) done = m;
            else partial = k;
            break;
        }
    }
    if (hold) *hold = partial;
    return done;
}

ngpt_status ngpt_gen_prefill(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len,
                             const float **last_row)
{
    const int32_t chunk = ctx->shape.seq;
    int32_t c = 0;
    for (int32_t at = 0; at < len; at += c) {
        c = len - at < chunk ? len - at : chunk;
        ngpt_status st = ngpt_cache_prefill_slot(ctx, slot, tokens + at, c);
        if (st) return st;
    }
    *last_row = ctx->plan.logits + (size_t)(c - 1) * ctx->cfg.vocab_size;
    return NGPT_OK;
}

static ngpt_status validate(ngpt_context *ctx, const ngpt_generate_config *gc,
                            const int32_t *prompt, int32_t prompt_len, const int32_t *out,
                            int32_t out_cap)
{
    if (!ctx || !gc || !prompt) return ngpt_fail(NGPT_ERR_NULL_ARG, "generate: NULL argument");
    if (!ctx->plan.kv_k)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "generate: the context was planned for training; "
                         "generation needs an NGPT_MODE_INFER context");
    const int32_t T = ctx->cfg.context_len, V = ctx->cfg.vocab_size;
    ngpt_status st = ngpt_sampler_validate(&gc->sampler, V);
    if (st) return st;
    if (prompt_len < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "generate: the prompt needs at least one token");
    if (prompt_len > T)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "generate: the prompt has %d tokens, longer than the "
                         "model's context T=%d", (int)prompt_len, (int)T);
    for (int32_t i = 0; i < prompt_len; i++)
        if (prompt[i] < 0 || prompt[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "generate: prompt[%d] = %d is not a token id in "
                             "0..%d", (int)i, (int)prompt[i], (int)V - 1);
    if (gc->max_tokens < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "generate: max_tokens must be >= 1, got %d",
                         (int)gc->max_tokens);
    if (out && out_cap < gc->max_tokens)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "generate: out holds %d tokens, less than max_tokens "
                         "= %d", (int)out_cap, (int)gc->max_tokens);
    if (gc->end_token < -1 || gc->end_token >= V)
        return ngpt_fail(NGPT_ERR_BAD_TOKEN, "generate: end_token %d is not -1 or a token id in "
                         "0..%d", (int)gc->end_token, (int)V - 1);
    if (gc->n_stop < 0 || (gc->n_stop > 0 && !gc->stop))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "generate: n_stop = %d needs a stop array",
                         (int)gc->n_stop);
    for (int32_t s = 0; s < gc->n_stop; s++) {
        size_t m = gc->stop[s] ? strlen(gc->stop[s]) : 0;
        if (m < 1 || m > (size_t)T)
            return ngpt_fail(NGPT_ERR_BAD_ARG, "generate: stop sequence %d must be 1..T=%d bytes "
                             "long, got %zu", (int)s, (int)T, m);
    }
    if (gc->beam_width < 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "generate: beam width must be >= 0 (0 = sampling), "
                         "got %d", (int)gc->beam_width);
    if (gc->beam_width > ctx->shape.batch)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "generate: beam width %d needs a context planned "
                         "with batch >= %d (it has %d)", (int)gc->beam_width,
                         (int)gc->beam_width, (int)ctx->shape.batch);
    if (!(gc->length_penalty >= -16.0f && gc->length_penalty <= 16.0f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "generate: length_penalty must be in [-16, 16], got %g",
                         (double)gc->length_penalty);
    if (gc->no_cache && ctx->shape.seq < T)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "generate: no_cache recomputes up to T=%d tokens "
                         "but the context was planned with seq=%d", (int)T, (int)ctx->shape.seq);
    return NGPT_OK;
}

/* The streaming state of one sampled sequence. */
typedef struct stream {
    int32_t *out;
    ngpt_token_fn fn;
    void *user;
    int32_t n_out, pending;     /* emitted; generated but held back */
    bool stopped;               /* the callback asked to stop */
} stream;

/* Emits the pending tokens older than the newest `keep` (j = pending-1 .. keep). */
static void emit(stream *sm, const int32_t *prior_end, int32_t tok, int32_t keep)
{
    for (int32_t j = sm->pending - 1; j >= keep && !sm->stopped; j--) {
        int32_t t = gen_at(prior_end, tok, j);
        if (sm->out) sm->out[sm->n_out] = t;
        sm->n_out++;
        sm->pending = j;
        if (sm->fn && sm->fn(t, sm->user)) sm->stopped = true;
    }
    if (!sm->stopped && sm->pending > keep) sm->pending = keep;
}

/* Feeds tok into the window (slot 0) and returns the next logits row. */
static ngpt_status feed(ngpt_context *ctx, const ngpt_generate_config *gc, int32_t tok,
                        const float **row)
{
    const int32_t T = ctx->cfg.context_len, V = ctx->cfg.vocab_size;
    int32_t *win = ctx->plan.kv_tokens;          /* slot 0 */
    int32_t n = ctx->plan.kv_len[0];
    ngpt_status st;
    if (!gc->no_cache && n < T) {
        if ((st = ngpt_cache_decode(ctx, &tok, 1))) return st;
        *row = ctx->plan.logits;
        return NGPT_OK;
    }
    /* recompute: the window (slid by one when full) from position 0 */
    int32_t *tmp = ctx->plan.beam_fin_tok;       /* (B, T) scratch, unused while sampling */
    int32_t keep = n < T ? n : T - 1;
    memcpy(tmp, win + (n - keep), (size_t)keep * sizeof(int32_t));
    tmp[keep] = tok;
    ctx->plan.kv_len[0] = 0;
    if (gc->no_cache) {
        if ((st = ngpt_model_forward(ctx, tmp, 1, keep + 1, NULL, NULL))) return st;
        memcpy(win, tmp, (size_t)(keep + 1) * sizeof(int32_t));
        ctx->plan.kv_len[0] = keep + 1;     /* the window; no_cache keeps no K/V */
        *row = ctx->plan.logits + (size_t)keep * V;
        return NGPT_OK;
    }
    return ngpt_gen_prefill(ctx, 0, tmp, keep + 1, row);
}

ngpt_status ngpt_model_generate(ngpt_context *ctx, const ngpt_generate_config *gc,
                          const int32_t *prompt, int32_t prompt_len, int32_t *out,
                          int32_t out_cap, ngpt_token_fn fn, void *user,
                          ngpt_generate_result *result)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = validate(ctx, gc, prompt, prompt_len, out, out_cap);
    if (st) return st;
    ngpt_generate_result res = {0, 0, NGPT_STOP_NONE, prompt_len};
    if (result) *result = res;
    ngpt_cache_clear(ctx, -1);
    if (gc->beam_width >= 1) {
        st = ngpt_beam_search(ctx, gc, prompt, prompt_len, out, fn, user, &res);
        if (result) *result = res;
        return st;
    }

    const float *row;
    if (gc->no_cache) {
        if ((st = ngpt_model_forward(ctx, prompt, 1, prompt_len, NULL, NULL))) return st;
        memcpy(ctx->plan.kv_tokens, prompt, (size_t)prompt_len * sizeof(int32_t));
        ctx->plan.kv_len[0] = prompt_len;
        row = ctx->plan.logits + (size_t)(prompt_len - 1) * ctx->cfg.vocab_size;
    } else if ((st = ngpt_gen_prefill(ctx, 0, prompt, prompt_len, &row))) {
        return st;
    }
    if (gc->on_prefilled) gc->on_prefilled(user);

    stream sm = {out, fn, user, 0, 0, false};
    const int32_t T = ctx->cfg.context_len;
    for (int32_t i = 0;; i++) {
        const int32_t n = ctx->plan.kv_len[0];
        const int32_t *win = ctx->plan.kv_tokens, *win_end = win + n;
        int32_t tok;
        if ((st = ngpt_sampler_sample(ctx, &gc->sampler, row, win, n, 0, (uint64_t)i, &tok))) break;
        if (tok == gc->end_token) {
            sm.pending++;
            emit(&sm, win_end, tok, 1);     /* the end token itself is the newest: held */
            res.reason = sm.stopped ? NGPT_STOP_CALLBACK : NGPT_STOP_END_TOKEN;
            res.n_generated = i + 1;
            break;
        }
        sm.pending++;
        res.n_generated = i + 1;
        const int32_t avail = i < n ? i : n;          /* generated tokens before tok in win */
        int32_t hold = 0;
        int32_t m = ngpt_stop_match(gc, win_end, avail, tok, &hold);
        if (m > 0) {
            emit(&sm, win_end, tok, m);
            res.reason = sm.stopped ? NGPT_STOP_CALLBACK : NGPT_STOP_SEQUENCE;
            break;
        }
        bool last = i + 1 >= gc->max_tokens;
        bool full = n >= T && gc->stop_at_context_full;
        emit(&sm, win_end, tok, last || full ? 0 : hold);
        if (sm.stopped) {
            res.reason = NGPT_STOP_CALLBACK;
            break;
        }
        if (last || full) {
            res.reason = last ? NGPT_STOP_MAX_TOKENS : NGPT_STOP_CONTEXT_FULL;
            break;
        }
        if ((st = feed(ctx, gc, tok, &row))) break;
    }
    if (gc->no_cache) ctx->plan.kv_len[0] = 0;      /* no K/V behind the window */
    res.n_tokens = sm.n_out;
    if (result) *result = res;
    return st;
}
