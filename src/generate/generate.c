/* generate.c — ngpt_context_generate: validates the request once, then runs
 * beam search (beam.c) or the sampling loop here: prefill the prompt, then
 * sample, stream and feed one token at a time (docs/DESIGN.md §1 "Generation").
 * The window is slot 0 of the KV cache (model/kv.h); when it holds T tokens it
 * slides like the original (recompute the last T tokens from position 0) or
 * shifts (drop the oldest half of the cache: model/kv.h's shift). */
#include <string.h>

#include "base/fpmode.h"
#include "base/progress.h"
#include "generate/beam.h"
#include "generate/constrain.h"
#include "generate/sampler.h"
#include "generate/speculate.h"
#include "generate/stop.h"
#include "model/kv.h"
#include "model/model.h"
#include "runtime/dropout.h"
#include "tokenizer/tokenizer.h"

ngpt_generate_config ngpt_generate_config_default(void)
{
    NGPT_FPMODE_SCOPE;
    ngpt_generate_config g = {.sampler = ngpt_sampler_default(), .max_tokens = 256,
                              .end_tokens = NULL, .n_end_tokens = 0, .ignore_end = false,
                              .stop = NULL, .n_stop = 0,
                              .context_mode = NGPT_CONTEXT_EXACT,
                              .stop_at_context_full = false, .no_cache = false,
                              .beam_width = 0, .length_penalty = 1.0f, .on_prefilled = NULL,
                              .keep_cache = false, .first_draw = 0,
                              .draft = NULL, .lookup = 0, .draft_tokens = 0, .grammar = NULL};
    return g;
}

const char *ngpt_stop_reason_string(ngpt_stop_reason r)
{
    NGPT_FPMODE_SCOPE;
    switch (r) {
    case NGPT_STOP_NONE: return "none";
    case NGPT_STOP_MAX_TOKENS: return "max tokens";
    case NGPT_STOP_END_TOKEN: return "end token";
    case NGPT_STOP_SEQUENCE: return "stop sequence";
    case NGPT_STOP_CALLBACK: return "stopped by the callback";
    case NGPT_STOP_CONTEXT_FULL: return "context full";
    case NGPT_STOP_GRAMMAR_COMPLETE: return "grammar complete";
    case NGPT_STOP_GRAMMAR_INCOMPLETE: return "cut before the grammar was complete";
    case NGPT_STOP_GRAMMAR_DEPTH: return "grammar nested deeper than planned";
    }
    return "unknown";
}

/* The speculative part of the request (ngpt.h, ngpt_generate_config). */
static ngpt_status validate_speculative(const ngpt_context *ctx, const ngpt_generate_config *gc)
{
#define FN "ngpt_context_generate: "
    const int32_t K = gc->draft_tokens;
    if (!gc->draft && gc->lookup == 0 && K == 0) return NGPT_OK;
    if (gc->lookup < 0 || gc->lookup > NGPT_LOOKUP_MAX)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "lookup must be in 0..%d (0 = off), got %d",
                         NGPT_LOOKUP_MAX, (int)gc->lookup);
    if (gc->draft && gc->lookup > 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "a draft model and prompt lookup are two drafts; "
                         "set draft or lookup, not both");
    if (!gc->draft && gc->lookup == 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "draft_tokens = %d needs a draft: a draft "
                         "context or lookup >= 1", (int)K);
    if (K < 1 || K > NGPT_DRAFT_TOKENS_MAX)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "speculative generation needs draft_tokens in "
                         "1..%d, got %d", NGPT_DRAFT_TOKENS_MAX, (int)K);
    if (gc->beam_width >= 1)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, FN "beam search cannot be speculative; use "
                         "beam_width 0 or turn off the draft (draft NULL, lookup 0)");
    if (gc->no_cache)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "speculative generation checks proposals in the "
                         "cache; no_cache turns it off (use one or the other)");
    if (ctx->shape.seq < K + 1)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, FN "draft_tokens = %d checks %d tokens in one "
                         "pass but the context was planned with seq = %d", (int)K, (int)K + 1,
                         (int)ctx->shape.seq);
    if (ngpt_logits_kept(ctx, K + 1) < K + 1)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, FN "draft_tokens = %d checks %d tokens in one "
                         "pass, which needs logits for %d positions, but the context keeps %d "
                         "(shape.logits_rows); plan shape.draft_tokens = %d", (int)K, (int)K + 1,
                         (int)K + 1, (int)ctx->shape.logits_rows, (int)K);
    const ngpt_context *d = gc->draft;
    if (!d) return NGPT_OK;
    if (d == ctx)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "the draft must be a second context (its own "
                         "cache), not the generating one");
    if (!ngpt_kv_planned(d))
        return ngpt_fail(NGPT_ERR_WRONG_MODE, FN "the draft context was planned for training; "
                         "it needs NGPT_MODE_INFER");
    if (d->cfg.vocab_size != ctx->cfg.vocab_size || !d->tokenizer != !ctx->tokenizer ||
        (d->tokenizer && d->tokenizer->checksum != ctx->tokenizer->checksum))
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, FN "the draft must share the model's "
                         "tokenizer (vocab_size %d and %s against %d and %s)",
                         (int)d->cfg.vocab_size, d->tokenizer ? "a tokenizer" : "bytes",
                         (int)ctx->cfg.vocab_size, ctx->tokenizer ? "a tokenizer" : "bytes");
    return NGPT_OK;
#undef FN
}

/* The whole request, once: the loop below trusts it. */
static ngpt_status validate(ngpt_context *ctx, const ngpt_generate_config *gc,
                            const int32_t *prompt, int32_t prompt_len, const int32_t *out,
                            int32_t out_cap)
{
#define FN "ngpt_context_generate: "
    if (!ctx || !gc || !prompt) return ngpt_fail(NGPT_ERR_NULL_ARG, FN "NULL argument");
    ngpt_status st = NGPT_RESERVED_CHECK("generate_config", gc);
    if (st) return ngpt_prefixed("ngpt_context_generate", st);
    if (!ngpt_kv_planned(ctx))
        return ngpt_fail(NGPT_ERR_WRONG_MODE, FN "the context was planned for training; "
                         "generation needs an NGPT_MODE_INFER context");
    const int32_t T = ctx->cfg.context_len, V = ctx->cfg.vocab_size;
    st = ngpt_sampler_check(&gc->sampler, V);
    if (st) return ngpt_prefixed("ngpt_context_generate", st);
    if (prompt_len < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "the prompt needs at least one token");
    for (int32_t i = 0; i < prompt_len; i++)
        if (prompt[i] < 0 || prompt[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, FN "prompt[%d] = %d is not a token id in 0..%d",
                             (int)i, (int)prompt[i], (int)V - 1);
    if (gc->max_tokens < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "max_tokens must be >= 1, got %d",
                         (int)gc->max_tokens);
    if (out && out_cap < gc->max_tokens)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "out holds %d tokens, fewer than max_tokens = %d",
                         (int)out_cap, (int)gc->max_tokens);
    const ngpt_tokenizer *tk = ctx->tokenizer;
    if (out && gc->n_stop > 0 && tk && (int64_t)out_cap < (int64_t)gc->max_tokens + tk->max_len)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "out holds %d tokens, fewer than max_tokens + the "
                         "longest token's bytes = %d + %d (with a tokenizer, a stop sequence "
                         "that begins inside a token leaves the parts of it before)",
                         (int)out_cap, (int)gc->max_tokens, (int)tk->max_len);
    if (gc->n_end_tokens < 0 || gc->n_end_tokens > NGPT_END_TOKENS_MAX ||
        (gc->n_end_tokens > 0 && !gc->end_tokens))
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "n_end_tokens must be in 0..%d, with an "
                         "end_tokens array when > 0, got %d", NGPT_END_TOKENS_MAX,
                         (int)gc->n_end_tokens);
    for (int32_t i = 0; i < gc->n_end_tokens; i++)
        if (gc->end_tokens[i] < 0 || gc->end_tokens[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, FN "end_tokens[%d] = %d is not a token id in "
                             "0..%d", (int)i, (int)gc->end_tokens[i], (int)V - 1);
    if (gc->n_stop < 0 || (gc->n_stop > 0 && !gc->stop))
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "n_stop = %d needs a stop array", (int)gc->n_stop);
    for (int32_t s = 0; s < gc->n_stop; s++) {
        size_t m = gc->stop[s] ? strlen(gc->stop[s]) : 0;
        if (m < 1 || m > (size_t)T)
            return ngpt_fail(NGPT_ERR_BAD_ARG, FN "stop sequence %d must be 1..T=%d bytes long, "
                             "got %zu", (int)s, (int)T, m);
    }
    if (gc->beam_width < 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "beam_width must be >= 0 (0 = sampling), got %d",
                         (int)gc->beam_width);
    const ngpt_sampler *sm = &gc->sampler;
    if (gc->beam_width >= 1 &&
        (sm->temperature != 1.0f || sm->top_k != 0 || sm->top_p != 1.0f || sm->min_p != 0.0f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "beam search scores every token by its log "
                         "probability: temperature, top_k, top_p and min_p do not apply to it "
                         "(got %g, %d, %g, %g); leave them at 1, 0, 1, 0, or sample "
                         "(beam_width 0)", (double)sm->temperature, (int)sm->top_k,
                         (double)sm->top_p, (double)sm->min_p);
    if (gc->beam_width > ctx->shape.batch)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, FN "beam width %d needs a context planned with "
                         "batch >= %d (it has %d)", (int)gc->beam_width, (int)gc->beam_width,
                         (int)ctx->shape.batch);
    if (!(gc->length_penalty >= -16.0f && gc->length_penalty <= 16.0f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "length_penalty must be in [-16, 16], got %g",
                         (double)gc->length_penalty);
    if (gc->context_mode != NGPT_CONTEXT_EXACT && gc->context_mode != NGPT_CONTEXT_SHIFT)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "context_mode %d is not an ngpt_context_mode value",
                         (int)gc->context_mode);
    if (gc->no_cache && gc->context_mode == NGPT_CONTEXT_SHIFT)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "no_cache recomputes the exact window; "
                         "NGPT_CONTEXT_SHIFT needs the cache (use one or the other)");
    if (gc->context_mode == NGPT_CONTEXT_SHIFT && ctx->cfg.pos != NGPT_POS_ROPE)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, FN "NGPT_CONTEXT_SHIFT re-rotates RoPE keys; a "
                         "model with absolute positions (pos=%s) slides exactly (NGPT_CONTEXT_EXACT)",
                         ctx->cfg.pos == NGPT_POS_LEARNED ? "learned" : "sinusoidal");
    if (gc->no_cache && (ctx->shape.kv_k || ctx->shape.kv_v))
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN "no_cache recomputes with float32 keys and values; "
                         "this context's KV cache is 8-bit (plan kv_k = kv_v = NGPT_KV_F32 for it)");
    if (gc->no_cache && ctx->shape.seq < T)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, FN "no_cache recomputes up to T=%d tokens but the "
                         "context was planned with seq=%d; plan seq = T", (int)T,
                         (int)ctx->shape.seq);
    if ((st = validate_speculative(ctx, gc))) return st;
    return ngpt_prefixed("ngpt_context_generate", ngpt_constraint_check(ctx, gc));
#undef FN
}

/* The sampling loop's window. tokens[0..n) are the last n <= T tokens of
 * prompt and output: stop sequences match their tail and held-back tokens
 * are read from it. seen[0..n_seen) are the tokens the model's context holds
 * (the repetition penalty reads them). Exact: one list, slot 0's token list.
 * no_cache (no keys or values kept): one list, the window's own copy
 * (plan.gen.window). Shift: seen is slot 0's token list, which the shift
 * cuts to half, and tokens the own copy. */
typedef struct window {
    const int32_t *tokens;
    int32_t n;
    const int32_t *seen;
    int32_t n_seen;
    const float *row;           /* logits of the token after tokens[n-1] */
} window;

/* With keep_cache, how many of the prompt's first tokens slot 0 already
 * holds (their longest common prefix, at most len - 1: the last token is fed
 * again for its logits); the slot is cut to them (0 without keep_cache). */
static int32_t kept_prefix(ngpt_context *ctx, const ngpt_generate_config *gc,
                           const int32_t *prompt, int32_t len)
{
    const int32_t *held = ngpt_kv_tokens(ctx, 0);
    const int32_t n = gc->keep_cache ? ngpt_kv_len(ctx, 0) : 0;
    int32_t have = 0;
    while (have < n && have < len - 1 && held[have] == prompt[have]) have++;
    ngpt_model_truncate(ctx, 0, have);
    return have;
}

/* Prefills len tokens into slot 0, reporting each pass of seq tokens to the
 * progress callback when there is one; false when it cancels (the slot then
 * holds what it held before). */
static bool prefill(ngpt_context *ctx, const int32_t *tokens, int32_t len, const float **row)
{
    if (!ngpt_progress_wanted()) {
        ngpt_model_prefill(ctx, 0, tokens, len, row);
        return true;
    }
    const int32_t before = ngpt_kv_len(ctx, 0), chunk = ctx->shape.seq;
    for (int32_t at = 0; at < len;) {
        const int32_t c = len - at < chunk ? len - at : chunk;
        ngpt_model_prefill(ctx, 0, tokens + at, c, row);    /* the same passes as one call */
        at += c;
        if (!ngpt_progress_report(NGPT_PROGRESS_PREFILL, (uint64_t)at, (uint64_t)len)) {
            ngpt_model_truncate(ctx, 0, before);
            return false;
        }
    }
    return true;
}

/* The last logits row of the last pass's one sequence (shape.logits_rows
 * may have kept fewer rows than it had tokens). */
static const float *last_row(const ngpt_context *ctx)
{
    return ctx->plan.logits + (size_t)(ctx->run.pass.rows - 1) * ctx->cfg.vocab_size;
}

/* false: the progress callback cancelled the prefill. */
static bool window_start(ngpt_context *ctx, const ngpt_generate_config *gc, const int32_t *prompt,
                         int32_t len, window *w)
{
    int32_t *own = ctx->plan.gen.window;
    w->n = len;
    if (gc->no_cache) {
        memcpy(own, prompt, (size_t)len * sizeof(int32_t));
        ngpt_context_forward_unchecked(ctx, own, 1, len, NULL, NULL);
        w->row = last_row(ctx);
        w->tokens = own;
    } else {
        const int32_t kept = kept_prefix(ctx, gc, prompt, len);
        if (!prefill(ctx, prompt + kept, len - kept, &w->row)) return false;
        w->tokens = ngpt_kv_tokens(ctx, 0);
        if (gc->context_mode == NGPT_CONTEXT_SHIFT) {
            memcpy(own, prompt, (size_t)len * sizeof(int32_t));
            w->tokens = own;
        }
    }
    w->seen = gc->no_cache ? w->tokens : ngpt_kv_tokens(ctx, 0);
    w->n_seen = len;
    return true;
}

/* Appends tok to the window's own copy of n (<= T) tokens, dropping its
 * oldest token when it holds T. */
static void own_push(ngpt_context *ctx, int32_t *n, int32_t tok)
{
    int32_t *tokens = ctx->plan.gen.window;
    const int32_t T = ctx->cfg.context_len;
    if (*n == T) memmove(tokens, tokens + 1, (size_t)--*n * sizeof(int32_t));
    tokens[(*n)++] = tok;
}

/* Appends tok to the window (when it holds T: slides it, or shifts the
 * cache) and computes the next row. */
static void window_feed(ngpt_context *ctx, const ngpt_generate_config *gc, int32_t tok, window *w)
{
    const int32_t T = ctx->cfg.context_len;
    if (gc->no_cache) {     /* recompute the whole window from position 0 */
        own_push(ctx, &w->n, tok);
        ngpt_context_forward_unchecked(ctx, ctx->plan.gen.window, 1, w->n, NULL, NULL);
        w->row = last_row(ctx);
        w->n_seen = w->n;
        return;
    }
    const bool shift = gc->context_mode == NGPT_CONTEXT_SHIFT;
    if (ngpt_kv_len(ctx, 0) == T && !shift) {
        /* exact: the last T-1 tokens and tok again from position 0, staged
         * in the window's own buffer (unused in exact mode) */
        int32_t *tmp = ctx->plan.gen.window;
        memcpy(tmp, w->tokens + 1, (size_t)(T - 1) * sizeof(int32_t));
        tmp[T - 1] = tok;
        ngpt_kv_clear(ctx, 0);
        ngpt_model_prefill(ctx, 0, tmp, T, &w->row);
    } else {
        if (ngpt_kv_len(ctx, 0) == T) ngpt_kv_shift(ctx, 0, T - T / 2);
        ngpt_model_append(ctx, 0, 1, &tok, 1);
        w->row = ctx->plan.logits;
    }
    if (shift) own_push(ctx, &w->n, tok);
    else w->n = ngpt_kv_len(ctx, 0);
    w->n_seen = ngpt_kv_len(ctx, 0);
}

/* Speculative generation's state: the proposals of the last verifying
 * pass not yet checked, and its logits rows (the row after each appended
 * token). The window's n and n_seen count only accepted tokens; the cache
 * may hold the unchecked proposals after them. */
typedef struct speculation {
    int32_t prop[NGPT_DRAFT_TOKENS_MAX];
    int32_t n_prop, next;       /* prop[next..n_prop) are unchecked */
    int32_t checked, accepted;  /* proposals compared with the model's token, and kept */
} speculation;

/* The first n proposals the grammar allows, one after another from the
 * text's state (an end token, or one that completes it, is the last). */
static int32_t grammar_cut(ngpt_constraint *c, const int32_t *prop, int32_t n)
{
    ngpt_gm_copy(c->spec, c->st);
    for (int32_t j = 0; j < n; j++) {
        if (ngpt_constraint_advance(c, c->spec, prop[j], c->spec_next) != NGPT_GM_OK) return j;
        if (ngpt_stop_is_end(c->gc, c->tk, prop[j])) return j + 1;
        uint32_t *t = c->spec;
        c->spec = c->spec_next, c->spec_next = t;
        if (ngpt_gm_complete(c->spec)) return j + 1;
    }
    return n;
}

/* Proposals for the tokens after tok (index i) from the request's draft, up
 * to k; the text before tok is the cache's n_seen tokens. Under a grammar
 * (c->st: the state after tok) only what it allows. */
static int32_t propose(const ngpt_generate_config *gc, ngpt_constraint *c, const window *w,
                       int32_t tok, int32_t i, int32_t k, int32_t *out)
{
    if (gc->lookup > 0) {
        int32_t n = ngpt_spec_lookup(w->seen, w->n_seen, tok, gc->lookup, k, out);
        return c->g ? grammar_cut(c, out, n) : n;
    }
    return ngpt_spec_draft(gc->draft, &gc->sampler, w->seen, w->n_seen, tok, (uint64_t)i + 1, k,
                           c->g ? c : NULL, out);
}

/* window_feed for speculative generation: tok (index i) either is the next
 * proposal, whose row the last pass computed, or it ends the checked run:
 * the unchecked proposals leave the cache, and tok goes in with new
 * proposals after it in one pass (one at a time when none come or the
 * context has no room for them). */
static void speculative_feed(ngpt_context *ctx, const ngpt_generate_config *gc,
                             ngpt_constraint *c, int32_t tok, int32_t i, window *w, speculation *sp)
{
    const int32_t V = ctx->cfg.vocab_size, T = ctx->cfg.context_len;
    const bool shift = gc->context_mode == NGPT_CONTEXT_SHIFT;
    if (sp->next < sp->n_prop) {
        sp->checked++;
        if (tok == sp->prop[sp->next]) {
            sp->next++;
            sp->accepted++;
            w->row += V;
            if (shift) own_push(ctx, &w->n, tok);
            else w->n++;
            w->n_seen++;
            return;
        }
        ngpt_model_truncate(ctx, 0, w->n_seen);
    }
    sp->n_prop = sp->next = 0;
    /* room: the cache, and rows only for tokens max_tokens still samples */
    int32_t k = gc->draft_tokens;
    if (k > T - w->n_seen - 1) k = T - w->n_seen - 1;
    if (k > gc->max_tokens - i - 2) k = gc->max_tokens - i - 2;
    int32_t n = k > 0 ? propose(gc, c, w, tok, i, k, sp->prop) : 0;
    if (n == 0) {
        window_feed(ctx, gc, tok, w);
        return;
    }
    int32_t batch[NGPT_DRAFT_TOKENS_MAX + 1];
    batch[0] = tok;
    memcpy(batch + 1, sp->prop, (size_t)n * sizeof(int32_t));
    ngpt_model_append(ctx, 0, 1, batch, n + 1);
    w->row = ctx->plan.logits;
    if (shift) own_push(ctx, &w->n, tok);
    else w->n++;
    w->n_seen++;
    sp->n_prop = n;
}

ngpt_status ngpt_context_generate(ngpt_context *ctx, const ngpt_generate_config *gc,
                          const int32_t *prompt, int32_t prompt_len, int32_t *out,
                          int32_t out_cap, ngpt_token_fn fn, void *user,
                          ngpt_generate_result *result)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = validate(ctx, gc, prompt, prompt_len, out, out_cap);
    if (st) return st;
    /* like the original's ids[-T:]: a longer prompt loses its start */
    const int32_t T = ctx->cfg.context_len;
    const int32_t dropped = prompt_len > T ? prompt_len - T : 0;
    prompt += dropped;
    prompt_len -= dropped;
    ngpt_generate_result res = {.reason = NGPT_STOP_NONE, .prompt_tokens = prompt_len,
                                .prompt_dropped = dropped, .end_token = -1};
    if (result) *result = res;
    if (gc->keep_cache && gc->beam_width < 1 && !gc->no_cache) {
        for (int32_t s = 1; s < ctx->shape.batch; s++) ngpt_kv_clear(ctx, s);  /* window_start trims 0 */
    } else {
        ngpt_kv_clear(ctx, -1);
    }
    if (gc->beam_width >= 1) {
        st = ngpt_beam_search(ctx, gc, prompt, prompt_len, out, fn, user, &res);
        if (result) *result = res;
        return ngpt_prefixed("ngpt_context_generate", st);
    }

    /* generation is eval: no_cache's full forwards must not drop either */
    const bool dropout_was_on = ngpt_dropout_pause(ctx);
    const bool speculative = gc->draft_tokens > 0;
    const bool draft_dropout_was_on = gc->draft ? ngpt_dropout_pause(gc->draft) : false;
    if (gc->draft) ngpt_kv_clear(gc->draft, 0);
    speculation sp = {.n_prop = 0};
    window w;
    if (!window_start(ctx, gc, prompt, prompt_len, &w)) {
        ngpt_dropout_resume(ctx, dropout_was_on);
        return ngpt_fail(NGPT_ERR_STOPPED, "ngpt_context_generate: cancelled by the progress "
                         "callback during the prefill; nothing was generated");
    }
    if (gc->on_prefilled) gc->on_prefilled(user);

    ngpt_output sm = {.out = out, .fn = fn, .user = user};
    ngpt_constraint con;
    ngpt_constraint_start(&con, ctx, gc);
    /* a grammar of the empty text alone: nothing to generate */
    if (con.g && ngpt_gm_complete(con.st)) res.reason = NGPT_STOP_GRAMMAR_COMPLETE;
    for (int32_t i = 0; res.reason == NGPT_STOP_NONE; i++) {
        const int32_t n = w.n;
        const int32_t *win_end = w.tokens + n;
        const uint64_t draw = gc->first_draw + (uint64_t)i;
        int32_t tok;
        int grc = NGPT_GM_OK;
        st = con.g ? ngpt_constraint_sample(&con, ctx, &gc->sampler, w.row, w.seen, w.n_seen, draw,
                                            &tok, &grc)
                   : ngpt_context_sample_unchecked(ctx, &gc->sampler, w.row, w.seen, w.n_seen, 0,
                                                   draw, &tok);
        if (st) {
            ngpt_prefixed("ngpt_context_generate", st);
            break;
        }
        sm.pending++;
        res.n_generated = i + 1;
        if (ngpt_stop_is_end(gc, ctx->tokenizer, tok)) {
            ngpt_output_release(&sm, win_end, tok, 1);  /* the end token itself is the newest: held */
            res.reason = sm.stopped ? NGPT_STOP_CALLBACK : NGPT_STOP_END_TOKEN;
            if (!sm.stopped) res.end_token = tok;
            break;
        }
        if (grc == NGPT_GM_OVERFLOW) {      /* past the planned depth: not output */
            ngpt_output_release(&sm, win_end, tok, 1);
            res.reason = sm.stopped ? NGPT_STOP_CALLBACK : NGPT_STOP_GRAMMAR_DEPTH;
            break;
        }
        if (con.g) ngpt_constraint_take(&con);
        const int32_t avail = i < n ? i : n;          /* generated tokens before tok in the window */
        int32_t hold = 0, keep_bytes = 0;
        int32_t m = ngpt_stop_match(gc, ctx->tokenizer, win_end, avail, tok, &hold, &keep_bytes);
        if (m > 0) {
            ngpt_output_stop(&sm, ctx->tokenizer, win_end, tok, m, keep_bytes);
            res.reason = sm.stopped ? NGPT_STOP_CALLBACK : NGPT_STOP_SEQUENCE;
            break;
        }
        const bool complete = con.g && ngpt_gm_complete(con.st);
        bool last = i + 1 >= gc->max_tokens;
        bool full = w.n_seen >= T && gc->stop_at_context_full;
        ngpt_output_release(&sm, win_end, tok, last || full || complete ? 0 : hold);
        if (sm.stopped) {
            res.reason = NGPT_STOP_CALLBACK;
            break;
        }
        if (complete) {
            res.reason = NGPT_STOP_GRAMMAR_COMPLETE;
            break;
        }
        if (last || full) {
            res.reason = full && !last ? NGPT_STOP_CONTEXT_FULL
                         : con.g && !ngpt_gm_can_end(con.st) ? NGPT_STOP_GRAMMAR_INCOMPLETE
                                                             : NGPT_STOP_MAX_TOKENS;
            break;
        }
        if (speculative) speculative_feed(ctx, gc, &con, tok, i, &w, &sp);
        else window_feed(ctx, gc, tok, &w);
    }
    /* the cache as plain generation leaves it: without unchecked proposals */
    if (speculative && ngpt_kv_len(ctx, 0) > w.n_seen) ngpt_model_truncate(ctx, 0, w.n_seen);
    if (gc->draft) ngpt_dropout_resume(gc->draft, draft_dropout_was_on);
    ngpt_dropout_resume(ctx, dropout_was_on);
    res.n_proposed = sp.checked;
    res.n_accepted = sp.accepted;
    res.n_tokens = sm.n_out;
    if (result) *result = res;
    return st;
}
