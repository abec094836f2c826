/* fuzz_checkpoint.h — the properties both checkpoint targets check, through
 * the memory API (path NULL) or through a file at `path`:
 *  - read_config and load never crash and fail with a message;
 *  - an accepted config validates, and read_config and load agree;
 *  - a failed load leaves the parameters bit for bit unchanged;
 *  - the same into a tiny context with 8-bit weights, which takes the tiny
 *    model's float32 file (quantizing it) and its 8-bit file alike;
 *  - a valid file for another (small) config loads into a context planned
 *    for it, and a forward over it runs (its values may be anything);
 *  - through a file, ngpt_checkpoint_load_train into a training context either
 *    succeeds with settings that validate or changes nothing;
 *  - the tokenizer a file carries (version 2) reads only from a file whose
 *    config reads, and has the model's V tokens; attached to its model's
 *    context, generation with a stop sequence runs on its token bytes. */
#ifndef NGPT_FUZZ_CHECKPOINT_H
#define NGPT_FUZZ_CHECKPOINT_H

#include <unistd.h>

#include "fuzz.h"

#define FUZZ_CKPT_MAX_ARENA (4u << 20)

static ngpt_context *fuzz_ckpt_tiny_ctx(void)
{
    static ngpt_context *ctx;
    if (!ctx) {
        ngpt_config cfg = fuzz_tiny_config();
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        if (ngpt_context_init(&ctx, &cfg, &s, NULL, 0) || ngpt_params_init(ctx, 1))
            fuzz_fail("tiny context: %s", ngpt_last_error());
    }
    return ctx;
}

/* The tiny config with 8-bit (weights=q8) or 4-bit (q4) weights. */
static ngpt_context *fuzz_ckpt_tiny_quantized_ctx(ngpt_weights w)
{
    static ngpt_context *ctx[3];
    if (!ctx[w]) {
        ngpt_config cfg = fuzz_tiny_config();
        cfg.weights = w;
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        if (ngpt_context_init(&ctx[w], &cfg, &s, NULL, 0) || ngpt_params_init(ctx[w], 1))
            fuzz_fail("tiny %s context: %s", w == NGPT_WEIGHTS_Q8 ? "q8" : "q4", ngpt_last_error());
    }
    return ctx[w];
}


static ngpt_status fuzz_ckpt_read_config(const unsigned char *b, size_t size, const char *path,
                                         ngpt_config *cfg)
{
    return path ? ngpt_checkpoint_config(path, cfg) : ngpt_checkpoint_config_mem(b, size, cfg);
}

static ngpt_status fuzz_ckpt_load(ngpt_context *ctx, const unsigned char *b, size_t size,
                                  const char *path)
{
    return path ? ngpt_checkpoint_load(ctx, path) : ngpt_checkpoint_load_mem(ctx, b, size);
}

/* A quantized tiny context takes the tiny model as float32 or in its own
 * weights; a failed load changes nothing; a loaded one runs a forward. */
static void fuzz_ckpt_quantized(ngpt_weights w, ngpt_status st, ngpt_status ls,
                                const unsigned char *b, size_t size, const char *path)
{
    ngpt_context *q = fuzz_ckpt_tiny_quantized_ctx(w);
    const uint64_t before = fuzz_params_hash(q);
    ngpt_status qs = fuzz_ckpt_load(q, b, size, path);
    fuzz_expect_message(qs, path ? "ngpt_checkpoint_load" : "ngpt_checkpoint_load_mem");
    if (qs && fuzz_params_hash(q) != before)
        fuzz_fail("a failed quantized load (%s) changed the parameters", ngpt_status_string(qs));
    if (!st && !qs) {       /* it ran: a forward over it does too */
        int32_t tokens[4] = {1, 2, 3, 4};
        if (ngpt_model_forward(q, tokens, 1, 4, NULL, NULL))
            fuzz_fail("forward on a loaded quantized model: %s", ngpt_last_error());
    }
    if (st && !qs) fuzz_fail("a quantized load accepted a file that read_config rejected");
    if (!qs) ngpt_params_init(q, 1);
    if (!ls && qs) fuzz_fail("the tiny model loads, but not into the quantized context: %s",
                             ngpt_last_error());
}

static void fuzz_write_file(const char *path, const unsigned char *b, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, size, f) != size || fclose(f) != 0) fuzz_fail("cannot write %s", path);
}

/* Loads a valid checkpoint of another small config into its own context
 * (with tok, the tokenizer it carries, or NULL). */
static void fuzz_ckpt_other_config(const ngpt_config *cfg, const unsigned char *b, size_t size,
                                   const char *path, const ngpt_tokenizer *tok)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = cfg->context_len < 4 ? cfg->context_len : 4;
    size_t bytes;
    ngpt_status st = ngpt_arena_size(cfg, &s, &bytes);
    fuzz_expect_message(st, "ngpt_arena_size");
    if (st || bytes > FUZZ_CKPT_MAX_ARENA) return;
    ngpt_context *ctx;
    if ((st = ngpt_context_init(&ctx, cfg, &s, NULL, 0))) fuzz_fail("init for a valid checkpoint: %s", ngpt_last_error());
    if ((st = fuzz_ckpt_load(ctx, b, size, path)))
        fuzz_fail("read_config accepted the file but load into its own config failed: %s",
                  ngpt_last_error());
    int32_t tokens[4] = {0, 1 % cfg->vocab_size, 2 % cfg->vocab_size, 3 % cfg->vocab_size};
    if ((st = ngpt_model_forward(ctx, tokens, 1, s.seq, tokens, NULL)))
        fuzz_fail("forward on a loaded model: %s", ngpt_last_error());
    if (tok) {      /* its tokenizer attached: the file loads again, and generation stops on bytes */
        if ((st = ngpt_context_tokenizer_set(ctx, tok)) || (st = fuzz_ckpt_load(ctx, b, size, path)))
            fuzz_fail("the checkpoint's own tokenizer: %s", ngpt_last_error());
        static const char *const stops[2] = {"e ", "\n\n"};
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.max_tokens = 6, gc.stop = stops, gc.n_stop = 2, gc.stop_at_context_full = true;
        gc.sampler.seed = size;
        if (ngpt_model_generate(ctx, &gc, tokens, 2, NULL, 0, NULL, NULL, NULL))
            fuzz_fail("generation with the checkpoint's tokenizer: %s", ngpt_last_error());
    }
    ngpt_context_free(ctx);
}

/* A file (path) whose config reads: ngpt_checkpoint_load_train into a training context
 * planned for that config (if small): a success restores a finite step
 * count and settings that validate; a failure changes nothing. */
static void fuzz_ckpt_train(const ngpt_config *cfg, const char *path)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = 1, s.seq = cfg->context_len < 4 ? cfg->context_len : 4;
    size_t bytes;
    if (ngpt_arena_size(cfg, &s, &bytes) || bytes > FUZZ_CKPT_MAX_ARENA) return;
    ngpt_context *ctx;
    if (ngpt_context_init(&ctx, cfg, &s, NULL, 0)) fuzz_fail("train init: %s", ngpt_last_error());
    ngpt_train_state ts;
    uint64_t before = fuzz_params_hash(ctx), steps = 0;
    ngpt_status st = ngpt_checkpoint_load_train(ctx, path, &ts);
    fuzz_expect_message(st, "ngpt_checkpoint_load_train");
    ngpt_optim_step_count(ctx, &steps);
    if (st && (fuzz_params_hash(ctx) != before || steps != 0))
        fuzz_fail("a failed load_train (%s) changed the context", ngpt_status_string(st));
    if (!st && ts.has_state && ngpt_optim_config_validate(&ts.opt))
        fuzz_fail("load_train returned settings that do not validate: %s", ngpt_last_error());
    ngpt_context_free(ctx);
}

static void fuzz_ckpt_check(const unsigned char *b, size_t size, const char *path)
{
    if (path) fuzz_write_file(path, b, size);
    ngpt_config cfg;
    ngpt_status st = fuzz_ckpt_read_config(b, size, path, &cfg);
    fuzz_expect_message(st, path ? "ngpt_checkpoint_config" : "ngpt_checkpoint_config_mem");
    if (!st && ngpt_config_validate(&cfg))
        fuzz_fail("read_config accepted an invalid config: %s", ngpt_last_error());

    ngpt_tokenizer *tok = NULL;
    ngpt_status ts = path ? ngpt_checkpoint_tokenizer(path, &tok)
                          : ngpt_checkpoint_tokenizer_mem(b, size, &tok);
    fuzz_expect_message(ts, path ? "ngpt_checkpoint_tokenizer" : "ngpt_checkpoint_tokenizer_mem");
    if (st && !ts) fuzz_fail("a tokenizer read from a file that read_config rejected");
    ngpt_tokenizer_info ti;
    if (tok && (ngpt_tokenizer_describe(tok, &ti) || ti.n_tokens != cfg.vocab_size))
        fuzz_fail("the checkpoint's tokenizer does not have its V=%d tokens", (int)cfg.vocab_size);

    ngpt_context *ctx = fuzz_ckpt_tiny_ctx();
    uint64_t before = fuzz_params_hash(ctx);
    ngpt_status ls = fuzz_ckpt_load(ctx, b, size, path);
    fuzz_expect_message(ls, path ? "ngpt_checkpoint_load" : "ngpt_checkpoint_load_mem");
    if (ls && fuzz_params_hash(ctx) != before) fuzz_fail("a failed load (%s) changed the parameters",
                                                         ngpt_status_string(ls));
    if (st && !ls) fuzz_fail("load accepted a file that read_config rejected (%s)", ngpt_status_string(st));
    if (!st && ls && ls != NGPT_ERR_CONFIG_MISMATCH)
        fuzz_fail("read_config accepted the file but load said %s: %s", ngpt_status_string(ls),
                  ngpt_last_error());
    if (!ls) ngpt_params_init(ctx, 1);   /* the next input starts from the same model */

    /* 8-bit and 4-bit tiny contexts take the tiny model in either form */
    fuzz_ckpt_quantized(NGPT_WEIGHTS_Q8, st, ls, b, size, path);
    fuzz_ckpt_quantized(NGPT_WEIGHTS_Q4, st, ls, b, size, path);

    if (ls == NGPT_ERR_CONFIG_MISMATCH) fuzz_ckpt_other_config(&cfg, b, size, path, tok);
    if (!st && path) fuzz_ckpt_train(&cfg, path);
    ngpt_tokenizer_free(tok);
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
