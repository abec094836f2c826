/* trie.c — the vocabulary's byte trie (trie.h): the tokens sorted by their
 * bytes, then one pass that opens a node for each byte past the common
 * prefix with the previous token. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tokenizer.h"
#include "tokenizer/trie.h"

typedef struct entry {
    const uint8_t *bytes;
    uint32_t len;
    int32_t id;
} entry;

static int entry_cmp(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    const uint32_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->bytes, b->bytes, n);
    if (c) return c;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

void ngpt_tok_trie_free(ngpt_tok_trie *t)
{
    if (!t) return;
    free(t->byte);
    free(t->depth);
    free(t->end);
    free(t->parent);
    free(t->tok_off);
    free(t->toks);
    free(t->has);
    free(t);
}

/* The trie of n entries (sorted here) for ids 0..n_vocab-1; NULL: no memory. */
static ngpt_tok_trie *build(entry *e, int32_t n, int32_t n_vocab)
{
    qsort(e, (size_t)n, sizeof *e, entry_cmp);
    size_t nodes = 0;   /* at most the sum of the lengths */
    for (int32_t i = 0; i < n; i++) nodes += e[i].len;
    ngpt_tok_trie *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    const size_t cap = nodes ? nodes : 1;
    t->byte = malloc(cap);
    t->depth = malloc(cap * sizeof *t->depth);
    t->end = malloc(cap * sizeof *t->end);
    t->parent = malloc(cap * sizeof *t->parent);
    t->tok_off = malloc((cap + 1) * sizeof *t->tok_off);
    t->toks = malloc((n ? (size_t)n : 1) * sizeof *t->toks);
    t->has = calloc(((size_t)n_vocab + 63) / 64 + 1, sizeof *t->has);
    if (!t->byte || !t->depth || !t->end || !t->parent || !t->tok_off || !t->toks || !t->has) {
        ngpt_tok_trie_free(t);
        return NULL;
    }
    t->n_vocab = n_vocab;
    uint32_t open[NGPT_TOK_MAX_BYTES + 1];  /* the nodes of the previous token's bytes */
    uint32_t n_open = 0, count = 0;
    const uint8_t *prev = NULL;
    for (int32_t i = 0; i < n; i++) {
        uint32_t common = 0;
        while (prev && common < n_open && common < e[i].len && prev[common] == e[i].bytes[common])
            common++;
        while (n_open > common) t->end[open[--n_open]] = count;     /* close */
        for (uint32_t d = common; d < e[i].len; d++) {
            t->byte[count] = e[i].bytes[d];
            t->depth[count] = (uint16_t)(d + 1);
            t->parent[count] = d ? open[d - 1] : UINT32_MAX;
            t->tok_off[count] = (uint32_t)t->n_toks;
            open[n_open++] = count++;
        }
        t->toks[t->n_toks++] = e[i].id;     /* sorted: a node's tokens come in a row */
        t->has[e[i].id >> 6] |= 1ull << (e[i].id & 63);
        if ((int32_t)e[i].len > t->max_depth) t->max_depth = (int32_t)e[i].len;
        prev = e[i].bytes;
    }
    while (n_open > 0) t->end[open[--n_open]] = count;
    t->tok_off[count] = (uint32_t)t->n_toks;
    t->n_nodes = (int32_t)count;
    return t;
}

#define B4(n) n, n + 1, n + 2, n + 3
#define B16(n) B4(n), B4(n + 4), B4(n + 8), B4(n + 12)
#define B64(n) B16(n), B16(n + 16), B16(n + 32), B16(n + 48)
const uint8_t ngpt_tok_byte_strings[256] = {B64(0), B64(64), B64(128), B64(192)};

ngpt_tok_trie *ngpt_tok_trie_bytes(int32_t n_vocab)
{
    entry e[256];
    int32_t n = n_vocab < 256 ? n_vocab : 256;
    for (int32_t i = 0; i < n; i++) e[i] = (entry){ngpt_tok_byte_strings + i, 1, i};
    return build(e, n, n_vocab);
}

const ngpt_tok_trie *ngpt_tok_trie_of(const ngpt_tokenizer *tok)
{
    ngpt_tokenizer *t = (ngpt_tokenizer *)tok;     /* the trie is a cache: tok reads the same */
    ngpt_tok_trie *have = atomic_load(&t->trie);
    if (have) return have;
    entry *e = malloc((size_t)(t->n_tokens ? t->n_tokens : 1) * sizeof *e);
    if (!e) {
        ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the vocabulary's trie");
        return NULL;
    }
    int32_t n = 0;
    for (int32_t id = 0; id < t->n_tokens; id++) {
        if (ngpt_tok_special(t, id)) continue;
        size_t len;
        const uint8_t *b = ngpt_tok_bytes(t, id, &len);
        if (len > 0) e[n++] = (entry){b, (uint32_t)len, id};
    }
    ngpt_tok_trie *made = build(e, n, t->n_tokens);
    free(e);
    if (!made) {
        ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the vocabulary's trie");
        return NULL;
    }
    if (atomic_compare_exchange_strong(&t->trie, &have, made)) return made;
    ngpt_tok_trie_free(made);   /* another thread's is in place */
    return have;
}

void ngpt_tok_trie_path(const ngpt_tok_trie *t, uint32_t i, uint8_t *out)
{
    for (uint32_t at = i; at != UINT32_MAX; at = t->parent[at]) out[t->depth[at] - 1] = t->byte[at];
}
