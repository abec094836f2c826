/* test_nonfinite.c — NaN and Inf in training: a poisoned
 * parameter (NaN, then Inf) and a run that diverges (learning rate 10 and
 * weight decay 10 flip and grow the weights every step) each make
 * ngpt_context_train_step fail with NGPT_ERR_NUMERIC naming the step, with the
 * parameters, AdamW moments and step count bit for bit unchanged;
 * ngpt_context_optim_skip then moves on to the next batch. */
#include <math.h>

#include "runtime/context.h"
#include "test.h"

static const char text[] =
    "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs. "
    "How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow.";

static ngpt_context *make(void)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = 16, c.d_model = 16, c.n_layers = 1, c.n_heads = 2, c.d_ff = 32;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = 2;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 5));
    return ctx;
}

/* Hash of everything a failed step must not touch. */
static uint64_t state_hash(const ngpt_context *ctx)
{
    const size_t P = ctx->lay.total * sizeof(float);
    uint64_t h[4] = {ngpt_checksum_bytes(ctx->plan.params, P), ngpt_checksum_bytes(ctx->plan.adam_m, P),
                     ngpt_checksum_bytes(ctx->plan.adam_v, P), ctx->optim_steps};
    return ngpt_checksum_bytes(h, sizeof h);
}

/* One step must fail with NGPT_ERR_NUMERIC naming step `step`, changing nothing. */
static void expect_numeric(ngpt_context *ctx, const ngpt_optim_config *opt, const ngpt_data *d,
                           uint64_t step, const char *what)
{
    uint64_t before = state_hash(ctx);
    float loss = 0.0f;
    ngpt_status st = ngpt_context_train_step(ctx, opt, d, 1, 2, 16, &loss, NULL, NULL);
    CHECK(st == NGPT_ERR_NUMERIC, "%s: got %s (%s)", what, ngpt_status_string(st), ngpt_last_error());
    char want[32];
    snprintf(want, sizeof want, "of step %llu is", (unsigned long long)step);
    CHECK(strstr(ngpt_last_error(), want) != NULL, "%s: the message names %s: %s", what, want,
          ngpt_last_error());
    CHECK_HASH(state_hash(ctx), before);
}

static void poisoned(float value, const char *what)
{
    ngpt_context *ctx = make();
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text - 1, 0.2f, 16));
    if (!ctx || !d) return;
    ngpt_optim_config opt = ngpt_optim_config_default();
    float loss, *p;
    size_t n;
    for (int i = 0; i < 3; i++) CHECK_OK(ngpt_context_train_step(ctx, &opt, d, 1, 2, 16, &loss, NULL, NULL));
    CHECK_OK(ngpt_context_params(ctx, &p, &n));
    ngpt_tensor_info fc1;
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.0.mlp.fc1.weight", &fc1));
    p[fc1.offset + 7] = value;
    expect_numeric(ctx, &opt, d, 4, what);
    expect_numeric(ctx, &opt, d, 4, what);      /* the same batch again: the same answer */
    /* skipping counts the step and changes nothing else */
    uint64_t steps, before = ngpt_checksum_bytes(ctx->plan.params, n * sizeof(float));
    CHECK_OK(ngpt_context_optim_skip(ctx));
    CHECK_OK(ngpt_context_step_count(ctx, &steps));
    CHECK(steps == 4, "skip counted the step (%llu)", (unsigned long long)steps);
    CHECK_HASH(ngpt_checksum_bytes(ctx->plan.params, n * sizeof(float)), before);
    expect_numeric(ctx, &opt, d, 5, what);
    /* repaired, training goes on from the next step */
    p[fc1.offset + 7] = 0.0f;
    CHECK_OK(ngpt_context_train_step(ctx, &opt, d, 1, 2, 16, &loss, NULL, NULL));
    CHECK(isfinite(loss), "finite loss after the repair");
    ngpt_data_free(d);
    ngpt_context_free(ctx);
}

static void diverging(void)
{
    ngpt_context *ctx = make();
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text - 1, 0.2f, 16));
    if (!ctx || !d) return;
    ngpt_optim_config opt = ngpt_optim_config_default();
    opt.lr = opt.min_lr = 10.0f, opt.warmup = 0, opt.weight_decay = 10.0f;
    float loss = 0.0f;
    ngpt_status st = NGPT_OK;
    int step = 0;
    while (step < 100 && !(st = ngpt_context_train_step(ctx, &opt, d, 1, 2, 16, &loss, NULL, NULL))) step++;
    CHECK(st == NGPT_ERR_NUMERIC && step > 0 && step < 100, "diverged at step %d: %s", step + 1,
          ngpt_last_error());
    printf("diverging run: step %d stopped: %s\n", step + 1, ngpt_last_error());
    expect_numeric(ctx, &opt, d, (uint64_t)step + 1, "diverged");
    ngpt_data_free(d);
    ngpt_context_free(ctx);
}

int main(void)
{
    poisoned(NAN, "NaN parameter");
    poisoned(INFINITY, "Inf parameter");
    poisoned(-INFINITY, "-Inf parameter");
    diverging();
    return test_summary("test_nonfinite");
}
