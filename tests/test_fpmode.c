/* test_fpmode.c — the floating-point mode (src/base/fpmode.h, docs/DETERMINISM.md):
 *  - a caller's mode (flush-to-zero, denormals-are-zero, round toward zero,
 *    sticky flags) is exactly the same after every public call that
 *    computes, and those calls give the bits they give in the default mode:
 *    the library computes in its own mode, on a model whose activations are
 *    subnormal too, with one thread or three (every job split, so the pool's
 *    workers compute);
 *  - the hostile mode really changes arithmetic here (else the above could
 *    not fail);
 *  - the canonical math keeps subnormals and rounds a product that is tiny
 *    only before rounding up to FLT_MIN, in the reference and the active
 *    kernels;
 *  - ARMv7: Advanced SIMD flushes set FPSCR.IDC/UFC, which the NEON kernels'
 *    exactness rests on (arch/neon/kernels_neon.h). */
#include <float.h>
#include <math.h>

#include "base/fpmode.h"
#include "gemm.h"
#include "runtime/context.h"   /* the pool's inline threshold: split even tiny jobs */
#include "kernels.h"
#include "kcase.h"
#include "runtime/pool.h"
#include "test.h"

#if defined(__arm__)
#include <arm_neon.h>
#endif

/* FTZ + DAZ + round toward zero, with a sticky flag already set. */
static ngpt_fpmode hostile_mode(void)
{
    ngpt_fpmode m = ngpt_fpmode_get();
#if defined(__x86_64__) || defined(__i386__)
    m.reg = 0x1F80u | 0x8000u /* FTZ */ | 0x0040u /* DAZ */ | 0x6000u /* RC toward zero */ |
            0x0020u /* PE */;
#elif defined(__aarch64__)
    m.fpcr = (1u << 24) /* FZ */ | (3u << 22) /* RZ */;
    m.fpsr = 0x10u;     /* IXC */
#elif defined(__arm__)
    m.reg = (1u << 24) /* FZ */ | (3u << 22) /* RZ */ | 0x10u /* IXC */;
#else
    fesetround(FE_TOWARDZERO);
    m = ngpt_fpmode_get();
    fesetround(FE_TONEAREST);
#endif
    return m;
}

static bool same_mode(const ngpt_fpmode *a, const ngpt_fpmode *b)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__arm__)
    return a->reg == b->reg;
#elif defined(__aarch64__)
    return a->fpcr == b->fpcr && a->fpsr == b->fpsr;
#else
    (void)a, (void)b;
    return true;
#endif
}

static ngpt_fpmode caller;      /* the mode each call below is made in */

/* Calls expr in the caller's mode and checks it is the caller's mode after. */
#define CALL(expr)                                                               \
    do {                                                                         \
        ngpt_fpmode_set(&caller);                                                \
        const ngpt_status st_call_ = (expr);                                     \
        const ngpt_fpmode after_ = ngpt_fpmode_get();                            \
        ngpt_fpmode_set_library();                                               \
        CHECK(same_mode(&after_, &caller), "%s changed the caller's mode", #expr); \
        CHECK(st_call_ == NGPT_OK, "%s -> %s: %s", #expr, ngpt_status_string(st_call_), \
              ngpt_last_error());                                                \
    } while (0)

typedef struct results {
    float dropout, lr, loss, grad_norm, train_loss, eval_loss;
    uint64_t params, logits, stepped, trained, decoded;
    int32_t sampled, generated[8];
} results;

static const char TEXT[] =
    "ngpt trains tiny transformers on boards, byte by byte, with the same bits everywhere. "
    "Every build gives one answer: scalar, AVX2, NEON, any thread count.";

/* The final LayerNorm's weight times 1e-37: its outputs near 1e-37, so the
 * logits (sums of their products with the embeddings) and the gradients
 * through it are around FLT_MIN, many subnormal. */
static void tiny_logits(ngpt_context *ctx)
{
    ngpt_tensor_info t;
    float *params = NULL;
    size_t count = 0;
    CHECK_OK(ngpt_tensor_find(ctx, "ln_f.weight", &t));
    CHECK_OK(ngpt_params_data(ctx, &params, &count));
    if (params) for (size_t j = 0; j < t.count; j++) params[t.offset + j] *= 1e-37f;
}

static uint64_t params_hash(const ngpt_context *ctx)
{
    uint64_t h = 0;
    CHECK_OK(ngpt_params_checksum(ctx, &h));
    return h;
}

static uint64_t logits_hash(const ngpt_context *ctx)
{
    uint64_t h = 0;
    CHECK_OK(ngpt_logits_checksum(ctx, &h));
    return h;
}

/* A context of the given shape and thread count, every job split. */
static ngpt_context *make(const ngpt_config *cfg, ngpt_shape shape, int32_t threads)
{
    ngpt_context *ctx = NULL;
    shape.threads = threads;
    CALL(ngpt_context_init(&ctx, cfg, &shape, NULL, 0));
    if (ctx) ctx->plan.threads.pool->inline_below = 0.0;
    return ctx;
}

/* Every computing call of the public API, each made in `caller`'s mode. */
static void scenario(results *r, bool tiny, int32_t threads)
{
    memset(r, 0, sizeof *r);
    ngpt_config cfg = test_config_tiny();
    CALL(ngpt_config_set(&cfg, "dropout=0.1"));
    r->dropout = cfg.dropout;

    ngpt_shape train = ngpt_shape_default(NGPT_MODE_TRAIN);
    train.batch = 2, train.seq = 16;
    ngpt_context *ctx = make(&cfg, train, threads);
    if (!ctx) return;
    CALL(ngpt_params_init(ctx, 42));
    if (tiny) tiny_logits(ctx);
    r->params = params_hash(ctx);

    int32_t tok[32], tgt[32];
    for (int i = 0; i < 32; i++) tok[i] = (unsigned char)TEXT[i], tgt[i] = (unsigned char)TEXT[i + 1];
    ngpt_optim_config opt = ngpt_optim_config_default();
    CALL(ngpt_optim_lr(&opt, 10, &r->lr));
    CALL(ngpt_dropout_set(ctx, true, 7, 3));
    CALL(ngpt_model_forward(ctx, tok, 2, 16, tgt, &r->loss));
    r->logits = logits_hash(ctx);
    CALL(ngpt_grads_zero(ctx));
    CALL(ngpt_model_backward(ctx));
    CALL(ngpt_optim_step(ctx, &opt, r->lr, &r->grad_norm));
    r->stepped = params_hash(ctx);

    ngpt_data *data = NULL;
    CALL(ngpt_data_open_mem(&data, TEXT, sizeof TEXT - 1, 0.25f, 16));
    if (data) {
        CALL(ngpt_train_step(ctx, &opt, data, 5, 2, 16, &r->train_loss, NULL, NULL));
        r->trained = params_hash(ctx);
        CALL(ngpt_model_evaluate(ctx, data, 9, 2, 2, 16, &r->eval_loss));
        ngpt_data_free(data);
    }
    ngpt_context_free(ctx);

    ngpt_shape infer = ngpt_shape_default(NGPT_MODE_INFER);
    infer.batch = 1, infer.seq = 16;
    ctx = make(&cfg, infer, threads);
    if (!ctx) return;
    CALL(ngpt_params_init(ctx, 42));
    if (tiny) tiny_logits(ctx);
    CALL(ngpt_cache_prefill(ctx, tok, 1, 8));
    CALL(ngpt_cache_decode(ctx, tok + 8, 1));
    r->decoded = logits_hash(ctx);
    const float *logits = NULL;
    CHECK_OK(ngpt_logits_data(ctx, &logits));
    ngpt_sampler s = ngpt_sampler_default();
    s.temperature = 0.8f, s.top_p = 0.9f, s.seed = 3;
    if (logits) CALL(ngpt_sampler_sample(ctx, &s, logits, tok, 9, 0, 9, &r->sampled));
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler = s, gc.max_tokens = 8;
    CALL(ngpt_model_generate(ctx, &gc, tok, 4, r->generated, 8, NULL, NULL, NULL));
    ngpt_context_free(ctx);
}

static bool same_results(const results *a, const results *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static void caller_mode_kept(void)
{
    results def, def_tiny;
    caller = ngpt_fpmode_get();     /* the default mode */
    scenario(&def, false, 1);
    scenario(&def_tiny, true, 1);
    CHECK(def.params != def_tiny.params && def.logits != def_tiny.logits, "the tiny model differs");
    static const int32_t threads[] = {1, 3};
    for (int t = 0; t < 2; t++) {
        results bad, bad_tiny;
        caller = hostile_mode();
        scenario(&bad, false, threads[t]);
        scenario(&bad_tiny, true, threads[t]);
        ngpt_fpmode_set_library();
        CHECK(same_results(&bad, &def), "%d threads: a hostile caller mode changed the results",
              (int)threads[t]);
        CHECK(same_results(&bad_tiny, &def_tiny),
              "%d threads: a hostile caller mode changed the results of a model with subnormal "
              "activations", (int)threads[t]);
    }
}

/* The hostile mode changes what plain arithmetic gives here, so the checks
 * above can fail; back in the library's mode it does not. */
static void hostile_mode_bites(void)
{
    /* volatile results: stored before the mode changes back */
    volatile float one = 1.0f, three = 3.0f, tiny = FLT_MIN, half = 0.5f;
    volatile float third = one / three, sub = tiny * half;
    const ngpt_fpmode h = hostile_mode();
    ngpt_fpmode_set(&h);
    volatile float third_rz = one / three, sub_ftz = tiny * half;
    ngpt_fpmode_set_library();
    CHECK(third_rz != third, "round toward zero took no effect");
    CHECK(sub == 0x1p-127f, "the library's mode keeps subnormals: %a", (double)sub);
    CHECK(third == 0x1.555556p-2f, "the library's mode rounds to nearest: %a", (double)third);
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__)
    CHECK(sub_ftz == 0.0f, "flush-to-zero took no effect: %a", (double)sub_ftz);
#else
    (void)sub_ftz;
#endif
}

/* KC_BAND_A * KC_BAND_B (kcase.h) is below FLT_MIN before rounding,
 * FLT_MIN after. IEEE (and x86 even under FTZ) gives FLT_MIN, an ARM flush
 * 0; the canonical math gives FLT_MIN everywhere. */
static void band_rounds_up(void)
{
    const float a = KC_BAND_A, b = KC_BAND_B;
    CHECK((double)a * (double)b < (double)FLT_MIN, "the exact product is tiny");
    const ngpt_kernels *tables[2] = {&ngpt_kernels_ref, &ngpt_kernels_active};
    float *work = aligned_alloc(64, NGPT_GEMM_WORK_BYTES);
    CHECK(work != NULL, "gemm workspace");
    for (int t = 0; t < 2 && work; t++) {
        float av[8], bv[8], c[8];
        for (int i = 0; i < 8; i++) av[i] = a, bv[i] = b, c[i] = -1.0f;
        /* 1 x 8 outputs of k = 1 (a NEON row), then 8 x 1 */
        tables[t]->gemm(1, 8, 1, av, 1, 1, bv, 8, 1, NULL, c, 8, false, work);
        for (int i = 0; i < 8; i++)
            CHECK(c[i] == FLT_MIN, "%s gemm: %a", tables[t]->name, (double)c[i]);
    }
    free(work);
}

#if defined(__arm__)
static uint32_t fpscr(void)
{
    ngpt_fpmode m = ngpt_fpmode_get();
    return m.reg;
}

/* ARMv7 Advanced SIMD: a subnormal input sets IDC, a flushed result UFC. */
static void armv7_flush_flags(void)
{
    volatile float sub = 0x1p-140f, tiny = 0x1p-70f, one = 1.0f;
    ngpt_fpmode_set_library();
    float32x4_t r = vaddq_f32(vdupq_n_f32(sub), vdupq_n_f32(one));
    __asm__ __volatile__("" : : "w"(r));
    CHECK((fpscr() & 0x80u) != 0, "IDC after a subnormal input: %08x", fpscr());
    ngpt_fpmode_set_library();
    r = vmulq_f32(vdupq_n_f32(tiny), vdupq_n_f32(tiny));
    __asm__ __volatile__("" : : "w"(r));
    CHECK((fpscr() & 0x08u) != 0 && vgetq_lane_f32(r, 0) == 0.0f, "UFC after a flushed result: %08x",
          fpscr());
    ngpt_fpmode_set_library();
    const float s = tiny * tiny;        /* the VFP unit keeps it */
    CHECK(s == 0x1p-140f, "VFP subnormal: %a", (double)s);
}
#endif

int main(void)
{
    ngpt_fpmode_set_library();
    hostile_mode_bites();
    band_rounds_up();
#if defined(__arm__)
    armv7_flush_flags();
#endif
    caller_mode_kept();
    return test_summary("test_fpmode");
}
