/* fuzz_tokenizer.c — the tokenizer's loaders and its encoder. The first
 * byte's low two bits pick what the rest is:
 *   0  a tokenizer file (ngpt_tokenizer_load_mem)
 *   1  the same, its size field and checksum made right first, so that the
 *      fuzzer reaches the checks behind them
 *   2  GPT-2's two files: a 2-byte length, encoder.json, then vocab.bpe
 *   3  text to train on: vocab size (5 bits) and pre-tokenizer (3) from the next byte
 * Properties: every failure has a message; a tokenizer that loads or trains
 * encodes the text (the rest, its first TEXT_MAX bytes) into ids of its
 * vocabulary that are not special tokens (unless it reads them from text),
 * at most one a byte (three with NFC), decodes them back to the text
 * exactly (unless its vocabulary lacks some bytes, NFC changes the text or
 * a special token takes white space: then they decode), counts the same
 * number of ids without a buffer, and saves an image that loads back with
 * the same checksum. The text is also encoded and decoded with one of six
 * fixed tokenizers, made once per process (the first byte's other bits):
 * GPT-2 pieces, lines, no pre-tokenizer, a scored one of llama2.c's kind
 * (decoding gives " " + the text), and three of Hugging Face's pipelines
 * (Qwen's: NFC, GPT-4's pattern, special tokens in text with every flag;
 * Llama 3's: ignore_merges, an alias, a BOS; Gemma's: ▁ read as a space,
 * characters built by merges, byte fallback, added tokens that are plain
 * text, tests/gemma_tokenizer.h), so the encoders see every byte string
 * (Gemma's decodes to the text with a space for each ▁). A scored tokenizer loaded from the input is held to less:
 * its pieces may spell "<0xNN>" by merging, which decodes to one byte (as
 * in run.c), so only ids in range and a decode that succeeds. Work is
 * capped so that an input costs well under a millisecond: the text at
 * TEXT_MAX bytes (longer than a piece the encoder keeps on its stack,
 * NGPT_BPE_STACK_SYMBOLS), training at 63 merges. Seeds: files made by
 * ngpt (fuzz/corpus/tokenizer). It reaches internal headers, as tests do,
 * to build the Hugging Face pipelines from a spec. */
#include "fuzz.h"
#include "import/hf_tokenizer.h"
#include "tokenizer/scored.h"
#include "tokenizer/tokenizer.h"
#include "../tests/gemma_tokenizer.h"

#define TEXT_MAX 256

/* Whether some special token of tok strips white space next to it (then
 * decoding gives the text without that white space). */
static bool strips(const ngpt_tokenizer *tok)
{
    for (int32_t i = 0; tok->added_flags && i < tok->n_special; i++)
        if (tok->added_flags[i] & (NGPT_ADDED_LSTRIP | NGPT_ADDED_RSTRIP)) return true;
    return false;
}

static uint8_t *marks;                  /* ngpt_tok_space_mark's buffer, kept */
static size_t marks_cap;

/* Round trip of text through tok, with the properties above. */
static void exercise(const ngpt_tokenizer *tok, const uint8_t *text, size_t n, const char *what)
{
    ngpt_tokenizer_info info;
    if (ngpt_tokenizer_describe(tok, &info)) fuzz_fail("%s: describe: %s", what, ngpt_last_error());
    const bool scored = info.rule == NGPT_MERGE_SCORES;     /* a dummy " " first, specials at 0..2 */
    const bool nfc = info.normalizer == NGPT_NORMALIZER_NFC;
    const bool space_mark = info.normalizer == NGPT_NORMALIZER_SPACE_MARK;
    const size_t cap = nfc ? 3 * n + 1 : n + 1;     /* NFC lengthens text at most threefold */
    int32_t *ids = malloc(cap * sizeof *ids);
    uint8_t *back = malloc(cap * 4);
    if (!ids || !back) abort();
    size_t k = 0, count = 0, bytes = 0;
    ngpt_status st = ngpt_tokenizer_encode(tok, text, n, ids, cap, &k);
    fuzz_expect_message(st, "ngpt_tokenizer_encode");
    if (st) fuzz_fail("%s: encode of %zu bytes failed: %s", what, n, ngpt_last_error());
    if (k > (nfc ? 3 * n : n) + scored) fuzz_fail("%s: %zu ids for %zu bytes", what, k, n);
    if (ngpt_tokenizer_encode(tok, text, n, NULL, 0, &count) || count != k)
        fuzz_fail("%s: counting gives %zu ids, encoding %zu", what, count, k);
    if (info.n_special < 0) fuzz_fail("%s: %d special tokens", what, (int)info.n_special);
    int32_t *special_ids = malloc(((size_t)info.n_special + 1) * sizeof *special_ids);
    if (!special_ids) abort();
    for (int32_t s = 0; s < info.n_special; s++)    /* asked once, not once an id */
        if (ngpt_tokenizer_special(tok, s, &special_ids[s]))
            fuzz_fail("%s: special token %d: %s", what, (int)s, ngpt_last_error());
    for (size_t i = 0; i < k; i++) {
        bool special = false;
        for (int32_t s = 0; s < info.n_special; s++) special |= special_ids[s] == ids[i];
        if (ids[i] < 0 || ids[i] >= info.n_tokens || (special && !info.split_special))
            fuzz_fail("%s: id %d is not a token of text (%d tokens, %d special)", what, (int)ids[i],
                      (int)info.n_tokens, (int)info.n_special);
    }
    free(special_ids);
    if (scored && strcmp(what, "the fixed scored tokenizer")) {
        if (ngpt_tokenizer_decode(tok, ids, k, NULL, 0, &bytes))
            fuzz_fail("%s: decode: %s", what, ngpt_last_error());
        free(ids);
        free(back);
        return;
    }
    st = ngpt_tokenizer_decode(tok, ids, k, back, cap * 4, &bytes);
    if (!st && scored && n > 0) {       /* the dummy " " first */
        if (bytes != n + 1 || back[0] != ' ')
            fuzz_fail("%s: decode(encode(x)) is not \" \" + x", what);
        memmove(back, back + 1, n);
        bytes--;
    }
    /* the exact text back, but where a vocabulary lacks some bytes, NFC
     * changed the text (code points from U+0300 on) or a special token took
     * white space: then the ids must decode */
    bool every_byte = scored || space_mark || info.n_tokens == 256 + info.n_merges + info.n_special;
    bool same = every_byte && !strips(tok);
    for (size_t i = 0; nfc && i < n && same; i++) same = text[i] < 0xCC;
    if (!same && !st) st = NGPT_OK, bytes = n, memcpy(back, text, n);
    size_t want = n;                    /* the text, ▁ a space where it is read as one */
    const uint8_t *marked = space_mark ? ngpt_tok_space_mark(text, n, &want, &marks, &marks_cap) : text;
    if (!marked) abort();
    if (st || bytes != want || (want && memcmp(back, marked, want)))
        fuzz_fail("%s: decode(encode(x)) != x (%zu bytes, %zu back): %s", what, n, bytes,
                  ngpt_last_error());
    free(ids);
    free(back);
}

static void save_and_reload(const ngpt_tokenizer *tok)
{
    size_t size = 0;
    if (ngpt_tokenizer_save_mem(tok, NULL, 0, &size)) fuzz_fail("save_mem size: %s", ngpt_last_error());
    uint8_t *image = malloc(size);
    if (!image) abort();
    if (ngpt_tokenizer_save_mem(tok, image, size, &size)) fuzz_fail("save_mem: %s", ngpt_last_error());
    ngpt_tokenizer *again = NULL;
    if (ngpt_tokenizer_load_mem(&again, image, size))
        fuzz_fail("a saved tokenizer does not load: %s", ngpt_last_error());
    ngpt_tokenizer_info a, b;
    ngpt_tokenizer_describe(tok, &a);
    ngpt_tokenizer_describe(again, &b);
    if (a.checksum != b.checksum || a.n_tokens != b.n_tokens)
        fuzz_fail("a reloaded tokenizer differs");
    ngpt_tokenizer_free(again);
    free(image);
}

static ngpt_tokenizer *fixed[3], *fixed_scored, *fixed_hf[3];

/* llama2.c's layout: <unk>, BOS, EOS, the 256 byte tokens, then " ", a few
 * characters and merges of them (two with equal scores). */
static void make_fixed_scored(void)
{
    static const char *const more[] = {" ", "e", "t", "h", "\xc3\xa9", " t", "th", "he",
                                       " th", "the", " the", "ee"};
    static const float more_score[] = {-99, -99, -99, -99, -99, -1, -2, -2, -3, -4, -5, -6};
    enum { N = 259 + sizeof more / sizeof more[0] };
    static char bytes[256][7];
    const uint8_t *piece[N];
    uint32_t len[N];
    float score[N];
    static const char *const first[3] = {"<unk>", "\n<s>\n", "\n</s>\n"};
    for (int i = 0; i < N; i++) {
        const char *p = i < 3 ? first[i] : i < 259 ? bytes[i - 3] : more[i - 259];
        if (i >= 3 && i < 259) snprintf(bytes[i - 3], 7, "<0x%02X>", i - 3);
        piece[i] = (const uint8_t *)p;
        len[i] = (uint32_t)strlen(p);
        score[i] = i < 259 ? 0.0f : more_score[i - 259];
    }
    if (ngpt_tok_scored_build(&fixed_scored, N, score, piece, len, "the fixed scored tokenizer"))
        fuzz_fail("build the fixed scored tokenizer: %s", ngpt_last_error());
}

static void make_fixed(void)
{
    static const char text[] =
        "The tokenizer's merges: the pairs that occur most often, joined first. It's 2024; "
        "we're counting 1234567 bytes.\n  int x = y + 1;  // caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\n"
        "The tokenizer's merges: the pairs that occur most often, joined first.\n";
    const ngpt_pretokenizer p[3] = {NGPT_PRETOK_GPT2, NGPT_PRETOK_LINES, NGPT_PRETOK_NONE};
    for (int i = 0; i < 3; i++) {
        ngpt_tokenizer_train_config cfg = ngpt_tokenizer_train_config_default();
        cfg.vocab_size = 320;
        cfg.pretok = p[i];
        const void *texts[1] = {text};
        size_t sizes[1] = {sizeof text - 1};
        if (ngpt_tokenizer_train(&fixed[i], &cfg, texts, sizes, 1))
            fuzz_fail("train the fixed tokenizer: %s", ngpt_last_error());
    }
}

/* Hugging Face's pipelines on a few merges as Llama 3's files have them
 * ("the" made twice, " to" joining "to", which a later merge makes): Qwen's
 * (NFC, GPT-4's pattern with one digit, special tokens in text with every
 * flag) and Llama 3's (\p{N}{1,3}, ignore_merges, a BOS). */
static void make_fixed_hf(void)
{
    static const uint32_t merges[] = {'t', 'h', 'h', 'e', 256, 'e', 't', 257, ' ', 258,
                                      'i', 'n', 261, 'g', 'e', 'r', ' ', 265, 't', 'o', '1', '2'};
    enum { M = sizeof merges / sizeof merges[0] / 2 };
    static const char *const names[] = {"<|im_end|>", "<x>", "<l>", "<r>", "\xc3\xa9", "<|"};
    static const uint8_t flags[] = {0, NGPT_ADDED_LSTRIP | NGPT_ADDED_RSTRIP, NGPT_ADDED_LSTRIP,
                                    NGPT_ADDED_RSTRIP, NGPT_ADDED_NORMALIZED, 0};
    static ngpt_tok_spec zero;
    static int32_t model_id[256 + M + 6];
    for (int32_t i = 0; i < 256 + M + 6; i++) model_id[i] = i < 259 ? i : i - 1;
    model_id[259] = 258;                        /* merge 3 makes "the" again */
    for (int h = 0; h < 2; h++) {
        ngpt_tok_spec spec = zero;
        for (int b = 0; b < 256; b++) spec.id_byte[b] = (uint8_t)b;
        spec.merges = merges;
        spec.n_merges = M;
        spec.n_special = 6;
        for (int i = 0; i < 6; i++) {
            spec.special[i] = (const uint8_t *)names[i];
            spec.special_len[i] = strlen(names[i]);
            spec.added_flags[i] = h ? 0 : flags[i];
        }
        spec.model_id = model_id;
        spec.end_id = spec.pad_id = -1;
        spec.pretok = h ? NGPT_PRETOK_LLAMA3 : NGPT_PRETOK_QWEN2;
        spec.rule = NGPT_MERGE_PAIRS;
        spec.flags = NGPT_TOK_SPLIT_ADDED | (h ? NGPT_TOK_IGNORE_MERGES | NGPT_TOK_HAS_BOS : NGPT_TOK_NFC);
        spec.bos_id = 256 + M - 1;              /* the first special */
        if (ngpt_tok_build(&fixed_hf[h], &spec, "a fixed Hugging Face pipeline"))
            fuzz_fail("build the fixed Hugging Face pipelines: %s", ngpt_last_error());
    }
    char *json = gemma_tokenizer_json(GEMMA_NORM, GEMMA_PRE, GEMMA_DEC, true, -1);
    if (!json || ngpt_hf_tokenizer_json(&fixed_hf[2], json, strlen(json), "Gemma's fixed pipeline"))
        fuzz_fail("build Gemma's fixed pipeline: %s", ngpt_last_error());
    free(json);
}

NGPT_FUZZ_ENTRY(tokenizer)
{
    if (!fixed[0]) make_fixed(), make_fixed_scored(), make_fixed_hf();
    if (size < 1) return 0;
    const uint8_t mode = data[0] % 4, which = data[0] / 4 % 7;
    const uint8_t *rest = data + 1;
    const size_t n = size - 1, text_len = n < TEXT_MAX ? n : TEXT_MAX;
    /* exact sizes: ASan sees overreads */
    unsigned char *copy = fuzz_copy(rest, n), *text = fuzz_copy(rest, text_len);
    if (which < 3) exercise(fixed[which], text, text_len, "a fixed tokenizer");
    else if (which == 3) exercise(fixed_scored, text, text_len, "the fixed scored tokenizer");
    else exercise(fixed_hf[which - 4], text, text_len, "a fixed Hugging Face pipeline");
    ngpt_tokenizer *tok = NULL;
    ngpt_status st;
    const char *fn;
    if (mode <= 1) {
        if (mode == 1 && n >= 64 + 256 + 8) {      /* the size at 40, the XXH3 at the end */
            uint64_t sz = n, h;
            memcpy(copy + 40, &sz, 8);
            h = XXH3_64bits(copy, n - 8);
            memcpy(copy + n - 8, &h, 8);
        }
        fn = "ngpt_tokenizer_load_mem";
        st = ngpt_tokenizer_load_mem(&tok, copy, n);
    } else if (mode == 2) {
        size_t off = n >= 2 ? 2 : n, json = n >= 2 ? (size_t)(copy[0] | copy[1] << 8) : 0;
        if (json > n - off) json = n - off;
        unsigned char *j = fuzz_copy(copy + off, json), *b = fuzz_copy(copy + off + json, n - off - json);
        fn = "ngpt_tokenizer_load_gpt2_mem";
        st = ngpt_tokenizer_load_gpt2_mem(&tok, j, json, b, n - off - json);
        free(j);
        free(b);
    } else {
        ngpt_tokenizer_train_config cfg = ngpt_tokenizer_train_config_default();
        uint8_t how = n ? copy[0] : 0;
        cfg.vocab_size = 256 + 2 + (how & 63);
        cfg.pretok = (ngpt_pretokenizer)((how >> 5) % 6);
        const void *texts[1] = {text};
        fn = "ngpt_tokenizer_train";
        st = ngpt_tokenizer_train(&tok, &cfg, texts, &text_len, 1);
        if (st) fuzz_fail("training on %zu bytes failed: %s", text_len, ngpt_last_error());
    }
    fuzz_expect_message(st, fn);
    if (st && tok) fuzz_fail("%s failed but made a tokenizer", fn);
    if (!st) {
        exercise(tok, text, text_len, fn);
        save_and_reload(tok);
    }
    ngpt_tokenizer_free(tok);
    free(copy);
    free(text);
    return 0;
}
