/* test_hf_tokenizer.c — a SmolLM2-shaped tokenizer.json, built here, read
 * by ngpt_hf_tokenizer_json and checked against an independent encoder:
 *
 *  - the file: 17 special tokens at ids 0..16 (SmolLM2's names), the bytes
 *    after them in a shuffled order with some absent (0x01, 'Q', 0xF8..0xFF),
 *    then a few hundred merges (learned by ngpt on a small text, those
 *    touching an absent byte left out) whose ids are not in rank order;
 *    pre-tokenizer Sequence[Digits(individual_digits), ByteLevel];
 *  - encoding a corpus of awkward strings gives the ids of
 *    tools/hf_bpe_reference.py (Python, written from Hugging Face's
 *    documented algorithm), kept in tests/hf_tokenizer_golden.h;
 *  - special names in text stay text; decoding gives valid UTF-8 back;
 *    the tokenizer's file (version 2) reloads the same;
 *  - what ngpt cannot reproduce exactly is refused by name; NFC,
 *    ignore_merges and merges out of order read;
 *  - grammars on it: the masks are what reading each token's bytes says, no
 *    step is a dead end, and a literal that needs an absent byte is
 *    refused (a class just loses it);
 *  - a Llama-3-shaped file (GPT-4's Split, a post-processor's BOS, a random
 *    vocabulary whose shuffled merges make most tokens several ways and
 *    join tokens later merges make): ids equal Hugging Face's BPE written
 *    on strings, with and without ignore_merges; and the Split pipelines'
 *    refusals by name;
 *  - a Gemma-shaped file (tests/gemma_tokenizer.h: ▁ for a space,
 *    characters that merges build from bytes, byte fallback, added tokens
 *    plain and special): ids worked by hand, decoding, one BOS in a chat
 *    template's tokens, the refusals by name.
 *
 * Regenerating the golden ids (after a change to the corpus, the training
 * or the file written here):
 *   build/tests/test_hf_tokenizer --write /tmp/hft
 *   /usr/bin/python3 tools/hf_bpe_reference.py /tmp/hft/tokenizer.json \
 *       /tmp/hft/corpus.bin --c > tests/hf_tokenizer_golden.h */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemma_tokenizer.h"
#include "grammar_cases.h"
#include "import/hf_tokenizer.h"
#include "test.h"
#include "tokenizer/tokenizer.h"

#include "hf_tokenizer_golden.h"

enum { N_SPECIAL = 17, LONG_A = 100 };

static const char *const SPECIALS[N_SPECIAL] = {
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>", "<reponame>", "<file_sep>",
    "<filename>", "<gh_stars>", "<issue_start>", "<issue_comment>", "<issue_closed>",
    "<jupyter_start>", "<jupyter_text>", "<jupyter_code>", "<jupyter_output>",
    "<jupyter_script>", "<empty_output>",
};

static bool absent_byte(int b) { return b == 0x01 || b == 'Q' || b >= 0xF8; }

/* The texts encoded (two more are built in corpus_text: a long run of 'a'
 * and one of "the"). */
static const char *const CORPUS[] = {
    "Hello world! 123",
    "digits 0123456789 and 3.14159, 1,000,000",
    "unicode digits: \xd9\xa3\xd9\xa4\xd9\xa5 \xe0\xa5\xaa\xe0\xa5\xa8 \xc2\xbe \xe2\x85\xab "
    "\xe2\x91\xa0\xe2\x91\xa1",
    "spaces:   three  two\tand tabs\t\t end   ",
    "lines\n\nnew\r\nlines \n  indented\n",
    "emoji \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd and \xf0\x9f\x87\xab\xf0\x9f\x87\xb7 flags",
    "invalid \xff\xfe bytes \xc3( and \xe2\x82 here \x80",
    "specials <|endoftext|><|im_start|>user\nhi<|im_end|>\n",
    "QQ quiet Quebec aQb \x01" "ctrl",
    "contractions: don't, we'll, it's, they're I'm you've he'd",
    "  leading spaces and trailing   ",
    "x1y22z333 9a 8 b",
    "caf\xc3\xa9 na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 "
    "\xce\x95\xce\xbb\xce\xbb\xce\xb7\xce\xbd\xce\xb9\xce\xba\xce\xac \xd1\x80\xd1\x83\xd1\x81",
    "numbers in words: abc123def 4x4 1st 2nd",
    "",
    "   ",
    "\n",
    "a 12  3x",
    "the theory of the thing: then there, these and those; in the end the thesis",
};
enum { N_FIXED = sizeof CORPUS / sizeof CORPUS[0], N_TEXTS = N_FIXED + 2 };

static char long_a[LONG_A + 1], long_the[3 * 40 + 1];

static const char *corpus_text(int i)
{
    if (i < N_FIXED) return CORPUS[i];
    return i == N_FIXED ? long_a : long_the;
}

/* Training text: English, code-like lines and the corpus, repeated. */
static const char *const TRAIN[] = {
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs on. ",
    "In the beginning there was the word, and the word was with the tokenizer. ",
    "for (int i = 0; i < 10; i++) { total += values[i] * 2; }\n",
    "Numbers like 2024, 3.14 and 1,000 are split into digits one by one. ",
    "She said: \"it's fine, we'll see, they're here\" and then she left the room.\n",
    "Tokenizers split text into pieces, then merge the most frequent pairs of symbols. ",
    "A small language model runs on a Raspberry Pi when its weights are quantized well. ",
    "Mathematics, physics, chemistry and biology describe nature with different words. ",
    "def encode(text): return [vocabulary[piece] for piece in pretokenize(text)]\n",
    "Caf\xc3\xa9 cr\xc3\xa8" "me br\xc3\xbb" "l\xc3\xa9" "e, na\xc3\xaf" "ve r\xc3\xa9" "sum\xc3\xa9; "
    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xd1\x80\xd1\x83\xd1\x81\xd1\x81\xd0\xba\xd0\xb8\xd0\xb9. ",
    "Yesterday, seventeen wizards quickly vexed the jumping zebras beyond Oxford Street. ",
    "Everything everywhere, all at once: something, nothing, anything and everyone else. ",
};

/* ------------------------------------------------------------ the file */

typedef struct text { char *p; size_t n, cap; } text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

/* GPT-2's bytes_to_unicode, as UTF-8. */
static void put_byte_char(text *t, int b)
{
    int cp = b;
    if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
        int n = 0;
        for (int x = 0; x < b; x++)
            if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) n++;
        cp = 256 + n;
    }
    if (cp < 0x80) put(t, cp == '"' || cp == '\\' ? "\\%c" : "%c", cp);
    else put(t, "%c%c", 0xC0 | cp >> 6, 0x80 | (cp & 63));
}

static void put_token(text *t, const uint8_t *b, size_t n)
{
    put(t, "\"");
    for (size_t i = 0; i < n; i++) put_byte_char(t, b[i]);
    put(t, "\"");
}

/* The learned merges a SmolLM2-shaped file keeps: both sides present, a
 * token not made before, a pair not merged before. */
typedef struct layout {
    int32_t n_merges;
    int32_t left[1024], right[1024];    /* trained ids of the kept merges' sides */
    int32_t made[1024];                 /* the trained id each makes */
    int32_t file_id[1 << 12];           /* trained id -> the file's id, -1 left out */
    int32_t V;
} layout;

static void plan(const ngpt_tokenizer *tr, layout *L)
{
    for (int32_t i = 0; i < (int32_t)(sizeof L->file_id / sizeof L->file_id[0]); i++)
        L->file_id[i] = -1;
    int32_t next = N_SPECIAL;
    for (int k = 0; k < 256; k++) {      /* the bytes in a shuffled order */
        int b = (k * 113 + 7) & 255;
        if (!absent_byte(b)) L->file_id[tr->byte_id[b]] = next++;
    }
    L->n_merges = 0;
    int32_t keep[1024];
    for (int32_t k = 0; k < tr->n_merges && L->n_merges < 1024; k++) {
        int32_t a = (int32_t)tr->merges[2 * k], b = (int32_t)tr->merges[2 * k + 1];
        if (L->file_id[a] < 0 || L->file_id[b] < 0) continue;
        size_t la, lb;
        const uint8_t *pa = ngpt_tok_bytes(tr, a, &la), *pb = ngpt_tok_bytes(tr, b, &lb);
        uint8_t ab[2 * NGPT_TOK_MAX_BYTES];
        memcpy(ab, pa, la);
        memcpy(ab + la, pb, lb);
        bool dup = false;
        for (int32_t j = 0; j < L->n_merges && !dup; j++) {
            size_t lj;
            const uint8_t *pj = ngpt_tok_bytes(tr, L->made[j], &lj);
            dup = lj == la + lb && !memcmp(pj, ab, lj);
        }
        if (dup) continue;
        L->left[L->n_merges] = a, L->right[L->n_merges] = b, L->made[L->n_merges] = 256 + k;
        L->file_id[256 + k] = 0;        /* kept; its id comes below */
        keep[L->n_merges++] = 256 + k;
    }
    /* ids not in rank order: neighbours swapped */
    for (int32_t r = 0; r < L->n_merges; r++) {
        int32_t s = (r ^ 1) < L->n_merges ? r ^ 1 : r;
        L->file_id[keep[r]] = next + s;
    }
    L->V = next + L->n_merges;
}

typedef struct variant {
    const char *normalizer, *pre, *vocab_extra;
    const char *model_extra;    /* keys before the model's own: cJSON reads the first */
    bool not_special, lstrip;
    int32_t swap_a, swap_b;     /* merges written in each other's place (swap_a -1: none) */
} variant;

static const char *const SMOL_PRE =
    "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", \"individual_digits\": "
    "true}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
    "\"use_regex\": true}]}";

static char *write_json(const ngpt_tokenizer *tr, const layout *L, const variant *v)
{
    text t = {0};
    put(&t, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": [");
    for (int i = 0; i < N_SPECIAL; i++)
        put(&t, "%s{\"id\": %d, \"content\": \"%s\", \"single_word\": false, \"lstrip\": %s, "
            "\"rstrip\": false, \"normalized\": false, \"special\": %s}", i ? ", " : "", i,
            SPECIALS[i], v->lstrip && i == 2 ? "true" : "false",
            v->not_special && i == 2 ? "false" : "true");
    put(&t, "], \"normalizer\": %s, \"pre_tokenizer\": %s, ", v->normalizer ? v->normalizer : "null", v->pre ? v->pre : SMOL_PRE);
    put(&t, "\"post_processor\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
        "\"trim_offsets\": false, \"use_regex\": true}, \"decoder\": {\"type\": \"ByteLevel\", "
        "\"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true}, \"model\": "
        "{%s\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
        "\"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, \"fuse_unk\": false, "
        "\"byte_fallback\": false, \"ignore_merges\": false, \"vocab\": {",
        v->model_extra ? v->model_extra : "");
    for (int i = 0; i < N_SPECIAL; i++) put(&t, "\"%s\": %d, ", SPECIALS[i], i);
    bool first = true;
    for (int32_t id = 0; id < tr->n_internal; id++)
        if (L->file_id[id] >= 0) {
            size_t n;
            const uint8_t *b = ngpt_tok_bytes(tr, id, &n);
            put(&t, "%s", first ? "" : ", ");
            put_token(&t, b, n);
            put(&t, ": %d", L->file_id[id]);
            first = false;
        }
    put(&t, "%s}, \"merges\": [", v->vocab_extra ? v->vocab_extra : "");
    for (int32_t r = 0; r < L->n_merges; r++) {
        int32_t k = v->swap_a < 0 ? r : r == v->swap_a ? v->swap_b : r == v->swap_b ? v->swap_a : r;
        size_t la, lb;
        const uint8_t *a = ngpt_tok_bytes(tr, L->left[k], &la);
        const uint8_t *b = ngpt_tok_bytes(tr, L->right[k], &lb);
        put(&t, "%s\"", r ? ", " : "");
        for (size_t i = 0; i < la; i++) put_byte_char(&t, a[i]);
        put(&t, " ");
        for (size_t i = 0; i < lb; i++) put_byte_char(&t, b[i]);
        put(&t, "\"");
    }
    put(&t, "]}}");
    return t.p;
}

static ngpt_tokenizer *trained(void)
{
    const void *texts[128];
    size_t sizes[128];
    int n = 0;
    for (int rep = 0; rep < 6; rep++)
        for (size_t i = 0; i < sizeof TRAIN / sizeof TRAIN[0]; i++)
            texts[n] = TRAIN[i], sizes[n++] = strlen(TRAIN[i]);
    for (int i = 0; i < N_TEXTS && n < 128; i++)
        texts[n] = corpus_text(i), sizes[n++] = strlen(corpus_text(i));
    ngpt_tokenizer_train_config cfg = ngpt_tokenizer_train_config_default();
    cfg.vocab_size = 256 + 700;
    cfg.pretok = NGPT_PRETOK_DIGITS;
    cfg.end_token = cfg.pad_token = false;
    ngpt_tokenizer *t = NULL;
    CHECK_OK(ngpt_tokenizer_train(&t, &cfg, texts, sizes, n));
    return t;
}

/* ------------------------------------------------------------ checks */

static ngpt_tokenizer *read_json(const char *json)
{
    ngpt_tokenizer *t = NULL;
    ngpt_status st = ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json");
    CHECK(st == NGPT_OK, "the SmolLM2-shaped tokenizer.json reads: %s", ngpt_last_error());
    return t;
}

static void pieces(void)
{
    const char *s = "a 12  3x";
    const char *want[] = {"a", " ", "1", "2", "  ", "3", "x"};
    size_t n = strlen(s), i = 0;
    for (size_t k = 0; k < 7; k++) {
        size_t end = i < n ? ngpt_pretok_next(NGPT_PRETOK_DIGITS, (const uint8_t *)s, n, i) : i;
        CHECK(end - i == strlen(want[k]) && !memcmp(s + i, want[k], end - i),
              "digits piece %zu of \"%s\" is \"%s\", got \"%.*s\"", k, s, want[k], (int)(end - i),
              s + i);
        i = end;
    }
    CHECK(i == n, "the pieces cover the text");
}

static void against_golden(const ngpt_tokenizer *t)
{
    ngpt_tokenizer_info info;
    CHECK_OK(ngpt_tokenizer_describe(t, &info));
    CHECK(info.end_id == 0 && info.n_special == N_SPECIAL && info.pretok == NGPT_PRETOK_DIGITS,
          "end id 0 (<|endoftext|>), 17 specials, digits pieces: end %d, %d specials",
          (int)info.end_id, (int)info.n_special);
    for (int i = 0; i < N_SPECIAL; i++) {
        const uint8_t *b;
        size_t n;
        CHECK_OK(ngpt_tokenizer_token(t, i, &b, &n));
        CHECK(n == strlen(SPECIALS[i]) && !memcmp(b, SPECIALS[i], n), "id %d is %s", i,
              SPECIALS[i]);
        int32_t by_name = -1, by_index = -1;
        CHECK_OK(ngpt_tokenizer_special_id(t, SPECIALS[i], &by_name));
        CHECK_OK(ngpt_tokenizer_special(t, i, &by_index));
        CHECK(by_name == i && by_index == i, "%s found by name (%d) and index (%d)", SPECIALS[i],
              (int)by_name, (int)by_index);
    }
    int32_t none = -1;
    CHECK_STATUS(ngpt_tokenizer_special_id(t, "<|im_end", &none), NGPT_ERR_BAD_ARG);
    size_t at = 0;
    int32_t ids[4096];
    for (int i = 0; i < N_TEXTS; i++) {
        const char *s = corpus_text(i);
        size_t len = strlen(s), n = 0;
        CHECK_OK(ngpt_tokenizer_encode(t, s, len, ids, 4096, &n));
        bool same = n == (size_t)GOLDEN_COUNTS[i] && !memcmp(ids, GOLDEN_IDS + at, n * 4);
        CHECK(same, "text %d (\"%.30s\") encodes as the reference does: %zu ids, want %d", i, s,
              n, GOLDEN_COUNTS[i]);
        if (!same)
            for (size_t k = 0; k < n && k < (size_t)GOLDEN_COUNTS[i]; k++)
                if (ids[k] != GOLDEN_IDS[at + k]) {
                    fprintf(stderr, "  first difference at %zu: %d, want %d\n", k, (int)ids[k],
                            (int)GOLDEN_IDS[at + k]);
                    break;
                }
        at += (size_t)GOLDEN_COUNTS[i];
        bool no_special = true, has_absent = false;
        for (size_t k = 0; k < n; k++) no_special &= ids[k] >= N_SPECIAL && ids[k] < info.n_tokens;
        for (size_t k = 0; k < len; k++) has_absent |= absent_byte((uint8_t)s[k]);
        CHECK(no_special, "text %d: no special token from text", i);
        char back[4096];
        size_t nb = 0;
        CHECK_OK(ngpt_tokenizer_decode(t, ids, n, back, sizeof back, &nb));
        if (!has_absent) CHECK(nb == len && !memcmp(back, s, len), "text %d decodes back", i);
        else CHECK(nb < len, "text %d loses its absent bytes", i);
    }
    CHECK(at == sizeof GOLDEN_IDS / sizeof GOLDEN_IDS[0], "every golden id checked");
}

static void file_round_trip(const ngpt_tokenizer *t)
{
    size_t size = 0;
    uint8_t *img = test_tokenizer_image(t, &size), *img2 = malloc(size);
    if (!img || !img2) return;
    uint32_t version;
    memcpy(&version, img + 8, 4);
    CHECK(version == 2, "a tokenizer with its own ids is a version 2 file, got %u", version);
    ngpt_tokenizer *r = NULL;
    CHECK_OK(ngpt_tokenizer_load_mem(&r, img, size));
    size_t size2 = 0;
    if (r) CHECK_OK(ngpt_tokenizer_save_mem(r, img2, size, &size2));
    CHECK(size2 == size && !memcmp(img, img2, size), "the file reloads to the same bytes");
    const char *s = CORPUS[7];
    int32_t a[256], b[256];
    size_t na = 0, nb = 0;
    CHECK_OK(ngpt_tokenizer_encode(t, s, strlen(s), a, 256, &na));
    if (r) CHECK_OK(ngpt_tokenizer_encode(r, s, strlen(s), b, 256, &nb));
    CHECK(na == nb && !memcmp(a, b, na * 4), "the reloaded tokenizer encodes the same");
    /* a model id given twice is refused on load */
    img[size - 8 - 4] = img[size - 8 - 8];
    ngpt_tokenizer *bad = NULL;
    CHECK(ngpt_tokenizer_load_mem(&bad, img, size) != NGPT_OK, "a spoilt file is refused");
    ngpt_tokenizer_free(r);
    free(img), free(img2);
}

/* What Llama 3's and Qwen's files ask reads with SmolLM2's pieces too: NFC,
 * ignore_merges, and a merge that joins what only a later merge makes
 * (Hugging Face's ranks need not follow how tokens are built). */
static void accepted(const ngpt_tokenizer *tr, const layout *L)
{
    int32_t later = -1;
    for (int32_t r = 0; r < L->n_merges && later < 0; r++)
        if (L->left[r] >= 256 || L->right[r] >= 256) later = r;
    int32_t maker = -1;
    for (int32_t j = 0; j < later; j++)
        if (L->made[j] == L->left[later] || L->made[j] == L->right[later]) maker = j;
    const variant cases[] = {
        {.normalizer = "{\"type\": \"NFC\"}", .swap_a = -1},
        {.model_extra = "\"ignore_merges\": true, ", .swap_a = -1},
        {.swap_a = maker, .swap_b = later},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *json = write_json(tr, L, &cases[i]);
        ngpt_tokenizer *t = NULL;
        ngpt_tokenizer_info info = {0};
        ngpt_status st = ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json");
        CHECK(st == NGPT_OK && !ngpt_tokenizer_describe(t, &info) &&
                  info.normalizer == (i == 0 ? NGPT_NORMALIZER_NFC : NGPT_NORMALIZER_NONE) &&
                  info.ignore_merges == (i == 1) && !info.split_special,
              "case %zu reads: %s", i, st ? ngpt_last_error() : "");
        /* the merges swapped make the same tokens, from other ranks */
        if (i == 2 && t) {
            const char *s = corpus_text(0);
            int32_t ids[256];
            size_t n = 0, nb = 0;
            char back[256];
            CHECK(!ngpt_tokenizer_encode(t, s, strlen(s), ids, 256, &n) &&
                      !ngpt_tokenizer_decode(t, ids, n, back, sizeof back, &nb) &&
                      nb == strlen(s) && !memcmp(back, s, nb),
                  "the file with merge %d before %d encodes and decodes", (int)later, (int)maker);
        }
        ngpt_tokenizer_free(t);
        free(json);
    }
}

static void refused(const ngpt_tokenizer *tr, const layout *L)
{
    const struct {
        variant v;
        const char *words;
    } cases[] = {
        {{.normalizer = "{\"type\": \"NFKC\"}", .swap_a = -1}, "normalizer \"NFKC\""},
        {{.pre = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", "
                 "\"individual_digits\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": "
                 "false, \"use_regex\": true}]}", .swap_a = -1}, "individual_digits=false"},
        {{.pre = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Whitespace\"}, "
                 "{\"type\": \"ByteLevel\"}]}", .swap_a = -1}, "Sequence"},
        {{.not_special = true, .swap_a = -1}, "not special"},
        {{.lstrip = true, .swap_a = -1}, "lstrip"},
        {{.model_extra = "\"byte_fallback\": true, ", .swap_a = -1}, "byte_fallback"},
        {{.vocab_extra = ", \"zzqx\": 5000", .swap_a = -1}, "no merge's result"},
        {{.model_extra = "\"unk_token\": \"<|endoftext|>\", ", .swap_a = -1}, "unknown token"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *json = write_json(tr, L, &cases[i].v);
        ngpt_tokenizer *t = NULL;
        ngpt_status st = ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json");
        CHECK(st == NGPT_ERR_UNSUPPORTED && !t && strstr(ngpt_last_error(), cases[i].words),
              "case %zu is refused naming \"%s\": %s", i, cases[i].words, ngpt_last_error());
        ngpt_tokenizer_free(t);
        free(json);
    }
}

/* --------------------------------- Llama 3's shape: GPT-4's Split, aliases */

static const char *const LLAMA_SPLIT =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| "
    "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+";

/* A random vocabulary over a b c d, closed under prefixes (so every token
 * is made by some merge), and as merges every split of every token into two
 * tokens, shuffled: many tokens made several ways, many merges joining what
 * a later merge makes (Llama 3's file from tiktoken's ranks is like that). */
enum { HF_TOKENS = 90, HF_MAX = 7 };
typedef struct hf_vocab {
    char tok[HF_TOKENS][HF_MAX + 1];
    int n;
    char merge[HF_TOKENS * HF_MAX][2][HF_MAX + 1];
    int n_merges;
} hf_vocab;

static uint64_t hf_rng = 0x9e3779b97f4a7c15ull;
static uint32_t hf_rand(uint32_t n)
{
    hf_rng = hf_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(hf_rng >> 33) % n;
}

static int hf_find(const hf_vocab *h, const char *s, size_t n)
{
    for (int i = 0; i < h->n; i++)
        if (strlen(h->tok[i]) == n && !memcmp(h->tok[i], s, n)) return i;
    return -1;
}

static void hf_make(hf_vocab *h)
{
    h->n = 0;
    while (h->n < HF_TOKENS) {          /* a token of 2..7 letters and its prefixes */
        char s[HF_MAX + 1];
        size_t len = 2 + hf_rand(HF_MAX - 1);
        for (size_t i = 0; i < len; i++) s[i] = (char)('a' + hf_rand(4));
        for (size_t k = 2; k <= len && h->n < HF_TOKENS; k++)
            if (hf_find(h, s, k) < 0) memcpy(h->tok[h->n], s, k), h->tok[h->n++][k] = 0;
    }
    h->n_merges = 0;
    for (int i = 0; i < h->n; i++)
        for (size_t k = 1, len = strlen(h->tok[i]); k < len; k++) {
            const char *t = h->tok[i];
            if ((k > 1 && hf_find(h, t, k) < 0) || (len - k > 1 && hf_find(h, t + k, len - k) < 0)) continue;
            memcpy(h->merge[h->n_merges][0], t, k), h->merge[h->n_merges][0][k] = 0;
            strcpy(h->merge[h->n_merges][1], t + k);
            h->n_merges++;
        }
    for (int i = h->n_merges - 1; i > 0; i--) {     /* shuffled: the ranks */
        int j = (int)hf_rand((uint32_t)i + 1);
        char tmp[2][HF_MAX + 1];
        memcpy(tmp, h->merge[i], sizeof tmp);
        memcpy(h->merge[i], h->merge[j], sizeof tmp);
        memcpy(h->merge[j], tmp, sizeof tmp);
    }
}

/* Its tokenizer.json: bytes at ids 0..255, the tokens after, one added
 * token "<|x|>" that begins every text (the post-processor's BOS). */
static char *hf_json(const hf_vocab *h, bool ignore_merges, const char *pre, const char *post,
                     const char *added)
{
    text t = {0};
    put(&t, "{\"added_tokens\": [%s], \"normalizer\": null, \"pre_tokenizer\": ",
        added ? added : "{\"id\": 346, \"content\": \"<|x|>\", \"special\": true}");
    if (pre) put(&t, "%s", pre);
    else put(&t, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
             "{\"Regex\": \"%s\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": "
             "\"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]}", LLAMA_SPLIT);
    put(&t, ", \"post_processor\": %s, \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": "
        "{\"type\": \"BPE\", \"ignore_merges\": %s, \"vocab\": {", post ? post :
        "{\"type\": \"Sequence\", \"processors\": [{\"type\": \"ByteLevel\"}, {\"type\": "
        "\"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<|x|>\", \"type_id\": 0}}, "
        "{\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}]}]}", ignore_merges ? "true" : "false");
    for (int b = 0; b < 256; b++) {
        put(&t, "\"");
        put_byte_char(&t, b);
        put(&t, "\": %d, ", b);
    }
    for (int i = 0; i < h->n; i++) put(&t, "\"%s\": %d%s", h->tok[i], 256 + i, i + 1 < h->n ? ", " : "");
    put(&t, "}, \"merges\": [");
    for (int k = 0; k < h->n_merges; k++)
        put(&t, "%s[\"%s\", \"%s\"]", k ? ", " : "", h->merge[k][0], h->merge[k][1]);
    put(&t, "]}}");
    return t.p;
}

/* Hugging Face's BPE as its documentation says it, on strings: the
 * adjacent pair of the lowest merge rank joins (the leftmost of a rank),
 * until none; ignore_merges: a piece that is a token is that token. */
static size_t hf_naive(const hf_vocab *h, bool ignore_merges, const char *p, size_t n, int32_t *out)
{
    if (ignore_merges && n > 1 && hf_find(h, p, n) >= 0) {
        out[0] = 256 + hf_find(h, p, n);
        return 1;
    }
    char sym[64][HF_MAX + 1];
    size_t m = n;
    for (size_t i = 0; i < n; i++) sym[i][0] = p[i], sym[i][1] = 0;
    for (;;) {
        int best = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < m; i++)
            for (int k = 0; k < h->n_merges && (best < 0 || k < best); k++)
                if (!strcmp(h->merge[k][0], sym[i]) && !strcmp(h->merge[k][1], sym[i + 1])) best = k, at = i;
        if (best < 0) break;
        const size_t la = strlen(sym[at]), lb = strlen(sym[at + 1]);
        memcpy(sym[at] + la, sym[at + 1], lb + 1);      /* a merge makes at most HF_MAX */
        memmove(sym + at + 1, sym + at + 2, (m - at - 2) * sizeof sym[0]);
        m--;
    }
    for (size_t i = 0; i < m; i++)
        out[i] = strlen(sym[i]) == 1 ? (uint8_t)sym[i][0] : 256 + hf_find(h, sym[i], strlen(sym[i]));
    return m;
}

static void llama3_shape(void)
{
    static hf_vocab h;
    hf_make(&h);
    CHECK(h.n_merges > HF_TOKENS + 40, "more merges (%d) than tokens made (%d)", h.n_merges, HF_TOKENS);
    for (int im = 0; im < 2; im++) {
        char *json = hf_json(&h, im, NULL, NULL, NULL);
        ngpt_tokenizer *t = NULL;
        ngpt_tokenizer_info info = {0};
        ngpt_status st = ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json");
        CHECK(st == NGPT_OK && !ngpt_tokenizer_describe(t, &info) && info.n_tokens == 256 + HF_TOKENS + 1 &&
                  info.n_merges == HF_TOKENS && info.bos_id == 256 + HF_TOKENS &&
                  info.pretok == NGPT_PRETOK_LLAMA3 && info.ignore_merges == (im == 1) && info.split_special,
              "the Llama-3-shaped file reads: %s (%d tokens, %d merges, BOS %d)", st ? ngpt_last_error() : "",
              (int)info.n_tokens, (int)info.n_merges, (int)info.bos_id);
        free(json);
        if (!t) continue;
        int bad = 0;
        for (int iter = 0; iter < 400; iter++) {
            char s[256];
            size_t n = 0;
            for (int w = 1 + (int)hf_rand(8); w > 0; w--) {
                if (n) s[n++] = hf_rand(5) ? ' ' : '.';
                for (int k = 1 + (int)hf_rand(12); k > 0; k--) s[n++] = (char)('a' + hf_rand(4));
            }
            if (iter % 7 == 0) memcpy(s + n, "<|x|>", 5), n += 5;
            int32_t got[256], want[256];
            size_t ng = 0, nw = 0;
            ngpt_tokenizer_encode(t, s, n, got, 256, &ng);
            for (size_t i = 0; i < n;) {
                if (n - i >= 5 && !memcmp(s + i, "<|x|>", 5)) {
                    want[nw++] = 256 + HF_TOKENS;
                    i += 5;
                    continue;
                }
                size_t e = ngpt_pretok_next(NGPT_PRETOK_LLAMA3, (const uint8_t *)s, n, i);
                if (n - i >= 5) {       /* the special ends the text, never inside a piece here */
                    const char *x = memchr(s + i, '<', e - i);
                    if (x) e = (size_t)(x - s);
                }
                nw += hf_naive(&h, im, s + i, e - i, want + nw);
                i = e;
            }
            if (ng != nw || memcmp(got, want, ng * 4)) {
                if (bad++ < 3) fprintf(stderr, "ignore_merges=%d: \"%.*s\": %zu ids, want %zu\n", im, (int)n, s, ng, nw);
            }
        }
        CHECK(bad == 0, "ignore_merges=%d: ids equal Hugging Face's BPE on strings (%d texts differ)", im, bad);
        ngpt_tokenizer_free(t);
    }

    /* what the Split pipelines refuse, by name */
    char gpt2_split[512];
    snprintf(gpt2_split, sizeof gpt2_split, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": "
             "\"Split\", \"pattern\": {\"Regex\": \"'s|'t|'re|'ve|'m|'ll|'d| ?\\\\p{L}+| ?\\\\p{N}+\"}, "
             "\"behavior\": \"Isolated\"}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
             "\"use_regex\": false}]}");
    char removed[1024], byte_regex[1024];
    snprintf(removed, sizeof removed, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", "
             "\"pattern\": {\"Regex\": \"%s\"}, \"behavior\": \"Removed\"}, {\"type\": \"ByteLevel\", "
             "\"add_prefix_space\": false, \"use_regex\": false}]}", LLAMA_SPLIT);
    snprintf(byte_regex, sizeof byte_regex, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": "
             "\"Split\", \"pattern\": {\"Regex\": \"%s\"}, \"behavior\": \"Isolated\"}, {\"type\": "
             "\"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}]}", LLAMA_SPLIT);
    static const char *const eos_after =
        "{\"type\": \"TemplateProcessing\", \"single\": [{\"Sequence\": {\"id\": \"A\"}}, "
        "{\"SpecialToken\": {\"id\": \"<|x|>\"}}]}";
    static const char *const unknown_bos =
        "{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}}, "
        "{\"Sequence\": {\"id\": \"A\"}}]}";
    const struct { const char *pre, *post, *added, *words; } cases[] = {
        {gpt2_split, NULL, NULL, "with the regex \"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+\""},
        {removed, NULL, NULL, "behavior \"Removed\""},
        {byte_regex, NULL, NULL, "use_regex=true after Split"},
        {"{\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, \"behavior\": \"MergedWithPrevious\"}",
         NULL, NULL, "pre_tokenizer \"Split\""},
        {NULL, eos_after, NULL, "TemplateProcessing\" other than"},
        {NULL, "{\"type\": \"RobertaProcessing\"}", NULL, "post_processor \"RobertaProcessing\""},
        {NULL, unknown_bos, NULL, "not an added token: \"<s>\""},
        {NULL, NULL, "{\"id\": 346, \"content\": \"<|x|>\", \"special\": true, \"single_word\": true}",
         "single_word"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *json = hf_json(&h, true, cases[i].pre, cases[i].post, cases[i].added);
        ngpt_tokenizer *t = NULL;
        ngpt_status st = ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json");
        CHECK(st == NGPT_ERR_UNSUPPORTED && !t && strstr(ngpt_last_error(), cases[i].words),
              "Split case %zu is refused naming \"%s\": %s", i, cases[i].words, ngpt_last_error());
        free(json);
    }
    /* with a Split pipeline, added tokens that are not special, or strip
     * white space, are read with their flags (and matched in text) */
    char *json = hf_json(&h, true, NULL, "null", "{\"id\": 346, \"content\": \"<x>\", \"special\": false, "
                         "\"lstrip\": true}");
    ngpt_tokenizer *t = NULL;
    CHECK_OK(ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json"));
    if (t) {
        int32_t ids[16];
        size_t n = 0;
        CHECK(!ngpt_tokenizer_encode(t, "a  <x>", 6, ids, 16, &n) && n == 2 && ids[1] == 346 &&
                  t->added_flags[0] == NGPT_ADDED_LSTRIP && t->bos_id == -1,
              "a non-special added token with lstrip: matched, the spaces before it taken (%zu ids)", n);
    }
    ngpt_tokenizer_free(t);
    free(json);
}

/* ---- Gemma 3's shape (SentencePiece-style BPE, byte fallback), small
 * (gemma_tokenizer.h): the ids below are Hugging Face's BPE worked by hand
 * on that file. */
static void gemma_shape(void)
{
    char *json = gemma_tokenizer_json(GEMMA_NORM, GEMMA_PRE, GEMMA_DEC, true, -1);
    ngpt_tokenizer *t = NULL;
    ngpt_tokenizer_info info = {0};
    ngpt_status st = json ? ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json") : NGPT_ERR_NO_MEMORY;
    CHECK(st == NGPT_OK && !ngpt_tokenizer_describe(t, &info) && info.n_tokens == 275 && info.bos_id == 2 &&
              info.normalizer == NGPT_NORMALIZER_SPACE_MARK && info.pretok == NGPT_PRETOK_NONE &&
              info.split_special,
          "the Gemma-shaped file reads: %s (%d tokens, BOS %d)", st ? ngpt_last_error() : "",
          (int)info.n_tokens, (int)info.bos_id);
    free(json);
    if (!t) return;
#define B(x) (GEMMA_BYTES + (x))
    static const struct { const char *text; int n; int32_t ids[20]; } cases[] = {
        {"ab ab", 2, {268, 270}},                               /* a b ▁ a b: ▁a, ab, ▁ab */
        {"a  b", 3, {261, 269, 262}},                           /* merged from spaces */
        {"a\u2581\u2581b", 3, {261, 269, 262}},                 /* the added token, as it is */
        {"a \u2581b", 3, {261, 269, 262}},                      /* ▁ is a space */
        {"x", 1, {B('x')}},                                     /* byte fallback */
        {"\u65e5\u65e9\x01", 5, {265, B(0xe6), B(0x97), B(0xa9), B(0x01)}},   /* 早: a part left */
        {"\u65e5\u65e5\u00e9\U0001F600", 3, {273, 264, 266}},
        {"\n\n\n", 2, {272, 263}},                              /* added: leftmost, longest */
        {"<start_of_turn>a", 2, {271, 261}},
        {"<image_soft_token>", 18, {B('<'), B('i'), B('m'), 261, B('g'), B('e'), B('_'), B('s'), B('o'),
                                    B('f'), B('t'), B('_'), B('t'), B('o'), B('k'), B('e'), B('n'), B('>')}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t ids[32];
        size_t n = 0;
        st = ngpt_tokenizer_encode(t, cases[i].text, strlen(cases[i].text), ids, 32, &n);
        CHECK(!st && n == (size_t)cases[i].n && !memcmp(ids, cases[i].ids, n * sizeof *ids),
              "Gemma case %zu (\"%s\"): %zu ids as Hugging Face's (first %d)", i, cases[i].text, n,
              n ? (int)ids[0] : -1);
    }
    /* a chat turn's content: the plain added tokens, never a marker */
    int32_t ids[32];
    size_t n = 0;
    CHECK(!ngpt_tok_encode(t, "a\n\n<start_of_turn>", 18, false, ids, 32, &n) && n == 17 && ids[0] == 261 &&
              ids[1] == 272 && ids[2] == B('<'),
          "content: the line breaks are their added token, <start_of_turn> text (%zu ids)", n);
    /* decoding: ▁ as a space, a fallback token its byte, parts of a character its bytes */
    static const struct { int32_t id; const char *bytes; } dec[] = {
        {269, "  "}, {270, " ab"}, {B('b'), "b"}, {B(' '), " "}, {B(0xe6), "\xe6"}, {265, "\u65e5"}};
    for (size_t i = 0; i < sizeof dec / sizeof dec[0]; i++) {
        char out[16];
        size_t len = 0;
        CHECK(!ngpt_tokenizer_decode(t, &dec[i].id, 1, out, sizeof out, &len) && len == strlen(dec[i].bytes) &&
                  !memcmp(out, dec[i].bytes, len),
              "token %d decodes to \"%s\"", (int)dec[i].id, dec[i].bytes);
    }
    /* one BOS: a rendering that begins with it (Gemma's template writes
     * {{ bos_token }}) gets no other, one that does not gets it; the
     * template's line breaks are the added token, the content's too */
    static const char *const tmpl[2] = {"{{ bos_token }}<start_of_turn>user\n{{ messages[0]['content'] }}",
                                        "<start_of_turn>user\n{{ messages[0]['content'] }}"};
    const ngpt_chat_message msg = {.role = "user", .content = "a\n\n<bos>b", .content_len = 9};
    ngpt_template_options opt = ngpt_template_options_default();
    opt.bos_token = "<bos>";
    for (int w = 0; w < 2; w++) {
        ngpt_template *tpl = NULL;
        n = 0;
        CHECK(!ngpt_template_parse(&tpl, tmpl[w], strlen(tmpl[w])) &&
                  !ngpt_template_render_tokens(tpl, t, &msg, 1, &opt, NULL, 0, ids, 32, &n) && n == 15 &&
                  ids[0] == 2 && ids[1] == 271 && ids[2] == B('u') && ids[5] == B('r') && ids[6] == 263 &&
                  ids[7] == 261 && ids[8] == 272 && ids[9] == B('<') && ids[n - 1] == 262,
              "a rendering %s <bos> has one, and its content no marker (%zu ids: %d %d)",
              w ? "without" : "that writes", n, n ? (int)ids[0] : -1, n > 1 ? (int)ids[1] : -1);
        ngpt_template_free(tpl);
    }
    CHECK(!ngpt_tok_special(t, 263) && !ngpt_tok_special(t, 269) && ngpt_tok_special(t, 271) &&
              ngpt_tok_special(t, B('a')),
          "the plain added tokens are text (stop sequences and grammars read their bytes), the markers "
          "and the fallback tokens of characters not");
    /* a grammar on it: the masks are what each token's bytes say (fallback
     * tokens, parts of characters, ▁ runs), and no step is a dead end */
    ngpt_grammar *g = NULL;
    static const char gbnf[] = "root ::= [a-z ]+ (\"\u65e9\" | \"\u65e5\" | \"\\n\")";
    CHECK_OK(ngpt_grammar_parse(&g, t, gbnf, sizeof gbnf - 1));
    rng_state = 11;
    if (g) mask_walks(g, "Gemma-shaped", 8, 30);
    ngpt_grammar_free(g);
    int32_t part[4];
    const int32_t k = ngpt_tok_prefix(t, 265, 2, part);
    CHECK(k == 2 && part[0] == B(0xe6) && part[1] == B(0x97), "the first 2 bytes of 日: their fallback tokens");
    /* the file round trip: the same tokenizer */
    size_t size = 0;
    uint8_t *img = test_tokenizer_image(t, &size);
    ngpt_tokenizer *r = NULL;
    CHECK(img && !ngpt_tokenizer_load_mem(&r, img, size) && r && r->checksum == t->checksum &&
              !ngpt_tokenizer_encode(r, "a \u2581b\u65e9", 9, ids, 32, &n) && n == 6 && ids[1] == 269 &&
              ids[3] == B(0xe6),
          "the tokenizer file reads back and encodes the same");
    free(img);
    ngpt_tokenizer_free(r);
    /* for a model of 274 rows, <image_soft_token> (274) goes: never made from
     * text, it has no row; one of 275 rows keeps it */
    const uint64_t before = t->checksum;
    CHECK(!ngpt_tok_within(&t, 275, "t") && t->checksum == before && t->n_tokens == 275 &&
              !ngpt_tok_within(&t, 274, "t") && t->n_tokens == 274 && t->n_special == info.n_special - 1 &&
              !ngpt_tokenizer_encode(t, "\n<start_of_turn>a b", 19, ids, 32, &n) && n == 5 && ids[0] == 263 &&
              ids[1] == 271 && ids[4] == 262 && t->bos_id == 2,
          "ngpt_tok_within: a model of 274 rows drops <image_soft_token>, and the rest encodes the same");
    ngpt_tokenizer_free(t);
#undef B

    /* what it refuses, by name */
    const struct { const char *norm, *pre, *dec; bool fallback; int drop; const char *words; } bad[] = {
        {GEMMA_NORM, GEMMA_PRE, GEMMA_DEC, false, -1, "\"Replace\" without byte_fallback"},
        {"{\"type\": \"NFC\"}", GEMMA_PRE, GEMMA_DEC, true, -1, "byte_fallback without Gemma's"},
        {"{\"type\": \"Replace\", \"pattern\": {\"String\": \"x\"}, \"content\": \"\u2581\"}", GEMMA_PRE,
         GEMMA_DEC, true, -1, "other than \" \" -> \"\\u2581\""},
        {GEMMA_NORM, "{\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, \"behavior\": \"Isolated\"}",
         GEMMA_DEC, true, -1, "a pre_tokenizer other than Split"},
        {GEMMA_NORM, GEMMA_PRE, "{\"type\": \"ByteLevel\"}", true, -1, "a decoder other than"},
        {GEMMA_NORM, GEMMA_PRE, GEMMA_DEC, true, 0x41, "lacks \"<0x41>\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json = gemma_tokenizer_json(bad[i].norm, bad[i].pre, bad[i].dec, bad[i].fallback, bad[i].drop);
        t = NULL;
        st = json ? ngpt_hf_tokenizer_json(&t, json, strlen(json), "tokenizer.json") : NGPT_ERR_NO_MEMORY;
        CHECK(st == NGPT_ERR_UNSUPPORTED && !t && strstr(ngpt_last_error(), bad[i].words),
              "Gemma case %zu is refused naming \"%s\": %s", i, bad[i].words, ngpt_last_error());
        free(json);
        ngpt_tokenizer_free(t);
    }
}

/* A model on the file's ids: its checkpoint carries the tokenizer, and a
 * stop sequence that begins inside a token cuts the output at the right
 * byte (ngpt_tok_prefix on model ids). */
static void with_model(const ngpt_tokenizer *t)
{
    ngpt_tokenizer_info info;
    CHECK_OK(ngpt_tokenizer_describe(t, &info));
    ngpt_config cfg = test_config_tiny();
    cfg.vocab_size = info.n_tokens;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &shape, NULL, 0));
    if (!ctx) return;
    CHECK_OK(ngpt_context_params_init(ctx, 5));
    CHECK_OK(ngpt_context_tokenizer_set(ctx, t));
    char path[600];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/ngpt-hf-tok-%d.ngpt", tmp, (int)getpid());
    CHECK_OK(ngpt_context_save(ctx, path));
    ngpt_model *m = NULL;
    const ngpt_tokenizer *got = NULL;
    ngpt_tokenizer_info gi = {0};
    CHECK_OK(ngpt_model_open(&m, path));
    if (m) CHECK_OK(ngpt_model_tokenizer(m, &got));
    CHECK(got && !ngpt_tokenizer_describe(got, &gi) && gi.checksum == info.checksum &&
          gi.n_tokens == info.n_tokens, "the checkpoint carries the tokenizer with its ids");
    ngpt_model_close(m);
    remove(path);

    int32_t banned[N_SPECIAL], prompt[64], out[64], out2[512];
    for (int i = 0; i < N_SPECIAL; i++) banned[i] = i;     /* specials hold no text */
    size_t np = 0;
    CHECK_OK(ngpt_tokenizer_encode(t, "the theory of", 13, prompt, 64, &np));
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 24;
    gc.sampler.banned = banned;
    gc.sampler.n_banned = N_SPECIAL;
    ngpt_generate_result r = {0}, r2 = {0};
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, (int32_t)np, out, 64, NULL, NULL, &r));
    char text[2048], text2[2048];
    size_t n = 0, n2 = 0, at = 0;
    CHECK_OK(ngpt_tokenizer_decode(t, out, (size_t)r.n_tokens, text, sizeof text, &n));
    /* a stop sequence of two bytes that starts inside the first long token */
    int32_t j = 0;
    for (; j < r.n_tokens; j++) {
        const uint8_t *b;
        size_t len;
        ngpt_tokenizer_token(t, out[j], &b, &len);
        if (len >= 3 && j > 0) break;
        at += len;
    }
    if (j == r.n_tokens) {
        CHECK(false, "no token of 3 bytes among %d generated", (int)r.n_tokens);
    } else {
        char stop[3] = {text[at + 1], text[at + 2], 0};
        const char *stops[1] = {stop};
        size_t first = 0;
        while (memcmp(text + first, stop, 2)) first++;
        gc.stop = stops;
        gc.n_stop = 1;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, (int32_t)np, out2, 512, NULL, NULL, &r2));
        CHECK_OK(ngpt_tokenizer_decode(t, out2, (size_t)r2.n_tokens, text2, sizeof text2, &n2));
        CHECK(r2.reason == NGPT_STOP_SEQUENCE && n2 == first && !memcmp(text, text2, first),
              "the output ends right before the stop sequence: %zu bytes, want %zu", n2, first);
    }
    ngpt_context_free(ctx);
}

static bool write_corpus(const char *dir, const char *json)
{
    char p[600];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    FILE *f = fopen(p, "wb");
    bool ok = f && fwrite(json, 1, strlen(json), f) == strlen(json);
    if (f) ok &= fclose(f) == 0;
    snprintf(p, sizeof p, "%s/corpus.bin", dir);
    f = fopen(p, "wb");
    ok &= f != NULL;
    for (int i = 0; i < N_TEXTS && f; i++) {
        uint32_t n = (uint32_t)strlen(corpus_text(i));
        ok &= fwrite(&n, 4, 1, f) == 1 && fwrite(corpus_text(i), 1, n, f) == n;
    }
    if (f) ok &= fclose(f) == 0;
    return ok;
}

static void grammars(const ngpt_tokenizer *t)
{
    ngpt_grammar *g = NULL;
    CHECK_OK(ngpt_grammar_parse(&g, t, JSON_GBNF, strlen(JSON_GBNF)));
    rng_state = 9;
    if (g) mask_walks(g, "SmolLM2-shaped, JSON", 8, 50);
    ngpt_grammar_free(g);
    g = NULL;
    static const char classes[] = "root ::= [P-R]+ (\" \" [^a-z]{1,3})* \".\"";
    CHECK_OK(ngpt_grammar_parse(&g, t, classes, sizeof classes - 1));
    if (g) mask_walks(g, "SmolLM2-shaped, classes without Q", 8, 40);
    ngpt_grammar_free(g);
    g = NULL;
    CHECK(ngpt_grammar_parse(&g, t, "root ::= \"aQ\"", 13) == NGPT_ERR_UNSUPPORTED && !g &&
              strstr(ngpt_last_error(), "line 1, column 12: the literal needs byte 0x51"),
          "a literal with an absent byte: %s", ngpt_last_error());
}

int main(int argc, char **argv)
{
    memset(long_a, 'a', LONG_A);
    for (int i = 0; i < 40; i++) memcpy(long_the + 3 * i, "the", 3);
    pieces();
    ngpt_tokenizer *tr = trained();
    static layout L;
    if (tr) plan(tr, &L);
    const variant plain = {.swap_a = -1, .swap_b = -1};
    char *json = tr ? write_json(tr, &L, &plain) : NULL;
    if (argc == 3 && !strcmp(argv[1], "--write")) {
        mkdir(argv[2], 0755);
        bool ok = json && write_corpus(argv[2], json);
        fprintf(stderr, "%s %s/tokenizer.json and corpus.bin (%d tokens, %d merges)\n",
                ok ? "wrote" : "FAILED writing", argv[2], (int)L.V, (int)L.n_merges);
        return !ok;
    }
    CHECK(L.n_merges >= 300, "a few hundred merges: %d", (int)L.n_merges);
    ngpt_tokenizer *t = json ? read_json(json) : NULL;
    if (t) {
        against_golden(t);
        file_round_trip(t);
        refused(tr, &L);
        accepted(tr, &L);
        with_model(t);
        grammars(t);
        llama3_shape();
    }
    gemma_shape();
    ngpt_tokenizer_free(t);
    ngpt_tokenizer_free(tr);
    free(json);
    return test_summary("test_hf_tokenizer");
}
