/* scored.c — the scored tokenizer kind (scored.h): its tables, its file
 * image, llama2.c's tokenizer.bin, and run.c's encode. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/scored.h"

static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static int hex(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Whether piece p is a byte token "<0xNN>", and its byte. */
static bool byte_piece(const uint8_t *p, size_t n, uint8_t *b)
{
    if (n != 6 || memcmp(p, "<0x", 3) || p[5] != '>' || hex(p[3]) < 0 || hex(p[4]) < 0)
        return false;
    *b = (uint8_t)(hex(p[3]) << 4 | hex(p[4]));
    return true;
}

/* piece p as one line of a message: printable ASCII as is, others \xNN
 * (\n in "\n<s>\n"), cut to fit out. */
static const char *printable(const uint8_t *p, size_t n, char out[64])
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < 64; i++)
        k += (size_t)(p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\'
                          ? snprintf(out + k, 64 - k, "%c", p[i])
                          : snprintf(out + k, 64 - k, "\\x%02x", p[i]));
    out[k] = '\0';
    return out;
}

static int32_t lookup(const struct ngpt_tok_scored *s, const uint8_t *p, size_t n)
{
    const uint32_t mask = (1u << s->bits) - 1;
    for (uint32_t i = ngpt_str_slot(p, n, s->bits);; i = (i + 1) & mask) {
        const int32_t v = s->slot[i];
        if (v == 0) return -1;
        if (s->off[v] - s->off[v - 1] == n && !memcmp(s->bytes + s->off[v - 1], p, n)) return v - 1;
    }
}

void ngpt_tok_scored_free(struct ngpt_tok_scored *s)
{
    if (!s) return;
    free(s->score);
    free(s->off);
    free(s->bytes);
    free(s->slot);
    free(s);
}

/* The pieces' table, its checks, and the decoded bytes into t. */
static ngpt_status tables(ngpt_tokenizer *t, struct ngpt_tok_scored *s, int32_t n,
                          const float *score, const uint8_t *const *piece, const uint32_t *len,
                          const char *src)
{
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        if (len[i] == 0 || len[i] > NGPT_TOK_MAX_BYTES)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: token %d has length %u (a piece holds "
                             "1..%d bytes)", src, (int)i, len[i], NGPT_TOK_MAX_BYTES);
        if (!isfinite(score[i]))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: token %d has a score that is not finite",
                             src, (int)i);
        total += len[i];
    }
    s->score = malloc((size_t)n * sizeof *s->score);
    s->off = malloc(((size_t)n + 1) * sizeof *s->off);
    s->bytes = malloc(total);
    for (s->bits = 4; (1u << s->bits) < 2u * (uint32_t)n;) s->bits++;
    s->slot = calloc((size_t)1 << s->bits, sizeof *s->slot);
    t->off = malloc(((size_t)n + 1) * sizeof *t->off);
    t->bytes = malloc(total);
    if (!s->score || !s->off || !s->bytes || !s->slot || !t->off || !t->bytes)
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    memcpy(s->score, score, (size_t)n * sizeof *score);
    s->off[0] = t->off[0] = 0;
    const uint32_t mask = (1u << s->bits) - 1;
    for (int32_t i = 0; i < n; i++) {
        memcpy(s->bytes + s->off[i], piece[i], len[i]);
        s->off[i + 1] = s->off[i] + len[i];
        uint32_t k = ngpt_str_slot(piece[i], len[i], s->bits);
        char shown[64];
        for (; s->slot[k]; k = (k + 1) & mask)
            if (s->off[s->slot[k]] - s->off[s->slot[k] - 1] == len[i] &&
                !memcmp(s->bytes + s->off[s->slot[k] - 1], piece[i], len[i]))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: tokens %d and %d are the same piece "
                                 "(\"%s\"); a piece has one id", src, (int)s->slot[k] - 1,
                                 (int)i, printable(piece[i], len[i], shown));
        s->slot[k] = i + 1;
        uint8_t b;      /* the decoded bytes: <0xNN> is its byte */
        const bool is_byte = byte_piece(piece[i], len[i], &b);
        if (is_byte) t->bytes[t->off[i]] = b;
        else memcpy(t->bytes + t->off[i], piece[i], len[i]);
        t->off[i + 1] = t->off[i] + (is_byte ? 1 : len[i]);
        if ((int32_t)(t->off[i + 1] - t->off[i]) > t->max_len)
            t->max_len = (int32_t)(t->off[i + 1] - t->off[i]);
    }
    if (n < NGPT_TOK_SCORED_FIRST_BYTE + 256)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has %d tokens; a scored tokenizer has "
                         "<unk>, BOS, EOS and the 256 byte tokens <0x00>..<0xFF> first", src,
                         (int)n);
    for (int b = 0; b < 256; b++) {
        const int32_t id = NGPT_TOK_SCORED_FIRST_BYTE + b;
        uint8_t got;
        char shown[64];
        if (!byte_piece(piece[id], len[id], &got) || got != b)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: token %d is \"%s\", not <0x%02X> "
                             "(llama2.c's byte fallback is id byte + 3)", src, (int)id,
                             printable(piece[id], len[id], shown), (unsigned)b);
        t->byte_id[b] = id;
        t->id_byte[b] = (uint8_t)b;
    }
    if ((s->space_id = lookup(s, (const uint8_t *)" ", 1)) < 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has no \" \" piece, which every non-empty "
                         "text starts with", src);
    return NGPT_OK;
}

/* The file image: a 64-byte header, then per token f32 score, u32
 * length, its piece; then XXH3-64 of all before it. */
static ngpt_status make_image(ngpt_tokenizer *t, const struct ngpt_tok_scored *s)
{
    const size_t n = (size_t)t->n_tokens;
    const size_t size = NGPT_TOK_HEADER + 8 * n + s->off[n] + 8;
    uint8_t *p = calloc(1, size);
    if (!p) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    const uint32_t head[4] = {NGPT_TOK_VERSION_SCORED, (uint32_t)n, (uint32_t)t->bos_id,
                              (uint32_t)t->end_id};
    const uint64_t file_bytes = size;
    memcpy(p, NGPT_TOK_MAGIC, 8);
    memcpy(p + 8, head, sizeof head);
    memcpy(p + 40, &file_bytes, 8);
    size_t at = NGPT_TOK_HEADER;
    for (size_t i = 0; i < n; i++) {
        const uint32_t len = s->off[i + 1] - s->off[i];
        memcpy(p + at, &s->score[i], 4);
        memcpy(p + at + 4, &len, 4);
        memcpy(p + at + 8, s->bytes + s->off[i], len);
        at += 8 + len;
    }
    t->checksum = XXH3_64bits(p, at);
    memcpy(p + at, &t->checksum, 8);
    t->image = p;
    t->image_size = size;
    return NGPT_OK;
}

/* A scored tokenizer's ids are its model ids: the id maps every
 * tokenizer keeps (tokenizer.h) are the identity, so the shared accessors
 * read it as they read a version 1 BPE tokenizer. */
static ngpt_status identity_ids(ngpt_tokenizer *t, const char *src)
{
    t->n_internal = t->n_tokens;
    t->model_id = malloc((size_t)t->n_tokens * sizeof *t->model_id);
    t->internal_id = malloc((size_t)t->n_tokens * sizeof *t->internal_id);
    if (!t->model_id || !t->internal_id)
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    for (int32_t i = 0; i < t->n_tokens; i++) t->model_id[i] = t->internal_id[i] = i;
    return NGPT_OK;
}

ngpt_status ngpt_tok_scored_build(ngpt_tokenizer **out, int32_t n, const float *score,
                                  const uint8_t *const *piece, const uint32_t *len,
                                  const char *src)
{
    *out = NULL;
    if (n < 1 || n > NGPT_TOK_MAX_TOKENS)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has %d tokens (1..%d)", src, (int)n,
                         NGPT_TOK_MAX_TOKENS);
    ngpt_tokenizer *t = calloc(1, sizeof *t);
    struct ngpt_tok_scored *s = calloc(1, sizeof *s);
    if (!t || !s) {
        free(t);
        free(s);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    }
    t->scored = s;
    t->n_tokens = n;
    t->n_special = NGPT_TOK_SCORED_FIRST_BYTE;     /* <unk>, BOS, EOS */
    t->bos_id = NGPT_TOK_SCORED_BOS;
    t->end_id = NGPT_TOK_SCORED_EOS;
    t->n_end = 1;
    t->end_ids[0] = NGPT_TOK_SCORED_EOS;
    t->pad_id = -1;
    ngpt_status st = tables(t, s, n, score, piece, len, src);
    if (!st) st = identity_ids(t, src);
    if (!st) st = make_image(t, s);
    if (st) {       /* what tables and make_image allocated (tokenizer.c frees a made one) */
        free(t->model_id);
        free(t->internal_id);
        free(t->off);
        free(t->bytes);
        free(t->image);
        ngpt_tok_scored_free(s);
        free(t);
    } else {
        *out = t;
    }
    return st;
}

/* Builds from a run of (f32 score, u32/i32 len, bytes) records at p[at..end). */
static ngpt_status records(ngpt_tokenizer **out, const uint8_t *p, size_t at, size_t end,
                           int32_t n, uint32_t max_len, const char *src)
{
    if (n < 1 || n > NGPT_TOK_MAX_TOKENS)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s would have %d tokens (1..%d)", src, (int)n,
                         NGPT_TOK_MAX_TOKENS);
    float *score = malloc((size_t)n * sizeof *score);
    const uint8_t **piece = malloc((size_t)n * sizeof *piece);
    uint32_t *len = malloc((size_t)n * sizeof *len);
    ngpt_status st = NGPT_OK;
    if (!score || !piece || !len) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    for (int32_t i = 0; i < n && !st; i++) {
        if (end - at < 8) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: it ends at token %d of %d",
                           src, (int)i, (int)n);
            break;
        }
        memcpy(&score[i], p + at, 4);
        len[i] = get_u32(p + at + 4);
        if ((int32_t)len[i] <= 0 || len[i] > max_len)
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: token %d has length %d (1..%u)", src,
                           (int)i, (int)(int32_t)len[i], max_len);
        else if (end - at - 8 < len[i])
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: token %d does not fit", src,
                           (int)i);
        piece[i] = p + at + 8;
        at += 8 + (size_t)len[i];
    }
    if (!st && at != end)
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has %zu bytes after its %d tokens (is it the "
                       "tokenizer of this model?)", src, end - at, (int)n);
    if (!st) st = ngpt_tok_scored_build(out, n, score, piece, len, src);
    free(score);
    free(piece);
    free(len);
    return st;
}

ngpt_status ngpt_tok_scored_read_llama2c(ngpt_tokenizer **out, const uint8_t *p, size_t size,
                                         int32_t n_tokens, const char *src)
{
    *out = NULL;
    if (size < 4)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: %zu bytes, no header", src, size);
    const uint32_t max_len = get_u32(p);
    if (max_len == 0 || max_len > NGPT_TOK_MAX_BYTES)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s says its longest token has %u bytes (1..%d): "
                         "is it a llama2.c tokenizer.bin?", src, max_len, NGPT_TOK_MAX_BYTES);
    return records(out, p, 4, size, n_tokens, max_len, src);
}

ngpt_status ngpt_tok_scored_image_check(const uint8_t *p, size_t size, const char *src,
                                        int32_t *n_tokens, uint64_t *checksum)
{
    if (size < NGPT_TOK_HEADER + 8)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: %zu bytes, shorter than the "
                         "header", src, size);
    if (get_u64(p + 40) != size)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated or padded: its header says %llu "
                         "bytes but there are %zu", src, (unsigned long long)get_u64(p + 40), size);
    if ((uint64_t)XXH3_64bits(p, size - 8) != get_u64(p + size - 8))
        return ngpt_fail(NGPT_ERR_CHECKSUM, "%s is corrupted: its checksum does not match its "
                         "contents", src);
    const uint32_t n = get_u32(p + 12);
    if (n < 1 || n > NGPT_TOK_MAX_TOKENS || get_u32(p + 16) != NGPT_TOK_SCORED_BOS ||
        get_u32(p + 20) != NGPT_TOK_SCORED_EOS)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: %u tokens, BOS %u, EOS %u "
                         "(a scored tokenizer has BOS 1 and EOS 2)", src, n, get_u32(p + 16),
                         get_u32(p + 20));
    for (int i = 24; i < NGPT_TOK_HEADER; i++)
        if (p[i] && (i < 40 || i >= 48))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s sets reserved header byte %d; it was "
                             "written by a newer or broken writer", src, i);
    *n_tokens = (int32_t)n;
    *checksum = get_u64(p + size - 8);
    return NGPT_OK;
}

ngpt_status ngpt_tok_scored_parse(ngpt_tokenizer **out, const uint8_t *p, size_t size,
                                  const char *src)
{
    int32_t n;
    uint64_t checksum;
    ngpt_status st = ngpt_tok_scored_image_check(p, size, src, &n, &checksum);
    return st ? st : records(out, p, NGPT_TOK_HEADER, size - 8, n, NGPT_TOK_MAX_BYTES, src);
}

/* A pair of adjacent symbols whose concatenation is a piece: merging
 * candidates, best score first, then leftmost. Symbols keep the position
 * of their first byte's symbol, so positions order them as the text does. */
typedef struct cand {
    float score;
    uint32_t left;              /* the left symbol's position */
    int32_t a, b, merged;       /* its ids when pushed (stale once either changes) */
} cand;

typedef struct merger {
    const struct ngpt_tok_scored *s;
    int32_t *id;                /* per position: the symbol's id, -1 once merged into its left */
    uint32_t *next, *prev;      /* neighbours; UINT32_MAX at the ends */
    cand *heap;
    size_t n_heap, cap_heap;
    uint8_t pair[2 * NGPT_TOK_MAX_BYTES];
} merger;

static bool before(const cand *x, const cand *y)
{
    return x->score > y->score || (x->score == y->score && x->left < y->left);
}

/* Pushes positions p, q (adjacent) when they make a piece that run.c would
 * merge (its best score starts at -1e10); false when out of memory. */
static bool offer(merger *m, uint32_t p, uint32_t q)
{
    const struct ngpt_tok_scored *s = m->s;
    const int32_t a = m->id[p], b = m->id[q];
    const size_t la = s->off[a + 1] - s->off[a], lb = s->off[b + 1] - s->off[b];
    memcpy(m->pair, s->bytes + s->off[a], la);
    memcpy(m->pair + la, s->bytes + s->off[b], lb);
    const int32_t merged = lookup(s, m->pair, la + lb);
    if (merged < 0 || !(s->score[merged] > -1e10f)) return true;
    if (m->n_heap == m->cap_heap) {
        const size_t cap = m->cap_heap ? 2 * m->cap_heap : 64;
        cand *h = realloc(m->heap, cap * sizeof *h);
        if (!h) return false;
        m->heap = h, m->cap_heap = cap;
    }
    size_t i = m->n_heap++;
    const cand c = {s->score[merged], p, a, b, merged};
    for (; i > 0 && before(&c, &m->heap[(i - 1) / 2]); i = (i - 1) / 2) m->heap[i] = m->heap[(i - 1) / 2];
    m->heap[i] = c;
    return true;
}

static cand pop(merger *m)
{
    const cand top = m->heap[0], last = m->heap[--m->n_heap];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= m->n_heap) break;
        if (k + 1 < m->n_heap && before(&m->heap[k + 1], &m->heap[k])) k++;
        if (!before(&m->heap[k], &last)) break;
        m->heap[i] = m->heap[k];
        i = k;
    }
    if (m->n_heap) m->heap[i] = last;
    return top;
}

/* run.c's loop merges the best pair of the whole text, then looks again;
 * the candidates in a heap give the same merges in the same order, in
 * O(n log n) instead of O(n^2). */
ngpt_status ngpt_tok_scored_encode(const ngpt_tokenizer *t, const uint8_t *text, size_t len,
                                   int32_t *ids, size_t cap, size_t *n_out)
{
    const struct ngpt_tok_scored *s = t->scored;
    if (len >= UINT32_MAX - 1)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "a text of %zu bytes is over the scored tokenizer's "
                         "4 GiB", len);
    merger m = {.s = s};
    m.id = malloc((len + 1) * sizeof *m.id);
    m.next = malloc((len + 1) * sizeof *m.next);
    m.prev = malloc((len + 1) * sizeof *m.prev);
    ngpt_status st = NGPT_OK;
    if (!m.id || !m.next || !m.prev) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for %zu "
                                                    "bytes of text", len);
    uint32_t n = 0;
    if (!st && len > 0) m.id[n++] = s->space_id;      /* SentencePiece's dummy prefix */
    for (size_t i = 0; i < len && !st;) {            /* a code point: a byte and <= 3 continuations */
        size_t j = i + 1;
        while (j < len && (text[j] & 0xC0) == 0x80 && j - i < 4) j++;
        const int32_t id = lookup(s, text + i, j - i);
        if (id >= 0) m.id[n++] = id;
        else for (size_t k = i; k < j; k++) m.id[n++] = NGPT_TOK_SCORED_FIRST_BYTE + text[k];
        i = j;
    }
    for (uint32_t i = 0; i < n; i++) {
        m.prev[i] = i ? i - 1 : UINT32_MAX;
        m.next[i] = i + 1 < n ? i + 1 : UINT32_MAX;
    }
    for (uint32_t i = 0; i + 1 < n && !st; i++)
        if (!offer(&m, i, i + 1)) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory encoding");
    while (m.n_heap > 0 && !st) {
        const cand c = pop(&m);
        const uint32_t p = c.left, q = m.next[p];
        if (m.id[p] != c.a || q == UINT32_MAX || m.id[q] != c.b) continue;     /* stale */
        m.id[p] = c.merged;
        m.id[q] = -1;
        m.next[p] = m.next[q];
        if (m.next[q] != UINT32_MAX) m.prev[m.next[q]] = p;
        if ((m.prev[p] != UINT32_MAX && !offer(&m, m.prev[p], p)) ||
            (m.next[p] != UINT32_MAX && !offer(&m, p, m.next[p])))
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory encoding");
    }
    size_t k = 0;
    for (uint32_t i = 0; n > 0 && i != UINT32_MAX && !st; i = m.next[i], k++)
        if (ids && k < cap) ids[k] = m.id[i];
    *n_out = k;
    free(m.id);
    free(m.next);
    free(m.prev);
    free(m.heap);
    return st;
}

int32_t ngpt_tok_scored_prefix(const ngpt_tokenizer *t, int32_t id, size_t k, int32_t *out)
{
    if (ngpt_tok_len(t, id) == k) {
        out[0] = id;
        return 1;
    }
    const uint8_t *b = t->bytes + t->off[id];
    for (size_t i = 0; i < k; i++) out[i] = NGPT_TOK_SCORED_FIRST_BYTE + b[i];
    return (int32_t)k;
}
