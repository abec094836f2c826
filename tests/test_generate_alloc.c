/* test_generate_alloc.c — generation allocates nothing after init: prefill,
 * decode, sampling, the sliding window, no-cache recomputation, beam
 * search and generation under a grammar all run in the arena. The library's malloc/calloc/realloc calls are
 * counted (the approach of test_arena.c). */
/* test-ldflags: -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc */
#include <stdlib.h>

#include "alloc_count.h"
#include "test.h"


/* s with what beam search uses (ban, bias, penalty) and the draw's settings
 * at their defaults, which beam search requires. */
static ngpt_sampler beam_sampler(const ngpt_sampler *s)
{
    ngpt_sampler b = *s;
    b.temperature = 1.0f, b.top_k = 0, b.top_p = 1.0f, b.min_p = 0.0f;
    return b;
}

static int count_tokens(int32_t t, void *user)
{
    (void)t;
    ++*(int *)user;
    return 0;
}

int main(void)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = 16;
    c.d_model = 32;
    c.n_layers = 2;
    c.n_heads = 4;
    c.d_ff = 64;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = 3;
    s.trace = NGPT_TRACE_LAST_ROW;
    s.threads = 2;      /* the pool runs jobs without allocating */
    s.draft_tokens = 4; /* the speculative rounds below check 4 + 1 tokens */
    ngpt_context *ctx;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    CHECK_OK(ngpt_context_params_init(ctx, 3));

    ngpt_shape ds = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *draft;                /* a draft model for speculative generation */
    CHECK_OK(ngpt_context_init(&draft, NULL, &c, &ds, NULL, 0));
    CHECK_OK(ngpt_context_params_init(draft, 4));

    int before = allocations;
    int32_t prompt[5] = {'h', 'e', 'l', 'l', 'o'}, three[15], out[40], tok;
    for (int i = 0; i < 15; i++) three[i] = 'a' + i;
    const float *lg;
    CHECK_OK(ngpt_context_cache_prefill(ctx, three, 3, 5));
    CHECK_OK(ngpt_context_cache_decode(ctx, prompt, 3));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    ngpt_sampler sm = ngpt_sampler_default();
    sm.top_k = 20;
    sm.top_p = 0.9f;
    sm.min_p = 0.01f;
    sm.repeat_penalty = 1.3f;
    CHECK_OK(ngpt_context_sample(ctx, &sm, lg, prompt, 5, 0, 0, &tok));

    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler = sm;
    gc.max_tokens = 40;                 /* slides past T = 16 */
    const char *stops[] = {"ab", "\n"};
    gc.stop = stops;
    gc.n_stop = 2;
    int streamed = 0;
    ngpt_generate_result r;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, out, 40, count_tokens, &streamed, &r));
    gc.no_cache = true;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, out, 40, count_tokens, &streamed, &r));
    gc.no_cache = false;
    gc.context_mode = NGPT_CONTEXT_SHIFT;   /* shifts past T */
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, out, 40, count_tokens, &streamed, &r));
    gc.context_mode = NGPT_CONTEXT_EXACT;
    int32_t longp[20];                      /* cropped to T = 16 */
    for (int i = 0; i < 20; i++) longp[i] = 'a' + i;
    CHECK_OK(ngpt_context_generate(ctx, &gc, longp, 20, out, 40, count_tokens, &streamed, &r));
    gc.draft = draft;                       /* speculative: a draft model, then lookup */
    gc.draft_tokens = 4;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, out, 40, count_tokens, &streamed, &r));
    gc.draft = NULL;
    gc.lookup = 3;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, out, 40, count_tokens, &streamed, &r));
    gc.lookup = 0;
    gc.draft_tokens = 0;
    gc.sampler = beam_sampler(&sm);
    gc.beam_width = 3;
    gc.max_tokens = 8;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, out, 40, count_tokens, &streamed, &r));
    CHECK(allocations == before, "generation allocated %d times", allocations - before);
    CHECK(streamed > 0, "nothing streamed");
    ngpt_context_free(ctx);
    ngpt_context_free(draft);

    /* a model with a tokenizer: stop sequences on its tokens' bytes, sampled and beam */
    static const char text[] = "the cat sat on the mat, the cat ate the rat; a bat sat on a hat";
    const void *texts[1] = {text};
    const size_t sizes[1] = {sizeof text - 1};
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = 280;
    ngpt_tokenizer *tk = NULL;
    ngpt_tokenizer_info ti;
    CHECK_OK(ngpt_tokenizer_train(&tk, &tc, texts, sizes, 1));
    CHECK_OK(ngpt_tokenizer_describe(tk, &ti));
    c.vocab_size = ti.n_tokens;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    CHECK_OK(ngpt_context_params_init(ctx, 4));
    CHECK_OK(ngpt_context_tokenizer_set(ctx, tk));
    int32_t big_out[40 + 300];
    const char *tstops[] = {"at", "e c", " the"};
    gc = ngpt_generate_config_default();
    gc.sampler = sm, gc.max_tokens = 40, gc.stop = tstops, gc.n_stop = 3;
    before = allocations;
    for (int seed = 0; seed < 4; seed++) {
        gc.sampler.seed = (uint64_t)seed;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, big_out, 340, count_tokens, &streamed, &r));
    }
    gc.sampler = beam_sampler(&sm);
    gc.beam_width = 3, gc.max_tokens = 8;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, big_out, 340, count_tokens, &streamed, &r));
    CHECK(allocations == before, "generation with a tokenizer allocated %d times",
          allocations - before);

    /* under a grammar (compiled first: compiling allocates, generating does
     * not): sampled, greedy, beam, speculative with lookup */
    static const char gbnf[] = "root ::= (\"the \" | \"a \") word (\" \" word){0,5} \";\"\n"
                               "word ::= [a-z]+ | \"(\" root \")\"\n";
    ngpt_grammar *g = NULL;
    CHECK_OK(ngpt_grammar_parse(&g, tk, gbnf, sizeof gbnf - 1));
    gc = ngpt_generate_config_default();
    gc.sampler = sm, gc.max_tokens = 40, gc.grammar = g;
    before = allocations;
    for (int seed = 0; seed < 4; seed++) {
        gc.sampler.seed = (uint64_t)seed;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, big_out, 340, count_tokens, &streamed, &r));
    }
    gc.sampler.temperature = 0.0f;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, big_out, 340, count_tokens, &streamed, &r));
    gc.lookup = 3, gc.draft_tokens = 4;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, big_out, 340, count_tokens, &streamed, &r));
    gc.lookup = 0, gc.draft_tokens = 0;
    gc.sampler = beam_sampler(&sm);
    gc.beam_width = 3, gc.max_tokens = 8;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, big_out, 340, count_tokens, &streamed, &r));
    CHECK(allocations == before, "generation under a grammar allocated %d times",
          allocations - before);
    ngpt_grammar_free(g);
    ngpt_context_free(ctx);
    ngpt_tokenizer_free(tk);
    return test_summary("test_generate_alloc");
}
