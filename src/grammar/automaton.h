/* automaton.h — a grammar compiled for matching bytes (automaton.c), and
 * the matcher's states over it (match.c).
 *
 * Each rule is a deterministic automaton over bytes and calls: its
 * expression (literals and classes as UTF-8 byte sequences, repetition
 * unrolled) becomes a nondeterministic automaton, which the subset
 * construction makes deterministic, so `x? x? x?`, `(a*)*` and other nested
 * repetition cost nothing at run time: one state per position. A call of a
 * rule that can match nothing is also an empty move, and no call starts a
 * rule that can call itself before reading a byte (left recursion is
 * refused), so between two bytes the matcher only pops finished rules and
 * then pushes the rules a byte starts.
 *
 * A matcher state is the set of stacks the text so far allows, each stack
 * the return states of the open calls and the current state on top, in a
 * caller's buffer of ngpt_gm_words() words: [0] the number of stacks, [1]
 * the words used after the header, then each stack as its depth and its
 * states from the bottom. States are canonical at every boundary: a stack
 * whose top can finish its rule is also there popped (and, when the top
 * cannot go on, only popped); the empty stack means the whole text can end
 * here. Bounds: a stack holds at most `depth` states and a state at most
 * `stacks` stacks (both fixed when the buffers are planned); going past
 * either is NGPT_GM_OVERFLOW. */
#ifndef NGPT_GRAMMAR_AUTOMATON_H
#define NGPT_GRAMMAR_AUTOMATON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "grammar/gbnf.h"
#include "runtime/plan.h"   /* a state's size: the arena plans the states */

typedef struct ngpt_automaton {
    int32_t n_states, n_classes, n_rules, root;
    uint8_t cls[256];           /* byte -> its class: bytes of a class go the same ways */
    int32_t *next;              /* (n_states, n_classes) the state a byte leads to, or -1 */
    uint32_t *call_off;         /* (n_states + 1): state s calls call_rule[i] and returns */
    int32_t *call_rule;         /*   to call_to[i], for i in call_off[s] .. call_off[s+1] */
    int32_t *call_to;
    int32_t *rule_start;        /* (n_rules) */
    uint8_t *accept;            /* (n_states) the rule can end here */
    uint8_t *has_out;           /* (n_states) a byte or a call leads on */
    /* (n_states, fw) bits by class: a byte of the class can be read from
     * the state directly or through the calls it starts (first), through
     * its calls only (call_first) */
    uint64_t *first, *call_first;
    int32_t fw;
    char **rule_names;          /* for messages (n_rules) */
} ngpt_automaton;

/* Compiles a parsed grammar. absent (NULL, or 256 bits): bytes the
 * vocabulary cannot produce; a literal that needs one is refused (naming
 * its line and column), classes lose them. Refused by name: a rule that
 * can never end (reachable from root), left recursion, an automaton past
 * NGPT_GM_MAX_STATES. Bare messages. */
ngpt_status ngpt_automaton_build(const ngpt_gast *ast, const uint8_t *absent, ngpt_automaton *a);
void ngpt_automaton_free(ngpt_automaton *a);

#define NGPT_GM_MAX_STATES (1 << 17)
#define NGPT_GM_MAX_SET_WORDS (1 << 23)     /* the subset construction's sets, in all */
#define NGPT_GM_MAX_DEPTH 4096      /* the deepest stack a state may be planned for */

static inline bool ngpt_gm_bit(const uint64_t *bits, int32_t fw, int32_t s, int32_t c)
{
    return (bits[(size_t)s * fw + (c >> 6)] >> (c & 63)) & 1;
}

/* ---- matcher states (match.c) ---- */

typedef struct ngpt_gm_limits {
    int32_t depth, stacks;
} ngpt_gm_limits;

enum { NGPT_GM_OK = 0, NGPT_GM_DEAD = 1, NGPT_GM_OVERFLOW = 2 };

/* Words of a state buffer for these limits. */
size_t ngpt_gm_words(ngpt_gm_limits lim);

/* Words of a mutable copy of one stack under these limits (a step's
 * calls grow it up to lim.depth): a local array of exactly this many
 * (lim.depth, at least 1, NGPT_GM_MAX_DEPTH + 1 at most), not one of the
 * largest size: a 16 KiB frame costs a sanitizer's 2 KiB shadow memset at
 * every step. */
static inline int32_t ngpt_gm_copy_words(ngpt_gm_limits lim)
{
    return lim.depth < 1 ? 1 : lim.depth > NGPT_GM_MAX_DEPTH ? NGPT_GM_MAX_DEPTH + 1 : lim.depth;
}

/* The state before any text: the root's start. */
void ngpt_gm_start(const ngpt_automaton *a, uint32_t *st);

/* The state after bytes[0..n) from src into dst (may not be src); tmp is a
 * third buffer. NGPT_GM_DEAD: no stack reads them; NGPT_GM_OVERFLOW: the
 * limits were exceeded (dst then holds what fit). exits (NULL: a real
 * state): the bottom of every stack is a boundary, whose rule may finish
 * only by setting *exits (the caller continues past it); used to index a
 * state's tokens on their own (mask.c). */
int ngpt_gm_advance(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *src,
                    const uint8_t *bytes, size_t n, uint32_t *dst, uint32_t *tmp, bool *exits);

/* One byte, src into dst (not src). */
int ngpt_gm_step(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *src, uint8_t byte,
                 uint32_t *dst, bool *exits);

/* ngpt_gm_step for the one stack s[0..d) (bottom first). */
int ngpt_gm_step_stack(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *s, int32_t d,
                       uint8_t byte, uint32_t *dst, bool *exits);

/* The single stack src holds (depth d, states s[0..d)) as a state into dst,
 * canonical. */
int ngpt_gm_from_stack(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *s, int32_t d,
                       uint32_t *dst, bool *exits);

static inline uint32_t ngpt_gm_n_stacks(const uint32_t *st) { return st[0]; }
static inline size_t ngpt_gm_used(const uint32_t *st) { return 2 + (size_t)st[1]; }

/* The stacks one after another: the first at st + 2, each 1 + its depth words. */
static inline const uint32_t *ngpt_gm_first(const uint32_t *st) { return st + 2; }
static inline const uint32_t *ngpt_gm_after(const uint32_t *stack) { return stack + 1 + stack[0]; }

/* The text so far may end here / nothing may follow it. */
bool ngpt_gm_can_end(const uint32_t *st);
bool ngpt_gm_complete(const uint32_t *st);

static inline void ngpt_gm_copy(uint32_t *dst, const uint32_t *src)
{
    for (size_t i = 0, n = ngpt_gm_used(src); i < n; i++) dst[i] = src[i];
}

#endif
