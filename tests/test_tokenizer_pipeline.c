/* test_tokenizer_pipeline.c — the pieces Llama 3's and Qwen's tokenizer.json
 * add to byte-level BPE (src/tokenizer/, docs/TOKENIZER.md):
 *  - GPT-4's pattern (NGPT_PRETOK_LLAMA3, NGPT_PRETOK_QWEN2) against a
 *    literal transcription of the regex (alternatives in order, each with
 *    its backtracking) on random strings of awkward characters, and by hand
 *    on tricky strings; the classes: White_Space, a letter of Unicode 17;
 *  - NFC (utf8proc): composition, reordering, expansion, bytes that are not
 *    UTF-8, and that text below U+0300 is left alone;
 *  - special tokens split out of text: leftmost-longest, lstrip, rstrip,
 *    normalized ones, a stretch that becomes a name after NFC, and none
 *    when the caller (chat) or the file says so;
 *  - merges in Hugging Face's order: a token made by several merges (an
 *    alias), a merge joining what a later merge makes, ignore_merges;
 *  - the BOS, the flags and the alias count through the file format, and
 *    every bad value refused with its own message;
 *  - decoding a prefix that ends inside a character: its exact bytes. */
#define XXH_INLINE_ALL
#include <utf8proc.h>
#include <xxhash.h>

#include "test.h"
#include "tok_ref.h"
#include "tokenizer/tokenizer.h"

/* ------------------------------------------------------ GPT-4's pattern */

static bool crlf(const uint8_t *t, size_t n, size_t i) { return i < n && (t[i] == '\r' || t[i] == '\n'); }

/* The match at i of (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
 * \p{N}{1,max}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t ref_match(const uint8_t *t, size_t n, size_t i, int max)
{
    static const char *const con[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    for (int k = 0; k < 7 && t[i] == '\''; k++) {
        size_t m = strlen(con[k]), j = 0;
        while (j < m && i + 1 + j < n && (t[i + 1 + j] | 0x20) == con[k][j] &&
               ((t[i + 1 + j] >= 'a' && t[i + 1 + j] <= 'z') || (t[i + 1 + j] >= 'A' && t[i + 1 + j] <= 'Z')))
            j++;
        if (j == m) return i + 1 + m;
    }
    size_t len, e;
    int c = ref_class(t, n, i, &len, true);
    if (c != NGPT_UC_L && c != NGPT_UC_N && !crlf(t, n, i) && (e = ref_plus(t, n, i + len, NGPT_UC_L, true)) > i + len)
        return e;                                   /* the optional character taken */
    if ((e = ref_plus(t, n, i, NGPT_UC_L, true)) > i) return e;
    e = i;
    for (int k = 0; k < max && e < n && ref_class(t, n, e, &len, true) == NGPT_UC_N; k++) e += len;
    if (e > i) return e;
    if (t[i] == ' ' && (e = ref_plus(t, n, i + 1, NGPT_UC_O, true)) > i + 1) {
        while (crlf(t, n, e)) e++;
        return e;
    }
    if ((e = ref_plus(t, n, i, NGPT_UC_O, true)) > i) {
        while (crlf(t, n, e)) e++;
        return e;
    }
    size_t ends[512], n_ends = 0, j = i;      /* the white space run's character ends */
    while (j < n && ref_class(t, n, j, &len, true) == NGPT_UC_S && n_ends < 512) j += len, ends[n_ends++] = j;
    for (size_t k = n_ends + 1; k-- > 0;) {     /* \s* longest first (k = 0: none), then [\r\n]+ */
        size_t at = k ? ends[k - 1] : i;
        if (crlf(t, n, at)) {
            while (crlf(t, n, at)) at++;
            return at;
        }
    }
    for (size_t k = n_ends; k-- > 0;)           /* \s+(?!\S) */
        if (ends[k] == n || ref_class(t, n, ends[k], &len, true) == NGPT_UC_S) return ends[k];
    return n_ends ? ends[n_ends - 1] : i + 1;   /* \s+ */
}

static size_t rnd_char(uint8_t *out)
{
    static const char *const pool[] = {
        "a", "s", "S", "t", "r", "e", "E", "v", "l", "L", "m", "d", "D", "x", "0", "7", "9",
        " ", " ", " ", "\n", "\r", "\t", "'", "'", ".", "(", "\"", "-",
        "\xc3\xa9" /* é */, "\xe6\x97\xa5" /* 日 */, "\xd9\xa3" /* ٣ */, "\xc2\xbd" /* ½ */,
        "\xe3\x80\x80" /* U+3000 */, "\xc2\xa0" /* NBSP */, "\xc2\x85" /* NEL: white space */,
        "\xef\xbb\xbf" /* BOM: not */, "\xe2\x80\xa8" /* LS */, "\xcc\x81" /* combining acute */,
        "\xf0\x9f\x98\x80" /* 😀 */, "\xf0\x96\xba\xa0" /* U+16EA0: a letter of Unicode 17 */,
        "\xff", "\x80", "\xed\xa0\x80" /* a surrogate */, "\0",
    };
    const char *s = pool[rnd_below(sizeof pool / sizeof pool[0])];
    size_t n = s[0] ? strlen(s) : 1;
    memcpy(out, s, n);
    return n;
}

static void pieces_of(ngpt_pretokenizer p, const char *text, char *got, size_t cap)
{
    const uint8_t *t = (const uint8_t *)text;
    size_t n = strlen(text);
    got[0] = 0;
    for (size_t i = 0; i < n;) {
        size_t e = ngpt_pretok_next(p, t, n, i);
        if (i) strncat(got, "|", cap - strlen(got) - 1);
        strncat(got, text + i, e - i < cap - strlen(got) - 1 ? e - i : cap - strlen(got) - 1);
        i = e;
    }
}

static void gpt4_pattern(void)
{
    uint8_t t[400];
    int bad = 0;
    for (int iter = 0; iter < 6000; iter++) {
        const int max = iter & 1 ? 3 : 1;
        const ngpt_pretokenizer p = max == 3 ? NGPT_PRETOK_LLAMA3 : NGPT_PRETOK_QWEN2;
        size_t n = 0, want = 1 + rnd_below(60);
        while (n < want) n += rnd_char(t + n);
        for (size_t i = 0; i < n;) {
            size_t got = ngpt_pretok_next(p, t, n, i), ref = ref_match(t, n, i, max);
            if (got != ref) {
                if (bad++ < 5) {
                    fprintf(stderr, "GPT-4 pattern (%d digits) at %zu of:", max, i);
                    for (size_t k = 0; k < n; k++) fprintf(stderr, " %02x", t[k]);
                    fprintf(stderr, ": ends at %zu, the pattern at %zu\n", got, ref);
                }
                break;
            }
            i = got;
        }
    }
    CHECK(bad == 0, "GPT-4's pattern equals its transcription (%d texts differ)", bad);

    static const struct { const char *text, *llama3, *qwen2; } cases[] = {
        {"Hello world", "Hello| world", NULL},
        {"it's WE'RE you'Ll 'sup", "it|'s| WE|'RE| you|'Ll| '|sup", NULL},
        {"don'T x'LLy", "don|'T| x|'LL|y", NULL},
        {"1234567 89", "123|456|7| |89", "1|2|3|4|5|6|7| |8|9"},
        {"x  \n\n  y", "x|  \n\n| | y", NULL},
        {"x\r\n\r\ny \n", "x|\r\n\r\n|y| \n", NULL},
        {"a.\n\nb", "a|.\n\n|b", NULL},
        {"(hello ((hello", "(hello| ((|hello", NULL},
        {"\tfoo \xe3\x80\x80\xe6\x97\xa5\xe6\x9c\xac", "\tfoo| |\xe3\x80\x80\xe6\x97\xa5\xe6\x9c\xac", NULL},
        {"  123", " | |123", " | |1|2|3"},
        {"x\xc2\x85\xc2\x85y", "x|\xc2\x85|\xc2\x85y", NULL},            /* NEL is white space */
        {"x\xef\xbb\xbf\xef\xbb\xbfy", "x|\xef\xbb\xbf\xef\xbb\xbf|y", NULL}, /* BOM is not */
        {"\xc2\xbdx \xd9\xa3\xd9\xa4", "\xc2\xbd|x| |\xd9\xa3\xd9\xa4", "\xc2\xbd|x| |\xd9\xa3|\xd9\xa4"},
        {"\xff\xfe" "ab", "\xff\xfe|ab", NULL},                              /* not UTF-8: other */
        {"x\xf0\x96\xba\xa0y", "x\xf0\x96\xba\xa0y", NULL},                  /* U+16EA0: a letter */
        {"e\xcc\x81t\xc3\xa9", "e|\xcc\x81t\xc3\xa9", NULL},                 /* a mark is other */
        {"a   ", "a|   ", NULL},
        {" !!? ok\n", " !!?| ok|\n", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int q = 0; q < 2; q++) {
            const char *want = q && cases[c].qwen2 ? cases[c].qwen2 : cases[c].llama3;
            char got[256];
            pieces_of(q ? NGPT_PRETOK_QWEN2 : NGPT_PRETOK_LLAMA3, cases[c].text, got, sizeof got);
            CHECK(!strcmp(got, want), "%s pieces of case %zu: \"%s\", want \"%s\"",
                  q ? "qwen2" : "llama3", c, got, want);
        }
    /* the class table is Unicode 17's: its letters, and a number of 16 */
    CHECK(!strcmp(ngpt_unicode_version, "17.0") && ngpt_unicode_class(0x16EA0) == NGPT_UC_L &&
              ngpt_unicode_class(0x1E6C0) == NGPT_UC_L && ngpt_unicode_class(0x1CCF0) == NGPT_UC_N,
          "Unicode %s: U+16EA0 and U+1E6C0 (new in 17.0) are letters, U+1CCF0 (16.0) a number",
          ngpt_unicode_version);
}

/* ------------------------------------------------------------------ NFC */

static bool nfc_is(const char *in, size_t n, const char *want, size_t want_n)
{
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    const uint8_t *out = ngpt_tok_nfc((const uint8_t *)in, n, &len, &buf, &cap);
    bool ok = out && len == want_n && !memcmp(out, want, len);
    if (!ok) {
        fprintf(stderr, "NFC of");
        for (size_t i = 0; i < n; i++) fprintf(stderr, " %02x", (uint8_t)in[i]);
        fprintf(stderr, ":");
        for (size_t i = 0; out && i < len; i++) fprintf(stderr, " %02x", out[i]);
        fprintf(stderr, "\n");
    }
    free(buf);
    return ok;
}
#define NFC_IS(in, want) nfc_is(in, sizeof in - 1, want, sizeof want - 1)

static void nfc(void)
{
    CHECK(NFC_IS("e\xcc\x81", "\xc3\xa9"), "e + U+0301 is U+00E9");
    CHECK(NFC_IS("\xe2\x84\xab", "\xc3\x85"), "U+212B ANGSTROM SIGN is U+00C5");
    CHECK(NFC_IS("a\xcc\x81\xcc\x96", "\xc3\xa1\xcc\x96") && NFC_IS("a\xcc\x96\xcc\x81", "\xc3\xa1\xcc\x96"),
          "marks reordered by class, then composed");
    CHECK(NFC_IS("\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", "\xea\xb0\x81"), "Hangul jamo compose");
    CHECK(NFC_IS("\xe0\xa5\x98", "\xe0\xa4\x95\xe0\xa4\xbc"), "U+0958 (an exclusion) is two code points");
    CHECK(NFC_IS("\xf0\x9d\x85\xa0", "\xf0\x9d\x85\x98\xf0\x9d\x85\xa5\xf0\x9d\x85\xae"),
          "U+1D160: 4 bytes become 12");
    CHECK(NFC_IS("x\xff" "e\xcc\x81\xcc\x81\x80y", "x\xff\xc3\xa9\xcc\x81\x80y"),
          "bytes that are not UTF-8 stay, the runs between them are normalized");
    CHECK(NFC_IS("e\xff" "e\xcc\x81", "e\xff\xc3\xa9") && NFC_IS("e\xff\xcc\x81", "e\xff\xcc\x81"),
          "a mark after a byte that is not UTF-8 has nothing to join");
    CHECK(NFC_IS("a\0e\xcc\x81", "a\0\xc3\xa9"), "a NUL is a character like any");
    /* below U+0300 nothing changes, and no copy is made */
    const uint8_t latin[] = "Stra\xc3\x9f" "e na\xc3\xafve \xc9\x90\xcb\xbf";
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    CHECK(ngpt_tok_nfc(latin, sizeof latin - 1, &len, &buf, &cap) == latin && len == sizeof latin - 1 && !buf,
          "text below U+0300 is its own NFC, not copied");
    int bad = 0;
    for (int iter = 0; iter < 3000; iter++) {         /* utf8proc agrees */
        uint8_t s[40];
        size_t n = 0;
        for (int k = 1 + (int)rnd_below(8); k > 0; k--)
            n += (size_t)utf8proc_encode_char((utf8proc_int32_t)rnd_below(0x300), s + n);
        utf8proc_uint8_t *ref = NULL;
        utf8proc_ssize_t r = utf8proc_map(s, (utf8proc_ssize_t)n, &ref, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        bad += r != (utf8proc_ssize_t)n || memcmp(ref, s, n);
        free(ref);
    }
    CHECK(bad == 0, "utf8proc: text of code points below U+0300 is NFC (%d strings not)", bad);
    /* cut before ASCII characters and normalized a stretch at a time, the
     * text is what utf8proc makes of all of it */
    static const char *const pool[] = {"a", "e", " ", "x", "\xcc\x81", "\xcc\x96", "\xe1\x84\x80",
                                       "\xe1\x85\xa1", "\xe1\x86\xa8", "\xc3\xa9", "\xe0\xa5\x98",
                                       "\xe6\x97\xa5", "\xf0\x9d\x85\xa0", "\xe2\x84\xab", "\xc3\x85"};
    bad = 0;
    for (int iter = 0; iter < 3000; iter++) {
        char s[256];
        size_t n = 0;
        for (int k = 1 + (int)rnd_below(30); k > 0; k--) {
            const char *c = pool[rnd_below(sizeof pool / sizeof pool[0])];
            memcpy(s + n, c, strlen(c));
            n += strlen(c);
        }
        utf8proc_uint8_t *ref = NULL;
        utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &ref,
                                          UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        bad += r < 0 || !nfc_is(s, n, (const char *)ref, (size_t)r);
        free(ref);
    }
    CHECK(bad == 0, "NFC a stretch at a time is utf8proc's NFC of the whole (%d strings differ)", bad);
    free(buf);
}

static void trims(void)
{
    const uint8_t s[] = " \t\xe3\x80\x80\xef\xbb\xbfx \xc2\x85y\xc2\xa0\n\xe2\x80\xa8";
    const size_t n = sizeof s - 1;
    CHECK(ngpt_tok_trim_start(s, n) == 8, "trimStart takes space, tab, U+3000, U+FEFF: %zu",
          ngpt_tok_trim_start(s, n));
    CHECK(ngpt_tok_trim_end(s, n) == 13, "trimEnd takes NBSP, \\n, U+2028 and keeps y: %zu",
          ngpt_tok_trim_end(s, n));
    CHECK(ngpt_tok_trim_end(s, 12) == 12, "...and U+0085 is not JavaScript's white space");
    CHECK(ngpt_tok_trim_end((const uint8_t *)"a\x80", 2) == 2 && ngpt_tok_trim_start((const uint8_t *)"\x80 ", 2) == 0 &&
              ngpt_tok_trim_end((const uint8_t *)"  ", 2) == 0,
          "a byte that is not UTF-8 is not white space; all white space trims to nothing");
}

/* ------------------------------------------------------ special tokens */

/* A tokenizer of bytes only (model id = byte) and these specials (ids
 * 256..), with flags (NGPT_TOK_HAS_BOS: the first special). */
static ngpt_tokenizer *with_specials(int flags, const char *const *names, const uint8_t *added,
                                     int n, const char *what)
{
    static ngpt_tok_spec zero;
    ngpt_tok_spec spec = zero;
    for (int i = 0; i < 256; i++) spec.id_byte[i] = (uint8_t)i;
    spec.end_id = spec.pad_id = -1;
    spec.bos_id = 256;                  /* the first special, with NGPT_TOK_HAS_BOS */
    spec.flags = flags;
    spec.n_special = n;
    for (int i = 0; i < n; i++) {
        spec.special[i] = (const uint8_t *)names[i];
        spec.special_len[i] = strlen(names[i]);
        spec.added_flags[i] = added[i];
    }
    ngpt_tokenizer *t = NULL;
    ngpt_status st = ngpt_tok_build(&t, &spec, what);
    CHECK(st == NGPT_OK, "%s builds: %s", what, ngpt_last_error());
    return t;
}

/* The ids of text as "x <1> y" (bytes as characters, specials as <k>). */
static void ids_as_text(const ngpt_tokenizer *t, const char *text, size_t len, bool specials,
                        char *out, size_t cap)
{
    int32_t ids[128];
    size_t n = 0;
    out[0] = 0;
    if (ngpt_tok_encode(t, text, len, specials, ids, 128, &n)) {
        snprintf(out, cap, "error: %s", ngpt_last_error());
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(out);
        if (ids[i] >= 256) snprintf(out + k, cap - k, "<%d>", (int)ids[i] - 256);
        else if (ids[i] >= 0x20 && ids[i] < 0x7F) snprintf(out + k, cap - k, "%c", (char)ids[i]);
        else snprintf(out + k, cap - k, "\\x%02x", (unsigned)ids[i]);
    }
}

static void specials_in_text(void)
{
    static const char *const names[] = {"<a>", "<ab>", "<L>", "<R>", "\xc3\xa9", "\xc3\x85", "<B>"};
    static const uint8_t added[] = {0, 0, NGPT_ADDED_LSTRIP, NGPT_ADDED_RSTRIP, NGPT_ADDED_NORMALIZED,
                                    0, NGPT_ADDED_LSTRIP | NGPT_ADDED_RSTRIP};
    ngpt_tokenizer *t = with_specials(NGPT_TOK_SPLIT_ADDED | NGPT_TOK_NFC, names, added, 7, "the specials");
    ngpt_tokenizer *old = with_specials(0, names, added, 7, "the specials, not in text");
    if (!t || !old) return;
    static const struct { const char *text, *want; } cases[] = {
        {"x<ab>y", "x<1>y"},
        {"<a>b>", "<0>b>"},
        {"<<a><ab", "<<0><ab"},                     /* leftmost, then longest */
        {"x \t <L>y", "x<2>y"},                     /* lstrip takes the white space before */
        {"  <L>", "<2>"},
        {"<R> \n y", "<3>y"},                       /* rstrip the white space after */
        {"a <L> <R> b", "a<2> <3>b"},
        {"a <B>\xe3\x80\x80 <B> b", "a<6><6>b"},
        {"<R>\xc2\x85x", "<3>\\xc2\\x85x"},         /* U+0085 is not what trim() cuts */
        {"e\xcc\x81!", "<4>!"},                     /* a normalized one, found after NFC */
        {"\xc3\xa9", "<4>"},
        {"<a>A\xcc\x8a<a>", "<0><5><0>"},           /* NFC makes the stretch a name (transformers.js) */
        {"xA\xcc\x8a", "x\\xc3\\x85"},              /* ...but only the whole stretch */
        {"<a\xcc\x81>", "<\\xc3\\xa1>"},
        {"", ""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char got[512];
        ids_as_text(t, cases[c].text, strlen(cases[c].text), true, got, sizeof got);
        CHECK(!strcmp(got, cases[c].want), "specials case %zu: %s, want %s", c, got, cases[c].want);
    }
    char got[512];
    ids_as_text(t, "x<ab> <L>", 9, false, got, sizeof got);
    CHECK(!strcmp(got, "x<ab> <L>"), "with specials off (chat's content) text is text: %s", got);
    ids_as_text(old, "x<ab>", 5, true, got, sizeof got);
    CHECK(!strcmp(got, "x<ab>"), "a file without the flag never reads them from text: %s", got);
    ngpt_tokenizer_info info;
    CHECK_OK(ngpt_tokenizer_describe(t, &info));
    CHECK(info.split_special && info.normalizer == NGPT_NORMALIZER_NFC && !info.ignore_merges,
          "describe: split_special, NFC");
    /* never more ids than bytes, NFC aside */
    size_t n = 0;
    CHECK(!ngpt_tokenizer_encode(t, "<ab><ab>", 8, NULL, 0, &n) && n == 2, "two specials: %zu ids", n);
    ngpt_tokenizer_free(t);
    ngpt_tokenizer_free(old);

    /* what build refuses: flags that would read differently */
    static const struct { int flags; const char *name; uint8_t added; const char *words; } bad[] = {
        {NGPT_TOK_SPLIT_ADDED, "<x>", NGPT_ADDED_NORMALIZED, "has no normalizer"},
        {NGPT_TOK_SPLIT_ADDED | NGPT_TOK_NFC, "A\xcc\x8a", NGPT_ADDED_NORMALIZED, "NFC changes it"},
        {NGPT_TOK_SPLIT_ADDED, " <x>", NGPT_ADDED_LSTRIP, "begins or ends with white space"},
        {NGPT_TOK_SPLIT_ADDED, "<x>", 32, "unknown flags 0x20"},
        {64, "<x>", 0, "unknown tokenizer flags 0x40"},
        {NGPT_TOK_HAS_BOS, "<x>", 0, "its BOS token 7 is not one of its special tokens"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static ngpt_tok_spec zero;
        ngpt_tok_spec spec = zero;
        for (int b = 0; b < 256; b++) spec.id_byte[b] = (uint8_t)b;
        spec.end_id = spec.pad_id = -1;
        spec.flags = bad[i].flags;
        spec.bos_id = 7;
        spec.n_special = 1;
        spec.special[0] = (const uint8_t *)bad[i].name;
        spec.special_len[0] = strlen(bad[i].name);
        spec.added_flags[0] = bad[i].added;
        ngpt_tokenizer *x = NULL;
        ngpt_status st = ngpt_tok_build(&x, &spec, "the spec");
        CHECK(st != NGPT_OK && !x && strstr(ngpt_last_error(), bad[i].words),
              "bad spec %zu refused naming \"%s\": %s", i, bad[i].words, ngpt_last_error());
    }
}

/* ------------------------------------------------------------- merges */

/* bytes, merges (left, right as internal ids) and their model ids. */
static ngpt_tokenizer *with_merges(const uint32_t *merges, int n, const int32_t *merge_ids, int flags)
{
    static ngpt_tok_spec zero;
    static int32_t model_id[256 + 16];
    ngpt_tok_spec spec = zero;
    for (int i = 0; i < 256; i++) spec.id_byte[i] = (uint8_t)i, model_id[i] = i;
    for (int k = 0; k < n; k++) model_id[256 + k] = merge_ids[k];
    spec.merges = merges;
    spec.n_merges = n;
    spec.model_id = model_id;
    spec.end_id = spec.pad_id = -1;
    spec.flags = flags;
    ngpt_tokenizer *t = NULL;
    CHECK_OK(ngpt_tok_build(&t, &spec, "the merges"));
    return t;
}

static void ids_of(const ngpt_tokenizer *t, const char *s, char *out, size_t cap)
{
    int32_t ids[64];
    size_t n = 0;
    out[0] = 0;
    ngpt_tokenizer_encode(t, s, strlen(s), ids, 64, &n);
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(out);
        snprintf(out + k, cap - k, i ? " %d" : "%d", (int)ids[i]);
    }
}

static void merges_in_hf_order(void)
{
    /* merge 1 joins "ab", which only merge 2 makes; merge 3 makes "abcd"
     * again (an alias of merge 1's token, model id 257) */
    const uint32_t m[] = {'c', 'd', 258, 256, 'a', 'b', 260, 'd', 258, 'c'};
    const int32_t ids[] = {256, 257, 258, 257, 259};
    ngpt_tokenizer *t = with_merges(m, 5, ids, 0);
    if (!t) return;
    ngpt_tokenizer_info info;
    CHECK_OK(ngpt_tokenizer_describe(t, &info));
    CHECK(info.n_tokens == 260 && info.n_merges == 4, "5 merges make 4 tokens: %d tokens, %d merges",
          (int)info.n_tokens, (int)info.n_merges);
    char got[128];
    ids_of(t, "abcd", got, sizeof got);     /* cd (rank 0), ab (2), then ab+cd (1) */
    CHECK(!strcmp(got, "257"), "abcd: %s", got);
    ids_of(t, "abc", got, sizeof got);      /* ab (2), then ab+c (4) */
    CHECK(!strcmp(got, "259"), "abc: %s", got);
    ids_of(t, "abcabcd", got, sizeof got);
    CHECK(!strcmp(got, "259 257"), "abcabcd: %s", got);
    const uint8_t *b;
    size_t len;
    CHECK(!ngpt_tokenizer_token(t, 257, &b, &len) && len == 4 && !memcmp(b, "abcd", 4), "257 is abcd");
    int32_t parts[8];
    int32_t np = ngpt_tok_prefix(t, 257, 3, parts);
    CHECK(np == 2 && parts[0] == 258 && parts[1] == 'c', "the first 3 bytes of abcd: ab, c (%d parts)", (int)np);
    /* through the file: the alias count in the header */
    size_t size = 0;
    uint8_t *img = test_tokenizer_image(t, &size);
    uint32_t alias = 0;
    if (img) memcpy(&alias, img + 48, 4);
    ngpt_tokenizer *r = NULL;
    CHECK(alias == 1 && !ngpt_tokenizer_load_mem(&r, img, size) && r && r->checksum == t->checksum,
          "the file counts 1 alias and reads back the same");
    ngpt_tokenizer_free(r);
    free(img);
    ngpt_tokenizer_free(t);

    /* ignore_merges: a piece that is a token is that token */
    const uint32_t m2[] = {'b', 'c', 'a', 'b', 257, 'c'};
    const int32_t ids2[] = {256, 257, 258};
    ngpt_tokenizer *plain = with_merges(m2, 3, ids2, 0), *whole = with_merges(m2, 3, ids2, NGPT_TOK_IGNORE_MERGES);
    if (plain && whole) {
        char a[64], w[64];
        ids_of(plain, "abc", a, sizeof a);
        ids_of(whole, "abc", w, sizeof w);
        CHECK(!strcmp(a, "97 256") && !strcmp(w, "258"), "abc merges to a + bc, or is abc whole: %s, %s", a, w);
        ids_of(whole, "abcabc", w, sizeof w);
        CHECK(!strcmp(w, "97 256 97 256"), "a piece that is no token merges as before: %s", w);
        ngpt_tokenizer_describe(whole, &info);
        CHECK(info.ignore_merges, "describe: ignore_merges");
    }
    ngpt_tokenizer_free(plain);
    ngpt_tokenizer_free(whole);

    /* refused: an alias of other bytes, a merge of an alias, a cycle */
    static const struct { uint32_t m[6]; int32_t ids[3]; const char *words; } bad[] = {
        {{'a', 'b', 'a', 'c', 'x', 'x'}, {256, 256, 257}, "whose bytes differ"},
        {{'a', 'b', 'a', 'b', 257, 'c'}, {256, 256, 257}, "merges 0 and 1 both join"},
        {{'a', 'b', 'b', 'c', 257, 'c'}, {256, 256, 257}, "merges' first tokens"},
        {{'a', 'b', 'c', 'd', 'x', 'y'}, {256, 258, 258}, "no token has model id 257"},
        {{300, 'a', 'a', 'b', 'c', 'd'}, {256, 257, 258}, "merge 0 joins token 300"},
        {{257, 'a', 256, 'a', 'c', 'd'}, {256, 257, 258}, "cannot be made"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static ngpt_tok_spec zero;
        static int32_t model_id[259];
        ngpt_tok_spec spec = zero;
        for (int b = 0; b < 256; b++) spec.id_byte[b] = (uint8_t)b, model_id[b] = b;
        for (int k = 0; k < 3; k++) model_id[256 + k] = bad[i].ids[k];
        spec.merges = bad[i].m, spec.n_merges = 3, spec.model_id = model_id;
        spec.end_id = spec.pad_id = -1;
        ngpt_tokenizer *x = NULL;
        ngpt_status st = ngpt_tok_build(&x, &spec, "the merges");
        CHECK(st == NGPT_ERR_BAD_FORMAT && !x && strstr(ngpt_last_error(), bad[i].words),
              "bad merges %zu refused naming \"%s\": %s", i, bad[i].words, ngpt_last_error());
    }
}

/* ------------------------------------------------------- the file, BOS */

static void reseal(uint8_t *b, size_t n)
{
    uint64_t size = n, h;
    memcpy(b + 40, &size, 8);
    h = XXH3_64bits(b, n - 8);
    memcpy(b + n - 8, &h, 8);
}

static void file_fields(void)
{
    static const char *const names[] = {"<s>", "</s>"};
    static const uint8_t added[] = {0, NGPT_ADDED_RSTRIP};
    ngpt_tokenizer *t = with_specials(NGPT_TOK_SPLIT_ADDED | NGPT_TOK_IGNORE_MERGES, names, added, 2,
                                      "the BOS");
    if (!t) return;
    CHECK_OK(ngpt_tok_with_bos(&t, 257, "the BOS"));    /* add_bos_token's way, then back */
    CHECK(t->bos_id == 257, "the BOS set: %d", (int)t->bos_id);
    CHECK_OK(ngpt_tok_with_bos(&t, 256, "the BOS"));
    ngpt_tokenizer_info info;
    CHECK_OK(ngpt_tokenizer_describe(t, &info));
    CHECK(info.bos_id == 256 && info.rule == NGPT_MERGE_PAIRS && info.split_special && info.ignore_merges,
          "describe: BOS 256, pairs, split_special, ignore_merges (bos %d)", (int)info.bos_id);
    size_t size = 0;
    uint8_t *img = test_tokenizer_image(t, &size), *b = malloc(size);
    if (!img || !b) return;
    int32_t bos;
    memcpy(&bos, img + 52, 4);
    CHECK(img[35] == (NGPT_TOK_SPLIT_ADDED | NGPT_TOK_HAS_BOS | NGPT_TOK_IGNORE_MERGES) && bos == 256 &&
              img[size - 8 - 1] == NGPT_ADDED_RSTRIP && img[size - 8 - 2] == 0,
          "header byte 35 holds the flags, 52..55 the BOS, the specials' flags end the file");
    ngpt_tokenizer *r = NULL;
    CHECK(!ngpt_tokenizer_load_mem(&r, img, size) && r && r->checksum == t->checksum, "the file reads back");
    ngpt_tokenizer_free(r);
    static const struct { size_t off; uint8_t v; const char *words; } bad[] = {
        {35, 0x40 | NGPT_TOK_SPLIT_ADDED | NGPT_TOK_HAS_BOS, "unknown tokenizer flags 0x4c"},
        {35, NGPT_TOK_SPLIT_ADDED, "BOS token (header bytes 52..55) without its flag"},
        {52, 3, "its BOS token 259 is not one of its special tokens"},
        {48, 1, "merges that repeat a token (header bytes 48..51) but has no model ids"},
        {36, 1, "reserved header byte 36"},
        {56, 1, "reserved header byte 56"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(b, img, size);
        b[bad[i].off] = bad[i].v;
        reseal(b, size);
        ngpt_status st = ngpt_tokenizer_load_mem(&r, b, size);
        CHECK(st == NGPT_ERR_BAD_FORMAT && !r && strstr(ngpt_last_error(), bad[i].words),
              "byte %zu set to %u refused naming \"%s\": %s", bad[i].off, bad[i].v, bad[i].words,
              ngpt_last_error());
    }
    /* without the flag of the specials' flags, the file is a byte too long */
    memcpy(b, img, size);
    b[35] &= (uint8_t)~NGPT_TOK_SPLIT_ADDED;
    reseal(b, size);
    CHECK(ngpt_tokenizer_load_mem(&r, b, size) == NGPT_ERR_BAD_FORMAT && strstr(ngpt_last_error(), "follow its last special"),
          "the specials' flags without their flag: %s", ngpt_last_error());
    free(b);
    free(img);
    ngpt_tokenizer_free(t);
}

/* A stream that stops inside a character: the bytes so far, exactly. */
static void mid_character(void)
{
    static const char *const names[] = {"<s>"};
    static const uint8_t added[] = {0};
    ngpt_tokenizer *t = with_specials(NGPT_TOK_SPLIT_ADDED, names, added, 1, "bytes");
    if (!t) return;
    const char *s = "\xf0\x9f\x98\x80<s>\xe6\x97\xa5";
    int32_t ids[16];
    size_t n = 0;
    CHECK_OK(ngpt_tokenizer_encode(t, s, strlen(s), ids, 16, &n));
    bool ok = n == 8;
    for (size_t k = 1; k <= n && ok; k++) {
        char out[32];
        size_t len = 0;
        ok = !ngpt_tokenizer_decode(t, ids, k, out, sizeof out, &len) && len <= strlen(s) &&
             !memcmp(out, s, len) && len == (k <= 4 ? k : k == 5 ? 7 : k + 2);
    }
    CHECK(ok, "every prefix of the ids decodes to the exact bytes so far (%zu ids)", n);
    ngpt_tokenizer_free(t);
}

int main(void)
{
    rng_state = 0x243f6a8885a308d3ull;
    gpt4_pattern();
    nfc();
    trims();
    specials_in_text();
    merges_in_hf_order();
    file_fields();
    mid_character();
    return test_summary("test_tokenizer_pipeline");
}
