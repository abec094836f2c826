/* test_weights.c — an inference context holds each weight once
 * (runtime/weights.h): its Linears are packed in place in the parameters
 * before a pass, unpacked for ngpt_context_params until ngpt_context_prepare.
 * Every view gives the same bits: full forwards packed, unpacked and in a
 * training context; parameter checksums and saved files in either state;
 * values written through the pointer read back after packing. On the tiny
 * config and on one whose every Linear has rows past its last full panel
 * (n % 16 != 0) and inputs past a whole group, and one whose panel does
 * not fit the gemm workspace. And the arenas of the
 * gpt2-small preset fit the budgets docs/BENCH.md gives. */
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

#include "runtime/context.h"   /* run.weights_packed: which view a context is in */

static char path[256], path2[256];

static ngpt_context *make(const ngpt_config *cfg, ngpt_mode mode, int batch, uint64_t seed)
{
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = batch, s.seq = 0;
    s.logits_rows = NGPT_LOGITS_ALL;    /* full forwards compare every position */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, cfg, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, seed));
    return ctx;
}

/* Logits of a full forward over B=2 rows of the model's T tokens (copied out). */
static float *forward(ngpt_context *ctx, const ngpt_config *cfg)
{
    const int T = cfg->context_len, V = cfg->vocab_size;
    int32_t *tok = malloc(sizeof(int32_t) * 2 * (size_t)T);
    float *out = malloc(sizeof(float) * 2 * (size_t)T * (size_t)V);
    if (!tok || !out) abort();
    for (int i = 0; i < 2 * T; i++) tok[i] = (i * 37 + 5) % V;
    CHECK_OK(ngpt_context_forward(ctx, tok, 2, T, NULL, NULL));
    const float *lg = NULL;
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    if (lg) memcpy(out, lg, sizeof(float) * 2 * (size_t)T * (size_t)V);
    free(tok);
    return out;
}

static uint64_t params_hash(const ngpt_context *ctx)
{
    uint64_t h = 0;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    return h;
}

static void test_views(const char *name, const ngpt_config *cfg)
{
    const size_t n = 2 * (size_t)cfg->context_len * (size_t)cfg->vocab_size;
    ngpt_context *tr = make(cfg, NGPT_MODE_TRAIN, 2, 9), *in = make(cfg, NGPT_MODE_INFER, 2, 9);
    if (!tr || !in) goto out;
    /* a fresh context is unpacked; its first pass packs it */
    CHECK(!in->run.weights_packed, "[%s] packed before a pass", name);
    CHECK_HASH(params_hash(in), params_hash(tr));
    CHECK_OK(ngpt_context_save(in, path));
    float *want = forward(tr, cfg), *packed = forward(in, cfg);
    CHECK(in->run.weights_packed, "[%s] not packed by a pass", name);
    CHECK(!memcmp(want, packed, n * sizeof(float)), "[%s] packed forward differs from training's", name);
    /* hashed and saved in the state_dict layout while packed */
    CHECK_HASH(params_hash(in), params_hash(tr));
    CHECK_OK(ngpt_context_save(in, path2));
    CHECK(test_same_file(path, path2), "[%s] a packed context saves other bytes", name);
    /* the pointer: the state_dict layout, and stays so across passes */
    float *p, *q;
    size_t count, count_tr;
    CHECK_OK(ngpt_context_params(in, &p, &count));
    CHECK_OK(ngpt_context_params(tr, &q, &count_tr));
    CHECK(count == count_tr && !memcmp(p, q, count * sizeof(float)), "[%s] unpacked values differ", name);
    float *unpacked = forward(in, cfg);
    CHECK(!in->run.weights_packed, "[%s] packed while the pointer is out", name);
    CHECK(!memcmp(want, unpacked, n * sizeof(float)), "[%s] unpacked forward differs", name);
    /* a write through it is seen by the next pass, and by the packed one after prepare */
    for (size_t i = 0; i < count; i++) p[i] *= -0.75f, q[i] *= -0.75f;
    float *want2 = forward(tr, cfg), *written = forward(in, cfg);
    CHECK(!memcmp(want2, written, n * sizeof(float)), "[%s] a write is not seen", name);
    CHECK_OK(ngpt_context_prepare(in));
    CHECK(in->run.weights_packed, "[%s] prepare did not pack", name);
    float *repacked = forward(in, cfg);
    CHECK(!memcmp(want2, repacked, n * sizeof(float)), "[%s] repacked forward differs", name);
    CHECK_HASH(params_hash(in), params_hash(tr));
    /* and the values come back as written */
    CHECK_OK(ngpt_context_params(in, &p, &count));
    CHECK(!memcmp(p, q, count * sizeof(float)), "[%s] values do not come back as written", name);
    free(want), free(packed), free(unpacked), free(want2), free(written), free(repacked);
out:
    ngpt_context_free(tr);
    ngpt_context_free(in);
}

/* Generation on the packed weights and on the unpacked ones (the pointer
 * out) gives the same tokens, and so does a copy of the saved model. */
static void test_generation(const ngpt_config *cfg)
{
    ngpt_context *a = make(cfg, NGPT_MODE_INFER, 1, 3), *b = make(cfg, NGPT_MODE_INFER, 1, 3);
    if (!a || !b) goto out;
    float *p;
    size_t count;
    CHECK_OK(ngpt_context_params(b, &p, &count));
    int32_t prompt[4] = {1, 2, 3, 4}, ta[24], tb[24];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 24, gc.sampler.seed = 5;
    ngpt_generate_result ra, rb;
    CHECK_OK(ngpt_context_generate(a, &gc, prompt, 4, ta, 24, NULL, NULL, &ra));
    CHECK_OK(ngpt_context_generate(b, &gc, prompt, 4, tb, 24, NULL, NULL, &rb));
    CHECK(ra.n_tokens == rb.n_tokens && !memcmp(ta, tb, sizeof(int32_t) * (size_t)ra.n_tokens),
          "packed and unpacked generation differ");
    CHECK(a->run.weights_packed && !b->run.weights_packed, "which context packed");
    /* an inference context's copy of the saved (unpacked) model packs it */
    CHECK_OK(ngpt_context_save(b, path));
    ngpt_model *m = NULL;
    ngpt_context *c = test_context_open(&m, path, cfg, NULL);
    if (c) {
        CHECK_OK(ngpt_context_generate(c, &gc, prompt, 4, ta, 24, NULL, NULL, &ra));
        CHECK(ra.n_tokens == rb.n_tokens && !memcmp(ta, tb, sizeof(int32_t) * (size_t)ra.n_tokens),
              "generation of a copy of the saved model differs");
        CHECK(c->run.weights_packed, "the copy did not pack");
    }
    test_context_close(c, m);
out:
    ngpt_context_free(a);
    ngpt_context_free(b);
}

/* The gpt2-small preset of ngpt bench (V=256) at batch 1, T=1024: the
 * inference arenas docs/BENCH.md promises (one copy of the weights), for a
 * pass over every position keeping every position's logits (the default
 * shape plans less: passes of 512, one logits row). */
static void test_gpt2_small_arenas(void)
{
    ngpt_config c = ngpt_config_default();
    CHECK(test_config_apply(&c, "C=768 L=12 H=12 d_ff=3072 T=1024"), "preset");
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = c.context_len, s.logits_rows = NGPT_LOGITS_ALL;
    size_t f32 = 0, q8 = 0, q4 = 0;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &f32));
    c.weights = NGPT_WEIGHTS_Q8;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &q8));
    c.weights = NGPT_WEIGHTS_Q4;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &q4));
    printf("gpt2-small inference arenas at batch 1, T=1024: f32 %.1f MiB, q8 %.1f MiB, "
           "q4 %.1f MiB\n", f32 / 1048576.0, q8 / 1048576.0, q4 / 1048576.0);
    CHECK(f32 <= 420u << 20, "f32 arena %.1f MiB > 420 MiB", f32 / 1048576.0);
    CHECK(q8 <= 200u << 20, "q8 arena %.1f MiB > 200 MiB", q8 / 1048576.0);
    CHECK(q4 <= 150u << 20, "q4 arena %.1f MiB > 150 MiB", q4 / 1048576.0);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/ngpt_test_weights_%d.ngpt", (int)getpid());
    snprintf(path2, sizeof path2, "/tmp/ngpt_test_weights_%d_b.ngpt", (int)getpid());
    ngpt_config tiny = test_config_tiny(), tails = test_config_tiny();
    CHECK(test_config_apply(&tails, "V=100 C=24 H=4 d_ff=40"), "tails config");
    test_views("tiny", &tiny);
    test_views("tails", &tails);
    CHECK(test_config_apply(&tails, "tie_lm_head=0 qkv_bias=1"), "untied");
    test_views("tails untied", &tails);
    /* fc2's panel (16 x 25000 floats) is larger than the gemm workspace
     * that packing borrows otherwise */
    ngpt_config wide = test_config_tiny();
    CHECK(test_config_apply(&wide, "C=8 H=2 L=1 d_ff=25000 T=8"), "wide config");
    test_views("wide", &wide);
    test_generation(&tiny);
    test_gpt2_small_arenas();
    unlink(path);
    unlink(path2);
    return test_summary("test_weights");
}
