/* test_lora.c — LoRA adapters (ngpt.h, "LoRA adapters"): the config and
 * its parsing; an adapter's gradients against finite differences on a
 * frozen float32 model for every module and model variant (dropout too);
 * the frozen Linear's unpacked columns against the weights as stored
 * (float32 panels, 8-bit, 4-bit); a zero B or scale leaves every logit's
 * bits; an applied adapter against the float32 model with B A merged into
 * its weights; training on f32, q8 and q4 models (goldens, any thread
 * count); files saved, opened and resumed bit for bit; a quantized model
 * keeps its original's identity; and every refusal. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "kernels.h"
#include "model/lora.h"
#include "q4.h"
#include "runtime/weights.h"

enum { B = 2, T = 16, SAMPLE = 12 };

#define LLAMA "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 mlp=swiglu mlp_bias=0 " \
              "rope_pairs=halves tie_lm_head=0"
/* Gemma 3's switches: GeGLU's gate_proj and up_proj, the four norms, windows */
#define GEMMA "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_offset=1 norm=sandwich mlp=geglu " \
              "gelu=tanh mlp_bias=0 rope_pairs=halves qk_norm=1 sliding_window=5 " \
              "sliding_pattern=2 attn_scalar=20 emb_scale=3 logit_softcap=10"

static char path[200], path2[200], apath[200];

static uint32_t lcg_state = 777u;
static uint32_t lcg(void) { return lcg_state = lcg_state * 1664525u + 1013904223u; }
static float urand(void) { return (float)(lcg() >> 8) * 0x1p-24f * 2.0f - 1.0f; }

static ngpt_config tiny(const char *variant)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 256, c.context_len = T, c.d_model = 32, c.n_layers = 2, c.n_heads = 4;
    c.d_ff = 64, c.dropout = 0.0f;
    CHECK(test_config_apply(&c, variant), "config %s: %s", variant, ngpt_last_error());
    return c;
}

/* A float32 model of cfg (weights drawn from seed, scaled up so gradients
 * stand above float noise) saved at p, opened; quantized to w when w is
 * not f32 (the float32 file at p, the quantized one at path2). */
static ngpt_model *model_of(const ngpt_config *cfg, uint64_t seed, ngpt_weights w)
{
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = 1;
    ngpt_context *ctx = NULL;
    ngpt_model *m = NULL;
    lcg_state = (uint32_t)seed;     /* the same model whatever ran before */
    CHECK_OK(ngpt_context_init(&ctx, NULL, cfg, &sh, NULL, 0));
    if (!ctx) return NULL;
    CHECK_OK(ngpt_context_params_init(ctx, seed));
    float *p;
    size_t n;
    CHECK_OK(ngpt_context_params(ctx, &p, &n));
    for (int32_t t = 0; t < test_tensor_count(ctx); t++) {
        ngpt_tensor_info ti;
        ngpt_context_tensor_at(ctx, t, &ti);
        for (size_t i = 0; i < ti.count; i++)
            p[ti.offset + i] = ti.ndim == 2 ? p[ti.offset + i] * 5.0f : p[ti.offset + i] + 0.1f * urand();
    }
    CHECK_OK(ngpt_context_save(ctx, path));
    ngpt_context_free(ctx);
    if (w == NGPT_WEIGHTS_F32) {
        CHECK_OK(ngpt_model_open(&m, path));
        return m;
    }
    ngpt_config q = *cfg;
    q.weights = w;
    ngpt_model *f = NULL;
    CHECK_OK(ngpt_model_open(&f, path));
    ngpt_context *qc = NULL;
    if (f) CHECK_OK(ngpt_context_init(&qc, f, &q, NULL, NULL, 0));
    if (qc) CHECK_OK(ngpt_context_save(qc, path2));
    ngpt_context_free(qc);
    ngpt_model_close(f);
    CHECK_OK(ngpt_model_open(&m, path2));
    return m;
}

static ngpt_lora_config lora(const char *settings)
{
    ngpt_lora_config lc = ngpt_lora_config_default();
    CHECK(test_lora_apply(&lc, settings), "lora settings %s: %s", settings, ngpt_last_error());
    return lc;
}

/* A training context of the adapter ad on m (batch B, seq T, threads). */
static ngpt_context *trainer(ngpt_model *m, const ngpt_adapter *ad, int threads)
{
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = B, sh.seq = T, sh.threads = threads, sh.adapter = ad;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, m, NULL, &sh, NULL, 0));
    return ctx;
}

static void batch(int32_t *tok, int32_t *tgt, int V)
{
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)(lcg() % (uint32_t)V), tgt[i] = (int32_t)(lcg() % (uint32_t)V);
}

/* ------------------------------------------------------------------ config */

static void test_config(void)
{
    ngpt_lora_config lc = ngpt_lora_config_default();
    CHECK(lc.rank == 8 && lc.alpha == 16.0f && lc.targets == (NGPT_LORA_Q | NGPT_LORA_V) &&
          lc.layers == 0 && lc.dropout == 0.0f && !lc.rslora, "the default config");
    CHECK_OK(ngpt_lora_config_validate(&lc));
    CHECK_OK(ngpt_lora_config_set(&lc, "targets=all-linear"));
    CHECK(lc.targets == NGPT_LORA_ALL_LINEAR, "all-linear");
    CHECK_OK(ngpt_lora_config_set(&lc, "targets=c_proj,c_fc"));
    CHECK(lc.targets == (NGPT_LORA_O | NGPT_LORA_DOWN | NGPT_LORA_FC1), "c_proj is both");
    CHECK_OK(ngpt_lora_config_set(&lc, "layers=0-2,5"));
    CHECK(lc.layers == 0x27, "layers 0-2,5: %llx", (unsigned long long)lc.layers);
    CHECK_OK(ngpt_lora_config_set(&lc, "r=16"));
    CHECK_OK(ngpt_lora_config_set(&lc, "rslora=1"));
    CHECK(lc.rank == 16 && lc.rslora, "r and rslora");
    /* the text of a config sets the same config again, word by word */
    CHECK_OK(ngpt_lora_config_set(&lc, "alpha=0.1"));
    CHECK_OK(ngpt_lora_config_set(&lc, "dropout=0.05"));
    CHECK_OK(ngpt_lora_config_set(&lc, "targets=c_attn,attn.c_proj,c_fc,all-linear"));
    char text[256], *save = NULL;
    ngpt_lora_config_format(&lc, text, sizeof text);
    CHECK(!strcmp(text, "r=16 alpha=0.1 targets=c_attn,o_proj,c_fc,all-linear rslora=1 dropout=0.05 "
                        "layers=0-2,5"), "formatted: %s", text);
    ngpt_lora_config again = ngpt_lora_config_default();
    for (char *w = strtok_r(text, " ", &save); w; w = strtok_r(NULL, " ", &save))
        CHECK_OK(ngpt_lora_config_set(&again, w));
    CHECK(again.rank == lc.rank && again.alpha == lc.alpha && again.rslora == lc.rslora &&
              again.targets == lc.targets && again.layers == lc.layers &&
              again.dropout == lc.dropout, "the formatted config read back differs");
    again = ngpt_lora_config_default();
    ngpt_lora_config_format(&again, text, sizeof text);
    CHECK(!strcmp(text, "r=8 alpha=16 targets=q_proj,v_proj"), "the default: %s", text);
    CHECK_OK(ngpt_lora_config_set(&lc, "targets=c_proj,c_fc"));
    CHECK_OK(ngpt_lora_config_set(&lc, "alpha=16"));
    CHECK_OK(ngpt_lora_config_set(&lc, "dropout=0"));
    const ngpt_lora_config before = lc;
    static const struct { const char *kv; ngpt_status st; const char *says; } bad[] = {
        {"r=0", NGPT_ERR_BAD_ARG, "bad value"},     {"r=1025", NGPT_ERR_BAD_ARG, "bad value"},
        {"alpha=0", NGPT_ERR_BAD_ARG, "alpha"},     {"alpha=inf", NGPT_ERR_BAD_ARG, "alpha"},
        {"dropout=1", NGPT_ERR_BAD_ARG, "dropout"}, {"rslora=2", NGPT_ERR_BAD_ARG, "bad value"},
        {"targets=lm_head", NGPT_ERR_UNSUPPORTED, "lm_head"},
        {"targets=q_proj,wte", NGPT_ERR_UNSUPPORTED, "wte"},
        {"targets=qproj", NGPT_ERR_BAD_ARG, "unknown module"},
        {"targets=", NGPT_ERR_BAD_ARG, "key=value"}, {"layers=3-1", NGPT_ERR_BAD_ARG, "layers"},
        {"layers=64", NGPT_ERR_BAD_ARG, "layers"},   {"rank", NGPT_ERR_BAD_ARG, "key=value"},
        {"beta=1", NGPT_ERR_BAD_ARG, "unknown key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(ngpt_lora_config_set(&lc, bad[i].kv), bad[i].st);
        CHECK(strstr(ngpt_last_error(), bad[i].says) &&
                  !strncmp(ngpt_last_error(), "ngpt_lora_config_set: ", 22),
              "%s: %s", bad[i].kv, ngpt_last_error());
        CHECK(!memcmp(&lc, &before, sizeof lc), "%s changed the config", bad[i].kv);
    }
    lc.reserved[3] = 1;
    CHECK_STATUS(ngpt_lora_config_validate(&lc), NGPT_ERR_BAD_ARG);
    lc = before;
    lc.targets = 1u << 12;
    CHECK_STATUS(ngpt_lora_config_validate(&lc), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_lora_config_validate(NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_lora_config_set(NULL, "r=1"), NGPT_ERR_NULL_ARG);
}

/* Targets the model lacks or that overlap are refused by name. */
static void test_targets_against_model(void)
{
    ngpt_config gpt = tiny(""), llama = tiny(LLAMA);
    static const struct { bool llama; const char *lora; const char *says; } bad[] = {
        {false, "targets=gate_proj", "SwiGLU"}, {true, "targets=c_fc", "GELU"},
        {false, "targets=c_attn,q_proj", "same rows"}, {false, "layers=2", "layers 0..1"},
    };
    ngpt_model *m[2] = {model_of(&gpt, 1, NGPT_WEIGHTS_F32), NULL};
    char keep[sizeof path];
    snprintf(keep, sizeof keep, "%s", path);
    snprintf(path, sizeof path, "%.190s.l", keep);
    m[1] = model_of(&llama, 1, NGPT_WEIGHTS_F32);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ngpt_adapter *ad = (ngpt_adapter *)1;
        ngpt_lora_config lc = lora(bad[i].lora);
        CHECK_STATUS(ngpt_adapter_create(&ad, m[bad[i].llama], &lc, 1), NGPT_ERR_BAD_CONFIG);
        CHECK(ad == NULL && strstr(ngpt_last_error(), bad[i].says), "%s: %s", bad[i].lora,
              ngpt_last_error());
    }
    ngpt_adapter *ad = NULL;
    ngpt_lora_config lc = lora("targets=all-linear");
    CHECK_OK(ngpt_adapter_create(&ad, m[1], &lc, 1));
    ngpt_lora_config got;
    if (ad) CHECK_OK(ngpt_adapter_lora_config(ad, &got));
    CHECK(ad && got.targets == NGPT_LORA_ALL_LINEAR, "the config kept");
    ngpt_adapter_close(ad);
    ngpt_model_close(m[0]);
    ngpt_model_close(m[1]);
    unlink(path);
    snprintf(path, sizeof path, "%s", keep);
}

/* ------------------------------------------------------------ gradients */

static float loss_of(ngpt_context *ctx, const int32_t *tok, const int32_t *tgt)
{
    float l = NAN;
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, &l));
    return l;
}

/* Directional derivatives over samples of the adapter's floats (each
 * module's A and B of each layer) against central differences. */
static void check_grads(const char *variant, const char *lora_settings, double rel_tol)
{
    ngpt_config cfg = tiny(variant);
    ngpt_model *m = model_of(&cfg, 3, NGPT_WEIGHTS_F32);
    ngpt_lora_config lc = lora(lora_settings);
    ngpt_adapter *ad = NULL;
    if (m) CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 9));
    ngpt_context *ctx = ad ? trainer(m, ad, 2) : NULL;
    if (!ctx) goto out;
    float *p, *g;
    size_t n, ng;
    CHECK_OK(ngpt_context_params(ctx, &p, &n));
    for (size_t i = 0; i < n; i++) p[i] = 0.05f * urand();    /* B nonzero: A has gradients */
    int32_t tok[B * T], tgt[B * T];
    batch(tok, tgt, cfg.vocab_size);
    CHECK_OK(ngpt_context_dropout_set(ctx, lc.dropout > 0.0f, 5, 2));
    CHECK_OK(ngpt_context_grads_zero(ctx));
    loss_of(ctx, tok, tgt);
    CHECK_OK(ngpt_context_backward(ctx));
    CHECK_OK(ngpt_context_grads(ctx, &g, &ng));
    CHECK(ng == n, "grads %zu, params %zu", ng, n);
    float *g0 = malloc(n * sizeof(float));
    memcpy(g0, g, n * sizeof(float));
    const float h = 1e-2f;
    double worst = 0.0;
    /* the samples of each module's A and B of each layer: the file's tensors */
    const ngpt_lora_layout *ll = &ad->ll;
    for (int l = 0; l < cfg.n_layers; l++) {
        if (!ngpt_lora_layer_on(ll, l)) continue;
        for (int i = 0; i < ll->n_modules; i++)
            for (int b = 0; b < 2; b++) {
                const ngpt_lora_module *md = &ll->mod[i];
                const size_t off = ngpt_lora_layer_offset(ll, l) + (b ? md->b : md->a);
                const size_t count = (size_t)ll->rank * (size_t)(b ? md->rows : md->in);
                size_t idx[SAMPLE];
                float sgn[SAMPLE], saved[SAMPLE];
                double analytic = 0.0, mag = 0.0;
                for (int s = 0; s < SAMPLE; s++) {
                    idx[s] = off + lcg() % (uint32_t)count;
                    for (int r = 0; r < s; r++)
                        if (idx[r] == idx[s]) idx[s] = off + (idx[s] - off + 1) % count;
                    sgn[s] = (lcg() & 0x100) ? 1.0f : -1.0f;
                    analytic += (double)sgn[s] * g0[idx[s]];
                    mag += fabs((double)g0[idx[s]]);
                }
                for (int s = 0; s < SAMPLE; s++) saved[s] = p[idx[s]], p[idx[s]] += sgn[s] * h;
                const double lp = loss_of(ctx, tok, tgt);
                for (int s = 0; s < SAMPLE; s++) p[idx[s]] = saved[s] - sgn[s] * h;
                const double lm = loss_of(ctx, tok, tgt);
                for (int s = 0; s < SAMPLE; s++) p[idx[s]] = saved[s];
                const double fd = (lp - lm) / (2.0 * h), err = fabs(fd - analytic);
                if (err / (mag + 1e-12) > worst) worst = err / (mag + 1e-12);
                CHECK(err <= rel_tol * mag + 5e-4, "[%s | %s] layer %d %s.lora_%c: finite "
                      "difference %.6g, backward %.6g (|g| sum %.3g)", variant, lora_settings,
                      l, md->name, b ? 'B' : 'A', fd, analytic, mag);
                CHECK(mag > 1e-4, "[%s] %s: the sampled gradients are ~0 (%.3g)", variant,
                      md->name, mag);
            }
    }
    printf("lora grads [%s | %s]: worst |fd - backward| / sum|g| = %.3g\n", variant,
           lora_settings, worst);
    free(g0);
out:
    ngpt_context_free(ctx);
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

/* An adapter trained on an 8-bit or 4-bit model takes the gradients it
 * would on the float32 model whose weights are the quantized ones
 * dequantized (the backward runs through those weights), up to what
 * quantizing the Linears' inputs changes in the forward: the two gradient
 * vectors agree in direction and size. (Finite differences cannot check
 * it: the quantized forward is a step function of its inputs.) */
static void check_quantized_grads(ngpt_weights w, const char *variant)
{
    ngpt_config cfg = tiny(variant);
    ngpt_model *q = model_of(&cfg, 3, w), *f = NULL, *dq = NULL;
    ngpt_context *qi = NULL, *copy = NULL, *tq = NULL, *tf = NULL;
    ngpt_adapter *aq = NULL, *af = NULL;
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = 1;
    CHECK_OK(ngpt_model_open(&f, path));     /* the float32 original */
    if (q) CHECK_OK(ngpt_context_init(&qi, q, NULL, NULL, NULL, 0));
    if (f) CHECK_OK(ngpt_context_init(&copy, f, &cfg, &sh, NULL, 0));
    if (!qi || !copy) goto out;
    float *p;
    size_t n;
    CHECK_OK(ngpt_context_params(copy, &p, &n));
    for (int l = 0; l < cfg.n_layers; l++)
        for (int which = 0; which <= NGPT_LINEAR_PER_LAYER; which++) {
            if (which == NGPT_LINEAR_LM_HEAD && l > 0) continue;
            int out, in;
            ngpt_linear_dims(&cfg, (ngpt_linear)which, &out, &in);
            ngpt_lora_frozen_cols(qi, l, (ngpt_linear)which, 0, in, out, in,
                                  p + ngpt_linear_weight(&copy->lay, l, (ngpt_linear)which));
        }
    char dpath[220];
    snprintf(dpath, sizeof dpath, "%.200s.dq", path);
    CHECK_OK(ngpt_context_save(copy, dpath));
    CHECK_OK(ngpt_model_open(&dq, dpath));
    unlink(dpath);
    ngpt_lora_config lc = lora("targets=all-linear r=4");
    if (dq) CHECK_OK(ngpt_adapter_create(&aq, q, &lc, 9));
    if (dq) CHECK_OK(ngpt_adapter_create(&af, dq, &lc, 9));
    tq = aq ? trainer(q, aq, 2) : NULL, tf = af ? trainer(dq, af, 1) : NULL;
    if (!tq || !tf) goto out;
    float *pq, *pf, *gq, *gf;
    CHECK_OK(ngpt_context_params(tq, &pq, &n));
    CHECK_OK(ngpt_context_params(tf, &pf, &n));
    for (size_t i = 0; i < n; i++) pq[i] = pf[i] = 0.05f * urand();
    int32_t tok[B * T], tgt[B * T];
    batch(tok, tgt, cfg.vocab_size);
    ngpt_context *both[2] = {tq, tf};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(ngpt_context_grads_zero(both[i]));
        loss_of(both[i], tok, tgt);
        CHECK_OK(ngpt_context_backward(both[i]));
    }
    CHECK_OK(ngpt_context_grads(tq, &gq, &n));
    CHECK_OK(ngpt_context_grads(tf, &gf, &n));
    double dot = 0, nq = 0, nf = 0;
    for (size_t i = 0; i < n; i++) dot += (double)gq[i] * gf[i], nq += (double)gq[i] * gq[i], nf += (double)gf[i] * gf[i];
    const double cosine = dot / sqrt(nq * nf), ratio = sqrt(nq / nf);
    printf("lora grads [%s | weights %d] against the dequantized float32 model: cosine %.5f, "
           "norm ratio %.4f\n", variant, (int)w, cosine, ratio);
    CHECK(cosine > 0.998 && fabs(ratio - 1.0) < 0.02, "[%s] weights %d: the gradients are not "
          "the dequantized model's: cosine %.5f, norm ratio %.4f", variant, (int)w, cosine, ratio);
out:
    ngpt_context_free(qi), ngpt_context_free(copy), ngpt_context_free(tq), ngpt_context_free(tf);
    CHECK_OK(ngpt_adapter_close(aq));
    CHECK_OK(ngpt_adapter_close(af));
    CHECK_OK(ngpt_model_close(q));
    CHECK_OK(ngpt_model_close(f));
    CHECK_OK(ngpt_model_close(dq));
}

/* -------------------------------------------------------- frozen columns */

/* The columns a frozen Linear's backward unpacks are its weights as
 * stored: an f32 context's rows (ngpt_weights_read), an 8-bit one's
 * embed_q8 rows, a 4-bit one's q * d of q4.h's layout. */
static void test_frozen_cols(ngpt_weights w)
{
    ngpt_config cfg = tiny("d_ff=72");      /* a tail panel: 72 = 4*16 + 8 rows */
    ngpt_model *m = model_of(&cfg, 4, w);
    ngpt_context *ctx = NULL;
    if (m) CHECK_OK(ngpt_context_init(&ctx, m, NULL, NULL, NULL, 0));
    if (!ctx) goto out;
    ngpt_layout lay;
    ngpt_layout_compute(&ctx->cfg, &lay);
    for (int which = 0; which <= NGPT_LINEAR_PER_LAYER; which++) {
        int out, in;
        ngpt_linear_dims(&ctx->cfg, (ngpt_linear)which, &out, &in);
        float *cols = malloc(sizeof(float) * (size_t)out * 32), *row = malloc(sizeof(float) * in);
        const ngpt_dtype dt = ngpt_linear_dtype(&ctx->cfg, (ngpt_linear)which);
        int bad = 0;
        for (int c0 = 0; c0 < in; c0 += 32) {
            const int nc = in - c0 < 32 ? in - c0 : 32;
            ngpt_lora_frozen_cols(ctx, 1, (ngpt_linear)which, c0, nc, out, in, cols);
            for (int j = 0; j < out; j++) {
                if (dt == NGPT_DTYPE_F32) {
                    ngpt_weights_read(ctx, ngpt_linear_weight(&lay, 1, (ngpt_linear)which) +
                                               (size_t)j * in, row, (size_t)in);
                } else if (dt == NGPT_DTYPE_Q8) {
                    ngpt_kernels_active.embed_q8(row, ngpt_weights_q8(ctx, 1, (ngpt_linear)which),
                                                 in, j);
                } else {
                    const uint8_t *wq = ngpt_weights_q4(ctx, 1, (ngpt_linear)which);
                    for (int kk = 0; kk < in; kk++) {
                        const uint8_t *blk = ngpt_q4_panel(wq, in, j - j % 16) +
                                             (size_t)(kk / 32) * NGPT_Q4_BLOCK;
                        float d;
                        memcpy(&d, blk + 4 * (j % 16), 4);
                        row[kk] = (float)ngpt_q4_value(blk + 64, j % 16, kk % 32) * d;
                    }
                }
                for (int c = 0; c < nc; c++) bad += memcmp(&row[c0 + c], &cols[j * nc + c], 4) != 0;
            }
        }
        CHECK(bad == 0, "weights %d Linear %d: %d unpacked values differ", (int)w, which, bad);
        free(cols);
        free(row);
    }
out:
    ngpt_context_free(ctx);
    CHECK_OK(ngpt_model_close(m));
}

/* ------------------------------------------------------------ applying */

static ngpt_context *inferer(ngpt_model *m, int rank)
{
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
    sh.batch = B, sh.seq = T, sh.logits_rows = NGPT_LOGITS_ALL, sh.adapter_rank = rank;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, m, NULL, &sh, NULL, 0));
    return ctx;
}

static float *logits_of(ngpt_context *ctx, const int32_t *tok)
{
    const size_t n = (size_t)B * T * (size_t)ctx->cfg.vocab_size;
    float *out = malloc(n * sizeof(float));
    const float *lg = NULL;
    CHECK_OK(ngpt_context_forward(ctx, tok, B, T, NULL, NULL));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    if (lg) memcpy(out, lg, n * sizeof(float));
    else memset(out, 0, n * sizeof(float));
    return out;
}

/* A new adapter (B zero), or any at scale 0, leaves every logit's bits, in
 * an inference and in a training context. */
static void test_identity_start(ngpt_weights w, const char *variant)
{
    ngpt_config cfg = tiny(variant);
    ngpt_model *m = model_of(&cfg, 6, w);
    ngpt_lora_config lc = lora("targets=all-linear r=4");
    ngpt_adapter *ad = NULL;
    if (m) CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 2));
    ngpt_context *inf = ad ? inferer(m, 4) : NULL, *tr = ad ? trainer(m, ad, 1) : NULL;
    if (!inf || !tr) goto out;
    int32_t tok[B * T], tgt[B * T];
    batch(tok, tgt, cfg.vocab_size);
    float *base = logits_of(inf, tok);
    const float one = 1.0f, zero = 0.0f;
    CHECK_OK(ngpt_context_adapters_set(inf, (const ngpt_adapter *const *)&ad, &one, 1));
    float *with = logits_of(inf, tok), *train = logits_of(tr, tok);
    const size_t bytes = sizeof(float) * B * T * (size_t)cfg.vocab_size;
    CHECK(!memcmp(base, with, bytes), "[%s] a zero B changed the logits", variant);
    CHECK(!memcmp(base, train, bytes), "[%s] the training context's logits differ", variant);
    /* any adapter at scale 0 (a trained one: B nonzero) */
    float *p;
    size_t n;
    CHECK_OK(ngpt_context_params(tr, &p, &n));
    for (size_t i = 0; i < n; i++) p[i] = urand();
    CHECK_OK(ngpt_context_save(tr, apath));
    ngpt_adapter *rnd = NULL;
    CHECK_OK(ngpt_adapter_open(&rnd, apath));
    if (rnd) CHECK_OK(ngpt_context_adapters_set(inf, (const ngpt_adapter *const *)&rnd, &zero, 1));
    float *zeroed = logits_of(inf, tok);
    CHECK(!memcmp(base, zeroed, bytes), "[%s] scale 0 changed the logits", variant);
    CHECK_OK(ngpt_context_adapters_set(inf, NULL, NULL, 0));
    CHECK_OK(ngpt_adapter_close(rnd));
    free(base), free(with), free(train), free(zeroed);
out:
    ngpt_context_free(inf);
    ngpt_context_free(tr);
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

/* An applied adapter (two, scaled) against the float32 model with
 * scale s B A merged into its weights, in double. */
static void test_against_merged(const char *variant, const char *lora_settings)
{
    ngpt_config cfg = tiny(variant);
    ngpt_model *m = model_of(&cfg, 8, NGPT_WEIGHTS_F32);
    ngpt_lora_config lc = lora(lora_settings);
    ngpt_adapter *ad = NULL, *file = NULL;
    if (m) CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 3));
    ngpt_context *tr = ad ? trainer(m, ad, 1) : NULL, *inf = ad ? inferer(m, 16) : NULL;
    ngpt_context *merged = NULL;
    ngpt_shape ms = ngpt_shape_default(NGPT_MODE_TRAIN);
    ms.batch = B, ms.seq = T;
    if (m) CHECK_OK(ngpt_context_init(&merged, m, &cfg, &ms, NULL, 0));
    if (!tr || !inf || !merged) goto out;
    float *a, *wm;
    size_t n, nm;
    CHECK_OK(ngpt_context_params(tr, &a, &n));
    for (size_t i = 0; i < n; i++) a[i] = 0.5f * urand();
    CHECK_OK(ngpt_context_save(tr, apath));
    CHECK_OK(ngpt_adapter_open(&file, apath));
    if (!file) goto out;
    /* applied twice at 0.75 and 0.25: the adapter at 1 */
    const ngpt_adapter *two[2] = {file, file};
    const float scales[2] = {0.75f, 0.25f};
    CHECK_OK(ngpt_context_adapters_set(inf, two, scales, 2));
    int32_t tok[B * T], tgt[B * T];
    batch(tok, tgt, cfg.vocab_size);
    float *got = logits_of(inf, tok);
    CHECK_OK(ngpt_context_params(merged, &wm, &nm));
    const ngpt_lora_layout *ll = &file->ll;
    for (int l = 0; l < cfg.n_layers; l++) {
        if (!ngpt_lora_layer_on(ll, l)) continue;
        for (int i = 0; i < ll->n_modules; i++) {
            const ngpt_lora_module *md = &ll->mod[i];
            const float *A = file->w + ngpt_lora_layer_offset(ll, l) + md->a;
            const float *Bm = file->w + ngpt_lora_layer_offset(ll, l) + md->b;
            float *W = wm + ngpt_linear_weight(&merged->lay, l, md->linear);
            for (int j = 0; j < md->rows; j++)
                for (int k = 0; k < md->in; k++) {
                    double s = 0.0;
                    for (int r = 0; r < ll->rank; r++)
                        s += (double)Bm[j * ll->rank + r] * A[r * md->in + k];
                    W[(size_t)(md->row0 + j) * md->in + k] += (float)(s * ll->scale);
                }
        }
    }
    float *want = logits_of(merged, tok);
    double worst = 0.0, big = 0.0, moved = 0.0;
    float *plain = NULL;
    CHECK_OK(ngpt_context_adapters_set(inf, NULL, NULL, 0));
    plain = logits_of(inf, tok);
    for (size_t i = 0; i < (size_t)B * T * cfg.vocab_size; i++) {
        const double d = fabs((double)got[i] - want[i]), a = fabs((double)want[i]);
        const double e = fabs((double)plain[i] - want[i]);
        if (d > worst) worst = d;
        if (a > big) big = a;
        if (e > moved) moved = e;
    }
    CHECK(worst <= 2e-4 * big, "[%s | %s] adapted logits differ from the merged model's by %.3g "
          "(largest %.3g)", variant, lora_settings, worst, big);
    CHECK(moved > 1e-2 * big, "[%s | %s] the adapter hardly moved the logits (%.3g): the "
          "comparison would be empty", variant, lora_settings, moved);
    free(got), free(want), free(plain);
out:
    ngpt_context_free(inf);
    ngpt_context_free(tr);
    ngpt_context_free(merged);
    CHECK_OK(ngpt_adapter_close(file));
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

/* ------------------------------------------------------------ training */

/* steps AdamW steps on fixed batches of seed; returns the loss of the last. */
static float train_steps(ngpt_context *ctx, int first, int steps, int V)
{
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-2f, o.warmup = 0, o.weight_decay = 0.0f;
    float loss = NAN;
    for (int s = first; s < first + steps; s++) {
        int32_t tok[B * T], tgt[B * T];
        lcg_state = 1000u + (uint32_t)s;
        for (int i = 0; i < B * T; i++) tok[i] = (int32_t)(lcg() % 64u);
        for (int i = 0; i < B * T; i++) tgt[i] = (tok[i] * 5 + 1) % V;     /* learnable */
        CHECK_OK(ngpt_context_grads_zero(ctx));
        CHECK_OK(ngpt_context_dropout_set(ctx, true, 11, (uint64_t)s));
        CHECK_OK(ngpt_context_forward(ctx, tok, B, T, tgt, &loss));
        CHECK_OK(ngpt_context_backward(ctx));
        float lr;
        CHECK_OK(ngpt_optim_config_lr(&o, s, &lr));
        CHECK_OK(ngpt_context_optim_step(ctx, &o, lr, NULL));
    }
    return loss;
}

/* Training learns, is the same for any thread count, resumes from a
 * training file bit for bit, and ends at a golden (every build). */
static void test_training(ngpt_weights w, const char *variant, const char *lora_settings,
                          uint64_t golden)
{
    ngpt_config cfg = tiny(variant);
    ngpt_model *m = model_of(&cfg, 12, w);
    ngpt_lora_config lc = lora(lora_settings);
    ngpt_adapter *ad = NULL, *mid = NULL;
    if (m) CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 21));
    ngpt_context *one = ad ? trainer(m, ad, 1) : NULL, *three = ad ? trainer(m, ad, 3) : NULL;
    ngpt_context *resumed = NULL;
    if (!one || !three) goto out;
    const float first = train_steps(one, 0, 1, cfg.vocab_size);
    const float last = train_steps(one, 1, 15, cfg.vocab_size);
    CHECK(last < first - 0.5f, "[%s] the adapter did not learn: loss %.4f -> %.4f", variant,
          (double)first, (double)last);
    train_steps(three, 0, 6, cfg.vocab_size);
    ngpt_train_state ts = {.opt = ngpt_optim_config_default(), .seed = 11, .batch = B, .seq = T,
                           .best_eval_loss = 1.5f, .holdout = 0.1f, .eval_every = 10,
                           .eval_batches = 2};
    CHECK_OK(ngpt_context_save_train(three, apath, &ts));
    CHECK_OK(ngpt_adapter_open(&mid, apath));
    ngpt_train_state back;
    if (mid) CHECK_OK(ngpt_adapter_train_state(mid, &back));
    CHECK(mid && back.has_state && back.seed == 11 && back.best_eval_loss == 1.5f,
          "the training state read back");
    resumed = mid ? trainer(m, mid, 2) : NULL;
    uint64_t steps = 0;
    if (resumed) CHECK_OK(ngpt_context_step_count(resumed, &steps));
    CHECK(steps == 6, "the resumed context is at step %llu", (unsigned long long)steps);
    if (resumed) train_steps(resumed, 6, 10, cfg.vocab_size);
    uint64_t h1 = 0, h3 = 0, hr = 0;
    CHECK_OK(ngpt_context_params_checksum(one, &h1));
    train_steps(three, 6, 10, cfg.vocab_size);
    CHECK_OK(ngpt_context_params_checksum(three, &h3));
    if (resumed) CHECK_OK(ngpt_context_params_checksum(resumed, &hr));
    CHECK(h1 == h3, "[%s] 1 and 3 threads trained different adapters", variant);
    CHECK(h1 == hr, "[%s] the resumed adapter differs", variant);
    printf("lora training [%s | %s | weights %d]: loss %.4f -> %.4f\n", variant, lora_settings,
           (int)w, (double)first, (double)last);
    CHECK_HASH(h1, golden);
out:
    ngpt_context_free(one);
    ngpt_context_free(three);
    ngpt_context_free(resumed);
    CHECK_OK(ngpt_adapter_close(mid));
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

/* -------------------------------------------------------------- files */

/* A saved adapter opens with the same floats and gives the training
 * context's logits; a quantized model of the same float32 original takes
 * it; another model, a model file and damage are refused. */
static void test_files(void)
{
    ngpt_config cfg = tiny("");
    ngpt_model *m = model_of(&cfg, 30, NGPT_WEIGHTS_F32), *q = NULL, *other = NULL;
    ngpt_lora_config lc = lora("targets=c_attn,mlp.c_proj dropout=0.1");
    ngpt_adapter *ad = NULL, *back = NULL, *mem = NULL;
    if (m) CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 4));
    ngpt_context *tr = ad ? trainer(m, ad, 1) : NULL, *inf = NULL, *qi = NULL;
    if (!tr) goto out;
    float *p;
    size_t n;
    CHECK_OK(ngpt_context_params(tr, &p, &n));
    for (size_t i = 0; i < n; i++) p[i] = urand();
    CHECK_OK(ngpt_context_save(tr, apath));
    CHECK_OK(ngpt_adapter_open(&back, apath));
    CHECK(back && back->ll.total == n && !memcmp(back->w, p, n * sizeof(float)) && !back->adam_m,
          "the adapter file's floats");
    ngpt_adapter_info info;
    CHECK_OK(back ? ngpt_adapter_describe(back, &info) : NGPT_ERR_NULL_ARG);
    CHECK(back && info.floats == n && info.base == back->base && info.steps == 0 &&
              info.modules == (NGPT_LORA_QKV | NGPT_LORA_DOWN) && info.layers == cfg.n_layers &&
              info.scale == 2.0f && info.config.d_model == cfg.d_model,
          "the adapter's description");
    size_t size = 0;
    unsigned char *bytes = test_read_file(apath, &size);
    CHECK_OK(ngpt_adapter_open_mem(&mem, bytes, size));
    CHECK(mem && !memcmp(mem->w, p, n * sizeof(float)), "open_mem");
    CHECK(back && back->file && !back->owned && mem && !mem->file,
          "a file's floats are used in place, memory's copied");
    /* the same logits as the training context's forward (dropout off) */
    inf = inferer(m, 8);
    int32_t tok[B * T], tgt[B * T];
    batch(tok, tgt, cfg.vocab_size);
    const float one = 1.0f;
    if (inf && back) CHECK_OK(ngpt_context_adapters_set(inf, (const ngpt_adapter *const *)&back, &one, 1));
    float *li = inf ? logits_of(inf, tok) : NULL, *lt = logits_of(tr, tok);
    if (li) CHECK(!memcmp(li, lt, sizeof(float) * B * T * cfg.vocab_size),
                  "the applied adapter's logits differ from its training context's");
    free(li), free(lt);
    /* a cache made under the adapter loads under it only; setting adapters
     * empties the cache (it was made under the others) */
    if (inf && back) {
        char spath[220];
        snprintf(spath, sizeof spath, "%.200s.sess", apath);
        int32_t len = -1;
        /* prefill and decode under the adapter: the full forward's bits */
        const float *lg = NULL;
        float *row = malloc(sizeof(float) * cfg.vocab_size);
        CHECK_OK(ngpt_context_forward(inf, tok, 1, 9, NULL, NULL));
        CHECK_OK(ngpt_context_logits(inf, &lg));
        if (lg) memcpy(row, lg + (size_t)8 * cfg.vocab_size, sizeof(float) * cfg.vocab_size);
        CHECK_OK(ngpt_context_cache_clear(inf, 0));
        CHECK_OK(ngpt_context_cache_prefill_slot(inf, 0, tok, 8));
        CHECK_OK(ngpt_context_cache_decode(inf, tok + 8, 1));
        CHECK_OK(ngpt_context_logits(inf, &lg));
        CHECK(lg && !memcmp(lg, row, sizeof(float) * cfg.vocab_size),
              "prefill and decode under the adapter differ from the full forward");
        free(row);
        CHECK_OK(ngpt_context_cache_prefill_slot(inf, 1, tok, 9));
        CHECK_OK(ngpt_context_cache_save(inf, 1, spath));
        CHECK_OK(ngpt_context_adapters_set(inf, NULL, NULL, 0));
        CHECK_OK(ngpt_context_cache_len(inf, 1, &len));
        CHECK(len == 0, "the cache made under the adapter was kept (%d tokens)", (int)len);
        CHECK_STATUS(ngpt_context_cache_load(inf, 1, spath), NGPT_ERR_CONFIG_MISMATCH);
        CHECK(strstr(ngpt_last_error(), "other adapters"), "%s", ngpt_last_error());
        CHECK_OK(ngpt_context_adapters_set(inf, (const ngpt_adapter *const *)&back, &one, 1));
        CHECK_OK(ngpt_context_cache_load(inf, 1, spath));
        CHECK_OK(ngpt_context_cache_len(inf, 1, &len));
        CHECK(len == 9, "the session loaded %d tokens", (int)len);
        unlink(spath);
    }
    /* the float32 file's q8 copy keeps its identity: the adapter applies */
    ngpt_config qc = cfg;
    qc.weights = NGPT_WEIGHTS_Q8;
    ngpt_context *quantize = NULL;
    CHECK_OK(ngpt_context_init(&quantize, m, &qc, NULL, NULL, 0));
    if (quantize) CHECK_OK(ngpt_context_save(quantize, path2));
    ngpt_context_free(quantize);
    CHECK_OK(ngpt_model_open(&q, path2));
    qi = q ? inferer(q, 8) : NULL;
    if (qi && back) CHECK_OK(ngpt_context_adapters_set(qi, (const ngpt_adapter *const *)&back, &one, 1));
    /* and a 4-bit copy with a 4-bit lm_head: the same model, another storage */
    ngpt_config hc = cfg;
    hc.weights = NGPT_WEIGHTS_Q4, hc.lm_head_q4 = true;
    ngpt_shape hs = ngpt_shape_default(NGPT_MODE_INFER);
    hs.adapter_rank = 8;
    ngpt_context *head4 = NULL;
    CHECK_OK(ngpt_context_init(&head4, m, &hc, &hs, NULL, 0));
    if (head4 && back)
        CHECK_OK(ngpt_context_adapters_set(head4, (const ngpt_adapter *const *)&back, &one, 1));
    ngpt_context_free(head4);
    /* another model of the config: refused, in both places */
    other = model_of(&cfg, 31, NGPT_WEIGHTS_F32);
    ngpt_context *oi = other ? inferer(other, 8) : NULL, *ot = NULL;
    if (oi && back) {
        CHECK_STATUS(ngpt_context_adapters_set(oi, (const ngpt_adapter *const *)&back, &one, 1),
                     NGPT_ERR_CONFIG_MISMATCH);
        CHECK(strstr(ngpt_last_error(), "another model"), "%s", ngpt_last_error());
        ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
        sh.adapter = back;
        CHECK_STATUS(ngpt_context_init(&ot, other, NULL, &sh, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    }
    ngpt_context_free(oi);
    /* a model file is not an adapter, nor an adapter a model */
    ngpt_adapter *none = (ngpt_adapter *)1;
    CHECK_STATUS(ngpt_adapter_open(&none, path), NGPT_ERR_BAD_FORMAT);
    CHECK(!none && strstr(ngpt_last_error(), "not a LoRA adapter"), "%s", ngpt_last_error());
    ngpt_model *mm = NULL;
    CHECK_STATUS(ngpt_model_open(&mm, apath), NGPT_ERR_BAD_FORMAT);
    CHECK(strstr(ngpt_last_error(), "is a LoRA adapter"), "%s", ngpt_last_error());
    /* damage anywhere is found */
    if (bytes && size > 600) {
        bytes[size / 2] ^= 1;
        CHECK_STATUS(ngpt_adapter_open_mem(&none, bytes, size), NGPT_ERR_CHECKSUM);
        bytes[size / 2] ^= 1;
        CHECK_STATUS(ngpt_adapter_open_mem(&none, bytes, size - 8), NGPT_ERR_BAD_FORMAT);
    }
    free(bytes);
    /* used: not closed */
    CHECK_STATUS(ngpt_adapter_close(back), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_adapter_close(ad), NGPT_ERR_WRONG_MODE);
out:
    ngpt_context_free(inf);
    ngpt_context_free(qi);
    ngpt_context_free(tr);
    CHECK_OK(ngpt_adapter_close(back));
    CHECK_OK(ngpt_adapter_close(mem));
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
    CHECK_OK(ngpt_model_close(q));
    CHECK_OK(ngpt_model_close(other));
}

/* Speculative generation with an adapter on the target and none on the
 * draft (a draft of the plain model, and prompt lookup) gives the adapted
 * model's plain output, token for token. */
static void test_speculative(void)
{
    ngpt_config cfg = tiny("");
    ngpt_model *m = model_of(&cfg, 50, NGPT_WEIGHTS_F32);
    ngpt_lora_config lc = lora("targets=all-linear");
    ngpt_adapter *ad = NULL, *file = NULL;
    if (m) CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 8));
    ngpt_context *tr = ad ? trainer(m, ad, 1) : NULL, *ctx = NULL, *draft = NULL;
    if (!tr) goto out;
    float *p;
    size_t n;
    CHECK_OK(ngpt_context_params(tr, &p, &n));
    for (size_t i = 0; i < n; i++) p[i] = 0.3f * urand();
    CHECK_OK(ngpt_context_save(tr, apath));
    CHECK_OK(ngpt_adapter_open(&file, apath));
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
    sh.draft_tokens = 4, sh.adapter_rank = 8;
    CHECK_OK(ngpt_context_init(&ctx, m, NULL, &sh, NULL, 0));
    sh.adapter_rank = 0;
    CHECK_OK(ngpt_context_init(&draft, m, NULL, &sh, NULL, 0));
    const float one = 1.0f;
    if (!ctx || !draft || !file) goto out;
    CHECK_OK(ngpt_context_adapters_set(ctx, (const ngpt_adapter *const *)&file, &one, 1));
    int32_t prompt[6] = {5, 9, 5, 9, 5, 9}, plain[24], spec[24];
    ngpt_generate_result a, b;
    for (int mode = 0; mode < 2; mode++) {
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.max_tokens = 24, gc.ignore_end = true, gc.sampler.temperature = 0.0f;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 6, plain, 24, NULL, NULL, &a));
        gc.draft_tokens = 4;
        if (mode == 0) gc.draft = draft;
        else gc.lookup = 2;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 6, spec, 24, NULL, NULL, &b));
        CHECK(a.n_tokens == b.n_tokens && !memcmp(plain, spec, sizeof(int32_t) * a.n_tokens),
              "%s with an adapter: the output differs from plain generation",
              mode ? "lookup" : "a plain draft");
        CHECK(b.n_proposed > 0, "%s: nothing proposed", mode ? "lookup" : "draft");
        if (mode == 0) CHECK(b.n_accepted < b.n_proposed, "the plain draft matched the adapted "
                             "model everywhere (%d of %d): the adapter does nothing",
                             (int)b.n_accepted, (int)b.n_proposed);
    }
out:
    ngpt_context_free(ctx);
    ngpt_context_free(draft);
    ngpt_context_free(tr);
    CHECK_OK(ngpt_adapter_close(file));
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

/* Bad requests: one clear error each, nothing changed. */
static void test_refusals(void)
{
    ngpt_config cfg = tiny("");
    ngpt_model *m = model_of(&cfg, 40, NGPT_WEIGHTS_F32);
    ngpt_lora_config lc = lora("r=8");
    ngpt_adapter *ad = NULL;
    if (m) CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 1));
    if (!ad) goto out;
    ngpt_context *ctx = NULL;
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
    sh.adapter = ad;
    CHECK_STATUS(ngpt_context_init(&ctx, m, NULL, &sh, NULL, 0), NGPT_ERR_BAD_ARG);
    sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.adapter = ad;
    CHECK_STATUS(ngpt_context_init(&ctx, m, &cfg, &sh, NULL, 0), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &sh, NULL, 0), NGPT_ERR_BAD_ARG);
    sh.adapter_rank = 4;
    CHECK_STATUS(ngpt_context_init(&ctx, m, NULL, &sh, NULL, 0), NGPT_ERR_BAD_ARG);
    sh = ngpt_shape_default(NGPT_MODE_INFER);
    sh.adapter_rank = NGPT_LORA_RANK_MAX + 1;
    CHECK_STATUS(ngpt_context_init(&ctx, m, NULL, &sh, NULL, 0), NGPT_ERR_BAD_ARG);
    ngpt_context *plain = inferer(m, 0), *small = inferer(m, 4), *ok = inferer(m, 8);
    const float one = 1.0f, nan = NAN;
    const ngpt_adapter *const list[NGPT_ADAPTERS_MAX + 1] = {ad, ad, ad, ad, ad, ad, ad, ad, ad};
    const float ones[NGPT_ADAPTERS_MAX + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    if (plain && small && ok) {
        CHECK_STATUS(ngpt_context_adapters_set(plain, list, &one, 1), NGPT_ERR_EXCEEDS_PLAN);
        CHECK_STATUS(ngpt_context_adapters_set(small, list, &one, 1), NGPT_ERR_EXCEEDS_PLAN);
        CHECK(strstr(ngpt_last_error(), "adapter_rank >= 8"), "%s", ngpt_last_error());
        CHECK_STATUS(ngpt_context_adapters_set(ok, list, &nan, 1), NGPT_ERR_BAD_ARG);
        CHECK_STATUS(ngpt_context_adapters_set(ok, list, ones, NGPT_ADAPTERS_MAX + 1),
                     NGPT_ERR_BAD_ARG);
        CHECK_STATUS(ngpt_context_adapters_set(ok, NULL, &one, 1), NGPT_ERR_NULL_ARG);
        CHECK_OK(ngpt_context_adapters_set(ok, list, ones, NGPT_ADAPTERS_MAX));
        CHECK(atomic_load(&ad->users) == NGPT_ADAPTERS_MAX, "8 uses counted");
        CHECK_OK(ngpt_context_adapters_set(ok, list, ones, 1));
        CHECK(atomic_load(&ad->users) == 1, "the earlier uses released");
        /* the cache was made under other adapters: emptied */
        int32_t tok[3] = {1, 2, 3};
        ngpt_generate_config gc = ngpt_generate_config_default();
        (void)gc;
        CHECK_OK(ngpt_context_forward(ok, tok, 1, 3, NULL, NULL));
    }
    ngpt_context *tr = trainer(m, ad, 1);
    if (tr) CHECK_STATUS(ngpt_context_adapters_set(tr, list, &one, 1), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_adapter_close(ad), NGPT_ERR_WRONG_MODE);
    ngpt_context_free(tr);
    ngpt_context_free(plain);
    ngpt_context_free(small);
    ngpt_context_free(ok);
    CHECK(atomic_load(&ad->users) == 0, "every use released");
    ngpt_adapter *x = (ngpt_adapter *)1;
    CHECK_STATUS(ngpt_adapter_create(&x, NULL, &lc, 1), NGPT_ERR_NULL_ARG);
    CHECK(x == NULL, "*ad cleared");
    CHECK_STATUS(ngpt_adapter_create(NULL, m, &lc, 1), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_adapter_open(&x, NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_adapter_open(&x, "/nonexistent/a.lora"), NGPT_ERR_IO);
    CHECK_STATUS(ngpt_adapter_open_mem(&x, NULL, 3), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_adapter_save(NULL, apath), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_adapter_lora_config(ad, NULL), NGPT_ERR_NULL_ARG);
    ngpt_train_state ts;
    CHECK_OK(ngpt_adapter_train_state(ad, &ts));
    CHECK(!ts.has_state, "a new adapter has no training state");
    CHECK_OK(ngpt_adapter_close(NULL));
out:
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/ngpt_lora_%d.ngpt", (int)getpid());
    snprintf(path2, sizeof path2, "/tmp/ngpt_lora_%d_q.ngpt", (int)getpid());
    snprintf(apath, sizeof apath, "/tmp/ngpt_lora_%d.lora", (int)getpid());
    test_config();
    test_targets_against_model();
    check_grads("", "targets=c_attn,attn.c_proj,c_fc,mlp.c_proj r=4", 2e-3);
    check_grads("", "targets=q_proj,k_proj,v_proj r=3 layers=1 rslora=1", 2e-3);
    check_grads(LLAMA, "targets=all-linear r=4", 2e-3);
    check_grads(GEMMA, "targets=all-linear r=4", 2e-3);
    check_grads("norm=post pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
                "targets=all-linear r=2 dropout=0.2", 2e-3);
    check_quantized_grads(NGPT_WEIGHTS_Q8, LLAMA);
    check_quantized_grads(NGPT_WEIGHTS_Q4, "");
    test_frozen_cols(NGPT_WEIGHTS_F32);
    test_frozen_cols(NGPT_WEIGHTS_Q8);
    test_frozen_cols(NGPT_WEIGHTS_Q4);
    test_identity_start(NGPT_WEIGHTS_F32, "");
    test_identity_start(NGPT_WEIGHTS_Q8, LLAMA);
    test_identity_start(NGPT_WEIGHTS_Q4, "");
    test_against_merged("", "targets=all-linear r=4");
    test_against_merged(LLAMA, "targets=q_proj,v_proj,down_proj r=3 alpha=5 layers=0");
    test_against_merged(GEMMA, "targets=gate_proj,up_proj,o_proj r=3 alpha=5");
    test_training(NGPT_WEIGHTS_F32, "", "targets=all-linear r=4 dropout=0.05", 0x45539f99247544fcull);
    test_training(NGPT_WEIGHTS_Q8, LLAMA, "targets=all-linear r=4", 0x6d47dcb823be9181ull);
    test_training(NGPT_WEIGHTS_Q4, "", "targets=c_attn,c_fc r=8", 0xbec89a6fb814106cull);
    test_files();
    test_speculative();
    test_refusals();
    unlink(path), unlink(path2), unlink(apath);
    return test_summary("test_lora");
}
