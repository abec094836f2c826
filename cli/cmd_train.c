/* cmd_train.c — `ngpt train`: byte-level training with AdamW, warmup +
 * cosine, periodic evaluation, atomic checkpoints (latest and best), resume,
 * a progress line on a terminal and Ctrl-C saving before it exits. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#ifndef NGPT_CORPUS_PATH
#define NGPT_CORPUS_PATH "build/corpus.txt"
#endif

static const char *const HELP =
    "usage: ngpt train [--data FILE ...] [--steps N] [--batch B] [--seq T] [--lr LR]\n"
    "                  [--min-lr LR] [--warmup N] [--weight-decay W] [--no-decay-norms]\n"
    "                  [--clip C] [--accum N] [--seed S] [--threads N] [--eval-every N]\n"
    "                  [--eval-batches N] [--holdout F] [--out FILE] [--keep-best FILE]\n"
    "                  [--stop-at N] [--resume FILE] [--log-csv FILE] [--config key=value ...]\n\n"
    "Trains a byte-level model on FILEs (concatenated; the last --holdout fraction is\n"
    "held out for evaluation). Without --data it trains on the corpus the build\n"
    "gathers from the project's own docs and sources (" NGPT_CORPUS_PATH ").\n\n"
    "  --data FILE        training text (repeatable)\n"
    "  --steps N          optimizer steps in total, also the schedule length (1000)\n"
    "  --batch B          windows per micro-batch (32)   --seq T  window length (T)\n"
    "  --lr LR            peak learning rate (3e-4)      --min-lr LR  cosine floor (3e-5)\n"
    "  --warmup N         linear warmup steps (200, at most steps)\n"
    "  --weight-decay W   decoupled AdamW weight decay (0.1)\n"
    "  --no-decay-norms   do not decay biases, LayerNorm and the embedding\n"
    "  --clip C           clip the global gradient norm (1.0; 0 = off)\n"
    "  --accum N          micro-batches per step (1)\n"
    "  --seed S           weights, data windows and dropout (42)\n"
    "  --threads N        accepted and validated; this version runs one thread\n"
    "  --eval-every N     evaluate every N steps (100; 0 = only at the end)\n"
    "  --eval-batches N   batches per evaluation (8)   --holdout F  held-out tail (0.1)\n"
    "  --out FILE         latest checkpoint, with training state (model.ngpt)\n"
    "  --keep-best FILE   also keep the checkpoint with the best eval loss\n"
    "  --stop-at N        stop after step N (before --steps), saving --out as Ctrl-C does\n"
    "  --resume FILE      continue from a checkpoint (bit-identical to not stopping);\n"
    "                     its saved settings apply unless given again here\n"
    "  --log-csv FILE     step,loss,lr,grad_norm,tokens_per_s,eval_loss per step\n"
    "  --config key=value model config for a new model (see ngpt init --help)\n"
    "  --skip-nonfinite   skip a step whose loss or gradient is NaN/Inf (at most 10 in\n"
    "                     a row) instead of stopping\n\n"
    "Ctrl-C saves the latest checkpoint and exits with status 130. A NaN or Inf loss\n"
    "or gradient stops training with a message naming the step and saves the last\n"
    "good state (parameters before that step) to --out, unless the parameters hold\n"
    "NaN/Inf themselves (then --out is left as it was); exit status 1.\n";

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { (void)sig; interrupted = 1; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fmt_eta(double s, char *buf, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

enum { MAX_DATA = 64 };

typedef struct train_opts {
    const char *data[MAX_DATA];
    int n_data;
    int32_t steps, batch, seq, threads, eval_every, eval_batches, stop_at;
    uint64_t seed;
    float holdout;
    ngpt_optim_config opt;
    const char *out, *best, *resume, *log_csv;
    ngpt_config cfg;
    bool cfg_given;
    bool skip_nonfinite;
    /* which were given explicitly (they override a resumed checkpoint's) */
    bool g_batch, g_seq, g_seed, g_steps, g_lr, g_min_lr, g_warmup, g_wd, g_clip, g_accum, g_decay;
    bool g_eval_every, g_eval_batches, g_holdout;
} train_opts;

static int parse(int argc, char **argv, train_opts *o)
{
    cli_args a = cli_args_init(argc, argv);
    const char *v;
    const char *c = a.cmd;
    int32_t i32;
    while (cli_next(&a)) {
        bool ok = true;
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return -1;
        } else if (cli_flag(&a, "--skip-nonfinite")) {
            o->skip_nonfinite = true;
        } else if (cli_flag(&a, "--no-decay-norms")) {
            o->opt.decay_all = false, o->g_decay = true;
        } else if (cli_opt(&a, "--data", &v)) {
            if (o->n_data == MAX_DATA) return cli_error(c, CLI_USAGE, "at most %d --data files", MAX_DATA);
            if (v) o->data[o->n_data++] = v;
        } else if (cli_opt(&a, "--steps", &v)) {
            ok = !v || cli_parse_i32(c, "--steps", v, 1, INT32_MAX, &o->steps), o->g_steps = true;
        } else if (cli_opt(&a, "--batch", &v)) {
            ok = !v || cli_parse_i32(c, "--batch", v, 1, 1 << 16, &o->batch), o->g_batch = true;
        } else if (cli_opt(&a, "--seq", &v)) {
            ok = !v || cli_parse_i32(c, "--seq", v, 1, 1 << 20, &o->seq), o->g_seq = true;
        } else if (cli_opt(&a, "--lr", &v)) {
            ok = !v || cli_parse_f32(c, "--lr", v, 0.0f, 10.0f, &o->opt.lr), o->g_lr = true;
        } else if (cli_opt(&a, "--min-lr", &v)) {
            ok = !v || cli_parse_f32(c, "--min-lr", v, 0.0f, 10.0f, &o->opt.min_lr), o->g_min_lr = true;
        } else if (cli_opt(&a, "--warmup", &v)) {
            ok = !v || cli_parse_i32(c, "--warmup", v, 0, INT32_MAX, &i32);
            o->opt.warmup = i32, o->g_warmup = true;
        } else if (cli_opt(&a, "--weight-decay", &v)) {
            ok = !v || cli_parse_f32(c, "--weight-decay", v, 0.0f, 10.0f, &o->opt.weight_decay), o->g_wd = true;
        } else if (cli_opt(&a, "--clip", &v)) {
            ok = !v || cli_parse_f32(c, "--clip", v, 0.0f, 1e6f, &o->opt.clip), o->g_clip = true;
        } else if (cli_opt(&a, "--accum", &v)) {
            ok = !v || cli_parse_i32(c, "--accum", v, 1, 1 << 20, &o->opt.accum), o->g_accum = true;
        } else if (cli_opt(&a, "--seed", &v)) {
            ok = !v || cli_parse_u64(c, "--seed", v, &o->seed), o->g_seed = true;
        } else if (cli_opt(&a, "--threads", &v)) {
            ok = !v || cli_parse_i32(c, "--threads", v, 1, 1024, &o->threads);
        } else if (cli_opt(&a, "--eval-every", &v)) {
            ok = !v || cli_parse_i32(c, "--eval-every", v, 0, INT32_MAX, &o->eval_every), o->g_eval_every = true;
        } else if (cli_opt(&a, "--eval-batches", &v)) {
            ok = !v || cli_parse_i32(c, "--eval-batches", v, 1, 1 << 20, &o->eval_batches), o->g_eval_batches = true;
        } else if (cli_opt(&a, "--holdout", &v)) {
            ok = !v || cli_parse_f32(c, "--holdout", v, 0.0f, 0.99f, &o->holdout), o->g_holdout = true;
        } else if (cli_opt(&a, "--stop-at", &v)) {
            ok = !v || cli_parse_i32(c, "--stop-at", v, 1, INT32_MAX, &o->stop_at);
        } else if (cli_opt(&a, "--out", &v)) {
            o->out = v;
        } else if (cli_opt(&a, "--keep-best", &v)) {
            o->best = v;
        } else if (cli_opt(&a, "--resume", &v)) {
            o->resume = v;
        } else if (cli_opt(&a, "--log-csv", &v)) {
            o->log_csv = v;
        } else if (cli_opt(&a, "--config", &v)) {
            if (v && ngpt_config_set(&o->cfg, v)) return cli_error(c, CLI_USAGE, "%s", cli_library_error());
            o->cfg_given = true;
        } else {
            return cli_unknown(&a);
        }
        if (!ok) return CLI_USAGE;
    }
    if (a.failed) return CLI_USAGE;
    if (o->resume && o->cfg_given)
        return cli_error(c, CLI_USAGE, "--config cannot change a resumed model (its config is in %s)",
                         o->resume);
    return CLI_OK;
}

/* Settings saved in a resumed checkpoint apply unless given again. */
static void apply_saved(train_opts *o, const ngpt_train_state *s)
{
    if (!s->has_state) return;
    if (!o->g_seed) o->seed = s->seed;
    if (!o->g_batch) o->batch = s->batch;
    if (!o->g_seq) o->seq = s->seq;
    if (!o->g_steps) o->steps = (int32_t)s->opt.total_steps;
    if (!o->g_lr) o->opt.lr = s->opt.lr;
    if (!o->g_min_lr) o->opt.min_lr = s->opt.min_lr;
    if (!o->g_warmup) o->opt.warmup = s->opt.warmup;
    if (!o->g_wd) o->opt.weight_decay = s->opt.weight_decay;
    if (!o->g_clip) o->opt.clip = s->opt.clip;
    if (!o->g_accum) o->opt.accum = s->opt.accum;
    if (!o->g_decay) o->opt.decay_all = s->opt.decay_all;
    if (!o->g_eval_every) o->eval_every = s->eval_every;
    if (!o->g_eval_batches) o->eval_batches = s->eval_batches;
    if (!o->g_holdout) o->holdout = s->holdout;
    o->opt.beta1 = s->opt.beta1, o->opt.beta2 = s->opt.beta2, o->opt.eps = s->opt.eps;
}

/* False if any parameter is NaN or Inf (such a state is not saved). */
static bool params_finite(ngpt_context *ctx)
{
    float *p;
    size_t n;
    if (ngpt_params_data(ctx, &p, &n)) return false;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p[i])) return false;
    return true;
}

static ngpt_status save(ngpt_context *ctx, const char *path, const train_opts *o, float best,
                        uint64_t data_hash)
{
    ngpt_train_state ts = {.data_hash = data_hash, .seed = o->seed, .batch = o->batch,
                           .seq = o->seq, .opt = o->opt,
                           .best_eval_loss = best, .holdout = o->holdout,
                           .eval_every = o->eval_every, .eval_batches = o->eval_batches};
    return ngpt_checkpoint_save_train(ctx, path, &ts);
}

int cli_cmd_train(int argc, char **argv)
{
    const char *cmd = argv[0];
    train_opts o = {.steps = 1000, .batch = 32, .seq = 0, .threads = 1, .eval_every = 100,
                    .eval_batches = 8, .seed = 42, .holdout = 0.1f, .opt = ngpt_optim_config_default(),
                    .out = "model.ngpt", .cfg = ngpt_config_default()};
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? CLI_OK : rc;

    ngpt_status st;
    ngpt_train_state saved = {.best_eval_loss = INFINITY};
    if (o.resume) {
        if ((st = ngpt_checkpoint_config(o.resume, &o.cfg))) return cli_library_failed(cmd);
        /* a first look at the training state, to plan the context's shape */
        ngpt_shape probe = {.mode = NGPT_MODE_TRAIN, .batch = 1, .seq = 1, .threads = 1};
        ngpt_context *tmp;
        if ((st = ngpt_context_init(&tmp, &o.cfg, &probe, NULL, 0))) return cli_library_failed(cmd);
        st = ngpt_checkpoint_load_train(tmp, o.resume, &saved);
        ngpt_context_free(tmp);
        if (st) return cli_library_failed(cmd);
        apply_saved(&o, &saved);
    } else if ((st = ngpt_config_validate(&o.cfg))) {
        return cli_error(cmd, CLI_USAGE, "%s", cli_library_error());
    }
    if (o.seq == 0) o.seq = o.cfg.context_len;
    if (o.seq > o.cfg.context_len)
        return cli_error(cmd, CLI_USAGE, "--seq %d is longer than the model's context T=%d",
                         (int)o.seq, (int)o.cfg.context_len);
    o.opt.total_steps = o.steps;
    if (!o.g_warmup && o.opt.warmup > o.steps / 10 && !(o.resume && saved.has_state))
        o.opt.warmup = o.steps / 10;    /* a short run still gets most of its steps at full lr */
    if ((st = ngpt_optim_config_validate(&o.opt))) return cli_error(cmd, CLI_USAGE, "%s", cli_library_error());

    const char *const corpus[] = {NGPT_CORPUS_PATH};
    const char *const *paths = o.n_data ? o.data : corpus;
    ngpt_data *data;
    if ((st = ngpt_data_open(&data, paths, o.n_data ? o.n_data : 1, o.holdout, o.seq))) {
        if (!o.n_data) fprintf(stderr, "ngpt train: no --data given and the bundled corpus is "
                               "unusable (run `make` to build it)\n");
        return cli_library_failed(cmd);
    }
    size_t tr = 0, ev = 0;
    uint64_t data_hash = 0;
    ngpt_data_sizes(data, &tr, &ev);
    ngpt_data_checksum(data, &data_hash);
    if (saved.has_state && saved.data_hash && saved.data_hash != data_hash)
        fprintf(stderr, "ngpt train: warning: the data differs from the run saved in %s (pass the "
                "same --data files to continue it exactly)\n", o.resume);
    if (ev == 0 && o.best) {
        ngpt_data_free(data);
        return cli_error(cmd, CLI_USAGE, "--keep-best needs held-out data (--holdout > 0)");
    }
    ngpt_shape shape = {.mode = NGPT_MODE_TRAIN, .batch = o.batch, .seq = o.seq,
                        .trace = NGPT_TRACE_NONE, .threads = o.threads};
    ngpt_context *ctx = NULL;
    size_t arena = 0;
    if (!(st = ngpt_arena_size(&o.cfg, &shape, &arena))) st = ngpt_context_init(&ctx, &o.cfg, &shape, NULL, 0);
    if (!st) st = o.resume ? ngpt_checkpoint_load_train(ctx, o.resume, NULL) : ngpt_params_init(ctx, o.seed);
    if (st) {
        ngpt_context_free(ctx);
        ngpt_data_free(data);
        return cli_library_failed(cmd);
    }
    FILE *csv = NULL;
    if (o.log_csv) {
        uint64_t s0 = 0;
        ngpt_optim_step_count(ctx, &s0);
        csv = fopen(o.log_csv, s0 ? "a" : "w");
        if (!csv) {
            ngpt_context_free(ctx);
            ngpt_data_free(data);
            return cli_error(cmd, CLI_FAILED, "cannot write %s", o.log_csv);
        }
        if (!s0) fprintf(csv, "step,loss,lr,grad_norm,tokens_per_s,eval_loss\n");
    }

    char desc[256];
    size_t n_params = 0;
    ngpt_config_format(&o.cfg, desc, sizeof desc);
    ngpt_config_param_count(&o.cfg, &n_params);
    uint64_t step = 0;
    ngpt_optim_step_count(ctx, &step);
    printf("model %s, %zu parameters; arena %.1f MiB (batch %d, seq %d, accum %d, 1 thread%s)\n",
           desc, n_params, (double)arena / 1048576.0, (int)o.batch, (int)o.seq, (int)o.opt.accum,
           o.threads > 1 ? ": --threads is not used yet" : "");
    printf("data %s%s: %zu bytes train, %zu held out; steps %llu..%d, lr %g -> %g, warmup %lld, "
           "seed %llu\n", paths[0], o.n_data > 1 ? " (+more)" : "", tr, ev,
           (unsigned long long)step, (int)o.steps, (double)o.opt.lr, (double)o.opt.min_lr,
           (long long)o.opt.warmup, (unsigned long long)o.seed);
    fflush(stdout);

    const bool tty = isatty(fileno(stdout));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    float best = saved.has_state ? saved.best_eval_loss : INFINITY;
    const double tokens_per_step = (double)o.batch * o.seq * o.opt.accum;
    const double t_start = now_s();
    const uint64_t step_start = step;
    rc = CLI_OK;
    bool nonfinite = false;
    int skipped_in_row = 0;
    const uint64_t end = o.stop_at > 0 && o.stop_at < o.steps ? (uint64_t)o.stop_at : (uint64_t)o.steps;
    while (step < end && !interrupted) {
        float loss, lr, norm;
        double t0 = now_s();
        if ((st = ngpt_train_step(ctx, &o.opt, data, o.seed, o.batch, o.seq, &loss, &lr, &norm))) {
            /* NaN/Inf: nothing was changed; skip the batch, or stop and save the last good state */
            if (st == NGPT_ERR_NUMERIC && o.skip_nonfinite && ++skipped_in_row <= 10 &&
                !ngpt_optim_skip(ctx)) {
                fprintf(stderr, "ngpt train: skipped: %s\n", cli_library_error());
                step++;
                continue;
            }
            nonfinite = st == NGPT_ERR_NUMERIC;
            rc = cli_library_failed(cmd);
            break;
        }
        skipped_in_row = 0;
        step++;
        double now = now_s(), dt = now - t0;
        double tps = tokens_per_step * (double)(step - step_start) / (now - t_start);
        float eval = NAN;
        bool last = step == (uint64_t)o.steps;
        if (ev > 0 && (last || (o.eval_every > 0 && step % (uint64_t)o.eval_every == 0))) {
            if ((st = ngpt_model_evaluate(ctx, data, o.seed, o.eval_batches, o.batch, o.seq, &eval))) {
                rc = cli_library_failed(cmd);
                break;
            }
            if (o.best && eval < best) {
                best = eval;
                if ((st = save(ctx, o.best, &o, best, data_hash))) {
                    rc = cli_library_failed(cmd);
                    break;
                }
            }
            best = eval < best ? eval : best;
        }
        char eta[32];
        fmt_eta((double)((uint64_t)o.steps - step) * (now - t_start) / (double)(step - step_start),
                eta, sizeof eta);
        if (tty) {
            printf("\rstep %llu/%d  loss %.4f  lr %.2e  %.0f tok/s  %.0f ms/step  ETA %s   ",
                   (unsigned long long)step, (int)o.steps, (double)loss, (double)lr, tps,
                   1e3 * dt, eta);
            if (!isnan(eval)) printf("\n  eval loss %.4f (%.3f bits/byte)\n", (double)eval,
                                     (double)eval / 0.69314718055994531);
        } else if (step == step_start + 1 || step % 10 == 0 || last || !isnan(eval)) {
            printf("step %llu/%d loss %.4f lr %.2e grad_norm %.3f tok/s %.0f ms/step %.0f ETA %s",
                   (unsigned long long)step, (int)o.steps, (double)loss, (double)lr,
                   (double)norm, tps, 1e3 * dt, eta);
            if (!isnan(eval)) printf(" eval_loss %.4f bits/byte %.3f", (double)eval,
                                     (double)eval / 0.69314718055994531);
            printf("\n");
        }
        fflush(stdout);
        if (csv) {
            fprintf(csv, "%llu,%.6f,%.6e,%.6f,%.1f,", (unsigned long long)step, (double)loss,
                    (double)lr, (double)norm, tps);
            if (!isnan(eval)) fprintf(csv, "%.6f", (double)eval);
            fprintf(csv, "\n");
        }
    }
    if (tty) printf("\n");
    if (nonfinite && !params_finite(ctx)) {
        printf("stopped on a non-finite value; the parameters already hold NaN/Inf, so %s was "
               "not overwritten\n", o.out);
    } else if (rc == CLI_OK || interrupted || nonfinite) {
        if ((st = save(ctx, o.out, &o, best, data_hash))) rc = cli_library_failed(cmd);
        else printf("%s %s at step %llu\n", interrupted ? "interrupted: saved"
                    : nonfinite ? "stopped on a non-finite value: saved the last good state in" : "saved",
                    o.out, (unsigned long long)step);
        if (interrupted && rc == CLI_OK) rc = 130;
    }
    if (o.best && isfinite(best)) printf("best eval loss %.4f in %s\n", (double)best, o.best);
    if (csv) fclose(csv);
    ngpt_context_free(ctx);
    ngpt_data_free(data);
    return rc;
}
