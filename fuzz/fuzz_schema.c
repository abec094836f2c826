/* fuzz_schema.c — JSON Schemas through ngpt_grammar_from_json_schema (a
 * byte vocabulary). Properties: a refused schema leaves one line naming the
 * function; a compiled one's grammar never meets a dead end, its masks
 * agree with reading each byte (grammar_walk.h), and every text a walk may
 * end is JSON (cJSON reads it whole). */
#include <cjson/cJSON.h>

#include "grammar_walk.h"

NGPT_FUZZ_ENTRY(schema)
{
    ngpt_grammar *g = NULL;
    ngpt_status st = ngpt_grammar_from_json_schema(&g, NULL, (const char *)data, size);
    fuzz_expect_message(st, "ngpt_grammar_from_json_schema");
    if (st) {
        if (g) fuzz_fail("a refused schema was made");
        if (strchr(ngpt_last_error(), '\n')) fuzz_fail("a message of two lines");
        return 0;
    }
    char out[512];
    for (uint64_t seed = 1; seed <= 3; seed++) {
        if (!fuzz_grammar_walk(g, seed, out, sizeof out)) continue;
        cJSON *v = cJSON_ParseWithLengthOpts(out, strlen(out) + 1, NULL, true);  /* with its NUL */
        if (!v && out[0]) fuzz_fail("the schema's grammar ended a text that is not JSON: %s", out);
        cJSON_Delete(v);
    }
    ngpt_grammar_free(g);
    return 0;
}
