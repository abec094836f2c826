/* test_packed.c — float32 Linear weights stored packed (dtype 4,
 * docs/FORMAT.md): the layout is the kernels' (pack then unpack gives the
 * same floats, odd shapes), a model saved row-major and packed gives the
 * same parameters checksum and bit-identical logits (1 and 3 threads), a
 * model opened from a packed file uses its weights in place (copies none),
 * every kind of context made from a model reads both layouts, and damaged
 * packed tensors are refused. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdlib.h>
#include <unistd.h>

#include "io/ckpt_file.h"
#include "io/model.h"
#include "kernels.h"
#include "runtime/f32_panels.h"
#include "test.h"

static char row_path[256], packed_path[256], bad_path[256];

/* pack/unpack: every shape around the panel width, against gemm.h's
 * formula and the pack_w kernel (the layout the products read). */
static void panels(void)
{
    static const int ns[] = {1, 5, 15, 16, 17, 31, 33, 48, 50}, ks[] = {1, 3, 7, 32, 37};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof ks / sizeof *ks; b++) {
            const int n = ns[a], k = ks[b], full = n / 16 * 16;
            const size_t count = (size_t)n * (size_t)k;
            float *w = malloc(count * sizeof(float)), *p = malloc(count * sizeof(float));
            float *back = malloc(count * sizeof(float)), *rows = malloc(16 * (size_t)k * sizeof(float));
            float *kern = aligned_alloc(64, ((size_t)(n + 15) / 16 * 16 * (size_t)k * sizeof(float) + 63) & ~(size_t)63);
            if (!w || !p || !back || !rows || !kern) abort();
            for (size_t i = 0; i < count; i++) {     /* every float distinct, a NaN payload too */
                uint32_t bits = 0x3f800000u + (uint32_t)i * 2654435761u % 0x00800000u;
                if (i == 3) bits = 0x7fc01234u;
                memcpy(&w[i], &bits, 4);
            }
            ngpt_f32_panels_pack(p, w, n, k);
            bool formula = true;
            for (int j = 0; j < n; j++)
                for (int kk = 0; kk < k; kk++) {
                    const size_t at = j < full ? (size_t)(j / 16) * 16 * k + (size_t)kk * 16 + j % 16
                                               : (size_t)j * k + kk;
                    formula &= !memcmp(&p[at], &w[(size_t)j * k + kk], 4);
                }
            CHECK(formula, "(%d, %d): full panels as gemm.h packs them, then the rows", n, k);
            ngpt_kernels_active.pack_w(kern, w, n, k, k);
            CHECK(!memcmp(kern, p, (size_t)full * k * sizeof(float)),
                  "(%d, %d): the panels are pack_w's", n, k);
            ngpt_f32_panels_unpack(back, p, n, k);
            CHECK(!memcmp(back, w, count * sizeof(float)), "(%d, %d): unpack gives the floats back", n, k);
            bool rows_ok = true;
            for (int j0 = 0; j0 < n; j0 += 16) {
                const int nr = n - j0 < 16 ? n - j0 : 16;
                ngpt_f32_panels_rows(rows, (const unsigned char *)p, n, k, j0, nr);
                rows_ok &= !memcmp(rows, w + (size_t)j0 * k, (size_t)nr * k * sizeof(float));
            }
            CHECK(rows_ok, "(%d, %d): each panel's rows", n, k);
            free(w), free(p), free(back), free(rows), free(kern);
        }
}

/* The dtype of tensor `name` in the file at path (-1: none). */
static int64_t dtype_of(const char *path, const char *name)
{
    ngpt_ckpt_reader r;
    if (ngpt_ckpt_open_file(&r, path) != NGPT_OK) return -1;
    const int64_t at = ngpt_ckpt_find_tensor(&r, name);
    const int64_t d = at < 0 ? -1 : (int64_t)ngpt_ckpt_tensor_dtype(&r, (uint32_t)at);
    ngpt_ckpt_close(&r);
    return d;
}

static uint64_t params_hash(const ngpt_context *ctx)
{
    uint64_t h = 0;
    ngpt_context_params_checksum(ctx, &h);
    return h;
}

/* The logits of a fixed prompt from an inference context of the model. */
static float *model_logits(const ngpt_model *m, int threads, size_t *count)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads;
    s.logits_rows = NGPT_LOGITS_ALL;    /* every position's, compared */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, m, NULL, &s, NULL, 0));
    if (!ctx) return NULL;
    ngpt_config cfg;
    ngpt_model_config(m, &cfg);
    int32_t tokens[12];
    for (int i = 0; i < 12; i++) tokens[i] = (i * 37 + 5) % cfg.vocab_size;
    const float *lg = NULL;
    CHECK_OK(ngpt_context_forward(ctx, tokens, 1, 12, NULL, NULL));
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    *count = (size_t)12 * (size_t)cfg.vocab_size;
    float *out = malloc(*count * sizeof(float));
    if (out && lg) memcpy(out, lg, *count * sizeof(float));
    ngpt_context_free(ctx);
    return out;
}

/* A model written row-major (a training save) and packed (the save of an
 * inference context that copied it): the same model through every way of
 * making a context of it. in_place: whether the config's shapes let a model
 * use the packed file in place. */
static void both_layouts(const char *what, const char *settings, bool in_place)
{
    ngpt_config cfg = test_config_tiny();
    CHECK(test_config_apply(&cfg, settings), "%s: config", what);
    ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN), is = ngpt_shape_default(NGPT_MODE_INFER);
    ts.batch = 1, ts.seq = 8;
    ngpt_context *train = NULL, *infer = NULL, *back = NULL, *again = NULL;
    ngpt_context *q_row = NULL, *q_packed = NULL;
    ngpt_model *mr = NULL, *mp = NULL;
    CHECK_OK(ngpt_context_init(&train, NULL, &cfg, &ts, NULL, 0));
    if (!train) return;
    CHECK_OK(ngpt_context_params_init(train, 11));
    CHECK_OK(ngpt_context_save(train, row_path));
    CHECK_OK(ngpt_model_open(&mr, row_path));
    if (mr) CHECK_OK(ngpt_context_init(&infer, mr, &cfg, &is, NULL, 0));
    if (!infer) goto out;
    CHECK_OK(ngpt_context_save(infer, packed_path));
    const char *linear = "blocks.1.mlp.fc1.weight";
    CHECK(dtype_of(row_path, linear) == NGPT_CKPT_F32 && dtype_of(packed_path, linear) == NGPT_CKPT_F32_PACKED &&
              dtype_of(packed_path, "blocks.1.mlp.fc1.bias") != NGPT_CKPT_F32_PACKED &&
              dtype_of(packed_path, "blocks.0.ln1.weight") == NGPT_CKPT_F32,
          "%s: a training save is row-major, an inference save packs the Linears only", what);
    CHECK(params_hash(train) == params_hash(infer), "%s: the same parameters checksum", what);
    CHECK_OK(ngpt_model_open(&mp, packed_path));
    if (!mp) goto out;

    /* a training context unpacks: its parameters are the original floats */
    CHECK_OK(ngpt_context_init(&back, mp, NULL, &ts, NULL, 0));
    float *p0 = NULL, *p1 = NULL;
    size_t n0 = 0, n1 = 0;
    ngpt_context_params(train, &p0, &n0);
    if (back) ngpt_context_params(back, &p1, &n1);
    CHECK(p0 && p1 && n0 == n1 && !memcmp(p0, p1, n0 * sizeof(float)),
          "%s: a training context of the packed file has the floats bit for bit", what);
    /* an inference copy takes it as is: saved again, the same bytes */
    CHECK_OK(ngpt_context_init(&again, mp, &cfg, &is, NULL, 0));
    if (again) {
        CHECK(params_hash(again) == params_hash(train), "%s: inference copy of the packed file",
              what);
        CHECK_OK(ngpt_context_save(again, bad_path));
        CHECK(test_same_file(packed_path, bad_path), "%s: an inference copy's save keeps the bytes",
              what);
    }

    /* contexts sharing either model's weights: the same logits, with 1 and 3
     * threads; the weights are laid out for the first such context (the
     * copies above took nothing of the model's) */
    CHECK(ngpt_model_copied_bytes(mr) == 0 && ngpt_model_copied_bytes(mp) == 0,
          "%s: no copy before a context shares the weights", what);
    for (int threads = 1; threads <= 3; threads += 2) {
        size_t cr = 0, cp = 0;
        float *lr = model_logits(mr, threads, &cr), *lp = model_logits(mp, threads, &cp);
        CHECK(lr && lp && cr == cp && !memcmp(lr, lp, cr * sizeof(float)),
              "%s: bit-identical logits from both files, %d thread%s", what, threads,
              threads > 1 ? "s" : "");
        free(lr), free(lp);
    }
    CHECK(ngpt_model_copied_bytes(mr) > 0, "%s: a row-major file's weights are packed into "
          "the model's memory", what);
    if (in_place)
        CHECK(ngpt_model_copied_bytes(mp) == 0, "%s: a packed file's weights are used in "
              "place (copied %zu bytes)", what, ngpt_model_copied_bytes(mp));
    else
        CHECK(ngpt_model_copied_bytes(mp) > 0, "%s: shapes that leave padding between "
              "tensors are copied", what);
    ngpt_context *c = NULL;
    CHECK_OK(ngpt_context_init(&c, mp, NULL, &is, NULL, 0));
    if (c) {
        CHECK(params_hash(c) == params_hash(train), "%s: a context on the packed model has "
              "the parameters checksum", what);
        CHECK_OK(ngpt_context_save(c, bad_path));
        CHECK(test_same_file(packed_path, bad_path), "%s: a model's context saves the file's bytes", what);
    }
    ngpt_context_free(c);

    /* quantizing copies read either layout alike */
    ngpt_config q = cfg;
    q.weights = NGPT_WEIGHTS_Q8;
    CHECK_OK(ngpt_context_init(&q_row, mr, &q, &is, NULL, 0));
    CHECK_OK(ngpt_context_init(&q_packed, mp, &q, &is, NULL, 0));
    if (q_row && q_packed)
        CHECK(params_hash(q_row) == params_hash(q_packed), "%s: 8-bit from either layout", what);
out:
    ngpt_context_free(q_row), ngpt_context_free(q_packed);
    ngpt_context_free(train), ngpt_context_free(infer), ngpt_context_free(back), ngpt_context_free(again);
    CHECK_OK(ngpt_model_close(mr));
    CHECK_OK(ngpt_model_close(mp));
}

/* Re-seals a modified image so that only the field under test is wrong. */
static void reseal(unsigned char *b, size_t n)
{
    uint64_t h = XXH3_64bits(b, n - 8);
    memcpy(b + n - 8, &h, 8);
}

/* The table entry of tensor `name` in a file image. */
static unsigned char *entry_of(unsigned char *img, const char *name)
{
    uint32_t nt;
    memcpy(&nt, img + 24, 4);
    for (uint32_t i = 0; i < nt; i++)
        if (!strcmp((const char *)img + 128 + 128 * (size_t)i, name)) return img + 128 + 128 * (size_t)i;
    return NULL;
}

static void expect_refused(const unsigned char *img, size_t n, ngpt_status want, const char *needle,
                           const char *what)
{
    ngpt_model *m = NULL;
    ngpt_status st = ngpt_model_open_mem(&m, img, n);
    CHECK(st == want && strstr(ngpt_last_error(), needle), "%s: %s (%s)", what,
          ngpt_status_string(st), ngpt_last_error());
    ngpt_model_close(m);
}

/* The packed file of an untied model (its tok_emb is no Linear). */
static void damaged(void)
{
    size_t n = 0;
    unsigned char *img = test_read_file(packed_path, &n), *b = img ? malloc(n) : NULL;
    if (!img || !b) return;
    uint32_t four = NGPT_CKPT_F32_PACKED, zero = NGPT_CKPT_F32;
    unsigned char *e;

    memcpy(b, img, n);
    e = entry_of(b, "blocks.0.attn.qkv.weight");
    uint64_t off;
    memcpy(&off, e + 88, 8);
    b[off + 100] ^= 1;
    expect_refused(b, n, NGPT_ERR_CHECKSUM, "checksum", "a flipped bit in a packed tensor");

    memcpy(b, img, n);
    memcpy(entry_of(b, "blocks.0.ln1.weight") + 64, &four, 4);
    reseal(b, n);
    expect_refused(b, n, NGPT_ERR_BAD_FORMAT, "ndim 1, not 2", "a packed vector");

    memcpy(b, img, n);
    memcpy(entry_of(b, "tok_emb.weight") + 64, &four, 4);
    reseal(b, n);
    expect_refused(b, n, NGPT_ERR_BAD_FORMAT, "is packed float32 but", "an untied embedding packed");

    memcpy(b, img, n);
    e = entry_of(b, "blocks.1.mlp.fc2.weight");
    uint64_t bytes;
    memcpy(&bytes, e + 96, 8);
    bytes -= 4;
    memcpy(e + 96, &bytes, 8);
    reseal(b, n);
    expect_refused(b, n, NGPT_ERR_BAD_FORMAT, "holds", "a packed tensor one float short");

    memcpy(b, img, n);
    uint32_t five = 5;
    memcpy(entry_of(b, "lm_head.weight") + 64, &five, 4);
    reseal(b, n);
    expect_refused(b, n, NGPT_ERR_BAD_FORMAT, "unknown dtype 5", "an unknown dtype");

    /* a row-major Linear beside packed ones still loads (either layout per tensor) */
    memcpy(b, img, n);
    memcpy(entry_of(b, "lm_head.weight") + 64, &zero, 4);
    reseal(b, n);
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open_mem(&m, b, n));
    ngpt_model_close(m);
    free(img), free(b);
}

int main(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(row_path, sizeof row_path, "%s/ngpt-test-packed-row-%d.ngpt", dir, (int)getpid());
    snprintf(packed_path, sizeof packed_path, "%s/ngpt-test-packed-%d.ngpt", dir, (int)getpid());
    snprintf(bad_path, sizeof bad_path, "%s/ngpt-test-packed-again-%d.ngpt", dir, (int)getpid());
    panels();
    both_layouts("tiny", "", true);
    both_layouts("gpt2-like", "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh", true);
    both_layouts("llama-like", "H=6 kv_heads=2 head_dim=10 norm_type=rms mlp=swiglu mlp_bias=0 "
                 "rope_pairs=halves", true);
    /* odd shapes: V=77 (4 panels and 13 rows), d_ff=40 (a bias of 40 floats:
     * padding follows it in the file, so the model copies) */
    both_layouts("odd", "V=77 d_ff=40 tie_lm_head=0 qkv_bias=1", false);
    damaged();
    unlink(row_path);
    unlink(packed_path);
    unlink(bad_path);
    return test_summary("test_packed");
}
