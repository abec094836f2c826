/* attention.c — where a model looks: the attention weights of every head
 * over a prompt, drawn as text, using only the installed library:
 *
 *   cc attention.c -o attention $(pkg-config --cflags --libs ngpt)
 *   ./attention model.ngpt "The cat sat" [TOKENIZER.tok]
 *
 * A context planned with NGPT_TRACE_FULL keeps each layer's attention
 * probabilities (before dropout) from the last forward; ngpt_context_trace
 * gives them as (batch, H, seq, seq): row i is what token i attends to
 * (keys 0..i, the rest are zero). Each head is printed as a grid, darker
 * characters for more weight, then the tokens the last one attends to most.
 * The prompt is encoded with the tokenizer the model carries (a model
 * trained on one), or the one given; a byte-level model's tokens are bytes. */
#include <ngpt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SHADES[] = " .:-=+*#%@";      /* 0 .. 1 */

/* A short printable label for token id: its bytes, escaped. */
static void label(const ngpt_tokenizer *tok, int32_t id, char out[16])
{
    uint8_t byte = (uint8_t)id;
    const uint8_t *b = &byte;
    size_t n = 1, at = 0;
    if (tok) ngpt_tokenizer_token(tok, id, &b, &n);
    for (size_t i = 0; i < n && at < 10; i++) {
        if (b[i] == '\n') at += (size_t)snprintf(out + at, 16 - at, "\\n");
        else if (b[i] == ' ') out[at++] = '_';
        else if (b[i] >= 33 && b[i] < 127) out[at++] = (char)b[i];
        else at += (size_t)snprintf(out + at, 16 - at, "\\x%02x", b[i]);
    }
    out[at < 15 ? at : 15] = '\0';
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: attention MODEL.ngpt PROMPT [TOKENIZER.tok]\n");
        return 2;
    }
    const char *path = argv[1], *prompt = argv[2];
    ngpt_config cfg;
    ngpt_model *model = NULL;
    ngpt_context *ctx = NULL;
    ngpt_tokenizer *own = NULL;         /* a tokenizer file's, freed here */
    const ngpt_tokenizer *tok = NULL;   /* that, or the model's (borrowed from it) */
    size_t len = strlen(prompt), n = 0;
    int32_t *ids = malloc((len ? len : 1) * sizeof *ids);
    int rc = 1;
    if (!ids || ngpt_model_open(&model, path) || ngpt_model_config(model, &cfg)) goto done;
    if (argc > 3 ? ngpt_tokenizer_load(&own, argv[3]) : ngpt_model_tokenizer(model, &tok))
        goto done;
    if (own) tok = own;
    if (tok) {
        if (ngpt_tokenizer_encode(tok, prompt, len, ids, len, &n)) goto done;
    } else {
        for (; n < len; n++) ids[n] = (unsigned char)prompt[n];     /* a token is a byte */
    }
    if (n == 0 || n > (size_t)cfg.context_len) {
        fprintf(stderr, "attention: the prompt has %zu tokens; the model takes 1..%d\n", n,
                (int)cfg.context_len);
        rc = 2;
        goto done;
    }

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = (int32_t)n;                         /* the prompt in one pass */
    shape.trace = NGPT_TRACE_FULL;                  /* keep every layer's probabilities */
    if (ngpt_context_init(&ctx, model, NULL, &shape, NULL, 0) ||
        ngpt_context_forward(ctx, ids, 1, (int32_t)n, NULL, NULL))
        goto done;

    char lb[16];
    for (int32_t l = 0; l < cfg.n_layers; l++) {
        const float *p;
        size_t count;
        if (ngpt_context_trace(ctx, l, &p, &count)) goto done;
        for (int32_t h = 0; h < cfg.n_heads; h++) {
            const float *m = p + (size_t)h * n * n;
            float lo = 2.0f, hi = -1.0f;
            printf("layer %d head %d\n", (int)l, (int)h);
            for (size_t i = 0; i < n; i++) {
                float sum = 0.0f;
                label(tok, ids[i], lb);
                printf("  %10s |", lb);
                for (size_t j = 0; j < n; j++) {
                    float w = m[i * n + j];
                    int s = (int)(w * (float)(sizeof SHADES - 2) + 0.5f);
                    putchar(j <= i ? SHADES[s < 0 ? 0 : s > 9 ? 9 : s] : ' ');
                    sum += w;
                }
                printf("|\n");
                if (sum < lo) lo = sum;
                if (sum > hi) hi = sum;
            }
            /* the last token's three strongest keys */
            const float *last = m + (n - 1) * n;
            size_t top[3] = {0, 0, 0};
            printf("  the last token attends most to:");
            for (int k = 0; k < 3 && k < (int)n; k++) {
                size_t best = n;
                for (size_t j = 0; j < n; j++) {
                    bool taken = false;
                    for (int q = 0; q < k; q++) taken |= top[q] == j;
                    if (!taken && (best == n || last[j] > last[best])) best = j;
                }
                top[k] = best;
                label(tok, ids[best], lb);
                printf(" %s@%zu %.3f", lb, best, (double)last[best]);
            }
            printf("\n  rows sum to %.4f..%.4f\n\n", (double)lo, (double)hi);
        }
    }
    rc = 0;
done:
    if (rc == 1) fprintf(stderr, "attention: %s\n", ids ? ngpt_last_error() : "out of memory");
    free(ids);
    ngpt_tokenizer_free(own);
    ngpt_context_free(ctx);             /* contexts first, then their model */
    ngpt_model_close(model);
    return rc;
}
