/* stream.c — load a model and stream a completion, using only the installed
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

/* The message names the function that failed and says what to do, e.g.
 * "ngpt_checkpoint_config: cannot open model.ngpt: No such file or directory". */
static int fail(void)
{
    fprintf(stderr, "stream: %s\n", ngpt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: stream MODEL.ngpt PROMPT [N]\n");
        return 2;
    }
    const char *path = argv[1], *prompt = argv[2];
    int n_new = argc > 3 ? atoi(argv[3]) : 64;

    ngpt_config cfg;                        /* plan a context for the checkpoint */
    ngpt_status st = ngpt_checkpoint_config(path, &cfg);
    if (st) return fail();
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *ctx;
    if ((st = ngpt_context_init(&ctx, &cfg, &shape, NULL, 0))) return fail();
    if ((st = ngpt_checkpoint_load(ctx, path))) return fail();

    int32_t tokens[4096];
    int32_t n = 0;
    for (; prompt[n] && n < 4096; n++) tokens[n] = (unsigned char)prompt[n];

    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = n_new;
    gc.sampler.temperature = 0.8f;
    gc.sampler.top_k = 40;
    gc.sampler.seed = 42;
    ngpt_generate_result r;
    st = ngpt_model_generate(ctx, &gc, tokens, n, NULL, 0, print_token, NULL, &r);
    putchar('\n');
    ngpt_context_free(ctx);
    if (st) return fail();
    fprintf(stderr, "stream: %d tokens (%s)\n", (int)r.n_tokens, ngpt_stop_reason_string(r.reason));
    return 0;
}
