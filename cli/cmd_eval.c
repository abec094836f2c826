/* cmd_eval.c — `ngpt eval`: mean loss, bits per byte and perplexity of a
 * model on the held-out tail of a data file, over fixed seeded windows (of
 * the model's tokens when it carries a tokenizer). */
#include <math.h>
#include <stdio.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt eval --model FILE --data FILE [--data FILE ...] [--batches N]\n"
    "                 [--batch B] [--seq T] [--holdout F] [--seed S] [--threads N]\n\n"
    "Mean cross-entropy (nats per token), bits per byte and perplexity (per token)\n"
    "over N batches of B random windows from the held-out tail of the data (the same\n"
    "split `ngpt train` holds out: the last bytes, encoded with the model's tokenizer\n"
    "if it has one). Bits per byte = the windows' nats / (the bytes their target\n"
    "tokens stand for x ln 2): the same scale for a byte model and a BPE model.\n\n"
    "  --batches N   batches (8)      --batch B   windows per batch (8)\n"
    "  --seq T       window length (the model's T)\n"
    "  --holdout F   held-out fraction at the end of the data (0.1)\n"
    "  --seed S      window seed (42)\n"
    CLI_THREADS_HELP;

enum { MAX_DATA = 64 };

int cli_cmd_eval(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *model = NULL, *data[MAX_DATA], *v;
    int n_data = 0;
    int32_t batches = 8, batch = 8, seq = 0, threads = 0;
    float holdout = 0.1f;
    uint64_t seed = 42;
    while (cli_next(&a)) {
        bool ok = true;
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_opt(&a, "--model", &v)) {
            model = v;
        } else if (cli_opt(&a, "--data", &v)) {
            if (n_data == MAX_DATA) return cli_error(a.cmd, CLI_USAGE, "at most %d --data files", MAX_DATA);
            if (v) data[n_data++] = v;
        } else if (cli_opt(&a, "--batches", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--batches", v, 1, 1 << 20, &batches);
        } else if (cli_opt(&a, "--batch", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--batch", v, 1, 1 << 16, &batch);
        } else if (cli_opt(&a, "--seq", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--seq", v, 1, 1 << 20, &seq);
        } else if (cli_opt(&a, "--holdout", &v)) {
            ok = !v || cli_parse_f32(a.cmd, "--holdout", v, 0.001f, 0.99f, &holdout);
        } else if (cli_opt(&a, "--seed", &v)) {
            ok = !v || cli_parse_u64(a.cmd, "--seed", v, &seed);
        } else if (cli_opt(&a, "--threads", &v)) {
            ok = !v || cli_parse_threads(a.cmd, v, &threads);
        } else {
            return cli_unknown(&a);
        }
        if (!ok) return CLI_USAGE;
    }
    if (a.failed) return CLI_USAGE;
    if (!model || !n_data)
        return cli_error(a.cmd, CLI_USAGE, "--model FILE and --data FILE are required (see ngpt eval --help)");
    ngpt_config cfg;
    ngpt_status st = ngpt_checkpoint_config(model, &cfg);
    if (st) return cli_library_failed(a.cmd);
    if (seq == 0) seq = cfg.context_len;
    if (seq > cfg.context_len)
        return cli_error(a.cmd, CLI_USAGE, "--seq %d is longer than the model's context T=%d",
                         (int)seq, (int)cfg.context_len);
    ngpt_data *d = NULL;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = batch, shape.seq = seq, shape.threads = threads;
    ngpt_context *ctx = NULL;
    ngpt_tokenizer *tok = NULL;
    float loss = 0;
    uint64_t bytes = 0;
    if (!(st = ngpt_data_open(&d, data, n_data, holdout, seq)) &&
        !(st = cli_open_model(model, &shape, &ctx, &tok)) &&
        !(st = tok ? ngpt_data_tokenize(d, tok, seq) : NGPT_OK) &&
        !(st = ngpt_model_evaluate(ctx, d, seed, batches, batch, seq, &loss)))
        for (int32_t i = 0; !st && i < batches; i++) {  /* the bytes of the same windows */
            uint64_t b;
            st = ngpt_data_batch_bytes(d, NGPT_SPLIT_EVAL, seed, (uint64_t)i, batch, seq, &b);
            bytes += b;
        }
    size_t tr = 0, ev = 0, ev_tokens = 0;
    if (d) ngpt_data_sizes(d, &tr, &ev), ngpt_data_token_counts(d, &tr, &ev_tokens);
    const bool bpe = tok != NULL;
    ngpt_context_free(ctx);
    ngpt_tokenizer_free(tok);
    ngpt_data_free(d);
    if (st) return cli_library_failed(a.cmd);
    const double nats = (double)loss * batches * batch * seq;     /* all the windows' */
    printf("loss %.4f nats/%s, %.4f bits/byte, perplexity %.3f (%d x %d windows of %d %s from "
           "the last %zu bytes", (double)loss, bpe ? "token" : "byte",
           nats / ((double)bytes * 0.69314718055994531), exp((double)loss), (int)batches,
           (int)batch, (int)seq, bpe ? "tokens" : "bytes", ev);
    if (bpe) printf(", %zu tokens: %.3f bytes/token", ev_tokens, (double)ev / (double)ev_tokens);
    printf(")\n");
    return CLI_OK;
}
