/* test_grammar.c — the grammar engine (src/grammar/): GBNF texts against
 * sets of strings each must accept or reject (nested, recursive,
 * repetition bounds, classes, UTF-8 characters in literals and classes),
 * the parser's one-line errors with line and column, the matcher's state
 * staying one stack on nested repetition (and its time on a pathological
 * grammar), and the token masks: the index and the walk against checking
 * every token's bytes one by one, over random walks, with the no-dead-end
 * property, on a byte vocabulary and a trained BPE one (and GPT-2's when
 * given its files: `test_grammar ENCODER_JSON VOCAB_BPE`, make test-gpt2). */
#include <time.h>

#include "grammar/grammar.h"
#include "grammar_cases.h"

static ngpt_grammar *compile(const char *text, const ngpt_tokenizer *tok)
{
    ngpt_grammar *g = NULL;
    ngpt_status st = ngpt_grammar_parse(&g, tok, text, strlen(text));
    CHECK(st == NGPT_OK, "grammar %s: %s", text, ngpt_last_error());
    return g;
}


/* Whether g matches s whole: 1, a prefix of a match: 0, neither: -1
 * (-2: the limits were passed). */
static int match(const ngpt_grammar *g, const char *s, size_t n)
{
    size_t words = ngpt_gm_words(LIM);
    uint32_t *a = malloc(words * 4), *b = malloc(words * 4), *c = malloc(words * 4);
    ngpt_gm_start(&g->a, a);
    int rc = ngpt_gm_advance(&g->a, LIM, a, (const uint8_t *)s, n, b, c, NULL);
    int r = rc == NGPT_GM_DEAD ? -1 : rc == NGPT_GM_OVERFLOW ? -2 : ngpt_gm_can_end(b) ? 1 : 0;
    if (n == 0) r = ngpt_gm_can_end(a) ? 1 : 0;
    free(a), free(b), free(c);
    return r;
}

typedef struct cases {
    const char *grammar;
    const char *accept[12];     /* whole texts */
    const char *prefix[8];      /* prefixes of texts, not texts */
    const char *reject[12];
} cases;

static const cases CASES[] = {
    {"root ::= \"ab\" | \"a\" \"c\"*", {"ab", "a", "acc", "accccc"}, {""}, {"b", "abc", "aab"}},
    {"# a comment\nroot ::= greeting \" \" name # trailing\ngreeting ::= (\"hello\" | \"hi\")\n"
     "name ::= [A-Z] [a-z]*\n",
     {"hello Bob", "hi X"}, {"hel", "hi "}, {"hello bob", "hey Bob", "hi  X"}},
    /* repetition bounds */
    {"root ::= \"a\"{2,4}", {"aa", "aaa", "aaaa"}, {"a"}, {"aaaaa", "b"}},
    {"root ::= \"ab\"{3}", {"ababab"}, {"abab", "a"}, {"abababab", "aba b"}},
    {"root ::= \"a\"{2,} \"b\"", {"aab", "aaaaaaab"}, {"a", "aa"}, {"ab", "b"}},
    {"root ::= \"a\"{,2} \"b\"", {"b", "ab", "aab"}, {"a"}, {"aaab"}},
    {"root ::= (\"x\"? ){0,3} \"y\"", {"y", "xy", "xxxy"}, {"xx"}, {"xxxxy"}},
    /* classes: ranges, negation, escapes, UTF-8 */
    {"root ::= [a-cx-z0-9_]+", {"a", "z9_", "cab"}, {""}, {"d", "A", "-"}},
    {"root ::= [^\"\\\\\\n]* \"\\\"\"", {"\"", "abc\"", "\xc3\xa9t\xc3\xa9\""}, {"ab"},
     {"a\\\"", "a\n\""}},
    {"root ::= \"h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c\" [\xce\xb1-\xcf\x89]+",
     {"h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c\xce\xb1", "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c\xcf\x89\xce\xb2"},
     {"h\xc3", "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c\xce"},
     {"hello \xe4\xb8\x96\xe7\x95\x8c\xce\xb1", "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c" "a"}},
    {"root ::= [^a-z]", {"A", "\xf0\x9f\x98\x80", "\xe2\x82\xac", "\n"}, {"\xf0\x9f"},
     {"a", "AB", "\xff", "\xed\xa0\x80"}},
    {"root ::= . \"!\"", {"a!", "\xc3\xa9!", "\xf4\x8f\xbf\xbf!", "!!"}, {"\xf4", "!"},
     {"ab", "\xc0\x80!", "\xf4\x90\x80\x80!"}},
    {"root ::= \"\\x41\\u00e9\\U0001F600\\t\\n\\\\\"", {"A\xc3\xa9\xf0\x9f\x98\x80\t\n\\"},
     {"A", "A\xc3\xa9\xf0\x9f\x98\x80\t\n"}, {"A\xc3\xa9\xf0\x9f\x98\x80\t\n/"}},
    /* recursion and nesting */
    {"root ::= (\"(\" root \")\")*", {"", "()", "(())()", "((()))"}, {"(", "(()"}, {")", "())"}},
    {"root ::= list\nlist ::= \"[\" (item (\",\" item)*)? \"]\"\nitem ::= list | [0-9]+\n",
     {"[]", "[1,[2,[]],33]", "[[[[]]]]"}, {"[1,", "[[[["}, {"[1,]", "[,]", "1"}},
    {"root ::= (\n  \"a\" |\n  \"b\"\n)+ end\nend ::= \"!\" |\n  \"?\"",
     {"a!", "abba?"}, {"ab"}, {"!", "c!"}},
    /* nested repetition, optional chains */
    {"root ::= ((\"a\"*)*)* \"b\"", {"b", "ab", "aaaab"}, {"aaa"}, {"ba"}},
    {"root ::= x? x? x? x? x? x? x? x? \"y\"\nx ::= \"x\"", {"y", "xxxxy", "xxxxxxxxy"},
     {"xxxxxxxx"}, {"xxxxxxxxxy"}},
    /* a rule that matches nothing, called in a loop */
    {"root ::= (e \"a\")* e\ne ::= \"b\"?", {"", "a", "ba", "bab", "aab"}, {NULL}, {"bb", "abb"}},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        const cases *c = &CASES[i];
        ngpt_grammar *g = compile(c->grammar, NULL);
        if (!g) continue;
        for (int k = 0; k < 12 && c->accept[k]; k++)
            CHECK(match(g, c->accept[k], strlen(c->accept[k])) == 1, "%s accepts \"%s\"",
                  c->grammar, c->accept[k]);
        for (int k = 0; k < 8 && c->prefix[k]; k++)
            CHECK(match(g, c->prefix[k], strlen(c->prefix[k])) == 0, "%s: \"%s\" is a prefix",
                  c->grammar, c->prefix[k]);
        for (int k = 0; k < 12 && c->reject[k]; k++)
            CHECK(match(g, c->reject[k], strlen(c->reject[k])) == -1, "%s rejects \"%s\"",
                  c->grammar, c->reject[k]);
        ngpt_grammar_free(g);
    }
}

/* ------------------------------------------------------------ errors */

static void test_errors(void)
{
    static const struct {
        const char *text, *message;
        ngpt_status status;
    } bad[] = {
        {"root ::= foo", "line 1, column 10: rule \"foo\" is used but never defined",
         NGPT_ERR_BAD_FORMAT},
        {"start ::= \"a\"", "no rule named \"root\"", NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\"\nroot ::= \"b\"", "line 2, column 1: rule \"root\" is defined twice",
         NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\" (\"b\"", "line 1, column 18: expected ')'", NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\n", "line 1, column 10: the string literal is not closed", NGPT_ERR_BAD_FORMAT},
        {"root ::= [ab", "line 1, column 10: the class is not closed", NGPT_ERR_BAD_FORMAT},
        {"root ::= \"\\q\"", "line 1, column 11: unknown escape \\q", NGPT_ERR_BAD_FORMAT},
        {"root ::= [b-a]", "line 1, column 12: the range ends", NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\"{5,2}", "line 1, column 13: the repetition {5,2}", NGPT_ERR_BAD_FORMAT},
        {"root ::= * \"a\"", "'*' must follow an item", NGPT_ERR_BAD_FORMAT},
        {"root ::= x\nx ::= x \"a\" | \"b\"", "rule \"x\" (line 2) is left-recursive: x -> x",
         NGPT_ERR_BAD_FORMAT},
        {"root ::= a\na ::= \"x\"? b\nb ::= a \"y\" | \"z\"", "is left-recursive: a -> b -> a",
         NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\" loop\nloop ::= \"b\" loop", "rule \"loop\" (line 2) can never end",
         NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\" \"b\" c", "line 1, column 18: rule \"c\"", NGPT_ERR_BAD_FORMAT},
        {"root ::= <[123]>", "token references", NGPT_ERR_BAD_FORMAT},
        {"root ::= \"\\xff\xff\"", "line 1, column 15: byte 0xFF is not valid UTF-8",
         NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\"{99999}", "a repetition count above", NGPT_ERR_BAD_FORMAT},
        {"root ::= \"a\" ]", "line 1, column 14: unexpected ']'", NGPT_ERR_BAD_FORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ngpt_grammar *g = (ngpt_grammar *)1;
        ngpt_status st = ngpt_grammar_parse(&g, NULL, bad[i].text, strlen(bad[i].text));
        const char *msg = ngpt_last_error();
        CHECK(st == bad[i].status && g == NULL && strstr(msg, bad[i].message) &&
                  !strncmp(msg, "ngpt_grammar_parse: ", 20) && !strchr(msg, '\n'),
              "%s: %s -> %s", bad[i].text, ngpt_status_string(st), msg);
    }
}

/* ------------------------------------------- nested repetition's cost */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_pathological(void)
{
    /* 200 optional x then y, and ((x*)*)* nested ten deep: llama.cpp's
     * stack sets grow exponentially on these; here each is one stack */
    char text[4096] = "root ::= ";
    for (int i = 0; i < 200; i++) strcat(text, "x? ");
    strcat(text, "\"y\" (((((((((( \"z\"* )*)*)*)*)*)*)*)*)*)*\nx ::= \"x\"");
    double t0 = now();
    ngpt_grammar *g = compile(text, NULL);
    double t1 = now();
    if (!g) return;
    char input[512];
    memset(input, 'x', 200);
    input[200] = 'y';
    memset(input + 201, 'z', 200);
    size_t words = ngpt_gm_words(LIM);
    uint32_t *a = malloc(words * 4), *b = malloc(words * 4);
    ngpt_gm_start(&g->a, a);
    uint32_t most = a[0];
    for (int i = 0; i < 401; i++) {
        CHECK(ngpt_gm_step(&g->a, LIM, a, (uint8_t)input[i], b, NULL) == NGPT_GM_OK, "byte %d", i);
        uint32_t *t = a;
        a = b, b = t;
        if (a[0] > most) most = a[0];
    }
    double t2 = now();
    CHECK(ngpt_gm_can_end(a), "the 401 bytes match");
    CHECK(most <= 2, "nested repetition keeps at most 2 stacks (a top that may pop), got %u", most);
    CHECK(t2 - t1 < 0.05, "401 bytes took %.3f s", t2 - t1);
    printf("pathological grammar: compile %.2f ms, 401 bytes %.1f us, at most %u stacks\n",
           1e3 * (t1 - t0), 1e6 * (t2 - t1), most);
    free(a), free(b);
    ngpt_grammar_free(g);
}

/* ------------------------------------------------------- token masks */

static const char *const MASK_GRAMMARS[] = {
    JSON_GBNF,
    "root ::= list\nlist ::= \"[\" (item (\", \" item)*)? \"]\"\nitem ::= list | [0-9]+ | word\n"
    "word ::= \"\\\"\" [a-z\xc3\xa9 ]{1,12} \"\\\"\"\n",
    "root ::= (\"The \" | \"the \") [a-z]+ (\" \" [a-z]+){0,6} \".\"",
    "root ::= expr\nexpr ::= term ((\"+\" | \"-\") term)*\nterm ::= [0-9]+ | \"(\" expr \")\"",
};

static void test_masks(void)
{
    ngpt_tokenizer *bpe = json_tokenizer();
    for (size_t i = 0; i < sizeof MASK_GRAMMARS / sizeof *MASK_GRAMMARS; i++) {
        for (int vocab = 0; vocab < 2; vocab++) {
            ngpt_grammar *g = compile(MASK_GRAMMARS[i], vocab ? bpe : NULL);
            if (!g) continue;
            char what[64];
            snprintf(what, sizeof what, "grammar %zu, %s", i, vocab ? "BPE" : "bytes");
            rng_state = 11 + i;
            int steps = mask_walks(g, what, 12, 60);
            /* the same with every state walked at each step (no index) */
            int32_t n_walk = 0;
            for (int32_t q = 0; q < g->a.n_states; q++) {
                n_walk += g->idx[q].mode == NGPT_GIDX_WALK;
                g->idx[q].mode = NGPT_GIDX_WALK;
            }
            rng_state = 11 + i;
            strcat(what, ", unindexed");
            int again = mask_walks(g, what, 12, 60);
            CHECK(again == steps && steps > 100, "%s: %d steps, %d unindexed", what, steps, again);
            printf("%s: %d steps, states %d, %d walked\n", what, steps, (int)g->a.n_states, (int)n_walk);
            ngpt_grammar_free(g);
        }
    }
    ngpt_tokenizer_free(bpe);
}

/* GPT-2's vocabulary (make test-gpt2 passes its files): the masks and no
 * dead end, on JSON's grammar and a JSON Schema's. */
static void test_gpt2(const char *encoder, const char *vocab)
{
    ngpt_tokenizer *tok = NULL;
    CHECK_OK(ngpt_tokenizer_load_gpt2(&tok, encoder, vocab));
    if (!tok) return;
    static const char schema[] =
        "{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\"},\"n\":"
        "{\"type\":\"integer\",\"minimum\":-20,\"maximum\":300},\"tags\":{\"type\":\"array\","
        "\"items\":{\"enum\":[\"a b\",\"c\"]}},\"when\":{\"type\":\"string\",\"format\":"
        "\"date-time\"}},\"required\":[\"title\",\"n\"]}";
    ngpt_grammar *g = NULL;
    CHECK_OK(ngpt_grammar_parse(&g, tok, JSON_GBNF, strlen(JSON_GBNF)));
    rng_state = 5;
    if (g) printf("GPT-2, JSON: %d steps\n", mask_walks(g, "GPT-2, JSON", 3, 40));
    ngpt_grammar_free(g);
    g = NULL;
    CHECK_OK(ngpt_grammar_from_json_schema(&g, tok, schema, sizeof schema - 1));
    if (g) printf("GPT-2, schema: %d steps\n", mask_walks(g, "GPT-2, schema", 3, 40));
    ngpt_grammar_free(g);
    ngpt_tokenizer_free(tok);
}

int main(int argc, char **argv)
{
    if (argc == 3) {    /* GPT-2's encoder.json and vocab.bpe */
        test_gpt2(argv[1], argv[2]);
        printf("test_grammar (GPT-2): %d passed, %d failed\n", test_passed, test_failed);
        return test_failed != 0;
    }
    test_cases();
    test_errors();
    test_pathological();
    test_masks();
    printf("test_grammar: %d passed, %d failed\n", test_passed, test_failed);
    return test_failed != 0;
}
