/* test_grammar_generate.c — generation under a grammar: every output of
 * greedy, sampled (temperature 1, top-k/p, min-p, penalty), beam and
 * speculative decoding is a text of the grammar (or a prefix, when cut);
 * the mask comes before the sampler's other steps (the same tokens as
 * banning what the grammar refuses, checked token by token); greedy's
 * shortcut gives what masking every step gives; speculative decoding gives
 * plain constrained decoding's text; 1 and 3 threads agree; the stop
 * reasons (complete, cut by max_tokens, deeper than planned); byte and BPE
 * models; a grammar compiled for another vocabulary is refused. */
#include "generate/constrain.h"
#include "grammar_cases.h"

enum { T = 96 };

static const char OBJECT_GBNF[] =
    "root ::= \"{\\\"n\\\":\" num \",\\\"tags\\\":[\" (str (\",\" str){0,2})? \"],\\\"ok\\\":\" "
    "(\"true\" | \"false\") \"}\"\n"
    "num ::= \"-\"? ([0-9] | [1-9] [0-9]{1,3})\n"
    "str ::= \"\\\"\" [a-z \\xc3\\xa9]{0,6} \"\\\"\"\n";

static ngpt_context *make(int32_t V, int threads, uint64_t seed, const ngpt_tokenizer *tok,
                          int32_t batch, int32_t depth)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = V, c.context_len = T, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.d_ff = 64;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads, s.batch = batch, s.draft_tokens = 4, s.grammar_depth = depth;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    if (!ctx) return NULL;
    CHECK_OK(ngpt_context_params_init(ctx, seed));
    if (tok) CHECK_OK(ngpt_context_tokenizer_set(ctx, tok));
    return ctx;
}

typedef struct run {
    int32_t out[T + 300];
    int32_t streamed[T + 300];
    int32_t n_streamed;
    ngpt_generate_result r;
    ngpt_status st;
} run;

static int on_token(int32_t t, void *user)
{
    run *r = user;
    r->streamed[r->n_streamed++] = t;
    return 0;
}

static void generate(ngpt_context *ctx, const ngpt_generate_config *gc, const char *prompt, run *r)
{
    const ngpt_tokenizer *tk = NULL;
    ngpt_context_tokenizer(ctx, &tk);
    int32_t ids[64];
    size_t n = strlen(prompt);
    if (tk) CHECK_OK(ngpt_tokenizer_encode(tk, prompt, n, ids, 64, &n));
    else for (size_t i = 0; i < n; i++) ids[i] = (uint8_t)prompt[i];
    memset(r, 0, sizeof *r);
    r->st = ngpt_context_generate(ctx, gc, ids, (int32_t)n, r->out, T + 300, on_token, r, &r->r);
    CHECK(r->st == NGPT_OK, "generate: %s", ngpt_last_error());
}

/* Whether the output is a text of g (complete), or a prefix of one. */
static int check_text(const ngpt_grammar *g, const ngpt_tokenizer *tk, const run *r, bool whole)
{
    uint8_t text[4096];
    size_t n = 0;
    if (tk) CHECK_OK(ngpt_tokenizer_decode(tk, r->out, (size_t)r->r.n_tokens, text, sizeof text, &n));
    else for (int32_t i = 0; i < r->r.n_tokens; i++) text[n++] = (uint8_t)r->out[i];
    const ngpt_gm_limits lim = {64, 16};
    uint32_t *a = malloc(ngpt_gm_words(lim) * 4), *b = malloc(ngpt_gm_words(lim) * 4),
             *c = malloc(ngpt_gm_words(lim) * 4);
    ngpt_gm_start(&g->a, a);
    int rc = ngpt_gm_advance(&g->a, lim, a, text, n, b, c, NULL);
    if (n == 0) ngpt_gm_copy(b, a);
    bool ok = rc == NGPT_GM_OK && (!whole || ngpt_gm_can_end(b));
    CHECK(ok, "the output \"%.*s\" (%s) is %s of the grammar", (int)n, (const char *)text,
          ngpt_stop_reason_string(r->r.reason), whole ? "a text" : "a prefix of a text");
    free(a), free(b), free(c);
    return ok;
}

static void check_run(const ngpt_grammar *g, const ngpt_tokenizer *tk, const run *r)
{
    const ngpt_stop_reason why = r->r.reason;
    check_text(g, tk, r, why == NGPT_STOP_GRAMMAR_COMPLETE || why == NGPT_STOP_END_TOKEN ||
                             why == NGPT_STOP_MAX_TOKENS);
    CHECK(r->n_streamed == r->r.n_tokens &&
              !memcmp(r->streamed, r->out, (size_t)r->n_streamed * sizeof *r->out),
          "the streamed tokens are the output");
}

static bool same_run(const run *a, const run *b)
{
    return a->r.n_tokens == b->r.n_tokens && a->r.reason == b->r.reason &&
           a->r.n_generated == b->r.n_generated &&
           !memcmp(a->out, b->out, (size_t)a->r.n_tokens * sizeof *a->out);
}

/* The samplers each model is driven with: greedy, then sampled ones. */
static ngpt_sampler sampler(int k, uint64_t seed)
{
    ngpt_sampler s = ngpt_sampler_default();
    s.seed = seed;
    if (k == 0) s.temperature = 0.0f;
    if (k == 2) s.top_k = 20, s.top_p = 0.9f, s.repeat_penalty = 1.3f, s.repeat_window = 8;
    if (k == 3) s.min_p = 0.05f, s.temperature = 0.7f;
    return s;
}

/* The reference of a constrained step: the public sampler with every token
 * the grammar refuses banned (ban comes first in the pipeline, as the mask
 * does), the state advanced by brute force. Returns the tokens. */
static int32_t reference(ngpt_context *ctx, const ngpt_grammar *g, const ngpt_generate_config *gc,
                         const int32_t *prompt, int32_t n_prompt, int32_t *out)
{
    const int32_t V = g->n_vocab;
    const ngpt_gm_limits lim = {64, NGPT_GRAMMAR_STACKS};
    const size_t words = ngpt_gm_words(lim);
    uint32_t *st = malloc(words * 4), *nx = malloc(words * 4), *tmp = malloc(words * 4);
    int32_t *banned = malloc((size_t)V * sizeof *banned), seq[T], n = n_prompt, got = 0;
    memcpy(seq, prompt, (size_t)n * sizeof *seq);
    ngpt_gm_start(&g->a, st);
    CHECK_OK(ngpt_context_cache_clear(ctx, -1));
    CHECK_OK(ngpt_context_cache_prefill(ctx, seq, 1, n));
    while (got < gc->max_tokens && !ngpt_gm_complete(st)) {
        int32_t nb = 0;
        for (int32_t t = 0; t < V; t++) {
            size_t len;
            const uint8_t *b = ngpt_grammar_token_bytes(g, t, &len);
            if (!b || ngpt_gm_advance(&g->a, lim, st, b, len, nx, tmp, NULL) == NGPT_GM_DEAD)
                banned[nb++] = t;
        }
        ngpt_sampler s = gc->sampler;
        s.banned = banned, s.n_banned = nb;
        const float *lg;
        int32_t tok;
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        CHECK_OK(ngpt_context_sample(ctx, &s, lg, seq, n, 0, (uint64_t)got, &tok));
        size_t len;
        const uint8_t *b = ngpt_grammar_token_bytes(g, tok, &len);
        ngpt_gm_advance(&g->a, lim, st, b, len, nx, tmp, NULL);
        uint32_t *t = st;
        st = nx, nx = t;
        out[got++] = tok;
        seq[n++] = tok;
        if (ngpt_gm_complete(st) || got == gc->max_tokens) break;
        CHECK_OK(ngpt_context_cache_decode(ctx, &tok, 1));
    }
    free(st), free(nx), free(tmp), free(banned);
    return got;
}

static void test_model(const ngpt_tokenizer *tk, const char *grammar_text, const char *what)
{
    const int32_t V = tk ? 700 : 256;
    ngpt_context *ctx = make(V, 1, 5, tk, 2, 0), *ctx3 = make(V, 3, 5, tk, 2, 0);
    ngpt_context *draft = make(V, 1, 9, tk, 1, 0);
    ngpt_grammar *g = NULL;
    CHECK_OK(ngpt_grammar_parse(&g, tk, grammar_text, strlen(grammar_text)));
    if (!ctx || !ctx3 || !draft || !g) return;
    static run a, b, c;
    int complete = 0, runs = 0;
    for (int k = 0; k < 4; k++)
        for (uint64_t seed = 1; seed <= (k == 0 ? 1u : 6u); seed++) {
            ngpt_generate_config gc = ngpt_generate_config_default();
            gc.sampler = sampler(k, seed);
            gc.max_tokens = 60;
            gc.grammar = g;
            generate(ctx, &gc, "data: ", &a);
            check_run(g, tk, &a);
            complete += a.r.reason == NGPT_STOP_GRAMMAR_COMPLETE;
            runs++;
            /* the same tokens on 3 threads, and speculative (lookup, draft) */
            generate(ctx3, &gc, "data: ", &b);
            CHECK(same_run(&a, &b), "%s sampler %d seed %d: 3 threads differ", what, k, (int)seed);
            gc.lookup = 3, gc.draft_tokens = 4;
            generate(ctx, &gc, "data: ", &b);
            CHECK(same_run(&a, &b), "%s sampler %d seed %d: lookup differs", what, k, (int)seed);
            gc.lookup = 0, gc.draft = draft;
            generate(ctx, &gc, "data: ", &b);
            CHECK(same_run(&a, &b) && b.r.n_proposed > 0, "%s sampler %d seed %d: the draft "
                  "differs (%d proposed)", what, k, (int)seed, (int)b.r.n_proposed);
            gc.draft = NULL, gc.draft_tokens = 0;
            /* the reference: the public sampler with the refused tokens banned */
            int32_t prompt[64], ref[T];
            size_t np = 6;
            if (tk) ngpt_tokenizer_encode(tk, "data: ", 6, prompt, 64, &np);
            else for (int i = 0; i < 6; i++) prompt[i] = (uint8_t)"data: "[i];
            int32_t nr = reference(ctx, g, &gc, prompt, (int32_t)np, ref);
            int32_t nout = a.r.n_generated - (a.r.reason == NGPT_STOP_END_TOKEN);
            CHECK(nr >= nout && !memcmp(ref, a.out, (size_t)nout * sizeof *ref),
                  "%s sampler %d seed %d: the mask is not banning what the grammar refuses",
                  what, k, (int)seed);
            if (k == 0) {   /* greedy's shortcut against masking every step */
                ngpt_constraint_greedy_shortcut = false;
                generate(ctx, &gc, "data: ", &c);
                ngpt_constraint_greedy_shortcut = true;
                CHECK(same_run(&a, &c), "%s: greedy's shortcut changes the text", what);
                /* beam width 1 is greedy; width 2 gives a text of the grammar */
                gc.sampler = ngpt_sampler_default();
                gc.beam_width = 1;
                generate(ctx, &gc, "data: ", &c);
                CHECK(same_run(&a, &c), "%s: beam width 1 differs from greedy (%s, %s)", what,
                      ngpt_stop_reason_string(a.r.reason), ngpt_stop_reason_string(c.r.reason));
                gc.beam_width = 2;
                generate(ctx, &gc, "data: ", &c);
                check_run(g, tk, &c);
            }
        }
    printf("%s: %d of %d runs complete the grammar\n", what, complete, runs);
    ngpt_grammar_free(g);
    ngpt_context_free(ctx), ngpt_context_free(ctx3), ngpt_context_free(draft);
}

static void test_reasons(void)
{
    ngpt_context *ctx = make(256, 1, 5, NULL, 1, 0), *shallow = make(256, 1, 5, NULL, 1, 4);
    ngpt_grammar *g = NULL, *nest = NULL, *empty = NULL;
    CHECK_OK(ngpt_grammar_parse(&g, NULL, OBJECT_GBNF, strlen(OBJECT_GBNF)));
    const char *parens = "root ::= \"(\" root \")\" | \"x\"";
    CHECK_OK(ngpt_grammar_parse(&nest, NULL, parens, strlen(parens)));
    CHECK_OK(ngpt_grammar_parse(&empty, NULL, "root ::= \"\"", 11));
    if (!ctx || !shallow || !g || !nest || !empty) return;
    static run a;
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.grammar = g;
    gc.max_tokens = 3;   /* "{\"n" */
    generate(ctx, &gc, "x", &a);
    CHECK(a.r.reason == NGPT_STOP_GRAMMAR_INCOMPLETE && a.r.n_tokens == 3,
          "cut by max_tokens: %s, %d tokens", ngpt_stop_reason_string(a.r.reason),
          (int)a.r.n_tokens);
    /* a stop sequence still cuts the output */
    const char *stops[1] = {"\"n\""};
    gc.max_tokens = 50, gc.stop = stops, gc.n_stop = 1;
    generate(ctx, &gc, "x", &a);
    CHECK(a.r.reason == NGPT_STOP_SEQUENCE && a.r.n_tokens == 1 && a.out[0] == '{',
          "a stop sequence: %s, %d tokens", ngpt_stop_reason_string(a.r.reason), (int)a.r.n_tokens);
    gc.stop = NULL, gc.n_stop = 0;
    /* nesting past the planned depth: each "(" opens one more rule */
    gc.grammar = nest;
    gc.sampler.logit_bias = NULL;
    static float bias[256];
    bias['('] = 50.0f;
    gc.sampler.logit_bias = bias;
    generate(shallow, &gc, "x", &a);
    CHECK(a.r.reason == NGPT_STOP_GRAMMAR_DEPTH && a.r.n_tokens >= 1 && a.r.n_tokens < 8,
          "too deep: %s after %d tokens", ngpt_stop_reason_string(a.r.reason), (int)a.r.n_tokens);
    gc.sampler.logit_bias = NULL;
    gc.grammar = empty;
    generate(ctx, &gc, "x", &a);
    CHECK(a.r.reason == NGPT_STOP_GRAMMAR_COMPLETE && a.r.n_tokens == 0 && a.r.n_generated == 0,
          "the empty grammar: %s", ngpt_stop_reason_string(a.r.reason));
    ngpt_grammar_free(g), ngpt_grammar_free(nest), ngpt_grammar_free(empty);
    ngpt_context_free(ctx), ngpt_context_free(shallow);
}

static void test_mismatch(const ngpt_tokenizer *tk)
{
    ngpt_context *bytes = make(256, 1, 5, NULL, 1, 0), *bpe = make(700, 1, 5, tk, 1, 0);
    ngpt_grammar *gb = NULL, *gt = NULL;
    CHECK_OK(ngpt_grammar_parse(&gb, NULL, OBJECT_GBNF, strlen(OBJECT_GBNF)));
    CHECK_OK(ngpt_grammar_parse(&gt, tk, OBJECT_GBNF, strlen(OBJECT_GBNF)));
    int32_t prompt[1] = {'x'}, out[8];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 8;
    gc.grammar = gt;
    CHECK_STATUS(ngpt_context_generate(bytes, &gc, prompt, 1, out, 8, NULL, NULL, NULL),
                 NGPT_ERR_CONFIG_MISMATCH);
    gc.grammar = gb;
    CHECK_STATUS(ngpt_context_generate(bpe, &gc, prompt, 1, out, 8, NULL, NULL, NULL),
                 NGPT_ERR_CONFIG_MISMATCH);
    ngpt_grammar_free(gb), ngpt_grammar_free(gt);
    ngpt_context_free(bytes), ngpt_context_free(bpe);
}

int main(void)
{
    ngpt_tokenizer *tk = json_tokenizer();
    test_model(NULL, OBJECT_GBNF, "bytes, object");
    test_model(NULL, JSON_GBNF, "bytes, JSON");
    test_model(tk, OBJECT_GBNF, "BPE, object");
    test_model(tk, JSON_GBNF, "BPE, JSON");
    test_reasons();
    test_mismatch(tk);
    ngpt_tokenizer_free(tk);
    printf("test_grammar_generate: %d passed, %d failed\n", test_passed, test_failed);
    return test_failed != 0;
}
