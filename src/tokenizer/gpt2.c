/* gpt2.c — GPT-2's tokenizer from its two published files
 * (ngpt_tokenizer_load_gpt2; docs/TOKENIZER.md, "GPT-2"):
 *   encoder.json  a JSON object: token -> id, 50257 entries
 *   vocab.bpe     "#version: 0.2", then one merge per line: "A B"
 * Both write a token's bytes as characters: GPT-2's bytes_to_unicode maps
 * each of the 256 bytes to a printable character (the 188 printable bytes
 * '!'..'~', U+00A1..U+00AC, U+00AE..U+00FF to themselves, the other 68 in
 * increasing order to U+0100..U+0143). Ids 0..255 must be the 256 bytes and
 * merge k must make id 256 + k, which is how GPT-2's files are laid out;
 * the ids after the merges are special tokens ("<|endoftext|>"). */
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

/* tokenizer.h: the printable bytes stand for themselves; U+0100 + n for the
 * n-th other byte (0..32, then 127..160, then 173). */
int ngpt_tok_char_byte(uint32_t c)
{
    if (c < 256) return (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE ? (int)c : -1;
    if (c >= 256 + 68) return -1;
    uint32_t n = c - 256;
    return n <= 32 ? (int)n : n <= 66 ? (int)(127 + n - 33) : 173;
}

typedef struct entry {
    size_t off, len;            /* in the byte arena */
    const uint8_t *p;           /* bytes + off, once the arena is complete */
    int64_t id;
} entry;

typedef struct vocab {
    entry *v;
    size_t n, cap;
    uint8_t *bytes;
    size_t n_bytes, cap_bytes;
    const char *src;
} vocab;

static bool arena_put(vocab *vb, uint8_t c)
{
    if (vb->n_bytes == vb->cap_bytes) {
        size_t cap = vb->cap_bytes ? 2 * vb->cap_bytes : 1 << 16;
        uint8_t *b = realloc(vb->bytes, cap);
        if (!b) return false;
        vb->bytes = b, vb->cap_bytes = cap;
    }
    vb->bytes[vb->n_bytes++] = c;
    return true;
}

typedef struct cursor {
    const uint8_t *p;
    size_t n, i;
    const char *src;
    size_t line;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->i < c->n && (c->p[c->i] == ' ' || c->p[c->i] == '\t' || c->p[c->i] == '\n' ||
                           c->p[c->i] == '\r')) {
        if (c->p[c->i] == '\n') c->line++;
        c->i++;
    }
}

static ngpt_status syntax(const cursor *c, const char *what)
{
    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not GPT-2's encoder.json: %s at line %zu "
                     "(byte %zu)", c->src, what, c->line, c->i);
}

static int hex_digit(uint8_t h)
{
    return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
         : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

static bool read_hex4(cursor *c, uint32_t *v)
{
    if (c->n - c->i < 4) return false;
    *v = 0;
    for (int k = 0; k < 4; k++) {
        int d = hex_digit(c->p[c->i + k]);
        if (d < 0) return false;
        *v = *v << 4 | (uint32_t)d;
    }
    c->i += 4;
    return true;
}

/* Reads one code point of a JSON string (after the opening quote, not at
 * the closing one). */
static ngpt_status string_char(cursor *c, uint32_t *cp)
{
    uint8_t ch = c->p[c->i];
    if (ch < 0x20) return syntax(c, "a control character in a string");
    if (ch != '\\') {
        size_t k = ngpt_utf8_decode(c->p + c->i, c->n - c->i, cp);
        if (!k) return syntax(c, "invalid UTF-8");
        c->i += k;
        return NGPT_OK;
    }
    if (++c->i >= c->n) return syntax(c, "an unfinished escape");
    ch = c->p[c->i++];
    switch (ch) {
    case '"': case '\\': case '/': *cp = ch; return NGPT_OK;
    case 'b': *cp = '\b'; return NGPT_OK;
    case 'f': *cp = '\f'; return NGPT_OK;
    case 'n': *cp = '\n'; return NGPT_OK;
    case 'r': *cp = '\r'; return NGPT_OK;
    case 't': *cp = '\t'; return NGPT_OK;
    case 'u': {
        uint32_t hi, lo;
        if (!read_hex4(c, &hi)) return syntax(c, "a bad \\u escape");
        if (hi >= 0xDC00 && hi <= 0xDFFF) return syntax(c, "a lone surrogate");
        if (hi >= 0xD800 && hi <= 0xDBFF) {
            if (c->n - c->i < 2 || c->p[c->i] != '\\' || c->p[c->i + 1] != 'u')
                return syntax(c, "a lone surrogate");
            c->i += 2;
            if (!read_hex4(c, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                return syntax(c, "a lone surrogate");
            hi = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        }
        *cp = hi;
        return NGPT_OK;
    }
    default:
        return syntax(c, "an unknown escape");
    }
}

/* A JSON string of GPT-2 characters, appended to the arena as bytes. */
static ngpt_status token_string(cursor *c, vocab *vb, size_t *len)
{
    if (c->i >= c->n || c->p[c->i] != '"') return syntax(c, "a token (a string) expected");
    c->i++;
    size_t start = vb->n_bytes;
    for (;;) {
        if (c->i >= c->n) return syntax(c, "an unterminated string");
        if (c->p[c->i] == '"') break;
        uint32_t cp = 0;
        ngpt_status st = string_char(c, &cp);
        if (st) return st;
        int b = ngpt_tok_char_byte(cp);
        if (b < 0)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: a token at line %zu holds U+%04X, which "
                             "is not one of GPT-2's 256 byte characters", c->src, c->line,
                             (unsigned)cp);
        if (vb->n_bytes - start >= NGPT_TOK_MAX_BYTES)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: a token at line %zu is longer than %d "
                             "bytes", c->src, c->line, NGPT_TOK_MAX_BYTES);
        if (!arena_put(vb, (uint8_t)b))
            return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", c->src);
    }
    c->i++;
    *len = vb->n_bytes - start;
    if (*len == 0) return syntax(c, "an empty token");
    return NGPT_OK;
}

static ngpt_status parse_json(cursor *c, vocab *vb)
{
    skip_ws(c);
    if (c->i >= c->n || c->p[c->i++] != '{') return syntax(c, "'{' expected");
    skip_ws(c);
    if (c->i < c->n && c->p[c->i] == '}') return syntax(c, "no tokens");
    for (;;) {
        size_t off = vb->n_bytes, len;
        skip_ws(c);
        ngpt_status st = token_string(c, vb, &len);
        if (st) return st;
        skip_ws(c);
        if (c->i >= c->n || c->p[c->i++] != ':') return syntax(c, "':' expected");
        skip_ws(c);
        int64_t id = 0;
        size_t digits = 0;
        while (c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9' && digits < 10)
            id = id * 10 + (c->p[c->i++] - '0'), digits++;
        if (digits == 0 || (c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9'))
            return syntax(c, "a token id (0..2^31) expected");
        if (vb->n == vb->cap) {
            size_t cap = vb->cap ? 2 * vb->cap : 1024;
            entry *v = realloc(vb->v, cap * sizeof *v);
            if (!v) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", c->src);
            vb->v = v, vb->cap = cap;
        }
        if (vb->n >= NGPT_TOK_MAX_TOKENS)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has more than %d tokens", c->src,
                             NGPT_TOK_MAX_TOKENS);
        vb->v[vb->n++] = (entry){off, len, NULL, id};
        skip_ws(c);
        if (c->i >= c->n) return syntax(c, "',' or '}' expected");
        uint8_t ch = c->p[c->i++];
        if (ch == '}') break;
        if (ch != ',') return syntax(c, "',' or '}' expected");
    }
    skip_ws(c);
    if (c->i != c->n) return syntax(c, "text after the object");
    return NGPT_OK;
}

static int cmp_entry_bytes(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    int r = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);
    return r ? r : (a->len > b->len) - (a->len < b->len);
}

/* The id of the entry with bytes s[0..n) in the sorted vocabulary, or -1. */
static int64_t find(const vocab *vb, const uint8_t *s, size_t n)
{
    size_t lo = 0, hi = vb->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const entry *e = &vb->v[mid];
        size_t k = e->len < n ? e->len : n;
        int r = memcmp(e->p, s, k);
        if (!r) r = (e->len > n) - (e->len < n);
        if (!r) return e->id;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* One side of a merge line: GPT-2 characters up to a space or the line end. */
static ngpt_status merge_side(const uint8_t *p, size_t n, uint8_t *out, size_t *len,
                              const char *src, size_t line)
{
    *len = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = ngpt_utf8_decode(p + i, n - i, &cp);
        int b = k ? ngpt_tok_char_byte(cp) : -1;
        if (b < 0)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: line %zu is not a merge of two tokens "
                             "of GPT-2's byte characters", src, line);
        if (*len == NGPT_TOK_MAX_BYTES)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: line %zu holds a token longer than %d "
                             "bytes", src, line, NGPT_TOK_MAX_BYTES);
        out[(*len)++] = (uint8_t)b;
        i += k;
    }
    if (*len == 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: line %zu is not a merge of two tokens (\"A B\")",
                         src, line);
    return NGPT_OK;
}

ngpt_status ngpt_tok_load_gpt2(ngpt_tokenizer **tok, const uint8_t *json, size_t json_size,
                               const char *json_src, const uint8_t *bpe, size_t bpe_size,
                               const char *bpe_src)
{
    vocab vb = {.src = json_src};
    cursor c = {json, json_size, 0, json_src, 1};
    uint32_t *merges = NULL;
    const entry **by_id = NULL;
    ngpt_tok_spec *spec = NULL;     /* room for 8192 specials: not the stack */
    ngpt_status st = parse_json(&c, &vb);
    if (st) goto done;
    /* ids: 0..n-1, each once */
    by_id = calloc(vb.n, sizeof *by_id);
    merges = malloc(vb.n * 2 * sizeof *merges);
    spec = calloc(1, sizeof *spec);
    if (!by_id || !merges || !spec) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", json_src);
        goto done;
    }
    for (size_t i = 0; i < vb.n; i++) {
        int64_t id = vb.v[i].id;
        if (id < 0 || (uint64_t)id >= vb.n || by_id[id]) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: id %lld is %s; the %zu ids "
                           "must be 0..%zu, each once", json_src, (long long)id,
                           id >= 0 && (uint64_t)id < vb.n ? "given twice" : "out of range",
                           vb.n, vb.n - 1);
            goto done;
        }
        by_id[id] = &vb.v[i];
    }
    if (vb.n < 256) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has %zu tokens, fewer than the 256 bytes",
                       json_src, vb.n);
        goto done;
    }
    for (int i = 0; i < 256; i++) {
        if (by_id[i]->len != 1) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: token %d is not a single byte; ngpt reads "
                           "GPT-2's layout, where ids 0..255 are the 256 bytes", json_src, i);
            goto done;
        }
        spec->id_byte[i] = vb.bytes[by_id[i]->off];
    }
    /* the merges, in order */
    entry *sorted = vb.v;
    for (size_t i = 0; i < vb.n; i++) sorted[i].p = vb.bytes + sorted[i].off;
    qsort(sorted, vb.n, sizeof *sorted, cmp_entry_bytes);
    for (size_t i = 1; i < vb.n; i++)
        if (!cmp_entry_bytes(&sorted[i - 1], &sorted[i])) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: tokens %lld and %lld are "
                           "the same bytes", json_src, (long long)sorted[i - 1].id,
                           (long long)sorted[i].id);
            goto done;
        }
    /* by_id pointed into vb.v before the sort: not used from here on */
    size_t m = 0, line = 0;
    for (size_t i = 0; i < bpe_size;) {
        const uint8_t *nl = memchr(bpe + i, '\n', bpe_size - i);
        size_t end = nl ? (size_t)(nl - bpe) : bpe_size, stop = end;
        line++;
        if (stop > i && bpe[stop - 1] == '\r') stop--;
        const uint8_t *s = bpe + i;
        size_t n = stop - i;
        i = end + 1;
        if (n == 0 || (line == 1 && n >= 8 && !memcmp(s, "#version", 8))) continue;
        const uint8_t *sp = memchr(s, ' ', n);
        uint8_t a[NGPT_TOK_MAX_BYTES], b[NGPT_TOK_MAX_BYTES], ab[2 * NGPT_TOK_MAX_BYTES];
        size_t la, lb;
        if (!sp) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: line %zu is not a merge of two tokens "
                           "(\"A B\")", bpe_src, line);
            goto done;
        }
        if ((st = merge_side(s, (size_t)(sp - s), a, &la, bpe_src, line)) ||
            (st = merge_side(sp + 1, n - (size_t)(sp - s) - 1, b, &lb, bpe_src, line)))
            goto done;
        int64_t ia = find(&vb, a, la), ib = find(&vb, b, lb);
        memcpy(ab, a, la);
        memcpy(ab + la, b, lb);
        int64_t iab = find(&vb, ab, la + lb);
        if (ia < 0 || ib < 0) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: line %zu joins a token that %s does not "
                           "list", bpe_src, line, json_src);
            goto done;
        }
        if (iab != 256 + (int64_t)m) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: merge %zu (line %zu) makes a token that %s "
                           "%s, not id %zu (ngpt reads GPT-2's layout, where merge k makes id "
                           "256 + k)", bpe_src, m, line, json_src,
                           iab < 0 ? "does not list" : "gives another id", 256 + m);
            goto done;
        }
        merges[2 * m] = (uint32_t)ia;
        merges[2 * m + 1] = (uint32_t)ib;
        m++;
    }
    /* the rest are special tokens, in id order */
    size_t n_special = vb.n - 256 - m;
    if (n_special > NGPT_TOK_MAX_SPECIAL) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s lists %zu tokens that %s does not make; at most "
                       "%d special tokens are allowed", json_src, n_special, bpe_src,
                       NGPT_TOK_MAX_SPECIAL);
        goto done;
    }
    spec->merges = merges;
    spec->n_merges = (int32_t)m;
    spec->n_special = (int32_t)n_special;
    spec->end_id = spec->pad_id = -1;
    spec->pretok = NGPT_PRETOK_GPT2;
    spec->rule = NGPT_MERGE_CONCAT;
    for (size_t i = 0; i < vb.n; i++) {
        const entry *e = &vb.v[i];
        if (e->id < 256 + (int64_t)m) continue;
        size_t k = (size_t)e->id - 256 - m;
        spec->special[k] = e->p;
        spec->special_len[k] = e->len;
        if (e->len == 13 && !memcmp(e->p, "<|endoftext|>", 13)) spec->end_id = (int32_t)e->id;
    }
    st = ngpt_tok_build(tok, spec, bpe_src);
done:
    free(spec);
    free(by_id);
    free(merges);
    free(vb.v);
    free(vb.bytes);
    return st;
}

ngpt_status ngpt_tokenizer_load_gpt2_mem(ngpt_tokenizer **tok, const void *encoder_json,
                                         size_t json_size, const void *vocab_bpe, size_t bpe_size)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_gpt2_mem: NULL argument");
    *tok = NULL;
    if (!encoder_json || !vocab_bpe)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_gpt2_mem: NULL argument");
    return ngpt_prefixed("ngpt_tokenizer_load_gpt2_mem",
                         ngpt_tok_load_gpt2(tok, encoder_json, json_size, "the encoder.json buffer",
                                            vocab_bpe, bpe_size, "the vocab.bpe buffer"));
}

ngpt_status ngpt_tokenizer_load_gpt2(ngpt_tokenizer **tok, const char *encoder_json,
                                     const char *vocab_bpe)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_gpt2: NULL argument");
    *tok = NULL;
    if (!encoder_json || !vocab_bpe)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_gpt2: NULL argument");
    uint8_t *json = NULL, *bpe = NULL;
    size_t json_size, bpe_size;
    ngpt_status st = ngpt_tok_read_file(encoder_json, &json, &json_size);
    if (!st) st = ngpt_tok_read_file(vocab_bpe, &bpe, &bpe_size);
    if (!st) st = ngpt_tok_load_gpt2(tok, json, json_size, encoder_json, bpe, bpe_size, vocab_bpe);
    free(json);
    free(bpe);
    return ngpt_prefixed("ngpt_tokenizer_load_gpt2", st);
}
