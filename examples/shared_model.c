/* shared_model.c — one model opened once, several inference contexts on
 * its weights (a chat and a background summary, or one per thread), each
 * generating; the first conversation saved as a session to resume later.
 * Using only the installed library:
 *
 *   cc shared_model.c -o shared_model $(pkg-config --cflags --libs ngpt)
 *   ./shared_model model.ngpt 4 20 chat.session
 *
 * Arguments: MODEL [CONTEXTS (2)] [TOKENS per context (32)] [SESSION file].
 * At the end it prints the process's resident memory (Linux): the model's
 * weights count once, whatever the number of contexts. */
#include <ngpt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CONTEXTS = 16, SEQ = 16 };

static int fail(const char *what)
{
    fprintf(stderr, "shared_model: %s\n", what ? what : ngpt_last_error());
    return 1;
}

/* VmRSS of this process in KiB, or -1 where /proc is not there. */
static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shared_model MODEL.ngpt [CONTEXTS] [TOKENS] [SESSION]\n");
        return 2;
    }
    const int n_ctx = argc > 2 ? atoi(argv[2]) : 2, n_new = argc > 3 ? atoi(argv[3]) : 32;
    const char *session = argc > 4 ? argv[4] : NULL;
    if (n_ctx < 1 || n_ctx > MAX_CONTEXTS || n_new < 1)
        return fail("CONTEXTS must be 1..16 and TOKENS at least 1");

    ngpt_model *model;                      /* the file read, verified and mapped once */
    if (ngpt_model_open(&model, argv[1])) return fail(NULL);
    const ngpt_tokenizer *tok;              /* borrowed: lives as long as the model */
    ngpt_model_tokenizer(model, &tok);

    const char *prompt = "Once upon a time";
    int32_t ids[64];
    size_t n_ids = 0;
    if (!tok) {                             /* a byte-level model: a token is a byte */
        for (; prompt[n_ids]; n_ids++) ids[n_ids] = (unsigned char)prompt[n_ids];
    } else if (ngpt_tokenizer_encode(tok, prompt, strlen(prompt), ids, 64, &n_ids)) {
        ngpt_model_close(model);
        return fail(NULL);
    }

    /* Each context holds activations, a KV cache and scratch only; passes
     * of SEQ tokens keep its activations small (a prompt goes in passes). */
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = SEQ;
    ngpt_context *ctx[MAX_CONTEXTS] = {0};
    int32_t out[MAX_CONTEXTS][256];
    int rc = 0;
    for (int i = 0; i < n_ctx && !rc; i++) {
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.max_tokens = n_new;
        gc.sampler.temperature = 0.8f;
        gc.sampler.seed = (uint64_t)i;      /* a different continuation each */
        gc.keep_cache = true;               /* the conversation stays in slot 0 */
        ngpt_generate_result r;
        if (ngpt_context_init(&ctx[i], model, NULL, &shape, NULL, 0) ||
            ngpt_context_generate(ctx[i], &gc, ids, (int32_t)n_ids, out[i], 256, NULL, NULL, &r)) {
            rc = fail(NULL);
            break;
        }
        char text[1024];
        size_t n_bytes = 0;
        if (tok) ngpt_tokenizer_decode(tok, out[i], (size_t)r.n_tokens, text, sizeof text - 1, &n_bytes);
        else for (; n_bytes < (size_t)r.n_tokens; n_bytes++) text[n_bytes] = (char)out[i][n_bytes];
        text[n_bytes] = '\0';
        printf("context %d: %s%s\n", i, prompt, text);
    }
    if (!rc && session) {                   /* resume it later with ngpt_context_cache_load */
        if (ngpt_context_cache_save(ctx[0], 0, session)) rc = fail(NULL);
        else fprintf(stderr, "shared_model: saved context 0's conversation to %s\n", session);
    }
    if (!rc)
        fprintf(stderr, "shared_model: %d contexts on one model: resident %ld KiB\n", n_ctx,
                resident_kib());
    for (int i = 0; i < n_ctx; i++) ngpt_context_free(ctx[i]);
    if (ngpt_model_close(model)) rc = fail(NULL);     /* after its contexts */
    return rc;
}
