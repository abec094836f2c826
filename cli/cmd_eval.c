/* cmd_eval.c — `ngpt eval`: mean loss and bits per byte of a model on the
 * held-out tail of a data file, over fixed seeded windows. */
#include <stdio.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt eval --model FILE --data FILE [--data FILE ...] [--batches N]\n"
    "                 [--batch B] [--seq T] [--holdout F] [--seed S]\n\n"
    "Mean cross-entropy (nats per byte) and bits per byte over N batches of B random\n"
    "windows from the held-out tail of the data (the same split `ngpt train` holds out).\n\n"
    "  --batches N   batches (8)      --batch B   windows per batch (8)\n"
    "  --seq T       window length (the model's T)\n"
    "  --holdout F   held-out fraction at the end of the data (0.1)\n"
    "  --seed S      window seed (42)\n";

enum { MAX_DATA = 64 };

int cli_cmd_eval(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *model = NULL, *data[MAX_DATA], *v;
    int n_data = 0;
    int32_t batches = 8, batch = 8, seq = 0;
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
    ngpt_data *d;
    if ((st = ngpt_data_open(&d, data, n_data, holdout, seq))) return cli_library_failed(a.cmd);
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = batch, shape.seq = seq;
    ngpt_context *ctx;
    if ((st = cli_open_model(model, &shape, &ctx))) {
        ngpt_data_free(d);
        return cli_library_failed(a.cmd);
    }
    float loss = 0;
    st = ngpt_model_evaluate(ctx, d, seed, batches, batch, seq, &loss);
    size_t tr = 0, ev = 0;
    ngpt_data_sizes(d, &tr, &ev);
    ngpt_context_free(ctx);
    ngpt_data_free(d);
    if (st) return cli_library_failed(a.cmd);
    printf("loss %.4f nats/byte, %.4f bits/byte (%d x %d windows of %d bytes from the last %zu bytes)\n",
           (double)loss, (double)loss / 0.69314718055994531, (int)batches, (int)batch, (int)seq, ev);
    return CLI_OK;
}
