/* test_llama2c.c — ngpt_import_llama2c on a small llama2.c model.bin and
 * tokenizer.bin this test writes itself (random weights from a fixed
 * seed; grouped-query, shared and unshared classifier):
 *  - the imported tensors hold the file's values bit for bit (qkv = wq |
 *    wk | wv, fc1 = w1 | w3 stacked); version 1 of the same model (export.py's
 *    256-byte header, the norms first, no freq_cis) imports to the same file;
 *  - version 2 (export.py's int8: matrices as int8 and a float32 scale per
 *    group) imports to the file of version 0 holding runq.c's dequantized
 *    values, shared and unshared, float32 and q8, group sizes 16 and 8;
 *  - the logits have one golden checksum on every build and thread count;
 *  - run.c's encode and decode on the test's vocabulary with exact ids
 *    (and on 300 random texts, the ids of run.c's loop as written, which
 *    the library's heap must reproduce; 1 MiB of text in well under a second):
 *    the dummy " ", merges by score with the leftmost of equal scores, byte
 *    fallback for a code point not in the vocabulary, the empty text, the
 *    leading ' ' dropped after BOS (but not a <0x20>'s);
 *  - the tokenizer round-trips through the checkpoint and a tokenizer file;
 *  - refusals, by name, with nothing written: a size other than the
 *    header's, bad headers (zero field, dim % heads, heads % kv_heads, a
 *    version-3 export, version 1's and 2's flag and padding, version 2's
 *    group size 0, negative or not dividing dim, a byte short or long, a
 *    header whose file size overflows a uint64),
 *    tokenizers with a duplicate piece, a bad length, trailing
 *    bytes, a byte token out of place; ngpt_import_llama2c_config sizes the
 *    stories15M/42M/110M headers alone.
 * With --write DIR it only writes the two files there (test_cli_import.sh). */
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

enum { DIM = 16, HIDDEN = 40, LAYERS = 2, HEADS = 4, KV = 2, SEQ = 8, V = 274 };

/* The logits of the shared-classifier import on tokens (i * 37 + 5) % V,
 * 1 x SEQ: the same on every build and thread count. */
#define GOLDEN_LOGITS 0x6b0480c4b13d862aull
#define GOLDEN_LOGITS_UNSHARED 0x2860de4d6c64f14aull

static char root[512] = "/tmp/ngpt_llama2c_XXXXXX";

static char *path(const char *name)
{
    static char buf[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
    return buf[k];
}

static bool exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* ------------------------------------------------------------ model.bin */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static float uniform(void)     /* in [-0.5, 0.5), exactly representable */
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(int32_t)(rng >> 40 & 0xFFFF) / 65536.0f - 0.5f;
}

/* The file's floats after the header, and how many. */
static float *weights;
static size_t n_weights;

enum { KVD = DIM / HEADS * KV, HS = DIM / HEADS };
static const size_t O_RMS_ATT = (size_t)V * DIM, O_WQ = O_RMS_ATT + LAYERS * DIM,
                    O_WK = O_WQ + LAYERS * DIM * DIM, O_WV = O_WK + LAYERS * KVD * DIM,
                    O_WO = O_WV + LAYERS * KVD * DIM, O_RMS_FFN = O_WO + LAYERS * DIM * DIM,
                    O_W1 = O_RMS_FFN + LAYERS * DIM, O_W2 = O_W1 + LAYERS * HIDDEN * DIM,
                    O_W3 = O_W2 + LAYERS * DIM * HIDDEN, O_FINAL = O_W3 + LAYERS * HIDDEN * DIM,
                    O_WCLS = O_FINAL + DIM + SEQ * HS;

static void make_weights(void)
{
    n_weights = O_WCLS + (size_t)V * DIM;
    weights = malloc(n_weights * sizeof *weights);
    for (size_t i = 0; i < n_weights; i++) weights[i] = uniform() * 0.5f;
    for (size_t i = 0; i < LAYERS * DIM; i++) {      /* norms near 1 */
        weights[O_RMS_ATT + i] += 1.0f;
        weights[O_RMS_FFN + i] += 1.0f;
    }
    for (size_t i = 0; i < DIM; i++) weights[O_FINAL + i] += 1.0f;
}

static void write_model(const char *name, const int32_t hdr[7], size_t floats)
{
    FILE *f = fopen(path(name), "wb");
    fwrite(hdr, 4, 7, f);
    fwrite(weights, 4, floats, f);
    fclose(f);
}

static const int32_t HDR[7] = {DIM, HIDDEN, LAYERS, HEADS, KV, V, SEQ};

/* The same model as export.py's version 1 writes it: a 256-byte header
 * ("ak42", 1, the 7 fields with vocab_size positive, the shared flag,
 * zeros; flag and pad_byte as given), then the norms, the embedding, the
 * matrices, [wcls]. */
static void write_model_v1(const char *name, bool shared, unsigned flag, unsigned char pad_byte,
                           size_t drop)
{
    unsigned char hdr[256] = {0};
    const int32_t head[9] = {0x616b3432, 1, DIM, HIDDEN, LAYERS, HEADS, KV, V, SEQ};
    memcpy(hdr, head, sizeof head);
    hdr[36] = (unsigned char)flag;
    hdr[200] = pad_byte;
    const struct { size_t at, n; } run[] = {
        {O_RMS_ATT, LAYERS * DIM}, {O_RMS_FFN, LAYERS * DIM}, {O_FINAL, DIM}, {0, (size_t)V * DIM},
        {O_WQ, LAYERS * DIM * DIM}, {O_WK, LAYERS * KVD * DIM}, {O_WV, LAYERS * KVD * DIM},
        {O_WO, LAYERS * DIM * DIM}, {O_W1, LAYERS * HIDDEN * DIM}, {O_W2, LAYERS * DIM * HIDDEN},
        {O_W3, LAYERS * HIDDEN * DIM}, {O_WCLS, shared ? 0 : (size_t)V * DIM}};
    FILE *f = fopen(path(name), "wb");
    fwrite(hdr, 1, sizeof hdr, f);
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++) {
        size_t n = run[i].n;
        if (i == sizeof run / sizeof run[0] - 1 || !run[i + 1].n) n -= drop < n ? drop : n;
        fwrite(weights + run[i].at, 4, n, f);
    }
    fclose(f);
}

/* export.py's quantize_q80 on the n values of one tensor (n % gs == 0):
 * per group of gs, scale = max|w| / 127 (float32), q = w / scale rounded
 * half to even (torch.round); a group of zeros gets scale 0 and q 0
 * (export.py's 0 / 0 is NaN there, which torch's int8 cast makes 0 on
 * x86). w is replaced by runq.c's dequantized values, (float)q * scale. */
static void quantize_q80(float *w, size_t n, size_t gs, int8_t *q, float *scale)
{
    for (size_t g = 0; g < n / gs; g++) {
        float wmax = 0.0f;
        for (size_t i = g * gs; i < (g + 1) * gs; i++) wmax = fmaxf(wmax, fabsf(w[i]));
        scale[g] = wmax / 127.0f;
        for (size_t i = g * gs; i < (g + 1) * gs; i++) {
            q[i] = (int8_t)(scale[g] > 0.0f ? nearbyintf(w[i] / scale[g]) : 0.0f);
            w[i] = (float)q[i] * scale[g];
        }
    }
}

/* The floats after version 0's header once version 2 has stored the model:
 * the weights with the matrices dequantized (written by write_model_v2). */
static float *dequantized;

/* The model as export.py's version 2 (int8, runq.c's) writes it: the
 * 256-byte header with the group size at byte 37, the float32 norms, then
 * each matrix of each layer as int8 values and their float32 scales:
 * tok_emb, wq, wk, wv, wo, w1, w2, w3, [wcls]. Its first group of wq is
 * zero. bytes_off: the file cut (< 0) or extended by that many bytes. */
static void write_model_v2(const char *name, bool shared, unsigned flag, unsigned char pad_byte,
                           int32_t gs, int bytes_off)
{
    unsigned char hdr[256] = {0};
    const int32_t head[9] = {0x616b3432, 2, DIM, HIDDEN, LAYERS, HEADS, KV, V, SEQ};
    memcpy(hdr, head, sizeof head);
    hdr[36] = (unsigned char)flag;
    memcpy(hdr + 37, &gs, 4);
    hdr[200] = pad_byte;
    free(dequantized);
    dequantized = malloc(n_weights * sizeof *dequantized);
    memcpy(dequantized, weights, n_weights * sizeof *dequantized);
    memset(dequantized + O_WQ, 0, (size_t)(gs > 0 ? gs : 1) * sizeof *dequantized);
    FILE *f = fopen(path(name), "wb");
    fwrite(hdr, 1, sizeof hdr, f);
    fwrite(dequantized + O_RMS_ATT, 4, LAYERS * DIM, f);
    fwrite(dequantized + O_RMS_FFN, 4, LAYERS * DIM, f);
    fwrite(dequantized + O_FINAL, 4, DIM, f);
    const struct { size_t at, n, layers; } mat[] = {
        {0, (size_t)V * DIM, 1}, {O_WQ, DIM * DIM, LAYERS}, {O_WK, KVD * DIM, LAYERS},
        {O_WV, KVD * DIM, LAYERS}, {O_WO, DIM * DIM, LAYERS}, {O_W1, HIDDEN * DIM, LAYERS},
        {O_W2, DIM * HIDDEN, LAYERS}, {O_W3, HIDDEN * DIM, LAYERS},
        {O_WCLS, (size_t)V * DIM, shared ? 0 : 1}};
    const size_t g = gs > 0 && DIM % gs == 0 ? (size_t)gs : DIM;  /* a refused size: any bytes */
    int8_t *q = malloc((size_t)V * DIM);
    float *scale = malloc((size_t)V * DIM / g * sizeof *scale);
    for (size_t m = 0; m < sizeof mat / sizeof mat[0]; m++)
        for (size_t l = 0; l < mat[m].layers; l++) {
            float *w = dequantized + mat[m].at + l * mat[m].n;
            quantize_q80(w, mat[m].n, g, q, scale);
            fwrite(q, 1, mat[m].n, f);
            fwrite(scale, 4, mat[m].n / g, f);
        }
    if (bytes_off > 0) fputc(0, f);
    const long size = ftell(f);
    fclose(f);
    free(q);
    free(scale);
    if (bytes_off < 0 && truncate(path(name), size + bytes_off) != 0) perror(path(name));
}

/* Version 0 of the model write_model_v2 stored last: the same values as floats. */
static void write_dequantized_v0(const char *name, bool shared)
{
    int32_t h[7];
    memcpy(h, HDR, sizeof h);
    if (!shared) h[5] = -V;
    FILE *f = fopen(path(name), "wb");
    fwrite(h, 4, 7, f);
    fwrite(dequantized, 4, shared ? O_WCLS : n_weights, f);
    fclose(f);
}

/* ------------------------------------------------------------ tokenizer.bin */

/* ids 259.. of the test's vocabulary: (piece, score) */
static const struct { const char *piece; float score; } PIECES[] = {
    {" ", -1000}, {"a", -1000}, {"b", -1000}, {"c", -1000}, {"\xc3\xa9", -1000}, {"x", -1000},
    {" a", -1}, {"ab", -2}, {"bc", -2}, {" ab", -3}, {"cc", -5}, {" x", -0.5f},
    {"\xc3\xa9x", -4}, {"<fill>", -1e6f}, {"<0x4G>", -1e6f},
};
enum { SP = 259, A, B, C, E_ACUTE, X, SP_A, AB, BC, SP_AB, CC, SP_X, E_X };

typedef struct tok_file { char piece[V][16]; float score[V]; int32_t len[V]; } tok_file;

static void vocab(tok_file *t)
{
    static const char *const first[3] = {"<unk>", "\n<s>\n", "\n</s>\n"};
    memset(t, 0, sizeof *t);        /* a too-long piece below writes bytes past its NUL */
    for (int i = 0; i < V; i++) {
        if (i < 3) snprintf(t->piece[i], 16, "%s", first[i]);
        else if (i < 259) snprintf(t->piece[i], 16, "<0x%02X>", i - 3);
        else snprintf(t->piece[i], 16, "%s", PIECES[i - 259].piece);
        t->score[i] = i < 259 ? 0.0f : PIECES[i - 259].score;
        t->len[i] = (int32_t)strlen(t->piece[i]);
    }
}

/* extra: bytes appended after the last token */
static void write_tokenizer(const char *name, const tok_file *t, int n, const char *extra)
{
    FILE *f = fopen(path(name), "wb");
    const uint32_t max_len = 16;
    fwrite(&max_len, 4, 1, f);
    for (int i = 0; i < n; i++) {
        fwrite(&t->score[i], 4, 1, f);
        fwrite(&t->len[i], 4, 1, f);
        fwrite(t->piece[i], 1, (size_t)(t->len[i] > 0 ? t->len[i] : 0), f);
    }
    if (extra) fputs(extra, f);
    fclose(f);
}

/* ------------------------------------------------------------ checks */

/* An inference context owning a copy of the model file's weights (read
 * through ngpt_context_params), keeping every position's logits; *m is
 * the model, open until test_context_close. */
static ngpt_context *load(const char *model, int threads, ngpt_model **m)
{
    ngpt_config cfg;
    ngpt_context *ctx = NULL;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads;
    s.logits_rows = NGPT_LOGITS_ALL;
    if (ngpt_model_open(m, model) || ngpt_model_config(*m, &cfg) ||
        ngpt_context_init(&ctx, *m, &cfg, &s, NULL, 0)) {
        fprintf(stderr, "load %s: %s\n", model, ngpt_last_error());
        ngpt_model_close(*m);
        *m = NULL;
        return NULL;
    }
    return ctx;
}

static uint64_t logits_hash(const char *model, int threads)
{
    ngpt_model *m = NULL;
    ngpt_context *ctx = load(model, threads, &m);
    uint64_t h = 0;
    int32_t tokens[SEQ];
    for (int i = 0; i < SEQ; i++) tokens[i] = (i * 37 + 5) % V;
    if (ctx && !ngpt_context_forward(ctx, tokens, 1, SEQ, NULL, NULL)) ngpt_context_logits_checksum(ctx, &h);
    test_context_close(ctx, m);
    return h;
}

/* Tensor `name` equals the runs of the file's floats it stacks. */
static bool holds(ngpt_context *ctx, const char *name, size_t a, size_t na, size_t b, size_t nb,
                  size_t c, size_t nc)
{
    ngpt_tensor_info info;
    float *p;
    size_t count;
    if (ngpt_context_tensor_find(ctx, name, &info) || ngpt_context_params(ctx, &p, &count) ||
        info.count != na + nb + nc)
        return false;
    p += info.offset;
    return !memcmp(p, weights + a, na * 4) && !memcmp(p + na, weights + b, nb * 4) &&
           !memcmp(p + na + nb, weights + c, nc * 4);
}

static void test_tensors(const char *model)
{
    ngpt_model *m = NULL;
    ngpt_context *ctx = load(model, 1, &m);
    CHECK(ctx != NULL, "load the import");
    if (!ctx) return;
    const size_t l = 1;
    CHECK(holds(ctx, "tok_emb.weight", 0, (size_t)V * DIM, 0, 0, 0, 0), "tok_emb");
    CHECK(holds(ctx, "blocks.1.ln1.weight", O_RMS_ATT + l * DIM, DIM, 0, 0, 0, 0), "ln1");
    CHECK(holds(ctx, "blocks.1.attn.qkv.weight", O_WQ + l * DIM * DIM, DIM * DIM,
                O_WK + l * KVD * DIM, KVD * DIM, O_WV + l * KVD * DIM, KVD * DIM), "qkv = wq|wk|wv");
    CHECK(holds(ctx, "blocks.1.attn.proj.weight", O_WO + l * DIM * DIM, DIM * DIM, 0, 0, 0, 0), "wo");
    CHECK(holds(ctx, "blocks.1.ln2.weight", O_RMS_FFN + l * DIM, DIM, 0, 0, 0, 0), "ln2");
    CHECK(holds(ctx, "blocks.1.mlp.fc1.weight", O_W1 + l * HIDDEN * DIM, HIDDEN * DIM,
                O_W3 + l * HIDDEN * DIM, HIDDEN * DIM, 0, 0), "fc1 = w1|w3");
    CHECK(holds(ctx, "blocks.1.mlp.fc2.weight", O_W2 + l * DIM * HIDDEN, DIM * HIDDEN, 0, 0, 0, 0), "w2");
    CHECK(holds(ctx, "ln_f.weight", O_FINAL, DIM, 0, 0, 0, 0), "rms_final");
    test_context_close(ctx, m);
}

static bool encodes(const ngpt_tokenizer *tok, const char *text, const int32_t *want, size_t n)
{
    int32_t ids[64];
    size_t got = 0;
    if (ngpt_tokenizer_encode(tok, text, strlen(text), ids, 64, &got)) return false;
    bool same = got == n && (n == 0 || !memcmp(ids, want, n * sizeof *ids));
    if (!same) {
        fprintf(stderr, "encode \"%s\":", text);
        for (size_t i = 0; i < got; i++) fprintf(stderr, " %d", (int)ids[i]);
        fputc('\n', stderr);
    }
    return same;
}

static bool decodes(const ngpt_tokenizer *tok, const int32_t *ids, size_t n, const char *want)
{
    char out[64];
    size_t len = 0;
    return !ngpt_tokenizer_decode(tok, ids, n, out, sizeof out, &len) && len == strlen(want) &&
           !memcmp(out, want, len);
}

#define ENC(text, ...)                                                              \
    do {                                                                            \
        static const int32_t want_[] = {__VA_ARGS__};                               \
        CHECK(encodes(tok, text, want_, sizeof want_ / sizeof want_[0]), "%s", text); \
    } while (0)
#define DEC(want, ...)                                                              \
    do {                                                                            \
        static const int32_t ids_[] = {__VA_ARGS__};                                \
        CHECK(decodes(tok, ids_, sizeof ids_ / sizeof ids_[0], want), "decode %s", want); \
    } while (0)

/* run.c's merge loop as it is written (rescan the whole text, merge the
 * best pair, repeat) on the test's vocabulary: what the library's heap
 * must reproduce. ids in, merged in place; returns the new count. */
static size_t naive_merges(const tok_file *v, int32_t *ids, size_t n)
{
    for (;;) {
        float best = -1e10f;
        int32_t best_id = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            char pair[40];
            snprintf(pair, sizeof pair, "%s%s", v->piece[ids[i]], v->piece[ids[i + 1]]);
            for (int32_t k = 0; k < V; k++)
                if (!strcmp(v->piece[k], pair) && v->score[k] > best)
                    best = v->score[k], best_id = k, at = i;
        }
        if (best_id < 0) return n;
        ids[at] = best_id;
        memmove(ids + at + 1, ids + at + 2, (n - at - 2) * sizeof *ids);
        n--;
    }
}

/* Random texts of the vocabulary's characters, spaces, a character it
 * lacks and a stray byte: the library's ids are the naive loop's. */
static void test_merge_order(const ngpt_tokenizer *tok, const tok_file *v)
{
    static const char *const parts[] = {"a", "b", "c", "x", " ", "\xc3\xa9", "\xe6\x97\xa5", "\xff"};
    int bad = 0;
    for (int round = 0; round < 300; round++) {
        char text[200] = "";
        const int n_parts = 1 + round % 40;
        for (int i = 0; i < n_parts; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            strcat(text, parts[(rng >> 33) % 8]);
        }
        int32_t want[256], got[256];
        size_t n = 0, k = 0;
        want[n++] = SP;                         /* the initial symbols, as run.c makes them */
        for (const unsigned char *p = (const unsigned char *)text; *p;) {
            size_t len = 1;
            while (p[len] && (p[len] & 0xC0) == 0x80 && len < 4) len++;
            int32_t id = -1;
            for (int32_t t = 0; t < V && id < 0; t++)
                if (strlen(v->piece[t]) == len && !memcmp(v->piece[t], p, len)) id = t;
            if (id >= 0) want[n++] = id;
            else for (size_t i = 0; i < len; i++) want[n++] = 3 + p[i];
            p += len;
        }
        n = naive_merges(v, want, n);
        if (ngpt_tokenizer_encode(tok, text, strlen(text), got, 256, &k) || k != n ||
            memcmp(got, want, n * sizeof *got))
            bad++;
    }
    CHECK(bad == 0, "%d of 300 random texts encode otherwise than run.c's loop", bad);
    /* a long text (the heap's O(n log n), where the loop would take minutes) */
    const size_t big = 1 << 20;
    char *text = malloc(big);
    for (size_t i = 0; i < big; i++) text[i] = "abc x"[i % 5];
    size_t n = 0;
    CHECK_OK(ngpt_tokenizer_encode(tok, text, big, NULL, 0, &n));
    /* " a" bc, then " x" ab c for each "abc x" after the first (the loop gives
     * the same count, 3 * (len / 5) + 1, on 101 bytes: the random texts above
     * check the order) */
    CHECK(n == 3 * (big / 5) + 1, "1 MiB of \"abc x\": %zu ids", n);
    free(text);
}

static void test_tokenizer(const char *model, const tok_file *v)
{
    ngpt_model *m = NULL;
    const ngpt_tokenizer *tok = NULL;
    CHECK_OK(ngpt_model_open(&m, model));
    if (m) CHECK_OK(ngpt_model_tokenizer(m, &tok));
    CHECK(tok != NULL, "the import carries its tokenizer");
    if (!tok) return (void)ngpt_model_close(m);
    ngpt_tokenizer_info info;
    CHECK_OK(ngpt_tokenizer_describe(tok, &info));
    CHECK(info.n_tokens == V && info.bos_id == 1 && info.end_id == 2, "bos %d end %d",
          (int)info.bos_id, (int)info.end_id);
    size_t n = 1;
    CHECK_OK(ngpt_tokenizer_encode(tok, "", 0, NULL, 0, &n));
    CHECK(n == 0, "the empty text: no ids, not even the dummy \" \"");
    ENC("a", SP_A);                          /* " " + "a" merge */
    ENC("bc", SP, BC);
    ENC("abc", SP_A, BC);                    /* " a" (-1) first, then "bc" */
    ENC("babc", SP, B, AB, C);               /* "ab" and "bc" tie: the leftmost */
    ENC("\xc3\xa9", SP, E_ACUTE);            /* a 2-byte code point in the vocabulary */
    ENC("\xc3\xa9x", SP, E_X);               /* ... and merged */
    ENC("\xe6\x97\xa5", SP, 0xe6 + 3, 0x97 + 3, 0xa5 + 3);    /* absent: byte fallback */
    ENC("\xff", SP, 0xff + 3);               /* not UTF-8: its byte */
    ENC(" a", SP, SP_A);
    ENC("a ", SP_A, SP);
    ENC("xx", SP_X, X);
    ENC("ccc", SP, CC, C);
    DEC("\n<s>\nabc", 1, SP_A, BC);         /* BOS (its piece) drops the dummy prefix's space */
    DEC(" abc", SP_A, BC);
    DEC("\n<s>\n\xe6\x97\xa5", 1, 0xe6 + 3, 0x97 + 3, 0xa5 + 3);
    DEC("\n<s>\n a", 1, 0x20 + 3, A);       /* a <0x20> after BOS keeps its space */
    DEC("\n</s>\n", 2);
    DEC("<fill>", SP_X + 2);                 /* a piece that only looks like a byte */
    DEC("<0x4G>", SP_X + 3);
    /* the kind round-trips through a tokenizer file */
    CHECK_OK(ngpt_tokenizer_save(tok, path("tok.tok")));
    ngpt_tokenizer *back = NULL;
    CHECK_OK(ngpt_tokenizer_load(&back, path("tok.tok")));
    ngpt_tokenizer_info bi = {0};
    if (back) CHECK_OK(ngpt_tokenizer_describe(back, &bi));
    CHECK(bi.checksum == info.checksum && bi.bos_id == 1, "the reloaded tokenizer is the same");
    if (back) {
        const ngpt_tokenizer *keep = tok;
        tok = back;
        ENC("babc", SP, B, AB, C);
        tok = keep;
    }
    ngpt_tokenizer_free(back);
    test_merge_order(tok, v);
    CHECK_OK(ngpt_model_close(m));
}

/* ------------------------------------------------------------ refusals */

static void refused(const char *model, const char *tokenizer, ngpt_status want, const char *what)
{
    const char *out = path("refused.ngpt");
    const ngpt_status st = ngpt_import_llama2c(path(model), path(tokenizer), NULL, out);
    const char *msg = ngpt_last_error();
    CHECK(st == want && !strncmp(msg, "ngpt_import_llama2c: ", 21) && !strchr(msg, '\n') &&
              !exists(out),
          "%s: %s (%s)", what, ngpt_status_string(st), msg);
}

static void test_refusals(const tok_file *good)
{
    const size_t all = O_WCLS;
    write_model("short.bin", HDR, all - 1);
    refused("short.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "one float short");
    write_model("long.bin", HDR, all + 1);
    refused("long.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "one float long");
    write_model("header.bin", HDR, 0);
    refused("header.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "the header alone");
    ngpt_config cfg;
    CHECK_OK(ngpt_import_llama2c_config(path("header.bin"), &cfg));
    CHECK(cfg.d_model == DIM && cfg.n_kv_heads == KV && cfg.vocab_size == V && cfg.tie_lm_head &&
              cfg.mlp == NGPT_MLP_SWIGLU && cfg.norm_type == NGPT_NORM_RMS,
          "the header's config");
    static const struct { int field; int32_t value; ngpt_status st; const char *what; } bad[] = {
        {0, 0, NGPT_ERR_BAD_FORMAT, "dim 0"},        {1, -4, NGPT_ERR_BAD_FORMAT, "hidden < 0"},
        {3, 5, NGPT_ERR_BAD_FORMAT, "dim % heads"},  {4, 3, NGPT_ERR_BAD_FORMAT, "heads % kv"},
        {5, 0, NGPT_ERR_BAD_FORMAT, "vocab 0"},      {6, 0, NGPT_ERR_BAD_FORMAT, "seq 0"},
        {0, 0x616b3432, NGPT_ERR_UNSUPPORTED, "a version-3 export"},
        {3, 16, NGPT_ERR_BAD_FORMAT, "head size 1"},
    };
    /* 4 x 7 x 2^58 float weights: 4 bytes each overflow a uint64 file size */
    static const int32_t huge[7] = {1 << 29, 1 << 29, 4, 1, 1, 1, 1};
    write_model("huge.bin", huge, 0);
    CHECK_STATUS(ngpt_import_llama2c_config(path("huge.bin"), &cfg), NGPT_ERR_OVERFLOW);
    refused("huge.bin", "tok.bin", NGPT_ERR_OVERFLOW, "a model whose file size overflows");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int32_t h[7];
        memcpy(h, HDR, sizeof h);
        h[bad[i].field] = bad[i].value;
        if (bad[i].value == 0x616b3432) h[1] = 3;
        write_model("bad.bin", h, all);
        refused("bad.bin", "tok.bin", bad[i].st, bad[i].what);
        CHECK_STATUS(ngpt_import_llama2c_config(path("bad.bin"), &cfg), bad[i].st);
    }
    write_model_v1("v1bad.bin", true, 2, 0, 0);
    refused("v1bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 1: a shared flag of 2");
    write_model_v1("v1bad.bin", true, 1, 7, 0);
    refused("v1bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 1: padding not zero");
    write_model_v1("v1bad.bin", true, 1, 0, 1);
    refused("v1bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 1: a float short");
    write_model_v1("v1bad.bin", false, 0, 0, 0);
    if (truncate(path("v1bad.bin"), 100) == 0)
        refused("v1bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 1: a cut header");
    static const struct { int32_t gs; const char *what; } bad_gs[] = {
        {0, "version 2: group size 0"}, {-16, "version 2: group size -16"},
        {12, "version 2: a group size not dividing dim"}};
    for (size_t i = 0; i < sizeof bad_gs / sizeof bad_gs[0]; i++) {
        write_model_v2("v2bad.bin", true, 1, 0, bad_gs[i].gs, 0);
        refused("v2bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, bad_gs[i].what);
        CHECK_STATUS(ngpt_import_llama2c_config(path("v2bad.bin"), &cfg), NGPT_ERR_BAD_FORMAT);
    }
    write_model_v2("v2bad.bin", true, 1, 7, 16, 0);
    refused("v2bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 2: padding not zero");
    write_model_v2("v2bad.bin", true, 2, 0, 16, 0);
    refused("v2bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 2: a shared flag of 2");
    write_model_v2("v2bad.bin", false, 0, 0, 16, -1);
    refused("v2bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 2: a byte short");
    write_model_v2("v2bad.bin", true, 1, 0, 16, 1);
    refused("v2bad.bin", "tok.bin", NGPT_ERR_BAD_FORMAT, "version 2: a byte long");
    refused("missing.bin", "tok.bin", NGPT_ERR_IO, "no model.bin");
    refused("model.bin", "missing.bin", NGPT_ERR_IO, "no tokenizer.bin");

    tok_file t = *good;
    write_tokenizer("t.bin", &t, V - 1, NULL);
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "a token short");
    write_tokenizer("t.bin", &t, V, "x");
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "trailing bytes");
    snprintf(t.piece[AB], 16, "bc");
    write_tokenizer("t.bin", &t, V, NULL);
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "a duplicate piece");
    t = *good;
    snprintf(t.piece[SP_X + 2], 16, "\n<s>\n");       /* BOS's piece again: a one-line message */
    t.len[SP_X + 2] = 5;
    write_tokenizer("t.bin", &t, V, NULL);
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "a duplicate of BOS's piece");
    t = *good;
    t.len[A] = 0;
    write_tokenizer("t.bin", &t, V, NULL);
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "an empty piece");
    t = *good;
    t.len[A] = 17;
    write_tokenizer("t.bin", &t, V, NULL);
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "a piece longer than max_token_length");
    t = *good;
    snprintf(t.piece[3 + 65], 16, "<0x42>");
    snprintf(t.piece[3 + 66], 16, "<0x41>");
    write_tokenizer("t.bin", &t, V, NULL);
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "byte tokens out of place");
    t = *good;
    t.score[B] = (float)NAN;
    write_tokenizer("t.bin", &t, V, NULL);
    refused("model.bin", "t.bin", NGPT_ERR_BAD_FORMAT, "a NaN score");
    ngpt_import_options o = ngpt_import_options_default();
    o.store = (ngpt_weights)9;
    CHECK_STATUS(ngpt_import_llama2c(path("model.bin"), path("tok.bin"), &o, path("x.ngpt")),
                 NGPT_ERR_BAD_ARG);
    o.store = NGPT_WEIGHTS_Q8, o.lm_head_q4 = true;
    CHECK_STATUS(ngpt_import_llama2c(path("model.bin"), path("tok.bin"), &o, path("x.ngpt")),
                 NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "lm_head_q4 needs store NGPT_WEIGHTS_Q4") != NULL, "%s",
          ngpt_last_error());
}

/* Imports of version-2 file v2 and of its dequantized values as version
 * 0 (written after it) give the same checkpoint, byte for byte. */
static void same_as_dequantized(const char *v2, const char *v0, ngpt_weights store, const char *what)
{
    ngpt_import_options o = ngpt_import_options_default();
    o.store = store;
    CHECK_OK(ngpt_import_llama2c(path(v2), path("tok.bin"), &o, path("v2.ngpt")));
    CHECK_OK(ngpt_import_llama2c(path(v0), path("tok.bin"), &o, path("v2ref.ngpt")));
    CHECK(test_same_file(path("v2.ngpt"), path("v2ref.ngpt")), "%s imports to its dequantized "
          "values' file", what);
}

/* Version 2 (int8 and scales) reads as runq.c dequantizes it: export.py's
 * group size for dim 16 (64 halved to 16), and 8 (not export.py's, but a
 * file runq.c reads); shared and unshared classifier, float32 and q8. */
static void test_version2(void)
{
    write_model_v2("v2.bin", true, 1, 0, 16, 0);
    write_dequantized_v0("v2ref.bin", true);
    same_as_dequantized("v2.bin", "v2ref.bin", NGPT_WEIGHTS_F32, "version 2, shared");
    same_as_dequantized("v2.bin", "v2ref.bin", NGPT_WEIGHTS_Q8, "version 2, shared, q8");
    ngpt_config cfg;
    CHECK_OK(ngpt_import_llama2c_config(path("v2.bin"), &cfg));
    CHECK(cfg.d_model == DIM && cfg.vocab_size == V && cfg.tie_lm_head, "version 2's config");
    write_model_v2("v2.bin", false, 0, 0, 16, 0);
    write_dequantized_v0("v2ref.bin", false);
    same_as_dequantized("v2.bin", "v2ref.bin", NGPT_WEIGHTS_F32, "version 2, unshared");
    same_as_dequantized("v2.bin", "v2ref.bin", NGPT_WEIGHTS_Q8, "version 2, unshared, q8");
    CHECK(dequantized[O_WQ] == 0.0f &&
              memcmp(dequantized + O_WCLS, weights + O_WCLS, (size_t)V * DIM * 4),
          "the zero group, and wcls quantized");
    write_model_v2("v2.bin", true, 1, 0, 8, 0);
    write_dequantized_v0("v2ref.bin", true);
    same_as_dequantized("v2.bin", "v2ref.bin", NGPT_WEIGHTS_F32, "version 2, group size 8");
}

/* The published TinyStories shapes, sized from their headers alone. */
static void test_published(void)
{
    static const struct { const char *name; int32_t hdr[7]; size_t params; } m[] = {
        {"stories15M", {288, 768, 6, 6, 6, 32000, 256}, 15191712},
        {"stories42M", {512, 1376, 8, 8, 8, 32000, 1024}, 41689600},
        {"stories110M", {768, 2048, 12, 12, 12, 32000, 1024}, 109529856},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        FILE *f = fopen(path("pub.bin"), "wb");
        fwrite(m[i].hdr, 4, 7, f);
        fclose(f);
        ngpt_config cfg;
        size_t params = 0;
        CHECK_OK(ngpt_import_llama2c_config(path("pub.bin"), &cfg));
        CHECK_OK(ngpt_config_param_count(&cfg, &params));
        CHECK(params == m[i].params, "%s: %zu parameters, want %zu", m[i].name, params, m[i].params);
    }
}

/* --write DIR: only the files (model.bin, tokenizer.bin), for test_cli_import.sh. */
int main(int argc, char **argv)
{
    const bool write_only = argc == 3 && !strcmp(argv[1], "--write");
    if (write_only) snprintf(root, sizeof root, "%s", argv[2]);
    if (write_only ? mkdir(root, 0755) != 0 : !mkdtemp(root)) {
        perror(root);
        return 1;
    }
    make_weights();
    tok_file good;
    vocab(&good);
    write_tokenizer("tok.bin", &good, V, NULL);
    write_model("model.bin", HDR, O_WCLS);
    if (write_only) {
        free(weights);
        return rename(path("tok.bin"), path("tokenizer.bin")) != 0;
    }
    int32_t unshared[7];
    memcpy(unshared, HDR, sizeof unshared);
    unshared[5] = -V;
    write_model("unshared.bin", unshared, n_weights);

    char model[600], model_u[600];
    snprintf(model, sizeof model, "%s", path("model.ngpt"));
    snprintf(model_u, sizeof model_u, "%s", path("unshared.ngpt"));
    CHECK_OK(ngpt_import_llama2c(path("model.bin"), path("tok.bin"), NULL, model));
    CHECK_OK(ngpt_import_llama2c(path("unshared.bin"), path("tok.bin"), NULL, model_u));
    test_tensors(model);
    /* version 1 holds the same model in another order: the same checkpoint, byte for byte */
    write_model_v1("v1.bin", true, 1, 0, 0);
    write_model_v1("v1u.bin", false, 0, 0, 0);
    CHECK_OK(ngpt_import_llama2c(path("v1.bin"), path("tok.bin"), NULL, path("v1.ngpt")));
    CHECK_OK(ngpt_import_llama2c(path("v1u.bin"), path("tok.bin"), NULL, path("v1u.ngpt")));
    CHECK(test_same_file(path("v1.ngpt"), model) && test_same_file(path("v1u.ngpt"), model_u),
          "version 1 imports to version 0's file");
    test_version2();
    const uint64_t h = logits_hash(model, 1), hu = logits_hash(model_u, 1);
    printf("logits: %016" PRIx64 " (shared), %016" PRIx64 " (unshared)\n", h, hu);
    if (GOLDEN_LOGITS) CHECK_HASH(h, GOLDEN_LOGITS);
    if (GOLDEN_LOGITS_UNSHARED) CHECK_HASH(hu, GOLDEN_LOGITS_UNSHARED);
    CHECK(logits_hash(model, 3) == h && logits_hash(model_u, 2) == hu, "the same logits on 2-3 threads");
    CHECK(h != hu, "the unshared classifier is used");
    test_tokenizer(model, &good);
    test_refusals(&good);
    test_published();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    free(weights);
    free(dequantized);
    return test_summary("test_llama2c");
}
