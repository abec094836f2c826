/* grammar.h — a grammar compiled against a vocabulary (grammar.c): its
 * automaton (automaton.h) and, for each automaton state, which tokens it
 * allows (mask.c), what generation (src/generate/) asks each step.
 *
 * A token's bytes are what decoding gives (ngpt_tokenizer_token: a scored
 * tokenizer's leading space, <0xNN> as its byte; a byte-level model's
 * token t < 256 is byte t); it is allowed when every one of its bytes can
 * follow the text so far, whichever rules they cross. Special tokens hold
 * no text and are never allowed by the grammar (generation adds the end
 * tokens where the grammar can end).
 *
 * The index: for each state q, the walk of the vocabulary's trie from the
 * one-frame stack [q] alone, done once at compile time, gives the tokens
 * read inside q's rule (allowed whatever lies below q), and the trie nodes
 * where q's rule may finish mid-token (or the walk passed its limits): the
 * tokens under those are checked against the real stack at each step. A
 * state whose walk is too long to index (past a budget) is walked at each
 * step instead. */
#ifndef NGPT_GRAMMAR_GRAMMAR_H
#define NGPT_GRAMMAR_GRAMMAR_H

#include "grammar/automaton.h"
#include "tokenizer/trie.h"

enum { NGPT_GIDX_WALK = 0, NGPT_GIDX_ACCEPT = 1, NGPT_GIDX_REJECT = 2 };

/* What state q allows on its own: the tokens list[list_off ..] (ACCEPT: the
 * allowed ones, REJECT: all others of the trie), plus the subtrees of the
 * trie nodes checks[check_off ..], walked from the real stack; WALK: none
 * indexed, the whole trie is walked. */
typedef struct ngpt_gindex {
    uint32_t list_off, list_len, check_off, check_len;
    uint8_t mode;
} ngpt_gindex;

struct ngpt_grammar {
    ngpt_automaton a;
    const ngpt_tok_trie *trie;  /* the tokenizer's, or own_trie for byte-level models */
    ngpt_tok_trie *own_trie;
    int32_t n_vocab;
    const ngpt_tokenizer *tok;  /* compiled for this tokenizer (borrowed), or NULL: bytes */
    ngpt_gindex *idx;           /* (a.n_states) */
    uint32_t *lists, *checks;
    char *text;                 /* the GBNF compiled (a JSON Schema's: the converter's) */
    size_t text_len;
};

/* The scratch a mask needs, planned in a context's arena. */
typedef struct ngpt_gwork {
    ngpt_gm_limits lim;
    uint32_t *gbuf;             /* the walk's states by trie depth, gcap words */
    size_t gcap;
    uint32_t *s[3];             /* three states of ngpt_gm_words(lim) words */
    uint64_t *tmp;              /* one mask */
} ngpt_gwork;

/* The walk's words for lim (what a context plans for gbuf). */
size_t ngpt_gwork_gbuf_words(ngpt_gm_limits lim);

/* The bits (n_vocab, into mask, overwritten) of the tokens the grammar
 * allows after state st; the end tokens are the caller's
 * (ngpt_gm_can_end). A token whose check passes the limits is allowed: its
 * advance then reports the overflow. */
void ngpt_grammar_mask(const ngpt_grammar *g, const uint32_t *st, uint64_t *mask, ngpt_gwork *w);

/* st advanced by token tok's bytes into dst (NGPT_GM_*); w->s[2] is used. */
int ngpt_grammar_advance(const ngpt_grammar *g, const uint32_t *st, int32_t tok, uint32_t *dst,
                         ngpt_gwork *w);

/* Builds the index of every state (compile time). Bare messages. */
ngpt_status ngpt_grammar_index(ngpt_grammar *g);

/* The bytes of token tok (a model id) as the grammar reads them; *len 0:
 * none (a special token, an id without bytes). */
const uint8_t *ngpt_grammar_token_bytes(const ngpt_grammar *g, int32_t tok, size_t *len);

static inline bool ngpt_mask_bit(const uint64_t *m, int32_t i)
{
    return (m[i >> 6] >> (i & 63)) & 1;
}

static inline void ngpt_mask_set(uint64_t *m, int32_t i)
{
    m[i >> 6] |= 1ull << (i & 63);
}

#endif
