/* sampling.c — one prompt, three ways to pick the next token, side by side:
 * greedy (always the most likely token), top-k (sample among the k most
 * likely) and top-p (sample among the most likely tokens that make up p of
 * the probability), using only the installed library:
 *
 *   cc sampling.c -o sampling $(pkg-config --cflags --libs ngpt)
 *   ./sampling model.ngpt "Once upon a time" [N] [TOKENIZER.tok]
 *
 * A model trained on a tokenizer carries it in its file; with it, or with a
 * tokenizer file given (whose vocabulary fits the model's V), the prompt is
 * encoded and the tokens printed as their bytes. A byte-level model's
 * tokens are bytes. */
#include <ngpt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WIDTH = 26, MAX_OUT = 4096 };

typedef struct column {
    const char *title;
    ngpt_sampler sampler;
    int32_t out[MAX_OUT];
    ngpt_generate_result r;
    char text[8 * MAX_OUT];     /* the continuation, made printable */
    size_t len;
} column;

/* A token's bytes, printable: ASCII as it is, a newline as '|', anything
 * else as '.' (a byte model can stop in the middle of a UTF-8 character). */
static void append(column *c, const ngpt_tokenizer *tok, int32_t id)
{
    uint8_t byte = (uint8_t)id;
    const uint8_t *b = &byte;
    size_t n = 1;
    if (tok) ngpt_tokenizer_token(tok, id, &b, &n);
    for (size_t i = 0; i < n && c->len + 1 < sizeof c->text; i++)
        c->text[c->len++] = b[i] == '\n' ? '|' : b[i] >= 32 && b[i] < 127 ? (char)b[i] : '.';
    c->text[c->len] = '\0';
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sampling MODEL.ngpt PROMPT [N] [TOKENIZER.tok]\n");
        return 2;
    }
    const char *path = argv[1], *prompt = argv[2];
    int n_new = argc > 3 ? atoi(argv[3]) : 48;
    if (n_new < 1 || n_new > MAX_OUT) n_new = 48;

    ngpt_config cfg;
    ngpt_model *model = NULL;
    ngpt_context *ctx = NULL;
    ngpt_tokenizer *own = NULL;         /* a tokenizer file's, freed here */
    const ngpt_tokenizer *tok = NULL;   /* that, or the model's (borrowed from it) */
    ngpt_tokenizer_info info;
    size_t len = strlen(prompt), n = 0;
    int32_t *ids = malloc((len ? len : 1) * sizeof *ids);
    int rc = 1;
    if (!ids || ngpt_model_open(&model, path) || ngpt_model_config(model, &cfg)) goto done;
    if (argc > 4 ? ngpt_tokenizer_load(&own, argv[4]) : ngpt_model_tokenizer(model, &tok))
        goto done;
    if (own) tok = own;
    if (tok) {
        if (ngpt_tokenizer_describe(tok, &info)) goto done;
        if (info.n_tokens > cfg.vocab_size) {
            fprintf(stderr, "sampling: the tokenizer has %d tokens but the model only V=%d\n",
                    (int)info.n_tokens, (int)cfg.vocab_size);
            rc = 3;
            goto done;
        }
        if (ngpt_tokenizer_encode(tok, prompt, len, ids, len, &n)) goto done;
    } else {
        for (; n < len; n++) ids[n] = (unsigned char)prompt[n];     /* a token is a byte */
    }
    if (n == 0) {
        fprintf(stderr, "sampling: the prompt is empty\n");
        rc = 2;
        goto done;
    }
    if (ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0)) goto done;    /* generation's plan */

    static column cols[3];
    cols[0].title = "greedy";
    cols[0].sampler = ngpt_sampler_default();
    cols[0].sampler.temperature = 0.0f;             /* argmax: no randomness */
    cols[1].title = "top-k 40, T 0.8";
    cols[1].sampler = ngpt_sampler_default();
    cols[1].sampler.temperature = 0.8f;
    cols[1].sampler.top_k = 40;
    cols[2].title = "top-p 0.9, T 0.8";
    cols[2].sampler = ngpt_sampler_default();
    cols[2].sampler.temperature = 0.8f;
    cols[2].sampler.top_p = 0.9f;
    for (int c = 0; c < 3; c++) {
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.sampler = cols[c].sampler;
        gc.sampler.seed = 42;                       /* the same draws on every machine */
        gc.max_tokens = n_new;
        if (ngpt_context_generate(ctx, &gc, ids, (int32_t)n, cols[c].out, MAX_OUT, NULL, NULL, &cols[c].r))
            goto done;
        for (int32_t i = 0; i < cols[c].r.n_tokens; i++) append(&cols[c], tok, cols[c].out[i]);
    }

    printf("prompt \"%s\" (%zu tokens), up to %d new tokens each, seed 42\n\n", prompt, n, n_new);
    for (int c = 0; c < 3; c++) printf("%-*s%s", WIDTH, cols[c].title, c < 2 ? " | " : "\n");
    for (int c = 0; c < 3; c++) printf("%.*s%s", WIDTH, "----------------------------------------",
                                       c < 2 ? "-+-" : "\n");
    size_t rows = 0;
    for (int c = 0; c < 3; c++)
        if ((cols[c].len + WIDTH - 1) / WIDTH > rows) rows = (cols[c].len + WIDTH - 1) / WIDTH;
    for (size_t r = 0; r < rows; r++)
        for (int c = 0; c < 3; c++) {
            size_t at = r * WIDTH, k = at < cols[c].len ? cols[c].len - at : 0;
            printf("%-*.*s%s", WIDTH, (int)(k < WIDTH ? k : WIDTH), cols[c].text + (at < cols[c].len ? at : 0),
                   c < 2 ? " | " : "\n");
        }
    for (int c = 0; c < 3; c++) {
        char s[64];
        snprintf(s, sizeof s, "(%d tokens, %s)", (int)cols[c].r.n_tokens,
                 ngpt_stop_reason_string(cols[c].r.reason));
        printf("%-*s%s", WIDTH, s, c < 2 ? " | " : "\n");
    }
    rc = 0;
done:
    if (rc == 1) fprintf(stderr, "sampling: %s\n", ids ? ngpt_last_error() : "out of memory");
    free(ids);
    ngpt_tokenizer_free(own);
    ngpt_context_free(ctx);             /* contexts first, then their model */
    ngpt_model_close(model);
    return rc == 3 ? 1 : rc;
}
