/* cmd_train.c — `ngpt train`: training on bytes or on a BPE tokenizer's
 * tokens (--tokenizer, or --vocab: one trained on the training split
 * first), or fine-tuning a model (--init: its weights and tokenizer, a
 * fresh optimizer), or training a LoRA adapter of a frozen model (--init
 * with --lora or --adapter) with AdamW, warmup + cosine, periodic evaluation, atomic
 * checkpoints (latest and best, carrying the tokenizer), resume, a
 * progress line on a terminal and Ctrl-C saving before it exits. Losses
 * are printed per token and in bits per byte. One function per job:
 * options (parse, resume_settings, init_settings, adapter_settings, settle), data
 * (open_data, tokenize),
 * model (open_model), the loop (train_loop), reporting (report_start,
 * report_step, finish). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat_conv.h"
#include "cli.h"
#include "lora.h"

#ifndef NGPT_CORPUS_PATH
#define NGPT_CORPUS_PATH "build/corpus.txt"
#endif

static const char *const HELP =
    "usage: ngpt train [--data FILE ...] [--steps N] [--batch B] [--seq T] [--lr LR]\n"
    "                  [--min-lr LR] [--warmup N] [--weight-decay W] [--no-decay-norms]\n"
    "                  [--clip C] [--accum N] [--seed S] [--threads N] [--eval-every N]\n"
    "                  [--eval-batches N] [--holdout F] [--out FILE] [--keep-best FILE]\n"
    "                  [--stop-at N] [--resume FILE] [--log-csv FILE] [--skip-nonfinite]\n"
    "                  [--config key=value ...] [--tokenizer FILE | --vocab N | --init MODEL]\n"
    "                  [--lora key=value ... [--lora-dropout P] | --adapter FILE]\n"
    "                  [--chat [--template T] [--date YYYY-MM-DD] [--think | --no-think]]\n"
    "                  [--grad-checkpoint] [--loss-chunk N]\n\n"
    "Trains a model on FILEs (concatenated; the last --holdout fraction of the bytes\n"
    "is held out for evaluation): on their bytes, or on the tokens of a BPE tokenizer\n"
    "(--tokenizer, --vocab), which then sets V and is saved in every checkpoint.\n"
    "Without --data it trains on the corpus the build gathers from the project's\n"
    "own docs and sources (" NGPT_CORPUS_PATH ").\n"
    "With --init MODEL it fine-tunes that model instead: its weights, config and\n"
    "tokenizer (the data is encoded with it), a fresh optimizer and step 0.\n"
    "With --init MODEL and --lora (or --adapter) it trains a LoRA adapter of MODEL\n"
    "instead, MODEL's weights frozen (float32, 8-bit or 4-bit): only the adapter's\n"
    "floats learn, and --out is the adapter (adapter.lora), which generate, chat,\n"
    "eval and trace apply with --adapter FILE; its training state (AdamW moments,\n"
    "settings) goes beside it, to OUT.train, which --init MODEL --resume OUT reads\n"
    "to continue the run. An adapter's defaults differ: --lr\n"
    "1e-3, --min-lr a tenth of --lr, --weight-decay 0 (docs/TRAINING.md, LoRA).\n\n"
    "  --data FILE        training text (repeatable)\n"
    "  --tokenizer FILE   train on this tokenizer's tokens (a tokenizer file, or a\n"
    "                     checkpoint that carries one); V = its tokens\n"
    "  --vocab N          train a BPE tokenizer of N tokens on the training split\n"
    "                     first (GPT-2 pieces, end and padding tokens: see ngpt\n"
    "                     tokenizer train), then the model on its tokens\n"
    "  --init MODEL       fine-tune a float32 checkpoint (ngpt train, init, import):\n"
    "                     its weights, config and tokenizer, a fresh optimizer, step\n"
    "                     0; --config may set only dropout; --resume continues it\n"
    "  --steps N          optimizer steps in total, also the schedule length (1000)\n"
    "  --batch B          windows per micro-batch (32)   --seq T  window length (T)\n"
    "  --lr LR            peak learning rate (3e-4)      --min-lr LR  cosine floor (3e-5)\n"
    "  --warmup N         linear warmup steps (200, at most steps)\n"
    "  --weight-decay W   decoupled AdamW weight decay (0.1)\n"
    "  --no-decay-norms   do not decay biases, LayerNorm and the embedding\n"
    "  --clip C           clip the global gradient norm (1.0; 0 = off)\n"
    "  --accum N          micro-batches per step (1)\n"
    "  --seed S           weights, data windows and dropout (42)\n"
    CLI_THREADS_HELP
    "  --eval-every N     evaluate every N steps (100; 0 = only at the end)\n"
    "  --eval-batches N   batches per evaluation (8)   --holdout F  held-out tail (0.1)\n"
    "  --out FILE         latest checkpoint, with training state (model.ngpt)\n"
    "  --keep-best FILE   also keep the checkpoint with the best eval loss\n"
    "  --stop-at N        stop after step N (before --steps), saving --out as Ctrl-C does\n"
    "  --resume FILE      continue from a checkpoint (bit-identical to not stopping);\n"
    "                     its saved settings apply unless given again here (a warning\n"
    "                     names any that then differ: the run is no longer identical)\n"
    "  --log-csv FILE     step,loss,lr,grad_norm,tokens_per_s,eval_loss,\n"
    "                     bits_per_byte,eval_bits_per_byte per step\n"
    "  --config key=value model config for a new model (see ngpt init --help); with\n"
    "                     --init only dropout=P (the shape is the model's)\n"
    "  --lora key=value   with --init MODEL: train a new adapter of MODEL: r (8),\n"
    "                     alpha (16), rslora (0; 1: scale alpha/sqrt(r), not alpha/r),\n"
    "                     dropout (0), targets (q_proj,v_proj; also k_proj o_proj\n"
    "                     gate_proj up_proj down_proj c_attn c_fc c_proj all-linear),\n"
    "                     layers (every one; e.g. 0-3,7); repeatable or comma-\n"
    "                     separated: --lora r=16,alpha=32,targets=q_proj,v_proj\n"
    "  --lora-dropout P   the same as --lora dropout=P\n"
    "  --adapter FILE     with --init MODEL: train the adapter FILE further (e.g. one\n"
    "                     ngpt lora import made) from step 0; --init MODEL --resume\n"
    "                     ADAPTER continues a run bit-identically from ADAPTER.train\n"
    "  --chat             the data are conversations, JSON Lines of {\"messages\":\n"
    "                     [{\"role\": ..., \"content\": ...}, ...]}, rendered as ngpt\n"
    "                     chat renders them, whose only targets are the assistant's\n"
    "                     replies and their end markers (the prompts are masked)\n"
    "  --template T       --chat's form: model (the default when the model carries\n"
    "                     a chat template) its own Jinja template; chatml (else)\n"
    "                     the tokenizer's ChatML turns; or a tokenizer_config.json\n"
    "                     or Jinja file. --date, --think, --no-think: as ngpt chat's\n"
    "  --grad-checkpoint  recompute each block's activations in the backward: the\n"
    "                     arena keeps one layer's, the results are the same bits\n"
    "  --loss-chunk N     the lm_head and the loss over N rows at a time (no B*T x V\n"
    "                     logits in the arena; the same bits; 0 = all at once)\n"
    "  --skip-nonfinite   skip a step whose loss or gradient is NaN/Inf (at most 10 in\n"
    "                     a row) instead of stopping\n\n"
    "Losses are nats per token (per byte for a byte-level model), each followed by\n"
    "bits per byte: the batch's nats / (the bytes of its target tokens x ln 2).\n"
    "Ctrl-C saves the latest checkpoint and exits with status 130. A NaN or Inf loss\n"
    "or gradient stops training with a message naming the step and saves the last\n"
    "good state (parameters before that step) to --out, unless the parameters hold\n"
    "NaN/Inf themselves (then --out is left as it was); exit status 1.\n";

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { (void)sig; interrupted = 1; }

enum { MAX_DATA = 64, MAX_CONFIG = 64 };

typedef struct train_opts {
    const char *data[MAX_DATA];
    int n_data;
    int32_t steps, batch, seq, threads, eval_every, eval_batches, stop_at;
    uint64_t seed;
    float holdout;
    ngpt_optim_config opt;
    const char *out, *best, *resume, *log_csv, *tokenizer, *init;
    const char *adapter;        /* --adapter FILE: the adapter to go on training */
    bool lora;                  /* --lora given: a new adapter */
    ngpt_lora_config lc;        /* --lora's settings */
    ngpt_adapter *ad;           /* the adapter trained (--lora's or --adapter's) */
    int32_t vocab;              /* --vocab: a tokenizer of this many tokens (0: none) */
    ngpt_model *model;          /* --resume's or --init's file, opened once */
    ngpt_config cfg;
    bool cfg_given;
    const char *cfg_set[MAX_CONFIG];    /* the --config key=value given, in order */
    int n_cfg_set;
    bool skip_nonfinite;
    bool chat;                  /* --chat: conversations, targets only at the replies */
    const char *template;       /* --template: their form (NULL: the model's, else ChatML) */
    ngpt_template_options topt; /* --date, --think, --no-think */
    bool topt_given;
    bool recompute;             /* --grad-checkpoint (shape.recompute) */
    int32_t loss_chunk;         /* --loss-chunk N (shape.loss_chunk) */
    char *adapter_state;        /* --init MODEL --resume ADAPTER: ADAPTER.train */
    char *out_state, *best_state;   /* an adapter's run: --out's and --keep-best's .train */
    /* which were given explicitly (they override a resumed checkpoint's) */
    bool g_batch, g_seq, g_seed, g_steps, g_lr, g_min_lr, g_warmup, g_wd, g_clip, g_accum, g_decay;
    bool g_eval_every, g_eval_batches, g_holdout, g_out;
} train_opts;

/* Training an adapter (--lora, --adapter), not the model. */
static bool adapting(const train_opts *o) { return o->lora || o->adapter; }

/* The file whose saved run goes on: --resume's or --adapter's. */
static const char *continued(const train_opts *o) { return o->adapter ? o->adapter : o->resume; }

/* PATH.train (malloc; NULL when out of memory): an adapter run's state. */
static char *state_path(const char *path)
{
    size_t n = strlen(path) + sizeof ".train";
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s.train", path);
    return p;
}

static int parse(int argc, char **argv, train_opts *o)
{
    cli_args a = cli_args_init(argc, argv);
    const char *v;
    const char *c = a.cmd;
    int32_t i32;
    int r;
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
            ok = !v || cli_parse_threads(c, v, &o->threads);
        } else if (cli_opt(&a, "--eval-every", &v)) {
            ok = !v || cli_parse_i32(c, "--eval-every", v, 0, INT32_MAX, &o->eval_every), o->g_eval_every = true;
        } else if (cli_opt(&a, "--eval-batches", &v)) {
            ok = !v || cli_parse_i32(c, "--eval-batches", v, 1, 1 << 20, &o->eval_batches), o->g_eval_batches = true;
        } else if (cli_opt(&a, "--holdout", &v)) {
            ok = !v || cli_parse_f32(c, "--holdout", v, 0.0f, 0.99f, &o->holdout), o->g_holdout = true;
        } else if (cli_opt(&a, "--stop-at", &v)) {
            ok = !v || cli_parse_i32(c, "--stop-at", v, 1, INT32_MAX, &o->stop_at);
        } else if (cli_opt(&a, "--out", &v)) {
            o->out = v, o->g_out = true;
        } else if (cli_opt(&a, "--lora", &v)) {
            ok = !v || cli_lora_set(c, &o->lc, v), o->lora = true;
        } else if (cli_opt(&a, "--lora-dropout", &v)) {
            char kv[64];
            snprintf(kv, sizeof kv, "dropout=%.40s", v ? v : "");
            ok = !v || cli_lora_set(c, &o->lc, kv), o->lora = true;
        } else if (cli_opt(&a, "--adapter", &v)) {
            o->adapter = v;
        } else if (cli_flag(&a, "--chat")) {
            o->chat = true;
        } else if (cli_opt(&a, "--template", &v)) {
            o->template = v;
        } else if ((r = cli_template_option(&a, &o->topt)) != 0) {
            ok = r > 0, o->topt_given = true;
        } else if (cli_flag(&a, "--grad-checkpoint")) {
            o->recompute = true;
        } else if (cli_opt(&a, "--loss-chunk", &v)) {
            ok = !v || cli_parse_i32(c, "--loss-chunk", v, 0, INT32_MAX, &o->loss_chunk);
        } else if (cli_opt(&a, "--keep-best", &v)) {
            o->best = v;
        } else if (cli_opt(&a, "--resume", &v)) {
            o->resume = v;
        } else if (cli_opt(&a, "--init", &v)) {
            o->init = v;
        } else if (cli_opt(&a, "--log-csv", &v)) {
            o->log_csv = v;
        } else if (cli_opt(&a, "--tokenizer", &v)) {
            o->tokenizer = v;
        } else if (cli_opt(&a, "--vocab", &v)) {
            ok = !v || cli_parse_i32(c, "--vocab", v, 258, 1 << 20, &o->vocab);
        } else if (cli_opt(&a, "--config", &v)) {
            if (v && ngpt_config_set(&o->cfg, v))
                return cli_error(c, CLI_USAGE, "%s", cli_library_error());
            if (o->n_cfg_set == MAX_CONFIG)
                return cli_error(c, CLI_USAGE, "at most %d --config settings", MAX_CONFIG);
            if (v) o->cfg_set[o->n_cfg_set++] = v;
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
    if (o->resume && (o->tokenizer || o->vocab))
        return cli_error(c, CLI_USAGE, "--tokenizer and --vocab cannot change a resumed model (its "
                         "tokenizer, if it has one, is in %s)", o->resume);
    if (o->tokenizer && o->vocab)
        return cli_error(c, CLI_USAGE, "give --tokenizer FILE or --vocab N, not both");
    if (o->init && o->resume) {     /* an adapter's run: its state is beside it */
        if (o->lora || o->adapter)
            return cli_error(c, CLI_USAGE, "--resume %s continues an adapter's run: give no "
                             "--lora or --adapter with it", o->resume);
        if (!(o->adapter_state = state_path(o->resume)))
            return cli_error(c, CLI_FAILED, "out of memory");
        if (access(o->adapter_state, F_OK))
            return cli_error(c, CLI_USAGE, "give --init MODEL (start fine-tuning) or --resume FILE "
                             "(continue a run, fine-tuning or not), not both; with --init, "
                             "--resume ADAPTER continues an adapter's run from ADAPTER.train, "
                             "and %s does not exist", o->adapter_state);
        o->adapter = o->adapter_state, o->resume = NULL;
    }
    if (o->init && (o->tokenizer || o->vocab))
        return cli_error(c, CLI_USAGE, "--tokenizer and --vocab cannot change the tokenizer of "
                         "--init %s (the model's own encodes the data)", o->init);
    if (adapting(o) && !o->init)
        return cli_error(c, CLI_USAGE, "--lora and --adapter train an adapter of a model: name "
                         "the model with --init MODEL");
    if (o->lora && o->adapter)
        return cli_error(c, CLI_USAGE, "give --lora (a new adapter) or --adapter FILE (go on "
                         "training one), not both");
    if (adapting(o) && o->cfg_given)
        return cli_error(c, CLI_USAGE, "--config: an adapter trains on %s as it is (its dropout "
                         "too); the adapter's own dropout is --lora dropout=P", o->init);
    if (adapting(o) && o->g_decay)
        return cli_error(c, CLI_USAGE, "--no-decay-norms: an adapter has no norms or embeddings "
                         "(its A and B are Linear weights: all decay)");
    if (adapting(o) && !o->g_out) o->out = "adapter.lora";
    if (adapting(o)) {      /* an adapter's defaults (PEFT's range): a higher rate, no decay */
        if (!o->g_lr) o->opt.lr = 1e-3f;
        if (!o->g_min_lr) o->opt.min_lr = o->opt.lr / 10;
        if (!o->g_wd) o->opt.weight_decay = 0.0f;
    }
    if (adapting(o) && (!(o->out_state = state_path(o->out)) ||
                        (o->best && !(o->best_state = state_path(o->best)))))
        return cli_error(c, CLI_FAILED, "out of memory");
    if (adapting(o) && !strcmp(o->out, o->init))
        return cli_error(c, CLI_USAGE, "--out %s is the model the adapter trains on: name the "
                         "adapter's file", o->out);
    for (int i = 0; o->init && i < o->n_cfg_set; i++)
        if (strncmp(o->cfg_set[i], "dropout=", 8))
            return cli_error(c, CLI_USAGE, "--config %s: with --init only dropout can be set "
                             "(the shape and wiring are those of %s's weights)", o->cfg_set[i],
                             o->init);
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
    if (ngpt_context_params(ctx, &p, &n)) return false;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p[i])) return false;
    return true;
}

/* A model's checkpoint holds its training state; an adapter's run writes
 * the adapter alone to path (what inference reads: a third of the floats)
 * and its state (the adapter, AdamW moments, settings) to path.train,
 * first, so that a crash between the two leaves a state that continues. */
static ngpt_status save(ngpt_context *ctx, const char *path, const char *state,
                        const train_opts *o, float best, uint64_t data_hash)
{
    ngpt_train_state ts = {.data_hash = data_hash, .seed = o->seed, .batch = o->batch,
                           .seq = o->seq, .opt = o->opt,
                           .best_eval_loss = best, .holdout = o->holdout,
                           .eval_every = o->eval_every, .eval_batches = o->eval_batches};
    if (!adapting(o)) return ngpt_context_save_train(ctx, path, &ts);
    ngpt_status st = ngpt_context_save_train(ctx, state, &ts);
    return st ? st : ngpt_context_save(ctx, path);
}

/* ------------------------------------------------------------- options */


/* --resume: opens the checkpoint once (its context is made from the open
 * model) and applies the saved settings, which decide the shape of the
 * context. */
static int resume_settings(const char *cmd, train_opts *o, ngpt_train_state *saved)
{
    if (ngpt_model_open(&o->model, o->resume) || ngpt_model_config(o->model, &o->cfg) ||
        ngpt_model_train_state(o->model, saved))
        return cli_error(cmd, CLI_FAILED, "cannot resume from %s: %s", o->resume,
                         cli_library_error());
    if (o->cfg.weights != NGPT_WEIGHTS_F32)
        return cli_error(cmd, CLI_FAILED, "%s holds %s weights (weights=%s), which are for "
                         "inference only: resume from its float32 original (the file ngpt "
                         "quantize read), then quantize the result again", o->resume,
                         o->cfg.weights == NGPT_WEIGHTS_Q8 ? "8-bit" : "4-bit",
                         o->cfg.weights == NGPT_WEIGHTS_Q8 ? "q8" : "q4");
    apply_saved(o, saved);
    return CLI_OK;
}

/* --init: the model, opened once, and its config with the --config
 * dropout given on top. */
static int init_settings(const char *cmd, train_opts *o)
{
    if (ngpt_model_open(&o->model, o->init) || ngpt_model_config(o->model, &o->cfg))
        return cli_error(cmd, CLI_FAILED, "cannot fine-tune %s: %s", o->init, cli_library_error());
    if (o->cfg.weights == NGPT_WEIGHTS_Q8 && !adapting(o))
        return cli_error(cmd, CLI_FAILED, "%s holds 8-bit weights (weights=q8), which are for "
                         "inference only: fine-tune its float32 original (the file ngpt "
                         "quantize read, or ngpt import without --weights q8), then quantize "
                         "the result", o->init);
    for (int i = 0; i < o->n_cfg_set; i++)
        if (ngpt_config_set(&o->cfg, o->cfg_set[i]))
            return cli_error(cmd, CLI_USAGE, "%s", cli_library_error());
    return CLI_OK;
}

/* --lora: a new adapter of the model (A drawn from the seed, B zero);
 * --adapter: the file's, whose training state (a file --out wrote) goes on
 * as --resume's does. */
static int adapter_settings(const char *cmd, train_opts *o, ngpt_train_state *saved)
{
    if (o->lora)
        return ngpt_adapter_create(&o->ad, o->model, &o->lc, o->seed)
                   ? cli_error(cmd, CLI_USAGE, "--lora: %s", cli_library_error())
                   : CLI_OK;
    if (ngpt_adapter_open(&o->ad, o->adapter) || ngpt_adapter_lora_config(o->ad, &o->lc) ||
        ngpt_adapter_train_state(o->ad, saved))
        return cli_error(cmd, CLI_FAILED, "cannot go on training %s: %s", o->adapter,
                         cli_library_error());
    /* an adapter of another config is refused before its settings apply */
    ngpt_shape probe = {.mode = NGPT_MODE_TRAIN, .batch = 1, .seq = 1, .threads = 1,
                        .adapter = o->ad};
    size_t bytes;
    if (ngpt_context_arena_size(o->model, NULL, &probe, &bytes) == NGPT_ERR_CONFIG_MISMATCH)
        return cli_error(cmd, CLI_FAILED, "--adapter %s does not apply to %s: %s", o->adapter,
                         o->init, cli_library_error());
    apply_saved(o, saved);
    return CLI_OK;
}

/* Appends "OPT NOW (saved: WAS)" to a comma-separated list. */
static void list_change(char *list, size_t cap, const char *opt, const char *now, const char *was)
{
    size_t n = strlen(list);
    snprintf(list + n, cap - n, "%s%s %s (saved: %s)", n ? ", " : "", opt, now, was);
}

/* Settings given again on resume that differ from the saved run: the
 * continuation is then no longer the run that was interrupted. */
static void warn_changed(const train_opts *o, const ngpt_train_state *s)
{
    const struct { const char *opt; bool given; double now, was; } f[] = {
        {"--steps", o->g_steps, o->steps, (double)s->opt.total_steps},
        {"--batch", o->g_batch, o->batch, s->batch},
        {"--seq", o->g_seq, o->seq, s->seq},
        {"--lr", o->g_lr, o->opt.lr, s->opt.lr},
        {"--min-lr", o->g_min_lr, o->opt.min_lr, s->opt.min_lr},
        {"--warmup", o->g_warmup, (double)o->opt.warmup, (double)s->opt.warmup},
        {"--weight-decay", o->g_wd, o->opt.weight_decay, s->opt.weight_decay},
        {"--clip", o->g_clip, o->opt.clip, s->opt.clip},
        {"--accum", o->g_accum, o->opt.accum, s->opt.accum},
        {"--no-decay-norms", o->g_decay, !o->opt.decay_all, !s->opt.decay_all},
        {"--holdout", o->g_holdout, o->holdout, s->holdout},
    };
    char list[640] = "", now[32], was[32];
    int changed = 0;
    if (o->g_seed && o->seed != s->seed) {
        snprintf(now, sizeof now, "%llu", (unsigned long long)o->seed);
        snprintf(was, sizeof was, "%llu", (unsigned long long)s->seed);
        list_change(list, sizeof list, "--seed", now, was);
        changed++;
    }
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (!f[i].given || f[i].now == f[i].was) continue;
        snprintf(now, sizeof now, "%g", f[i].now);
        snprintf(was, sizeof was, "%g", f[i].was);
        list_change(list, sizeof list, f[i].opt, now, was);
        changed++;
    }
    if (!changed) return;
    const bool schedule = o->g_steps && (double)o->steps != (double)s->opt.total_steps;
    fprintf(stderr, "ngpt train: warning: %s %s the run saved in %s; %sthe resumed run is no "
            "longer bit-identical to an uninterrupted one\n", list,
            changed > 1 ? "differ from" : "differs from", continued(o),
            schedule ? "the learning-rate schedule changes and " : "");
}

/* Resolves seq, the schedule length and the warmup, and checks them. */
static int settle(const char *cmd, train_opts *o, const ngpt_train_state *saved)
{
    if (o->seq == 0) o->seq = o->cfg.context_len;
    if (o->seq > o->cfg.context_len)
        return cli_error(cmd, CLI_USAGE, "--seq %d is longer than the model's context T=%d",
                         (int)o->seq, (int)o->cfg.context_len);
    o->opt.total_steps = o->steps;
    if (!o->g_warmup && o->opt.warmup > o->steps / 10 && !saved->has_state)
        o->opt.warmup = o->steps / 10;  /* a short run still gets most of its steps at full lr */
    if (ngpt_optim_config_validate(&o->opt))
        return cli_error(cmd, CLI_USAGE, "%s", cli_library_error());
    return CLI_OK;
}

/* ---------------------------------------------------------- data, model */

/* What a run works with, once set up. */
typedef struct run {
    const char *cmd;
    train_opts *o;
    ngpt_data *data;
    const ngpt_tokenizer *tok;  /* NULL: bytes; the model's, or own_tok */
    ngpt_tokenizer *own_tok;    /* --tokenizer's or --vocab's */
    double tok_seconds;         /* --vocab: training the tokenizer took */
    const char *data_name;      /* for the report */
    size_t train_bytes, eval_bytes, arena, train_tokens, eval_tokens;
    uint64_t eval_window_bytes; /* the bytes of the evaluation's targets */
    uint64_t data_hash;
    ngpt_context *ctx;
    FILE *csv;
    float best;                 /* best eval loss so far */
    uint64_t step, step_start;
    double t_start;
    bool tty;
} run;

static int set_vocab(run *r);

/* The run's tokenizer: the resumed or fine-tuned checkpoint's, --tokenizer's,
 * or none (--vocab trains one once the data is open); it sets V. */
static int open_tokenizer(run *r)
{
    train_opts *o = r->o;
    if (o->model) return ngpt_model_tokenizer(o->model, &r->tok) ? cli_library_failed(r->cmd)
                                                                 : CLI_OK;
    if (!o->tokenizer) return CLI_OK;
    int rc = cli_load_tokenizer(r->cmd, o->tokenizer, &r->own_tok);
    r->tok = r->own_tok;
    return rc ? rc : set_vocab(r);
}

/* A new model's V is its tokenizer's token count (a --config V= must agree). */
static int set_vocab(run *r)
{
    train_opts *o = r->o;
    ngpt_tokenizer_info info;
    ngpt_tokenizer_describe(r->tok, &info);
    if (o->cfg_given && o->cfg.vocab_size != ngpt_config_default().vocab_size &&
        o->cfg.vocab_size != info.n_tokens)
        return cli_error(r->cmd, CLI_USAGE, "--config V=%d disagrees with the tokenizer's %d "
                         "tokens (leave V out: the tokenizer sets it)", (int)o->cfg.vocab_size,
                         (int)info.n_tokens);
    o->cfg.vocab_size = info.n_tokens;
    if (ngpt_config_validate(&o->cfg))
        return cli_error(r->cmd, CLI_USAGE, "%s", cli_library_error());
    return CLI_OK;
}

/* --vocab: a tokenizer trained on the training split (what the model
 * trains on; the held-out text stays unseen). */
static int train_tokenizer(run *r)
{
    const uint8_t *text;
    size_t n;
    ngpt_data_text(r->data, NGPT_SPLIT_TRAIN, &text, &n);
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = r->o->vocab;
    const void *texts[1] = {text};
    const double t0 = cli_now();
    if (ngpt_tokenizer_train(&r->own_tok, &tc, texts, &n, 1)) return cli_library_failed(r->cmd);
    r->tok = r->own_tok;
    r->tok_seconds = cli_now() - t0;
    return set_vocab(r);
}

/* Encodes the data with the run's tokenizer, and the bytes of the
 * evaluation's windows (the same every evaluation). */
static int tokenize(run *r)
{
    const train_opts *o = r->o;
    if (o->chat && !r->tok)
        return cli_error(r->cmd, CLI_USAGE, "--chat: conversations are tokens of a model's "
                         "tokenizer (--init MODEL, --resume or --tokenizer)");
    if ((o->template || o->topt_given) && !o->chat)
        return cli_error(r->cmd, CLI_USAGE, "--template, --date, --think and --no-think go with "
                         "--chat");
    ngpt_template *tpl = NULL;
    if (o->chat && cli_train_template(r->cmd, o->template, o->model, &tpl)) return CLI_USAGE;
    const ngpt_status st = o->chat ? ngpt_data_tokenize_chat(r->data, r->tok, tpl, &o->topt, o->seq)
                         : r->tok ? ngpt_data_tokenize(r->data, r->tok, o->seq) : NGPT_OK;
    ngpt_template_free(tpl);
    if (st) return cli_library_failed(r->cmd);
    ngpt_data_token_counts(r->data, &r->train_tokens, &r->eval_tokens);
    for (int32_t i = 0; r->eval_bytes && i < o->eval_batches; i++) {
        uint64_t b = 0;
        if (ngpt_data_batch_bytes(r->data, NGPT_SPLIT_EVAL, o->seed, (uint64_t)i, o->batch, o->seq,
                                  &b))
            return cli_library_failed(r->cmd);
        r->eval_window_bytes += b;
    }
    return CLI_OK;
}

static int open_data(run *r, const ngpt_train_state *saved)
{
    const train_opts *o = r->o;
    static const char *const corpus[] = {NGPT_CORPUS_PATH};
    const char *const *paths = o->n_data ? o->data : corpus;
    if (ngpt_data_open(&r->data, paths, o->n_data ? o->n_data : 1, o->holdout, o->seq)) {
        if (!o->n_data)
            return cli_error(r->cmd, CLI_FAILED, "no --data given, and the bundled corpus is "
                             "unusable (run `make` to build it): %s", cli_library_error());
        return cli_library_failed(r->cmd);
    }
    r->data_name = paths[0];
    ngpt_data_sizes(r->data, &r->train_bytes, &r->eval_bytes);
    ngpt_data_checksum(r->data, &r->data_hash);
    if (saved->has_state && saved->data_hash && saved->data_hash != r->data_hash)
        fprintf(stderr, "ngpt train: warning: the data differs from the run saved in %s (pass the "
                "same --data files to continue it exactly)\n", continued(o));
    if (r->eval_bytes == 0 && o->best)
        return cli_error(r->cmd, CLI_USAGE, "--keep-best needs held-out data (--holdout > 0)");
    if (o->vocab) {
        int rc = train_tokenizer(r);
        if (rc) return rc;
    }
    return tokenize(r);
}

/* The training context: the resumed checkpoint, the fine-tuned model (a
 * fresh optimizer) or fresh weights, and the CSV log (appended to when
 * resuming past step 0). */
static int open_model(run *r)
{
    const train_opts *o = r->o;
    ngpt_shape shape = {.mode = NGPT_MODE_TRAIN, .batch = o->batch, .seq = o->seq,
                        .trace = NGPT_TRACE_NONE, .threads = o->threads, .adapter = o->ad,
                        .recompute = o->recompute, .loss_chunk = o->loss_chunk};
    /* resumed: the checkpoint's weights and optimizer; fine-tuned: its
     * weights under the --config dropout, a fresh optimizer; new: fresh
     * weights; an adapter: the model's weights as they are (no config),
     * frozen, and the adapter's floats and optimizer */
    const ngpt_config *cfg = o->ad ? NULL : &o->cfg;
    ngpt_status st = ngpt_context_arena_size(o->model, cfg, &shape, &r->arena);
    if (!st) st = ngpt_context_init(&r->ctx, o->model, cfg, &shape, NULL, 0);
    if (st == NGPT_ERR_CONFIG_MISMATCH && o->adapter)
        return cli_error(r->cmd, CLI_FAILED, "--adapter %s does not apply to %s: %s", o->adapter,
                         o->init, cli_library_error());
    if (st == NGPT_ERR_NO_MEMORY)   /* a pretrained model at the default batch 32, seq T: say what fits */
        return cli_error(r->cmd, CLI_FAILED, "training needs a %.0f MiB arena at --batch %d --seq %d "
                         "and this machine could not allocate it: lower --batch and --seq (ngpt "
                         "info %s --batch B --seq T sizes them; --accum N keeps the batch size)",
                         (double)r->arena / 1048576.0, (int)o->batch, (int)o->seq,
                         o->init ? o->init : o->resume ? o->resume : "--config ...");
    if (!st && o->init && !o->ad) st = ngpt_context_optim_reset(r->ctx);
    if (!st && !o->model) st = ngpt_context_params_init(r->ctx, o->seed);
    if (!st && !o->model) st = ngpt_context_tokenizer_set(r->ctx, r->tok);   /* saves carry it */
    if (st) return cli_library_failed(r->cmd);
    ngpt_context_step_count(r->ctx, &r->step);
    if (o->log_csv) {
        r->csv = fopen(o->log_csv, r->step ? "a" : "w");
        if (!r->csv) return cli_error(r->cmd, CLI_FAILED, "cannot write %s", o->log_csv);
        if (!r->step)
            fprintf(r->csv, "step,loss,lr,grad_norm,tokens_per_s,eval_loss,bits_per_byte,"
                    "eval_bits_per_byte\n");
    }
    return CLI_OK;
}

/* ----------------------------------------------------------- reporting */

static void fmt_eta(double s, char *buf, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

/* What an adapter run trains: the adapter's config and floats against the
 * model's parameters, and where it starts. */
static void report_adapter(const run *r, size_t n_params)
{
    const train_opts *o = r->o;
    char lora[256];
    float *p;
    size_t n = 0;
    ngpt_lora_config_format(&o->lc, lora, sizeof lora);
    ngpt_context_params(r->ctx, &p, &n);
    printf("LoRA adapter of %s (frozen, %s weights): %s, %zu floats (%.2f%% of the model's "
           "parameters); %s%s%s\n", o->init,
           o->cfg.weights == NGPT_WEIGHTS_Q8 ? "8-bit" : o->cfg.weights == NGPT_WEIGHTS_Q4 ? "4-bit"
                                                                                     : "float32",
           lora, n, 100.0 * (double)n / (double)n_params,
           o->lora ? "a new adapter (A from the seed, B zero)" : "going on from ",
           o->lora ? "" : o->adapter, o->lora || r->step ? "" : " at step 0 (it holds no training state)");
}

static void report_start(const run *r)
{
    const train_opts *o = r->o;
    char desc[768];
    size_t n_params = 0;
    ngpt_config_format(&o->cfg, desc, sizeof desc);
    ngpt_config_param_count(&o->cfg, &n_params);
    printf("model %s, %zu parameters; arena %.1f MiB (batch %d, seq %d, accum %d, %d thread%s)\n",
           desc, n_params, (double)r->arena / 1048576.0, (int)o->batch, (int)o->seq,
           (int)o->opt.accum, (int)o->threads, o->threads > 1 ? "s" : "");
    if (o->ad)
        report_adapter(r, n_params);
    else if (o->init)
        printf("fine-tuning %s: its weights and %s, a fresh optimizer\n", o->init,
               r->tok ? "tokenizer" : "bytes as tokens");
    printf("data %s%s: %zu bytes train, %zu held out; steps %llu..%d, lr %g -> %g, warmup %lld, "
           "seed %llu\n", r->data_name, o->n_data > 1 ? " (+more)" : "", r->train_bytes,
           r->eval_bytes, (unsigned long long)r->step, (int)o->steps, (double)o->opt.lr,
           (double)o->opt.min_lr, (long long)o->opt.warmup, (unsigned long long)o->seed);
    ngpt_tokenizer_info info;
    if (r->tok && !ngpt_tokenizer_describe(r->tok, &info)) {
        char how[64] = "";
        if (o->vocab) snprintf(how, sizeof how, ", trained on the training split in %.2f s",
                               r->tok_seconds);
        printf("tokenizer %s: %d tokens (%d merges)%s; %zu tokens train (%.3f bytes/token), %zu "
               "held out (%.3f bytes/token)\n", o->resume ? o->resume : o->init ? o->init
               : o->tokenizer ? o->tokenizer : "--vocab", (int)info.n_tokens, (int)info.n_merges, how,
               r->train_tokens, (double)r->train_bytes / (double)r->train_tokens, r->eval_tokens,
               r->eval_tokens ? (double)r->eval_bytes / (double)r->eval_tokens : 0.0);
    }
    fflush(stdout);
}

/* Bits per byte of a loss (nats per token) over tokens that stand for
 * `bytes` bytes. */
static double bits_per_byte(float loss, double tokens, uint64_t bytes)
{
    return (double)loss * tokens / ((double)bytes * 0.69314718055994531);
}

/* One step's progress: a line rewritten in place on a terminal, plain lines
 * (every 10th step, the first, the last and evaluations) otherwise; the CSV
 * row. dt: the step's seconds; now: when it ended (before any evaluation);
 * bytes: those of the step's targets; eval is NaN when the step did not
 * evaluate. */
static void report_step(const run *r, float loss, uint64_t bytes, float lr, float norm, double dt,
                        double now, float eval)
{
    const train_opts *o = r->o;
    const double elapsed = now - r->t_start;
    const uint64_t done = r->step - r->step_start;
    const double tps = (double)o->batch * o->seq * o->opt.accum * (double)done / elapsed;
    const bool last = r->step == (uint64_t)o->steps;
    char eta[32];
    fmt_eta((double)((uint64_t)o->steps - r->step) * elapsed / (double)done, eta, sizeof eta);
    const double bpb = bits_per_byte(loss, (double)o->batch * o->seq * o->opt.accum, bytes);
    const double eval_bpb = bits_per_byte(eval, (double)o->batch * o->seq * o->eval_batches,
                                          r->eval_window_bytes);
    if (r->tty) {
        printf("\rstep %llu/%d  loss %.4f (%.3f bits/byte)  lr %.2e  %.0f tok/s  %.0f ms/step  "
               "ETA %s   ", (unsigned long long)r->step, (int)o->steps, (double)loss, bpb,
               (double)lr, tps, 1e3 * dt, eta);
        if (!isnan(eval)) printf("\n  eval loss %.4f (%.3f bits/byte)\n", (double)eval, eval_bpb);
    } else if (done == 1 || r->step % 10 == 0 || last || !isnan(eval)) {
        printf("step %llu/%d loss %.4f (%.3f bits/byte) lr %.2e grad_norm %.3f tok/s %.0f "
               "ms/step %.0f ETA %s", (unsigned long long)r->step, (int)o->steps, (double)loss, bpb,
               (double)lr, (double)norm, tps, 1e3 * dt, eta);
        if (!isnan(eval)) printf(" eval_loss %.4f bits/byte %.3f", (double)eval, eval_bpb);
        printf("\n");
    }
    fflush(stdout);
    if (r->csv) {
        fprintf(r->csv, "%llu,%.6f,%.6e,%.6f,%.1f,", (unsigned long long)r->step, (double)loss,
                (double)lr, (double)norm, tps);
        if (!isnan(eval)) fprintf(r->csv, "%.6f", (double)eval);
        fprintf(r->csv, ",%.6f,", bpb);
        if (!isnan(eval)) fprintf(r->csv, "%.6f", eval_bpb);
        fprintf(r->csv, "\n");
    }
}

/* ---------------------------------------------------------------- loop */

/* Evaluates when due (every --eval-every steps and at the last), keeping
 * --keep-best; *eval stays NaN otherwise. */
static int evaluate_if_due(run *r, float *eval)
{
    const train_opts *o = r->o;
    const bool due = r->step == (uint64_t)o->steps ||
                     (o->eval_every > 0 && r->step % (uint64_t)o->eval_every == 0);
    if (r->eval_bytes == 0 || !due) return CLI_OK;
    if (ngpt_context_evaluate(r->ctx, r->data, o->seed, o->eval_batches, o->batch, o->seq, eval))
        return cli_library_failed(r->cmd);
    if (o->best && *eval < r->best) {
        r->best = *eval;
        if (save(r->ctx, o->best, o->best_state, o, r->best, r->data_hash)) return cli_library_failed(r->cmd);
    }
    r->best = *eval < r->best ? *eval : r->best;
    return CLI_OK;
}

/* Steps until --steps (or --stop-at, or Ctrl-C). *nonfinite: stopped on a
 * NaN/Inf loss or gradient (nothing of that step was applied). */
static int train_loop(run *r, bool *nonfinite)
{
    const train_opts *o = r->o;
    const uint64_t end = o->stop_at > 0 && o->stop_at < o->steps ? (uint64_t)o->stop_at
                                                                  : (uint64_t)o->steps;
    int skipped_in_row = 0;
    r->t_start = cli_now();
    r->step_start = r->step;
    while (r->step < end && !interrupted) {
        float loss, lr, norm, eval = NAN;
        uint64_t bytes = 0;     /* of this step's targets: its micro-batches s*accum + a */
        for (int32_t a = 0; a < o->opt.accum; a++) {
            uint64_t b = 0;
            ngpt_data_batch_bytes(r->data, NGPT_SPLIT_TRAIN, o->seed,
                                  r->step * (uint64_t)o->opt.accum + (uint64_t)a, o->batch,
                                  o->seq, &b);
            bytes += b;
        }
        const double t0 = cli_now();
        ngpt_status st = ngpt_context_train_step(r->ctx, &o->opt, r->data, o->seed, o->batch, o->seq,
                                         &loss, &lr, &norm);
        if (st) {
            /* NaN/Inf: nothing was changed; skip the batch, or stop and save the last good state */
            if (st == NGPT_ERR_NUMERIC && o->skip_nonfinite && ++skipped_in_row <= 10 &&
                !ngpt_context_optim_skip(r->ctx)) {
                fprintf(stderr, "ngpt train: skipped: %s\n", cli_library_error());
                r->step++;
                continue;
            }
            *nonfinite = st == NGPT_ERR_NUMERIC;
            return cli_library_failed(r->cmd);
        }
        skipped_in_row = 0;
        r->step++;
        const double now = cli_now();
        int rc = evaluate_if_due(r, &eval);
        if (rc) return rc;
        report_step(r, loss, bytes, lr, norm, now - t0, now, eval);
    }
    return CLI_OK;
}

/* Saves --out at the end, on Ctrl-C, or after a non-finite stop (the last
 * good state, unless the parameters themselves went bad); the exit code. */
static int finish(run *r, int rc, bool nonfinite)
{
    const train_opts *o = r->o;
    if (r->tty) printf("\n");
    if (nonfinite && !params_finite(r->ctx)) {
        printf("stopped on a non-finite value; the parameters already hold NaN/Inf, so %s was "
               "not overwritten\n", o->out);
    } else if (rc == CLI_OK || interrupted || nonfinite) {
        if (save(r->ctx, o->out, o->out_state, o, r->best, r->data_hash)) rc = cli_library_failed(r->cmd);
        else printf("%s %s at step %llu\n", interrupted ? "interrupted: saved"
                    : nonfinite ? "stopped on a non-finite value: saved the last good state in"
                                : "saved",
                    o->out, (unsigned long long)r->step);
        if (interrupted && rc == CLI_OK) rc = 130;
    }
    if (o->best && isfinite(r->best))
        printf("best eval loss %.4f in %s\n", (double)r->best, o->best);
    return rc;
}

/* The command after parsing: settings (saved ones on resume), data, model,
 * the loop, the final save. */
static int train_command(const char *cmd, train_opts *o)
{
    ngpt_train_state saved = {.best_eval_loss = INFINITY};
    int rc;
    if (o->resume) {
        if ((rc = resume_settings(cmd, o, &saved))) return rc;
        if (saved.has_state) warn_changed(o, &saved);
    } else if (o->init) {
        if ((rc = init_settings(cmd, o))) return rc;
        if (adapting(o) && (rc = adapter_settings(cmd, o, &saved))) return rc;
        if (saved.has_state) warn_changed(o, &saved);
    } else if (ngpt_config_validate(&o->cfg)) {
        return cli_error(cmd, CLI_USAGE, "%s", cli_library_error());
    }
    if ((rc = settle(cmd, o, &saved))) return rc;
    if (!o->threads) {      /* the default: the online cores, capped by the batch's rows */
        ngpt_shape s = {.mode = NGPT_MODE_TRAIN, .batch = o->batch, .seq = o->seq};
        o->threads = cli_threads_auto(&o->cfg, &s);
    }

    run r = {.cmd = cmd, .o = o, .tty = isatty(fileno(stdout)),
             .best = saved.has_state ? saved.best_eval_loss : INFINITY};
    bool nonfinite = false;
    if (!(rc = open_tokenizer(&r)) && !(rc = open_data(&r, &saved)) && !(rc = open_model(&r))) {
        report_start(&r);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigint;
        sigaction(SIGINT, &sa, NULL);
        rc = train_loop(&r, &nonfinite);
        rc = finish(&r, rc, nonfinite);
    }
    if (r.csv) fclose(r.csv);
    ngpt_context_free(r.ctx);
    ngpt_tokenizer_free(r.own_tok);
    ngpt_data_free(r.data);
    return rc;
}

int cli_cmd_train(int argc, char **argv)
{
    train_opts o = {.steps = 1000, .batch = 32, .seq = 0, .threads = 0, .eval_every = 100,
                    .eval_batches = 8, .seed = 42, .holdout = 0.1f, .opt = ngpt_optim_config_default(),
                    .out = "model.ngpt", .cfg = ngpt_config_default(),
                    .lc = ngpt_lora_config_default(), .topt = ngpt_template_options_default()};
    int rc = parse(argc, argv, &o);
    if (!rc) rc = train_command(argv[0], &o);
    else if (rc < 0) rc = CLI_OK;
    ngpt_adapter_close(o.ad);       /* after its context (train_command frees it) */
    ngpt_model_close(o.model);      /* after its context */
    free(o.adapter_state);
    free(o.out_state);
    free(o.best_state);
    return rc;
}
