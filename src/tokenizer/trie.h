/* trie.h — the vocabulary's byte trie (trie.c): every token that text can
 * produce, by the bytes decoding gives it, shared by everything that walks
 * the vocabulary byte by byte (the grammar's token masks: src/grammar/).
 * A tokenizer builds its trie once, on first use, and keeps it for its
 * life (ngpt_tok_trie_of); a byte-level model's is made by
 * ngpt_tok_trie_bytes. Read-only once made: any number of threads may walk
 * one. */
#ifndef NGPT_TOKENIZER_TRIE_H
#define NGPT_TOKENIZER_TRIE_H

#include <stdint.h>

#include "base/error.h"
#include "tokenizer/tables.h"

/* Nodes in preorder, the root left out: node i is the byte string of its
 * ancestors' bytes then byte[i] (depth[i] bytes long), its subtree is
 * i .. end[i] - 1, and the tokens whose bytes are exactly that string are
 * toks[tok_off[i] .. tok_off[i + 1]) (several only when a vocabulary holds
 * one string twice). Special tokens are not in it (they hold no text), nor
 * are ids without bytes. */
typedef struct ngpt_tok_trie {
    int32_t n_nodes;
    int32_t n_toks;             /* tokens in the trie */
    int32_t n_vocab;            /* ids are 0..n_vocab-1 */
    int32_t max_depth;          /* the longest token's bytes */
    uint8_t *byte;              /* (n_nodes) */
    uint16_t *depth;            /* (n_nodes) 1.. */
    uint32_t *end;              /* (n_nodes) */
    uint32_t *parent;           /* (n_nodes) the parent's index, or UINT32_MAX at depth 1 */
    uint32_t *tok_off;          /* (n_nodes + 1) */
    int32_t *toks;              /* (n_toks) model ids */
    uint64_t *has;              /* (n_vocab bits) the ids in the trie */
} ngpt_tok_trie;

/* tok's trie, built on the first call (by whichever thread gets there
 * first; the others wait for nothing, a loser frees its copy), NULL when
 * memory runs out (a bare message). */
const ngpt_tok_trie *ngpt_tok_trie_of(const ngpt_tokenizer *tok);

/* Byte b at [b]: the one-byte string of a byte-level model's token b. */
extern const uint8_t ngpt_tok_byte_strings[256];

/* The trie of a byte-level model: ids 0..255 are the bytes, n_vocab ids in
 * all (those from 256 on hold none). Owned by the caller; NULL: no memory. */
ngpt_tok_trie *ngpt_tok_trie_bytes(int32_t n_vocab);

/* The bytes of node i's string into out (depth[i] of them). */
void ngpt_tok_trie_path(const ngpt_tok_trie *trie, uint32_t i, uint8_t *out);

void ngpt_tok_trie_free(ngpt_tok_trie *trie);

#endif
