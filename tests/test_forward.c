/* test_forward.c — the reference forward under the determinism contract:
 * golden XXH3 checksums that every build must reproduce (with 1 thread, and
 * with 3 threads splitting every job), eval/train reproducibility, dropout
 * semantics, traces, batching, and bad input. */
#include <math.h>
#include <stdlib.h>

#include "test.h"

#include "runtime/context.h"   /* the pool's inline threshold: split even tiny jobs */
#include "runtime/pool.h"

/* Golden checksums: produced by the scalar reference, identical on x86-64,
 * AArch64 and ARMv7 (qemu). A change here is a change of the model's
 * numerics, which the SIMD work must never make. */
#define GOLD_DEFAULT_PARAMS 0x8f5c4f8cd417858aull   /* default config, seed 42 */
#define GOLD_DEFAULT_EVAL   0xd717ef45ae6de93dull                  /* default config, PROMPT, eval */
#define GOLD_TINY_PARAMS    0x3e14b51a26af812cull                  /* tiny config, seed 42 */
#define GOLD_TINY_EVAL      0x868ecef3067f5321ull                  /* tiny, batch of 2, eval */
#define GOLD_TINY_TRAIN     0x51ab731bd449b3bfull                  /* tiny, batch of 2, dropout (seed 7, step 3) */

static const char PROMPT[] = "The quick brown fox jumps over the lazy dog.";

static int32_t threads = 1;     /* of the contexts make() creates */

static ngpt_context *make(ngpt_config cfg, int batch, int seq, ngpt_trace trace, uint64_t seed)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = batch, s.seq = seq, s.trace = trace, s.threads = threads;
    s.logits_rows = NGPT_LOGITS_ALL;    /* the checksums cover every position's logits */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0));
    if (ctx && threads > 1) ctx->plan.threads.pool->inline_below = 0.0;
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, seed));
    return ctx;
}

static void tiny_batch(int32_t *tok, int32_t *tgt)
{
    const char *text = "ngpt trains tiny transformers on boards, byte by byte...";
    for (int i = 0; i < 32; i++) tok[i] = (unsigned char)text[i], tgt[i] = (unsigned char)text[i + 1];
}

static uint64_t logits_hash(ngpt_context *ctx)
{
    uint64_t h = 0;
    CHECK_OK(ngpt_context_logits_checksum(ctx, &h));
    return h;
}

static void golden_default(void)
{
    ngpt_context *ctx = make(ngpt_config_default(), 1, 0, NGPT_TRACE_NONE, 42);
    if (!ctx) return;
    uint64_t h;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    CHECK_HASH(h, GOLD_DEFAULT_PARAMS);
    int n = (int)strlen(PROMPT);
    int32_t tok[64];
    for (int i = 0; i < n; i++) tok[i] = (unsigned char)PROMPT[i];
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, n, NULL, NULL));
    uint64_t first = logits_hash(ctx);
    CHECK_HASH(first, GOLD_DEFAULT_EVAL);
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, n, NULL, NULL));
    CHECK_HASH(logits_hash(ctx), first);     /* eval twice: the same */
    ngpt_context_free(ctx);
}

static void golden_tiny(void)
{
    int32_t tok[32], tgt[32];
    tiny_batch(tok, tgt);
    ngpt_context *ctx = make(test_config_tiny(), 2, 16, NGPT_TRACE_NONE, 42);
    if (!ctx) return;
    uint64_t h;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    CHECK_HASH(h, GOLD_TINY_PARAMS);
    float loss_eval, loss_train, loss_train2;
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, 16, tgt, &loss_eval));
    CHECK_HASH(logits_hash(ctx), GOLD_TINY_EVAL);
    CHECK(fabsf(loss_eval - logf(256.0f)) < 0.1f, "fresh model loss %g ~ ln 256", (double)loss_eval);

    CHECK_OK(ngpt_context_dropout_set(ctx, true, 7, 3));
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, 16, tgt, &loss_train));
    uint64_t train = logits_hash(ctx);
    CHECK_HASH(train, GOLD_TINY_TRAIN);
    CHECK(train != GOLD_TINY_EVAL, "dropout changes the logits");
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, 16, tgt, &loss_train2));
    CHECK_HASH(logits_hash(ctx), train);        /* (seed, step) reproduces */
    CHECK(loss_train == loss_train2, "train loss reproducible");
    CHECK_OK(ngpt_context_dropout_set(ctx, true, 8, 3));
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, 16, NULL, NULL));
    CHECK(logits_hash(ctx) != train, "another seed, other masks");
    CHECK_OK(ngpt_context_dropout_set(ctx, true, 7, 4));
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, 16, NULL, NULL));
    CHECK(logits_hash(ctx) != train, "another step, other masks");
    CHECK_OK(ngpt_context_dropout_set(ctx, false, 7, 3));
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, 16, NULL, NULL));
    CHECK_HASH(logits_hash(ctx), GOLD_TINY_EVAL);
    ngpt_context_free(ctx);

    /* dropout = 0 in train mode equals eval bit for bit */
    ngpt_config c0 = test_config_tiny();
    c0.dropout = 0.0f;
    ctx = make(c0, 2, 16, NGPT_TRACE_NONE, 42);
    if (!ctx) return;
    CHECK_OK(ngpt_context_dropout_set(ctx, true, 7, 3));
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, 16, NULL, NULL));
    CHECK_HASH(logits_hash(ctx), GOLD_TINY_EVAL);
    ngpt_context_free(ctx);

    /* another init seed, another model */
    ctx = make(test_config_tiny(), 1, 16, NGPT_TRACE_NONE, 43);
    if (!ctx) return;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    CHECK(h != GOLD_TINY_PARAMS, "seed 43 differs from 42");
    ngpt_context_free(ctx);
}

/* Each sequence of a batch is computed alone: its logits equal a batch-1 run. */
static void batch_independence(void)
{
    int32_t tok[32], tgt[32];
    tiny_batch(tok, tgt);
    ngpt_context *two = make(test_config_tiny(), 2, 16, NGPT_TRACE_NONE, 42);
    ngpt_context *one = make(test_config_tiny(), 1, 16, NGPT_TRACE_NONE, 42);
    if (!two || !one) return;
    const float *l2, *l1;
    CHECK_OK(ngpt_context_forward(two, tok, 2, 16, NULL, NULL));
    CHECK_OK(ngpt_context_logits(two, &l2));
    CHECK_OK(ngpt_context_forward(one, tok + 16, 1, 16, NULL, NULL));
    CHECK_OK(ngpt_context_logits(one, &l1));
    CHECK(!memcmp(l1, l2 + 16 * 256, 16 * 256 * sizeof(float)), "row 1 of the batch == alone");
    /* A prefix: the first 9 positions of a run over 16 equal a run over 9. */
    CHECK_OK(ngpt_context_forward(one, tok, 1, 9, NULL, NULL));
    CHECK_OK(ngpt_context_logits(one, &l1));
    CHECK(!memcmp(l1, l2, 9 * 256 * sizeof(float)), "causal: a prefix is unaffected by what follows");
    ngpt_context_free(two);
    ngpt_context_free(one);
}

static void traces(void)
{
    int32_t tok[32], tgt[32];
    tiny_batch(tok, tgt);
    ngpt_context *none = make(test_config_tiny(), 2, 16, NGPT_TRACE_NONE, 42);
    ngpt_context *full = make(test_config_tiny(), 2, 16, NGPT_TRACE_FULL, 42);
    ngpt_context *last = make(test_config_tiny(), 2, 16, NGPT_TRACE_LAST_ROW, 42);
    if (!none || !full || !last) return;
    for (int dropout = 0; dropout < 2; dropout++) {
        ngpt_context *all[3] = {none, full, last};
        for (int i = 0; i < 3; i++) {
            CHECK_OK(ngpt_context_dropout_set(all[i], dropout, 9, 1));
            CHECK_OK(ngpt_context_forward(all[i], tok, 2, 12, NULL, NULL));
        }
        uint64_t h = logits_hash(none);
        CHECK_HASH(logits_hash(full), h);       /* tracing never changes the logits */
        CHECK_HASH(logits_hash(last), h);
    }
    const int B = 2, H = 4, T = 12;
    for (int l = 0; l < 2; l++) {
        const float *map, *rows;
        size_t nm, nr;
        CHECK_OK(ngpt_context_trace(full, l, &map, &nm));
        CHECK_OK(ngpt_context_trace(last, l, &rows, &nr));
        CHECK(nm == (size_t)B * H * T * T && nr == (size_t)B * H * T, "sizes %zu %zu", nm, nr);
        int bad_sum = 0, bad_mask = 0;
        for (int r = 0; r < B * H * T; r++) {
            int i = r % T;
            double s = 0;
            for (int j = 0; j < T; j++) {
                float p = map[(size_t)r * T + j];
                if (j > i && p != 0.0f) bad_mask++;
                s += p;
            }
            if (fabs(s - 1.0) > 1e-5) bad_sum++;
        }
        CHECK(bad_sum == 0 && bad_mask == 0, "layer %d: %d rows not summing to 1, %d masked > 0",
              l, bad_sum, bad_mask);
        for (int bh = 0; bh < B * H; bh++)
            CHECK(!memcmp(rows + (size_t)bh * T, map + ((size_t)bh * T + T - 1) * T, T * sizeof(float)),
                  "last row of (b,h)=%d equals the full map's", bh);
    }
    const float *p;
    size_t n;
    CHECK_STATUS(ngpt_context_trace(none, 0, &p, &n), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_context_trace(full, 2, &p, &n), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_trace(full, -1, &p, &n), NGPT_ERR_BAD_ARG);
    ngpt_context_free(none);
    ngpt_context_free(full);
    ngpt_context_free(last);
}

static void bad_input(void)
{
    ngpt_context *ctx = make(test_config_tiny(), 2, 8, NGPT_TRACE_NONE, 42);
    if (!ctx) return;
    int32_t tok[32] = {0}, tgt[32] = {0};
    const float *l;
    float loss;
    CHECK_STATUS(ngpt_context_logits(ctx, &l), NGPT_ERR_WRONG_MODE);       /* before any forward */
    CHECK_STATUS(ngpt_context_forward(NULL, tok, 1, 4, NULL, NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_forward(ctx, NULL, 1, 4, NULL, NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 1, 17, NULL, NULL), NGPT_ERR_TOO_LONG);
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 1, 9, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 3, 4, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 0, 4, NULL, NULL), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 1, 0, NULL, NULL), NGPT_ERR_BAD_ARG);
    tok[3] = 256;
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 1, 4, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    CHECK(strstr(ngpt_last_error(), "256") != NULL, "names the bad id: %s", ngpt_last_error());
    tok[3] = -1;
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 1, 4, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    tok[3] = 0, tgt[2] = 1000;
    CHECK_STATUS(ngpt_context_forward(ctx, tok, 1, 4, tgt, &loss), NGPT_ERR_BAD_TOKEN);
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, 4, NULL, &loss));
    CHECK(isnan(loss), "no targets: loss is NaN");
    CHECK_STATUS(ngpt_context_logits(ctx, NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_dropout_set(NULL, true, 1, 1), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_params_init(NULL, 1), NGPT_ERR_NULL_ARG);
    ngpt_tensor_info info;
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.1.mlp.fc2.weight", &info));
    CHECK(info.ndim == 2 && info.shape[0] == 32 && info.shape[1] == 64, "fc2 shape (C, d_ff)");
    CHECK_STATUS(ngpt_context_tensor_find(ctx, "lm_head.weight", &info), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_tensor_at(ctx, test_tensor_count(ctx), &info), NGPT_ERR_BAD_ARG);
    CHECK(test_tensor_count(ctx) == 1 + 10 * 2 + 2, "tensor count");
    CHECK(strcmp(ngpt_status_string((ngpt_status)999), "unknown status") == 0, "unknown status");
    CHECK(strstr(ngpt_build_info(), "ngpt ") == ngpt_build_info(), "build info: %s", ngpt_build_info());
    ngpt_context_free(ctx);
}

int main(void)
{
    for (threads = 1; threads <= 3; threads += 2) {
        golden_default();
        golden_tiny();
        traces();
    }
    threads = 1;
    batch_independence();
    bad_input();
    return test_summary("test_forward");
}
