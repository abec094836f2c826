/* scenario.h — one run of everything the library computes, hashed, for
 * tests that compare runs which must agree bit for bit (thread counts,
 * arena contents): 3 AdamW steps with dropout and accumulation (the last
 * micro-batches smaller than planned), evaluation, eval and train-mode
 * logits with the full attention trace, sampling past the context (the
 * window slides), beam search, and the cached pass's trace rows. */
#ifndef NGPT_TEST_SCENARIO_H
#define NGPT_TEST_SCENARIO_H

#include "test.h"

#include "runtime/context.h"   /* the pool's inline threshold: split even tiny jobs */
#include "runtime/pool.h"

/* How a run's contexts are made: the thread count, every job split, and
 * (dirty) a caller arena filled with NaN bytes instead of the library's. */
typedef struct variant {
    int32_t threads;
    bool split_all;
    bool dirty;
} variant;

static const char TEXT[] =
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was "
    "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it "
    "was the season of Light, it was the season of Darkness, it was the spring of hope.";

typedef struct results {
    uint64_t params, grads, loss, norm, eval_loss;      /* training, 3 steps */
    uint64_t logits_eval, logits_train, trace;          /* full forward of the batch */
    uint64_t sampled, beam, cached_trace;               /* generation */
} results;

static inline uint64_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* A context with parameters from seed 5; *arena is the caller buffer to
 * free after ngpt_context_free (NULL unless dirty). */
static inline ngpt_context *scenario_make(const ngpt_config *cfg, ngpt_mode mode, int32_t B, int32_t T,
                                   ngpt_trace trace, variant v, void **arena)
{
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = B, s.seq = T, s.trace = trace, s.threads = v.threads;
    s.logits_rows = NGPT_LOGITS_ALL;    /* the logits checksums cover every position */
    ngpt_context *ctx = NULL;
    size_t bytes = 0;
    *arena = NULL;
    if (v.dirty) {
        CHECK_OK(ngpt_context_arena_size(NULL, cfg, &s, &bytes));
        *arena = malloc(bytes + 7);
        if (!*arena) return NULL;
        memset(*arena, 0xff, bytes + 7);     /* every float a NaN, every int -1 */
        CHECK_OK(ngpt_context_init(&ctx, NULL, cfg, &s, (char *)*arena + 7, bytes));
    } else {
        CHECK_OK(ngpt_context_init(&ctx, NULL, cfg, &s, NULL, 0));
    }
    if (!ctx) return NULL;
    if (v.split_all) ctx->plan.threads.pool->inline_below = 0.0;
    CHECK_OK(ngpt_context_params_init(ctx, 5));
    return ctx;
}

static inline void scenario_free(ngpt_context *ctx, void *arena)
{
    ngpt_context_free(ctx);
    free(arena);
}

static inline uint64_t hash_floats(const float *x, size_t n) { return ngpt_checksum_bytes(x, n * sizeof *x); }

/* 3 AdamW steps of 2 micro-batches each (the last one smaller than planned),
 * then the batch's logits in eval and train mode. */
static inline void scenario_train(const ngpt_config *cfg, int32_t B, int32_t T, variant v, results *r)
{
    void *arena;
    ngpt_context *ctx = scenario_make(cfg, NGPT_MODE_TRAIN, B, T, NGPT_TRACE_NONE, v, &arena);
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, TEXT, sizeof TEXT - 1, 0.2f, T));
    if (!ctx || !d) goto out;
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.warmup = 1, o.total_steps = 3, o.accum = 2;
    float loss = 0, norm = 0, eval = 0;
    for (int s = 0; s < 3; s++) {
        int32_t b = s == 2 ? B - 1 : B, t = s == 2 ? T - 3 : T;
        CHECK_OK(ngpt_context_train_step(ctx, &o, d, 9, b > 0 ? b : 1, t, &loss, NULL, &norm));
    }
    float *g, *p;
    size_t n;
    CHECK_OK(ngpt_context_params(ctx, &p, &n));
    r->params = hash_floats(p, n);
    CHECK_OK(ngpt_context_grads(ctx, &g, &n));
    r->grads = hash_floats(g, n);
    r->loss = float_bits(loss), r->norm = float_bits(norm);
    CHECK_OK(ngpt_context_evaluate(ctx, d, 3, 2, B, T, &eval));
    r->eval_loss = float_bits(eval);
out:
    ngpt_data_free(d);
    scenario_free(ctx, arena);
}

/* A full forward over B windows (eval, then dropout on) with the full trace;
 * sampling (sliding past T) and a beam search of width B. */
static inline void scenario_infer(const ngpt_config *cfg, int32_t B, int32_t T, variant v, results *r)
{
    void *arena;
    ngpt_context *ctx = scenario_make(cfg, NGPT_MODE_INFER, B, T, NGPT_TRACE_FULL, v, &arena);
    if (!ctx) return;
    int32_t tok[4096];
    /* tok[i] = TEXT[(7 i) mod len], as a recurrence: clang 14 at -mfma
     * without -mavx2 (the x86 baseline of tests and library) miscompiled
     * the modulo written out, unrolled into byte shuffles of TEXT (3 of 48
     * tokens read past the text's end) */
    for (int32_t i = 0, at = 0; i < B * T; i++, at = (at + 7) % (int32_t)(sizeof TEXT - 1))
        tok[i] = (unsigned char)TEXT[at];
    const float *map;
    size_t n;
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, NULL, NULL));
    CHECK_OK(ngpt_context_logits_checksum(ctx, &r->logits_eval));
    CHECK_OK(ngpt_context_trace(ctx, cfg->n_layers - 1, &map, &n));
    r->trace = hash_floats(map, n);
    CHECK_OK(ngpt_context_dropout_set(ctx, true, 7, 2));
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, NULL, NULL));
    CHECK_OK(ngpt_context_logits_checksum(ctx, &r->logits_train));
    CHECK_OK(ngpt_context_dropout_set(ctx, false, 0, 0));

    int32_t out[64];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler.temperature = 0.9f, gc.sampler.top_k = 40, gc.sampler.seed = 11;
    gc.max_tokens = T + 9;      /* past the context: the window slides */
    ngpt_generate_result res;
    CHECK_OK(ngpt_context_generate(ctx, &gc, tok, 5, out, 64, NULL, NULL, &res));
    r->sampled = ngpt_checksum_bytes(out, (size_t)res.n_tokens * sizeof *out);
    gc.sampler.temperature = 1.0f, gc.sampler.top_k = 0;   /* beam search draws nothing */
    gc.max_tokens = 6, gc.beam_width = B;
    CHECK_OK(ngpt_context_generate(ctx, &gc, tok + T, 4, out, 64, NULL, NULL, &res));
    r->beam = ngpt_checksum_bytes(out, (size_t)res.n_tokens * sizeof *out);
    CHECK_OK(ngpt_context_trace(ctx, 0, &map, &n));    /* the last decode step's rows */
    r->cached_trace = hash_floats(map, n);
    scenario_free(ctx, arena);
}

/* Both halves: r = everything variant v computes. */
static inline void scenario_run(const ngpt_config *cfg, int32_t B, int32_t T, variant v, results *r)
{
    memset(r, 0, sizeof *r);
    scenario_train(cfg, B, T, v, r);
    scenario_infer(cfg, B, T, v, r);
}

/* "params 1 grads 0 ..." (1 = same as base) into buf. */
static inline const char *scenario_diff(const results *r, const results *base, char *buf, size_t n)
{
    snprintf(buf, n, "params %d grads %d loss %d norm %d eval %d logits %d/%d trace %d "
             "sampled %d beam %d cached trace %d (1 = same)", r->params == base->params,
             r->grads == base->grads, r->loss == base->loss, r->norm == base->norm,
             r->eval_loss == base->eval_loss, r->logits_eval == base->logits_eval,
             r->logits_train == base->logits_train, r->trace == base->trace,
             r->sampled == base->sampled, r->beam == base->beam,
             r->cached_trace == base->cached_trace);
    return buf;
}

#endif

