/* test_grammar_schema.c — JSON Schema to grammar: for each schema, JSON
 * texts its grammar must accept (compact JSON that validates) and texts it
 * must refuse (invalid, or valid but outside ngpt's stated policies: no
 * whitespace, properties in order, no extra properties when
 * "properties" is given); every keyword outside the subset is an error
 * naming it and where it is. (Sampled outputs are validated with
 * python3-jsonschema in python/tests/test_grammar.py.) */
#include "grammar/grammar.h"
#include "test.h"

static int match(const ngpt_grammar *g, const char *s)
{
    const ngpt_gm_limits lim = {64, 16};
    uint32_t *a = malloc(ngpt_gm_words(lim) * 4), *b = malloc(ngpt_gm_words(lim) * 4),
             *c = malloc(ngpt_gm_words(lim) * 4);
    ngpt_gm_start(&g->a, a);
    int rc = ngpt_gm_advance(&g->a, lim, a, (const uint8_t *)s, strlen(s), b, c, NULL);
    int r = rc == NGPT_GM_OK && ngpt_gm_can_end(b);
    free(a), free(b), free(c);
    return r;
}

typedef struct sc {
    const char *schema;
    const char *accept[10];
    const char *reject[10];
} sc;

static const sc CASES[] = {
    {"{}", {"null", "1", "-2.5e3", "\"x\"", "[1,{\"a\":[true,false]}]", "{\"\":{}}"},
     {"nul", "[1,]", "{\"a\" :1}", "01", "\"\\x\"", " 1"}},
    {"true", {"[]", "{}"}, {"[", "tru"}},
    {"{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\"},\"due\":{\"type\":"
     "\"string\",\"format\":\"date\"},\"priority\":{\"type\":\"integer\",\"minimum\":1,"
     "\"maximum\":3}},\"required\":[\"title\",\"priority\"],\"title\":\"Task\",\"$schema\":"
     "\"https://json-schema.org/draft/2020-12/schema\"}",
     {"{\"title\":\"a\",\"priority\":1}", "{\"title\":\"\",\"due\":\"2024-02-29\",\"priority\":3}",
      "{\"title\":\"\\u00e9\\n\",\"due\":\"2000-02-29\",\"priority\":2}"},
     {"{\"priority\":1,\"title\":\"a\"}", "{\"title\":\"a\",\"priority\":4}",
      "{\"title\":\"a\",\"due\":\"2023-02-29\",\"priority\":1}",
      "{\"title\":\"a\",\"due\":\"1900-02-29\",\"priority\":1}",
      "{\"title\":\"a\",\"due\":\"2023-04-31\",\"priority\":1}", "{\"title\":\"a\"}",
      "{\"title\":\"a\",\"priority\":1,\"x\":1}", "{\"title\":\"\\ud800\",\"priority\":1}"}},
    /* all optional; extra properties of a schema, with keys other than the listed */
    {"{\"properties\":{\"a\":{\"type\":\"boolean\"},\"ab\":{\"type\":\"null\"}},"
     "\"additionalProperties\":{\"type\":\"integer\"}}",
     {"{}", "{\"a\":true}", "{\"ab\":null}", "{\"a\":false,\"ab\":null}", "{\"b\":1}",
      "{\"a\":true,\"abc\":2,\"x\":-3}", "{\"\":0}"},
     {"{\"ab\":null,\"a\":true}", "{\"a\":1}", "{\"b\":true}", "{,}", "{\"a\":true,}"}},
    {"{\"type\":\"object\",\"properties\":{\"a\":{}},\"additionalProperties\":true,"
     "\"required\":[\"a\",\"z\"]}",
     {"{\"a\":1,\"z\":[]}", "{\"a\":1,\"z\":2,\"q\":\"x\"}"}, {"{\"a\":1}", "{\"z\":1,\"a\":2}"}},
    {"{\"type\":\"object\"}", {"{}", "{\"k\":[1]}"}, {"[]"}},
    /* arrays */
    {"{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":2,\"maxItems\":3}",
     {"[1,2]", "[0,-5,7]"}, {"[1]", "[1,2,3,4]", "[1,2.5]", "[]"}},
    {"{\"prefixItems\":[{\"const\":\"x\"},{\"type\":\"number\"}],\"items\":{\"type\":\"boolean\"}}",
     {"[]", "[\"x\"]", "[\"x\",1.5]", "[\"x\",2,true,false]"}, {"[1]", "[\"x\",true]"}},
    {"{\"prefixItems\":[{\"const\":1},{\"const\":2}],\"minItems\":1}", {"[1]", "[1,2]"},
     {"[]", "[1,2,3]"}},
    /* strings */
    {"{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}",
     {"\"ab\"", "\"\\u00e9\\u00e9\"", "\"\xc3\xa9\xc3\xa9\xc3\xa9\"", "\"\\\"\\\\\""},
     {"\"a\"", "\"abcd\"", "\"\\ud83d\\ude00\""}},
    {"{\"type\":\"string\",\"pattern\":\"^[a-z]+-\\\\d{2,3}$\"}", {"\"ab-12\"", "\"x-999\""},
     {"\"ab-1\"", "\"Ab-12\"", "\" ab-12\""}},
    {"{\"type\":\"string\",\"pattern\":\"cat|dog\"}", {"\"cat\"", "\"a dog!\"", "\"\\\"cat\""},
     {"\"ca\"", "\"\""}},
    {"{\"type\":\"string\",\"pattern\":\"^a.c$\"}", {"\"abc\"", "\"a\\\"c\"", "\"a\xc3\xa9" "c\""},
     {"\"a\\nc\"", "\"ac\""}},
    {"{\"type\":\"string\",\"pattern\":\"^(?:\\\\w+\\\\s?)+[.!]$\"}", {"\"hi there.\"", "\"a!\""},
     {"\"hi there\"", "\" a.\""}},
    {"{\"type\":\"string\",\"format\":\"date-time\"}",
     {"\"2024-01-31T23:59:59Z\"", "\"1999-12-01T00:00:00.123+05:30\""},
     {"\"2024-01-31T24:00:00Z\"", "\"2024-01-31 23:59:59Z\"", "\"2024-01-31T23:59:59\""}},
    {"{\"type\":\"string\",\"format\":\"uuid\"}", {"\"123e4567-e89b-12d3-a456-426614174000\""},
     {"\"123e4567e89b12d3a456426614174000\"", "\"123E4567-e89b-12d3-a456-426614174000\""}},
    {"{\"type\":\"string\",\"format\":\"time\"}", {"\"08:30:00Z\"", "\"23:05:59.5-01:00\""},
     {"\"8:30:00Z\"", "\"08:60:00Z\""}},
    /* numbers */
    {"{\"type\":\"integer\",\"minimum\":-15,\"maximum\":120}",
     {"-15", "-9", "0", "7", "99", "120"}, {"-16", "121", "-0", "007", "1.0", "200"}},
    {"{\"type\":\"integer\",\"exclusiveMinimum\":0,\"exclusiveMaximum\":1000}",
     {"1", "999"}, {"0", "1000"}},
    {"{\"type\":\"integer\",\"minimum\":100}", {"100", "12345678"}, {"99", "-1"}},
    {"{\"type\":\"number\"}", {"0", "-0.5", "3.25e-7", "10E5"}, {".5", "1.", "+1", "1e"}},
    /* enum, const, type lists, nullable, anyOf, oneOf, allOf, $ref */
    {"{\"enum\":[\"a\",1,null,[true],{\"k\":\"v\"}]}",
     {"\"a\"", "1", "null", "[true]", "{\"k\":\"v\"}"}, {"\"b\"", "2", "true"}},
    {"{\"type\":[\"string\",\"null\"],\"maxLength\":1}", {"\"a\"", "null"}, {"\"ab\"", "1"}},
    {"{\"type\":\"integer\",\"nullable\":true}", {"5", "null"}, {"\"5\""}},
    {"{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"string\",\"maxLength\":2}]}",
     {"12", "\"ab\""}, {"\"abc\"", "true"}},
    {"{\"oneOf\":[{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"a\"},\"x\":"
     "{\"type\":\"integer\"}},\"required\":[\"kind\",\"x\"]},{\"type\":\"object\",\"properties\":"
     "{\"kind\":{\"const\":\"b\"},\"y\":{\"type\":\"string\"}},\"required\":[\"kind\",\"y\"]}]}",
     {"{\"kind\":\"a\",\"x\":1}", "{\"kind\":\"b\",\"y\":\"s\"}"}, {"{\"kind\":\"a\",\"y\":\"s\"}"}},
    {"{\"allOf\":[{\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]},"
     "{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"boolean\"}}}]}",
     {"{\"a\":1}", "{\"a\":1,\"b\":true}"}, {"{\"b\":true}"}},
    {"{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"integer\"},"
     "\"next\":{\"anyOf\":[{\"$ref\":\"#/$defs/node\"},{\"type\":\"null\"}]}},\"required\":[\"v\","
     "\"next\"]}},\"$ref\":\"#/$defs/node\"}",
     {"{\"v\":1,\"next\":null}", "{\"v\":1,\"next\":{\"v\":2,\"next\":{\"v\":3,\"next\":null}}}"},
     {"{\"v\":1}", "{\"v\":1,\"next\":{\"v\":2}}"}},
    {"{\"definitions\":{\"pt\":{\"type\":\"array\",\"prefixItems\":[{\"type\":\"number\"},"
     "{\"type\":\"number\"}],\"minItems\":2}},\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":"
     "\"#/definitions/pt\"},\"b\":{\"allOf\":[{\"$ref\":\"#/definitions/pt\"}],\"description\":"
     "\"d\"}},\"required\":[\"a\",\"b\"]}",
     {"{\"a\":[1,2],\"b\":[0.5,-1]}"}, {"{\"a\":[1],\"b\":[1,2]}"}},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        const sc *c = &CASES[i];
        ngpt_grammar *g = NULL;
        ngpt_status st = ngpt_grammar_from_json_schema(&g, NULL, c->schema, strlen(c->schema));
        CHECK(st == NGPT_OK, "schema %s: %s", c->schema, ngpt_last_error());
        if (!g) continue;
        for (int k = 0; k < 10 && c->accept[k]; k++)
            CHECK(match(g, c->accept[k]), "schema %s accepts %s (grammar: %s)", c->schema,
                  c->accept[k], g->text);
        for (int k = 0; k < 10 && c->reject[k]; k++)
            CHECK(!match(g, c->reject[k]), "schema %s refuses %s", c->schema, c->reject[k]);
        ngpt_grammar_free(g);
    }
}

static void test_errors(void)
{
    static const struct {
        const char *schema, *message;
        ngpt_status status;
    } bad[] = {
        {"{\"type\":\"string\",\"minLength\":1,\"contentEncoding\":\"base64\"}",
         "the keyword \"contentEncoding\" is not supported", NGPT_ERR_UNSUPPORTED},
        {"{\"properties\":{\"a\":{\"type\":\"array\",\"uniqueItems\":true}}}",
         "at /properties/a: the keyword \"uniqueItems\" is not supported", NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"object\",\"patternProperties\":{\"^x\":{}}}", "\"patternProperties\"",
         NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"number\",\"minimum\":0.5}", "at the root: minimum and maximum are supported for integers only",
         NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"string\",\"format\":\"email\"}", "at /format: format \"email\" is not supported",
         NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"string\",\"pattern\":\"\\\\bword\"}", "\\b (a word boundary)",
         NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"string\",\"pattern\":\"a(?=b)\"}", "lookaround", NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"string\",\"pattern\":\"a^b\"}", "^ is supported at the start",
         NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"string\",\"pattern\":\"a\",\"maxLength\":3}", "\"pattern\" together with",
         NGPT_ERR_UNSUPPORTED},
        {"{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"number\"}]}",
         "alternatives 0 and 1 may both match", NGPT_ERR_UNSUPPORTED},
        {"{\"$ref\":\"https://example.com/s.json\"}", "only references inside the schema",
         NGPT_ERR_UNSUPPORTED},
        {"{\"$ref\":\"#/$defs/missing\"}", "names no part of the schema", NGPT_ERR_BAD_FORMAT},
        {"{\"type\":\"strin\"}", "\"type\" must be one of", NGPT_ERR_BAD_FORMAT},
        {"{\"type\":\"object\",", "the schema is not JSON", NGPT_ERR_BAD_FORMAT},
        {"false", "matches no value", NGPT_ERR_UNSUPPORTED},
        {"{\"if\":{},\"then\":{}}", "\"if\" is not supported", NGPT_ERR_UNSUPPORTED},
        {"{\"not\":{\"type\":\"null\"}}", "\"not\" is not supported", NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"integer\",\"minimum\":5,\"maximum\":2}", "no integer lies between",
         NGPT_ERR_UNSUPPORTED},
        {"{\"type\":\"integer\",\"multipleOf\":2}", "\"multipleOf\" is not supported",
         NGPT_ERR_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ngpt_grammar *g = (ngpt_grammar *)1;
        ngpt_status st = ngpt_grammar_from_json_schema(&g, NULL, bad[i].schema, strlen(bad[i].schema));
        const char *msg = ngpt_last_error();
        CHECK(st == bad[i].status && !g && strstr(msg, bad[i].message) &&
                  !strncmp(msg, "ngpt_grammar_from_json_schema: ", 31) && !strchr(msg, '\n'),
              "%s: %s -> %s", bad[i].schema, ngpt_status_string(st), msg);
    }
}

int main(void)
{
    test_cases();
    test_errors();
    printf("test_grammar_schema: %d passed, %d failed\n", test_passed, test_failed);
    return test_failed != 0;
}
