/* test_train_alloc.c — training allocates nothing after init: train steps
 * (forward, backward, clipping, AdamW, data windows) and evaluation run in
 * the arena, counted by wrapping malloc/calloc/realloc. */
/* test-ldflags: -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc */
#include <stdlib.h>

#include "alloc_count.h"
#include "test.h"


int main(void)
{
    ngpt_config cfg = ngpt_config_default();
    cfg.context_len = 16, cfg.d_model = 32, cfg.n_layers = 2, cfg.n_heads = 4, cfg.d_ff = 64;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = 3, s.seq = 16, s.threads = 2;    /* the pool runs jobs without allocating */
    static char text[2000];
    for (size_t i = 0; i < sizeof text; i++) text[i] = (char)('a' + (i * 7 + i / 13) % 26);
    ngpt_context *ctx = NULL;
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0));
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text, 0.1f, 16));
    if (!ctx || !d) return test_summary("test_train_alloc");
    CHECK_OK(ngpt_context_params_init(ctx, 3));
    ngpt_optim_config o = ngpt_optim_config_default();
    o.accum = 2, o.warmup = 2, o.total_steps = 5;
    int before = allocations;
    float loss, eval;
    for (int i = 0; i < 3; i++) CHECK_OK(ngpt_context_train_step(ctx, &o, d, 9, 3, 16, &loss, NULL, NULL));
    CHECK_OK(ngpt_context_train_step(ctx, &o, d, 9, 2, 7, &loss, NULL, NULL));   /* smaller than planned */
    CHECK_OK(ngpt_context_evaluate(ctx, d, 1, 2, 3, 16, &eval));
    CHECK(allocations == before, "training allocated %d times", allocations - before);
    ngpt_data_free(d);
    ngpt_context_free(ctx);
    return test_summary("test_train_alloc");
}
