/* workloads.c — what a user of ngpt waits for, measured through the
 * public API only, prefill and decode with float32 and with 8-bit weights
 * (o->weights: the same model, ngpt_context_params_init(42) or --model's weights,
 * quantized):
 *   prefill  a T/2-token prompt (o->prompt_tokens) into an empty KV cache (batch 1),
 *            the logits of its last position only (shape.logits_rows = 1, as
 *            ngpt generate);
 *   decode   min(256, T) new tokens (o->decode_tokens) from an empty cache, one ngpt_context_cache_decode
 *            per token, batch 1 and batch 4 (independent sequences); fixed
 *            tokens, no sampling (as llama-bench's tg test);
 *   train    ngpt_context_train_step (forward, backward, clip, AdamW; the config's
 *            dropout) on synthetic bytes, B=8 T=128 and B=32 T=256 (T capped
 *            at the model's context);
 *   train lora  the same steps training a LoRA adapter (r=16 on every Linear)
 *            of the model, frozen, with each of o->weights;
 *   decode lora  decode at batch 1 with that adapter applied;
 *   decode at N  (o->decode_at, --decode-at) DECODE_AT_STEPS new tokens at
 *            batch 1 after an N-token prompt (prefilled once, untimed; each
 *            timed call truncates the cache back to it), with a float32 and
 *            an 8-bit KV cache: what a long conversation's cache costs;
 *   prefill B=1 prompt=5  a pass of 5 positions (a speculative check of
 *            K = 4, a short prompt) beside decode's one-position steps;
 *   generate, spec lookup, spec draft  one fixed speculative workload
 *            (SPEC_*: a 32-token prompt of an 8-token phrase said 4 times,
 *            128 new tokens, greedy, seed 42, K = 4, float32 KV cache):
 *            plain generation, prompt lookup (N = 2) and the model as its
 *            own draft (every proposal accepted), with their acceptance;
 * and the arena of every context planned for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "ngpt_bench.h"

enum { DECODE_BATCH = 4, DATA_BYTES = 1 << 20, LORA_RANK = 16, DECODE_AT_STEPS = 16,
       SMALL_PASS = 5 };
/* The speculative workload: fixed, so that its figures compare across runs. */
enum { SPEC_PHRASE = 8, SPEC_PROMPT = 4 * SPEC_PHRASE, SPEC_NEW = 128, SPEC_K = 4, SPEC_LOOKUP = 2,
       SPEC_SEED = 42 };

static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* A token pattern that visits the whole vocabulary. */
static int32_t token_at(int64_t i, int32_t vocab) { return (int32_t)((i * 31 + 7) % vocab); }

typedef struct gen_job {
    ngpt_context *ctx;
    int32_t batch, len;
    int32_t *tokens;            /* batch * len */
} gen_job;

static ngpt_status run_prefill(void *arg)
{
    gen_job *j = arg;
    ngpt_status st = ngpt_context_cache_clear(j->ctx, -1);
    return st ? st : ngpt_context_cache_prefill(j->ctx, j->tokens, j->batch, j->len);
}

static ngpt_status run_decode(void *arg)
{
    gen_job *j = arg;
    ngpt_status st = ngpt_context_cache_clear(j->ctx, -1);
    for (int32_t i = 0; !st && i < j->len; i++)
        st = ngpt_context_cache_decode(j->ctx, j->tokens + (size_t)i * j->batch, j->batch);
    return st;
}

typedef struct spec_job {
    ngpt_context *ctx;
    ngpt_generate_config gc;
    const int32_t *prompt;
    int32_t prompt_len;
    int32_t *out;
    ngpt_generate_result res;   /* the last run's (the same every run) */
} spec_job;

static ngpt_status run_generate(void *arg)
{
    spec_job *j = arg;
    return ngpt_context_generate(j->ctx, &j->gc, j->prompt, j->prompt_len, j->out, j->gc.max_tokens,
                                 NULL, NULL, &j->res);
}

typedef struct train_job {
    ngpt_context *ctx;
    const ngpt_data *data;
    ngpt_optim_config opt;
    int32_t batch, seq;
} train_job;

static ngpt_status run_train(void *arg)
{
    train_job *j = arg;
    float loss;
    return ngpt_context_train_step(j->ctx, &j->opt, j->data, 42, j->batch, j->seq, &loss, NULL, NULL);
}

/* The weights' name in the report: q4h is q4 with --lm-head q4. */
static const char *weights_name(const bench_opts *o, ngpt_weights w)
{
    return w == NGPT_WEIGHTS_Q8 ? "q8" : w == NGPT_WEIGHTS_Q4 ? (o->lm_head_q4 ? "q4h" : "q4") : "f32";
}

/* o's config with weights w (and its lm_head 4-bit for q4 with --lm-head q4). */
static ngpt_config config_with(const bench_opts *o, ngpt_weights w)
{
    ngpt_config cfg = o->cfg;
    cfg.weights = w;
    cfg.lm_head_q4 = o->lm_head_q4 && w == NGPT_WEIGHTS_Q4;
    return cfg;
}

static void add_arena(const bench_opts *o, bench_report *r, const char *mode, ngpt_weights w,
                      int32_t batch, int32_t seq, int32_t threads, size_t bytes)
{
    if (r->n_arena == BENCH_MAX_ROWS) return;
    bench_arena *a = &r->arena[r->n_arena++];
    snprintf(a->mode, sizeof a->mode, "%s", mode);
    snprintf(a->weights, sizeof a->weights, "%s", weights_name(o, w));
    a->batch = batch, a->seq = seq, a->threads = threads, a->bytes = bytes;
}

/* Plans, allocates and initialises a context (--model's weights, copied
 * and quantized to cfg's, or ngpt_context_params_init(42)); records its
 * arena. */
static int open_ctx_shape(const bench_opts *o, const ngpt_config *cfg, bench_report *r,
                          const ngpt_shape *shape, ngpt_context **ctx)
{
    size_t bytes;
    ngpt_status st = ngpt_context_arena_size(o->opened, cfg, shape, &bytes);
    if (!st) st = ngpt_context_init(ctx, o->opened, cfg, shape, NULL, 0);
    if (!st && !o->opened && (st = ngpt_context_params_init(*ctx, 42))) ngpt_context_free(*ctx);
    if (st) {
        return bench_failed(shape->mode == NGPT_MODE_TRAIN ? "train context" : "infer context", st);
    }
    add_arena(o, r, shape->mode == NGPT_MODE_TRAIN ? "train" : "infer", cfg->weights, shape->batch,
              shape->seq, shape->threads, bytes);
    return BENCH_OK;
}

static int open_ctx(const bench_opts *o, const ngpt_config *cfg, bench_report *r, ngpt_mode mode,
                    int32_t batch, int32_t seq, int32_t threads, ngpt_context **ctx)
{
    /* inference: generation's default plan, the logits of each sequence's
     * last position only (a prefill's lm_head runs on one row) */
    ngpt_shape shape = ngpt_shape_default(mode);
    shape.batch = batch, shape.seq = seq ? seq : cfg->context_len, shape.threads = threads;
    return open_ctx_shape(o, cfg, r, &shape, ctx);
}

/* ngpt_bench.h: every tensor as ctx stores it (float32, or the packed 8-
 * and 4-bit layouts of src/q8.h, src/q4.h), except the embedding tables a
 * step reads one row of (pos_emb; tok_emb unless it is also the lm_head). */
double bench_weight_bytes(const ngpt_context *ctx, const ngpt_config *cfg)
{
    int32_t n = 0;
    double bytes = 0;
    ngpt_context_tensor_count(ctx, &n);
    for (int32_t i = 0; i < n; i++) {
        ngpt_tensor_info t;
        if (ngpt_context_tensor_at(ctx, i, &t)) return 0;
        if (!strcmp(t.name, "pos_emb.weight") || (!strcmp(t.name, "tok_emb.weight") && !cfg->tie_lm_head))
            continue;
        const int rows = t.shape[0], cols = t.ndim == 2 ? t.shape[1] : 1;
        bytes += t.dtype == NGPT_DTYPE_Q8   ? (double)ngpt_q8_packed_bytes(rows, cols)
                 : t.dtype == NGPT_DTYPE_Q4 ? (double)ngpt_q4_packed_bytes(rows, cols)
                                            : 4.0 * (double)t.count;
    }
    return bytes;
}

/* Times fn and appends the figure. */
static int add_figure(const bench_opts *o, bench_report *r, const char *test, ngpt_weights wt,
                      int32_t batch, int32_t seq, int32_t threads, double tokens,
                      int32_t api_calls, bench_fn fn, void *arg)
{
    if (r->n_work == BENCH_MAX_ROWS) return bench_error(BENCH_FAILED, "too many figures");
    bench_workload *w = &r->work[r->n_work];
    snprintf(w->test, sizeof w->test, "%s", test);
    snprintf(w->weights, sizeof w->weights, "%s", weights_name(o, wt));
    w->batch = batch, w->seq = seq, w->threads = threads, w->tokens = tokens;
    w->api_calls = api_calls;
    char label[64];
    snprintf(label, sizeof label, "%s%s b%d n%d, %d thread%s", test,
             bench_weights_suffix(w->weights), (int)batch, (int)seq, (int)threads,
             threads > 1 ? "s" : "");
    ngpt_status st = bench_time(o, label, fn, arg, 0, &w->sec);
    if (st) {
        return bench_failed(label, st);
    }
    r->n_work++;
    return BENCH_OK;
}

/* Prefill and decode on inference contexts planned for them, with the
 * weights of cfg. */
static int bench_generation(const bench_opts *o, const ngpt_config *cfg, bench_report *r,
                            int32_t threads)
{
    const int32_t T = o->cfg.context_len, V = o->cfg.vocab_size;
    const int32_t prompt = o->prompt_tokens ? o->prompt_tokens : T / 2 > 0 ? T / 2 : 1;
    const int32_t steps = min_i32(o->decode_tokens, T);
    int32_t *tok = malloc((size_t)DECODE_BATCH * (size_t)(T > steps ? T : steps) * sizeof *tok);
    if (!tok) return bench_error(BENCH_FAILED, "out of memory");
    for (int64_t i = 0; i < (int64_t)DECODE_BATCH * T; i++) tok[i] = token_at(i, V);

    ngpt_context *ctx;
    int rc = open_ctx(o, cfg, r, NGPT_MODE_INFER, 1, 0, threads, &ctx);
    const ngpt_weights wt = cfg->weights;
    if (!rc) {
        gen_job pre = {ctx, 1, prompt, tok}, dec = {ctx, 1, steps, tok};
        gen_job small = {ctx, 1, SMALL_PASS, tok};
        rc = add_figure(o, r, "prefill", wt, 1, prompt, threads, prompt, 1, run_prefill, &pre);
        if (!rc && prompt != SMALL_PASS && SMALL_PASS <= T)
            rc = add_figure(o, r, "prefill", wt, 1, SMALL_PASS, threads, SMALL_PASS, 1, run_prefill,
                            &small);
        if (!rc)
            rc = add_figure(o, r, "decode", wt, 1, steps, threads, steps, steps, run_decode, &dec);
        if (!rc) r->work[r->n_work - 1].weight_bytes = bench_weight_bytes(ctx, cfg);
        ngpt_context_free(ctx);
    }
    if (!rc) rc = open_ctx(o, cfg, r, NGPT_MODE_INFER, DECODE_BATCH, 1, threads, &ctx);
    if (!rc) {
        gen_job dec = {ctx, DECODE_BATCH, steps, tok};
        rc = add_figure(o, r, "decode", wt, DECODE_BATCH, steps, threads,
                        (double)DECODE_BATCH * steps, steps, run_decode, &dec);
        ngpt_context_free(ctx);
    }
    free(tok);
    return rc;
}

typedef struct decode_at_job {
    ngpt_context *ctx;
    int32_t at, len;
    const int32_t *tokens;      /* at + len */
} decode_at_job;

static ngpt_status run_decode_at(void *arg)
{
    decode_at_job *j = arg;
    ngpt_status st = ngpt_context_cache_truncate(j->ctx, 0, j->at);
    for (int32_t i = 0; !st && i < j->len; i++) st = ngpt_context_cache_decode(j->ctx, j->tokens + j->at + i, 1);
    return st;
}

/* Decode at o->decode_at cached positions with each KV cache type. */
static int bench_decode_at(const bench_opts *o, const ngpt_config *cfg, bench_report *r,
                           int32_t threads)
{
    const int32_t at = o->decode_at, V = o->cfg.vocab_size;
    int32_t *tok = malloc((size_t)(at + DECODE_AT_STEPS) * sizeof *tok);
    if (!tok) return bench_error(BENCH_FAILED, "out of memory");
    for (int32_t i = 0; i < at + DECODE_AT_STEPS; i++) tok[i] = token_at(i, V);
    int rc = BENCH_OK;
    for (int kv = NGPT_KV_F32; kv <= NGPT_KV_Q8 && !rc; kv++) {
        ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
        shape.threads = threads, shape.kv_k = shape.kv_v = (int16_t)kv;
        ngpt_context *ctx = NULL;
        ngpt_status st = ngpt_context_init(&ctx, o->opened, cfg, &shape, NULL, 0);
        if (!st && !o->opened) st = ngpt_context_params_init(ctx, 42);
        for (int32_t done = 0; !st && done < at; done += NGPT_SEQ_INFER_DEFAULT) {
            const int32_t pass = min_i32(at - done, NGPT_SEQ_INFER_DEFAULT);
            st = ngpt_context_cache_prefill(ctx, tok + done, 1, pass);
        }
        char test[32];
        snprintf(test, sizeof test, "decode at %d (kv %s)", (int)at, kv == NGPT_KV_Q8 ? "q8" : "f32");
        if (st) rc = bench_failed(test, st);
        decode_at_job job = {ctx, at, DECODE_AT_STEPS, tok};
        if (!rc)
            rc = add_figure(o, r, test, cfg->weights, 1, DECODE_AT_STEPS, threads, DECODE_AT_STEPS,
                            DECODE_AT_STEPS, run_decode_at, &job);
        ngpt_context_free(ctx);
    }
    free(tok);
    return rc;
}

/* The speculative workload (SPEC_*) with the weights of cfg: plain, prompt
 * lookup, and a second context of the same weights as the draft. */
static int bench_speculative(const bench_opts *o, const ngpt_config *cfg, bench_report *r,
                             int32_t threads)
{
    const int32_t T = o->cfg.context_len, V = o->cfg.vocab_size;
    const int32_t n_new = min_i32(SPEC_NEW, T - SPEC_PROMPT);
    if (n_new < SPEC_K + 1) return BENCH_OK;    /* a tiny context: no round fits */
    int32_t prompt[SPEC_PROMPT], *out = malloc((size_t)n_new * sizeof *out);
    if (!out) return bench_error(BENCH_FAILED, "out of memory");
    for (int32_t i = 0; i < SPEC_PROMPT; i++) prompt[i] = token_at(i % SPEC_PHRASE, V);
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = 1, shape.seq = SPEC_PROMPT, shape.threads = threads, shape.draft_tokens = SPEC_K;
    ngpt_context *ctx = NULL, *draft = NULL;
    int rc = open_ctx_shape(o, cfg, r, &shape, &ctx);
    if (!rc) rc = open_ctx(o, cfg, r, NGPT_MODE_INFER, 1, SPEC_PROMPT, threads, &draft);
    static const char *const tests[] = {"generate", "spec lookup", "spec draft"};
    for (int k = 0; k < 3 && !rc; k++) {
        spec_job j = {.ctx = ctx, .gc = ngpt_generate_config_default(), .prompt = prompt,
                      .prompt_len = SPEC_PROMPT, .out = out};
        j.gc.sampler.temperature = 0, j.gc.sampler.seed = SPEC_SEED, j.gc.max_tokens = n_new;
        if (k) j.gc.draft_tokens = SPEC_K;
        if (k == 1) j.gc.lookup = SPEC_LOOKUP;
        if (k == 2) j.gc.draft = draft;
        rc = add_figure(o, r, tests[k], cfg->weights, 1, n_new, threads, n_new, 1, run_generate, &j);
        if (!rc) {
            bench_workload *w = &r->work[r->n_work - 1];
            w->proposed = j.res.n_proposed, w->accepted = j.res.n_accepted;
            w->tokens = j.res.n_generated;      /* fewer when a model's end token came first */
        }
    }
    ngpt_context_free(draft);
    ngpt_context_free(ctx);
    free(out);
    return rc;
}

/* The training shapes measured: B=8 T=128, and B=32 T=256 unless skipped. */
static int train_shapes(const bench_opts *o, int32_t shapes[2][2])
{
    const int32_t T = o->cfg.context_len;
    int n = 0;
    shapes[n][0] = 8, shapes[n][1] = min_i32(128, T), n++;
    if (o->big_train) shapes[n][0] = 32, shapes[n][1] = min_i32(256, T), n++;
    return n;
}

static int bench_training(const bench_opts *o, bench_report *r, int32_t threads)
{
    unsigned char *bytes = malloc(DATA_BYTES);
    if (!bytes) return bench_error(BENCH_FAILED, "out of memory");
    uint32_t x = 12345;
    for (size_t i = 0; i < DATA_BYTES; i++) {       /* printable noise: any bytes would do */
        x = x * 1664525u + 1013904223u;
        bytes[i] = (unsigned char)(' ' + (x >> 24) % 95);
    }
    int32_t shapes[2][2];
    int n = train_shapes(o, shapes), rc = BENCH_OK;
    for (int s = 0; s < n && !rc; s++) {
        const int32_t B = shapes[s][0], T = shapes[s][1];
        ngpt_data *data;
        ngpt_status st = ngpt_data_open_mem(&data, bytes, DATA_BYTES, 0.1f, T);
        if (st) {
            rc = bench_failed("synthetic data", st);
            break;
        }
        ngpt_context *ctx;
        rc = open_ctx(o, &o->cfg, r, NGPT_MODE_TRAIN, B, T, threads, &ctx);
        if (!rc) {
            train_job j = {ctx, data, ngpt_optim_config_default(), B, T};
            rc = add_figure(o, r, "train", NGPT_WEIGHTS_F32, B, T, threads, (double)B * T, 1,
                            run_train, &j);
            ngpt_context_free(ctx);
        }
        ngpt_data_free(data);
    }
    free(bytes);
    return rc;
}

/* ---- LoRA: an adapter trained on the model, frozen, and applied */

/* The model with weights w as an ngpt_model (what adapters train on and
 * apply to), through a temporary file: --model's weights or
 * ngpt_context_params_init(42)'s, quantized to w as ngpt quantize does. */
static ngpt_status lora_model(const bench_opts *o, ngpt_weights w, ngpt_model **m)
{
    char path[256];
    snprintf(path, sizeof path, "%s/ngpt-bench-%d.ngpt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    ngpt_config cfg = config_with(o, w);
    ngpt_context *ctx = NULL;
    ngpt_status st = ngpt_context_init(&ctx, o->opened, &cfg, NULL, NULL, 0);
    if (!st && !o->opened) st = ngpt_context_params_init(ctx, 42);
    if (!st) st = ngpt_context_save(ctx, path);
    ngpt_context_free(ctx);
    if (!st) st = ngpt_model_open(m, path);
    remove(path);
    return st;
}

static int bench_lora(const bench_opts *o, bench_report *r, int32_t threads, ngpt_weights w)
{
    ngpt_model *m = NULL;
    ngpt_adapter *ad = NULL;
    ngpt_lora_config lc = ngpt_lora_config_default();
    lc.rank = LORA_RANK, lc.alpha = 2.0f * LORA_RANK, lc.targets = NGPT_LORA_ALL_LINEAR;
    ngpt_status st = lora_model(o, w, &m);
    if (!st) st = ngpt_adapter_create(&ad, m, &lc, 42);
    if (st) {
        ngpt_model_close(m);
        return bench_failed("LoRA model and adapter", st);
    }
    unsigned char *bytes = malloc(DATA_BYTES);
    int rc = bytes ? BENCH_OK : bench_error(BENCH_FAILED, "out of memory");
    uint32_t x = 12345;
    for (size_t i = 0; bytes && i < DATA_BYTES; i++) {
        x = x * 1664525u + 1013904223u;
        bytes[i] = (unsigned char)(' ' + (x >> 24) % 95);
    }
    int32_t shapes[2][2];
    const int n = train_shapes(o, shapes);
    for (int s = 0; s < n && !rc; s++) {
        const int32_t B = shapes[s][0], T = shapes[s][1];
        ngpt_shape shape = ngpt_shape_default(NGPT_MODE_TRAIN);
        shape.batch = B, shape.seq = T, shape.threads = threads, shape.adapter = ad;
        ngpt_data *data = NULL;
        ngpt_context *ctx = NULL;
        size_t arena = 0;
        st = ngpt_data_open_mem(&data, bytes, DATA_BYTES, 0.1f, T);
        if (!st) st = ngpt_context_arena_size(m, NULL, &shape, &arena);
        if (!st) st = ngpt_context_init(&ctx, m, NULL, &shape, NULL, 0);
        if (st) rc = bench_failed("LoRA training context", st);
        if (!rc) {
            add_arena(o, r, "lora", w, B, T, threads, arena);
            train_job j = {ctx, data, ngpt_optim_config_default(), B, T};
            rc = add_figure(o, r, "train lora", w, B, T, threads, (double)B * T, 1, run_train, &j);
        }
        ngpt_context_free(ctx);
        ngpt_data_free(data);
    }
    free(bytes);
    /* decode at batch 1 with the adapter applied */
    const int32_t T = o->cfg.context_len, V = o->cfg.vocab_size;
    const int32_t steps = min_i32(o->decode_tokens, T);
    int32_t *tok = rc ? NULL : malloc((size_t)steps * sizeof *tok);
    if (!rc && !tok) rc = bench_error(BENCH_FAILED, "out of memory");
    for (int32_t i = 0; !rc && i < steps; i++) tok[i] = token_at(i, V);
    ngpt_context *ctx = NULL;
    if (!rc) {
        ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
        shape.threads = threads, shape.adapter_rank = LORA_RANK;
        const float scale = 1.0f;
        st = ngpt_context_init(&ctx, m, NULL, &shape, NULL, 0);
        if (!st) st = ngpt_context_adapters_set(ctx, (const ngpt_adapter *const *)&ad, &scale, 1);
        if (st) rc = bench_failed("LoRA inference context", st);
    }
    if (!rc) {
        gen_job dec = {ctx, 1, steps, tok};
        rc = add_figure(o, r, "decode lora", w, 1, steps, threads, steps, steps, run_decode, &dec);
    }
    ngpt_context_free(ctx);
    free(tok);
    ngpt_adapter_close(ad);
    ngpt_model_close(m);
    return rc;
}

int bench_workloads_count(const bench_opts *o)
{
    int32_t shapes[2][2];
    const int train = train_shapes(o, shapes);
    const int decode_at = o->decode_at ? 2 * o->n_weights : 0;
    if (o->no_train) return o->n_threads * (7 * o->n_weights + decode_at);
    return o->n_threads * (7 * o->n_weights + train + o->n_weights * (train + 1) + decode_at);
}

int bench_workloads(const bench_opts *o, bench_report *r)
{
    for (int t = 0; t < o->n_threads; t++) {
        int rc = BENCH_OK;
        for (int w = 0; w < o->n_weights && !rc; w++) {
            ngpt_config cfg = config_with(o, o->weights[w]);
            rc = bench_generation(o, &cfg, r, o->threads[t]);
            if (!rc && o->decode_at) rc = bench_decode_at(o, &cfg, r, o->threads[t]);
            if (!rc) rc = bench_speculative(o, &cfg, r, o->threads[t]);
        }
        if (!rc && !o->no_train) rc = bench_training(o, r, o->threads[t]);
        for (int w = 0; w < o->n_weights && !rc && !o->no_train; w++)
            rc = bench_lora(o, r, o->threads[t], o->weights[w]);
        if (rc) return rc;
    }
    return BENCH_OK;
}
