/* shared_checksum.c — `ngpt checksum FILE` for a byte-level model, as a
 * program linked against libngpt.so (the CLI links the static library):
 * tests/test_shared_lib.sh checks that both print the same lines, which
 * README promises for every build. Only the public API, as a user has it.
 * usage: shared_checksum FILE */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ngpt.h"

static int fail(void)
{
    fprintf(stderr, "shared_checksum: %s\n", ngpt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: shared_checksum FILE\n");
        return 2;
    }
    const char *prompt = "Hello, ngpt!";     /* ngpt checksum's default prompt */
    int32_t tokens[16], n = (int32_t)strlen(prompt);
    for (int32_t i = 0; i < n; i++) tokens[i] = (unsigned char)prompt[i];

    ngpt_model *m;
    if (ngpt_model_open(&m, argv[1])) return fail();
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = n;
    shape.logits_rows = NGPT_LOGITS_ALL;    /* the checksum covers every position */
    ngpt_context *ctx = NULL;
    uint64_t h_params = 0, h_eval = 0, h_train = 0;
    ngpt_status st = ngpt_context_init(&ctx, m, NULL, &shape, NULL, 0);
    if (!st) st = ngpt_context_params_checksum(ctx, &h_params);
    if (!st) st = ngpt_context_forward(ctx, tokens, 1, n, NULL, NULL);
    if (!st) st = ngpt_context_logits_checksum(ctx, &h_eval);
    if (!st) st = ngpt_context_dropout_set(ctx, true, 42, 0);  /* --seed 42 --step 0 */
    if (!st) st = ngpt_context_forward(ctx, tokens, 1, n, NULL, NULL);
    if (!st) st = ngpt_context_logits_checksum(ctx, &h_train);
    if (st) fail();
    ngpt_context_free(ctx);
    ngpt_model_close(m);
    if (st) return 1;
    printf("params=%016" PRIx64 "\nlogits_eval=%016" PRIx64 "\nlogits_train=%016" PRIx64 "\n",
           h_params, h_eval, h_train);
    return 0;
}
