/* cmd_bench.c — `ngpt bench`: how fast this build runs a model on this
 * machine (prefill, decode, training, kernels against a measured FMA peak,
 * memory), as markdown tables, JSON and an SVG chart. This file is the
 * command: its options, their checks through the public API, and where the
 * output goes; the measuring is bench/'s (bench/ngpt_bench.h), which knows
 * nothing of the tool. docs/BENCH.md says what each figure measures and how. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ngpt_bench.h"

/* The bench's sections return the tool's exit codes. */
_Static_assert((int)BENCH_OK == (int)CLI_OK && (int)BENCH_FAILED == (int)CLI_FAILED &&
                   (int)BENCH_USAGE == (int)CLI_USAGE,
               "bench/ngpt_bench.h's exit codes are the tool's");

#ifndef NGPT_CORPUS_PATH
#define NGPT_CORPUS_PATH "build/corpus.txt"
#endif

static const char *const HELP =
    "usage: ngpt bench [--config key=value ...]\n"
    "                  [--preset default|gpt2-small|gpt2-124m|smollm2-135m|\n"
    "                            qwen2.5-0.5b|qwen3-0.6b|llama3.2-1b|gemma3-270m]\n"
    "                  [--model FILE] [--threads N[,N...]] [--json FILE] [--svg FILE] [--quick]\n"
    "                  [--runs N] [--warmup N] [--kernels all|none|NAME,...]\n"
    "                  [--prompt N] [--weights f32,q8,q4] [--lm-head q8|q4]\n"
    "                  [--decode-at N] [--no-train]\n"
    "                  [--bandwidth-mib N | --no-bandwidth]\n"
    "                  [--tokenizer FILE [--text FILE]]\n\n"
    "Measures this build on this machine: an FMA peak probe, a read-bandwidth\n"
    "probe (one thread and two), every kernel of the list (GFLOP/s with % of that\n"
    "peak, GB/s), prefill (a T/2-token prompt, and 5 positions), decode (256 new\n"
    "tokens, batch 1 and 4) and a fixed speculative workload (plain, prompt lookup,\n"
    "self-draft) with float32 and quantized weights (at batch 1 also the estimated\n"
    "weight bytes read per token x tok/s, in GB/s and % of the read bandwidth), training steps\n"
    "(B=8 T=128 and B=32 T=256), a LoRA adapter's (r=16, every Linear) training\n"
    "steps and decode with it applied, for each --weights,\n"
    "arena bytes and peak RSS. Each figure is the median of several runs after a\n"
    "warm-up, with min - max. Prints markdown tables; progress goes to stderr.\n"
    "docs/BENCH.md says what each figure is.\n\n"
    "  --config key=value model config (see ngpt init --help), after the preset\n"
    "  --model FILE       a model's config, weights and tokenizer (e.g. ngpt\n"
    "                     import's): a float32 one's q8 and q4 figures quantize it as\n"
    "                     ngpt quantize does; an 8-bit or 4-bit one runs its own\n"
    "                     weights only, without the training figures (train its\n"
    "                     float32 original); not with --preset, --config or --tokenizer\n"
    "  --preset NAME      default (V=256 T=256 C=256 L=4 H=4 d_ff=1024) or\n"
    "                     gpt2-small (C=768 L=12 H=12 d_ff=3072 T=1024, V=256) or\n"
    "                     gpt2-124m (gpt2-small with V=50257 and GPT-2's wiring:\n"
    "                     pos=learned qkv_bias=1 proj_bias=1 gelu=tanh) or\n"
    "                     smollm2-135m (V=49152 T=2048 C=576 L=30 H=9 kv_heads=3\n"
    "                     d_ff=1536, RMSNorm, SwiGLU, no biases, RoPE halves, tied)\n"
    "                     or the shapes of Qwen2.5-0.5B (V=151936 C=896 L=24 H=14\n"
    "                     kv_heads=2 d_ff=4864, q/k/v biases), Qwen3-0.6B\n"
    "                     (V=151936 C=1024 L=28 H=16 kv_heads=8 head_dim=128\n"
    "                     d_ff=3072, qk_norm), Llama-3.2-1B (V=128256 C=2048\n"
    "                     L=16 H=32 kv_heads=8 d_ff=8192, rope_scaling=llama3)\n"
    "                     and Gemma-3-270M (V=262144 C=640 L=18 H=4 kv_heads=1\n"
    "                     head_dim=256 d_ff=2048, GeGLU, sandwich norms, windows\n"
    "                     of 512 in five layers of six), each as ngpt import makes\n"
    "                     it: RMSNorm, RoPE halves, tied, T=4096 (with --prompt\n"
    "                     512 and --no-train)\n"
    "  --threads N,...    run every figure for each thread count (default 1)\n"
    "  --json FILE        also write the figures as JSON (- : JSON on stdout instead\n"
    "                     of the tables)\n"
    "  --svg FILE         also draw a chart: tokens/s per workload, GFLOP/s per kernel\n"
    "  --quick            fewer runs (about a minute for the default model); a model\n"
    "                     above 16M parameters skips training at B=32 T=256 and\n"
    "                     decodes 64 tokens instead of 256\n"
    "  --runs N           timed runs per figure (default 10, --quick 5)\n"
    "  --warmup N         untimed runs before them (default 1)\n"
    "  --kernels LIST     the kernel table: all (default), none, or kernels of the\n"
    "                     list by name, e.g. gemm,softmax\n"
    "  --prompt N         the prefill's prompt length (default T/2), e.g. to compare\n"
    "                     with what ngpt generate reports for a prompt\n"
    "  --decode-at N      also decode 16 tokens after an N-token prompt with a float32\n"
    "                     and an 8-bit KV cache (ngpt generate --kv), for each --weights\n"
    "  --weights LIST     the weights prefill and decode run with, a list of f32, q8\n"
    "                     and q4 (the same model quantized, ngpt quantize; default\n"
    "                     f32,q8);\n"
    "                     training is float32, LoRA training runs on each\n"
    "  --lm-head q4       the q4 runs with a 4-bit lm_head (ngpt quantize --lm-head\n"
    "                     q4), reported as q4h; needs q4 in --weights\n"
    "  --no-train         no training and no LoRA figures (for a model of 0.5B\n"
    "                     parameters or more: training holds 16 bytes per parameter)\n"
    "  --bandwidth-mib N  the read-bandwidth probe's array in MiB (default 4x the\n"
    "                     last-level cache, at least 512; less on a small board)\n"
    "  --no-bandwidth     no read-bandwidth probe (quick runs; no % read bw)\n"
    "  --tokenizer FILE   a BPE model's figures: V = the tokenizer's tokens (a tokenizer\n"
    "                     file or a checkpoint that carries one), and bytes/s = tok/s\n"
    "                     x its bytes per token on --text (default: the bundled corpus,\n"
    "                     " NGPT_CORPUS_PATH ")\n";

enum { BIG_MODEL_PARAMS = 16 * 1000 * 1000 };

/* --bandwidth-mib's largest: 1 TiB, or half the address space (32-bit). */
static int32_t max_bandwidth_mib(void)
{
    const size_t half = (SIZE_MAX >> 20) / 2;
    return half < ((size_t)1 << 20) ? (int32_t)half : (int32_t)1 << 20;
}

/* --tokenizer: V, and its bytes per token on o->text. */
/* V and bytes per token of --text from tok. */
static int measure_tokenizer(const char *cmd, const ngpt_tokenizer *tok, bench_opts *o)
{
    int rc = CLI_OK;
    ngpt_tokenizer_info info;
    ngpt_tokenizer_describe(tok, &info);
    o->cfg.vocab_size = info.n_tokens;
    size_t n = 0, n_ids = 0;
    char *text = cli_read_file(o->text, &n);
    if (!text || !n) rc = cli_error(cmd, CLI_FAILED, "cannot read --text %s (or it is empty)", o->text);
    else if (ngpt_tokenizer_encode(tok, text, n, NULL, 0, &n_ids)) rc = cli_library_failed(cmd);
    else o->bytes_per_token = (double)n / (double)n_ids;
    free(text);
    return rc;
}

static int apply_tokenizer(const char *cmd, bench_opts *o)
{
    ngpt_tokenizer *tok;
    int rc = cli_load_tokenizer(cmd, o->tokenizer, &tok);
    if (!rc) rc = measure_tokenizer(cmd, tok, o);
    ngpt_tokenizer_free(tok);
    return rc;
}

static bool parse_threads(const char *cmd, const char *s, bench_opts *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->n_threads = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (o->n_threads == BENCH_MAX_THREADS) {
            cli_error(cmd, CLI_USAGE, "--threads: at most %d counts", BENCH_MAX_THREADS);
            return false;
        }
        if (!cli_parse_i32(cmd, "--threads", tok, 1, 1024, &o->threads[o->n_threads])) return false;
        o->n_threads++;
    }
    if (o->n_threads == 0) cli_error(cmd, CLI_USAGE, "--threads expects N or N,N,...");
    return o->n_threads > 0;
}

static bool parse_weights(const char *cmd, const char *s, bench_opts *o)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    o->n_weights = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        const ngpt_weights w = !strcmp(tok, "q8")   ? NGPT_WEIGHTS_Q8
                               : !strcmp(tok, "q4") ? NGPT_WEIGHTS_Q4
                                                    : NGPT_WEIGHTS_F32;
        bool again = false;
        for (int i = 0; i < o->n_weights; i++) again |= o->weights[i] == w;
        if ((w == NGPT_WEIGHTS_F32 && strcmp(tok, "f32")) || again) {
            cli_error(cmd, CLI_USAGE, "--weights expects a list of f32, q8 and q4 (each once), "
                      "got \"%s\"", s);
            return false;
        }
        o->weights[o->n_weights++] = w;
    }
    if (o->n_weights == 0) cli_error(cmd, CLI_USAGE, "--weights expects a list of f32, q8 and q4");
    return o->n_weights > 0;
}

/* The presets: a name and its --config settings over the defaults. */
static const struct preset {
    const char *name, *settings;
} PRESETS[] = {
    {"default", ""},
    {"gpt2-small", "C=768 L=12 H=12 d_ff=3072 T=1024"},
    /* GPT-2 124M's shape and wiring (a tied head, as GPT-2's) */
    {"gpt2-124m", "V=50257 C=768 L=12 H=12 d_ff=3072 T=1024 pos=learned qkv_bias=1 proj_bias=1 "
                  "gelu=tanh"},
    /* SmolLM2-135M's shape (Hugging Face's config.json): V=49152, 9 query
     * heads of 64 on C=576 and 3 key/value heads, RMSNorm, SwiGLU, no
     * biases, RoPE on halves (theta 100000), tied embedding */
    {"smollm2-135m", "V=49152 T=2048 C=576 L=30 H=9 kv_heads=3 d_ff=1536 norm_type=rms "
                     "mlp=swiglu mlp_bias=0 rope_pairs=halves rope_theta=100000"},
    /* The Qwen and Llama 3 shapes, from their published config.json files as
     * ngpt import maps them (T: its default context, 4096; tied heads):
     * Qwen2.5-0.5B, biases on q, k and v only */
    {"qwen2.5-0.5b", "V=151936 T=4096 C=896 L=24 H=14 kv_heads=2 d_ff=4864 norm_type=rms "
                     "norm_eps=1e-6 mlp=swiglu mlp_bias=0 rope_pairs=halves rope_theta=1000000 "
                     "qkv_bias=1"},
    /* Qwen3-0.6B: head_dim 128 (H*D = 2048 > C), RMSNorm on each head of q and k */
    {"qwen3-0.6b", "V=151936 T=4096 C=1024 L=28 H=16 kv_heads=8 head_dim=128 d_ff=3072 "
                   "norm_type=rms norm_eps=1e-6 mlp=swiglu mlp_bias=0 rope_pairs=halves "
                   "rope_theta=1000000 qk_norm=1"},
    /* Llama-3.2-1B: Llama 3's rope_scaling (factor 32, original context 8192) */
    {"llama3.2-1b", "V=128256 T=4096 C=2048 L=16 H=32 kv_heads=8 d_ff=8192 norm_type=rms "
                    "mlp=swiglu mlp_bias=0 rope_pairs=halves rope_theta=500000 "
                    "rope_scaling=llama3 rope_factor=32 rope_low_freq_factor=1 "
                    "rope_high_freq_factor=4 rope_original_context=8192"},
    /* Gemma-3-270M: (1 + w) RMSNorms, a norm after each branch, GeGLU,
     * sqrt(C) rounded to bfloat16, query_pre_attn_scalar 256, five local
     * layers of six with windows of 512 and their own RoPE base */
    {"gemma3-270m", "V=262144 T=4096 C=640 L=18 H=4 kv_heads=1 head_dim=256 d_ff=2048 "
                    "norm_type=rms norm_eps=1e-6 norm_offset=1 norm=sandwich mlp=geglu gelu=tanh "
                    "mlp_bias=0 rope_pairs=halves qk_norm=1 rope_theta=1000000 sliding_window=512 "
                    "sliding_pattern=6 rope_local_theta=10000 attn_scalar=256 emb_scale=25.25"},
};

static bool apply_preset(const char *cmd, const char *name, ngpt_config *cfg)
{
    *cfg = ngpt_config_default();
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++) {
        if (strcmp(name, PRESETS[i].name)) continue;
        char buf[512];
        snprintf(buf, sizeof buf, "%s", PRESETS[i].settings);
        for (char *kv = strtok(buf, " "); kv; kv = strtok(NULL, " "))
            if (ngpt_config_set(cfg, kv)) return false;
        return true;
    }
    char names[256];
    size_t n = 0;
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0] && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", PRESETS[i].name);
    cli_error(cmd, CLI_USAGE, "--preset expects one of %s, got \"%s\"", names, name);
    return false;
}

/* --model, opened once (*model: the caller closes it): its config and
 * whether it carries a tokenizer (for bytes/s); every context loads from
 * the open model. A quantized model runs its own weights only (weights_set:
 * --weights was given) and trains nothing; o->cfg is then its float32 twin,
 * as the bench's config always is. */
static int apply_model(const char *cmd, bench_opts *o, ngpt_model **model, bool weights_set)
{
    const ngpt_tokenizer *tok = NULL;
    if (ngpt_model_open(model, o->model) || ngpt_model_config(*model, &o->cfg) ||
        ngpt_model_tokenizer(*model, &tok))
        return cli_library_failed(cmd);
    o->opened = *model;
    if (o->cfg.weights != NGPT_WEIGHTS_F32) {
        const bool own = o->n_weights == 1 && o->weights[0] == o->cfg.weights &&
                         (!o->lm_head_q4 || o->cfg.lm_head_q4);
        if (weights_set && !own)
            return cli_error(cmd, CLI_USAGE, "--model %s holds %s weights%s, which run as they "
                             "are: leave out --weights, or bench its float32 original", o->model,
                             o->cfg.weights == NGPT_WEIGHTS_Q8 ? "8-bit" : "4-bit",
                             o->cfg.lm_head_q4 ? " and lm_head" : "");
        o->weights[0] = o->cfg.weights, o->n_weights = 1, o->lm_head_q4 = o->cfg.lm_head_q4;
        o->cfg.weights = NGPT_WEIGHTS_F32, o->cfg.lm_head_q4 = false;
        o->no_train = true;
    }
    if (tok) o->tokenizer = o->model;   /* measured from the open model, not read again */
    return CLI_OK;
}

/* "ngpt bench --quick ..." with arguments that hold blanks quoted. */
static void command_line(int argc, char **argv, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "ngpt");
    for (int i = 0; i < argc && n < size; i++) {
        const char *q = strpbrk(argv[i], " \t\"'") ? "'" : "";
        n += (size_t)snprintf(buf + n, size - n, " %s%s%s", q, argv[i], q);
    }
}

static int write_file(const char *cmd, const char *path, const bench_opts *o, const bench_report *r,
                      void (*print)(FILE *, const bench_opts *, const bench_report *))
{
    FILE *f = fopen(path, "w");
    if (!f) return cli_error(cmd, CLI_FAILED, "cannot write %s", path);
    print(f, o, r);
    if (fclose(f) != 0) return cli_error(cmd, CLI_FAILED, "cannot write %s", path);
    return CLI_OK;
}

/* Everything before the runs: --model (opened once into *model) or the
 * preset, --config, the tokenizer, the limits; the CPU checked against
 * the build. */
static int bench_setup(const char *cmd, bench_opts *o, ngpt_model **model, const char **configs,
                       int n_configs, int32_t bandwidth_mib, bool weights_set, int argc,
                       char **argv)
{
    if (o->model) {
        int mrc = apply_model(cmd, o, model, weights_set);
        if (mrc) return mrc;
    } else if (!apply_preset(cmd, o->preset, &o->cfg)) {
        return CLI_USAGE;
    }
    for (int i = 0; i < n_configs; i++)
        if (ngpt_config_set(&o->cfg, configs[i]))
            return cli_error(cmd, CLI_USAGE, "--config %s: %s", configs[i], cli_library_error());
    if (o->text && !o->tokenizer) return cli_error(cmd, CLI_USAGE, "--text needs --tokenizer");
    if (!o->text) o->text = NGPT_CORPUS_PATH;
    const ngpt_tokenizer *model_tok = NULL;
    if (o->opened) ngpt_model_tokenizer(o->opened, &model_tok);
    int trc = model_tok ? measure_tokenizer(cmd, model_tok, o)
              : o->tokenizer ? apply_tokenizer(cmd, o) : CLI_OK;
    if (trc) return trc;
    if (ngpt_config_validate(&o->cfg)) return cli_error(cmd, CLI_USAGE, "%s", cli_library_error());
    if (o->cfg.weights != NGPT_WEIGHTS_F32)
        return cli_error(cmd, CLI_USAGE, "--config weights=q8|q4: the bench trains the float32 "
                         "model; choose the weights of prefill and decode with --weights");
    if (o->prompt_tokens > o->cfg.context_len)
        return cli_error(cmd, CLI_USAGE, "--prompt %d is longer than the model's context T=%d",
                         (int)o->prompt_tokens, (int)o->cfg.context_len);
    if (o->decode_at && o->decode_at > o->cfg.context_len - 16)
        return cli_error(cmd, CLI_USAGE, "--decode-at %d: the prompt and 16 new tokens exceed the "
                         "model's context T=%d", (int)o->decode_at, (int)o->cfg.context_len);
    size_t params = 0;
    ngpt_config_param_count(&o->cfg, &params);
    if (!o->runs) o->runs = o->quick ? 5 : 10;
    o->budget_s = o->quick ? 6.0 : 30.0;
    o->min_run_s = o->quick ? 0.02 : 0.05;
    /* --quick on a big model: no B=32 T=256 step (a minute or more, GiBs of
     * arena) and 64 decode tokens instead of 256 */
    const bool quick_big = o->quick && params > BIG_MODEL_PARAMS;
    o->big_train = !quick_big;
    o->decode_tokens = quick_big ? 64 : 256;
    o->bandwidth_bytes = bandwidth_mib < 0 ? bench_bandwidth_default_bytes() : (size_t)bandwidth_mib << 20;
    command_line(argc, argv, o->command, sizeof o->command);

    /* the kernel table runs the kernels directly: let the library check the
     * CPU against the build first (a tiny context), rather than meet SIGILL */
    ngpt_config tiny = ngpt_config_default();
    tiny.context_len = 8, tiny.d_model = 8, tiny.n_layers = 1, tiny.n_heads = 2, tiny.d_ff = 16;
    ngpt_shape tiny_shape = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *probe = NULL;
    if (ngpt_context_init(&probe, NULL, &tiny, &tiny_shape, NULL, 0)) return cli_library_failed(cmd);
    ngpt_context_free(probe);
    return CLI_OK;
}

/* The runs and their report (stdout, --json, --svg). */
static int bench_all(const char *cmd, bench_opts *o, const char *json, const char *svg)
{
    bench_report *r = calloc(1, sizeof *r);
    if (!r) return cli_error(cmd, CLI_FAILED, "out of memory");
    int rc = bench_run(o, r);
    if (!rc) {
        bool json_stdout = json && !strcmp(json, "-");
        if (json_stdout) bench_print_json(stdout, o, r);
        else bench_print_markdown(stdout, o, r);
        if (json && !json_stdout) rc = write_file(cmd, json, o, r, bench_print_json);
        if (svg && !rc) rc = write_file(cmd, svg, o, r, bench_print_svg);
        if (r->kernel_differs && !rc)
            rc = cli_error(cmd, CLI_FAILED, "a kernel gives other bits than the reference (its "
                           "row says so): this build is broken, run make test");
    }
    free(r);
    return rc;
}

int cli_cmd_bench(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    bench_opts o = {.preset = "default", .threads = {1}, .n_threads = 1, .runs = 0, .warmup = 1,
                    .kernels = "all", .weights = {NGPT_WEIGHTS_F32, NGPT_WEIGHTS_Q8},
                    .n_weights = 2};
    const char *configs[64], *json = NULL, *svg = NULL, *v;
    int n_configs = 0;
    int32_t bandwidth_mib = -1;     /* -1: the probe's default size */
    bool weights_set = false;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_flag(&a, "--quick")) {
            o.quick = true;
        } else if (cli_opt(&a, "--config", &v)) {
            if (!v) return CLI_USAGE;
            if (n_configs == 64) return cli_error(a.cmd, CLI_USAGE, "at most 64 --config");
            configs[n_configs++] = v;
        } else if (cli_opt(&a, "--preset", &v)) {
            if (!v) return CLI_USAGE;
            o.preset = v;
        } else if (cli_opt(&a, "--threads", &v)) {
            if (!v || !parse_threads(a.cmd, v, &o)) return CLI_USAGE;
        } else if (cli_opt(&a, "--json", &v)) {
            if (!(json = v)) return CLI_USAGE;
        } else if (cli_opt(&a, "--svg", &v)) {
            if (!(svg = v)) return CLI_USAGE;
        } else if (cli_opt(&a, "--runs", &v)) {
            if (!v || !cli_parse_i32(a.cmd, "--runs", v, 1, BENCH_MAX_RUNS, &o.runs)) return CLI_USAGE;
        } else if (cli_opt(&a, "--warmup", &v)) {
            if (!v || !cli_parse_i32(a.cmd, "--warmup", v, 0, 100, &o.warmup)) return CLI_USAGE;
        } else if (cli_opt(&a, "--prompt", &v)) {
            if (!v || !cli_parse_i32(a.cmd, "--prompt", v, 1, INT32_MAX, &o.prompt_tokens))
                return CLI_USAGE;
        } else if (cli_opt(&a, "--decode-at", &v)) {
            if (!v || !cli_parse_i32(a.cmd, "--decode-at", v, 1, INT32_MAX, &o.decode_at))
                return CLI_USAGE;
        } else if (cli_opt(&a, "--kernels", &v)) {
            if (!(o.kernels = v)) return CLI_USAGE;
        } else if (cli_flag(&a, "--no-train")) {
            o.no_train = true;
        } else if (cli_flag(&a, "--no-bandwidth")) {
            bandwidth_mib = 0;
        } else if (cli_opt(&a, "--bandwidth-mib", &v)) {
            if (!v || !cli_parse_i32(a.cmd, "--bandwidth-mib", v, 1, max_bandwidth_mib(), &bandwidth_mib))
                return CLI_USAGE;
        } else if (cli_opt(&a, "--weights", &v)) {
            if (!v || !parse_weights(a.cmd, v, &o)) return CLI_USAGE;
            weights_set = true;
        } else if (cli_opt(&a, "--lm-head", &v)) {
            if (!cli_parse_lm_head(a.cmd, v, &o.lm_head_q4)) return CLI_USAGE;
        } else if (cli_opt(&a, "--tokenizer", &v)) {
            if (!(o.tokenizer = v)) return CLI_USAGE;
        } else if (cli_opt(&a, "--model", &v)) {
            if (!(o.model = v)) return CLI_USAGE;
        } else if (cli_opt(&a, "--text", &v)) {
            if (!(o.text = v)) return CLI_USAGE;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed || !bench_kernels_valid(&o)) return CLI_USAGE;
    bool has_q4 = false;
    for (int i = 0; i < o.n_weights; i++) has_q4 |= o.weights[i] == NGPT_WEIGHTS_Q4;
    if (o.lm_head_q4 && !has_q4 && !o.model)
        return cli_error(a.cmd, CLI_USAGE, "--lm-head q4 changes the q4 runs: add q4 to --weights");
    if (o.model && (n_configs || strcmp(o.preset, "default") || o.tokenizer))
        return cli_error(a.cmd, CLI_USAGE, "--model takes the model's config and tokenizer: "
                         "leave out --preset, --config and --tokenizer");
    ngpt_model *model = NULL;
    int rc = bench_setup(a.cmd, &o, &model, configs, n_configs, bandwidth_mib, weights_set, argc,
                         argv);
    if (!rc) rc = bench_all(a.cmd, &o, json, svg);
    ngpt_model_close(model);
    return rc;
}
