/* grammar_cases.h — what the grammar tests share: llama.cpp's JSON
 * grammar, a small random generator, and a BPE vocabulary trained on JSON
 * and prose (so that tokens span the grammars' terminals). */
#ifndef NGPT_TEST_GRAMMAR_CASES_H
#define NGPT_TEST_GRAMMAR_CASES_H

#include "test.h"

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

#endif
