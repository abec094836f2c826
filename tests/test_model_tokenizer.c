/* test_model_tokenizer.c — a model with a BPE tokenizer through the stack:
 * the tokenizer in checkpoints (version 2 files; byte-level files stay
 * version 1), attached to contexts, and every mismatch or damage refused;
 * token data (windows of tokens, the bytes of a batch's targets); stop
 * sequences matched on the tokens' bytes (ending inside a token, spanning
 * tokens, streamed never), for sampling and beam search; and golden
 * checksums of a tiny BPE model's training and logits, equal on every
 * build. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "generate/stop.h"
#include "io/ckpt_file.h"
#include "test.h"
#include "tokenizer/tokenizer.h"

static char path[256], path2[256];

static const char TEXT[] =
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was "
    "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it "
    "was the season of Light, it was the season of Darkness, it was the spring of hope, it "
    "was the winter of despair, we had everything before us, we had nothing before us.\n"
    "user: what was it?\nassistant: the best of times.\nuser: and then?\nassistant: the "
    "worst of times.\n";

/* A tokenizer of `vocab` tokens trained on TEXT (GPT-2 pieces, end and
 * padding tokens): the same one on every machine. */
static ngpt_tokenizer *trained(int32_t vocab)
{
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = vocab;
    const void *texts[1] = {TEXT};
    const size_t sizes[1] = {sizeof TEXT - 1};
    ngpt_tokenizer *tok = NULL;
    CHECK_OK(ngpt_tokenizer_train(&tok, &tc, texts, sizes, 1));
    return tok;
}

static int32_t n_tokens(const ngpt_tokenizer *tok)
{
    ngpt_tokenizer_info info;
    return ngpt_tokenizer_describe(tok, &info) ? -1 : info.n_tokens;
}

/* The tiny config with V = the tokenizer's tokens. */
static ngpt_config bpe_config(const ngpt_tokenizer *tok)
{
    ngpt_config c = test_config_tiny();
    c.vocab_size = n_tokens(tok);
    return c;
}

static ngpt_context *make(ngpt_config cfg, ngpt_mode mode, int32_t batch, uint64_t seed)
{
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = batch;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, seed));
    return ctx;
}

static uint64_t params_hash(ngpt_context *ctx)
{
    uint64_t h = 0;
    ngpt_context_params_checksum(ctx, &h);
    return h;
}

static uint32_t file_version(const char *p)
{
    size_t n;
    unsigned char *b = test_read_file(p, &n);
    uint32_t v = 0;
    if (b && n >= 12) memcpy(&v, b + 8, 4);
    free(b);
    return v;
}

static void reseal(unsigned char *b, size_t n)
{
    uint64_t h = XXH3_64bits(b, n - 8);
    memcpy(b + n - 8, &h, 8);
}

/* ---------------------------------------------------------------- files */

/* The model file at path (or the n bytes at img) opened: *tok its
 * tokenizer (borrowed from *m), and the parameters' checksum of a context
 * made from it; 0 when it does not open. */
static uint64_t open_file(const char *file, const void *img, size_t n, ngpt_model **m,
                          const ngpt_tokenizer **tok)
{
    ngpt_context *ctx = NULL;
    uint64_t h = 0;
    *tok = NULL;
    CHECK_OK(file ? ngpt_model_open(m, file) : ngpt_model_open_mem(m, img, n));
    if (!*m) return 0;
    CHECK_OK(ngpt_model_tokenizer(*m, tok));
    CHECK_OK(ngpt_context_init(&ctx, *m, NULL, NULL, NULL, 0));
    const ngpt_tokenizer *attached = NULL;
    if (ctx) CHECK(ngpt_context_tokenizer(ctx, &attached) == NGPT_OK && attached == *tok,
                   "a model's context has the model's tokenizer attached");
    if (ctx) CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    ngpt_context_free(ctx);
    return h;
}

/* A damaged model file's status (no model is made). */
static ngpt_status open_status(const void *img, size_t n)
{
    ngpt_model *m = NULL;
    ngpt_status st = ngpt_model_open_mem(&m, img, n);
    ngpt_model_close(m);
    return st;
}

static void checkpoints(void)
{
    ngpt_tokenizer *tok = trained(300), *other = trained(280);
    ngpt_model *m = NULL;
    const ngpt_tokenizer *got = NULL;
    if (!tok || !other) goto out;
    const ngpt_config cfg = bpe_config(tok);
    ngpt_context *a = make(cfg, NGPT_MODE_INFER, 1, 42);
    if (!a) goto out;

    /* without a tokenizer: version 1, as before */
    CHECK_OK(ngpt_context_save(a, path));
    CHECK(file_version(path) == 1, "a file without a tokenizer is version 1 (%u)", file_version(path));
    CHECK_HASH(open_file(path, NULL, 0, &m, &got), params_hash(a));
    CHECK(got == NULL, "no tokenizer in it");
    ngpt_model_close(m);

    /* with one: version 2, read back the same */
    CHECK_OK(ngpt_context_tokenizer_set(a, tok));
    const ngpt_tokenizer *attached = NULL;
    CHECK(ngpt_context_tokenizer(a, &attached) == NGPT_OK && attached == tok, "attached");
    CHECK_OK(ngpt_context_save(a, path));
    CHECK(file_version(path) == 2, "a file with a tokenizer is version 2 (%u)", file_version(path));
    CHECK_HASH(open_file(path, NULL, 0, &m, &got), params_hash(a));
    ngpt_tokenizer_info i1, i2;
    CHECK(got && !ngpt_tokenizer_describe(got, &i1) && !ngpt_tokenizer_describe(tok, &i2) &&
              i1.checksum == i2.checksum && i1.n_tokens == cfg.vocab_size,
          "the model file's tokenizer is the one saved");
    ngpt_config c2;
    if (m) CHECK_OK(ngpt_model_config(m, &c2));
    CHECK(c2.vocab_size == cfg.vocab_size, "config read back");
    ngpt_context *b = NULL;     /* a copy of the model's weights, saved again: the same bytes */
    if (m) CHECK_OK(ngpt_context_init(&b, m, &c2, NULL, NULL, 0));
    if (b) CHECK_OK(ngpt_context_save(b, path2));
    ngpt_context_free(b);
    ngpt_model_close(m);
    size_t n;
    unsigned char *img = test_read_file(path, &n);
    if (img) {
        size_t n2;
        unsigned char *img2 = test_read_file(path2, &n2);
        CHECK(img2 && n2 == n && !memcmp(img, img2, n), "save is deterministic");
        free(img2);
        CHECK_HASH(open_file(NULL, img, n, &m, &got), params_hash(a));
        CHECK(got && !ngpt_tokenizer_describe(got, &i1) && i1.checksum == i2.checksum,
              "from memory");
        ngpt_model_close(m);
    }

    /* a tokenizer of another size: refused, naming V */
    ngpt_context *c = make(bpe_config(other), NGPT_MODE_INFER, 1, 9);
    if (c) {
        ngpt_config co = bpe_config(other);
        if (co.vocab_size == cfg.vocab_size) {
            CHECK(false, "the two tokenizers must differ in size for this test");
        }
        CHECK_STATUS(ngpt_context_tokenizer_set(c, tok), NGPT_ERR_CONFIG_MISMATCH);
        CHECK(strstr(ngpt_last_error(), "ngpt_context_tokenizer_set: ") == ngpt_last_error() &&
                  strstr(ngpt_last_error(), "V="), "names V: %s", ngpt_last_error());
        ngpt_context_free(c);
    }

    /* damage: the tokenizer's bytes (container resealed), its dtype, a
     * byte tensor in a version 1 file, a byte tensor of another name */
    if (img) {
        /* the tensor table: find the entry named tokenizer */
        uint32_t nt;
        memcpy(&nt, img + 24, 4);
        unsigned char *e = NULL;
        for (uint32_t i = 0; i < nt; i++)
            if (!strcmp((const char *)img + 128 + 128 * i, "tokenizer")) e = img + 128 + 128 * i;
        CHECK(e != NULL, "the tokenizer tensor is in the table");
        if (e) {
            uint64_t off;
            memcpy(&off, e + 88, 8);
            unsigned char *copy = malloc(n);
            memcpy(copy, img, n);
            copy[off + 400] ^= 1;       /* a merge: its own checksum fails */
            reseal(copy, n);
            CHECK_STATUS(open_status(copy, n), NGPT_ERR_CHECKSUM);
            CHECK(strstr(ngpt_last_error(), "the tokenizer in") != NULL, "%s", ngpt_last_error());
            memcpy(copy, img, n);
            memcpy(copy + off + 12, &(uint32_t){299}, 4);   /* its token count */
            reseal(copy, n);
            CHECK_STATUS(open_status(copy, n), NGPT_ERR_CHECKSUM);
            memcpy(copy, img, n);
            memcpy(e - img + copy + 64, &(uint32_t){0}, 4);  /* dtype float32 */
            reseal(copy, n);
            CHECK_STATUS(open_status(copy, n), NGPT_ERR_BAD_FORMAT);
            memcpy(copy, img, n);
            memcpy(copy + 8, &(uint32_t){1}, 4);            /* version 1 */
            reseal(copy, n);
            CHECK_STATUS(open_status(copy, n), NGPT_ERR_BAD_FORMAT);
            CHECK(strstr(ngpt_last_error(), "version 1") != NULL, "%s", ngpt_last_error());
            memcpy(copy, img, n);
            memcpy(copy + 8, &(uint32_t){3}, 4);            /* a newer version */
            reseal(copy, n);
            CHECK_STATUS(open_status(copy, n), NGPT_ERR_VERSION);
            memcpy(copy, img, n);
            memcpy(e - img + copy, "tokenizes", 10);         /* bytes under another name */
            reseal(copy, n);
            CHECK_STATUS(open_status(copy, n), NGPT_ERR_BAD_FORMAT);
            CHECK(strstr(ngpt_last_error(), "only the tokenizer") != NULL, "%s", ngpt_last_error());
            free(copy);
        }
    }
    free(img);

    /* a file whose tokenizer has more tokens than its V (another writer) */
    {
        ngpt_context *small = make(bpe_config(other), NGPT_MODE_INFER, 1, 3);
        if (small) {
            /* save small's model with tok (300 tokens) as its tokenizer: the
             * context refuses to attach it, so write the file by hand */
            CHECK_OK(ngpt_context_save(small, path2));
            size_t m;
            unsigned char *base = test_read_file(path2, &m);
            ngpt_context_free(small);
            if (base) {
                /* append a tokenizer tensor: rebuild the file with one more
                 * table entry (header 128 + entries, data from the old
                 * header_bytes on) */
                uint32_t nt, hb;
                memcpy(&nt, base + 24, 4);
                memcpy(&hb, base + 12, 4);
                size_t tok_bytes = tok->image_size, tables = 128 + 128 * ((size_t)nt + 1);
                size_t header = (tables + 63) / 64 * 64, shift = header - hb;
                size_t data = m - 8 - hb, total = header + data + (tok_bytes + 63) / 64 * 64 + 8;
                unsigned char *f = calloc(1, total);
                memcpy(f, base, 128 + 128 * (size_t)nt);
                for (uint32_t i = 0; i < nt; i++) {
                    uint64_t off;
                    memcpy(&off, f + 128 + 128 * i + 88, 8);
                    off += shift;
                    memcpy(f + 128 + 128 * i + 88, &off, 8);
                }
                unsigned char *e = f + 128 + 128 * (size_t)nt;
                memcpy(e, "tokenizer", 9);
                memcpy(e + 64, &(uint32_t){2}, 4);
                memcpy(e + 68, &(uint32_t){1}, 4);
                memcpy(e + 72, &(uint32_t){(uint32_t)tok_bytes}, 4);
                uint64_t off = header + data, nb = tok_bytes;
                memcpy(e + 88, &off, 8);
                memcpy(e + 96, &nb, 8);
                memcpy(f + header, base + hb, data);
                memcpy(f + header + data, tok->image, tok_bytes);
                memcpy(f + 8, &(uint32_t){2}, 4);
                memcpy(f + 12, &(uint32_t){(uint32_t)header}, 4);
                memcpy(f + 16, &(uint64_t){total}, 8);
                memcpy(f + 24, &(uint32_t){nt + 1}, 4);
                reseal(f, total);
                CHECK_STATUS(open_status(f, total), NGPT_ERR_BAD_FORMAT);
                CHECK(strstr(ngpt_last_error(), "tokenizer has 300 tokens") != NULL &&
                          strstr(ngpt_last_error(), "V=280") != NULL, "%s", ngpt_last_error());
                free(f);
                free(base);
            }
        }
    }

    /* training checkpoints carry it too, and their training contexts have it */
    ngpt_context *t = make(cfg, NGPT_MODE_TRAIN, 2, 5);
    if (t) {
        ngpt_train_state ts = {.seed = 1, .batch = 2, .seq = 16, .opt = ngpt_optim_config_default(),
                               .best_eval_loss = INFINITY, .holdout = 0.1f, .eval_every = 100,
                               .eval_batches = 8};
        CHECK_OK(ngpt_context_tokenizer_set(t, tok));
        CHECK_OK(ngpt_context_save_train(t, path, &ts));
        CHECK(file_version(path) == 2, "a training checkpoint with a tokenizer is version 2");
        ngpt_context_free(t);
        open_file(path, NULL, 0, &m, &got);
        CHECK(got && !ngpt_tokenizer_describe(got, &i1) && i1.checksum == i2.checksum,
              "the training checkpoint's tokenizer");
        ngpt_train_state rs;
        if (m) CHECK_OK(ngpt_model_train_state(m, &rs));
        CHECK(m && rs.has_state, "state read back");
        ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
        sh.batch = 2, sh.seq = 16;
        t = NULL;
        if (m) CHECK_OK(ngpt_context_init(&t, m, NULL, &sh, NULL, 0));
        attached = NULL;
        if (t) CHECK(ngpt_context_tokenizer(t, &attached) == NGPT_OK && attached == got,
                     "a training context made from the model has its tokenizer");
        ngpt_context_free(t);
        ngpt_model_close(m);
    }
    ngpt_context_free(a);
out:
    ngpt_tokenizer_free(tok);
    ngpt_tokenizer_free(other);
}

/* ----------------------------------------------------------------- data */

static void token_data(void)
{
    ngpt_tokenizer *tok = trained(300);
    if (!tok) return;
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, TEXT, sizeof TEXT - 1, 0.25f, 8));
    if (!d) goto out;
    size_t tb, eb, tt, et;
    const uint8_t *bytes;
    size_t n;
    CHECK_OK(ngpt_data_sizes(d, &tb, &eb));
    CHECK_OK(ngpt_data_tokenize(d, tok, 8));
    CHECK_OK(ngpt_data_token_counts(d, &tt, &et));
    CHECK(tt < tb && et < eb && tt > 9 && et > 9, "fewer tokens than bytes: %zu/%zu, %zu/%zu",
          tt, tb, et, eb);
    /* each split is its bytes encoded alone */
    for (int s = 0; s < 2; s++) {
        CHECK_OK(ngpt_data_text(d, (ngpt_split)s, &bytes, &n));
        size_t count = 0;
        CHECK_OK(ngpt_tokenizer_encode(tok, bytes, n, NULL, 0, &count));
        CHECK(count == (s ? et : tt), "split %d: %zu tokens, its bytes encode to %zu", s,
              s ? et : tt, count);
        CHECK(n == (s ? eb : tb), "split %d's text is its bytes", s);
    }
    /* windows are runs of the encoded split, and their bytes add up */
    int32_t x[4 * 8], y[4 * 8];
    for (int s = 0; s < 2; s++)
        for (uint64_t idx = 0; idx < 3; idx++) {
            CHECK_OK(ngpt_data_batch(d, (ngpt_split)s, 11, idx, 4, 8, x, y));
            uint64_t want = 0, got = 0;
            for (int i = 0; i < 32; i++) {
                const uint8_t *b;
                size_t len;
                CHECK(x[i] >= 0 && x[i] < 300 && y[i] >= 0 && y[i] < 300, "ids in range");
                if (ngpt_tokenizer_token(tok, y[i], &b, &len) == NGPT_OK) want += len;
                if (i % 8 != 7) CHECK(x[i + 1] == y[i], "targets are the next tokens");
            }
            CHECK_OK(ngpt_data_batch_bytes(d, (ngpt_split)s, 11, idx, 4, 8, &got));
            CHECK(got == want && got > 32, "batch bytes %llu, targets' bytes %llu",
                  (unsigned long long)got, (unsigned long long)want);
        }
    /* a model with fewer ids than the tokens is refused */
    ngpt_config small = test_config_tiny();     /* V = 256 < 300 */
    ngpt_context *ctx = make(small, NGPT_MODE_TRAIN, 4, 1);
    if (ctx) {
        ngpt_optim_config o = ngpt_optim_config_default();
        float loss;
        CHECK_STATUS(ngpt_context_train_step(ctx, &o, d, 1, 4, 8, &loss, NULL, NULL), NGPT_ERR_BAD_TOKEN);
        CHECK(strstr(ngpt_last_error(), "token") != NULL, "%s", ngpt_last_error());
        ngpt_context_free(ctx);
    }
    /* byte data: a batch's bytes are batch * seq */
    ngpt_data *bd = NULL;
    uint64_t got = 0;
    CHECK_OK(ngpt_data_open_mem(&bd, TEXT, sizeof TEXT - 1, 0.25f, 8));
    if (bd) CHECK(ngpt_data_batch_bytes(bd, NGPT_SPLIT_EVAL, 3, 1, 4, 8, &got) == NGPT_OK &&
                  got == 32, "byte data: %llu bytes", (unsigned long long)got);
    ngpt_data_free(bd);
out:
    ngpt_data_free(d);
    ngpt_tokenizer_free(tok);
}

/* --------------------------------------------------------- stop sequences */

typedef struct stream {
    const ngpt_tokenizer *tok;
    char text[4096];
    size_t len;
} stream;

static int on_token(int32_t id, void *user)
{
    stream *s = user;
    const uint8_t *b;
    size_t len;
    if (ngpt_tokenizer_token(s->tok, id, &b, &len) == NGPT_OK && s->len + len < sizeof s->text) {
        memcpy(s->text + s->len, b, len);
        s->len += len;
    }
    return 0;
}

static size_t decode(const ngpt_tokenizer *tok, const int32_t *ids, int32_t n, char *out, size_t cap)
{
    size_t len = 0;
    CHECK_OK(ngpt_tokenizer_decode(tok, ids, (size_t)n, out, cap, &len));
    return len;
}

/* The stop matcher on hand-made token strings: a stop sequence that ends
 * inside the newest token, begins inside an older one, spans three, and
 * the hold-back of a partial match. */
static void stop_matcher(void)
{
    ngpt_tokenizer *tok = trained(300);
    if (!tok) return;
    int32_t ids[64];
    size_t n = 0;
    const char *s = " the best of times";
    CHECK_OK(ngpt_tokenizer_encode(tok, s, strlen(s), ids, 64, &n));
    CHECK(n >= 3 && n < strlen(s), "' the best of times' is %zu tokens", n);
    ngpt_generate_config gc = ngpt_generate_config_default();
    const char *stops[2];
    gc.stop = stops, gc.n_stop = 1;
    int32_t hold = -1, keep = -1;
    /* every stop sequence of 2..6 bytes inside s: found at the token that
     * holds its last byte, never earlier, with the right start */
    size_t starts[64];
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        starts[i] = at;
        const uint8_t *b;
        size_t len;
        ngpt_tokenizer_token(tok, ids[i], &b, &len);
        at += len;
    }
    starts[n] = at;
    int checked = 0;
    for (size_t b0 = 0; b0 + 2 <= strlen(s); b0++)
        for (size_t m = 2; m <= 6 && b0 + m <= strlen(s); m++) {
            char stop[8];
            memcpy(stop, s + b0, m);
            stop[m] = 0;
            if (strstr(s, stop) != s + b0) continue;   /* its first occurrence only */
            stops[0] = stop;
            size_t end = b0 + m, first = 0, last = 0;
            while (starts[first + 1] <= b0) first++;
            while (starts[last + 1] < end) last++;
            for (size_t k = 0; k < n; k++) {        /* tok = ids[k] is the newest */
                int32_t r = ngpt_stop_match(&gc, tok, ids + k, (int32_t)k, ids[k], &hold, &keep);
                if (k < last) {
                    CHECK(r == 0, "'%s' found early at token %zu", stop, k);
                } else if (k == last) {
                    CHECK(r == (int32_t)(last - first + 1) && keep == (int32_t)(b0 - starts[first]),
                          "'%s' at token %zu: %d tokens, keep %d (want %zu, %zu)", stop, k,
                          (int)r, (int)keep, last - first + 1, b0 - starts[first]);
                    checked++;
                    break;
                }
            }
        }
    CHECK(checked > 40, "%d stop sequences checked", checked);
    /* hold-back: a tail that begins a stop sequence holds the tokens it spans */
    stops[0] = " the best of times, no";
    int32_t r = ngpt_stop_match(&gc, tok, ids + n - 1, (int32_t)n - 1, ids[n - 1], &hold, &keep);
    CHECK(r == 0 && hold == (int32_t)n, "the whole prefix is held (%d of %zu)", (int)hold, n);
    stops[0] = "es, no";
    r = ngpt_stop_match(&gc, tok, ids + n - 1, (int32_t)n - 1, ids[n - 1], &hold, &keep);
    CHECK(r == 0 && hold == 1, "'es' at the end holds the last token (%d)", (int)hold);
    /* fewer generated tokens than the match needs: the prompt does not count */
    stops[0] = " the best";
    r = ngpt_stop_match(&gc, tok, ids + 2, 0, ids[2], &hold, &keep);
    CHECK(r == 0, "a stop sequence that begins in the prompt does not count");
    /* a special token holds no bytes: a stop sequence never spans it */
    ngpt_tokenizer_info info;
    ngpt_tokenizer_describe(tok, &info);
    int32_t with_end[3] = {ids[0], info.end_id, ids[1]};
    const uint8_t *b0b, *b1b;
    size_t l0, l1;
    ngpt_tokenizer_token(tok, ids[0], &b0b, &l0);
    ngpt_tokenizer_token(tok, ids[1], &b1b, &l1);
    char across[80];
    memcpy(across, b0b, l0);
    memcpy(across + l0, b1b, l1);
    across[l0 + l1] = 0;
    stops[0] = across;
    r = ngpt_stop_match(&gc, tok, with_end + 2, 2, with_end[2], &hold, &keep);
    CHECK(r == 0, "no match across the end token");
    r = ngpt_stop_match(&gc, tok, ids + 1, 1, ids[1], &hold, &keep);
    CHECK(r == 2 && keep == 0, "but a match without it (%d)", (int)r);
    /* the parts of a cut token decode to its bytes before the cut */
    int32_t parts[NGPT_TOK_MAX_BYTES];
    int tested = 0;
    for (int32_t id = 256; id < 256 + info.n_merges; id++) {
        const uint8_t *b;
        size_t len;
        ngpt_tokenizer_token(tok, id, &b, &len);
        for (size_t k = 1; k < len; k++) {
            int32_t np = ngpt_tok_prefix(tok, id, k, parts);
            char dec[300];
            size_t dl = decode(tok, parts, np, dec, sizeof dec);
            CHECK(np >= 1 && (size_t)np <= k && dl == k && !memcmp(dec, b, k),
                  "token %d cut at %zu: %d parts", (int)id, k, (int)np);
            tested++;
        }
    }
    CHECK(tested > 50, "%d cuts", tested);
    ngpt_tokenizer_free(tok);
}

/* A stop sequence for the decoded output text[0..len) of ids: from the
 * second byte of its first token of two bytes or more that has a token
 * after it, up to 6 bytes (no NUL), into stop; returns where it first
 * occurs in the text (the output of a run with it must end there), or NULL
 * when there is no such token. */
static const char *stop_inside(const ngpt_tokenizer *tok, const int32_t *ids, int32_t n,
                               const char *text, size_t len, char stop[8])
{
    size_t at = 0;
    for (int32_t i = 0; i + 1 < n; i++) {
        const uint8_t *b;
        size_t l;
        ngpt_tokenizer_token(tok, ids[i], &b, &l);
        if (l >= 2) {
            size_t m = len - (at + 1) < 6 ? len - (at + 1) : 6;
            memcpy(stop, text + at + 1, m);
            stop[m] = 0;
            return m >= 2 && strlen(stop) == m ? strstr(text, stop) : NULL;
        }
        at += l;
    }
    return NULL;
}

/* Generation with a tokenizer attached: greedy text, then the same run
 * with a stop sequence that begins inside a token and spans several ends
 * exactly before it; the streamed bytes never hold it; beam search too. */
static void generation(void)
{
    ngpt_tokenizer *tok = trained(300);
    if (!tok) return;
    ngpt_context *ctx = make(bpe_config(tok), NGPT_MODE_INFER, 2, 5);
    if (!ctx) goto out;
    CHECK_OK(ngpt_context_tokenizer_set(ctx, tok));
    ngpt_tokenizer_info info;
    ngpt_tokenizer_describe(tok, &info);
    int32_t prompt[64], out[64 + 300], banned[2] = {info.end_id, info.pad_id};
    size_t np = 0;
    const char *p = "it was the";
    CHECK_OK(ngpt_tokenizer_encode(tok, p, strlen(p), prompt, 64, &np));
    float bias[300] = {0};      /* merges more likely than bytes: a random model's text */
    for (int32_t id = 256; id < 256 + info.n_merges; id++) bias[id] = 4.0f;
    for (int beam = 0; beam <= 2; beam++) {     /* width 1 is greedy; 2 searches more */
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.sampler.temperature = beam ? 1.0f : 0.0f;    /* beam search draws nothing */
        gc.sampler.banned = banned, gc.sampler.n_banned = 2;
        gc.sampler.logit_bias = bias;
        gc.max_tokens = 14, gc.beam_width = beam, gc.stop_at_context_full = true;
        ngpt_generate_result res;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, (int32_t)np, out, 64, NULL, NULL, &res));
        char full[2048], stop[8];
        const size_t full_len = decode(tok, out, res.n_tokens, full, sizeof full);
        const char *first = stop_inside(tok, out, res.n_tokens, full, full_len, stop);
        CHECK(first != NULL, "beam %d: a stop sequence that begins inside a token, in %d tokens",
              beam, (int)res.n_tokens);
        if (!first) continue;
        const char *stops[1] = {stop};
        gc.stop = stops, gc.n_stop = 1;
        stream st = {.tok = tok};
        CHECK_STATUS(ngpt_context_generate(ctx, &gc, prompt, (int32_t)np, out, 14, NULL, NULL,
                                         &res), NGPT_ERR_BAD_ARG);     /* no room for parts */
        CHECK(strstr(ngpt_last_error(), "longest token") != NULL, "%s", ngpt_last_error());
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, (int32_t)np, out, 64 + 300, on_token, &st,
                                     &res));
        char got[2048];
        size_t got_len = decode(tok, out, res.n_tokens, got, sizeof got);
        CHECK(st.len == got_len && !memcmp(st.text, got, got_len), "beam %d: streamed what it "
              "output", beam);
        got[got_len] = 0;
        CHECK(strlen(got) == got_len && !strstr(got, stop), "beam %d: no stop sequence in '%s'",
              beam, got);
        if (beam == 2) continue;    /* another search: its answer need not be the greedy one */
        const size_t want = (size_t)(first - full);
        CHECK(res.reason == NGPT_STOP_SEQUENCE, "beam %d: stopped by the stop sequence (%s)", beam,
              ngpt_stop_reason_string(res.reason));
        CHECK(got_len == want && !memcmp(got, full, want), "beam %d: the output is the text "
              "before '%s' (%zu bytes, want %zu)", beam, stop, got_len, want);
        CHECK(st.len == want && !memcmp(st.text, full, want), "beam %d: streamed %zu bytes, "
              "want %zu", beam, st.len, want);
    }
out:
    ngpt_context_free(ctx);
    ngpt_tokenizer_free(tok);
}

/* ---------------------------------------------------------------- golden */

/* A tiny BPE model: a 300-token tokenizer trained on TEXT, V = 300, seed 5;
 * 3 AdamW steps on TEXT's tokens, evaluation, the logits of a forward over
 * the start of TEXT, and greedy text with a stop sequence. The constants
 * were made by the scalar reference; every build must give them. */
static void golden(void)
{
    ngpt_tokenizer *tok = trained(300);
    if (!tok) return;
    ngpt_tokenizer_info info;
    ngpt_tokenizer_describe(tok, &info);
    CHECK_HASH(info.checksum, 0xa50b19662463df63);
    const ngpt_config cfg = bpe_config(tok);
    ngpt_context *t = make(cfg, NGPT_MODE_TRAIN, 4, 5), *g = NULL;
    ngpt_model *m = NULL;
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, TEXT, sizeof TEXT - 1, 0.2f, 16));
    if (!t || !d) goto out;
    CHECK_OK(ngpt_data_tokenize(d, tok, 16));
    CHECK_OK(ngpt_context_tokenizer_set(t, tok));
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.warmup = 1, o.total_steps = 3;
    float loss = 0, eval = 0;
    for (int s = 0; s < 3; s++) CHECK_OK(ngpt_context_train_step(t, &o, d, 9, 4, 16, &loss, NULL, NULL));
    CHECK_OK(ngpt_context_evaluate(t, d, 3, 2, 4, 16, &eval));
    uint32_t lb, eb;
    memcpy(&lb, &loss, 4);
    memcpy(&eb, &eval, 4);
    CHECK_HASH(params_hash(t), 0x3def6404c2207c1e);
    CHECK_HASH(lb, 0x40b45b1c);
    CHECK_HASH(eb, 0x40b5aba2);
    ngpt_train_state ts = {.seed = 9, .batch = 4, .seq = 16, .opt = o, .best_eval_loss = eval};
    CHECK_OK(ngpt_context_save_train(t, path, &ts));
    CHECK_OK(ngpt_model_open(&m, path));     /* its tokenizer comes with it */
    ngpt_shape gs = ngpt_shape_default(NGPT_MODE_INFER);
    gs.logits_rows = NGPT_LOGITS_ALL;
    if (m) CHECK_OK(ngpt_context_init(&g, m, NULL, &gs, NULL, 0));
    if (!g) goto out;
    int32_t ids[64];
    size_t n = 0;
    CHECK_OK(ngpt_tokenizer_encode(tok, TEXT, 60, ids, 64, &n));
    CHECK_OK(ngpt_context_forward(g, ids, 1, (int32_t)(n < 16 ? n : 16), NULL, NULL));
    uint64_t h;
    CHECK_OK(ngpt_context_logits_checksum(g, &h));
    CHECK_HASH(h, 0x4c82e5c25e9b4f75);
    /* sampled text, then the same run stopped inside a token of it */
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler.temperature = 0.8f, gc.sampler.seed = 4, gc.max_tokens = 30;
    int32_t out[30 + 300];
    ngpt_generate_result res;
    CHECK_OK(ngpt_context_generate(g, &gc, ids, 4, out, 30 + 300, NULL, NULL, &res));
    CHECK_HASH(ngpt_checksum_bytes(out, (size_t)res.n_tokens * 4), 0x78e93a9285cf6de6);
    char text[4096], stop[8];
    size_t len = decode(tok, out, res.n_tokens, text, sizeof text);
    const char *first = stop_inside(tok, out, res.n_tokens, text, len, stop);
    CHECK(first != NULL, "a stop sequence inside a token of the sampled text");
    const char *stops[1] = {first ? stop : "x"};
    gc.stop = stops, gc.n_stop = 1;
    CHECK_OK(ngpt_context_generate(g, &gc, ids, 4, out, 30 + 300, NULL, NULL, &res));
    CHECK_HASH(ngpt_checksum_bytes(out, (size_t)res.n_tokens * 4), 0x1547191c9a66a2c2);
    CHECK(res.reason == NGPT_STOP_SEQUENCE && first &&
              decode(tok, out, res.n_tokens, text + 2048, 2048) == (size_t)(first - text),
          "stopped before '%s'", stop);
    for (size_t i = 0; i < len; i++)       /* printable in the log */
        if ((unsigned char)text[i] < 32 || (unsigned char)text[i] >= 127) text[i] = '?';
    printf("golden BPE model: loss %.4f eval %.4f; sampled \"%.*s\", stopped before \"%s\"\n",
           (double)loss, (double)eval, (int)len, text, first ? stop : "");
out:
    ngpt_data_free(d);
    ngpt_context_free(t);
    ngpt_context_free(g);
    ngpt_model_close(m);
    ngpt_tokenizer_free(tok);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/ngpt-model-tok-%d.ngpt", tmp, (int)getpid());
    snprintf(path2, sizeof path2, "%s/ngpt-model-tok-%d-2.ngpt", tmp, (int)getpid());
    checkpoints();
    token_data();
    stop_matcher();
    generation();
    golden();
    unlink(path);
    unlink(path2);
    return test_summary("test_model_tokenizer");
}
