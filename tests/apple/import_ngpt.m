// import_ngpt.m — `make check-apple` compiles this with clang -fmodules for
// macOS and iOS: include/module.modulemap makes `@import ngpt;` work. It is
// docs/APPLE.md's Swift example in Objective-C (open a model, make a
// context of it, generate), so the calls that example makes are compile-checked
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
    ngpt_model *model = NULL;
    if (ngpt_model_open(&model, argv[1]) != NGPT_OK) return 1;
    ngpt_context *ctx = NULL;
    ngpt_status st = ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0);
    const int32_t prompt[] = {'H', 'e', 'l', 'l', 'o'};
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 32;
    ngpt_generate_result r;
    if (st == NGPT_OK) st = ngpt_context_generate(ctx, &gc, prompt, 5, NULL, 0, print_token, NULL, &r);
    ngpt_context_free(ctx);
    ngpt_model_close(model);
    return st == NGPT_OK ? 0 : 1;
}
