/* cmd_eval.c — `ngpt eval`: mean loss, bits per byte and perplexity of a
 * model on the held-out tail of a data file, over fixed seeded windows (of
 * the model's tokens when it carries a tokenizer); with --compare, how far
 * another model of the same shape (a quantized one's float32 original) is
 * from it there; with --kv, the windows fed through a KV cache of that type
 * (as generation feeds it), and with --kld how far its next-token
 * distributions are from a float32 cache's (llama.cpp's --kl-divergence
 * statistics). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lora.h"

static const char *const HELP =
    "usage: ngpt eval --model FILE --data FILE [--data FILE ...] [--batches N]\n"
    "                 [--batch B] [--seq T] [--holdout F] [--seed S] [--compare FILE]\n"
    "                 [--adapter FILE[:S] ...] [--kv f32|q8] [--kv-k T] [--kv-v T]\n"
    "                 [--kld] [--threads N]\n\n"
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
    "  --kv f32|q8, --kv-k T, --kv-v T  feed each window through a KV cache that\n"
    "                stores keys and values so (generate's --kv): attention reads\n"
    "                back the cache's rows, as decoding does (without --kv the\n"
    "                windows run one full forward: float32 keys and values)\n"
    "  --kld         with --kv: also feed the windows through a float32 cache and\n"
    "                report, at every position, how far the --kv cache's next-token\n"
    "                distribution is from it (llama.cpp's --kl-divergence figures):\n"
    "                the mean KL divergence KL(p_f32 || p_kv) with its percentiles,\n"
    "                delta p (the change of the correct token's probability: mean\n"
    "                and RMS), the rate of the same most likely token, and both\n"
    "                caches' bits per byte (docs/GENERATION.md, \"The 8-bit KV cache\")\n"
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

/* ---- --kv and --kld: the windows through a KV cache */

/* Sums over the scored positions, llama.cpp's (perplexity.cpp's
 * kl_divergence_result): the loss of each cache, KL(p_base || p), delta p
 * = p(correct) - p_base(correct) and its powers, the same-top count; and
 * each position's KL divergence for the percentiles. */
typedef struct kv_stats {
    double nats, nats_base;
    double kld, kld2, dp, dp2, dp4, dp_max;
    size_t same_top, count;
    float *klds;
} kv_stats;

/* The window batch fed through an emptied cache in one prefill: every
 * position's logits, each from keys and values read back from the cache
 * (the bits of prefilling in passes or decoding one token at a time:
 * tests/test_kv8.c). */
static ngpt_status cached_logits(ngpt_context *ctx, const int32_t *tok, int32_t batch, int32_t seq,
                                 const float **logits)
{
    ngpt_status st = ngpt_context_cache_clear(ctx, -1);
    if (!st) st = ngpt_context_cache_prefill(ctx, tok, batch, seq);
    return st ? st : ngpt_context_logits(ctx, logits);
}

/* The log-probabilities of a logits row, in double; its most likely token. */
static int32_t log_probs(const float *row, int32_t V, double *lp)
{
    int32_t top = 0;
    for (int32_t v = 1; v < V; v++)
        if (row[v] > row[top]) top = v;
    double sum = 0;
    for (int32_t v = 0; v < V; v++) sum += exp((double)row[v] - (double)row[top]);
    const double lse = (double)row[top] + log(sum);
    for (int32_t v = 0; v < V; v++) lp[v] = (double)row[v] - lse;
    return top;
}

/* One position: lp (the --kv cache's) against lb (the float32 cache's). */
static void kv_stats_add(kv_stats *s, const double *lp, int32_t top, const double *lb,
                         int32_t top_base, int32_t V, int32_t target)
{
    double kld = 0;
    for (int32_t v = 0; v < V; v++) kld += exp(lb[v]) * (lb[v] - lp[v]);
    const double dp = exp(lp[target]) - exp(lb[target]);
    s->nats_base -= lb[target];
    s->kld += kld, s->kld2 += kld * kld;
    s->dp += dp, s->dp2 += dp * dp, s->dp4 += dp * dp * dp * dp;
    if (fabs(dp) > s->dp_max) s->dp_max = fabs(dp);
    s->same_top += top == top_base;
    s->klds[s->count] = (float)kld;
}

/* The loss of ctx's cache over the windows (and with base, a float32
 * cache's context, the comparison) into s; s->klds holds the positions'.
 * CLI_OK, or CLI_FAILED with the message printed. */
static int kv_evaluate(const char *cmd, ngpt_context *ctx, ngpt_context *base, const ngpt_data *d,
                       uint64_t seed, int32_t batches, int32_t batch, int32_t seq, int32_t V,
                       kv_stats *s)
{
    const size_t rows = (size_t)batch * (size_t)seq;
    int32_t *tok = malloc(2 * rows * sizeof *tok), bad = -1;
    double *lp = malloc(2 * (size_t)V * sizeof *lp), *lb = lp + V;
    if (!tok || !lp) {
        free(tok), free(lp);
        return cli_error(cmd, CLI_FAILED, "out of memory");
    }
    ngpt_status st = NGPT_OK;
    for (int32_t i = 0; !st && bad < 0 && i < batches; i++) {
        const float *la, *lz = NULL;
        st = ngpt_data_batch(d, NGPT_SPLIT_EVAL, seed, (uint64_t)i, batch, seq, tok, tok + rows);
        if (!st) st = cached_logits(ctx, tok, batch, seq, &la);
        if (!st && base) st = cached_logits(base, tok, batch, seq, &lz);
        for (size_t r = 0; !st && bad < 0 && r < rows; r++) {
            const int32_t target = tok[rows + r];
            if (target < 0 || target >= V) {   /* the prefill checked only the inputs */
                bad = target;
                break;
            }
            const int32_t top = log_probs(la + r * (size_t)V, V, lp);
            s->nats -= lp[target];
            if (base) kv_stats_add(s, lp, top, lb, log_probs(lz + r * (size_t)V, V, lb), V, target);
            s->count++;
        }
    }
    free(tok), free(lp);
    if (st) return cli_library_failed(cmd);
    return bad < 0 ? CLI_OK : cli_error(cmd, CLI_FAILED, "the held-out text holds the token %d, "
                                        "which is not one of the model's V=%d", (int)bad, (int)V);
}

/* llama.cpp's mean and its standard error from a sum and a sum of squares. */
static void mean_err(double sum, double sum2, size_t n, double *mean, double *err)
{
    *mean = sum / (double)n;
    const double var = sum2 / (double)n - *mean * *mean;
    *err = var > 0 && n > 10 ? sqrt(var / (double)(n - 1)) : 0;
}

static int by_value(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* llama.cpp's percentile: linear between the sorted values. */
static double percentile(const float *sorted, size_t n, double fraction)
{
    const double p = fraction * (double)(n - 1);
    const size_t i = (size_t)p;
    return i + 1 < n ? (1 - (p - (double)i)) * sorted[i] + (p - (double)i) * sorted[i + 1]
                     : sorted[n - 1];
}

static const char *kv_name(int16_t t) { return t == NGPT_KV_Q8 ? "q8" : "f32"; }

/* --kld's lines: the figures of llama.cpp's --kl-divergence report. */
static void print_kld(kv_stats *s, double bytes, const char *unit)
{
    const double n = (double)s->count, ln2 = 0.69314718055994531;
    double kld, kld_err, dp, dp_err, ms, ms_err;
    mean_err(s->kld, s->kld2, s->count, &kld, &kld_err);
    mean_err(s->dp, s->dp2, s->count, &dp, &dp_err);
    mean_err(s->dp2, s->dp4, s->count, &ms, &ms_err);
    const double rms = sqrt(ms), rms_err = rms > 0 ? 0.5 / rms * ms_err : 0;
    const double top = (double)s->same_top / n;
    const double top_err = s->count > 1 ? sqrt(top * (1 - top) / (n - 1)) : 0;
    qsort(s->klds, s->count, sizeof *s->klds, by_value);
    printf("against a float32 KV cache at the same %zu positions: %.4f bits/byte (%+.4f%% for "
           "this cache)\n", s->count, s->nats_base / (bytes * ln2),
           100.0 * (s->nats - s->nats_base) / s->nats_base);
    printf("KL divergence: mean %.3e +- %.1e, median %.3e, 99%% %.3e, 99.9%% %.3e, max %.3e\n",
           kld, kld_err, percentile(s->klds, s->count, 0.5), percentile(s->klds, s->count, 0.99),
           percentile(s->klds, s->count, 0.999), (double)s->klds[s->count - 1]);
    printf("delta p of the correct %s: mean %+.4f%% +- %.4f%%, RMS %.4f%% +- %.4f%%, largest "
           "%.4f%%\n", unit, 100 * dp, 100 * dp_err, 100 * rms, 100 * rms_err, 100 * s->dp_max);
    printf("same most likely next %s: %.3f%% +- %.3f%%\n", unit, 100 * top, 100 * top_err);
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
    int16_t kv_k = NGPT_KV_F32, kv_v = NGPT_KV_F32;
    bool through_cache = false, kld = false;
    while (cli_next(&a)) {
        bool ok = true;
        int r;
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if ((r = cli_adapter_option(&a, &ads)) != 0) {
            ok = r > 0;
        } else if ((r = cli_kv_option(&a, &kv_k, &kv_v)) != 0) {
            ok = r > 0, through_cache = true;
        } else if (cli_flag(&a, "--kld")) {
            kld = true;
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
    if (kld && !through_cache)
        return cli_error(a.cmd, CLI_USAGE, "--kld compares the KV cache of --kv, --kv-k or --kv-v "
                         "with a float32 one: give one of them");
    if (through_cache && compare)
        return cli_error(a.cmd, CLI_USAGE, "--compare runs both models without a KV cache: not "
                         "with --kv (--kld compares a cache with a float32 one)");
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
    const ngpt_shape f32_cache = shape;     /* --kld's reference */
    shape.kv_k = kv_k, shape.kv_v = kv_v;
    ngpt_context *ctx = NULL, *base = NULL;
    const ngpt_tokenizer *tok = NULL;
    const double positions = (double)batches * (double)batch * (double)seq;
    kv_stats ks = {0};
    float loss = 0;
    uint64_t bytes = 0;
    int rc = CLI_OK;
    /* one float per position (a size_t may be 32 bits) */
    if (kld && (positions > (double)(SIZE_MAX / sizeof *ks.klds) ||
                !(ks.klds = malloc((size_t)positions * sizeof *ks.klds)))) {
        ngpt_model_close(m);
        cli_adapters_close(&ads);
        return cli_error(a.cmd, CLI_FAILED, "out of memory");
    }
    if (!(st = ngpt_data_open(&d, data, n_data, holdout, seq)) &&
        !(st = cli_model_context(m, &shape, &ctx)) &&
        !(rc = cli_adapters_apply(a.cmd, &ads, ctx, model)) &&
        !(st = kld ? cli_model_context(m, &f32_cache, &base) : NGPT_OK) &&
        !(rc = kld ? cli_adapters_apply(a.cmd, &ads, base, model) : CLI_OK) &&
        !(st = ngpt_model_tokenizer(m, &tok)) &&
        !(st = tok ? ngpt_data_tokenize(d, tok, seq) : NGPT_OK) &&
        !(rc = through_cache ? kv_evaluate(a.cmd, ctx, base, d, seed, batches, batch, seq,
                                           cfg.vocab_size, &ks)
                             : CLI_OK) &&
        !(st = through_cache ? NGPT_OK
                             : ngpt_context_evaluate(ctx, d, seed, batches, batch, seq, &loss)))
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
        /* all the windows' */
        const double nats = through_cache ? ks.nats : (double)loss * positions;
        const double mean = through_cache ? nats / positions : (double)loss;
        printf("loss %.4f nats/%s, %.4f bits/byte, perplexity %.3f (%d x %d windows of %d %s "
               "from the last %zu bytes", mean, bpe ? "token" : "byte",
               nats / ((double)bytes * 0.69314718055994531), exp(mean), (int)batches,
               (int)batch, (int)seq, bpe ? "tokens" : "bytes", ev);
        if (bpe) printf(", %zu tokens: %.3f bytes/token", ev_tokens, (double)ev / (double)ev_tokens);
        if (through_cache) printf("; through a KV cache of keys %s, values %s", kv_name(kv_k), kv_name(kv_v));
        printf(")\n");
        if (kld) print_kld(&ks, (double)bytes, bpe ? "token" : "byte");
        if (compare) {
            compare_opts c = {a.cmd, compare, d, &plain, seed, batches, batch, seq, loss,
                              (double)bytes, tok};
            rc = compare_models(&c, ctx);
        }
    }
    ngpt_context_free(base);
    cli_close_model(m, ctx);
    cli_adapters_close(&ads);
    ngpt_data_free(d);
    free(ks.klds);
    return rc;
}
