/* test_variants.c — the model variants (ngpt_config's qkv_bias, proj_bias,
 * tie_lm_head, final_norm, norm, pos, gelu, and the Llama family's
 * norm_type, norm_eps, mlp, mlp_bias, n_kv_heads, head_dim, rope_pairs;
 * their gradients are checked in test_grad.c): the
 * tensors each adds or removes, cached prefill/decode == the full forward
 * bit for bit, cached == uncached generation, checkpoints round-trip, the
 * cache shift refused for absolute positions, the scenario (training,
 * sampling, beams, traces) identical in a dirty caller arena with 3 threads,
 * the header bytes of the later switches, and golden checksums of four
 * combinations that cover every switch (GPT-2's and a Llama's among them). */
#include <unistd.h>

#include <math.h>

#include "runtime/config.h"   /* ngpt_config_compare, ngpt_cfg_kv_ring */
#include "runtime/positions.h"        /* ngpt_rope_tables */
#include "scenario.h"

enum { V = 256, T = 16 };

static const char *const SWITCHES[] = {
    "qkv_bias=1", "tie_lm_head=0", "final_norm=0", "norm=post", "pos=sinusoidal", "pos=learned",
    "proj_bias=1", "gelu=tanh", "norm_type=rms", "norm_eps=1e-6", "mlp=swiglu", "mlp_bias=0",
    "kv_heads=2", "kv_heads=1", "head_dim=6", "head_dim=12", "rope_pairs=halves",
    "norm_type=rms norm=post final_norm=0", "qk_norm=1", "qk_norm=1 kv_heads=2 head_dim=6",
    ("rope_scaling=llama3 rope_factor=8 rope_low_freq_factor=1 rope_high_freq_factor=4 "
     "rope_original_context=1000"),
    "norm_type=rms norm_offset=1", "norm=sandwich", "norm=sandwich norm_type=rms",
    "mlp=geglu gelu=tanh", "emb_scale=3.5", "attn_scalar=20", "logit_softcap=8",
    "sliding_window=5 sliding_pattern=2 rope_local_theta=100", "sliding_window=3",
};
/* the golden combinations: A has every switch but sinusoidal, B that one */
static const char COMBO_A[] = "qkv_bias=1 tie_lm_head=0 norm=post final_norm=0 pos=learned";
static const char COMBO_B[] = "pos=sinusoidal qkv_bias=1";
/* GPT-2's wiring: learned positions, biased qkv and proj, the tanh GELU */
static const char COMBO_GPT2[] = "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh";
/* A Llama's: RMSNorm, SwiGLU, no biases, GQA 3:1, a head size that is not
 * C/H (6 heads of 10 on C = 32), RoPE on halves, an untied head */
static const char COMBO_LLAMA[] = "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 "
                                  "mlp=swiglu mlp_bias=0 rope_pairs=halves tie_lm_head=0";
/* Qwen2's biases on q, k and v (not o), Qwen3's qk_norm and Llama 3's
 * rope_scaling on the Llama's (context 1000: the heads of 10 have pairs in
 * every band of its frequencies) */
static const char COMBO_QWEN[] = "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 "
                                 "mlp=swiglu mlp_bias=0 rope_pairs=halves tie_lm_head=0 "
                                 "qkv_bias=1 qk_norm=1 rope_scaling=llama3 rope_factor=8 "
                                 "rope_low_freq_factor=1 rope_high_freq_factor=4 "
                                 "rope_original_context=1000";
/* Gemma 3's on the Llama's: (1 + w) norms and q/k norms, a norm of each
 * branch, GeGLU (tanh), the embedding scaled, scores by 1/sqrt(20) (not
 * the head size: 10), capped logits, and every other layer local (3
 * layers: 0 and 2 local, a count not a multiple of the pattern) with a
 * window of 5 of the 16 positions and their own RoPE base */
static const char COMBO_GEMMA[] = "L=3 H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 "
                                  "mlp=geglu gelu=tanh mlp_bias=0 rope_pairs=halves "
                                  "norm_offset=1 qk_norm=1 norm=sandwich emb_scale=5.5 "
                                  "attn_scalar=20 logit_softcap=8 sliding_window=5 "
                                  "sliding_pattern=2 rope_local_theta=100";

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
    s.logits_rows = NGPT_LOGITS_ALL;    /* the full forward's rows, compared */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, c, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 7));
    return ctx;
}

static bool has_tensor(const ngpt_context *ctx, const char *name)
{
    ngpt_tensor_info ti;
    return ngpt_context_tensor_find(ctx, name, &ti) == NGPT_OK;
}

/* Whether a model of config c has the tensor (a context made for the question). */
static bool has_tensor_ctx_free(const ngpt_config *c, const char *name)
{
    ngpt_context *ctx = make_infer(c, 1);
    bool has = ctx && has_tensor(ctx, name);
    ngpt_context_free(ctx);
    return has;
}

/* Each switch adds or removes exactly its tensors and their floats. */
static void test_tensors(const char *sw)
{
    ngpt_config d = tiny(""), c = tiny(sw);
    size_t nd = 0, nc = 0;
    CHECK_OK(ngpt_config_param_count(&d, &nd));
    CHECK_OK(ngpt_config_param_count(&c, &nc));
    const size_t C = (size_t)c.d_model, L = (size_t)c.n_layers, F = (size_t)c.d_ff;
    (void)nd;
    /* counted here from the shapes docs/FORMAT.md gives, not from the layout */
    const size_t H = (size_t)c.n_heads, KV = c.n_kv_heads ? (size_t)c.n_kv_heads : H;
    const size_t D = c.head_dim ? (size_t)c.head_dim : C / H, QKV = (H + 2 * KV) * D;
    const size_t F1 = c.mlp != NGPT_MLP_GELU ? 2 * F : F, NB = c.norm_type == NGPT_NORM_LAYER;
    const size_t norms = c.norm == NGPT_NORM_SANDWICH ? 4 : 2;
    const size_t block = norms * C * (1 + NB) + QKV * C + (c.qkv_bias ? QKV : 0) + C * H * D +
                         (c.qk_norm ? 2 * D : 0) +
                         (c.proj_bias ? C : 0) + F1 * C + C * F + (c.mlp_bias ? F1 + C : 0);
    size_t want = (size_t)V * C * (c.tie_lm_head ? 1 : 2) + L * block +
                  (c.pos == NGPT_POS_LEARNED ? (size_t)T * C : 0) + (c.final_norm ? C * (1 + NB) : 0);
    CHECK(nc == want, "[%s] %zu parameters, want %zu", sw, nc, want);
    CHECK(has_tensor_ctx_free(&c, "blocks.0.ln1.bias") == (bool)NB &&
              has_tensor_ctx_free(&c, "blocks.1.mlp.fc2.bias") == c.mlp_bias,
          "[%s] norm or MLP biases", sw);
    ngpt_context *ctx = make_infer(&c, 1);
    if (!ctx) return;
    CHECK(has_tensor(ctx, "blocks.1.attn.qkv.bias") == c.qkv_bias, "[%s] qkv bias", sw);
    CHECK(has_tensor(ctx, "blocks.1.attn.proj.bias") == c.proj_bias, "[%s] proj bias", sw);
    CHECK(has_tensor(ctx, "blocks.1.attn.q_norm.weight") == c.qk_norm &&
              has_tensor(ctx, "blocks.0.attn.k_norm.weight") == c.qk_norm, "[%s] qk_norm", sw);
    CHECK(has_tensor(ctx, "lm_head.weight") == !c.tie_lm_head, "[%s] lm_head", sw);
    CHECK(has_tensor(ctx, "ln_f.weight") == c.final_norm &&
              has_tensor(ctx, "ln_f.bias") == (c.final_norm && c.norm_type == NGPT_NORM_LAYER),
          "[%s] ln_f", sw);
    CHECK(has_tensor(ctx, "pos_emb.weight") == (c.pos == NGPT_POS_LEARNED), "[%s] pos_emb", sw);
    CHECK(has_tensor(ctx, "blocks.1.post_attn_norm.weight") == (norms == 4) &&
              has_tensor(ctx, "blocks.0.post_mlp_norm.bias") == (norms == 4 && NB),
          "[%s] the post norms", sw);
    /* the table tiles the parameters in order, with no gap */
    size_t next = 0;
    for (int32_t i = 0; i < test_tensor_count(ctx); i++) {
        ngpt_tensor_info ti;
        CHECK_OK(ngpt_context_tensor_at(ctx, i, &ti));
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
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, T, NULL, NULL));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    memcpy(full, lg, sizeof full);
    CHECK_OK(ngpt_context_forward(ctx, other, 1, T, NULL, NULL));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    memcpy(full2, lg, sizeof full2);
    const int prefixes[] = {1, 7, T};
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
        int p = prefixes[k];
        CHECK_OK(ngpt_context_cache_clear(ctx, -1));
        CHECK_OK(ngpt_context_cache_prefill(ctx, tok, 1, p));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        CHECK(!memcmp(lg, full, (size_t)p * V * sizeof(float)), "[%s] prefill %d rows differ",
              sw, p);
        for (int i = p; i < T; i++) {
            CHECK_OK(ngpt_context_cache_decode(ctx, tok + i, 1));
            CHECK_OK(ngpt_context_logits(ctx, &lg));
            CHECK(!memcmp(lg, full + (size_t)i * V, V * sizeof(float)),
                  "[%s] prefill %d + decode: position %d differs", sw, p, i);
        }
    }
    CHECK_OK(ngpt_context_cache_clear(ctx, -1));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, tok, 4));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 1, other, 9));
    for (int i = 0; i < 6; i++) {
        int32_t step[2] = {tok[4 + i], other[9 + i]};
        CHECK_OK(ngpt_context_cache_decode(ctx, step, 2));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
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
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    if (!ctx) return;
    CHECK_OK(ngpt_context_params_init(ctx, 3));
    const int32_t prompt[5] = {'h', 'e', 'l', 'l', 'o'};
    int32_t a[40], b[40];
    ngpt_generate_result ra, rb;
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 2 * T + 3;
    for (int greedy = 0; greedy < 2; greedy++) {
        gc.sampler.temperature = greedy ? 0.0f : 0.9f, gc.sampler.seed = 99;
        gc.no_cache = false;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, a, 40, NULL, NULL, &ra));
        gc.no_cache = true;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, b, 40, NULL, NULL, &rb));
        CHECK(ra.n_tokens == gc.max_tokens && rb.n_tokens == ra.n_tokens &&
                  !memcmp(a, b, (size_t)ra.n_tokens * sizeof *a),
              "[%s] %s: cached and uncached generation differ", sw,
              greedy ? "greedy" : "sampling");
    }
    gc.sampler.temperature = 1.0f;      /* beam search draws nothing */
    gc.no_cache = false, gc.max_tokens = 6, gc.beam_width = 3;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 5, a, 40, NULL, NULL, &ra));
    gc.beam_width = 0, gc.context_mode = NGPT_CONTEXT_SHIFT;
    ngpt_status st = ngpt_context_generate(ctx, &gc, prompt, 5, a, 40, NULL, NULL, &ra);
    CHECK_OK(ngpt_context_cache_prefill(ctx, prompt, 1, 5));
    ngpt_status shift = ngpt_context_cache_shift(ctx, 0, 2);
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

/* Save, read the config back, make contexts of the file (sharing its
 * weights, and a copy under the config): the same switches, tensors and
 * parameters, saved to the same bytes. */
static void test_checkpoint(const char *sw)
{
    ngpt_config c = tiny(sw);
    ngpt_context *ctx = make_infer(&c, 1), *back;
    ngpt_model *m = NULL;
    if (!ctx) return;
    CHECK_OK(ngpt_context_params_init(ctx, 11));
    char path[512], path2[512];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/ngpt_variant_%d.ngpt", dir, (int)getpid());
    snprintf(path2, sizeof path2, "%s/ngpt_variant_%d_b.ngpt", dir, (int)getpid());
    CHECK_OK(ngpt_context_save(ctx, path));
    const ngpt_config got = test_file_config(path);
    CHECK(got.qkv_bias == c.qkv_bias && got.tie_lm_head == c.tie_lm_head &&
              got.final_norm == c.final_norm && got.norm == c.norm && got.pos == c.pos &&
              got.proj_bias == c.proj_bias && got.gelu == c.gelu &&
              ngpt_config_compare(&got, &c) == NGPT_OK,
          "[%s] the stored config lost a switch", sw);
    uint64_t h = 0;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    test_file_round_trip(path, &c, h, path2, sw);
    /* a context of the default model's config is refused */
    ngpt_config d = tiny("");
    CHECK_OK(ngpt_model_open(&m, path));
    back = NULL;
    CHECK_STATUS(ngpt_context_init(&back, m, &d, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    test_context_close(back, m);
    unlink(path);
    unlink(path2);
    ngpt_context_free(ctx);
}

/* The first 128 bytes of a model of config c saved at path. */
static bool saved_header(const ngpt_config *c, const char *path, unsigned char hdr[128])
{
    ngpt_context *ctx = make_infer(c, 1);
    if (!ctx) return false;
    CHECK_OK(ngpt_context_save(ctx, path));
    ngpt_context_free(ctx);
    FILE *f = fopen(path, "rb");
    const bool ok = f && fread(hdr, 1, 128, f) == 128;
    CHECK(ok, "read %s", path);
    if (f) fclose(f);
    return ok;
}

/* The later switches live in header bytes 70 (proj_bias) and 71 (gelu),
 * the Llama switches in 72..87, Qwen's and Llama 3's in 88..107 and
 * Gemma 3's in 90, 91 and 108..127, zero for a default model, so its file
 * is what it always was. */
static void test_header_bytes(void)
{
    unsigned char hdr[128];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/ngpt_variant_hdr_%d.ngpt", dir, (int)getpid());
    const char *const sws[] = {"", "proj_bias=1", "gelu=tanh", COMBO_GPT2};
    const unsigned char want[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    for (int k = 0; k < 4; k++) {
        ngpt_config c = tiny(sws[k]);
        if (!saved_header(&c, path, hdr)) return;
        CHECK(hdr[70] == want[k][0] && hdr[71] == want[k][1], "[%s] bytes 70, 71 = %u %u",
              sws[k], hdr[70], hdr[71]);
        for (int i = 72; i < 128; i++) CHECK(hdr[i] == 0, "[%s] reserved byte %d set", sws[k], i);
    }
    const ngpt_config got = test_file_config(path);
    CHECK(got.proj_bias && got.gelu == NGPT_GELU_TANH && got.qkv_bias && got.pos == NGPT_POS_LEARNED,
          "the GPT-2 switches read back");
    /* the Llama switches: bytes 72..75 (rms, swiglu, no_mlp_bias, halves),
     * f32 norm_eps at 76, i32 kv_heads at 80 and head_dim at 84, then zeros */
    ngpt_config lc = tiny(COMBO_LLAMA);
    if (saved_header(&lc, path, hdr)) {
        float eps;
        int32_t kv, hd;
        memcpy(&eps, hdr + 76, 4), memcpy(&kv, hdr + 80, 4), memcpy(&hd, hdr + 84, 4);
        CHECK(hdr[72] == 1 && hdr[73] == 1 && hdr[74] == 1 && hdr[75] == 1 && eps == 1e-6f &&
                  kv == 2 && hd == 10, "[llama] bytes 72..87: %u %u %u %u %g %d %d", hdr[72],
              hdr[73], hdr[74], hdr[75], (double)eps, (int)kv, (int)hd);
        for (int i = 88; i < 128; i++) CHECK(hdr[i] == 0, "[llama] reserved byte %d set", i);
    }
    /* Qwen's and Llama 3's: u8 qk_norm at 88, u8 rope_scaling at 89, f32
     * factor, low and high at 92, 96, 100, i32 the original context at 104 */
    ngpt_config qc = tiny(COMBO_QWEN);
    if (saved_header(&qc, path, hdr)) {
        float fac, lo, hi;
        int32_t orig;
        memcpy(&fac, hdr + 92, 4), memcpy(&lo, hdr + 96, 4), memcpy(&hi, hdr + 100, 4);
        memcpy(&orig, hdr + 104, 4);
        CHECK(hdr[64] == 1 && hdr[88] == 1 && hdr[89] == 1 && !hdr[90] && !hdr[91] && fac == 8.0f &&
                  lo == 1.0f && hi == 4.0f && orig == 1000,
              "[qwen] bytes 88..107: %u %u %g %g %g %d", hdr[88], hdr[89], (double)fac, (double)lo,
              (double)hi, (int)orig);
        for (int i = 108; i < 128; i++) CHECK(hdr[i] == 0, "[qwen] reserved byte %d set", i);
        const ngpt_config back = test_file_config(path);
        CHECK(back.qk_norm && back.rope_scaling == NGPT_ROPE_SCALING_LLAMA3 &&
                  back.rope_original_context == 1000 && !ngpt_config_compare(&qc, &back),
              "[qwen] the switches read back");
    }
    /* Gemma 3's: u8 norm_offset at 90, u8 sliding_pattern at 91, i32 the
     * window at 108, f32 rope_local_theta, attn_scalar, logit_softcap and
     * emb_scale at 112, 116, 120, 124 (norm=sandwich and mlp=geglu are
     * values of bytes 67 and 73) */
    ngpt_config gc = tiny(COMBO_GEMMA);
    if (saved_header(&gc, path, hdr)) {
        int32_t win;
        float fl[4];
        memcpy(&win, hdr + 108, 4), memcpy(fl, hdr + 112, 16);
        CHECK(hdr[67] == 2 && hdr[73] == 2 && hdr[90] == 1 && hdr[91] == 2 && win == 5 &&
                  fl[0] == 100.0f && fl[1] == 20.0f && fl[2] == 8.0f && fl[3] == 5.5f,
              "[gemma] bytes 67 %u 73 %u 90 %u 91 %u, 108..127: %d %g %g %g %g", hdr[67], hdr[73],
              hdr[90], hdr[91], (int)win, (double)fl[0], (double)fl[1], (double)fl[2],
              (double)fl[3]);
        const ngpt_config back = test_file_config(path);
        CHECK(!ngpt_config_compare(&gc, &back), "[gemma] the switches read back");
    }
    unlink(path);
}

/* rope_scaling=llama3's frequencies at Llama 3.2's (theta 500000, D 128,
 * factor 32, 1, 4, 8192): each pair's angle step (the table's row 1 is
 * pos 1's angle) equals Hugging Face's rule written out here; the tables'
 * checksum is one golden constant on every build. */
static void test_rope_llama3(void)
{
    ngpt_config c = ngpt_config_default();
    c.d_model = 128, c.n_heads = 1, c.context_len = 64, c.rope_theta = 500000.0f;
    CHECK(test_config_apply(&c, "rope_scaling=llama3 rope_factor=32 rope_low_freq_factor=1 "
                                "rope_high_freq_factor=4 rope_original_context=8192"),
          "config: %s", ngpt_last_error());
    CHECK_OK(ngpt_config_validate(&c));
    enum { P = 64, HALF = 64 };
    static float cos_t[P * HALF], sin_t[P * HALF];
    ngpt_rope_tables(&c, cos_t, sin_t);
    int kept = 0, divided = 0, smoothed = 0;
    for (int i = 0; i < HALF; i++) {
        const double inv = pow(500000.0, -(2.0 * i) / 128.0), wl = 2.0 * 3.141592653589793 / inv;
        double want = inv;
        if (wl < 8192.0 / 4.0) kept++;
        else if (wl > 8192.0) want = inv / 32.0, divided++;
        else {
            const double s = (8192.0 / wl - 1.0) / 3.0;
            want = (1.0 - s) * inv / 32.0 + s * inv, smoothed++;
        }
        /* pos 1: the angle is the inverse frequency rounded to float */
        const float a = (float)want;
        CHECK(fabsf(cos_t[HALF + i] - cosf(a)) <= 1e-6f && fabsf(sin_t[HALF + i] - sinf(a)) <= 1e-6f,
              "pair %d: cos %.9g sin %.9g, want %.9g %.9g", i, (double)cos_t[HALF + i],
              (double)sin_t[HALF + i], (double)cosf(a), (double)sinf(a));
    }
    CHECK(kept > 0 && divided > 0 && smoothed > 0, "bands %d %d %d", kept, divided, smoothed);
    uint64_t h = ngpt_checksum_bytes(cos_t, sizeof cos_t) ^ ngpt_checksum_bytes(sin_t, sizeof sin_t);
    CHECK(h == 0x7bb5b5f3e757102a, "llama3 tables %016" PRIx64, h);
}

/* Grouped-query attention's point: the KV cache holds KV heads, KV/H of a
 * full cache's bytes (the arena shrinks by exactly that). */
static void test_kv_bytes(void)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_config full = tiny("H=6 head_dim=10"), gqa = tiny("H=6 head_dim=10 kv_heads=2");
    size_t a = 0, b = 0;
    CHECK_OK(ngpt_context_arena_size(NULL, &full, &s, &a));
    CHECK_OK(ngpt_context_arena_size(NULL, &gqa, &s, &b));
    /* the cache: 2 (k, v) x L x batch x T x (H - KV) D floats; the qkv
     * projection: (H - KV) 2 D C parameters, and its output buffer T x
     * (H - KV) 2 D floats (regions round up to 64 bytes) */
    const size_t C = 32, L = 2, D = 10, dropped = 4;
    const size_t cache = 2 * L * (size_t)s.batch * T * dropped * D * sizeof(float);
    const size_t rest = (L * 2 * dropped * D * C + T * 2 * dropped * D) * sizeof(float);
    CHECK(a > b && a - b + 64 * 8 >= cache + rest && a - b <= cache + rest + 64 * 8,
          "GQA arena %zu vs %zu: saved %zu, want %zu", b, a, a - b, cache + rest);
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

/* Sliding windows' rings (model/kv.h): a local layer of window 3 in a plan
 * of passes of 4 keeps 7 positions (14 rows of the 16): prefill and decode
 * across the ring's wrap, truncates within it and past it (fed again),
 * sessions into a ring and into a full cache, generation (past T, exactly
 * or by the shift), beams and speculative decoding's cut-backs: the bits
 * of a cache that keeps everything. */
static void test_rings(void)
{
    const char *sw = "sliding_window=3 sliding_pattern=2 rope_local_theta=100 norm_type=rms "
                     "norm_offset=1 norm=sandwich mlp=geglu gelu=tanh qk_norm=1";
    ngpt_config c = tiny(sw);
    CHECK(ngpt_cfg_kv_ring(&c, 4, 0) == 7 && ngpt_cfg_kv_ring(&c, 4, 1) == 0 &&
              ngpt_cfg_kv_ring(&c, T, 0) == 0, "the rings of [%s]", sw);
    ngpt_shape rs = ngpt_shape_default(NGPT_MODE_INFER), fs = rs;
    rs.batch = fs.batch = 3, rs.seq = 4;
    ngpt_context *ring = NULL, *full = NULL, *ring2 = NULL, *full2 = NULL;
    CHECK_OK(ngpt_context_init(&ring, NULL, &c, &rs, NULL, 0));
    CHECK_OK(ngpt_context_init(&ring2, NULL, &c, &rs, NULL, 0));
    fs.logits_rows = NGPT_LOGITS_ALL;
    CHECK_OK(ngpt_context_init(&full, NULL, &c, &fs, NULL, 0));
    CHECK_OK(ngpt_context_init(&full2, NULL, &c, &fs, NULL, 0));
    if (!ring || !full || !ring2 || !full2) return;
    ngpt_context *all[4] = {ring, ring2, full, full2};
    for (int i = 0; i < 4; i++) CHECK_OK(ngpt_context_params_init(all[i], 5));
    size_t rb = 0, fb = 0;
    ngpt_shape fs4 = fs;
    fs4.seq = 4, fs4.logits_rows = 0;
    ngpt_config nw = c;
    nw.sliding_window = nw.sliding_pattern = 0, nw.rope_local_theta = 0;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &rs, &rb));
    CHECK_OK(ngpt_context_arena_size(NULL, &nw, &fs4, &fb));
    CHECK(rb < fb, "a ring's arena %zu, without windows %zu", rb, fb);
    int32_t tok[T];
    for (int i = 0; i < T; i++) tok[i] = (i * 53 + 7) % V;
    static float want[T * V];
    const float *lg;
    CHECK_OK(ngpt_context_forward(full, tok, 1, T, NULL, NULL));
    CHECK_OK(ngpt_context_logits(full, &lg));
    memcpy(want, lg, sizeof want);
    /* decode from position p to T, each position's logits the full pass's */
#define DECODE_FROM(ctx, p, what)                                                          \
    for (int i = (p); i < T; i++) {                                                        \
        CHECK_OK(ngpt_context_cache_decode((ctx), tok + i, 1));                            \
        CHECK_OK(ngpt_context_logits((ctx), &lg));                                         \
        CHECK(!memcmp(lg, want + (size_t)i * V, V * sizeof(float)), "%s: position %d", \
              (what), i);                                                                  \
    }
    CHECK_OK(ngpt_context_cache_prefill(ring, tok, 1, 4));
    DECODE_FROM(ring, 4, "ring decode");
    CHECK_OK(ngpt_context_cache_truncate(ring, 0, 13));     /* within the ring */
    DECODE_FROM(ring, 13, "after a truncate within the ring");
    CHECK_OK(ngpt_context_cache_truncate(ring, 0, 6));      /* past it: fed again */
    DECODE_FROM(ring, 6, "after a truncate past the ring");
    size_t size = 0;
    CHECK_OK(ngpt_context_cache_save_mem(ring, 0, NULL, 0, &size));
    unsigned char *img = malloc(size);
    CHECK(img != NULL, "session buffer");
    if (img) {
        CHECK_OK(ngpt_context_cache_save_mem(ring, 0, img, size, &size));
        CHECK_OK(ngpt_context_cache_load_mem(ring2, 0, img, size));
        CHECK_OK(ngpt_context_cache_load_mem(full2, 0, img, size));
        CHECK_OK(ngpt_context_cache_truncate(ring2, 0, 12));
        DECODE_FROM(ring2, 12, "a ring's session in a ring");
        CHECK_OK(ngpt_context_cache_truncate(full2, 0, 8));
        DECODE_FROM(full2, 8, "a ring's session in a full cache");
        free(img);
    }
#undef DECODE_FROM
    /* an 8-bit cache: one prefill's tiles, whose rows the window cuts each
     * at another key, give the bits of a ring decoding one by one */
    ngpt_shape rq = rs, fq = fs;
    rq.kv_k = rq.kv_v = fq.kv_k = fq.kv_v = NGPT_KV_Q8;
    ngpt_context *ring8 = NULL, *full8 = NULL;
    CHECK_OK(ngpt_context_init(&ring8, NULL, &c, &rq, NULL, 0));
    CHECK_OK(ngpt_context_init(&full8, NULL, &c, &fq, NULL, 0));
    if (ring8 && full8) {
        CHECK_OK(ngpt_context_params_init(ring8, 5));
        CHECK_OK(ngpt_context_params_init(full8, 5));
        static float want8[T * V];
        CHECK_OK(ngpt_context_cache_prefill(full8, tok, 1, T));
        CHECK_OK(ngpt_context_logits(full8, &lg));
        memcpy(want8, lg, sizeof want8);
        CHECK_OK(ngpt_context_cache_prefill(ring8, tok, 1, 4));
        CHECK_OK(ngpt_context_logits(ring8, &lg));
        int bad = memcmp(lg, want8 + 3 * V, V * sizeof(float)) != 0;
        for (int i = 4; i < T; i++) {
            CHECK_OK(ngpt_context_cache_decode(ring8, tok + i, 1));
            CHECK_OK(ngpt_context_logits(ring8, &lg));
            bad += memcmp(lg, want8 + (size_t)i * V, V * sizeof(float)) != 0;
        }
        CHECK(bad == 0, "an 8-bit cache: %d positions of a ring's decode differ from one prefill",
              bad);
    }
    ngpt_context_free(ring8);
    ngpt_context_free(full8);
    const int32_t prompt[6] = {'w', 'i', 'n', 'd', 'o', 'w'};
    int32_t a[40], b[40];
    ngpt_generate_result ra, rb2;
    ngpt_generate_config gc = ngpt_generate_config_default();
    for (int k = 0; k < 4; k++) {
        gc.sampler.temperature = k & 1 ? 0.0f : 0.9f, gc.sampler.seed = 3;
        gc.context_mode = k & 2 ? NGPT_CONTEXT_SHIFT : NGPT_CONTEXT_EXACT;
        gc.max_tokens = 2 * T + 3;
        CHECK_OK(ngpt_context_generate(ring, &gc, prompt, 6, a, 40, NULL, NULL, &ra));
        CHECK_OK(ngpt_context_generate(full, &gc, prompt, 6, b, 40, NULL, NULL, &rb2));
        CHECK(ra.n_tokens == gc.max_tokens && rb2.n_tokens == ra.n_tokens &&
                  !memcmp(a, b, (size_t)ra.n_tokens * sizeof *a),
              "generation %d: a ring and a full cache differ", k);
    }
    gc.context_mode = NGPT_CONTEXT_EXACT, gc.max_tokens = 8, gc.beam_width = 3;
    gc.sampler.temperature = 1.0f;
    CHECK_OK(ngpt_context_generate(ring, &gc, prompt, 6, a, 40, NULL, NULL, &ra));
    CHECK_OK(ngpt_context_generate(full, &gc, prompt, 6, b, 40, NULL, NULL, &rb2));
    CHECK(ra.n_tokens == rb2.n_tokens && !memcmp(a, b, (size_t)ra.n_tokens * sizeof *a),
          "beam search: a ring and a full cache differ");
    /* speculative decoding's cut-backs in the ring: a draft of another
     * model (rejections) proposes 3 at a time; greedy, the plain tokens */
    rs.draft_tokens = 3;
    ngpt_context *spec = NULL;
    CHECK_OK(ngpt_context_init(&spec, NULL, &c, &rs, NULL, 0));
    if (spec) {
        CHECK_OK(ngpt_context_params_init(spec, 5));
        CHECK_OK(ngpt_context_params_init(full2, 9));
        gc = ngpt_generate_config_default();
        gc.sampler.temperature = 0.0f, gc.max_tokens = T - 7;
        CHECK_OK(ngpt_context_generate(full, &gc, prompt, 6, b, 40, NULL, NULL, &rb2));
        gc.draft = full2, gc.draft_tokens = 3;
        CHECK_OK(ngpt_context_generate(spec, &gc, prompt, 6, a, 40, NULL, NULL, &ra));
        CHECK(ra.n_tokens == rb2.n_tokens && !memcmp(a, b, (size_t)ra.n_tokens * sizeof *a),
              "speculative decoding in a ring differs from plain greedy");
        ngpt_context_free(spec);
    }
    for (int i = 0; i < 4; i++) ngpt_context_free(all[i]);
}

/* A long decode of grouped heads (the other tests stop at T = 16): every
 * position's logits up to LT equal the full pass's, at one thread (both
 * key/value heads in one part) and two (one a thread), without a window
 * and with a window of 150 whose rows a ring keeps (400 positions wrap it). */
static void test_long_decode(void)
{
    enum { LT = 400, FIRST = 3 };
    const char *const sws[] = {"H=6 kv_heads=2 head_dim=10",
                               "H=6 kv_heads=2 head_dim=10 sliding_window=150 sliding_pattern=2 "
                               "rope_local_theta=100"};
    static int32_t tok[LT];
    static float want[LT * V];
    for (int i = 0; i < LT; i++) tok[i] = (i * 53 + 7) % V;
    for (int w = 0; w < 2; w++) {
        ngpt_config c = tiny(sws[w]);
        c.context_len = LT;
        ngpt_shape fs = ngpt_shape_default(NGPT_MODE_INFER);
        fs.logits_rows = NGPT_LOGITS_ALL;
        ngpt_context *full = NULL;
        const float *lg;
        CHECK_OK(ngpt_context_init(&full, NULL, &c, &fs, NULL, 0));
        if (!full) return;
        CHECK_OK(ngpt_context_params_init(full, 5));
        CHECK_OK(ngpt_context_forward(full, tok, 1, LT, NULL, NULL));
        CHECK_OK(ngpt_context_logits(full, &lg));
        memcpy(want, lg, sizeof want);
        ngpt_context_free(full);
        for (int threads = 1; threads <= 2; threads++) {
            ngpt_shape ds = ngpt_shape_default(NGPT_MODE_INFER);
            ds.threads = threads;
            if (w) ds.seq = 4;      /* the window's layers keep a ring */
            ngpt_context *dec = NULL;
            CHECK_OK(ngpt_context_init(&dec, NULL, &c, &ds, NULL, 0));
            if (!dec) return;
            CHECK(!w || ngpt_cfg_kv_ring(&c, ds.seq, 0) > 0, "[%s] no ring", sws[w]);
            CHECK_OK(ngpt_context_params_init(dec, 5));
            CHECK_OK(ngpt_context_cache_prefill(dec, tok, 1, FIRST));
            int bad = -1;
            for (int i = FIRST; i < LT && bad < 0; i++) {
                CHECK_OK(ngpt_context_cache_decode(dec, tok + i, 1));
                CHECK_OK(ngpt_context_logits(dec, &lg));
                if (memcmp(lg, want + (size_t)i * V, V * sizeof(float))) bad = i;
            }
            CHECK(bad < 0, "[%s] %d threads: decode differs from the full pass at %d", sws[w],
                  threads, bad);
            ngpt_context_free(dec);
        }
    }
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
    static char llama_q8[sizeof COMBO_LLAMA + 16], qwen_q4[sizeof COMBO_QWEN + 16];
    static char gemma_q8[sizeof COMBO_GEMMA + 16];
    snprintf(llama_q8, sizeof llama_q8, "%s weights=q8", COMBO_LLAMA);
    snprintf(qwen_q4, sizeof qwen_q4, "%s weights=q4", COMBO_QWEN);
    snprintf(gemma_q8, sizeof gemma_q8, "%s weights=q8", COMBO_GEMMA);
    const char *const combos[] = {COMBO_A, COMBO_B, COMBO_GPT2, COMBO_LLAMA, llama_q8, COMBO_QWEN,
                                  qwen_q4, COMBO_GEMMA, gemma_q8};
    for (size_t i = 0; i < 9; i++) {
        if (combos[i] != llama_q8 && combos[i] != qwen_q4 && combos[i] != gemma_q8)
            test_tensors(combos[i]);    /* (8-bit tensors are not floats) */
        test_cached_equals_full(combos[i]);
        test_generate(combos[i]);
        test_checkpoint(combos[i]);
    }
    test_scenario(COMBO_LLAMA);
    test_scenario(COMBO_QWEN);
    test_scenario(COMBO_GEMMA);
    test_kv_bytes();
    test_generate("");      /* the shift works with RoPE */
    test_golden(COMBO_A, 0x250a1c69548107e6);
    test_golden(COMBO_B, 0x9aba929758bd3460);
    test_golden(COMBO_GPT2, 0x7e6eb1eaea7ba9e5);
    test_golden(COMBO_LLAMA, 0xaa5d5ba9ea400ab9);
    test_golden(COMBO_QWEN, 0xf91f45192b249e4c);
    test_golden(COMBO_GEMMA, 0x7042de7a7947363d);
    test_rope_llama3();
    test_header_bytes();
    test_rings();
    test_long_decode();
    return test_summary("test_variants");
}
