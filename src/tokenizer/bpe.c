/* bpe.c — byte-pair merging of one run of bytes (bpe.h): from its bytes,
 * the adjacent pair with the lowest rank (the id of its merge) is joined
 * into the token that merge makes, the leftmost of equals first, until no
 * pair merges. It reads the tokenizer's tables and writes nothing of it.
 *
 * Two ways to do that, with the same result: a run of at most NGPT_BPE_SCAN bytes
 * keeps its symbols and pair ranks in two arrays and scans them for the
 * minimum (tiktoken's loop, O(m^2): fastest for short words); a longer run
 * keeps its symbols in a linked list and its pairs in a binary min-heap
 * keyed by (rank, position), O(m log m), in the caller's scratch: its stack
 * block up to NGPT_BPE_STACK_SYMBOLS bytes, else one allocation. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer/bpe.h"

static inline int32_t rank_of(const ngpt_tokenizer *t, int32_t a, int32_t b)
{
    int32_t r = ngpt_tok_pair(t, a, b);
    return r < 0 ? INT32_MAX : r;
}

static void bpe_small(const ngpt_tokenizer *t, const uint8_t *p, size_t m, ngpt_bpe_writer *w)
{
    int32_t sym[NGPT_BPE_SCAN], rank[NGPT_BPE_SCAN];       /* rank[i]: the pair sym[i], sym[i+1] */
    for (size_t i = 0; i < m; i++) sym[i] = t->byte_id[p[i]];
    for (size_t i = 0; i + 1 < m; i++) rank[i] = rank_of(t, sym[i], sym[i + 1]);
    size_t n = m;
    while (n > 1) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < n; i++)
            if (rank[i] < rank[best]) best = i;
        if (rank[best] == INT32_MAX) break;
        sym[best] = ngpt_tok_merged(t, rank[best]);
        n--;
        memmove(sym + best + 1, sym + best + 2, (n - best - 1) * sizeof *sym);
        if (best + 1 < n) memmove(rank + best + 1, rank + best + 2, (n - best - 2) * sizeof *rank);
        if (best > 0) rank[best - 1] = rank_of(t, sym[best - 1], sym[best]);
        if (best + 1 < n) rank[best] = rank_of(t, sym[best], sym[best + 1]);
    }
    for (size_t i = 0; i < n; i++) ngpt_bpe_emit(w, sym[i]);
}

/* ---- the long path: a linked list of symbols and a heap of pairs */

typedef struct heap {
    uint64_t *h;                /* rank << 32 | position of the pair's left symbol */
    size_t n;
} heap;

static void heap_push(heap *hp, uint64_t key)
{
    uint64_t *h = hp->h;
    size_t i = hp->n++;
    while (i > 0 && h[(i - 1) / 2] > key) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = key;
}

static uint64_t heap_pop(heap *hp)
{
    uint64_t *h = hp->h, top = h[0], last = h[--hp->n];
    size_t i = 0, n = hp->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= last) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = last;
    return top;
}

/* Per symbol: id, next, prev, the rank of its pair with next (4 bytes each),
 * and up to three heap entries (8 bytes each): the first pairs, then two
 * per merge. */
enum { LONG_BYTES_PER_SYMBOL = 4 * 4 + 3 * 8 };
_Static_assert(sizeof(uint64_t) * 5 == LONG_BYTES_PER_SYMBOL,
               "the scratch's stack holds NGPT_BPE_STACK_SYMBOLS");

static ngpt_status bpe_long(const ngpt_tokenizer *t, const uint8_t *p, size_t m, ngpt_bpe_writer *w,
                            ngpt_bpe_scratch *s)
{
    if (m > INT32_MAX)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "a piece of %zu bytes is longer than the encoder "
                         "takes (2^31 - 1); use a pre-tokenizer or encode the text in parts", m);
    if (m > s->syms) {
        size_t bytes;
        if (!ngpt_mul_ok(m, LONG_BYTES_PER_SYMBOL, &bytes))
            return ngpt_fail(NGPT_ERR_OVERFLOW, "a piece of %zu bytes needs more working memory "
                             "than this machine can address", m);
        if (s->buf != s->stack) free(s->buf);
        s->buf = malloc(bytes);
        s->syms = s->buf ? m : 0;
        if (!s->buf)
            return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory encoding a piece of %zu bytes "
                             "(%zu bytes of working memory)", m, bytes);
    }
    uint64_t *hbuf = s->buf;
    int32_t *sym = (int32_t *)(hbuf + 3 * m), *next = sym + m, *prev = next + m, *rank = prev + m;
    heap hp = {hbuf, 0};
    int32_t n = (int32_t)m;
    for (int32_t i = 0; i < n; i++) {
        sym[i] = t->byte_id[p[i]];
        next[i] = i + 1 < n ? i + 1 : -1;
        prev[i] = i - 1;
    }
    for (int32_t i = 0; i + 1 < n; i++) {
        rank[i] = rank_of(t, sym[i], sym[i + 1]);
        if (rank[i] != INT32_MAX) heap_push(&hp, (uint64_t)rank[i] << 32 | (uint32_t)i);
    }
    rank[n - 1] = INT32_MAX;
    while (hp.n > 0) {
        uint64_t key = heap_pop(&hp);
        int32_t r = (int32_t)(key >> 32), i = (int32_t)(uint32_t)key;
        if (rank[i] != r) continue;             /* stale: the pair at i changed */
        int32_t q = next[i];
        sym[i] = ngpt_tok_merged(t, r);         /* join i and q */
        next[i] = next[q];
        if (next[q] >= 0) prev[next[q]] = i;
        sym[q] = -1, rank[q] = INT32_MAX;
        rank[i] = next[i] >= 0 ? rank_of(t, sym[i], sym[next[i]]) : INT32_MAX;
        if (rank[i] != INT32_MAX) heap_push(&hp, (uint64_t)rank[i] << 32 | (uint32_t)i);
        int32_t a = prev[i];
        if (a >= 0) {
            rank[a] = rank_of(t, sym[a], sym[i]);
            if (rank[a] != INT32_MAX) heap_push(&hp, (uint64_t)rank[a] << 32 | (uint32_t)a);
        }
    }
    for (int32_t i = 0; i >= 0; i = next[i]) ngpt_bpe_emit(w, sym[i]);
    return NGPT_OK;
}

ngpt_status ngpt_bpe_part(const ngpt_tokenizer *t, const uint8_t *p, size_t m, ngpt_bpe_writer *w,
                            ngpt_bpe_scratch *s)
{
    if (m == 1) {
        ngpt_bpe_emit(w, t->byte_id[p[0]]);
        return NGPT_OK;
    }
    if (m <= NGPT_BPE_SCAN) {
        bpe_small(t, p, m, w);
        return NGPT_OK;
    }
    return bpe_long(t, p, m, w, s);
}

void ngpt_bpe_scratch_init(ngpt_bpe_scratch *s)
{
    s->buf = s->stack;
    s->syms = NGPT_BPE_STACK_SYMBOLS;
}

void ngpt_bpe_scratch_free(ngpt_bpe_scratch *s)
{
    if (s->buf != s->stack) free(s->buf);
}
