/* automaton.c — a parsed grammar compiled into one deterministic automaton
 * per rule (automaton.h): checks (every reachable rule can end, no left
 * recursion, literals the vocabulary can produce), code points to UTF-8
 * byte sequences, Thompson's construction, the subset construction, then
 * the states that cannot reach their rule's end are cut. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/automaton.h"

/* ------------------------------------------------------------ rule facts */

typedef struct facts {
    const ngpt_gast *ast;
    bool *nullable, *productive, *reachable;
} facts;

/* Whether node id can match the empty text (chars false, rules the rules'
 * nullable) or some text (chars true, rules the rules' productive). */
static bool node_can(const facts *f, int32_t id, const bool *rules, bool chars)
{
    const ngpt_gnode *n = &f->ast->nodes[id];
    switch (n->kind) {
    case NGPT_GN_CHARS: return chars;
    case NGPT_GN_REF: return rules[n->a];
    case NGPT_GN_REPEAT: return n->a == 0 || node_can(f, n->child, rules, chars);
    case NGPT_GN_SEQ:
        for (int32_t i = 0; i < n->b; i++)
            if (!node_can(f, f->ast->kids[n->a + i], rules, chars)) return false;
        return true;
    default:
        for (int32_t i = 0; i < n->b; i++)
            if (node_can(f, f->ast->kids[n->a + i], rules, chars)) return true;
        return false;
    }
}

static bool node_nullable(const facts *f, int32_t id)
{
    return node_can(f, id, f->nullable, false);
}

/* Whether node id refers to a rule other than self that cannot end. */
static bool needs_other_unproductive(const facts *f, int32_t id, int32_t self)
{
    const ngpt_gnode *n = &f->ast->nodes[id];
    if (n->kind == NGPT_GN_REF) return n->a != self && !f->productive[n->a];
    if (n->kind == NGPT_GN_REPEAT) return needs_other_unproductive(f, n->child, self);
    if (n->kind == NGPT_GN_SEQ || n->kind == NGPT_GN_ALT)
        for (int32_t i = 0; i < n->b; i++)
            if (needs_other_unproductive(f, f->ast->kids[n->a + i], self)) return true;
    return false;
}

/* Marks the rules node id refers to as reachable (and the rules they refer to). */
static void node_reach(facts *f, int32_t id)
{
    const ngpt_gnode *n = &f->ast->nodes[id];
    if (n->kind == NGPT_GN_REF) {
        if (!f->reachable[n->a]) {
            f->reachable[n->a] = true;
            node_reach(f, f->ast->body[n->a]);
        }
    } else if (n->kind == NGPT_GN_REPEAT) {
        node_reach(f, n->child);
    } else if (n->kind == NGPT_GN_SEQ || n->kind == NGPT_GN_ALT) {
        for (int32_t i = 0; i < n->b; i++) node_reach(f, f->ast->kids[n->a + i]);
    }
}

/* The rules node id may call before it reads a byte, into the bits of out. */
static void node_first_refs(const facts *f, int32_t id, uint8_t *out)
{
    const ngpt_gnode *n = &f->ast->nodes[id];
    if (n->kind == NGPT_GN_REF) {
        out[n->a] = 1;
    } else if (n->kind == NGPT_GN_REPEAT) {
        if (n->b != 0) node_first_refs(f, n->child, out);
    } else if (n->kind == NGPT_GN_ALT) {
        for (int32_t i = 0; i < n->b; i++) node_first_refs(f, f->ast->kids[n->a + i], out);
    } else if (n->kind == NGPT_GN_SEQ) {
        for (int32_t i = 0; i < n->b; i++) {
            node_first_refs(f, f->ast->kids[n->a + i], out);
            if (!node_nullable(f, f->ast->kids[n->a + i])) break;
        }
    }
}

/* Depth-first search for a cycle of first calls; on one, the message names it. */
static bool left_recursive(const facts *f, const uint8_t *firsts, int32_t r, uint8_t *color,
                           int32_t *path, int32_t depth)
{
    const int32_t R = f->ast->n_rules;
    color[r] = 1;
    path[depth] = r;
    for (int32_t s = 0; s < R; s++) {
        if (!firsts[(size_t)r * R + s]) continue;
        if (color[s] == 1) {
            char chain[256];
            size_t at = 0;
            int32_t from = 0;
            while (path[from] != s) from++;
            for (int32_t i = from; i <= depth && at < sizeof chain - 64; i++)
                at += (size_t)snprintf(chain + at, sizeof chain - at, "%s -> ",
                                       f->ast->names[path[i]]);
            snprintf(chain + at, sizeof chain - at, "%s", f->ast->names[s]);
            ngpt_fail(NGPT_ERR_BAD_FORMAT, "rule \"%s\" (line %d) is left-recursive: %s can "
                      "call itself before reading a character; write the repetition with * "
                      "or + instead", f->ast->names[s], (int)f->ast->line[s], chain);
            return true;
        }
        if (color[s] == 0 && left_recursive(f, firsts, s, color, path, depth + 1)) return true;
    }
    color[r] = 2;
    return false;
}

/* --------------------------------------------------- code points to UTF-8 */

static int utf8_len(uint32_t cp)
{
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

static void utf8_encode(uint32_t cp, uint8_t *out)
{
    int n = utf8_len(cp);
    if (n == 1) {
        out[0] = (uint8_t)cp;
        return;
    }
    static const uint8_t lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (int i = n - 1; i > 0; i--, cp >>= 6) out[i] = (uint8_t)(0x80 | (cp & 0x3F));
    out[0] = (uint8_t)(lead[n] | cp);
}

typedef void (*seq_fn)(void *user, const uint8_t *lo, const uint8_t *hi, int32_t len);

/* Calls fn with byte-range sequences that together match exactly the
 * UTF-8 encodings of code points lo..hi (surrogates left out): regex
 * engines' classic split at the encoding-length and continuation-byte
 * boundaries. */
static void utf8_ranges(uint32_t lo, uint32_t hi, seq_fn fn, void *user)
{
    if (lo > hi) return;
    if (lo <= 0xDFFF && hi >= 0xD800) {     /* no surrogates */
        if (lo < 0xD800) utf8_ranges(lo, 0xD7FF, fn, user);
        if (hi > 0xDFFF) utf8_ranges(0xE000, hi, fn, user);
        return;
    }
    static const uint32_t ends[3] = {0x7F, 0x7FF, 0xFFFF};
    for (int i = 0; i < 3; i++)
        if (lo <= ends[i] && hi > ends[i]) {
            utf8_ranges(lo, ends[i], fn, user);
            utf8_ranges(ends[i] + 1, hi, fn, user);
            return;
        }
    const int n = utf8_len(lo);
    for (int i = 1; i < n; i++) {
        const uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                utf8_ranges(lo, lo | m, fn, user);
                utf8_ranges((lo | m) + 1, hi, fn, user);
                return;
            }
            if ((hi & m) != m) {
                utf8_ranges(lo, (hi & ~m) - 1, fn, user);
                utf8_ranges(hi & ~m, hi, fn, user);
                return;
            }
        }
    }
    uint8_t a[4], b[4];
    utf8_encode(lo, a);
    utf8_encode(hi, b);
    fn(user, a, b, n);
}

/* ------------------------------------------------------------------ NFA */

enum { E_EPS = 0, E_BYTES, E_CALL };

typedef struct nedge {
    int32_t kind, lo, hi, to, next;     /* lo: the rule of a call */
} nedge;

typedef struct nfa {
    int32_t *head;              /* (n) first edge of each state, -1 */
    int32_t n, cap;
    nedge *e;
    int32_t n_e, cap_e;
    bool failed;
} nfa;

static int32_t nfa_state(nfa *m)
{
    if (m->n == m->cap) {
        int32_t c = m->cap ? 2 * m->cap : 256;
        int32_t *h = c > 0 && c < (1 << 26) ? realloc(m->head, (size_t)c * sizeof *h) : NULL;
        if (!h) {
            m->failed = true;
            return 0;
        }
        m->head = h;
        m->cap = c;
    }
    m->head[m->n] = -1;
    return m->n++;
}

static void nfa_edge(nfa *m, int32_t from, int32_t kind, int32_t lo, int32_t hi, int32_t to)
{
    if (m->failed) return;
    if (m->n_e == m->cap_e) {
        int32_t c = m->cap_e ? 2 * m->cap_e : 512;
        nedge *e = c > 0 && c < (1 << 27) ? realloc(m->e, (size_t)c * sizeof *e) : NULL;
        if (!e) {
            m->failed = true;
            return;
        }
        m->e = e;
        m->cap_e = c;
    }
    m->e[m->n_e] = (nedge){kind, lo, hi, to, m->head[from]};
    m->head[from] = m->n_e++;
}

typedef struct frag {
    int32_t start, end;
} frag;

typedef struct chain_user {
    nfa *m;
    int32_t start, end;
} chain_user;

static void add_chain(void *user, const uint8_t *lo, const uint8_t *hi, int32_t len)
{
    chain_user *u = user;
    int32_t at = u->start;
    for (int32_t i = 0; i < len; i++) {
        int32_t to = i == len - 1 ? u->end : nfa_state(u->m);
        nfa_edge(u->m, at, E_BYTES, lo[i], hi[i], to);
        at = to;
    }
}

static frag build(const facts *f, nfa *m, int32_t id)
{
    const ngpt_gnode *n = &f->ast->nodes[id];
    frag r = {nfa_state(m), nfa_state(m)};
    if (m->failed || m->n > (1 << 24)) {
        m->failed = true;
        return r;
    }
    switch (n->kind) {
    case NGPT_GN_CHARS: {
        chain_user u = {m, r.start, r.end};
        for (int32_t i = 0; i < n->b; i++)
            utf8_ranges(f->ast->ranges[n->a + i].lo, f->ast->ranges[n->a + i].hi, add_chain, &u);
        break;
    }
    case NGPT_GN_REF:
        nfa_edge(m, r.start, E_CALL, n->a, 0, r.end);
        if (f->nullable[n->a]) nfa_edge(m, r.start, E_EPS, 0, 0, r.end);
        break;
    case NGPT_GN_SEQ: {
        int32_t at = r.start;
        for (int32_t i = 0; i < n->b; i++) {
            frag k = build(f, m, f->ast->kids[n->a + i]);
            nfa_edge(m, at, E_EPS, 0, 0, k.start);
            at = k.end;
        }
        nfa_edge(m, at, E_EPS, 0, 0, r.end);
        break;
    }
    case NGPT_GN_ALT:
        for (int32_t i = 0; i < n->b; i++) {
            frag k = build(f, m, f->ast->kids[n->a + i]);
            nfa_edge(m, r.start, E_EPS, 0, 0, k.start);
            nfa_edge(m, k.end, E_EPS, 0, 0, r.end);
        }
        break;
    default: {  /* REPEAT: a copies, then b - a optional ones nested, or a loop */
        int32_t at = r.start;
        for (int32_t i = 0; i < n->a && !m->failed; i++) {
            frag k = build(f, m, n->child);
            nfa_edge(m, at, E_EPS, 0, 0, k.start);
            at = k.end;
        }
        if (n->b < 0) {
            frag k = build(f, m, n->child);
            nfa_edge(m, at, E_EPS, 0, 0, k.start);
            nfa_edge(m, k.end, E_EPS, 0, 0, at);
        } else {
            for (int32_t i = n->a; i < n->b && !m->failed; i++) {
                frag k = build(f, m, n->child);
                nfa_edge(m, at, E_EPS, 0, 0, r.end);
                nfa_edge(m, at, E_EPS, 0, 0, k.start);
                at = k.end;
            }
        }
        nfa_edge(m, at, E_EPS, 0, 0, r.end);
    }
    }
    return r;
}

/* ------------------------------------------------- subset construction */

typedef struct builder {
    ngpt_automaton *a;
    const facts *f;
    nfa m;
    int32_t cap_states;
    uint32_t cap_calls, n_calls;
    /* the NFA sets of the DFA states: key_off[d] .. key_off[d+1] in keys */
    int32_t *keys;
    size_t n_keys, cap_keys;
    size_t *key_off;
    int32_t *slot;              /* hash table of DFA ids + 1 */
    uint32_t slot_bits;
    int32_t first_of_rule;      /* DFA ids of the rule being built start here */
    int32_t *mark, gen;         /* (m.n) closure marks */
    int32_t *stack, *set;       /* (m.n) */
    int32_t *pairs;             /* (2 * edges) (class or rule, target) */
    size_t cap_pairs;
    ngpt_status st;             /* a failure with its message, or 0: out of memory */
} builder;

static uint64_t key_hash(const int32_t *k, int32_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    for (int32_t i = 0; i < n; i++) h = (h ^ (uint32_t)k[i]) * 0x100000001B3ull;
    return h;
}

static int int_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* Short arrays (most closures and most states' moves) sort by insertion:
 * qsort's comparator calls (and, under a sanitizer, its interceptor) cost
 * more than the sorting there. Both orders are total on the values, so the
 * result is the one qsort gives. */
#define SHORT_SORT 32

static void sort_ints(int32_t *v, int32_t n)
{
    if (n > SHORT_SORT) {
        qsort(v, (size_t)n, sizeof *v, int_cmp);
        return;
    }
    for (int32_t i = 1; i < n; i++) {
        const int32_t x = v[i];
        int32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

/* The empty-move closure of set[0..n) (n grows), sorted. */
static int32_t closure(builder *b, int32_t n)
{
    b->gen++;
    int32_t sp = 0;
    for (int32_t i = 0; i < n; i++) {
        b->mark[b->set[i]] = b->gen;
        b->stack[sp++] = b->set[i];
    }
    while (sp > 0) {
        int32_t s = b->stack[--sp];
        for (int32_t e = b->m.head[s]; e >= 0; e = b->m.e[e].next)
            if (b->m.e[e].kind == E_EPS && b->mark[b->m.e[e].to] != b->gen) {
                b->mark[b->m.e[e].to] = b->gen;
                b->set[n++] = b->m.e[e].to;
                b->stack[sp++] = b->m.e[e].to;
            }
    }
    sort_ints(b->set, n);
    return n;
}

static bool grow_states(builder *b)
{
    ngpt_automaton *a = b->a;
    if (a->n_states < b->cap_states) return true;
    if (a->n_states >= NGPT_GM_MAX_STATES) {
        b->st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "the grammar needs more than %d automaton "
                          "states; write it with fewer alternatives or smaller repetition counts",
                          NGPT_GM_MAX_STATES);
        return false;
    }
    int32_t c = b->cap_states ? 2 * b->cap_states : 256;
    int32_t *next = realloc(a->next, (size_t)c * a->n_classes * sizeof *next);
    if (next) a->next = next;
    uint8_t *acc = realloc(a->accept, (size_t)c);
    if (acc) a->accept = acc;
    uint32_t *co = realloc(a->call_off, ((size_t)c + 1) * sizeof *co);
    if (co) a->call_off = co;
    size_t *ko = realloc(b->key_off, ((size_t)c + 1) * sizeof *ko);
    if (ko) b->key_off = ko;
    if (!next || !acc || !co || !ko) return false;
    b->cap_states = c;
    return true;
}

/* The DFA id of the (sorted) NFA set set[0..n), made if new. */
static int32_t dfa_state(builder *b, int32_t n, int32_t end)
{
    ngpt_automaton *a = b->a;
    const uint64_t h = key_hash(b->set, n);
    const uint32_t mask = (1u << b->slot_bits) - 1;
    uint32_t i = (uint32_t)(h >> 40) & mask;
    for (; b->slot[i]; i = (i + 1) & mask) {
        int32_t d = b->slot[i] - 1;
        size_t o = b->key_off[d];
        if ((int32_t)(b->key_off[d + 1] - o) == n && !memcmp(b->keys + o, b->set, (size_t)n * 4))
            return d;
    }
    if (!grow_states(b)) return -1;
    if (b->n_keys + (size_t)n > NGPT_GM_MAX_SET_WORDS) {
        b->st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "the grammar's automaton grows past %d million "
                          "state sets (a repetition inside a repetition whose parts overlap, "
                          "like (\"a\" | .{50})+, can need exponentially many); write it "
                          "with fewer overlapping alternatives", NGPT_GM_MAX_SET_WORDS >> 20);
        return -1;
    }
    if (b->n_keys + (size_t)n > b->cap_keys) {
        size_t c = b->cap_keys ? 2 * b->cap_keys : 4096;
        while (c < b->n_keys + (size_t)n) c *= 2;
        int32_t *k = realloc(b->keys, c * sizeof *k);
        if (!k) return -1;
        b->keys = k;
        b->cap_keys = c;
    }
    const int32_t d = a->n_states++;
    memcpy(b->keys + b->n_keys, b->set, (size_t)n * 4);
    b->key_off[d] = b->n_keys;
    b->n_keys += (size_t)n;
    b->key_off[d + 1] = b->n_keys;
    a->accept[d] = 0;
    for (int32_t k = 0; k < n; k++) a->accept[d] |= b->set[k] == end;
    b->slot[i] = d + 1;
    if ((uint32_t)(a->n_states - b->first_of_rule) * 2 > mask) {   /* rehash this rule's */
        b->slot_bits++;
        free(b->slot);
        b->slot = calloc((size_t)1 << b->slot_bits, sizeof *b->slot);
        if (!b->slot) return -1;
        const uint32_t m2 = (1u << b->slot_bits) - 1;
        for (int32_t e = b->first_of_rule; e < a->n_states; e++) {
            size_t o = b->key_off[e];
            uint32_t j = (uint32_t)(key_hash(b->keys + o, (int32_t)(b->key_off[e + 1] - o)) >> 40)
                         & m2;
            while (b->slot[j]) j = (j + 1) & m2;
            b->slot[j] = e + 1;
        }
    }
    return d;
}

static int pair_cmp(const void *pa, const void *pb)
{
    const int32_t *x = pa, *y = pb;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* n pairs v[2i], v[2i + 1], as qsort with pair_cmp sorts them (sort_ints). */
static void sort_pairs(int32_t *v, size_t n)
{
    if (n > SHORT_SORT) {
        qsort(v, n, 2 * sizeof *v, pair_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        const int32_t x0 = v[2 * i], x1 = v[2 * i + 1];
        size_t j = i;
        for (; j > 0 && (v[2 * j - 2] > x0 || (v[2 * j - 2] == x0 && v[2 * j - 1] > x1)); j--)
            v[2 * j] = v[2 * j - 2], v[2 * j + 1] = v[2 * j - 1];
        v[2 * j] = x0, v[2 * j + 1] = x1;
    }
}

static bool add_call(builder *b, int32_t rule, int32_t to)
{
    ngpt_automaton *a = b->a;
    if (b->n_calls == b->cap_calls) {
        uint32_t c = b->cap_calls ? 2 * b->cap_calls : 256;
        int32_t *r = realloc(a->call_rule, c * sizeof *r);
        if (r) a->call_rule = r;
        int32_t *t = realloc(a->call_to, c * sizeof *t);
        if (t) a->call_to = t;
        if (!r || !t) return false;
        b->cap_calls = c;
    }
    a->call_rule[b->n_calls] = rule;
    a->call_to[b->n_calls++] = to;
    return true;
}

/* The moves of DFA state d: by class, then by call. */
static bool expand(builder *b, int32_t d, int32_t end)
{
    ngpt_automaton *a = b->a;
    const size_t o = b->key_off[d];
    const int32_t n = (int32_t)(b->key_off[d + 1] - o);
    size_t np = 0;
    for (int32_t pass = 0; pass < 2; pass++) {   /* 0: bytes (class, target), 1: calls */
        np = 0;
        for (int32_t k = 0; k < n; k++)
            for (int32_t e = b->m.head[b->keys[o + k]]; e >= 0; e = b->m.e[e].next) {
                const nedge *x = &b->m.e[e];
                if (x->kind != (pass ? E_CALL : E_BYTES)) continue;
                int32_t c0 = pass ? x->lo : a->cls[x->lo], c1 = pass ? x->lo : a->cls[x->hi];
                for (int32_t c = c0; c <= c1; c++) {
                    if (np + 2 > b->cap_pairs) {
                        size_t cap = b->cap_pairs ? 2 * b->cap_pairs : 1024;
                        int32_t *p = realloc(b->pairs, cap * sizeof *p);
                        if (!p) return false;
                        b->pairs = p;
                        b->cap_pairs = cap;
                    }
                    b->pairs[np++] = c;
                    b->pairs[np++] = x->to;
                }
            }
        sort_pairs(b->pairs, np / 2);
        if (pass == 0)
            for (int32_t c = 0; c < a->n_classes; c++) a->next[(size_t)d * a->n_classes + c] = -1;
        for (size_t i = 0; i < np;) {
            const int32_t key = b->pairs[i];
            int32_t m = 0;
            for (; i < np && b->pairs[i] == key; i += 2)
                if (m == 0 || b->set[m - 1] != b->pairs[i + 1]) b->set[m++] = b->pairs[i + 1];
            const int32_t t = dfa_state(b, closure(b, m), end);
            if (t < 0) return false;
            if (pass == 0) a->next[(size_t)d * a->n_classes + key] = t;
            else if (!add_call(b, key, t)) return false;
        }
    }
    return true;
}

/* The automaton of rule r, its states appended. */
static bool build_rule(builder *b, int32_t r)
{
    ngpt_automaton *a = b->a;
    b->m.n = b->m.n_e = 0;
    b->m.failed = false;
    frag fr = build(b->f, &b->m, b->f->ast->body[r]);
    if (b->m.failed) {
        b->st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "rule \"%s\" (line %d) unrolls into more than "
                          "16 million automaton states; use smaller repetition counts",
                          b->f->ast->names[r], (int)b->f->ast->line[r]);
        return false;
    }
    free(b->mark);
    free(b->stack);
    free(b->set);
    b->mark = calloc((size_t)b->m.n, sizeof *b->mark);
    b->stack = malloc((size_t)b->m.n * sizeof *b->stack);
    b->set = malloc(((size_t)b->m.n + 1) * sizeof *b->set);
    b->slot_bits = 10;
    free(b->slot);
    b->slot = calloc((size_t)1 << b->slot_bits, sizeof *b->slot);
    if (!b->mark || !b->stack || !b->set || !b->slot) return false;
    b->gen = 0;
    b->first_of_rule = a->n_states;
    b->set[0] = fr.start;
    a->rule_start[r] = dfa_state(b, closure(b, 1), fr.end);
    if (a->rule_start[r] < 0) return false;
    for (int32_t d = a->rule_start[r]; d < a->n_states; d++) {
        a->call_off[d] = b->n_calls;
        if (!expand(b, d, fr.end)) return false;
        a->call_off[d + 1] = b->n_calls;
    }
    return true;
}

/* ------------------------------------------------------------- assembly */

static void mark_cuts(void *user, const uint8_t *lo, const uint8_t *hi, int32_t len)
{
    bool *cut = user;
    for (int32_t i = 0; i < len; i++) cut[lo[i]] = cut[hi[i] + 1] = true;
}

static bool byte_absent(const uint8_t *absent, int b)
{
    return absent && (absent[b >> 3] >> (b & 7)) & 1;
}

/* Cuts the moves into states that cannot reach their rule's end (a rule
 * whose start is cut is not called): first with every call taken, then with
 * the calls of rules still alive, until nothing changes. */
static bool trim(ngpt_automaton *a)
{
    const int32_t N = a->n_states > 0 ? a->n_states : 0, C = a->n_classes;
    const size_t NS = (size_t)(uint32_t)N;
    uint8_t *alive = malloc(NS + 1), *prev = malloc(NS + 1);
    int32_t *queue = malloc((NS + 1) * sizeof *queue);
    uint32_t *pred_off = malloc((NS + 2) * sizeof *pred_off);
    int32_t *pred = NULL;
    bool ok = alive && prev && queue && pred_off;
    if (ok) memset(alive, 1, NS);
    for (bool changed = true; ok && changed;) {
        memcpy(prev, alive, NS);
        memset(pred_off, 0, (NS + 2) * sizeof *pred_off);
        for (int32_t pass = 0; pass < 2 && ok; pass++) {
            for (int32_t s = 0; s < N; s++) {
                for (int32_t c = 0; c < C; c++) {
                    int32_t t = a->next[(size_t)s * C + c];
                    if (t < 0) continue;
                    if (pass) pred[pred_off[t + 1]++] = s;
                    else pred_off[t + 2]++;
                }
                for (uint32_t i = a->call_off[s]; i < a->call_off[s + 1]; i++) {
                    int32_t t = a->call_to[i], st = a->rule_start[a->call_rule[i]];
                    if (st < 0 || !prev[st]) continue;
                    if (pass) pred[pred_off[t + 1]++] = s;
                    else pred_off[t + 2]++;
                }
            }
            if (pass == 0) {
                for (int32_t s = 0; s < N; s++) pred_off[s + 2] += pred_off[s + 1];
                pred = malloc(((size_t)pred_off[N + 1] + 1) * sizeof *pred);
                ok = pred != NULL;
            }
        }
        if (!ok) break;
        int32_t head = 0, tail = 0;
        memset(alive, 0, NS);
        for (int32_t s = 0; s < N; s++)
            if (a->accept[s]) alive[s] = 1, queue[tail++] = s;
        while (head < tail) {
            int32_t t = queue[head++];
            for (uint32_t i = pred_off[t]; i < pred_off[t + 1]; i++)
                if (!alive[pred[i]]) alive[pred[i]] = 1, queue[tail++] = pred[i];
        }
        changed = memcmp(alive, prev, NS) != 0;
        free(pred);
        pred = NULL;
    }
    if (ok) {   /* cut the moves into dead states and the calls of dead rules */
        uint32_t w = 0;
        for (int32_t s = 0; s < N; s++) {
            for (int32_t c = 0; c < C; c++) {
                int32_t *t = &a->next[(size_t)s * C + c];
                if (*t >= 0 && !alive[*t]) *t = -1;
            }
            const uint32_t from = a->call_off[s], to = a->call_off[s + 1];
            a->call_off[s] = w;
            for (uint32_t i = from; i < to; i++) {
                int32_t st = a->rule_start[a->call_rule[i]];
                if (st < 0 || !alive[st] || !alive[a->call_to[i]]) continue;
                a->call_rule[w] = a->call_rule[i];
                a->call_to[w++] = a->call_to[i];
            }
        }
        a->call_off[N] = w;
        for (int32_t r = 0; r < a->n_rules; r++)
            if (a->rule_start[r] >= 0 && !alive[a->rule_start[r]]) a->rule_start[r] = -1;
    }
    free(alive), free(prev), free(queue), free(pred_off), free(pred);
    return ok;
}

/* first and call_first of state s (and, first, of the rules it calls). */
static void first_of(ngpt_automaton *a, int32_t s, uint8_t *done)
{
    if (done[s]) return;
    done[s] = 1;
    uint64_t *f = a->first + (size_t)s * a->fw, *cf = a->call_first + (size_t)s * a->fw;
    for (uint32_t i = a->call_off[s]; i < a->call_off[s + 1]; i++) {
        int32_t st = a->rule_start[a->call_rule[i]];
        first_of(a, st, done);      /* no left recursion: this ends */
        for (int32_t w = 0; w < a->fw; w++) cf[w] |= a->first[(size_t)st * a->fw + w];
    }
    for (int32_t w = 0; w < a->fw; w++) f[w] = cf[w];
    for (int32_t c = 0; c < a->n_classes; c++)
        if (a->next[(size_t)s * a->n_classes + c] >= 0) f[c >> 6] |= 1ull << (c & 63);
}

void ngpt_automaton_free(ngpt_automaton *a)
{
    free(a->next);
    free(a->call_off);
    free(a->call_rule);
    free(a->call_to);
    free(a->rule_start);
    free(a->accept);
    free(a->has_out);
    free(a->first);
    free(a->call_first);
    if (a->rule_names)
        for (int32_t r = 0; r < a->n_rules; r++) free(a->rule_names[r]);
    free(a->rule_names);
    memset(a, 0, sizeof *a);
}

static ngpt_status checks(facts *f, const uint8_t *absent)
{
    const ngpt_gast *t = f->ast;
    const int32_t R = t->n_rules;
    for (bool changed = true; changed;) {       /* nullable and productive: fixpoints */
        changed = false;
        for (int32_t r = 0; r < R; r++) {
            bool n = node_nullable(f, t->body[r]), p = node_can(f, t->body[r], f->productive, true);
            if (n != f->nullable[r] || p != f->productive[r]) changed = true;
            f->nullable[r] = n, f->productive[r] = p;
        }
    }
    f->reachable[t->root] = true;
    node_reach(f, t->body[t->root]);
    /* name the rule that cannot end by itself: one that needs no other such rule */
    int32_t culprit = -1;
    for (int32_t r = 0; r < R; r++) {
        if (!f->reachable[r] || f->productive[r]) continue;
        if (culprit < 0) culprit = r;
        if (!needs_other_unproductive(f, t->body[r], r)) {
            culprit = r;
            break;
        }
    }
    if (culprit >= 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "rule \"%s\" (line %d) can never end: each of its "
                         "alternatives needs a rule that never ends (or itself)",
                         t->names[culprit], (int)t->line[culprit]);
    uint8_t *firsts = calloc((size_t)R * R + 1, 1), *color = calloc((size_t)R + 1, 1);
    int32_t *path = malloc(((size_t)R + 1) * sizeof *path);
    if (!firsts || !color || !path) {
        free(firsts), free(color), free(path);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory compiling the grammar");
    }
    for (int32_t r = 0; r < R; r++)
        if (f->reachable[r]) node_first_refs(f, t->body[r], firsts + (size_t)r * R);
    bool bad = false;
    for (int32_t r = 0; r < R && !bad; r++)
        if (f->reachable[r] && color[r] == 0) bad = left_recursive(f, firsts, r, color, path, 0);
    free(firsts), free(color), free(path);
    if (bad) return NGPT_ERR_BAD_FORMAT;
    for (int32_t i = 0; absent && i < t->n_nodes; i++) {
        const ngpt_gnode *n = &t->nodes[i];
        if (n->kind != NGPT_GN_CHARS || !n->literal) continue;
        uint8_t b[4];
        utf8_encode(t->ranges[n->a].lo, b);
        for (int k = 0; k < utf8_len(t->ranges[n->a].lo); k++)
            if (byte_absent(absent, b[k]))
                return ngpt_fail(NGPT_ERR_UNSUPPORTED, "line %d, column %d: the literal needs "
                                 "byte 0x%02X, which no token of this vocabulary holds",
                                 (int)n->line, (int)n->col, b[k]);
    }
    return NGPT_OK;
}

ngpt_status ngpt_automaton_build(const ngpt_gast *ast, const uint8_t *absent, ngpt_automaton *a)
{
    memset(a, 0, sizeof *a);
    const int32_t R = ast->n_rules;
    facts f = {ast, calloc((size_t)R, 1), calloc((size_t)R, 1), calloc((size_t)R, 1)};
    builder b = {.a = a, .f = &f};
    ngpt_status st = NGPT_OK;
    a->n_rules = R;
    a->root = ast->root;
    a->rule_start = malloc((size_t)R * sizeof *a->rule_start);
    a->rule_names = calloc((size_t)R, sizeof *a->rule_names);
    if (!f.nullable || !f.productive || !f.reachable || !a->rule_start || !a->rule_names) goto oom;
    for (int32_t r = 0; r < R; r++) {
        a->rule_start[r] = -1;
        if (!(a->rule_names[r] = strdup(ast->names[r]))) goto oom;
    }
    if ((st = checks(&f, absent))) goto done;

    bool cut[257] = {true};
    for (int32_t i = 0; i < ast->n_nodes; i++) {
        const ngpt_gnode *n = &ast->nodes[i];
        if (n->kind == NGPT_GN_CHARS)
            for (int32_t k = 0; k < n->b; k++)
                utf8_ranges(ast->ranges[n->a + k].lo, ast->ranges[n->a + k].hi, mark_cuts, cut);
    }
    for (int x = 0; x < 256; x++)
        if (byte_absent(absent, x)) cut[x] = cut[x + 1] = true;
    for (int x = 0; x < 256; x++) {
        a->n_classes += cut[x];
        a->cls[x] = (uint8_t)(a->n_classes - 1);
    }
    for (int32_t r = 0; r < R; r++)
        if (f.reachable[r] && !build_rule(&b, r)) goto fail;
    for (int x = 0; x < 256; x++)       /* the bytes no token holds lead nowhere */
        if (byte_absent(absent, x))
            for (int32_t s = 0; s < a->n_states; s++) a->next[(size_t)s * a->n_classes + a->cls[x]] = -1;
    if (!trim(a)) goto oom;
    if (a->rule_start[a->root] < 0) {
        st = ngpt_fail(NGPT_ERR_UNSUPPORTED, "no text of the grammar can be written with this "
                       "vocabulary's tokens (it lacks bytes the grammar needs)");
        goto done;
    }
    a->fw = (a->n_classes + 63) / 64;
    const size_t N = (size_t)a->n_states;
    a->has_out = calloc(N ? N : 1, 1);
    a->first = calloc(N * a->fw + 1, sizeof *a->first);
    a->call_first = calloc(N * a->fw + 1, sizeof *a->call_first);
    uint8_t *done = calloc(N ? N : 1, 1);
    if (!a->has_out || !a->first || !a->call_first || !done) {
        free(done);
        goto oom;
    }
    for (int32_t s = 0; s < a->n_states; s++) {
        first_of(a, s, done);
        a->has_out[s] = a->call_off[s + 1] > a->call_off[s];
        for (int32_t c = 0; c < a->n_classes && !a->has_out[s]; c++)
            a->has_out[s] = a->next[(size_t)s * a->n_classes + c] >= 0;
    }
    free(done);
    goto done;
oom:
    st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory compiling the grammar");
    goto done;
fail:
    st = b.st ? b.st : ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory compiling the grammar");
done:
    free(b.m.head), free(b.m.e), free(b.keys), free(b.key_off), free(b.slot);
    free(b.mark), free(b.stack), free(b.set), free(b.pairs);
    free(f.nullable), free(f.productive), free(f.reachable);
    if (st) ngpt_automaton_free(a);
    return st;
}
