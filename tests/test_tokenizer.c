/* test_tokenizer.c — the BPE tokenizer (src/tokenizer/, docs/TOKENIZER.md):
 *  - the GPT-2 pre-tokenizer against a reference written as the regex
 *    engine reads the pattern (alternatives in order, with backtracking);
 *  - encoding against naive encoders (the merges applied one after another
 *    over the whole piece; tiktoken's loop with a linear rank lookup) on
 *    random byte strings, for every pre-tokenizer and both merge rules;
 *  - decode(encode(x)) == x for random bytes, NUL and invalid UTF-8 included;
 *  - training: a hand-worked example, determinism, and golden checksums of
 *    trained tokenizers (the same on x86, AArch64 and ARMv7);
 *  - files: save/load round trips, and every kind of bad file rejected with
 *    its own message; GPT-2's two files, made here from a trained tokenizer;
 *  - buffers: counting, too-small buffers, and no allocation while encoding
 *    short pieces or decoding. */
/* test-ldflags: -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <unistd.h>

#include "alloc_count.h"
#include "test.h"
#include "tok_ref.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

/* Appends a random "character" of text: ASCII of every class, multi-byte
 * letters, numbers and spaces, apostrophes, and bytes that are not UTF-8. */
static size_t rnd_char(uint8_t *out)
{
    static const char *const pool[] = {
        "a", "b", "e", "t", "s", "r", "l", "m", "d", "v", "Z", "0", "7", " ", " ", " ", "\n",
        "\t", "'", "'", ".", ",", "!", "-", "_", "\xc3\xa9" /* é */, "\xe6\x97\xa5" /* 日 */,
        "\xd9\xa3" /* ٣ */, "\xe3\x80\x80" /* U+3000 */, "\xc2\xa0" /* NBSP */,
        "\xc2\x85" /* NEL: other in JavaScript */, "\xef\xbb\xbf" /* BOM: space */,
        "\xcc\x81" /* combining acute */, "\xf0\x9f\x98\x80" /* 😀 */, "\xf0\x90\x90\x80" /* 𐐀 */,
        "\xff", "\xc3", "\x80", "\xed\xa0\x80" /* a surrogate: not UTF-8 */, "\xf4\x90\x80\x80",
        "\xe0\x80\xaf" /* overlong */, "\0",
    };
    const char *s = pool[rnd_below(sizeof pool / sizeof pool[0])];
    size_t n = s[0] ? strlen(s) : 1;
    memcpy(out, s, n);
    return n;
}

/* Random text of about n bytes (words from a small list, like a corpus). */
static size_t rnd_text(uint8_t *out, size_t n)
{
    static const char *const words[] = {"the", "tokenizer", "model", "it's", "we're", "don't",
                                        "bytes", "merge", "pair", "1024", "3.14", "  ", "\n\n",
                                        "x = y + 1;", "/* c */", "int", "return", "Stra\303\237e"};
    size_t at = 0;
    while (at + 32 < n) {
        if (rnd_below(3)) {
            const char *w = words[rnd_below(sizeof words / sizeof words[0])];
            memcpy(out + at, w, strlen(w));
            at += strlen(w);
        } else {
            for (size_t k = 1 + rnd_below(6); k > 0; k--) at += rnd_char(out + at);
        }
        if (rnd_below(4)) out[at++] = ' ';
    }
    return at;
}

/* --------------------------------------------- the reference pre-tokenizer */

/* The match at i of 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
 * ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ : each alternative in turn, each with
 * its own backtracking. */
static size_t ref_match(const uint8_t *t, size_t n, size_t i)
{
    static const char *const con[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
    for (int k = 0; k < 7; k++) {
        size_t m = strlen(con[k]);
        if (n - i >= m && !memcmp(t + i, con[k], m)) return i + m;
    }
    const int cls[3] = {NGPT_UC_L, NGPT_UC_N, NGPT_UC_O};
    for (int k = 0; k < 3; k++) {
        if (t[i] == ' ') {                      /* " ?" takes the space first */
            size_t e = ref_plus(t, n, i + 1, cls[k], false);
            if (e > i + 1) return e;
        }
        size_t e = ref_plus(t, n, i, cls[k], false);   /* then without it */
        if (e > i) return e;
    }
    size_t ends[4096], n_ends = 0, j = i, len;  /* \s+(?!\S): longest first */
    while (j < n && ref_class(t, n, j, &len, false) == NGPT_UC_S && n_ends < 4096) j += len, ends[n_ends++] = j;
    for (size_t k = n_ends; k-- > 0;)
        if (ends[k] == n || ref_class(t, n, ends[k], &len, false) == NGPT_UC_S) return ends[k];
    if (n_ends) return ends[n_ends - 1];        /* \s+ */
    return i + 1;                               /* unreachable: every character matches */
}

static void pretok_against_reference(void)
{
    uint8_t t[300];
    int bad = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = 0, want = 1 + rnd_below(40);
        while (n < want) n += rnd_char(t + n);
        for (size_t i = 0; i < n;) {
            size_t got = ngpt_pretok_next(NGPT_PRETOK_GPT2, t, n, i), ref = ref_match(t, n, i);
            if (got != ref) {
                if (bad++ < 5) {
                    fprintf(stderr, "pre-tokenizer at %zu of:", i);
                    for (size_t k = 0; k < n; k++) fprintf(stderr, " %02x", t[k]);
                    fprintf(stderr, ": ends at %zu, the pattern at %zu\n", got, ref);
                }
                break;
            }
            i = got;
        }
    }
    CHECK(bad == 0, "the GPT-2 pre-tokenizer equals the reference (%d texts differ)", bad);

    /* a few by hand, in the pattern's own terms */
    static const struct { const char *text, *pieces; } cases[] = {
        {"Hello world", "Hello| world"},
        {"it's we'RE you'll", "it|'s| we|'|RE| you|'ll"},
        {"a  b", "a| | b"},
        {"a   ", "a|   "},
        {"x\n\n  y", "x|\n\n | y"},
        {"x\ny", "x|\n|y"},
        {"123abc 45", "123|abc| 45"},
        {" !!? ok", " !!?| ok"},
        {"''s", "''|s"},                            /* the run of others takes both */
        {"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", "caf\xc3\xa9| \xe6\x97\xa5\xe6\x9c\xac"},
        {"a\302\240b", "a|\302\240|b"},                  /* NBSP is white space */
        {"a\302\205b", "a|\302\205|b"},                  /* NEL is not (JavaScript) */
        {"\377\376ab", "\377\376|ab"},                   /* not UTF-8: other */
        {"x\xe3\x80\x80\xe3\x80\x80y", "x|\xe3\x80\x80|\xe3\x80\x80|y"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const uint8_t *t8 = (const uint8_t *)cases[c].text;
        size_t n = strlen(cases[c].text);
        char got[128] = "";
        for (size_t i = 0; i < n;) {
            size_t e = ngpt_pretok_next(NGPT_PRETOK_GPT2, t8, n, i);
            if (i) strcat(got, "|");
            strncat(got, cases[c].text + i, e - i);
            i = e;
        }
        CHECK(!strcmp(got, cases[c].pieces), "pieces of \"%s\": \"%s\", want \"%s\"", cases[c].text,
              got, cases[c].pieces);
    }
    /* lines and none */
    const uint8_t *l = (const uint8_t *)"ab\ncd\n\nef";
    CHECK(ngpt_pretok_next(NGPT_PRETOK_LINES, l, 9, 0) == 3 && ngpt_pretok_next(NGPT_PRETOK_LINES, l, 9, 3) == 6 &&
              ngpt_pretok_next(NGPT_PRETOK_LINES, l, 9, 6) == 7 && ngpt_pretok_next(NGPT_PRETOK_LINES, l, 9, 7) == 9 &&
              ngpt_pretok_next(NGPT_PRETOK_NONE, l, 9, 0) == 9,
          "lines end after each newline; none is one piece");
}

static void unicode_table(void)
{
    bool sorted = true;
    for (int i = 0; i < ngpt_unicode_range_count; i++) {
        const ngpt_unicode_range *r = &ngpt_unicode_ranges[i];
        if (r->first < 0x80 || r->last < r->first || r->last > 0x10FFFF || r->cls < 1 || r->cls > 3 ||
            (i > 0 && r->first <= ngpt_unicode_ranges[i - 1].last))
            sorted = false;
    }
    CHECK(sorted && ngpt_unicode_range_count > 500, "the class table is sorted and disjoint (%d ranges)",
          ngpt_unicode_range_count);
    static const struct { uint32_t cp; int cls; } known[] = {
        {0xE9, NGPT_UC_L}, {0x663, NGPT_UC_N}, {0x3000, NGPT_UC_S}, {0xA0, NGPT_UC_S},
        {0x85, NGPT_UC_O}, {0xFEFF, NGPT_UC_S}, {0x1F600, NGPT_UC_O}, {0x10400, NGPT_UC_L},
        {0x2160, NGPT_UC_N}, {0xBD, NGPT_UC_N}, {0x301, NGPT_UC_O}, {0x4E00, NGPT_UC_L},
        {0x2028, NGPT_UC_S}, {0x200B, NGPT_UC_O}, {0x10FFFF, NGPT_UC_O}, {0x1D7CE, NGPT_UC_N},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        CHECK(ngpt_unicode_class(known[i].cp) == known[i].cls, "class of U+%04X: %d, want %d",
              (unsigned)known[i].cp, ngpt_unicode_class(known[i].cp), known[i].cls);
    /* UTF-8: what is a sequence and what is not */
    static const struct { const char *s; size_t n, len; } utf8[] = {
        {"\x7f", 1, 1}, {"\xc2\x80", 2, 2}, {"\xc1\xbf", 2, 0}, {"\xe0\x9f\xbf", 3, 0},
        {"\xe0\xa0\x80", 3, 3}, {"\xed\x9f\xbf", 3, 3}, {"\xed\xa0\x80", 3, 0},
        {"\xf0\x8f\xbf\xbf", 4, 0}, {"\xf0\x90\x80\x80", 4, 4}, {"\xf4\x8f\xbf\xbf", 4, 4},
        {"\xf4\x90\x80\x80", 4, 0}, {"\xf5\x80\x80\x80", 4, 0}, {"\xe2\x82", 2, 0}, {"\x80", 1, 0},
    };
    for (size_t i = 0; i < sizeof utf8 / sizeof utf8[0]; i++) {
        uint32_t cp;
        CHECK(ngpt_utf8_decode((const uint8_t *)utf8[i].s, utf8[i].n, &cp) == utf8[i].len,
              "UTF-8 case %zu", i);
    }
}

/* ------------------------------------------------------ naive encoders */

typedef struct tokbytes {
    const uint8_t *b;
    size_t n;
    int32_t id;
} tokbytes;

static int cmp_tokbytes(const void *x, const void *y)
{
    const tokbytes *a = x, *b = y;
    int r = memcmp(a->b, b->b, a->n < b->n ? a->n : b->n);
    return r ? r : (a->n > b->n) - (a->n < b->n);
}

/* A sorted list of the non-special tokens, for the concat rule's lookups. */
static tokbytes *sorted_tokens(const ngpt_tokenizer *t)
{
    int32_t n = 256 + t->n_merges;
    tokbytes *v = malloc((size_t)n * sizeof *v);
    for (int32_t id = 0; id < n; id++) ngpt_tokenizer_token(t, id, &v[id].b, &v[id].n), v[id].id = id;
    qsort(v, (size_t)n, sizeof *v, cmp_tokbytes);
    return v;
}

static int32_t find_token(const ngpt_tokenizer *t, const tokbytes *v, const uint8_t *s, size_t n)
{
    tokbytes key = {s, n, 0};
    const tokbytes *hit = bsearch(&key, v, (size_t)(256 + t->n_merges), sizeof *v, cmp_tokbytes);
    return hit ? hit->id : -1;
}

/* The merges in order, each over the whole piece, left to right. */
static size_t naive_pairs(const ngpt_tokenizer *t, const uint8_t *p, size_t m, int32_t *out)
{
    for (size_t i = 0; i < m; i++) out[i] = t->byte_id[p[i]];
    size_t n = m;
    for (int32_t k = 0; k < t->n_merges && n > 1; k++) {
        int32_t a = (int32_t)t->merges[2 * k], b = (int32_t)t->merges[2 * k + 1];
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
            if (i + 1 < n && out[i] == a && out[i + 1] == b) out[w++] = 256 + k, i++;
            else out[w++] = out[i];
        }
        n = w;
    }
    return n;
}

/* tiktoken: the whole piece if it is a token, else the adjacent pair whose
 * bytes together are the lowest-ranked token, leftmost first. */
static size_t naive_concat(const ngpt_tokenizer *t, const tokbytes *v, const uint8_t *p, size_t m,
                           int32_t *out)
{
    int32_t whole = find_token(t, v, p, m);
    if (whole >= 0) {
        out[0] = whole;
        return 1;
    }
    size_t start[4096], n = m;
    for (size_t i = 0; i <= m; i++) start[i] = i;
    for (;;) {
        int32_t best = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            int32_t r = find_token(t, v, p + start[i], start[i + 2] - start[i]);
            if (r >= 0 && (best < 0 || r < best)) best = r, at = i;
        }
        if (best < 0) break;
        memmove(start + at + 1, start + at + 2, (n - at - 1) * sizeof *start);
        n--;
    }
    for (size_t i = 0; i < n; i++) out[i] = find_token(t, v, p + start[i], start[i + 1] - start[i]);
    return n;
}

/* The naive encoding of a whole text: the library's pieces (checked above
 * against the reference), each encoded naively. */
static size_t naive_encode(const ngpt_tokenizer *t, const tokbytes *v, const uint8_t *s, size_t n,
                           int32_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t e = t->pretok == NGPT_PRETOK_GPT2 ? ref_match(s, n, i) : ngpt_pretok_next(t->pretok, s, n, i);
        k += t->rule == NGPT_MERGE_CONCAT ? naive_concat(t, v, s + i, e - i, out + k)
                                          : naive_pairs(t, s + i, e - i, out + k);
        i = e;
    }
    return k;
}

/* Encoding equals the naive one, and decoding gives the bytes back, on
 * random strings (short ones take the stack path, long ones the heap). */
static void encode_against_naive(const ngpt_tokenizer *t, const char *what, int iters, size_t max_len)
{
    tokbytes *v = sorted_tokens(t);
    /* random text of up to max_len + 33 bytes */
    uint8_t *s = malloc(max_len + 64), *back = malloc(max_len + 64);
    int32_t *ids = malloc((max_len + 64) * sizeof *ids), *ref = malloc((max_len + 64) * sizeof *ref);
    int differ = 0, lost = 0, failed = 0;
    for (int it = 0; it < iters; it++) {
        size_t n = 0, want = rnd_below(max_len);
        if (it % 2) n = rnd_text(s, want + 33);
        else while (n < want) n += rnd_char(s + n);
        size_t got = 0, bytes = 0, k = naive_encode(t, v, s, n, ref);
        if (ngpt_tokenizer_encode(t, s, n, ids, n, &got) ||
            ngpt_tokenizer_decode(t, ids, got, back, n, &bytes)) {
            if (failed++ < 3) fprintf(stderr, "%s: %s\n", what, ngpt_last_error());
            continue;
        }
        if (got != k || memcmp(ids, ref, k * sizeof *ids)) {
            if (differ++ < 3) {
                fprintf(stderr, "%s: %zu ids, the naive encoder %zu, for bytes:", what, got, k);
                for (size_t i = 0; i < n && i < 64; i++) fprintf(stderr, " %02x", s[i]);
                fputc('\n', stderr);
            }
        }
        if (bytes != n || memcmp(back, s, n)) lost++;
    }
    CHECK(failed == 0 && differ == 0 && lost == 0, "%s: encode equals the naive encoder and decode "
          "inverts it on %d random strings (%d failed, %d differ, %d not restored)", what, iters,
          failed, differ, lost);
    free(v), free(s), free(back), free(ids), free(ref);
}

/* ------------------------------------------------------------- training */

static uint8_t *corpus(size_t n, uint64_t seed, size_t *len)
{
    uint8_t *c = malloc(n + 64);
    uint64_t keep = rng_state;
    rng_state = seed;
    *len = rnd_text(c, n);
    rng_state = keep;
    return c;
}

static ngpt_tokenizer *train(const uint8_t *text, size_t n, int32_t vocab, ngpt_pretokenizer p)
{
    ngpt_tokenizer_train_config cfg = ngpt_tokenizer_train_config_default();
    cfg.vocab_size = vocab;
    cfg.pretok = p;
    const void *texts[1] = {text};
    ngpt_tokenizer *t = NULL;
    CHECK_OK(ngpt_tokenizer_train(&t, &cfg, texts, &n, 1));
    return t;
}

static uint64_t checksum_of(const ngpt_tokenizer *t)
{
    ngpt_tokenizer_info info = {0};
    CHECK_OK(ngpt_tokenizer_describe(t, &info));
    return info.checksum;
}

static void training(void)
{
    /* the classic example: "aaabdaaabac", no pre-tokenizer. (a,a) occurs
     * 4 times (overlaps count), then (a,b) and (aa,a) twice each: the
     * smaller left id wins, (a,b); then (aa,ab) twice. */
    ngpt_tokenizer_train_config cfg = ngpt_tokenizer_train_config_default();
    cfg.vocab_size = 256 + 3 + 2;
    cfg.pretok = NGPT_PRETOK_NONE;
    const char *ex = "aaabdaaabac";
    const void *texts[1] = {ex};
    size_t sizes[1] = {11};
    ngpt_tokenizer *t = NULL;
    CHECK_OK(ngpt_tokenizer_train(&t, &cfg, texts, sizes, 1));
    if (t) {
        const uint32_t want[6] = {'a', 'a', 'a', 'b', 256, 257};
        CHECK(t->n_merges == 3 && !memcmp(t->merges, want, sizeof want),
              "the example's merges: (%u,%u) (%u,%u) (%u,%u)", t->merges[0], t->merges[1],
              t->merges[2], t->merges[3], t->merges[4], t->merges[5]);
        int32_t ids[11];
        size_t n = 0;
        CHECK_OK(ngpt_tokenizer_encode(t, ex, 11, ids, 11, &n));
        CHECK(n == 5 && ids[0] == 258 && ids[1] == 'd' && ids[2] == 258 && ids[3] == 'a' && ids[4] == 'c',
              "\"aaabdaaabac\" encodes as [aaab] d [aaab] a c (%zu ids)", n);
        ngpt_tokenizer_info info;
        CHECK_OK(ngpt_tokenizer_describe(t, &info));
        CHECK(info.n_tokens == 261 && info.end_id == 259 && info.pad_id == 260 && info.n_special == 2,
              "specials follow the merges: end %d pad %d", (int)info.end_id, (int)info.pad_id);
        ngpt_tokenizer_free(t);
    }
    /* min_count: nothing occurs twice, nothing is merged */
    cfg.vocab_size = 4096;
    sizes[0] = 3;
    texts[0] = "abc";
    CHECK_OK(ngpt_tokenizer_train(&t, &cfg, texts, sizes, 1));
    CHECK(t && t->n_merges == 0 && t->n_tokens == 258, "no pair occurs twice: no merges");
    ngpt_tokenizer_free(t);
    /* pieces never cross texts */
    const void *two[2] = {"ab", "ab"};
    size_t two_n[2] = {2, 2};
    cfg.vocab_size = 300;
    cfg.end_token = cfg.pad_token = false;
    CHECK_OK(ngpt_tokenizer_train(&t, &cfg, two, two_n, 2));
    CHECK(t && t->n_merges == 1 && t->merges[0] == 'a' && t->merges[1] == 'b' && t->n_tokens == 257,
          "two texts \"ab\": one merge (a,b), no (b,a) across them, no specials");
    ngpt_tokenizer_free(t);
    /* no text at all: the bytes */
    CHECK_OK(ngpt_tokenizer_train(&t, &cfg, NULL, NULL, 0));
    CHECK(t && t->n_tokens == 256, "no text: the 256 bytes");
    ngpt_tokenizer_free(t);
    /* a pair whose token would be longer than 256 bytes is never merged */
    uint8_t *as = malloc(4096);
    memset(as, 'a', 4096);
    const void *one[1] = {as};
    size_t one_n[1] = {4096};
    cfg.vocab_size = 300;
    CHECK_OK(ngpt_tokenizer_train(&t, &cfg, one, one_n, 1));
    ngpt_tokenizer_info info = {0};
    if (t) ngpt_tokenizer_describe(t, &info);
    CHECK(t && info.max_token_bytes == 256 && info.n_merges == 8, "4096 a's: tokens up to 256 a's, "
          "8 merges (longest %d, %d merges)", (int)info.max_token_bytes, (int)info.n_merges);
    ngpt_tokenizer_free(t);
    free(as);

    /* golden checksums: the same merges on every build */
    size_t n;
    uint8_t *c = corpus(200000, 7, &n);
    static const struct { ngpt_pretokenizer p; uint64_t want; } golden[] = {
        {NGPT_PRETOK_GPT2, 0xef2682c29c0ea628ull},
        {NGPT_PRETOK_LINES, 0x70edfac412708923ull},
        {NGPT_PRETOK_NONE, 0x15c63e193c1469ebull},
    };
    for (size_t g = 0; g < 3; g++) {
        ngpt_tokenizer *a = train(c, n, 1024, golden[g].p), *b = train(c, n, 1024, golden[g].p);
        if (!a || !b) continue;
        uint64_t ha = checksum_of(a);
        CHECK(ha == checksum_of(b), "training twice gives the same tokenizer");
        CHECK_HASH(ha, golden[g].want);
        ngpt_tokenizer_free(a);
        ngpt_tokenizer_free(b);
    }
    free(c);
}

/* ----------------------------------------------------------------- files */

static void reseal(uint8_t *b, size_t n)
{
    uint64_t size = n, h;
    memcpy(b + 40, &size, 8);
    h = XXH3_64bits(b, n - 8);
    memcpy(b + n - 8, &h, 8);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* A changed copy of image (resealed) must be rejected with status want
 * and a message holding `words`. */
static void expect_rejected(const uint8_t *image, size_t n, size_t off, uint32_t value, int width,
                            ngpt_status want, const char *words)
{
    uint8_t *b = malloc(n);
    memcpy(b, image, n);
    if (width == 4) put32(b + off, value);
    else b[off] = (uint8_t)value;
    reseal(b, n);
    ngpt_tokenizer *t = (ngpt_tokenizer *)b;
    ngpt_status st = ngpt_tokenizer_load_mem(&t, b, n);
    CHECK(st == want && t == NULL && strstr(ngpt_last_error(), words) &&
              !strncmp(ngpt_last_error(), "ngpt_tokenizer_load_mem: ", 25),
          "byte %zu set to %u: %s (want %s), \"%s\" (want \"%s\")", off, value,
          ngpt_status_string(st), ngpt_status_string(want), ngpt_last_error(), words);
    free(b);
}

static void files(const ngpt_tokenizer *t)
{
    char path[256];
    snprintf(path, sizeof path, "%s/ngpt-test-tok-%d.tok", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    CHECK_OK(ngpt_tokenizer_save(t, path));
    size_t n = 0, n2 = 0;
    uint8_t *image = test_read_file(path, &n);
    CHECK_OK(ngpt_tokenizer_save_mem(t, NULL, 0, &n2));
    uint8_t *mem = malloc(n2);
    CHECK_OK(ngpt_tokenizer_save_mem(t, mem, n2, &n2));
    CHECK(image && n == n2 && !memcmp(image, mem, n), "save and save_mem write the same bytes");
    ngpt_tokenizer *a = NULL, *b = NULL;
    CHECK_OK(ngpt_tokenizer_load(&a, path));
    CHECK_OK(ngpt_tokenizer_load_mem(&b, mem, n2));
    CHECK(a && b && checksum_of(a) == checksum_of(t) && checksum_of(b) == checksum_of(t),
          "a loaded tokenizer is the saved one");
    uint64_t h;
    memcpy(&h, image + n - 8, 8);
    CHECK(h == checksum_of(t), "the checksum is the file's last 8 bytes");
    ngpt_tokenizer_free(a);
    ngpt_tokenizer_free(b);
    free(mem);
    unlink(path);
    if (!image) return;

    /* truncated, padded, corrupted */
    int bad = 0;
    for (size_t k = 0; k < n; k += (k < 400 ? 1 : 97)) {
        ngpt_status st = ngpt_tokenizer_load_mem(&a, image, k);
        if (st != NGPT_ERR_BAD_FORMAT || a) bad++;
    }
    CHECK(bad == 0, "every truncation is BAD_FORMAT (%d were not)", bad);
    uint8_t *longer = calloc(n + 1, 1);
    memcpy(longer, image, n);
    CHECK(ngpt_tokenizer_load_mem(&a, longer, n + 1) == NGPT_ERR_BAD_FORMAT &&
              strstr(ngpt_last_error(), "truncated or padded"), "a padded file: %s", ngpt_last_error());
    free(longer);
    image[n / 2] ^= 1;
    CHECK(ngpt_tokenizer_load_mem(&a, image, n) == NGPT_ERR_CHECKSUM && strstr(ngpt_last_error(), "corrupted"),
          "a flipped bit: %s", ngpt_last_error());
    image[n / 2] ^= 1;
    image[0] = 'X';
    CHECK(ngpt_tokenizer_load_mem(&a, image, n) == NGPT_ERR_BAD_FORMAT && strstr(ngpt_last_error(), "NGPTTOKN"),
          "wrong magic: %s", ngpt_last_error());
    image[0] = 'N';
    CHECK(ngpt_tokenizer_load(&a, "/nonexistent/x.tok") == NGPT_ERR_IO && strstr(ngpt_last_error(), "x.tok"),
          "a missing file: %s", ngpt_last_error());

    /* inconsistent, each with its message */
    const size_t merges = NGPT_TOK_HEADER + 256, m = (size_t)t->n_merges;
    const uint32_t first_merge = 256;
    expect_rejected(image, n, 8, 3, 4, NGPT_ERR_VERSION, "version 3");
    expect_rejected(image, n, 12, t->n_tokens + 1, 4, NGPT_ERR_BAD_FORMAT, "are not 256 bytes");
    expect_rejected(image, n, 16, NGPT_TOK_MAX_TOKENS + 1, 4, NGPT_ERR_BAD_FORMAT, "limits");
    expect_rejected(image, n, 16, (uint32_t)m + 1000, 4, NGPT_ERR_BAD_FORMAT, "are not 256 bytes");
    expect_rejected(image, n, 36, 1, 1, NGPT_ERR_BAD_FORMAT, "reserved header byte 36");
    expect_rejected(image, n, 32, 7, 1, NGPT_ERR_BAD_FORMAT, "unknown pre-tokenizer");
    expect_rejected(image, n, 33, 9, 1, NGPT_ERR_BAD_FORMAT, "unknown merge rule");
    expect_rejected(image, n, NGPT_TOK_HEADER + 1, image[NGPT_TOK_HEADER], 1, NGPT_ERR_BAD_FORMAT,
                    "each byte must be exactly one");
    expect_rejected(image, n, merges, first_merge, 4, NGPT_ERR_BAD_FORMAT,
                    "may only join bytes and earlier merges");
    expect_rejected(image, n, merges + 8 * 5 + 4, 5000000, 4, NGPT_ERR_BAD_FORMAT,
                    "may only join bytes and earlier merges");
    /* merge 1 made equal to merge 0 */
    uint32_t m0a, m0b;
    memcpy(&m0a, image + merges, 4);
    memcpy(&m0b, image + merges + 4, 4);
    uint8_t *dup = malloc(n);
    memcpy(dup, image, n);
    put32(dup + merges + 8, m0a);
    put32(dup + merges + 12, m0b);
    reseal(dup, n);
    CHECK(ngpt_tokenizer_load_mem(&a, dup, n) == NGPT_ERR_BAD_FORMAT &&
              strstr(ngpt_last_error(), "merges 0 and 1 both join"), "a duplicate merge: %s", ngpt_last_error());
    free(dup);
    /* the special tokens: end id out of range, end == pad, an empty name */
    expect_rejected(image, n, 24, 5, 4, NGPT_ERR_BAD_FORMAT, "is not one of its special tokens");
    expect_rejected(image, n, 28, (uint32_t)t->end_id, 4, NGPT_ERR_BAD_FORMAT, "both the end and the padding");
    uint32_t len0;
    memcpy(&len0, image + merges + 8 * m, 4);
    expect_rejected(image, n, merges + 8 * m + 4 + len0, 1, 4, NGPT_ERR_BAD_FORMAT,
                    "bytes follow its last special");
    expect_rejected(image, n, merges + 8 * m, 100000, 4, NGPT_ERR_BAD_FORMAT, "special token 0 does not fit");
    free(image);

    /* a token longer than 256 bytes: (a,a), (aa,aa), ... 9 merges */
    static ngpt_tok_spec zero;
    ngpt_tok_spec spec = zero;
    uint32_t chain[18];
    for (int i = 0; i < 256; i++) spec.id_byte[i] = (uint8_t)i;
    chain[0] = chain[1] = 'a';
    for (uint32_t k = 1; k < 9; k++) chain[2 * k] = chain[2 * k + 1] = 255 + k;
    spec.merges = chain;
    spec.n_merges = 9;
    spec.end_id = spec.pad_id = -1;
    ngpt_status st = ngpt_tok_build(&a, &spec, "the chain");
    CHECK(st == NGPT_ERR_BAD_FORMAT && !a && strstr(ngpt_last_error(), "merge 8 makes a token of 512 bytes"),
          "a 512-byte token: %s", ngpt_last_error());
    spec.n_merges = 8;
    CHECK_OK(ngpt_tok_build(&a, &spec, "the chain"));
    ngpt_tokenizer_free(a);
    /* special tokens: an empty name, two with one name */
    spec.n_special = 2;
    spec.special[0] = (const uint8_t *)"<a>";
    spec.special_len[0] = 3;
    spec.special[1] = (const uint8_t *)"";
    st = ngpt_tok_build(&a, &spec, "the specials");
    CHECK(st == NGPT_ERR_BAD_FORMAT && strstr(ngpt_last_error(), "special token 265 of the specials has a name "
          "of 0 bytes"), "an empty special name: %s", ngpt_last_error());
    spec.special[1] = (const uint8_t *)"<a>";
    spec.special_len[1] = 3;
    st = ngpt_tok_build(&a, &spec, "the specials");
    CHECK(st == NGPT_ERR_BAD_FORMAT && strstr(ngpt_last_error(), "special tokens 264 and 265 have the same name"),
          "two specials with one name: %s", ngpt_last_error());
    spec.n_special = 0;
    /* concat rule: two tokens with the same bytes, (a,ab) and (aa,b) */
    uint32_t same[8] = {'a', 'b', 'a', 'a', 'a', 256, 257, 'b'};
    spec.merges = same;
    spec.n_merges = 4;
    spec.rule = NGPT_MERGE_CONCAT;
    st = ngpt_tok_build(&a, &spec, "the twins");
    CHECK(st == NGPT_ERR_BAD_FORMAT && strstr(ngpt_last_error(), "tokens 258 and 259 have the same bytes"),
          "the concat rule with twin tokens: %s", ngpt_last_error());
    spec.rule = NGPT_MERGE_PAIRS;
    CHECK_OK(ngpt_tok_build(&a, &spec, "the twins"));
    if (a) {
        int32_t ids[4];
        size_t k = 0;
        CHECK_OK(ngpt_tokenizer_encode(a, "aab", 3, ids, 4, &k));
        CHECK(k == 1 && ids[0] == 258, "pairs rule: aab is a + ab (merge 0 first), then merge 2: "
              "%zu ids, the first %d", k, (int)ids[0]);
        CHECK(ngpt_tok_whole(a, 258) && !ngpt_tok_whole(a, 259) && ngpt_tok_lookup(a, (const uint8_t *)"aab", 3) == 258,
              "of the twins \"aab\", 258 encodes to itself and 259 does not");
    }
    ngpt_tokenizer_free(a);
}

/* ------------------------------------------------------- GPT-2's files */

/* GPT-2's character for byte b (bytes_to_unicode) appended as UTF-8 or, when
 * escape is set, as \uXXXX. */
static size_t gpt2_char(char *out, uint8_t b, bool escape)
{
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    uint32_t c = b;
    if (!printable) {
        int n = 0;
        for (int x = 0; x < b; x++)
            if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) n++;
        c = 256 + (uint32_t)n;
    }
    if (escape && c >= 0x80) return (size_t)sprintf(out, "\\u%04x", (unsigned)c);
    if (c == '"' || c == '\\') return (size_t)sprintf(out, "\\%c", (char)c);
    if (c < 0x80) return (size_t)sprintf(out, "%c", (char)c);
    if (c < 0x800) return (size_t)sprintf(out, "%c%c", (char)(0xC0 | c >> 6), (char)(0x80 | (c & 0x3F)));
    return 0;
}

/* GPT-2's files for a trained tokenizer: ids 0..255 in GPT-2's byte order
 * (the printable bytes, then the others), the merges after them, then
 * "<|endoftext|>". *json and *bpe are malloc'd. */
/* End tokens as a list (header byte 34 counts those after the end of
 * text, their ids follow the specials): a round trip, the file with one
 * end token unchanged byte for byte, and every inconsistency refused. */
static void end_tokens(const ngpt_tokenizer *trained)
{
    ngpt_tokenizer *t = NULL;
    size_t n = 0;
    CHECK_OK(ngpt_tokenizer_save_mem(trained, NULL, 0, &n));
    uint8_t *one = malloc(n);
    CHECK_OK(ngpt_tokenizer_save_mem(trained, one, n, &n));
    CHECK_OK(ngpt_tokenizer_load_mem(&t, one, n));
    if (!t) return free(one);
    const int32_t *ids = NULL;
    int32_t k = 0;
    CHECK(!ngpt_tokenizer_end_tokens(t, &ids, &k) && k == 1 && ids[0] == t->end_id,
          "a trained tokenizer ends at its end of text (%d ends)", (int)k);
    CHECK(one[34] == 0, "one end token: byte 34 is 0, as in every earlier file");
    const int32_t two[2] = {t->end_id, t->pad_id};
    CHECK_OK(ngpt_tok_with_ends(&t, two, 2, "two ends"));
    ngpt_tokenizer_info info;
    CHECK(!ngpt_tokenizer_end_tokens(t, &ids, &k) && k == 2 && ids[0] == two[0] &&
              ids[1] == two[1] && !ngpt_tokenizer_describe(t, &info) && info.n_end_tokens == 2 &&
              info.end_id == two[0], "two end tokens: %d", (int)k);
    size_t m = 0;
    CHECK_OK(ngpt_tokenizer_save_mem(t, NULL, 0, &m));
    uint8_t *img = malloc(m);
    CHECK_OK(ngpt_tokenizer_save_mem(t, img, m, &m));
    CHECK(m == n + 4 && img[34] == 1, "the second end token takes 4 bytes and byte 34 (%zu, %u)",
          m, img[34]);
    ngpt_tokenizer *back = NULL;
    CHECK_OK(ngpt_tokenizer_load_mem(&back, img, m));
    CHECK(back && !ngpt_tokenizer_end_tokens(back, &ids, &k) && k == 2 && ids[1] == two[1],
          "two end tokens read back");
    ngpt_tokenizer_free(back);
    CHECK_OK(ngpt_tok_with_ends(&t, two, 1, "one end"));
    CHECK(t->checksum == checksum_of(trained), "back to one end token: the same file");
    /* inconsistent lists: too many, not a special token, twice, an extra without an end */
    const size_t extra_at = m - 8 - 4;      /* the one extra id: the last before the checksum */
    expect_rejected(img, m, 34, NGPT_END_TOKENS_MAX, 1, NGPT_ERR_BAD_FORMAT, "more end tokens");
    expect_rejected(img, m, extra_at, 'a', 4, NGPT_ERR_BAD_FORMAT,
                    "end token 97 is not one of its special tokens");
    expect_rejected(img, m, extra_at, (uint32_t)two[0], 4, NGPT_ERR_BAD_FORMAT, "listed twice");
    expect_rejected(img, m, 24, UINT32_MAX, 4, NGPT_ERR_BAD_FORMAT, "only beside an end token");
    expect_rejected(img, m, 34, 0, 1, NGPT_ERR_BAD_FORMAT, "bytes follow its last special");
    CHECK(ngpt_tok_with_ends(&t, two, NGPT_END_TOKENS_MAX + 1, "nine") == NGPT_ERR_BAD_FORMAT,
          "more than NGPT_END_TOKENS_MAX: %s", ngpt_last_error());
    free(img);
    free(one);
    ngpt_tokenizer_free(t);
}

static void gpt2_files(const ngpt_tokenizer *t, char **json, size_t *nj, char **bpe, size_t *nb)
{
    int32_t order[256], map[256], k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < 256; b++) {
            bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            if (printable == (pass == 0)) order[k] = b, map[b] = k++;
        }
    size_t cap = 64 + (size_t)t->n_tokens * 1600;
    char *j = malloc(cap), *p = j;
    char *m = malloc(cap), *q = m;
    p += sprintf(p, "{\n");
    for (int32_t id = 0; id < 256 + t->n_merges; id++) {
        const uint8_t *bytes;
        size_t len;
        ngpt_tokenizer_token(t, id < 256 ? order[id] : id, &bytes, &len);
        *p++ = '"';
        for (size_t i = 0; i < len; i++) p += gpt2_char(p, bytes[i], id % 3 == 0);
        p += sprintf(p, "\": %d,%s", (int)id, id % 7 ? " " : "\n");
    }
    p += sprintf(p, "\"<|endoftext|>\": %d}\n", (int)(256 + t->n_merges));
    q += sprintf(q, "#version: 0.2\n");
    for (int32_t k2 = 0; k2 < t->n_merges; k2++) {
        for (int side = 0; side < 2; side++) {
            int32_t id = (int32_t)t->merges[2 * k2 + side];
            const uint8_t *bytes;
            size_t len;
            ngpt_tokenizer_token(t, id, &bytes, &len);
            for (size_t i = 0; i < len; i++) q += gpt2_char(q, bytes[i], false);
            *q++ = side ? '\n' : ' ';
        }
    }
    (void)map;
    *json = j, *nj = (size_t)(p - j), *bpe = m, *nb = (size_t)(q - m);
}

static void gpt2_load_rejects(const char *json, const char *bpe, const char *words)
{
    ngpt_tokenizer *t = (ngpt_tokenizer *)json;
    ngpt_status st = ngpt_tokenizer_load_gpt2_mem(&t, json, strlen(json), bpe, strlen(bpe));
    CHECK(st == NGPT_ERR_BAD_FORMAT && !t && strstr(ngpt_last_error(), words) &&
              !strncmp(ngpt_last_error(), "ngpt_tokenizer_load_gpt2_mem: ", 30),
          "GPT-2 files rejected: %s, \"%s\" (want \"%s\")", ngpt_status_string(st), ngpt_last_error(), words);
}

static void gpt2(const ngpt_tokenizer *trained)
{
    char *json, *bpe;
    size_t nj, nb;
    gpt2_files(trained, &json, &nj, &bpe, &nb);
    ngpt_tokenizer *g = NULL;
    CHECK_OK(ngpt_tokenizer_load_gpt2_mem(&g, json, nj, bpe, nb));
    if (g) {
        ngpt_tokenizer_info info;
        ngpt_tokenizer_describe(g, &info);
        CHECK(info.n_tokens == trained->n_merges + 257 && info.end_id == info.n_tokens - 1 &&
                  info.rule == NGPT_MERGE_CONCAT && info.pretok == NGPT_PRETOK_GPT2 && g->id_byte[0] == '!' &&
                  g->id_byte[188] == 0,
              "GPT-2 files: ids 0..255 in GPT-2's byte order, <|endoftext|> last, the concat rule");
        encode_against_naive(g, "GPT-2 files (concat rule)", 600, 300);
        ngpt_tokenizer_free(g);
    }
    free(json);
    free(bpe);

    /* what is wrong with a file */
    gpt2_load_rejects("", "", "'{' expected");
    gpt2_load_rejects("{}", "", "no tokens");
    gpt2_load_rejects("{\"a\": 1,}", "", "a token (a string) expected");
    gpt2_load_rejects("{\"a\" 1}", "", "':' expected");
    gpt2_load_rejects("{\"a\": x}", "", "a token id");
    gpt2_load_rejects("{\"a\": 99999999999}", "", "a token id");
    gpt2_load_rejects("{\"a\": 1} x", "", "text after the object");
    gpt2_load_rejects("{\"\\q\": 1}", "", "an unknown escape");
    gpt2_load_rejects("{\"\\ud800\": 1}", "", "a lone surrogate");
    gpt2_load_rejects("{\"\\u0200\": 1}", "", "not one of GPT-2's 256 byte characters");
    gpt2_load_rejects("{\"\xff\": 1}", "", "invalid UTF-8");
    gpt2_load_rejects("{\"a\": 1, \"b\": 1}", "", "id 1 is given twice");
    gpt2_load_rejects("{\"a\": 0, \"b\": 5}", "", "id 5 is out of range");
    gpt2_load_rejects("{\"a\": 0, \"b\": 1}", "", "fewer than the 256 bytes");
    /* 256 entries, but id 3 is two bytes */
    char *two = malloc(16384);
    strcpy(two, "{");
    for (int id = 0; id < 256; id++) {
        char c[16], entry[64];
        c[gpt2_char(c, (uint8_t)id, false)] = '\0';
        sprintf(entry, "%s\"%s%s\": %d", id ? ", " : "", c, id == 3 ? "x" : "", id);
        strcat(two, entry);
    }
    strcat(two, ", \"ab\": 256}");
    gpt2_load_rejects(two, "", "token 3 is not a single byte");
    for (char *x = strstr(two, "x\""); x; x = NULL) memmove(x, x + 1, strlen(x));   /* fix id 3 */
    ngpt_tokenizer *ok = NULL;
    CHECK_OK(ngpt_tokenizer_load_gpt2_mem(&ok, two, strlen(two), "#version: 0.2\r\na b\r\n", 20));
    if (ok) {
        ngpt_tokenizer_info info;
        ngpt_tokenizer_describe(ok, &info);
        CHECK(info.n_tokens == 257 && info.n_merges == 1 && info.end_id == -1 && ok->id_byte[0] == 0,
              "a 257-token GPT-2 layout with CRLF lines loads");
    }
    ngpt_tokenizer_free(ok);
    gpt2_load_rejects(two, "a\n", "line 1 is not a merge of two tokens");
    gpt2_load_rejects(two, "a c\n", "makes a token that the encoder.json buffer does not list");
    gpt2_load_rejects(two, "b a\n", "makes a token that the encoder.json buffer does not list");
    gpt2_load_rejects(two, "a \xc8\x80\n", "is not a merge of two tokens of GPT-2's byte characters");
    two[strlen(two) - 1] = '\0';
    strcat(two, ", \"ba\": 257}");
    gpt2_load_rejects(two, "b a\na b\n", "gives another id, not id 256");
    free(two);
}

/* -------------------------------------------------------------- buffers */

static void buffers(const ngpt_tokenizer *t)
{
    const char *text = "the tokenizer's merges, 1024 of them!";
    size_t n = strlen(text), count = 0, k = 0;
    int32_t ids[64], few[3];
    CHECK_OK(ngpt_tokenizer_encode(t, text, n, NULL, 0, &count));
    CHECK_OK(ngpt_tokenizer_encode(t, text, n, ids, 64, &k));
    CHECK(count == k && k > 3 && k < n, "counting gives the number of ids (%zu, %zu)", count, k);
    size_t k2 = 0;
    CHECK(ngpt_tokenizer_encode(t, text, n, few, 3, &k2) == NGPT_ERR_TOO_LONG && k2 == k &&
              !memcmp(few, ids, sizeof few) && strstr(ngpt_last_error(), "the buffer holds 3"),
          "a short buffer: TOO_LONG, the count needed, the first ids: %s", ngpt_last_error());
    CHECK_OK(ngpt_tokenizer_encode(t, NULL, 0, ids, 0, &k2));
    CHECK(k2 == 0, "nothing encodes to nothing");
    char out[64];
    size_t bytes = 0;
    CHECK_OK(ngpt_tokenizer_decode(t, ids, k, NULL, 0, &bytes));
    CHECK(bytes == n, "decode counts bytes");
    CHECK(ngpt_tokenizer_decode(t, ids, k, out, 5, &bytes) == NGPT_ERR_TOO_LONG && bytes == n &&
              !memcmp(out, text, 5), "decode into 5 bytes: TOO_LONG, the first 5");
    int32_t bad[3] = {ids[0], t->n_tokens, 1};
    memset(out, 'x', sizeof out);
    CHECK(ngpt_tokenizer_decode(t, bad, 3, out, 64, &bytes) == NGPT_ERR_BAD_TOKEN && out[0] == 'x' &&
              strstr(ngpt_last_error(), "at index 1"), "an id out of range: %s", ngpt_last_error());
    bad[1] = -1;
    CHECK(ngpt_tokenizer_decode(t, bad, 3, out, 64, &bytes) == NGPT_ERR_BAD_TOKEN, "id -1");
    /* special tokens: never from text, their names when decoded */
    const char *eot = "<|endoftext|><|pad|>";
    CHECK_OK(ngpt_tokenizer_encode(t, eot, strlen(eot), ids, 64, &k));
    bool special = false;
    for (size_t i = 0; i < k; i++) special |= ids[i] == t->end_id || ids[i] == t->pad_id;
    CHECK(!special, "the special tokens' names encode as text");
    int32_t sp[2] = {t->end_id, t->pad_id};
    CHECK_OK(ngpt_tokenizer_decode(t, sp, 2, out, 64, &bytes));
    CHECK(bytes == strlen(eot) && !memcmp(out, eot, bytes), "special tokens decode to their names");
    /* no allocation for short pieces, nor in decode */
    uint8_t text2[4096];
    size_t n2 = rnd_text(text2, 4000);
    int32_t ids2[4096];
    int before = allocations;
    CHECK_OK(ngpt_tokenizer_encode(t, text2, n2, ids2, 4096, &k));
    CHECK_OK(ngpt_tokenizer_decode(t, ids2, k, text2, sizeof text2, &bytes));
    CHECK(allocations == before, "encoding short pieces and decoding allocate nothing (%d calls)",
          allocations - before);
}

/* Text over two letters: every byte pair is inside some token, so a piece
 * is never cut and long ones take the heap path. */
static void two_letters(void)
{
    size_t n = 30000;
    uint8_t *s = malloc(n);
    for (size_t i = 0; i < n; i++) s[i] = rnd_below(3) ? 'a' : 'b';
    ngpt_tokenizer *t = train(s, n, 400, NGPT_PRETOK_NONE);
    if (!t) return;
    CHECK(ngpt_tok_joinable(t, 'a', 'a') && ngpt_tok_joinable(t, 'a', 'b') &&
              ngpt_tok_joinable(t, 'b', 'a') && ngpt_tok_joinable(t, 'b', 'b') && !ngpt_tok_joinable(t, 'a', 'c'),
          "two letters: every pair of them is joinable");
    tokbytes *v = sorted_tokens(t);
    int32_t *ids = malloc(n * sizeof *ids), *ref = malloc(n * sizeof *ref);
    int differ = 0;
    for (int it = 0; it < 60; it++) {
        size_t m = 1 + rnd_below(it < 50 ? 600 : n), k = 0;
        for (size_t i = 0; i < m; i++) s[i] = rnd_below(3) ? 'a' : 'b';
        size_t want = naive_encode(t, v, s, m, ref);
        if (ngpt_tokenizer_encode(t, s, m, ids, m, &k) || k != want || memcmp(ids, ref, k * sizeof *ids))
            differ++;
    }
    CHECK(differ == 0, "two letters, pieces of up to 30000 bytes on the heap path: %d of 60 differ from "
          "the naive encoder", differ);
    free(s), free(v), free(ids), free(ref);
    ngpt_tokenizer_free(t);
}

/* A long piece (cut where tokens cannot span) against the naive encoder. */
static void long_piece(const ngpt_tokenizer *t)
{
    size_t n = 20000;
    uint8_t *s = malloc(n + 64);
    n = rnd_text(s, n);
    tokbytes *v = sorted_tokens(t);
    int32_t *ids = malloc(n * sizeof *ids), *ref = malloc(n * sizeof *ref);
    size_t k = 0, want = naive_encode(t, v, s, n, ref);
    CHECK_OK(ngpt_tokenizer_encode(t, s, n, ids, n, &k));
    CHECK(k == want && !memcmp(ids, ref, k * sizeof *ids), "a %zu-byte piece: %zu ids, naive %zu", n, k, want);
    free(s), free(v), free(ids), free(ref);
}

int main(void)
{
    unicode_table();
    pretok_against_reference();
    training();

    size_t n;
    uint8_t *c = corpus(60000, 11, &n);
    ngpt_tokenizer *tg = train(c, n, 600, NGPT_PRETOK_GPT2), *tl = train(c, n, 600, NGPT_PRETOK_LINES),
                   *tn = train(c, n, 600, NGPT_PRETOK_NONE);
    if (tg && tl && tn) {
        encode_against_naive(tg, "trained, gpt2 pieces", 1500, 300);
        encode_against_naive(tl, "trained, lines", 800, 400);
        encode_against_naive(tn, "trained, no pre-tokenizer", 800, 400);
        long_piece(tn);
        two_letters();
        files(tg);
        end_tokens(tg);
        gpt2(tg);
        buffers(tg);
    }
    ngpt_tokenizer_free(tg);
    ngpt_tokenizer_free(tl);
    ngpt_tokenizer_free(tn);
    free(c);
    return test_summary("test_tokenizer");
}
