/* layernorm.c — the cases of layernorm_fwd and layernorm_bwd. Shape: rows c
 * [stats] — the forward with stats = 0 passes NULL mean/rstd (inference).
 * The backward takes the mean/rstd the reference forward saves. */
#include <stdlib.h>

#include "kcase.h"

static const int ROWS[] = {1, 3, 6}, COLS[] = {2, 8, 10, 34, 66, 257};

static void fwd_tests(kc_shapes *out)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 6; c++) kc_add_shape(out, ROWS[r], COLS[c], 1), kc_add_shape(out, ROWS[r], COLS[c], 0);
}

static void bwd_tests(kc_shapes *out)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 6; c++) kc_add_shape(out, ROWS[r], COLS[c]);
}

/* T = 256 rows of C = 256. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256, 256, 1);
}

enum { X, W, B, Y, MEAN, RSTD };

static void fwd_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), c = kc_size(st, 1);
    kc_rand(st, X, rows * c, 3.0f), kc_rand(st, W, c, 1.0f), kc_rand(st, B, c, 0.2f);
    kc_zeros(st, Y, rows * c), kc_zeros(st, MEAN, rows), kc_zeros(st, RSTD, rows);
    st->bytes = 4.0 * (2.0 * (double)rows * c + 2.0 * c + 2.0 * rows);
}

static void fwd_run(kc_state *st, const ngpt_kernels *t)
{
    const bool stats = kc_int(st, 2);
    t->layernorm_fwd(st->buf[Y], stats ? st->buf[MEAN] : NULL, stats ? st->buf[RSTD] : NULL, st->buf[X],
                     st->buf[W], st->buf[B], kc_size(st, 0), kc_int(st, 1));
}

const kc_case kc_layernorm_fwd = {"rows c stats", fwd_tests, bench_shapes, fwd_setup, fwd_run, NULL};

enum { BX, BDY, BW, BMEAN, BRSTD, DX, DW, DB };

static void bwd_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), c = kc_size(st, 1);
    const float *x = kc_rand(st, BX, rows * c, 3.0f), *w = kc_rand(st, BW, c, 1.0f);
    kc_rand(st, BDY, rows * c, 1.0f);
    float *mean = kc_zeros(st, BMEAN, rows), *rstd = kc_zeros(st, BRSTD, rows);
    float *y = calloc(rows * c, sizeof(float)), *b = calloc(c, sizeof(float));
    if (!y || !b) abort();
    ngpt_f32_layernorm_fwd_ref(y, mean, rstd, x, w, b, rows, (int)c);
    free(y), free(b);
    kc_rand(st, DX, rows * c, 0.1f), kc_rand(st, DW, c, 0.1f), kc_rand(st, DB, c, 0.1f);
    st->bytes = 4.0 * (4.0 * (double)rows * c + 5.0 * c + 2.0 * rows);
}

static void bwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->layernorm_bwd(st->buf[DX], st->buf[DW], st->buf[DB], st->buf[BDY], st->buf[BX], st->buf[BMEAN],
                     st->buf[BRSTD], st->buf[BW], kc_size(st, 0), kc_int(st, 1));
}

const kc_case kc_layernorm_bwd = {"rows c", bwd_tests, bench_shapes, bwd_setup, bwd_run, NULL};
