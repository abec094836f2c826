/* fuzz_checkpoint.h — the properties both model-file targets check, through
 * ngpt_model_open_mem (path NULL) or ngpt_model_open on a file at `path`:
 *  - opening never crashes; a failure leaves a message and no model;
 *  - an open model answers: its config validates; the tokenizer it carries
 *    (version 2) has the model's V tokens; its training state reads with
 *    settings that validate, or fails with a message;
 *  - an inference context on its shared weights (a small one) has the
 *    model's tokenizer and runs a forward (its values may be anything);
 *    with a tokenizer, generation with a stop sequence runs on its token
 *    bytes; the model refuses to close under the context;
 *  - 8-bit and 4-bit copies (its config with weights q8, q4) are made from
 *    a float32 model (quantized as copied) or one already of those
 *    weights, and run a forward; any other is refused with a message and
 *    no context;
 *  - a training context made from a float32 model continues its training
 *    state, and fails (with a message, no context) when that state does
 *    not read; a quantized model's is refused (NGPT_ERR_WRONG_MODE). */
#ifndef NGPT_FUZZ_CHECKPOINT_H
#define NGPT_FUZZ_CHECKPOINT_H

#include <unistd.h>

#include "fuzz.h"

#define FUZZ_CKPT_MAX_ARENA (4u << 20)

static void fuzz_write_file(const char *path, const unsigned char *b, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, size, f) != size || fclose(f) != 0) fuzz_fail("cannot write %s", path);
}

/* The shapes the contexts below are planned for: passes of at most 4 tokens. */
static ngpt_shape fuzz_ckpt_shape(const ngpt_config *cfg, ngpt_mode mode)
{
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = 1, s.seq = cfg->context_len < 4 ? cfg->context_len : 4;
    s.logits_rows = NGPT_LOGITS_ALL;    /* the forward below computes a loss */
    return s;
}

/* A context of model m (cfg NULL: the model's own) for shape s, if its
 * arena is small: NGPT_OK with *ctx NULL when it is not made. */
static ngpt_status fuzz_ckpt_context(ngpt_context **ctx, const ngpt_model *m,
                                     const ngpt_config *cfg, const ngpt_shape *s)
{
    size_t bytes;
    *ctx = NULL;
    ngpt_status st = ngpt_context_arena_size(m, cfg, s, &bytes);
    fuzz_expect_message(st, "ngpt_context_arena_size");
    if (st || bytes > FUZZ_CKPT_MAX_ARENA) return NGPT_OK;
    st = ngpt_context_init(ctx, m, cfg, s, NULL, 0);
    fuzz_expect_message(st, "ngpt_context_init");
    if (st && *ctx) fuzz_fail("a failed ngpt_context_init (%s) made a context", ngpt_status_string(st));
    return st;
}

static void fuzz_ckpt_forward(ngpt_context *ctx, const ngpt_config *cfg, const char *what)
{
    int32_t tokens[4] = {0, 1 % cfg->vocab_size, 2 % cfg->vocab_size, 3 % cfg->vocab_size};
    const int32_t seq = cfg->context_len < 4 ? cfg->context_len : 4;
    if (ngpt_context_forward(ctx, tokens, 1, seq, tokens, NULL))
        fuzz_fail("forward on %s: %s", what, ngpt_last_error());
}

/* An inference context on the model's shared weights: a forward, and with
 * its tokenizer generation that stops on bytes. */
static void fuzz_ckpt_shared(ngpt_model *m, const ngpt_config *cfg, const ngpt_tokenizer *tok,
                             size_t size)
{
    const ngpt_shape s = fuzz_ckpt_shape(cfg, NGPT_MODE_INFER);
    ngpt_context *ctx;
    if (fuzz_ckpt_context(&ctx, m, NULL, &s))
        fuzz_fail("an open model's inference context: %s", ngpt_last_error());
    if (!ctx) return;
    const ngpt_tokenizer *attached = NULL;
    if (ngpt_context_tokenizer(ctx, &attached) || attached != tok)
        fuzz_fail("the model's context does not have the model's tokenizer");
    if (!ngpt_model_close(m)) fuzz_fail("the model closed under its context");
    fuzz_ckpt_forward(ctx, cfg, "a model's context");
    if (tok) {
        static const char *const stops[2] = {"e ", "\n\n"};
        int32_t prompt[2] = {0, 1 % cfg->vocab_size};
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.max_tokens = 6, gc.stop = stops, gc.n_stop = 2, gc.stop_at_context_full = true;
        gc.sampler.seed = size;
        if (ngpt_context_generate(ctx, &gc, prompt, 2, NULL, 0, NULL, NULL, NULL))
            fuzz_fail("generation with the model's tokenizer: %s", ngpt_last_error());
    }
    ngpt_context_free(ctx);
}

/* A q8 or q4 copy of the model: made from float32 or the same weights,
 * refused otherwise. */
static void fuzz_ckpt_quantized(const ngpt_model *m, const ngpt_config *cfg, ngpt_weights w)
{
    ngpt_config q = *cfg;
    q.weights = w;
    const ngpt_shape s = fuzz_ckpt_shape(&q, NGPT_MODE_INFER);
    ngpt_context *ctx;
    ngpt_status st = fuzz_ckpt_context(&ctx, m, &q, &s);
    const bool takes = cfg->weights == NGPT_WEIGHTS_F32 || cfg->weights == w;
    if (st && takes) fuzz_fail("a %s copy of the model: %s", w == NGPT_WEIGHTS_Q8 ? "q8" : "q4",
                               ngpt_last_error());
    if (ctx && !takes) fuzz_fail("a q4 copy of a q8 model (or the reverse) was made");
    if (ctx) fuzz_ckpt_forward(ctx, &q, "a quantized copy");
    ngpt_context_free(ctx);
}

/* A training context continues the model's training state: made exactly
 * when that state reads (and the model is float32). */
static void fuzz_ckpt_train(const ngpt_model *m, const ngpt_config *cfg)
{
    ngpt_train_state ts;
    ngpt_status ss = ngpt_model_train_state(m, &ts);
    fuzz_expect_message(ss, "ngpt_model_train_state");
    if (!ss && ts.has_state && ngpt_optim_config_validate(&ts.opt))
        fuzz_fail("a training state whose settings do not validate: %s", ngpt_last_error());
    const ngpt_shape s = fuzz_ckpt_shape(cfg, NGPT_MODE_TRAIN);
    ngpt_context *ctx;
    ngpt_status st = fuzz_ckpt_context(&ctx, m, NULL, &s);
    if (cfg->weights != NGPT_WEIGHTS_F32 && (ctx || (st && st != NGPT_ERR_WRONG_MODE)))
        fuzz_fail("a quantized model's training context: %s", ngpt_status_string(st));
    if (ss && ctx) fuzz_fail("a training context continues a state that does not read (%s)",
                             ngpt_status_string(ss));
    uint64_t steps;
    if (ctx && ngpt_context_step_count(ctx, &steps)) fuzz_fail("step count: %s", ngpt_last_error());
    ngpt_context_free(ctx);
}

static void fuzz_ckpt_check(const unsigned char *b, size_t size, const char *path)
{
    if (path) fuzz_write_file(path, b, size);
    ngpt_model *m = (ngpt_model *)(uintptr_t)1;     /* a failed open must clear it */
    ngpt_status st = path ? ngpt_model_open(&m, path) : ngpt_model_open_mem(&m, b, size);
    fuzz_expect_message(st, path ? "ngpt_model_open" : "ngpt_model_open_mem");
    if (st && m) fuzz_fail("a failed open (%s) gave a model", ngpt_status_string(st));
    if (st) return;
    ngpt_config cfg;
    if (ngpt_model_config(m, &cfg)) fuzz_fail("config: %s", ngpt_last_error());
    if (ngpt_config_validate(&cfg)) fuzz_fail("an open model's config does not validate: %s",
                                              ngpt_last_error());
    const ngpt_tokenizer *tok = NULL;
    ngpt_tokenizer_info ti;
    if (ngpt_model_tokenizer(m, &tok)) fuzz_fail("tokenizer: %s", ngpt_last_error());
    if (tok && (ngpt_tokenizer_describe(tok, &ti) || ti.n_tokens != cfg.vocab_size))
        fuzz_fail("the model's tokenizer does not have its V=%d tokens", (int)cfg.vocab_size);

    fuzz_ckpt_shared(m, &cfg, tok, size);
    fuzz_ckpt_quantized(m, &cfg, NGPT_WEIGHTS_Q8);
    fuzz_ckpt_quantized(m, &cfg, NGPT_WEIGHTS_Q4);
    fuzz_ckpt_train(m, &cfg);
    if (ngpt_model_close(m)) fuzz_fail("close: %s", ngpt_last_error());
}

/* The input as it is, then resealed (size field and checksum fixed). */
static void fuzz_ckpt_run(const uint8_t *data, size_t size, const char *path)
{
    unsigned char *b = fuzz_copy(data, size);
    fuzz_ckpt_check(b, size, path);
    if (size >= 136) {
        fuzz_reseal(b, size);
        fuzz_ckpt_check(b, size, path);
    }
    free(b);
}

#endif
