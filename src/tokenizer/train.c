/* train.c — learning a byte-level BPE (ngpt_tokenizer_train;
 * docs/TOKENIZER.md, "Training").
 *
 * The texts are cut into pieces by the pre-tokenizer and equal pieces are
 * counted once, with their number of occurrences as weight. All distinct
 * pieces sit end to end in one array of symbols, each piece a doubly linked
 * list. Every adjacent pair of symbols (a, b) has a weighted count and a
 * list of the positions where it was made; a max-heap orders the pairs by
 * (count, then smaller a, then smaller b). A merge takes the heap's top,
 * visits its positions in increasing order (left to right within a piece,
 * as encoding does), joins each occurrence that is still there and updates
 * the counts of the pairs around it: nothing is rescanned. The heap is lazy:
 * a count that went down is corrected when its entry reaches the top; pairs
 * that went up are new (they hold the new token) and are pushed once per
 * merge. Everything is integer arithmetic on fixed orders, so every machine
 * learns the same merges. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "tokenizer/tokenizer.h"

#define FN "ngpt_tokenizer_train"

/* ---- distinct pieces and their counts */

typedef struct piece {
    const uint8_t *p;
    size_t len;
    uint64_t count;
} piece;

typedef struct piece_set {
    piece *v;
    size_t n, cap;
    uint32_t *slot;             /* index + 1, 0 empty */
    uint64_t *slot_hash;
    uint32_t bits;
    size_t bytes;               /* total length of the distinct pieces */
} piece_set;

static bool pieces_grow(piece_set *s)
{
    uint32_t bits = s->bits ? s->bits + 1 : 12;
    size_t n = (size_t)1 << bits;
    uint32_t *slot = calloc(n, sizeof *slot);
    uint64_t *hash = malloc(n * sizeof *hash);
    if (!slot || !hash) {
        free(slot);
        free(hash);
        return false;
    }
    for (size_t i = 0; s->slot && i < ((size_t)1 << s->bits); i++) {
        if (!s->slot[i]) continue;
        size_t j = (size_t)(s->slot_hash[i] >> (64 - bits));
        while (slot[j]) j = (j + 1) & (n - 1);
        slot[j] = s->slot[i];
        hash[j] = s->slot_hash[i];
    }
    free(s->slot);
    free(s->slot_hash);
    s->slot = slot;
    s->slot_hash = hash;
    s->bits = bits;
    return true;
}

static bool pieces_add(piece_set *s, const uint8_t *p, size_t len)
{
    if (2 * (s->n + 1) > ((size_t)1 << s->bits) && !pieces_grow(s)) return false;
    uint64_t h = XXH3_64bits(p, len);
    size_t mask = ((size_t)1 << s->bits) - 1;
    size_t j = (size_t)(h >> (64 - s->bits));
    for (; s->slot[j]; j = (j + 1) & mask) {
        piece *e = &s->v[s->slot[j] - 1];
        if (s->slot_hash[j] == h && e->len == len && !memcmp(e->p, p, len)) {
            e->count++;
            return true;
        }
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        piece *v = realloc(s->v, cap * sizeof *v);
        if (!v) return false;
        s->v = v, s->cap = cap;
    }
    if (s->n >= UINT32_MAX - 1) return false;
    s->v[s->n] = (piece){p, len, 1};
    s->slot[j] = (uint32_t)++s->n;
    s->slot_hash[j] = h;
    s->bytes += len;
    return true;
}

static void pieces_free(piece_set *s)
{
    free(s->v);
    free(s->slot);
    free(s->slot_hash);
}

/* ---- pairs */

typedef struct pair {
    int32_t a, b;
    int64_t count;              /* weighted occurrences now */
    uint32_t *pos;              /* where it was made (some may be gone since) */
    uint32_t n_pos, cap_pos;
    int32_t stamp;              /* the last merge that raised its count */
    bool done;                  /* merged, or never to be merged (too long) */
} pair;

typedef struct heap_entry {
    int64_t count;
    int32_t pair;
} heap_entry;

typedef struct trainer {
    /* symbols: one slot per byte of the distinct pieces */
    int32_t *sym, *next, *prev;
    uint32_t *piece_of;
    const piece *pieces;
    /* pairs: a table (a, b) -> index */
    pair *pairs;
    size_t n_pairs, cap_pairs;
    uint64_t *key;              /* NGPT_PAIR_EMPTY or a << 32 | b */
    uint32_t *val;
    uint32_t bits;
    heap_entry *heap;
    size_t n_heap, cap_heap;
    int32_t *touched;           /* pairs raised by the current merge */
    size_t n_touched, cap_touched;
    uint32_t *len;              /* token lengths */
} trainer;

/* Heap order: larger count first, then smaller a, then smaller b. */
static bool before(const trainer *t, heap_entry x, heap_entry y)
{
    if (x.count != y.count) return x.count > y.count;
    const pair *p = &t->pairs[x.pair], *q = &t->pairs[y.pair];
    if (p->a != q->a) return p->a < q->a;
    return p->b < q->b;
}

static bool heap_push(trainer *t, heap_entry e)
{
    if (t->n_heap == t->cap_heap) {
        size_t cap = t->cap_heap ? 2 * t->cap_heap : 1024;
        heap_entry *h = realloc(t->heap, cap * sizeof *h);
        if (!h) return false;
        t->heap = h, t->cap_heap = cap;
    }
    size_t i = t->n_heap++;
    while (i > 0 && before(t, e, t->heap[(i - 1) / 2])) {
        t->heap[i] = t->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    t->heap[i] = e;
    return true;
}

static heap_entry heap_pop(trainer *t)
{
    heap_entry top = t->heap[0], last = t->heap[--t->n_heap];
    size_t i = 0, n = t->n_heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(t, t->heap[c + 1], t->heap[c])) c++;
        if (!before(t, t->heap[c], last)) break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (n) t->heap[i] = last;
    return top;
}

/* Starts small (a short text has few pairs; 2^16 slots were 768 KiB to
 * clear for each) and doubles; the slots hold indices, so the pairs, and
 * what is learned, do not depend on the table's size. */
static bool table_grow(trainer *t)
{
    uint32_t bits = t->bits ? t->bits + 1 : 10;
    size_t n = (size_t)1 << bits;
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *val = malloc(n * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return false;
    }
    memset(key, 0xFF, n * sizeof *key);
    for (size_t i = 0; t->key && i < ((size_t)1 << t->bits); i++) {
        if (t->key[i] == NGPT_PAIR_EMPTY) continue;
        size_t j = ngpt_pair_slot(t->key[i], bits);
        while (key[j] != NGPT_PAIR_EMPTY) j = (j + 1) & (n - 1);
        key[j] = t->key[i];
        val[j] = t->val[i];
    }
    free(t->key);
    free(t->val);
    t->key = key, t->val = val, t->bits = bits;
    return true;
}

/* The index of pair (a, b), made when absent; -1 when out of memory. */
static int32_t pair_get(trainer *t, int32_t a, int32_t b)
{
    if (2 * (t->n_pairs + 1) > ((size_t)1 << t->bits) && !table_grow(t)) return -1;
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t mask = ((size_t)1 << t->bits) - 1;
    size_t j = ngpt_pair_slot(key, t->bits);
    for (; t->key[j] != NGPT_PAIR_EMPTY; j = (j + 1) & mask)
        if (t->key[j] == key) return (int32_t)t->val[j];
    if (t->n_pairs == t->cap_pairs) {
        size_t cap = t->cap_pairs ? 2 * t->cap_pairs : 4096;
        if (cap > INT32_MAX) return -1;
        pair *v = realloc(t->pairs, cap * sizeof *v);
        if (!v) return -1;
        t->pairs = v, t->cap_pairs = cap;
    }
    t->pairs[t->n_pairs] = (pair){.a = a, .b = b, .stamp = -1};
    t->key[j] = key;
    t->val[j] = (uint32_t)t->n_pairs;
    return (int32_t)t->n_pairs++;
}

static bool pos_push(pair *p, uint32_t pos)
{
    if (p->n_pos == p->cap_pos) {
        uint32_t cap = p->cap_pos ? 2 * p->cap_pos : 4;
        if (cap < p->cap_pos) return false;
        uint32_t *v = realloc(p->pos, (size_t)cap * sizeof *v);
        if (!v) return false;
        p->pos = v, p->cap_pos = cap;
    }
    p->pos[p->n_pos++] = pos;
    return true;
}

/* Count w more occurrences of (a, b), one of them made at pos. */
static bool raise_pair(trainer *t, int32_t a, int32_t b, uint64_t w, uint32_t pos, int32_t merge)
{
    int32_t i = pair_get(t, a, b);
    if (i < 0 || !pos_push(&t->pairs[i], pos)) return false;
    pair *p = &t->pairs[i];
    p->count += (int64_t)w;
    if (p->stamp != merge) {
        p->stamp = merge;
        if (t->n_touched == t->cap_touched) {
            size_t cap = t->cap_touched ? 2 * t->cap_touched : 256;
            int32_t *v = realloc(t->touched, cap * sizeof *v);
            if (!v) return false;
            t->touched = v, t->cap_touched = cap;
        }
        t->touched[t->n_touched++] = i;
    }
    return true;
}

/* w fewer occurrences of (a, b), which exists (it is adjacent somewhere). */
static void lower_pair(trainer *t, int32_t a, int32_t b, uint64_t w)
{
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (size_t j = ngpt_pair_slot(key, t->bits); t->key[j] != NGPT_PAIR_EMPTY; j = (j + 1) & mask)
        if (t->key[j] == key) {
            t->pairs[t->val[j]].count -= (int64_t)w;
            return;
        }
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Applies merge `merge` (pair index pi, new token id) everywhere. */
static bool apply_merge(trainer *t, int32_t pi, int32_t id, int32_t merge)
{
    pair *p = &t->pairs[pi];
    const int32_t a = p->a, b = p->b;
    uint32_t *pos = p->pos, n = p->n_pos;
    p->pos = NULL, p->n_pos = p->cap_pos = 0, p->done = true;
    qsort(pos, n, sizeof *pos, cmp_u32);
    t->n_touched = 0;
    bool ok = true;
    for (uint32_t k = 0; k < n && ok; k++) {
        int32_t i = (int32_t)pos[k], j = t->next[i];
        if (t->sym[i] != a || j < 0 || t->sym[j] != b) continue;     /* gone since */
        uint64_t w = t->pieces[t->piece_of[i]].count;
        int32_t h = t->prev[i], r = t->next[j];
        if (h >= 0) lower_pair(t, t->sym[h], a, w);
        if (r >= 0) lower_pair(t, b, t->sym[r], w);
        t->pairs[pi].count -= (int64_t)w;
        t->sym[i] = id;
        t->sym[j] = -1;
        t->next[i] = r;
        if (r >= 0) t->prev[r] = i;
        if (h >= 0) ok = raise_pair(t, t->sym[h], id, w, (uint32_t)h, merge);
        if (ok && r >= 0) ok = raise_pair(t, id, t->sym[r], w, (uint32_t)i, merge);
    }
    free(pos);
    for (size_t k = 0; k < t->n_touched && ok; k++)
        ok = heap_push(t, (heap_entry){t->pairs[t->touched[k]].count, t->touched[k]});
    return ok;
}

static void trainer_free(trainer *t)
{
    free(t->sym);
    free(t->next);
    free(t->prev);
    free(t->piece_of);
    for (size_t i = 0; i < t->n_pairs; i++) free(t->pairs[i].pos);
    free(t->pairs);
    free(t->key);
    free(t->val);
    free(t->heap);
    free(t->touched);
    free(t->len);
}

/* Learns up to n_merges merges into merges[]; *done gets how many. */
static ngpt_status learn(const piece_set *ps, int32_t n_merges, int64_t min_count,
                         uint32_t *merges, int32_t *done)
{
    trainer t = {0};
    ngpt_status st = NGPT_OK;
    size_t n = ps->bytes;
    *done = 0;
    if (n > INT32_MAX)
        return ngpt_fail(NGPT_ERR_TOO_LONG, FN ": the distinct pieces of the texts hold %zu bytes; "
                         "the trainer takes at most 2^31 - 1 (train on less text, or with a "
                         "pre-tokenizer)", n);
    t.pieces = ps->v;
    t.sym = malloc((n ? n : 1) * sizeof *t.sym);
    t.next = malloc((n ? n : 1) * sizeof *t.next);
    t.prev = malloc((n ? n : 1) * sizeof *t.prev);
    t.piece_of = malloc((n ? n : 1) * sizeof *t.piece_of);
    t.len = malloc(((size_t)n_merges + 256) * sizeof *t.len);
    if (!t.sym || !t.next || !t.prev || !t.piece_of || !t.len || !table_grow(&t)) goto no_memory;
    for (int i = 0; i < 256; i++) t.len[i] = 1;
    size_t at = 0;
    for (size_t w = 0; w < ps->n; w++) {
        const piece *pc = &ps->v[w];
        for (size_t k = 0; k < pc->len; k++) {
            int32_t i = (int32_t)(at + k);
            t.sym[i] = pc->p[k];
            t.prev[i] = k > 0 ? i - 1 : -1;
            t.next[i] = k + 1 < pc->len ? i + 1 : -1;
            t.piece_of[i] = (uint32_t)w;
            if (k > 0 && !raise_pair(&t, t.sym[i - 1], t.sym[i], pc->count, (uint32_t)(i - 1), -1))
                goto no_memory;
        }
        at += pc->len;
    }
    for (size_t i = 0; i < t.n_pairs; i++)
        if (!heap_push(&t, (heap_entry){t.pairs[i].count, (int32_t)i})) goto no_memory;
    int32_t m = 0;
    while (m < n_merges && t.n_heap > 0) {
        heap_entry e = heap_pop(&t);
        pair *p = &t.pairs[e.pair];
        if (p->done) continue;
        if (p->count != e.count) {          /* went down since it was pushed */
            if (p->count > 0 && !heap_push(&t, (heap_entry){p->count, e.pair})) goto no_memory;
            continue;
        }
        if (e.count < min_count) break;
        uint32_t len = t.len[p->a] + t.len[p->b];
        if (len > NGPT_TOK_MAX_BYTES) {
            p->done = true;
            continue;
        }
        merges[2 * m] = (uint32_t)p->a;
        merges[2 * m + 1] = (uint32_t)p->b;
        t.len[256 + m] = len;
        if (!apply_merge(&t, e.pair, 256 + m, m)) goto no_memory;
        m++;
    }
    *done = m;
    trainer_free(&t);
    return st;
no_memory:
    trainer_free(&t);
    return ngpt_fail(NGPT_ERR_NO_MEMORY, FN ": out of memory (the distinct pieces of the texts "
                     "hold %zu bytes)", n);
}

ngpt_tokenizer_train_config ngpt_tokenizer_train_config_default(void)
{
    NGPT_FPMODE_SCOPE;
    return (ngpt_tokenizer_train_config){
        .vocab_size = 4096,
        .pretok = NGPT_PRETOK_GPT2,
        .end_token = true,
        .pad_token = true,
        .min_count = 2,
    };
}

static const char END_NAME[] = "<|endoftext|>", PAD_NAME[] = "<|pad|>";

ngpt_status ngpt_tokenizer_train(ngpt_tokenizer **tok, const ngpt_tokenizer_train_config *cfg,
                                 const void *const *texts, const size_t *sizes, int32_t n_texts)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, FN ": NULL argument");
    *tok = NULL;
    if (!cfg || (n_texts > 0 && (!texts || !sizes)))
        return ngpt_fail(NGPT_ERR_NULL_ARG, FN ": NULL argument");
    if (n_texts < 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN ": n_texts is %d; it must be >= 0", (int)n_texts);
    ngpt_status st = NGPT_RESERVED_CHECK("tokenizer_train_config", cfg);
    if (st) return ngpt_prefixed(FN, st);
    int32_t n_special = (int32_t)cfg->end_token + (int32_t)cfg->pad_token;
    if (cfg->vocab_size < 256 + n_special || cfg->vocab_size > NGPT_TOK_MAX_TOKENS)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN ": vocab_size is %d; it must be in %d..%d (256 "
                         "bytes, the merges and %d special tokens)", (int)cfg->vocab_size,
                         256 + n_special, NGPT_TOK_MAX_TOKENS, (int)n_special);
    if (cfg->pretok < NGPT_PRETOK_NONE || cfg->pretok > NGPT_PRETOK_QWEN2)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN ": pretok is %d, not a pre-tokenizer",
                         (int)cfg->pretok);
    if (cfg->min_count < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, FN ": min_count is %d; it must be >= 1",
                         (int)cfg->min_count);
    for (int32_t i = 0; i < n_texts; i++)
        if (!texts[i] && sizes[i] > 0)
            return ngpt_fail(NGPT_ERR_NULL_ARG, FN ": text %d is NULL", (int)i);

    piece_set ps = {0};
    bool ok = pieces_grow(&ps);
    for (int32_t i = 0; i < n_texts && ok; i++) {
        const uint8_t *s = texts[i];
        for (size_t at = 0; at < sizes[i] && ok;) {
            size_t end = ngpt_pretok_next(cfg->pretok, s, sizes[i], at);
            ok = pieces_add(&ps, s + at, end - at);
            at = end;
        }
    }
    if (!ok) {
        pieces_free(&ps);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, FN ": out of memory counting the pieces of the texts");
    }
    int32_t want = cfg->vocab_size - 256 - n_special, got = 0;
    uint32_t *merges = malloc(((size_t)want + 1) * 2 * sizeof *merges);
    st = merges ? learn(&ps, want, cfg->min_count, merges, &got)
         : ngpt_fail(NGPT_ERR_NO_MEMORY, FN ": out of memory");
    pieces_free(&ps);
    if (!st) {
        ngpt_tok_spec *spec = calloc(1, sizeof *spec);  /* room for 8192 specials: not the stack */
        if (!spec) {
            free(merges);
            return ngpt_fail(NGPT_ERR_NO_MEMORY, FN ": out of memory");
        }
        for (int i = 0; i < 256; i++) spec->id_byte[i] = (uint8_t)i;
        spec->merges = merges;
        spec->n_merges = got;
        spec->pretok = cfg->pretok;
        spec->rule = NGPT_MERGE_PAIRS;
        spec->end_id = spec->pad_id = -1;
        if (cfg->end_token) {
            spec->end_id = 256 + got + spec->n_special;
            spec->special[spec->n_special] = (const uint8_t *)END_NAME;
            spec->special_len[spec->n_special++] = sizeof END_NAME - 1;
        }
        if (cfg->pad_token) {
            spec->pad_id = 256 + got + spec->n_special;
            spec->special[spec->n_special] = (const uint8_t *)PAD_NAME;
            spec->special_len[spec->n_special++] = sizeof PAD_NAME - 1;
        }
        st = ngpt_prefixed(FN, ngpt_tok_build(tok, spec, "the trained tokenizer"));
        free(spec);
    }
    free(merges);
    return st;
}
