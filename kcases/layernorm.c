/* layernorm.c — the cases of layernorm_fwd, layernorm_bwd,
 * layernorm_bwd_wb and RMSNorm's rmsnorm_fwd, rmsnorm_bwd, rmsnorm_bwd_w
 * (the same shapes; eps 1e-5, or 1e-6 with stats = 2 in the forwards). Shapes (v[3] = tiny in all three):
 *   fwd: rows c stats tiny — with stats = 0 it passes NULL mean/rstd (inference);
 *   bwd: rows c stats tiny — stats = 1: the mean/rstd the reference forward saves;
 *   wb:  rows n pad tiny — n columns of rows n + pad floats apart (a thread's
 *        share of the columns).
 * With tiny = 1, even rows are nearly constant (values near 2^-70: subnormal
 * squared deviations) and weights, gradients and outputs are subnormal or
 * tiny; odd rows are normal. */
#include <stdlib.h>

#include "kcase.h"

static const int ROWS[] = {1, 3, 6}, COLS[] = {2, 8, 10, 34, 66, 257};

static void fwd_tests(kc_shapes *out)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 6; c++)
            kc_add_shape(out, ROWS[r], COLS[c], 1), kc_add_shape(out, ROWS[r], COLS[c], 0),
                kc_add_shape(out, ROWS[r], COLS[c], 1, 1), kc_add_shape(out, ROWS[r], COLS[c], 2);
}

/* eps of a forward: 1e-6 with stats = 2 (Llama's), else 1e-5 */
static float eps_of(const kc_state *st) { return kc_int(st, 2) == 2 ? 1e-6f : 1e-5f; }

static void bwd_tests(kc_shapes *out)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 6; c++) kc_add_shape(out, ROWS[r], COLS[c], 1), kc_add_shape(out, ROWS[r], COLS[c], 1, 1);
}

/* T = 256 rows of C = 256. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256, 256, 1);
}

static bool tiny(const kc_state *st) { return kc_int(st, 3); }

/* rows x ld values x: uniform over ±3, or (tiny) near-constant even rows. */
static float *rows_x(kc_state *st, int slot, size_t rows, size_t ld)
{
    if (!tiny(st)) return kc_rand(st, slot, rows * ld, 3.0f);
    float *x = kc_tiny(st, slot, rows * ld, 0x1p-70f);
    for (size_t r = 1; r < rows; r += 2)
        for (size_t i = 0; i < ld; i++) x[r * ld + i] *= 0x1p70f;
    return x;
}

/* Slot of n values: kc_rand(scale), or (tiny) kc_tiny(tiny_scale). */
static float *vals(kc_state *st, int slot, size_t n, float scale, float tiny_scale)
{
    return tiny(st) ? kc_tiny(st, slot, n, tiny_scale) : kc_rand(st, slot, n, scale);
}

enum { X, W, B, Y, MEAN, RSTD };

static void fwd_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), c = kc_size(st, 1);
    rows_x(st, X, rows, c), vals(st, W, c, 1.0f, 0x1p-63f), vals(st, B, c, 0.2f, 0x1p-120f);
    kc_zeros(st, Y, rows * c), kc_zeros(st, MEAN, rows), kc_zeros(st, RSTD, rows);
    st->bytes = 4.0 * (2.0 * (double)rows * c + 2.0 * c + 2.0 * rows);
}

static void fwd_run(kc_state *st, const ngpt_kernels *t)
{
    const bool stats = kc_int(st, 2);
    t->layernorm_fwd(st->buf[Y], stats ? st->buf[MEAN] : NULL, stats ? st->buf[RSTD] : NULL, st->buf[X],
                     st->buf[W], st->buf[B], kc_size(st, 0), kc_int(st, 1), eps_of(st));
}

const kc_case kc_layernorm_fwd = {"rows c stats tiny", fwd_tests, bench_shapes, fwd_setup, fwd_run, NULL};

enum { BX, BDY, BW, BMEAN, BRSTD, DX, DW, DB };

/* x, dy (rows, ld) and the mean/rstd of the reference forward over ld columns. */
static void bwd_inputs(kc_state *st, size_t rows, size_t ld)
{
    const float *x = rows_x(st, BX, rows, ld), *w = vals(st, BW, ld, 1.0f, 0x1p-63f);
    vals(st, BDY, rows * ld, 1.0f, 0x1p-63f);
    float *mean = kc_zeros(st, BMEAN, rows), *rstd = kc_zeros(st, BRSTD, rows);
    float *y = calloc(rows * ld, sizeof(float)), *b = calloc(ld, sizeof(float));
    if (!y || !b) abort();
    ngpt_f32_layernorm_fwd_ref(y, mean, rstd, x, w, b, rows, (int)ld, 1e-5f);
    free(y), free(b);
}

static void bwd_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), c = kc_size(st, 1);
    bwd_inputs(st, rows, c);
    vals(st, DX, rows * c, 0.1f, 0x1p-120f);
    st->bytes = 4.0 * (4.0 * (double)rows * c + c + 2.0 * rows);
}

static void bwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->layernorm_bwd(st->buf[DX], st->buf[BDY], st->buf[BX], st->buf[BMEAN], st->buf[BRSTD],
                     st->buf[BW], kc_size(st, 0), kc_int(st, 1));
}

const kc_case kc_layernorm_bwd = {"rows c stats tiny", bwd_tests, bench_shapes, bwd_setup, bwd_run, NULL};

static void wb_tests(kc_shapes *out)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 6; c++)
            kc_add_shape(out, ROWS[r], COLS[c], 0), kc_add_shape(out, ROWS[r], COLS[c], 5),
                kc_add_shape(out, ROWS[r], COLS[c], 5, 1);
    kc_add_shape(out, 300, 37, 19);
    kc_add_shape(out, 5, 50, 3);    /* 32 columns, 16, then 2 */
}

static void wb_bench(kc_shapes *out)
{
    kc_add_shape(out, 256, 256, 0);
}

static void wb_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), n = kc_size(st, 1);
    bwd_inputs(st, rows, n + kc_size(st, 2));
    vals(st, DW, n, 0.1f, 0x1p-120f), vals(st, DB, n, 0.1f, 0x1p-120f);
    st->bytes = 4.0 * (2.0 * (double)rows * n + 4.0 * n + 2.0 * rows);
}

static void wb_run(kc_state *st, const ngpt_kernels *t)
{
    t->layernorm_bwd_wb(st->buf[DW], st->buf[DB], st->buf[BDY], st->buf[BX],
                        (ptrdiff_t)(kc_size(st, 1) + kc_size(st, 2)), st->buf[BMEAN],
                        st->buf[BRSTD], kc_size(st, 0), kc_int(st, 1));
}

const kc_case kc_layernorm_bwd_wb = {"rows n pad tiny", wb_tests, wb_bench, wb_setup, wb_run, NULL};

/* ---- RMSNorm: the same inputs; x, w, the rstd of the reference forward */

static void rms_fwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->rmsnorm_fwd(st->buf[Y], kc_int(st, 2) ? st->buf[RSTD] : NULL, st->buf[X], st->buf[W],
                   kc_size(st, 0), kc_int(st, 1), eps_of(st));
}

const kc_case kc_rmsnorm_fwd = {"rows c stats tiny", fwd_tests, bench_shapes, fwd_setup, rms_fwd_run,
                                NULL};

/* x, dy (rows, ld) and the rstd of the reference RMSNorm over ld columns. */
static void rms_bwd_inputs(kc_state *st, size_t rows, size_t ld)
{
    const float *x = rows_x(st, BX, rows, ld), *w = vals(st, BW, ld, 1.0f, 0x1p-63f);
    vals(st, BDY, rows * ld, 1.0f, 0x1p-63f);
    float *rstd = kc_zeros(st, BRSTD, rows), *y = calloc(rows * ld, sizeof(float));
    if (!y) abort();
    ngpt_f32_rmsnorm_fwd_ref(y, rstd, x, w, rows, (int)ld, 1e-5f);
    free(y);
}

static void rms_bwd_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), c = kc_size(st, 1);
    rms_bwd_inputs(st, rows, c);
    vals(st, DX, rows * c, 0.1f, 0x1p-120f);
    st->bytes = 4.0 * (4.0 * (double)rows * c + c + rows);
}

static void rms_bwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->rmsnorm_bwd(st->buf[DX], st->buf[BDY], st->buf[BX], st->buf[BRSTD], st->buf[BW],
                   kc_size(st, 0), kc_int(st, 1));
}

const kc_case kc_rmsnorm_bwd = {"rows c stats tiny", bwd_tests, bench_shapes, rms_bwd_setup,
                                rms_bwd_run, NULL};

static void rms_w_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), n = kc_size(st, 1);
    rms_bwd_inputs(st, rows, n + kc_size(st, 2));
    vals(st, DW, n, 0.1f, 0x1p-120f);
    st->bytes = 4.0 * (2.0 * (double)rows * n + 2.0 * n + rows);
}

static void rms_w_run(kc_state *st, const ngpt_kernels *t)
{
    t->rmsnorm_bwd_w(st->buf[DW], st->buf[BDY], st->buf[BX],
                     (ptrdiff_t)(kc_size(st, 1) + kc_size(st, 2)), st->buf[BRSTD], kc_size(st, 0),
                     kc_int(st, 1));
}

const kc_case kc_rmsnorm_bwd_w = {"rows n pad tiny", wb_tests, wb_bench, rms_w_setup, rms_w_run,
                                  NULL};
