/* grammar_cases.h — what the grammar tests share: llama.cpp's JSON
 * grammar, a small random generator, a BPE vocabulary trained on JSON and
 * prose (so that tokens span the grammars' terminals), and random walks
 * through a grammar's texts that check its masks and that no step is a
 * dead end. */
#ifndef NGPT_TEST_GRAMMAR_CASES_H
#define NGPT_TEST_GRAMMAR_CASES_H

#include "grammar/grammar.h"
#include "test.h"

static const ngpt_gm_limits LIM = {64, 16};

/* llama.cpp's grammars/json.gbnf */
static const char JSON_GBNF[] =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::=\n"
    "  \"{\" ws (\n"
    "            string \":\" ws value\n"
    "    (\",\" ws string \":\" ws value)*\n"
    "  )? \"}\" ws\n"
    "array  ::=\n"
    "  \"[\" ws (\n"
    "            value\n"
    "    (\",\" ws value)*\n"
    "  )? \"]\" ws\n"
    "string ::=\n"
    "  \"\\\"\" (\n"
    "    [^\"\\\\\\x7F\\x00-\\x1F] |\n"
    "    \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}) # escapes\n"
    "  )* \"\\\"\" ws\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws\n"
    "# Optional space: by convention, applied in this grammar after literal chars when allowed\n"
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

static uint64_t rng_state;
static inline uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* A BPE vocabulary trained on JSON and prose, so that tokens span the
 * grammars' terminals ("{\"", "\": ", "], [", " the"). */
static inline ngpt_tokenizer *json_tokenizer(void)
{
    static char text[1 << 16];
    size_t n = 0;
    static const char *const words[] = {"the", "cat", "sat", "on", "mat", "caf\xc3\xa9", "title",
                                        "due", "priority", "name", "tags", "true", "null"};
    rng_state = 7;
    while (n < sizeof text - 256) {
        int kind = (int)(rnd() % 4);
        if (kind == 0)
            n += (size_t)snprintf(text + n, 256, "{\"%s\": \"%s %s\", \"%s\": %u, \"%s\": [%u, %u]}\n",
                                  words[rnd() % 13], words[rnd() % 13], words[rnd() % 13],
                                  words[rnd() % 13], rnd() % 1000, words[rnd() % 13], rnd() % 10,
                                  rnd() % 100);
        else if (kind == 1)
            n += (size_t)snprintf(text + n, 256, "The %s %s on the %s. ", words[rnd() % 13],
                                  words[rnd() % 13], words[rnd() % 13]);
        else if (kind == 2)
            n += (size_t)snprintf(text + n, 256, "[%u, [\"%s\"], %u]\n", rnd() % 50,
                                  words[rnd() % 13], rnd() % 7);
        else
            n += (size_t)snprintf(text + n, 256, "(%u+%u)-%u\t\\u00e9\\n ", rnd() % 90, rnd() % 9,
                                  rnd() % 300);
    }
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = 700;
    ngpt_tokenizer *tok = NULL;
    const void *texts[1] = {text};
    size_t sizes[1] = {n};
    CHECK_OK(ngpt_tokenizer_train(&tok, &tc, texts, sizes, 1));
    return tok;
}

/* ------------------------------------------------ the masks' property */

typedef struct work {
    ngpt_gwork w;
    uint32_t *st, *next;
    uint64_t *mask;
} work;

static inline void work_init(work *k, int32_t V)
{
    k->w.lim = LIM;
    k->w.gcap = ngpt_gwork_gbuf_words(LIM);
    k->w.gbuf = malloc(k->w.gcap * 4);
    for (int i = 0; i < 3; i++) k->w.s[i] = malloc(ngpt_gm_words(LIM) * 4);
    k->w.tmp = calloc((size_t)(V + 63) / 64, 8);
    k->mask = calloc((size_t)(V + 63) / 64, 8);
    k->st = malloc(ngpt_gm_words(LIM) * 4);
    k->next = malloc(ngpt_gm_words(LIM) * 4);
}

static inline void work_free(work *k)
{
    free(k->w.gbuf);
    for (int i = 0; i < 3; i++) free(k->w.s[i]);
    free(k->w.tmp), free(k->mask), free(k->st), free(k->next);
}

/* Random walks through g's texts by allowed tokens: at every step the mask
 * equals checking each token's bytes, some token is allowed or the text
 * may end (no dead end), and every allowed token advances. Returns the
 * steps taken. */
static inline int mask_walks(const ngpt_grammar *g, const char *what, int walks, int steps)
{
    const int32_t V = g->n_vocab;
    work k;
    work_init(&k, V);
    int taken = 0, wrong = 0, dead = 0;
    for (int r = 0; r < walks; r++) {
        ngpt_gm_start(&g->a, k.st);
        for (int i = 0; i < steps; i++) {
            ngpt_grammar_mask(g, k.st, k.mask, &k.w);
            int32_t n_allowed = 0, pick = -1;
            for (int32_t t = 0; t < V; t++) {
                int rc = ngpt_grammar_advance(g, k.st, t, k.next, &k.w);
                bool want = rc != NGPT_GM_DEAD, got = ngpt_mask_bit(k.mask, t);
                if (want != got && wrong++ < 5) {
                    size_t len;
                    const uint8_t *b = ngpt_grammar_token_bytes(g, t, &len);
                    fprintf(stderr, "%s walk %d step %d: token %d \"%.*s\" mask %d, its bytes %d\n",
                            what, r, i, (int)t, (int)len, b ? (const char *)b : "", got, want);
                }
                if (got && rnd() % (uint32_t)++n_allowed == 0) pick = t;
            }
            const bool end = ngpt_gm_can_end(k.st);
            if (n_allowed == 0 && !end) dead++;
            if (pick < 0 || (end && rnd() % 8 == 0)) break;
            ngpt_grammar_advance(g, k.st, pick, k.next, &k.w);
            uint32_t *t = k.st;
            k.st = k.next, k.next = t;
            taken++;
        }
    }
    CHECK(wrong == 0, "%s: %d mask bits differ from checking the tokens' bytes", what, wrong);
    CHECK(dead == 0, "%s: %d dead ends", what, dead);
    work_free(&k);
    return taken;
}

#endif
