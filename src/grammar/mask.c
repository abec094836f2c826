/* mask.c — which tokens a grammar state allows (grammar.h): a walk of the
 * vocabulary's trie, depth first, that carries the matcher state of each
 * level and skips a node's subtree as soon as its bytes fail. A level whose
 * state is one stack whose top reads the byte by a plain move (no call, and
 * the new top cannot finish its rule) is kept as that top alone ("fast":
 * one table lookup per node); any other step builds the whole state. The
 * same walk indexes each automaton state at compile time (ngpt_grammar_index)
 * and, at each step, checks what the index left to the real stack. */
#include <stdlib.h>
#include <string.h>

#include "grammar/grammar.h"

#define LEVELS (NGPT_TOK_MAX_BYTES + 2)
enum { NOROOM = 4 };    /* the walk's buffer is full: check this subtree token by token */

/* Where a walk's findings go: the bits of a mask (at run time), or the
 * lists of an index (accepted ids, trie nodes to check at run time). */
typedef struct sink {
    uint64_t *mask;
    uint32_t *acc, *chk;
    size_t n_acc, cap_acc, n_chk, cap_chk;
    size_t visits, max_visits;  /* 0: no limit */
    bool stop;                  /* the limit was reached, or memory ran out */
    bool oom;
} sink;

typedef struct walker {
    const ngpt_automaton *a;
    ngpt_gm_limits lim;
    const ngpt_tok_trie *t;
    uint32_t *gbuf;
    size_t gcap;
    bool index;                 /* an index's walk: the bottom rule's end is an exit */
    uint32_t **spare;           /* three states for token-by-token checks (run time) */
    uint8_t fast[LEVELS];
    uint32_t q[LEVELS];         /* fast: the top */
    int32_t base[LEVELS];       /* fast: the level whose one stack lies below the top */
    size_t goff[LEVELS], gtop[LEVELS];  /* whole states: where, and the first free word */
} walker;

size_t ngpt_gwork_gbuf_words(ngpt_gm_limits lim)
{
    return ngpt_gram_walk_words(ngpt_gm_words(lim));
}

static bool push_u32(sink *s, uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        uint32_t *p = realloc(*v, c * sizeof *p);
        if (!p) {
            s->stop = s->oom = true;
            return false;
        }
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return true;
}

/* The tokens of trie node i are allowed. */
static void accept_node(const walker *w, sink *s, uint32_t i)
{
    const ngpt_tok_trie *t = w->t;
    for (uint32_t k = t->tok_off[i]; k < t->tok_off[i + 1]; k++) {
        if (s->mask) ngpt_mask_set(s->mask, t->toks[k]);
        else push_u32(s, &s->acc, &s->n_acc, &s->cap_acc, (uint32_t)t->toks[k]);
    }
}

/* Every token of node i's subtree is allowed (run time). */
static void accept_subtree(const walker *w, sink *s, uint32_t i)
{
    for (uint32_t j = i; j < w->t->end[i]; j++) accept_node(w, s, j);
}

/* The one stack of level p: its states into buf (the top as the level has
 * it); its depth, or -1 when the level holds several stacks (or none). */
static int32_t level_stack(const walker *w, int32_t p, uint32_t *buf)
{
    const uint32_t *st = w->gbuf + w->goff[w->fast[p] ? w->base[p] : p];
    if (st[0] != 1 || st[2] == 0) return -1;
    const int32_t k = (int32_t)st[2];
    memcpy(buf, st + 3, (size_t)k * sizeof *buf);
    if (w->fast[p]) buf[k - 1] = w->q[p];
    return k;
}

/* Level p's one stack (whose top is q) by byte x (class c) into dst: a
 * plain move t >= 0 to a top that can finish pops; t < 0 reads x through
 * the top's calls. Apart from level_step, which stays small enough to
 * inline into the walk: the copy is a variable-length array. */
static int stack_step(walker *w, int32_t p, int32_t t, uint8_t x, uint32_t *dst, bool *exits)
{
    uint32_t buf[ngpt_gm_copy_words(w->lim)];
    const int32_t k = level_stack(w, p, buf);
    if (t < 0) return ngpt_gm_step_stack(w->a, w->lim, buf, k, x, dst, exits);
    buf[k - 1] = (uint32_t)t;
    const int rc = ngpt_gm_from_stack(w->a, w->lim, buf, k, dst, exits);
    return rc == NGPT_GM_OK && dst[0] == 0 ? NGPT_GM_DEAD : rc;
}

/* Level d from level p = d - 1 by byte x. */
static int level_step(walker *w, int32_t p, int32_t d, uint8_t x, bool *exits)
{
    const ngpt_automaton *a = w->a;
    const int32_t c = a->cls[x];
    uint32_t top;
    if (w->fast[p]) top = w->q[p];
    else {
        const uint32_t *st = w->gbuf + w->goff[p];
        top = st[0] == 1 && st[2] > 0 ? st[2 + st[2]] : UINT32_MAX;
    }
    int32_t t = -1;
    if (top != UINT32_MAX && !ngpt_gm_bit(a->call_first, a->fw, (int32_t)top, c)) {
        t = a->next[(size_t)top * a->n_classes + c];
        if (t < 0) return NGPT_GM_DEAD;
        if (!a->accept[t]) {
            w->fast[d] = 1;
            w->q[d] = (uint32_t)t;
            w->base[d] = w->fast[p] ? w->base[p] : p;
            w->gtop[d] = w->gtop[p];
            return NGPT_GM_OK;
        }
    }
    const size_t o = w->gtop[p];
    if (o + ngpt_gm_words(w->lim) > w->gcap) return NOROOM;
    uint32_t *dst = w->gbuf + o;
    const int rc = top == UINT32_MAX ? ngpt_gm_step(a, w->lim, w->gbuf + w->goff[p], x, dst, exits)
                                     : stack_step(w, p, t, x, dst, exits);
    w->fast[d] = 0;
    w->goff[d] = o;
    w->gtop[d] = o + ngpt_gm_used(dst);
    return rc;
}

/* Run time, when the walk's buffer is full: each token of node i's subtree
 * read from level p's state (whose strings are at0 bytes long). */
static void tokens_one_by_one(walker *w, sink *s, uint32_t i, int32_t p, int32_t at0)
{
    uint32_t *from = w->spare[0];
    if (w->fast[p]) {
        const int32_t k = level_stack(w, p, from + 3);
        from[0] = 1, from[1] = 1 + (uint32_t)k, from[2] = (uint32_t)k;
    } else {
        ngpt_gm_copy(from, w->gbuf + w->goff[p]);
    }
    uint8_t path[NGPT_TOK_MAX_BYTES + 1];
    const ngpt_tok_trie *t = w->t;
    for (uint32_t j = i; j < t->end[i]; j++) {
        if (t->tok_off[j] == t->tok_off[j + 1]) continue;
        ngpt_tok_trie_path(t, j, path);
        int rc = ngpt_gm_advance(w->a, w->lim, from, path + at0, t->depth[j] - (size_t)at0,
                                 w->spare[1], w->spare[2], NULL);
        if (rc != NGPT_GM_DEAD) accept_node(w, s, j);
    }
}

/* Walks trie nodes [lo, hi) (a node's subtree, or the whole trie), whose
 * parents' strings are depth0 bytes long, from state x. */
static void walk(walker *w, sink *s, const uint32_t *x, uint32_t lo, uint32_t hi, int32_t depth0)
{
    const ngpt_tok_trie *t = w->t;
    ngpt_gm_copy(w->gbuf, x);
    w->fast[0] = 0;
    w->goff[0] = 0;
    w->gtop[0] = ngpt_gm_used(x);
    for (uint32_t i = lo; i < hi && !s->stop;) {
        if (s->max_visits && ++s->visits > s->max_visits) {
            s->stop = true;
            return;
        }
        const int32_t d = (int32_t)t->depth[i] - depth0;
        bool exits = false;
        const int rc = level_step(w, d - 1, d, t->byte[i], w->index ? &exits : NULL);
        if (rc == NOROOM) {
            tokens_one_by_one(w, s, i, d - 1, (int32_t)t->depth[i] - 1);
            i = t->end[i];
        } else if (exits || rc == NGPT_GM_OVERFLOW) {
            /* index: the real stack decides this subtree (its own tokens
             * included); run time: past the limits, the advance will say */
            if (w->index) push_u32(s, &s->chk, &s->n_chk, &s->cap_chk, i);
            else accept_subtree(w, s, i);
            i = t->end[i];
        } else if (rc == NGPT_GM_DEAD) {
            i = t->end[i];
        } else {
            accept_node(w, s, i);
            i++;
        }
    }
}

/* The state of the one stack s[0..d) as it is (not made canonical: its
 * pops are other stacks of the state it comes from). */
static void single(uint32_t *dst, const uint32_t *s, int32_t d)
{
    dst[0] = 1;
    dst[1] = 1 + (uint32_t)d;
    dst[2] = (uint32_t)d;
    memcpy(dst + 3, s, (size_t)d * sizeof *s);
}

void ngpt_grammar_mask(const ngpt_grammar *g, const uint32_t *st, uint64_t *mask, ngpt_gwork *w)
{
    const ngpt_tok_trie *t = g->trie;
    const size_t words = ((size_t)g->n_vocab + 63) / 64;
    memset(mask, 0, words * sizeof *mask);
    walker wk = {.a = &g->a, .lim = w->lim, .t = t, .gbuf = w->gbuf, .gcap = w->gcap,
                 .spare = w->s};
    sink sk = {.mask = mask};
    uint8_t path[NGPT_TOK_MAX_BYTES + 1];
    const uint32_t *p = ngpt_gm_first(st);
    for (uint32_t n = 0; n < st[0]; n++, p = ngpt_gm_after(p)) {
        const int32_t d = (int32_t)p[0];
        if (d == 0) continue;   /* the end: the caller's end tokens */
        const ngpt_gindex *ix = &g->idx[p[d]];
        single(w->s[0], p + 1, d);
        if (ix->mode == NGPT_GIDX_WALK) {
            walk(&wk, &sk, w->s[0], 0, (uint32_t)t->n_nodes, 0);
            continue;
        }
        const uint32_t *list = ix->list_len ? g->lists + ix->list_off : NULL;
        if (ix->mode == NGPT_GIDX_ACCEPT) {
            for (uint32_t k = 0; k < ix->list_len; k++) ngpt_mask_set(mask, (int32_t)list[k]);
        } else {
            memcpy(w->tmp, t->has, words * sizeof *mask);
            for (uint32_t k = 0; k < ix->list_len; k++)
                w->tmp[list[k] >> 6] &= ~(1ull << (list[k] & 63));
            for (size_t k = 0; k < words; k++) mask[k] |= w->tmp[k];
        }
        for (uint32_t k = 0; k < ix->check_len; k++) {
            const uint32_t node = g->checks[ix->check_off + k];
            const int32_t before = (int32_t)t->depth[node] - 1;
            single(w->s[0], p + 1, d);
            ngpt_tok_trie_path(t, node, path);
            int rc = ngpt_gm_advance(&g->a, w->lim, w->s[0], path, (size_t)before, w->s[1],
                                     w->s[2], NULL);
            if (rc == NGPT_GM_OVERFLOW) accept_subtree(&wk, &sk, node);
            else if (rc == NGPT_GM_OK) walk(&wk, &sk, w->s[1], node, t->end[node], before);
        }
    }
}

const uint8_t *ngpt_grammar_token_bytes(const ngpt_grammar *g, int32_t tok, size_t *len)
{
    *len = 0;
    if (tok < 0 || tok >= g->n_vocab || !ngpt_mask_bit(g->trie->has, tok)) return NULL;
    if (!g->tok) {
        *len = 1;
        return &ngpt_tok_byte_strings[tok];
    }
    return ngpt_tok_bytes(g->tok, tok, len);
}

int ngpt_grammar_advance(const ngpt_grammar *g, const uint32_t *st, int32_t tok, uint32_t *dst,
                         ngpt_gwork *w)
{
    size_t len;
    const uint8_t *b = ngpt_grammar_token_bytes(g, tok, &len);
    if (!b) return NGPT_GM_DEAD;
    return ngpt_gm_advance(&g->a, w->lim, st, b, len, dst, w->s[2], NULL);
}

/* ------------------------------------------------------------- the index */

/* The limits of an index's walks: a token rarely opens more than a few
 * rules; past these its subtree is checked at run time. */
static const ngpt_gm_limits INDEX_LIMITS = {64, 16};
/* Walks visit at most this many trie nodes per state in a first round, and
 * this many in all (both rounds): a state past them is walked at each step
 * instead. */
#define INDEX_FIRST_VISITS 4096
#define INDEX_TOTAL_VISITS (4u << 20)

enum { IDX_OK = 0, IDX_BUDGET, IDX_OOM };

/* The index of state q into g->idx[q] and the lists (seen: a zero mask,
 * left zero). */
static int index_state(ngpt_grammar *g, walker *w, int32_t q, size_t max_visits, size_t *spent,
                       uint32_t **lists, size_t *n_lists, size_t *cap_lists, uint32_t **checks,
                       size_t *n_checks, size_t *cap_checks, uint64_t *seen)
{
    const ngpt_tok_trie *t = g->trie;
    uint32_t x[4] = {1, 2, 1, (uint32_t)q};
    sink s = {.max_visits = max_visits};
    walk(w, &s, x, 0, (uint32_t)t->n_nodes, 0);
    *spent += s.visits;
    ngpt_gindex *ix = &g->idx[q];
    if (!s.stop) {
        ix->check_off = (uint32_t)*n_checks;
        ix->check_len = (uint32_t)s.n_chk;
        for (size_t k = 0; k < s.n_chk; k++) push_u32(&s, checks, n_checks, cap_checks, s.chk[k]);
        ix->list_off = (uint32_t)*n_lists;
        if ((size_t)2 * s.n_acc <= (size_t)t->n_toks) {
            ix->mode = NGPT_GIDX_ACCEPT;
            for (size_t k = 0; k < s.n_acc; k++) push_u32(&s, lists, n_lists, cap_lists, s.acc[k]);
        } else {
            ix->mode = NGPT_GIDX_REJECT;
            for (size_t k = 0; k < s.n_acc; k++) ngpt_mask_set(seen, (int32_t)s.acc[k]);
            for (int32_t k = 0; k < t->n_toks; k++)
                if (!ngpt_mask_bit(seen, t->toks[k]))
                    push_u32(&s, lists, n_lists, cap_lists, (uint32_t)t->toks[k]);
            for (size_t k = 0; k < s.n_acc; k++)
                seen[s.acc[k] >> 6] &= ~(1ull << (s.acc[k] & 63));
        }
        ix->list_len = (uint32_t)(*n_lists - ix->list_off);
    }
    free(s.acc);
    free(s.chk);
    if (s.oom) return IDX_OOM;
    if (s.stop) {
        ix->mode = NGPT_GIDX_WALK;
        return IDX_BUDGET;
    }
    return IDX_OK;
}

ngpt_status ngpt_grammar_index(ngpt_grammar *g)
{
    const ngpt_automaton *a = &g->a;
    const size_t N = (size_t)a->n_states;
    g->idx = calloc(N ? N : 1, sizeof *g->idx);
    const size_t gcap = (size_t)LEVELS * ngpt_gm_words(INDEX_LIMITS);
    uint32_t *gbuf = malloc(gcap * sizeof *gbuf);
    uint64_t *seen = calloc(((size_t)g->n_vocab + 63) / 64 + 1, sizeof *seen);
    uint8_t *reach = calloc(N ? N : 1, 1), *wait = calloc(N ? N : 1, 1);
    int32_t *queue = malloc((N ? N : 1) * sizeof *queue);
    uint32_t *lists = NULL, *checks = NULL;
    size_t n_lists = 0, cap_lists = 0, n_checks = 0, cap_checks = 0, spent = 0;
    bool ok = g->idx && gbuf && seen && reach && wait && queue;
    if (ok) {   /* the states a stack's top can be: reachable from a rule's start */
        int32_t head = 0, tail = 0;
        for (int32_t r = 0; r < a->n_rules; r++)
            if (a->rule_start[r] >= 0 && !reach[a->rule_start[r]])
                reach[a->rule_start[r]] = 1, queue[tail++] = a->rule_start[r];
        while (head < tail) {
            const int32_t s = queue[head++];
            for (int32_t c = 0; c < a->n_classes; c++) {
                const int32_t x = a->next[(size_t)s * a->n_classes + c];
                if (x >= 0 && !reach[x]) reach[x] = 1, queue[tail++] = x;
            }
            for (uint32_t i = a->call_off[s]; i < a->call_off[s + 1]; i++)
                if (!reach[a->call_to[i]]) reach[a->call_to[i]] = 1, queue[tail++] = a->call_to[i];
        }
    }
    walker w = {.a = a, .lim = INDEX_LIMITS, .t = g->trie, .gbuf = gbuf, .gcap = gcap, .index = true};
    for (int32_t round = 0; ok && round < 2; round++)
        for (int32_t q = 0; ok && q < a->n_states; q++) {
            if (!reach[q] || !a->has_out[q] || (round == 1 && !wait[q])) continue;
            if (spent >= INDEX_TOTAL_VISITS) {     /* the rest are walked at each step */
                wait[q] = 0;
                continue;
            }
            size_t budget = INDEX_TOTAL_VISITS - spent;
            if (round == 0 && budget > INDEX_FIRST_VISITS) budget = INDEX_FIRST_VISITS;
            int rc = index_state(g, &w, q, budget, &spent, &lists, &n_lists, &cap_lists, &checks,
                                 &n_checks, &cap_checks, seen);
            wait[q] = rc == IDX_BUDGET;
            ok = rc != IDX_OOM;
        }
    free(gbuf), free(seen), free(reach), free(wait), free(queue);
    g->lists = lists;
    g->checks = checks;
    if (!ok || !g->idx)
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory indexing the grammar's tokens");
    return NGPT_OK;
}
