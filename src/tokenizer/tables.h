/* tables.h — the tokenizer's object (docs/TOKENIZER.md): its tables, the
 * limits of its file image (docs/FORMAT.md, "Tokenizer files") and the
 * lookups in them, which every file of the tokenizer (both kinds: scored.c
 * too) and the generation's stop sequences and chat read. tokenizer.h says
 * how one is made and what its files share besides. */
#ifndef NGPT_TOKENIZER_TABLES_H
#define NGPT_TOKENIZER_TABLES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ngpt.h"

#define NGPT_TOK_MAGIC "NGPTTOKN"          /* 8 bytes, no NUL */
#define NGPT_TOK_VERSION 1                  /* today's layout: model ids are the ids below */
#define NGPT_TOK_VERSION_IDS 2              /* version 1 + the model id of each token */
#define NGPT_TOK_HEADER 64                  /* then 256 bytes: the byte of each id < 256 */
#define NGPT_TOK_MAX_TOKENS (1 << 20)       /* n_tokens limit */
#define NGPT_TOK_MAX_BYTES 256              /* the longest token, and a special's name */
#define NGPT_TOK_MAX_SPECIAL 8192               /* Gemma 3's 6,415 added tokens fit */

/* Header byte 35: what a Hugging Face pipeline adds to byte-level BPE
 * (0 in every file before them, which encode as they did). */
enum {
    NGPT_TOK_NFC = 1,               /* text is NFC-normalized before pre-tokenization */
    NGPT_TOK_IGNORE_MERGES = 2,     /* a piece that is a token is that token (Llama 3) */
    NGPT_TOK_SPLIT_ADDED = 4,       /* specials matched in text first, by their NGPT_ADDED_* */
    NGPT_TOK_HAS_BOS = 8,           /* bytes 52..55: the token prompts begin with */
    NGPT_TOK_SPACE_MARK = 16,       /* ▁ in text is a space, as in the tokens (Gemma's) */
    NGPT_TOK_BYTE_FALLBACK = 32,    /* merges without model id (parts of characters): <0xXX>s */
    NGPT_TOK_FLAGS = 63
};
/* An added (special) token's flags, Hugging Face's: lstrip takes the white
 * space before a match, rstrip the white space after it; a normalized one
 * is matched in the normalized text, the others in the text as it is. An
 * unmatched one is never found in text (a fallback token <0xXX> of a byte
 * that is a character, named by that byte; Gemma's <image_soft_token>); a
 * plain one (not special in Gemma's file) is also found in a chat turn's
 * content, where markers never are. */
enum { NGPT_ADDED_LSTRIP = 1, NGPT_ADDED_RSTRIP = 2, NGPT_ADDED_NORMALIZED = 4,
       NGPT_ADDED_UNMATCHED = 8, NGPT_ADDED_PLAIN = 16, NGPT_ADDED_FLAGS = 31 };

/* Inside, a token's id is its place in the merge list: bytes 0..255 (in
 * id_byte's order), merge k is 256 + k (so its id is its rank), then the
 * specials: every table below is indexed by these internal ids. What the
 * library takes and returns are model ids (the rows of the model's
 * embedding): model_id maps one way, internal_id the other; both are the
 * identity for files of version 1. */
struct ngpt_tokenizer {
    int32_t n_tokens;           /* model ids: n_internal minus the absent bytes */
    int32_t n_internal;         /* 256 + n_merges + n_special */
    int32_t n_merges, n_special, end_id, pad_id, max_len;   /* end, pad: model ids */
    int32_t n_alias;            /* merges adding no model id: aliases, parts of characters */
    int32_t n_end, end_ids[NGPT_END_TOKENS_MAX];    /* generation's ends: end_id, the extras */
    ngpt_pretokenizer pretok;
    ngpt_merge_rule rule;
    uint8_t flags;              /* NGPT_TOK_NFC, ... */
    uint8_t *added_flags;       /* (n_special) with NGPT_TOK_SPLIT_ADDED, else NULL */
    int32_t byte_id[256];       /* the id of each byte */
    uint8_t id_byte[256];
    uint32_t *merges;           /* (n_merges, 2) */
    uint32_t *off;              /* (n_internal + 1): token i is bytes[off[i] .. off[i+1]) */
    uint8_t *bytes;
    /* (left, right) -> the rank of the merge that joins them: its id (ids of
     * merges grow with their rank); open addressing, keys left << 32 | right */
    uint64_t *pair_key;
    int32_t *pair_val;
    uint32_t pair_bits;
    /* bit x * 256 + y: some token (not special) holds byte x followed by
     * byte y; where not, no token of any encoding spans the two bytes */
    uint8_t joinable[256 * 256 / 8];
    /* token bytes -> id + 1 (0 empty), specials excluded; of tokens with
     * the same bytes (possible with NGPT_MERGE_PAIRS), the first */
    int32_t *str_slot;
    uint32_t str_bits;
    /* bit id: the bytes of token id, encoded alone, are token id (most
     * tokens): a part of a piece that is such a token needs no BPE (build.c
     * merges each token's bytes to find them) */
    uint8_t *whole;
    /* (n_internal) the token merge r makes: r itself, but for an alias (a
     * merge whose token an earlier merge makes, as Hugging Face's files from
     * tiktoken's have) the first; NULL when there is none */
    int32_t *merged;
    int32_t *model_id;          /* (n_internal): the model id of each token, -1 absent */
    int32_t *internal_id;       /* (n_tokens): the inverse */
    bool remapped;              /* model ids given by the spec: a version 2 file */
    bool has_absent;            /* some byte has no model id */
    uint8_t absent[32];         /* bit b: byte b has no model id (dropped from pieces) */
    uint8_t *image;             /* the file image (docs/FORMAT.md): what saves write */
    size_t image_size;
    uint64_t checksum;          /* XXH3-64 of the file image: its last 8 bytes */
    /* the special tokens matched in text (NGPT_TOK_SPLIT_ADDED), per pass
     * (0: in the text as it is, 1: in the normalized text), by first byte:
     * added_order[p][added_start[p][b] .. added_start[p][b + 1]) are the
     * specials (0..n_special-1) that begin with byte b, longest first, and
     * their lengths, once each, added_len[added_len_start[p][b] .. [b + 1]) */
    uint16_t added_start[2][257];
    uint16_t added_order[2][NGPT_TOK_MAX_SPECIAL];
    uint32_t added_len_start[2][257];
    uint16_t *added_len, *special_slot;     /* special_slot: matched names -> k + 1, 0 empty */
    uint32_t special_bits;
    /* the scored kind (scored.h: llama2.c's tokenizer.bin), or NULL for BPE */
    struct ngpt_tok_scored *scored;
    /* the token the commands begin a prompt with (a model id: the scored
     * kind's BOS, a BPE file's NGPT_TOK_HAS_BOS), or -1 */
    int32_t bos_id;
    /* the vocabulary's byte trie (trie.h), made on first use, or NULL */
    _Atomic(struct ngpt_tok_trie *) trie;
};

#define NGPT_PAIR_EMPTY UINT64_MAX

static inline uint32_t ngpt_pair_slot(uint64_t key, uint32_t bits)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* The rank of the merge of tokens a and b, or -1 (ngpt_tok_merged: the
 * token it makes). */
static inline int32_t ngpt_tok_pair(const ngpt_tokenizer *t, int32_t a, int32_t b)
{
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    uint32_t mask = (1u << t->pair_bits) - 1;
    for (uint32_t i = ngpt_pair_slot(key, t->pair_bits);; i = (i + 1) & mask) {
        uint64_t k = t->pair_key[i];
        if (k == key) return t->pair_val[i];
        if (k == NGPT_PAIR_EMPTY) return -1;
    }
}

/* The token the merge of rank r makes: r, or the first merge of an alias. */
static inline int32_t ngpt_tok_merged(const ngpt_tokenizer *t, int32_t r)
{
    return t->merged ? t->merged[r] : r;
}

static inline bool ngpt_tok_joinable(const ngpt_tokenizer *t, uint8_t x, uint8_t y)
{
    unsigned bit = (unsigned)x << 8 | y;
    return (t->joinable[bit >> 3] >> (bit & 7)) & 1;
}

static inline uint32_t ngpt_str_slot(const uint8_t *s, size_t n, uint32_t bits)
{
    uint64_t h = 0xcbf29ce484222325ull;             /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
    return (uint32_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* The id of the token whose bytes are s[0..n) (specials excluded), or -1. */
static inline int32_t ngpt_tok_lookup(const ngpt_tokenizer *t, const uint8_t *s, size_t n)
{
    if (n == 1) return t->byte_id[s[0]];
    if (n == 0 || n > (size_t)t->max_len) return -1;
    uint32_t mask = (1u << t->str_bits) - 1;
    for (uint32_t i = ngpt_str_slot(s, n, t->str_bits);; i = (i + 1) & mask) {
        int32_t v = t->str_slot[i];
        if (v == 0) return -1;
        if (t->off[v] - t->off[v - 1] == n && !memcmp(t->bytes + t->off[v - 1], s, n)) return v - 1;
    }
}

/* The length in bytes of token id (an internal id). */
static inline size_t ngpt_tok_len(const ngpt_tokenizer *t, int32_t id)
{
    return t->off[id + 1] - t->off[id];
}

/* The bytes of the token with model id id (*len of them); special tokens:
 * their names. */
static inline const uint8_t *ngpt_tok_bytes(const ngpt_tokenizer *t, int32_t id, size_t *len)
{
    id = t->internal_id[id];
    *len = t->off[id + 1] - t->off[id];
    return t->bytes + t->off[id];
}

/* Whether model id id is a special token (a plain one is text: its bytes). */
static inline bool ngpt_tok_special(const ngpt_tokenizer *t, int32_t id)
{
    if (t->scored) return id < t->n_special;        /* <unk>, BOS, EOS */
    const int32_t k = t->internal_id[id] - 256 - t->n_merges;
    return k >= 0 && !(t->added_flags && (t->added_flags[k] & NGPT_ADDED_PLAIN));
}

static inline bool ngpt_tok_byte_absent(const ngpt_tokenizer *t, uint8_t b)
{
    return (t->absent[b >> 3] >> (b & 7)) & 1;
}

static inline bool ngpt_tok_whole(const ngpt_tokenizer *t, int32_t id)
{
    return (t->whole[id >> 3] >> (id & 7)) & 1;
}

#endif
