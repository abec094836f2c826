/* test_variants.c — the model variants (ngpt_config's qkv_bias, proj_bias,
 * tie_lm_head, final_norm, norm, pos, gelu; their gradients are checked in
 * test_grad.c): the
 * tensors each adds or removes, cached prefill/decode == the full forward
 * bit for bit, cached == uncached generation, checkpoints round-trip, the
 * cache shift refused for absolute positions, the scenario (training,
 * sampling, beams, traces) identical in a dirty caller arena with 3 threads,
 * the header bytes of the later switches, and golden checksums of three
 * combinations that cover every switch (GPT-2's among them). */
#include <unistd.h>

#include "scenario.h"

enum { V = 256, T = 16 };

static const char *const SWITCHES[] = {
    "qkv_bias=1", "tie_lm_head=0", "final_norm=0", "norm=post", "pos=sinusoidal", "pos=learned",
    "proj_bias=1", "gelu=tanh",
};
/* the golden combinations: A has every switch but sinusoidal, B that one */
static const char COMBO_A[] = "qkv_bias=1 tie_lm_head=0 norm=post final_norm=0 pos=learned";
static const char COMBO_B[] = "pos=sinusoidal qkv_bias=1";
/* GPT-2's wiring: learned positions, biased qkv and proj, the tanh GELU */
static const char COMBO_GPT2[] = "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh";

/* The tiny config (test.h) with the space-separated switches of sw. */
static ngpt_config tiny(const char *sw)
{
    ngpt_config c = test_config_tiny();
    CHECK(test_config_apply(&c, sw), "config %s: %s", sw, ngpt_last_error());
    return c;
}

static ngpt_context *make_infer(const ngpt_config *c, int batch)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = batch, s.trace = NGPT_TRACE_LAST_ROW;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, c, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_params_init(ctx, 7));
    return ctx;
}

static bool has_tensor(const ngpt_context *ctx, const char *name)
{
    ngpt_tensor_info ti;
    return ngpt_tensor_find(ctx, name, &ti) == NGPT_OK;
}

/* Each switch adds or removes exactly its tensors and their floats. */
static void test_tensors(const char *sw)
{
    ngpt_config d = tiny(""), c = tiny(sw);
    size_t nd = 0, nc = 0;
    CHECK_OK(ngpt_config_param_count(&d, &nd));
    CHECK_OK(ngpt_config_param_count(&c, &nc));
    const size_t C = (size_t)c.d_model, L = (size_t)c.n_layers;
    size_t want = nd + (c.qkv_bias ? L * 3 * C : 0) + (c.proj_bias ? L * C : 0) + (c.tie_lm_head ? 0 : (size_t)V * C) +
                  (c.pos == NGPT_POS_LEARNED ? (size_t)T * C : 0) - (c.final_norm ? 0 : 2 * C);
    CHECK(nc == want, "[%s] %zu parameters, want %zu", sw, nc, want);
    ngpt_context *ctx = make_infer(&c, 1);
    if (!ctx) return;
    CHECK(has_tensor(ctx, "blocks.1.attn.qkv.bias") == c.qkv_bias, "[%s] qkv bias", sw);
    CHECK(has_tensor(ctx, "blocks.1.attn.proj.bias") == c.proj_bias, "[%s] proj bias", sw);
    CHECK(has_tensor(ctx, "lm_head.weight") == !c.tie_lm_head, "[%s] lm_head", sw);
    CHECK(has_tensor(ctx, "ln_f.weight") == c.final_norm && has_tensor(ctx, "ln_f.bias") == c.final_norm,
          "[%s] ln_f", sw);
    CHECK(has_tensor(ctx, "pos_emb.weight") == (c.pos == NGPT_POS_LEARNED), "[%s] pos_emb", sw);
    /* the table tiles the parameters in order, with no gap */
    size_t next = 0;
    for (int32_t i = 0; i < test_tensor_count(ctx); i++) {
        ngpt_tensor_info ti;
        CHECK_OK(ngpt_tensor_at(ctx, i, &ti));
        CHECK(ti.offset == next, "[%s] %s at %zu, want %zu", sw, ti.name, ti.offset, next);
        next = ti.offset + ti.count;
    }
    CHECK(next == nc, "[%s] tensors cover %zu of %zu floats", sw, next, nc);
    ngpt_context_free(ctx);
}

/* Prefill p tokens then decode one at a time, and a batched decode of two
 * slots: every row's logits equal the full forward's, memcmp. */
static void test_cached_equals_full(const char *sw)
{
    ngpt_config c = tiny(sw);
    ngpt_context *ctx = make_infer(&c, 2);
    if (!ctx) return;
    int32_t tok[T], other[T];
    for (int i = 0; i < T; i++) tok[i] = (i * 37 + 11) % V, other[i] = (i * 101 + 3) % V;
    static float full[T * V], full2[T * V];
    const float *lg;
    CHECK_OK(ngpt_model_forward(ctx, tok, 1, T, NULL, NULL));
    CHECK_OK(ngpt_logits_data(ctx, &lg));
    memcpy(full, lg, sizeof full);
    CHECK_OK(ngpt_model_forward(ctx, other, 1, T, NULL, NULL));
    CHECK_OK(ngpt_logits_data(ctx, &lg));
    memcpy(full2, lg, sizeof full2);
    const int prefixes[] = {1, 7, T};
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
        int p = prefixes[k];
        CHECK_OK(ngpt_cache_clear(ctx, -1));
        CHECK_OK(ngpt_cache_prefill(ctx, tok, 1, p));
        CHECK_OK(ngpt_logits_data(ctx, &lg));
        CHECK(!memcmp(lg, full, (size_t)p * V * sizeof(float)), "[%s] prefill %d rows differ",
              sw, p);
        for (int i = p; i < T; i++) {
            CHECK_OK(ngpt_cache_decode(ctx, tok + i, 1));
            CHECK_OK(ngpt_logits_data(ctx, &lg));
            CHECK(!memcmp(lg, full + (size_t)i * V, V * sizeof(float)),
                  "[%s] prefill %d + decode: position %d differs", sw, p, i);
        }
    }
    CHECK_OK(ngpt_cache_clear(ctx, -1));
    CHECK_OK(ngpt_cache_prefill_slot(ctx, 0, tok, 4));
    CHECK_OK(ngpt_cache_prefill_slot(ctx, 1, other, 9));
    for (int i = 0; i < 6; i++) {
        int32_t step[2] = {tok[4 + i], other[9 + i]};
        CHECK_OK(ngpt_cache_decode(ctx, step, 2));
        CHECK_OK(ngpt_logits_data(ctx, &lg));
        CHECK(!memcmp(lg, full + (size_t)(4 + i) * V, V * sizeof(float)) &&
                  !memcmp(lg + V, full2 + (size_t)(9 + i) * V, V * sizeof(float)),
              "[%s] batched decode step %d differs", sw, i);
    }
    ngpt_context_free(ctx);
}

/* Sampling past T (the window slides) and greedy: the cache and
 * recomputing the window give the same text; a beam search runs. The
 * cache shift cannot move absolute positions: refused, never wrong. */
static void test_generate(const char *sw)
{
    ngpt_config c = tiny(sw);
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = 3;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, &c, &s, NULL, 0));
    if (!ctx) return;
    CHECK_OK(ngpt_params_init(ctx, 3));
    const int32_t prompt[5] = {'h', 'e', 'l', 'l', 'o'};
    int32_t a[40], b[40];
    ngpt_generate_result ra, rb;
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 2 * T + 3;
    for (int greedy = 0; greedy < 2; greedy++) {
        gc.sampler.temperature = greedy ? 0.0f : 0.9f, gc.sampler.seed = 99;
        gc.no_cache = false;
        CHECK_OK(ngpt_model_generate(ctx, &gc, prompt, 5, a, 40, NULL, NULL, &ra));
        gc.no_cache = true;
        CHECK_OK(ngpt_model_generate(ctx, &gc, prompt, 5, b, 40, NULL, NULL, &rb));
        CHECK(ra.n_tokens == gc.max_tokens && rb.n_tokens == ra.n_tokens &&
                  !memcmp(a, b, (size_t)ra.n_tokens * sizeof *a),
              "[%s] %s: cached and uncached generation differ", sw,
              greedy ? "greedy" : "sampling");
    }
    gc.sampler.temperature = 1.0f;      /* beam search draws nothing */
    gc.no_cache = false, gc.max_tokens = 6, gc.beam_width = 3;
    CHECK_OK(ngpt_model_generate(ctx, &gc, prompt, 5, a, 40, NULL, NULL, &ra));
    gc.beam_width = 0, gc.context_mode = NGPT_CONTEXT_SHIFT;
    ngpt_status st = ngpt_model_generate(ctx, &gc, prompt, 5, a, 40, NULL, NULL, &ra);
    CHECK_OK(ngpt_cache_prefill(ctx, prompt, 1, 5));
    ngpt_status shift = ngpt_cache_shift(ctx, 0, 2);
    if (c.pos == NGPT_POS_ROPE) {
        CHECK(st == NGPT_OK && shift == NGPT_OK, "[%s] shift refused: %s", sw,
              ngpt_last_error());
    } else {
        CHECK(st == NGPT_ERR_UNSUPPORTED && shift == NGPT_ERR_UNSUPPORTED,
              "[%s] shift with absolute positions: %s / %s", sw, ngpt_status_string(st),
              ngpt_status_string(shift));
    }
    ngpt_context_free(ctx);
}

/* Save, read the config back, load into a new context: the same switches,
 * tensors and parameters. */
static void test_checkpoint(const char *sw)
{
    ngpt_config c = tiny(sw), got;
    ngpt_context *ctx = make_infer(&c, 1), *back = make_infer(&c, 1);
    if (!ctx || !back) return;
    CHECK_OK(ngpt_params_init(ctx, 11));
    char path[512];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/ngpt_variant_%d.ngpt", dir, (int)getpid());
    CHECK_OK(ngpt_checkpoint_save(ctx, path));
    CHECK_OK(ngpt_checkpoint_config(path, &got));
    CHECK(got.qkv_bias == c.qkv_bias && got.tie_lm_head == c.tie_lm_head &&
              got.final_norm == c.final_norm && got.norm == c.norm && got.pos == c.pos &&
              got.proj_bias == c.proj_bias && got.gelu == c.gelu,
          "[%s] the stored config lost a switch", sw);
    CHECK_OK(ngpt_checkpoint_load(back, path));
    uint64_t h0 = 0, h1 = 1;
    CHECK_OK(ngpt_params_checksum(ctx, &h0));
    CHECK_OK(ngpt_params_checksum(back, &h1));
    CHECK(h0 == h1, "[%s] loaded parameters differ", sw);
    /* a context of the default model refuses the file, naming the switch */
    ngpt_config d = tiny("");
    ngpt_context *dflt = make_infer(&d, 1);
    if (dflt) {
        CHECK_STATUS(ngpt_checkpoint_load(dflt, path), NGPT_ERR_CONFIG_MISMATCH);
        ngpt_context_free(dflt);
    }
    unlink(path);
    ngpt_context_free(ctx);
    ngpt_context_free(back);
}

/* The later switches live in header bytes 70 (proj_bias) and 71 (gelu),
 * zero for a default model, so its file is what it always was; a value
 * past the switch's range is refused by name. */
static void test_header_bytes(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/ngpt_variant_hdr_%d.ngpt", dir, (int)getpid());
    const char *const sws[] = {"", "proj_bias=1", "gelu=tanh", COMBO_GPT2};
    const unsigned char want[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    for (int k = 0; k < 4; k++) {
        ngpt_config c = tiny(sws[k]);
        ngpt_context *ctx = make_infer(&c, 1);
        if (!ctx) return;
        CHECK_OK(ngpt_checkpoint_save(ctx, path));
        ngpt_context_free(ctx);
        unsigned char hdr[128];
        FILE *f = fopen(path, "rb");
        CHECK(f && fread(hdr, 1, sizeof hdr, f) == sizeof hdr, "read %s", path);
        if (f) fclose(f);
        CHECK(hdr[70] == want[k][0] && hdr[71] == want[k][1], "[%s] bytes 70, 71 = %u %u",
              sws[k], hdr[70], hdr[71]);
        for (int i = 72; i < 128; i++) CHECK(hdr[i] == 0, "[%s] reserved byte %d set", sws[k], i);
    }
    ngpt_config got;
    CHECK_OK(ngpt_checkpoint_config(path, &got));
    CHECK(got.proj_bias && got.gelu == NGPT_GELU_TANH && got.qkv_bias && got.pos == NGPT_POS_LEARNED,
          "the GPT-2 switches read back");
    unlink(path);
}

/* Everything the scenario computes, in a NaN-filled caller arena with 3
 * threads and every job split, equals the clean single-thread run: the
 * arena holds every new tensor and nothing reads what it did not write. */
static void test_scenario(const char *sw)
{
    ngpt_config c = tiny(sw);
    results clean, r;
    char why[256];
    scenario_run(&c, 3, T, (variant){1, false, false}, &clean);
    scenario_run(&c, 3, T, (variant){3, true, true}, &r);
    CHECK(!memcmp(&clean, &r, sizeof r), "[%s] dirty arena, 3 threads: %s", sw,
          scenario_diff(&r, &clean, why, sizeof why));
}

/* Golden: the hash of all of a combination's scenario results, computed by
 * the scalar reference build; every build must give the same. */
static void test_golden(const char *sw, uint64_t want)
{
    ngpt_config c = tiny(sw);
    results r;
    scenario_run(&c, 3, T, (variant){1, false, false}, &r);
    uint64_t h = ngpt_checksum_bytes(&r, sizeof r);
    CHECK(h == want, "[%s] golden %016" PRIx64 " want %016" PRIx64, sw, h, want);
}

int main(void)
{
    for (size_t i = 0; i < sizeof SWITCHES / sizeof SWITCHES[0]; i++) {
        test_tensors(SWITCHES[i]);
        test_cached_equals_full(SWITCHES[i]);
        test_generate(SWITCHES[i]);
        test_checkpoint(SWITCHES[i]);
        test_scenario(SWITCHES[i]);
    }
    const char *const combos[] = {COMBO_A, COMBO_B, COMBO_GPT2};
    for (size_t i = 0; i < 3; i++) {
        test_tensors(combos[i]);
        test_cached_equals_full(combos[i]);
        test_generate(combos[i]);
        test_checkpoint(combos[i]);
    }
    test_generate("");      /* the shift works with RoPE */
    test_golden(COMBO_A, 0x250a1c69548107e6);
    test_golden(COMBO_B, 0x9aba929758bd3460);
    test_golden(COMBO_GPT2, 0x7e6eb1eaea7ba9e5);
    test_header_bytes();
    return test_summary("test_variants");
}
