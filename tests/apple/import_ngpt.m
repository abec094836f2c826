// import_ngpt.m — `make check-apple` compiles this with clang -fmodules for
// macOS and iOS: include/module.modulemap makes `@import ngpt;` work. It is
// docs/APPLE.md's Swift example in Objective-C (open a checkpoint, plan a
// context, generate), so the calls that example makes are compile-checked
// through the module. Compiled, not linked or run (no Apple SDK here).
@import ngpt;
#include <stdio.h>

static int print_token(int32_t token, void *user)
{
    (void)user;
    return putchar(token) == EOF;     // byte-level model: a token is a byte
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    ngpt_config cfg;
    if (ngpt_checkpoint_config(argv[1], &cfg) != NGPT_OK) return 1;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, &cfg, &shape, NULL, 0) != NGPT_OK) return 1;
    ngpt_status st = ngpt_checkpoint_load(ctx, argv[1]);
    const int32_t prompt[] = {'H', 'e', 'l', 'l', 'o'};
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 32;
    ngpt_generate_result r;
    if (st == NGPT_OK) st = ngpt_model_generate(ctx, &gc, prompt, 5, NULL, 0, print_token, NULL, &r);
    ngpt_context_free(ctx);
    return st == NGPT_OK ? 0 : 1;
}
