/* fuzz_grammar.c — GBNF text through ngpt_grammar_parse (a byte
 * vocabulary). Properties: a refused grammar leaves one line naming the
 * function (and, for a syntax error, the line and column); a compiled one
 * has the text it was given, and a walk through it by allowed bytes
 * (grammar_walk.h) never meets a dead end and its masks agree with reading
 * each byte. */
#include "grammar_walk.h"

NGPT_FUZZ_ENTRY(grammar)
{
    ngpt_grammar *g = NULL;
    ngpt_status st = ngpt_grammar_parse(&g, NULL, (const char *)data, size);
    fuzz_expect_message(st, "ngpt_grammar_parse");
    if (st) {
        if (g) fuzz_fail("a refused grammar was made");
        if (strchr(ngpt_last_error(), '\n')) fuzz_fail("a message of two lines");
        return 0;
    }
    const char *text = NULL;
    size_t len = 0;
    if (ngpt_grammar_text(g, &text, &len) || len != size || memcmp(text, data, size))
        fuzz_fail("the grammar's text is not the one parsed");
    char out[256];
    for (uint64_t seed = 1; seed <= 3; seed++) fuzz_grammar_walk(g, seed, out, sizeof out);
    ngpt_grammar_free(g);
    return 0;
}
