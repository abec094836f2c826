/* extract.c — structured output: a task pulled out of free text as JSON
 * that a JSON Schema holds the model to, then read back, using only the
 * installed library:
 *
 *   cc extract.c -o extract $(pkg-config --cflags --libs ngpt)
 *   ./extract model.ngpt "Call the plumber about the sink before Friday, it's urgent"
 *
 * The grammar guarantees the shape, so reading it back needs no JSON
 * library: the fields come in the schema's order, compact, and the reader
 * below only has to undo string escapes.
 */
#include <ngpt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SCHEMA[] =
    "{\"type\": \"object\","
    " \"properties\": {"
    "   \"title\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 40},"
    "   \"due\": {\"type\": \"string\", \"format\": \"date\"},"
    "   \"priority\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 3}},"
    " \"required\": [\"title\", \"due\", \"priority\"]}";

typedef struct text {
    char buf[4096];
    size_t n;
    const ngpt_tokenizer *tok;
} text;

static int collect(int32_t token, void *user)
{
    text *t = user;
    const uint8_t *b = NULL;
    size_t len = 0;
    uint8_t byte = (uint8_t)token;
    if (t->tok) ngpt_tokenizer_token(t->tok, token, &b, &len);
    else b = &byte, len = 1;                /* a byte-level model: a token is a byte */
    if (t->n + len < sizeof t->buf) memcpy(t->buf + t->n, b, len), t->n += len;
    return 0;
}

/* The JSON string value of "key" in the compact object s, unescaped into out
 * (\uXXXX below U+0080 only, which is all a short title needs here). */
static int string_field(const char *s, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(s, pat);
    if (!p) return 0;
    size_t n = 0;
    for (p += strlen(pat); *p && *p != '"' && n + 1 < cap; p++) {
        if (*p != '\\') {
            out[n++] = *p;
            continue;
        }
        p++;
        const char *esc = "\"\"\\\\//b\bf\fn\nr\rt\t";
        const char *e = strchr(esc, *p);
        if (*p == 'u') {
            unsigned v = 0;
            sscanf(p + 1, "%4x", &v);
            out[n++] = v < 0x80 ? (char)v : '?';
            p += 4;
        } else if (e && (e - esc) % 2 == 0) {
            out[n++] = e[1];
        }
    }
    out[n] = '\0';
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: extract MODEL.ngpt TEXT\n");
        return 2;
    }
    ngpt_model *model = NULL;
    ngpt_context *ctx = NULL;
    ngpt_grammar *grammar = NULL;
    text out = {.n = 0};
    int rc = 1;
    if (ngpt_model_open(&model, argv[1]) || ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0) ||
        ngpt_model_tokenizer(model, &out.tok) ||
        /* compiled once for the model's vocabulary; reusable by any number of generations */
        ngpt_grammar_from_json_schema(&grammar, out.tok, SCHEMA, strlen(SCHEMA)))
        goto done;

    char prompt[2048];
    snprintf(prompt, sizeof prompt, "Extract the task as JSON.\nText: %s\nJSON: ", argv[2]);
    int32_t ids[2048];
    size_t n = 0;
    if (out.tok) {
        if (ngpt_tokenizer_encode(out.tok, prompt, strlen(prompt), ids, 2048, &n)) goto done;
    } else {
        for (; prompt[n]; n++) ids[n] = (unsigned char)prompt[n];
    }
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler.temperature = 0.0f;          /* greedy */
    gc.max_tokens = 200;
    gc.grammar = grammar;                   /* only tokens that keep the JSON valid */
    ngpt_generate_result r;
    if (ngpt_context_generate(ctx, &gc, ids, (int32_t)n, NULL, 0, collect, &out, &r)) goto done;
    out.buf[out.n] = '\0';
    printf("%s\n", out.buf);
    if (r.reason != NGPT_STOP_GRAMMAR_COMPLETE && r.reason != NGPT_STOP_END_TOKEN) {
        fprintf(stderr, "extract: the output was cut (%s): raise max_tokens\n",
                ngpt_stop_reason_string(r.reason));
        goto done;
    }
    char title[256], due[16];
    int priority = 0;
    const char *pr = strstr(out.buf, "\"priority\":");
    if (!string_field(out.buf, "title", title, sizeof title) ||
        !string_field(out.buf, "due", due, sizeof due) || !pr ||
        sscanf(pr + 11, "%d", &priority) != 1) {
        fprintf(stderr, "extract: the output does not have the schema's fields\n");
        goto done;
    }
    printf("title:    %s\ndue:      %s\npriority: %d\n", title, due, priority);
    rc = 0;
done:
    if (rc && !out.n) fprintf(stderr, "extract: %s\n", ngpt_last_error());
    ngpt_grammar_free(grammar);
    ngpt_context_free(ctx);
    ngpt_model_close(model);
    return rc;
}
