/* attention.c — the cases of attn_scores, attn_scores_t, attn_wsum and
 * outer_acc. Shape: rows n dim mode — `rows` causal query rows (row r sees
 * n + r keys) of dim floats, or rows that all see n keys (attn_scores
 * always, attn_wsum with shared = 1: its step 0); mode = 4*pad + 2*shared +
 * tiny: every strided row is `pad` floats longer than it needs, and with
 * tiny = 1 the values make subnormal products and sums and each kernel's
 * chains start with the band product (kcase.h). */
#include "kcase.h"

static int mode_of(int pad, bool shared, bool tiny) { return 4 * pad + 2 * shared + tiny; }

static void add_shapes(kc_shapes *out, bool shared)
{
    static const int rows[] = {1, 3, 4, 6, 9, 17}, keys[] = {1, 6, 17, 33, 40}, dims[] = {1, 8, 10, 17, 34, 66};
    for (int r = 0; r < 6; r++)
        for (int n = 0; n < 5; n++)
            for (int d = 0; d < 6; d++)
                for (int tiny = 0; tiny < 2; tiny++)
                    kc_add_shape(out, rows[r], keys[n], dims[d], mode_of(3, shared, tiny));
}

static void test_shapes(kc_shapes *out) { add_shapes(out, false); }

/* attn_wsum: causal rows, and rows that share their keys */
static void wsum_shapes(kc_shapes *out)
{
    add_shapes(out, false);
    add_shapes(out, true);
}

/* One query row against T = 256 keys of D = 64 in the qkv rows (3C = 768);
 * the 7 query heads of a key/value head (Qwen2.5-0.5B: 14 heads, 2 KV). */
static void bench_heads(kc_shapes *out)
{
    kc_add_shape(out, 1, 256, 64, mode_of(768 - 64, true, false));
    kc_add_shape(out, 7, 256, 64, mode_of(768 - 64, true, false));
}

/* A whole head of a 256-token sequence: rows 0..255 over their 1..256 keys. */
static void bench_rows(kc_shapes *out)
{
    kc_add_shape(out, 256, 1, 64, 0);
}

static void bench_wsum(kc_shapes *out)
{
    bench_rows(out);
    kc_add_shape(out, 7, 256, 64, mode_of(768 - 64, true, false));
}

/* Three arrays serve every kernel:
 *   KEYS  attn_scores: n key rows; scores_t: kt (dim rows of the keys);
 *         wsum: the value rows; outer_acc: the dK/dV rows
 *   VN    rows vectors of keys (scores, probabilities, weights)
 *   VDIM  rows vectors of dim (queries, outputs, x) */
enum { KEYS, VN, VDIM };

static int rows_of(const kc_state *st) { return kc_int(st, 0); }
static int keys_of(const kc_state *st) { return kc_int(st, 1) + kc_int(st, 0) - 1; }
static int dim_of(const kc_state *st) { return kc_int(st, 2); }
static int pad_of(const kc_state *st) { return kc_int(st, 3) / 4; }
static bool shared_of(const kc_state *st) { return kc_int(st, 3) & 2; }
static bool tiny_of(const kc_state *st) { return kc_int(st, 3) & 1; }
static ptrdiff_t vn_stride(const kc_state *st) { return keys_of(st) + pad_of(st); }
static ptrdiff_t vdim_stride(const kc_state *st) { return dim_of(st) + pad_of(st); }

/* kt: dim rows of the keys' columns; otherwise a row per key. */
static ptrdiff_t keys_stride(const kc_state *st, bool transposed)
{
    return transposed ? vn_stride(st) : vdim_stride(st);
}

static void fill(kc_state *st, bool transposed, double key_passes, bool causal)
{
    const int rows = rows_of(st), n = keys_of(st), dim = dim_of(st);
    const size_t kl = (size_t)(transposed ? dim : n) * (size_t)keys_stride(st, transposed);
    const size_t vn = (size_t)rows * (size_t)vn_stride(st), vd = (size_t)rows * (size_t)vdim_stride(st);
    if (tiny_of(st)) {
        kc_tiny(st, KEYS, kl, 0x1p-63f), kc_tiny(st, VN, vn, 0x1p-63f), kc_tiny(st, VDIM, vd, 0x1p-63f);
    } else {
        kc_rand(st, KEYS, kl, 1.0f), kc_rand(st, VN, vn, 1.0f), kc_rand(st, VDIM, vd, 1.0f);
    }
    double products = 0.0;      /* sum over rows of keys seen */
    for (int r = 0; r < rows; r++) products += kc_int(st, 1) + (causal ? r : 0);
    st->flops = 2.0 * products * dim;
    st->bytes = 4.0 * (key_passes * n * dim + (double)rows * dim + products);
}

/* scores: q_r[0] * k_j[0] starts each chain */
static void setup_scores(kc_state *st, bool transposed)
{
    fill(st, transposed, 1.0, transposed);   /* scores_t's rows are causal, scores' share */
    if (!tiny_of(st)) return;
    for (int r = 0; r < rows_of(st); r++) st->buf[VDIM][r * vdim_stride(st)] = KC_BAND_A;
    for (int j = 0; j < keys_of(st); j++)
        st->buf[KEYS][transposed ? j : j * keys_stride(st, false)] = KC_BAND_B;
}

static void scores_setup(kc_state *st) { setup_scores(st, false); }
static void scores_t_setup(kc_state *st) { setup_scores(st, true); }

/* wsum: p_r[0] * v_0[d] */
static void wsum_setup(kc_state *st)
{
    fill(st, false, 1.0, !shared_of(st));
    if (!tiny_of(st)) return;
    for (int r = 0; r < rows_of(st); r++) st->buf[VN][r * vn_stride(st)] = KC_BAND_A;
    for (int d = 0; d < dim_of(st); d++) st->buf[KEYS][d] = KC_BAND_B;
}

/* outer_acc: out_j[0] = 0 + w_0[j] * x_0[0] */
static void outer_setup(kc_state *st)
{
    fill(st, false, 2.0, true);
    if (!tiny_of(st)) return;
    for (int j = 0; j < keys_of(st); j++)
        st->buf[VN][j] = KC_BAND_A, st->buf[KEYS][j * keys_stride(st, false)] = 0.0f;
    st->buf[VDIM][0] = KC_BAND_B;
}

static void scores_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_scores(st->buf[VN], vn_stride(st), st->buf[VDIM], vdim_stride(st), rows_of(st),
                   st->buf[KEYS], keys_stride(st, false), kc_int(st, 1), dim_of(st), 0.125f);
}

static void scores_t_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_scores_t(st->buf[VN], vn_stride(st), st->buf[VDIM], vdim_stride(st), rows_of(st),
                     st->buf[KEYS], keys_stride(st, true), kc_int(st, 1), dim_of(st), 0.125f);
}

static void wsum_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_wsum(st->buf[VDIM], vdim_stride(st), st->buf[VN], vn_stride(st), rows_of(st),
                 st->buf[KEYS], keys_stride(st, false), kc_int(st, 1), shared_of(st) ? 0 : 1,
                 dim_of(st));
}

static void outer_run(kc_state *st, const ngpt_kernels *t)
{
    t->outer_acc(st->buf[KEYS], keys_stride(st, false), st->buf[VN], vn_stride(st), st->buf[VDIM],
                 vdim_stride(st), rows_of(st), kc_int(st, 1), dim_of(st));
}

const kc_case kc_attn_scores = {"rows n dim mode", test_shapes, bench_heads, scores_setup, scores_run, NULL};
const kc_case kc_attn_scores_t = {"rows n dim mode", test_shapes, bench_rows, scores_t_setup, scores_t_run, NULL};
const kc_case kc_attn_wsum = {"rows n dim mode", wsum_shapes, bench_wsum, wsum_setup, wsum_run, NULL};
const kc_case kc_outer_acc = {"rows n dim mode", test_shapes, bench_rows, outer_setup, outer_run, NULL};
