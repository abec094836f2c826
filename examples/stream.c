/* stream.c — open a model and stream a completion, using only the installed
 * library:
 *
 *   cc stream.c -o stream $(pkg-config --cflags --libs ngpt)
 *   ./stream model.ngpt "Once upon a time" 100
 */
#include <ngpt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int print_token(int32_t token, void *user)
{
    (void)user;
    putchar(token);                 /* byte-level model: a token is a byte */
    fflush(stdout);
    return 0;                       /* non-zero would stop generation */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: stream MODEL.ngpt PROMPT [N]\n");
        return 2;
    }
    const char *path = argv[1], *prompt = argv[2];
    int n_new = argc > 3 ? atoi(argv[3]) : 64;

    ngpt_model *model = NULL;               /* the file, read and verified once */
    ngpt_context *ctx = NULL;               /* a context on the model's weights */
    ngpt_generate_result r;
    int rc = 1;
    /* shape NULL: the plan generation needs; arena NULL: the library allocates it */
    if (ngpt_model_open(&model, path) || ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0))
        goto done;

    int32_t tokens[4096];
    int32_t n = 0;
    for (; prompt[n] && n < 4096; n++) tokens[n] = (unsigned char)prompt[n];

    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = n_new;
    gc.sampler.temperature = 0.8f;
    gc.sampler.top_k = 40;
    gc.sampler.seed = 42;
    if (ngpt_context_generate(ctx, &gc, tokens, n, NULL, 0, print_token, NULL, &r)) goto done;
    putchar('\n');
    fprintf(stderr, "stream: %d tokens (%s)\n", (int)r.n_tokens, ngpt_stop_reason_string(r.reason));
    rc = 0;
done:
    /* the message names the function that failed and says what to do, e.g.
     * "ngpt_model_open: cannot open model.ngpt: No such file or directory" */
    if (rc) fprintf(stderr, "stream: %s\n", ngpt_last_error());
    ngpt_context_free(ctx);                 /* contexts first, then their model */
    ngpt_model_close(model);
    return rc;
}
