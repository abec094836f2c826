/* grammar_bench.c — what constrained generation costs (make bench-grammar;
 * docs/BENCH.md, "Grammars"): with GPT-2's tokenizer (encoder.json and
 * vocab.bpe), the vocabulary's trie build, a ~10-field JSON Schema's compile
 * and index, the mask per token (median and worst over the states a
 * generation walks), and decode speed under the schema against free
 * decoding, greedy and sampled, on GPT-2 124M's shape with 8-bit weights and
 * on the Llama-family preset's shape (SmolLM2-135M's, GPT-2's vocabulary as
 * its V), random weights (speed does not depend on them).
 *
 *   tools/grammar_bench ENCODER_JSON VOCAB_BPE [THREADS] [TOKENS]
 *   tools/grammar_bench --hf TOKENIZER_JSON [THREADS] [TOKENS]
 *
 * The second form takes a Hugging Face tokenizer.json (Qwen's 151,669
 * tokens, say) and gives both shapes that vocabulary as their V.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grammar/grammar.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This process's CPU time: what the machine's other jobs do not inflate. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"title\":{\"type\":\"string\"},\"due\":{\"type\":\"string\",\"format\":\"date\"},"
    "\"priority\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3},"
    "\"done\":{\"type\":\"boolean\"},\"owner\":{\"type\":\"string\"},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"estimate\":{\"type\":\"number\"},\"kind\":{\"enum\":[\"bug\",\"feature\",\"chore\"]},"
    "\"notes\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]},"
    "\"id\":{\"type\":\"string\",\"format\":\"uuid\"}},"
    "\"required\":[\"title\",\"due\",\"priority\",\"done\",\"owner\",\"tags\",\"estimate\","
    "\"kind\",\"notes\",\"id\"]}";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct timing {
    double t_pref;
} timing;

static void prefilled(void *user) { ((timing *)user)->t_pref = now(); }

/* Decode tok/s of one generation (the prefill excluded). */
static double decode_rate(ngpt_context *ctx, ngpt_generate_config *gc, const int32_t *prompt,
                          int32_t n, int32_t *out, ngpt_generate_result *r)
{
    timing t = {0};
    gc->on_prefilled = prefilled;
    ngpt_status st = ngpt_context_generate(ctx, gc, prompt, n, out, gc->max_tokens, NULL, &t, r);
    double end = now();
    if (st) {
        fprintf(stderr, "generate: %s\n", ngpt_last_error());
        exit(1);
    }
    return (r->n_generated - 1) / (end - t.t_pref);     /* the first token comes from the prefill */
}

/* A mask's scratch for g (what a context plans), and its release. */
static ngpt_gwork work_new(const ngpt_grammar *g)
{
    const ngpt_gm_limits lim = {64, NGPT_GRAMMAR_STACKS};
    ngpt_gwork w = {.lim = lim, .gcap = ngpt_gwork_gbuf_words(lim)};
    w.gbuf = malloc(w.gcap * 4);
    for (int i = 0; i < 3; i++) w.s[i] = malloc(ngpt_gm_words(lim) * 4);
    w.tmp = calloc(((size_t)g->n_vocab + 63) / 64, 8);
    return w;
}

static void work_free(ngpt_gwork *w)
{
    free(w->gbuf), free(w->tmp);
    for (int i = 0; i < 3; i++) free(w->s[i]);
}

/* The mask of each state the tokens out[0..n) walk through, timed. */
static void mask_costs(const ngpt_grammar *g, const int32_t *out, int32_t n, double *median,
                       double *worst, int32_t *steps)
{
    ngpt_gwork w = work_new(g);
    const size_t words = ngpt_gm_words(w.lim);
    uint64_t *mask = calloc(((size_t)g->n_vocab + 63) / 64, 8);
    uint32_t *st = malloc(words * 4), *next = malloc(words * 4);
    double *t = malloc(((size_t)n + 1) * sizeof *t);
    ngpt_gm_start(&g->a, st);
    int32_t k = 0;
    for (int32_t i = 0; i <= n; i++) {
        double best = 1e30;     /* the least of 5: another job's time slice is not the mask's */
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now();
            ngpt_grammar_mask(g, st, mask, &w);
            double dt = now() - t0;
            best = dt < best ? dt : best;
        }
        t[k++] = best;
        if (i == n || ngpt_grammar_advance(g, st, out[i], next, &w) != NGPT_GM_OK) break;
        uint32_t *x = st;
        st = next, next = x;
    }
    qsort(t, (size_t)k, sizeof *t, cmp_double);
    *median = t[k / 2] * 1e6, *worst = t[k - 1] * 1e6, *steps = k;
    work_free(&w);
    free(mask), free(st), free(next), free(t);
}

/* The mask of every automaton state alone (a one-frame stack): the worst a
 * step can cost, indexed, and walked whole (a state without its index). */
static void mask_all_states(ngpt_grammar *g, double *worst, double *worst_walked)
{
    ngpt_gwork w = work_new(g);
    uint64_t *mask = calloc(((size_t)g->n_vocab + 63) / 64, 8);
    *worst = *worst_walked = 0;
    for (int walked = 0; walked < 2; walked++)
        for (int32_t q = 0; q < g->a.n_states; q++) {
            if (!g->a.has_out[q]) continue;
            uint32_t st[4] = {1, 2, 1, (uint32_t)q};
            const uint8_t mode = g->idx[q].mode;
            if (walked) g->idx[q].mode = NGPT_GIDX_WALK;
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                double t0 = now();
                ngpt_grammar_mask(g, st, mask, &w);
                double dt = now() - t0;
                best = dt < best ? dt : best;
            }
            g->idx[q].mode = mode;
            double *x = walked ? worst_walked : worst;
            if (best * 1e6 > *x) *x = best * 1e6;
        }
    work_free(&w);
    free(mask);
}

static ngpt_context *model(const char *settings, int32_t threads)
{
    ngpt_config c = ngpt_config_default();
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save))
        if (ngpt_config_set(&c, kv)) {
            fprintf(stderr, "%s\n", ngpt_last_error());
            exit(1);
        }
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads;
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0) || ngpt_context_params_init(ctx, 42)) {
        fprintf(stderr, "%s\n", ngpt_last_error());
        exit(1);
    }
    return ctx;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: grammar_bench (ENCODER_JSON VOCAB_BPE | --hf TOKENIZER_JSON) "
                        "[THREADS] [TOKENS]\n");
        return 2;
    }
    const bool hf = !strcmp(argv[1], "--hf");
    const int32_t threads = argc > 3 ? atoi(argv[3]) : 1, tokens = argc > 4 ? atoi(argv[4]) : 64;
    char cpu[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    for (char line[512]; f && fgets(line, sizeof line, f);)
        if (!strncmp(line, "model name", 10)) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
    printf("CPU: %s; %s; %d thread(s)\n", cpu, ngpt_build_info(), (int)threads);

    ngpt_tokenizer *tok = NULL;
    if (hf ? ngpt_tokenizer_load_hf(&tok, argv[2]) : ngpt_tokenizer_load_gpt2(&tok, argv[1], argv[2])) {
        fprintf(stderr, "%s\n", ngpt_last_error());
        return 1;
    }
    /* the trie once (first grammar), then a compile that reuses it: wall and CPU time */
    double t0 = now(), c0 = cpu_now();
    const ngpt_tok_trie *trie = ngpt_tok_trie_of(tok);
    double t1 = now(), c1 = cpu_now();
    ngpt_grammar *g = NULL, *any = NULL;
    if (ngpt_grammar_from_json_schema(&g, tok, SCHEMA, sizeof SCHEMA - 1)) {
        fprintf(stderr, "%s\n", ngpt_last_error());
        return 1;
    }
    double t2 = now(), c2 = cpu_now();
    ngpt_grammar_from_json_schema(&any, tok, "{}", 2);
    double t3 = now(), c3 = cpu_now();
    int32_t walked = 0;
    for (int32_t q = 0; q < g->a.n_states; q++) walked += g->idx[q].mode == NGPT_GIDX_WALK && g->a.has_out[q];
    printf("vocabulary: %d tokens, trie %d nodes built in %.1f ms (CPU %.1f ms; once per "
           "tokenizer)\n", (int)trie->n_toks, (int)trie->n_nodes, 1e3 * (t1 - t0), 1e3 * (c1 - c0));
    printf("10-field schema: compile + index %.1f ms (CPU %.1f ms; %d automaton states, %d walked "
           "at run time); any JSON: %.1f ms (CPU %.1f ms)\n", 1e3 * (t2 - t1), 1e3 * (c2 - c1),
           (int)g->a.n_states, (int)walked, 1e3 * (t3 - t2), 1e3 * (c3 - c2));

    double worst, worst_walked;
    mask_all_states(g, &worst, &worst_walked);
    printf("mask of each of the schema's states alone: worst %.1f us indexed, %.1f us walked "
           "whole (a state past the index's budget)\n", worst, worst_walked);
    static const char *const presets[2][2] = {
        {"GPT-2 124M q8", "T=1024 C=768 L=12 H=12 d_ff=3072 pos=learned qkv_bias=1 "
                          "proj_bias=1 gelu=tanh weights=q8"},
        {"Llama-family (SmolLM2-135M shape, the tokenizer's V) q8",
         "T=2048 C=576 L=30 H=9 kv_heads=3 d_ff=1536 norm_type=rms mlp=swiglu mlp_bias=0 "
         "rope_pairs=halves rope_theta=100000 weights=q8"}};
    ngpt_tokenizer_info ti;
    ngpt_tokenizer_describe(tok, &ti);
    int32_t prompt[8];
    size_t np = 0;
    ngpt_tokenizer_encode(tok, "JSON: ", 6, prompt, 8, &np);
    int32_t *out = malloc((size_t)tokens * sizeof *out);
    for (int p = 0; p < 2; p++) {
        char shape[512];
        snprintf(shape, sizeof shape, "V=%d %s", (int)ti.n_tokens, presets[p][1]);
        ngpt_context *ctx = model(shape, threads);
        if (ngpt_context_tokenizer_set(ctx, tok)) {
            fprintf(stderr, "%s\n", ngpt_last_error());
            return 1;
        }
        for (int sampled = 0; sampled < 2; sampled++) {
            ngpt_generate_config gc = ngpt_generate_config_default();
            gc.max_tokens = tokens;
            gc.ignore_end = true;
            gc.sampler.temperature = sampled ? 1.0f : 0.0f;
            gc.sampler.seed = 7;
            ngpt_generate_result r;
            double free_rate = 0, con_rate = 0, med = 0, worst = 0;
            int32_t steps = 0, n_con = 0;
            for (int rep = 0; rep < 5; rep++) {     /* alternated, the best of each */
                gc.grammar = NULL;
                double a = decode_rate(ctx, &gc, prompt, (int32_t)np, out, &r);
                gc.grammar = g;
                double b = decode_rate(ctx, &gc, prompt, (int32_t)np, out, &r);
                free_rate = a > free_rate ? a : free_rate;
                con_rate = b > con_rate ? b : con_rate;
                n_con = r.n_generated;
            }
            mask_costs(g, out, r.n_tokens, &med, &worst, &steps);
            printf("%s, %s: free %.1f tok/s, under the schema %.1f tok/s (%d tokens, %s): %.3fx; "
                   "mask %.1f us median, %.1f us worst over %d states\n", presets[p][0],
                   sampled ? "sampled (T=1)" : "greedy", free_rate, con_rate, (int)n_con,
                   ngpt_stop_reason_string(r.reason), con_rate / free_rate, med, worst,
                   (int)steps);
        }
        ngpt_context_free(ctx);
    }
    free(out);
    ngpt_grammar_free(g);
    ngpt_grammar_free(any);
    ngpt_tokenizer_free(tok);
    return 0;
}
