/* cmd_eval.c — `ngpt eval`: mean loss, bits per byte and perplexity of a
 * model on the held-out tail of a data file, over fixed seeded windows (of
 * the model's tokens when it carries a tokenizer); with --compare, how far
 * another model of the same shape (a quantized one's float32 original) is
 * from it there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lora.h"

static const char *const HELP =
    "usage: ngpt eval --model FILE --data FILE [--data FILE ...] [--batches N]\n"
    "                 [--batch B] [--seq T] [--holdout F] [--seed S] [--compare FILE]\n"
    "                 [--adapter FILE[:S] ...] [--threads N]\n\n"
    "Mean cross-entropy (nats per token), bits per byte and perplexity (per token)\n"
    "over N batches of B random windows from the held-out tail of the data (the same\n"
    "split `ngpt train` holds out: the last bytes, encoded with the model's tokenizer\n"
    "if it has one). Bits per byte = the windows' nats / (the bytes their target\n"
    "tokens stand for x ln 2): the same scale for a byte model and a BPE model.\n\n"
    "  --compare FILE  also evaluate FILE, a model of the same V and T and the same\n"
    "                tokenizer (e.g. the float32 original of a model from ngpt\n"
    "                quantize), on the same windows: its bits per byte, the largest\n"
    "                difference between the two models' logits there, how often\n"
    "                their most likely next token is the same, and how many of 256\n"
    "                tokens they generate alike (greedy, after the held-out text's\n"
    "                first 64 tokens); FILE runs without --adapter (so --compare\n"
    "                with the model itself shows what the adapters change)\n"
    "  --batches N   batches (8)      --batch B   windows per batch (8)\n"
    "  --seq T       window length (the model's T)\n"
    "  --holdout F   held-out fraction at the end of the data (0.1)\n"
    "  --seed S      window seed (42)\n"
    CLI_ADAPTER_HELP
    CLI_THREADS_HELP;

enum { MAX_DATA = 64, GREEDY_PROMPT = 64, GREEDY_BYTES = 256 };

typedef struct compare_opts {
    const char *cmd, *path;
    const ngpt_data *data;
    const ngpt_shape *shape;
    uint64_t seed;
    int32_t batches, batch, seq;
    float loss;             /* the first model's */
    double bytes;           /* the bytes its windows' target tokens stand for */
    const ngpt_tokenizer *tok;  /* the first model's, or NULL: tokens are bytes */
} compare_opts;

/* The other model's tokenizer is the first's (both none, or equal sums). */
static bool same_tokenizer(const ngpt_tokenizer *a, const ngpt_tokenizer *b)
{
    ngpt_tokenizer_info ia, ib;
    if (!a || !b) return !a && !b;
    return !ngpt_tokenizer_describe(a, &ia) && !ngpt_tokenizer_describe(b, &ib) &&
           ia.checksum == ib.checksum;
}

/* Greedy bytes after prompt into out; how many were made. */
static int32_t greedy(ngpt_context *ctx, const int32_t *prompt, int32_t n, int32_t *out)
{
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler.temperature = 0.0f;
    gc.max_tokens = GREEDY_BYTES;
    ngpt_generate_result r = {0};
    return ngpt_context_generate(ctx, &gc, prompt, n, out, GREEDY_BYTES, NULL, NULL, &r) ? -1
                                                                                      : r.n_tokens;
}

/* --compare: the other model on the same windows, its logits against the
 * first's, and their greedy text from the held-out text's start. */
static int compare_models(const compare_opts *o, ngpt_context *first)
{
    ngpt_config a, b;
    ngpt_model *other_m = NULL;
    ngpt_status st = ngpt_context_config(first, &a);
    if (!st) st = ngpt_model_open(&other_m, o->path);   /* its one read */
    if (!st) st = ngpt_model_config(other_m, &b);
    if (st) {
        ngpt_model_close(other_m);
        return cli_library_failed(o->cmd);
    }
    if (a.vocab_size != b.vocab_size || a.context_len != b.context_len) {
        ngpt_model_close(other_m);
        return cli_error(o->cmd, CLI_USAGE, "--compare %s: its V=%d T=%d differ from the model's "
                         "V=%d T=%d", o->path, (int)b.vocab_size, (int)b.context_len,
                         (int)a.vocab_size, (int)a.context_len);
    }
    ngpt_context *other;
    const ngpt_tokenizer *other_tok = NULL;
    if ((st = cli_model_context(other_m, o->shape, &other)) ||
        (st = ngpt_model_tokenizer(other_m, &other_tok))) {
        cli_close_model(other_m, NULL);
        return cli_library_failed(o->cmd);
    }
    if (!same_tokenizer(o->tok, other_tok)) {
        cli_close_model(other_m, other);
        return cli_error(o->cmd, CLI_USAGE, "--compare %s: its tokenizer is not the model's",
                         o->path);
    }
    const size_t rows = (size_t)o->batch * (size_t)o->seq, logits = rows * (size_t)a.vocab_size;
    int32_t *tok = malloc(2 * rows * sizeof *tok), *ga = malloc(2 * GREEDY_BYTES * sizeof *ga);
    float *keep = malloc(logits * sizeof *keep), loss = 0;
    double worst = 0, largest = 0;
    int32_t na = 0, nb = 0;
    size_t top1 = 0, positions = 0;     /* rows whose largest logit is the same token */
    if (!tok || !ga || !keep) st = NGPT_ERR_NO_MEMORY;
    if (!st) st = ngpt_context_evaluate(other, o->data, o->seed, o->batches, o->batch, o->seq, &loss);
    for (int32_t i = 0; !st && i < o->batches; i++) {
        const float *la, *lb;
        st = ngpt_data_batch(o->data, NGPT_SPLIT_EVAL, o->seed, (uint64_t)i, o->batch, o->seq, tok,
                             tok + rows);
        if (!st) st = ngpt_context_forward(first, tok, o->batch, o->seq, NULL, NULL);
        if (!st) st = ngpt_context_logits(first, &la);
        if (!st) memcpy(keep, la, logits * sizeof *keep);
        if (!st) st = ngpt_context_forward(other, tok, o->batch, o->seq, NULL, NULL);
        if (!st) st = ngpt_context_logits(other, &lb);
        for (size_t j = 0; !st && j < logits; j++) {
            const double diff = fabs((double)keep[j] - (double)lb[j]);
            if (!(diff <= worst)) worst = diff;     /* a NaN shows */
            if (fabs((double)keep[j]) > largest) largest = fabs((double)keep[j]);
        }
        for (size_t r = 0; !st && r < rows; r++, positions++) {
            const float *ra = keep + r * (size_t)a.vocab_size, *rb = lb + r * (size_t)a.vocab_size;
            int32_t ia = 0, ib = 0;
            for (int32_t v = 1; v < a.vocab_size; v++) {
                if (ra[v] > ra[ia]) ia = v;
                if (rb[v] > rb[ib]) ib = v;
            }
            top1 += ia == ib;
        }
    }
    /* the held-out text's first bytes: batch 0's first window from seed 0 */
    if (!st) st = ngpt_data_batch(o->data, NGPT_SPLIT_EVAL, 0, 0, 1, o->seq, tok, tok + rows);
    const int32_t prompt = o->seq < GREEDY_PROMPT ? o->seq : GREEDY_PROMPT;
    if (!st && ((na = greedy(first, tok, prompt, ga)) < 0 ||
                (nb = greedy(other, tok, prompt, ga + GREEDY_BYTES)) < 0))
        st = NGPT_ERR_INTERNAL;
    cli_close_model(other_m, other);
    free(keep);
    if (st) {
        free(tok), free(ga);
        return st == NGPT_ERR_NO_MEMORY ? cli_error(o->cmd, CLI_FAILED, "out of memory")
                                        : cli_library_failed(o->cmd);
    }
    int32_t alike = 0, first_diff = -1;
    for (int32_t i = 0; i < na && i < nb; i++) {
        if (ga[i] == ga[GREEDY_BYTES + i]) alike++;
        else if (first_diff < 0) first_diff = i;
    }
    free(tok), free(ga);
    const char *unit = o->tok ? "token" : "byte";
    const double nats = (double)loss * o->batches * o->batch * o->seq;
    printf("%s: loss %.4f nats/%s, %.4f bits/byte (%+.2f%% against the model's)\n", o->path,
           (double)loss, unit, nats / (o->bytes * 0.69314718055994531),
           100.0 * ((double)loss - (double)o->loss) / (double)o->loss);
    printf("over those windows: largest logit difference %.4g (largest |logit| %.4g); the same "
           "most likely next %s at %.2f%% of %zu positions\n", worst, largest, unit,
           100.0 * (double)top1 / (double)positions, positions);
    if (first_diff < 0)
        printf("greedy after the held-out text's first %d %ss: all %d %ss alike\n",
               (int)prompt, unit, (int)(na < nb ? na : nb), unit);
    else
        printf("greedy after the held-out text's first %d %ss: alike up to %s %d; %d of %d "
               "%ss alike position by position\n", (int)prompt, unit, unit, (int)first_diff,
               (int)alike, (int)(na < nb ? na : nb), unit);
    return CLI_OK;
}

int cli_cmd_eval(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *model = NULL, *data[MAX_DATA], *v;
    int n_data = 0;
    const char *compare = NULL;
    int32_t batches = 8, batch = 8, seq = 0, threads = 0;
    float holdout = 0.1f;
    uint64_t seed = 42;
    cli_adapters ads = {0};
    while (cli_next(&a)) {
        bool ok = true;
        int r;
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if ((r = cli_adapter_option(&a, &ads)) != 0) {
            ok = r > 0;
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
        } else if (cli_opt(&a, "--compare", &v)) {
            compare = v;
        } else {
            return cli_unknown(&a);
        }
        if (!ok) return CLI_USAGE;
    }
    if (a.failed) return CLI_USAGE;
    if (!model || !n_data)
        return cli_error(a.cmd, CLI_USAGE, "--model FILE and --data FILE are required (see ngpt eval --help)");
    ngpt_config cfg;
    ngpt_model *m = NULL;
    ngpt_status st = ngpt_model_open(&m, model);       /* the one read of the file */
    if (!st) st = ngpt_model_config(m, &cfg);
    if (st) {
        ngpt_model_close(m);
        return cli_library_failed(a.cmd);
    }
    if (seq == 0) seq = cfg.context_len;
    if (seq > cfg.context_len) {
        ngpt_model_close(m);
        return cli_error(a.cmd, CLI_USAGE, "--seq %d is longer than the model's context T=%d",
                         (int)seq, (int)cfg.context_len);
    }
    ngpt_data *d = NULL;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = batch, shape.seq = seq, shape.threads = threads;
    shape.logits_rows = NGPT_LOGITS_ALL;    /* a loss reads every position's */
    const ngpt_shape plain = shape;         /* --compare's model: no adapters */
    if (cli_adapters_open(a.cmd, &ads, &shape)) {
        ngpt_model_close(m);
        return CLI_FAILED;
    }
    ngpt_context *ctx = NULL;
    const ngpt_tokenizer *tok = NULL;
    float loss = 0;
    uint64_t bytes = 0;
    int rc = CLI_OK;
    if (!(st = ngpt_data_open(&d, data, n_data, holdout, seq)) &&
        !(st = cli_model_context(m, &shape, &ctx)) &&
        !(rc = cli_adapters_apply(a.cmd, &ads, ctx, model)) && !(st = ngpt_model_tokenizer(m, &tok)) &&
        !(st = tok ? ngpt_data_tokenize(d, tok, seq) : NGPT_OK) &&
        !(st = ngpt_context_evaluate(ctx, d, seed, batches, batch, seq, &loss)))
        for (int32_t i = 0; !st && i < batches; i++) {  /* the bytes of the same windows */
            uint64_t b;
            st = ngpt_data_batch_bytes(d, NGPT_SPLIT_EVAL, seed, (uint64_t)i, batch, seq, &b);
            bytes += b;
        }
    size_t tr = 0, ev = 0, ev_tokens = 0;
    if (d) ngpt_data_sizes(d, &tr, &ev), ngpt_data_token_counts(d, &tr, &ev_tokens);
    const bool bpe = tok != NULL;
    if (st) {
        rc = cli_library_failed(a.cmd);
    } else if (!rc) {
        const double nats = (double)loss * batches * batch * seq;   /* all the windows' */
        printf("loss %.4f nats/%s, %.4f bits/byte, perplexity %.3f (%d x %d windows of %d %s "
               "from the last %zu bytes", (double)loss, bpe ? "token" : "byte",
               nats / ((double)bytes * 0.69314718055994531), exp((double)loss), (int)batches,
               (int)batch, (int)seq, bpe ? "tokens" : "bytes", ev);
        if (bpe) printf(", %zu tokens: %.3f bytes/token", ev_tokens, (double)ev / (double)ev_tokens);
        printf(")\n");
        if (compare) {
            compare_opts c = {a.cmd, compare, d, &plain, seed, batches, batch, seq, loss,
                              (double)bytes, tok};
            rc = compare_models(&c, ctx);
        }
    }
    cli_close_model(m, ctx);
    cli_adapters_close(&ads);
    ngpt_data_free(d);
    return rc;
}
