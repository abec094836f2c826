/* tokenizer.h — the BPE tokenizer's object and what its files share
 * (docs/TOKENIZER.md). build.c makes one from a spec (the merge list and
 * its settings: training, a tokenizer file and GPT-2's files all end there):
 * it validates it and writes every table and the file image (docs/FORMAT.md,
 * "Tokenizer files"), which the tokenizer keeps for saves (its own file, a
 * checkpoint's tensor). Once made, a tokenizer is read-only: tokenizer.c
 * holds its accessors, bpe.c merges bytes and encode.c encodes text by its
 * tables. The tokenizer depends only on the base layer (errors). */
#ifndef NGPT_TOKENIZER_H
#define NGPT_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"

#define NGPT_TOK_MAGIC "NGPTTOKN"          /* 8 bytes, no NUL */
#define NGPT_TOK_VERSION 1                  /* today's layout: model ids are the ids below */
#define NGPT_TOK_VERSION_IDS 2              /* version 1 + the model id of each token */
#define NGPT_TOK_HEADER 64                  /* then 256 bytes: the byte of each id < 256 */
#define NGPT_TOK_MAX_TOKENS (1 << 20)       /* n_tokens limit */
#define NGPT_TOK_MAX_BYTES 256              /* the longest token, and a special's name */
#define NGPT_TOK_MAX_SPECIAL 256

/* What a tokenizer is made of; build.c copies it. */
typedef struct ngpt_tok_spec {
    uint8_t id_byte[256];       /* the byte of token i < 256: a permutation of 0..255 */
    const uint32_t *merges;     /* (n_merges, 2): merge k joins tokens merges[2k], [2k+1] */
    int32_t n_merges;
    int32_t n_special;
    const uint8_t *special[NGPT_TOK_MAX_SPECIAL];   /* names */
    size_t special_len[NGPT_TOK_MAX_SPECIAL];
    int32_t end_id, pad_id;     /* special tokens' model ids, or -1 */
    /* more special tokens that end a generation, after end_id (which they
     * need): header byte 34 counts them, their model ids follow the specials */
    int32_t n_end_extra;
    int32_t end_extra[NGPT_END_TOKENS_MAX - 1];
    int32_t pretok, rule;       /* ngpt_pretokenizer, ngpt_merge_rule */
    /* NULL: a token's model id is its id above (bytes, merges, specials).
     * Else the model id of each of the 256 + n_merges + n_special tokens:
     * -1 for a byte the model lacks (encoding drops it), the others 0..V-1
     * once each (a Hugging Face vocabulary's ids); written as version 2. */
    const int32_t *model_id;
} ngpt_tok_spec;

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
    int32_t n_end, end_ids[NGPT_END_TOKENS_MAX];    /* generation's ends: end_id, the extras */
    ngpt_pretokenizer pretok;
    ngpt_merge_rule rule;
    int32_t byte_id[256];       /* the id of each byte */
    uint8_t id_byte[256];
    uint32_t *merges;           /* (n_merges, 2) */
    uint32_t *off;              /* (n_internal + 1): token i is bytes[off[i] .. off[i+1]) */
    uint8_t *bytes;
    /* (left, right) -> the id they merge into (its rank: ids of merges grow
     * with their rank); open addressing, keys left << 32 | right */
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
    int32_t *model_id;          /* (n_internal): the model id of each token, -1 absent */
    int32_t *internal_id;       /* (n_tokens): the inverse */
    bool remapped;              /* model ids given by the spec: a version 2 file */
    bool has_absent;            /* some byte has no model id */
    uint8_t absent[32];         /* bit b: byte b has no model id (dropped from pieces) */
    uint8_t *image;             /* the file image (docs/FORMAT.md): what saves write */
    size_t image_size;
    uint64_t checksum;          /* XXH3-64 of the file image: its last 8 bytes */
    /* the scored kind (scored.h: llama2.c's tokenizer.bin), or NULL for BPE;
     * bos_id is its BOS, prepended to prompts */
    struct ngpt_tok_scored *scored;
    int32_t bos_id;
};

#define NGPT_PAIR_EMPTY UINT64_MAX

static inline uint32_t ngpt_pair_slot(uint64_t key, uint32_t bits)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* The id tokens a and b merge into, or -1. */
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

/* Whether model id id is a special token. */
static inline bool ngpt_tok_special(const ngpt_tokenizer *t, int32_t id)
{
    if (t->scored) return id < t->n_special;        /* <unk>, BOS, EOS */
    return t->internal_id[id] >= 256 + t->n_merges;
}

static inline bool ngpt_tok_byte_absent(const ngpt_tokenizer *t, uint8_t b)
{
    return (t->absent[b >> 3] >> (b & 7)) & 1;
}

static inline bool ngpt_tok_whole(const ngpt_tokenizer *t, int32_t id)
{
    return (t->whole[id >> 3] >> (id & 7)) & 1;
}

/* Makes a tokenizer from spec, checking it (docs/FORMAT.md, "Validation"; build.c);
 * a failure leaves a bare sentence naming `src` (the file, "the buffer",
 * "the training result"). */
ngpt_status ngpt_tok_build(ngpt_tokenizer **out, const ngpt_tok_spec *spec, const char *src);

/* *tok with ids[0..n) as its end tokens: ids[0] its end of text (or -1
 * and n 0: none), the rest more special tokens that end a generation
 * (rebuilt from its image; *tok replaced). */
ngpt_status ngpt_tok_with_ends(ngpt_tokenizer **tok, const int32_t *ids, int32_t n,
                               const char *src);

/* The tokens whose bytes, one after another, are the first k bytes of
 * token id (model ids, in and out; not special; 0 < k <= its length): the parts of its merge tree
 * that cover them, left to right, into out (at most k of them, and at most
 * the depth of its tree); returns their number. Decoding them gives exactly
 * those bytes (they are not what encoding the bytes would give). */
int32_t ngpt_tok_prefix(const ngpt_tokenizer *t, int32_t id, size_t k, int32_t *out);

/* Reads a tokenizer from a file image, checked whole (format.c): a bare
 * message naming src on failure. */
ngpt_status ngpt_tok_parse(ngpt_tokenizer **tok, const uint8_t *p, size_t size, const char *src);

/* Checks the container of a file image without building the tokenizer
 * (magic, version, size, checksum, the counts): what a checkpoint that
 * carries one checks on every open. *n_tokens and *checksum get its token
 * count and identity. Bare messages naming src. */
ngpt_status ngpt_tok_image_check(const uint8_t *p, size_t size, const char *src,
                                 int32_t *n_tokens, uint64_t *checksum);

/* GPT-2's tokenizer from the text of encoder.json (vocab.json) and
 * vocab.bpe (merges.txt) (gpt2.c): what ngpt_tokenizer_load_gpt2 reads,
 * for the importer too. Bare messages naming json_src and bpe_src. */
ngpt_status ngpt_tok_load_gpt2(ngpt_tokenizer **tok, const uint8_t *json, size_t json_size,
                               const char *json_src, const uint8_t *bpe, size_t bpe_size,
                               const char *bpe_src);

/* The byte a character of GPT-2's files (and of a byte-level tokenizer.json)
 * stands for (bytes_to_unicode's inverse), or -1 (gpt2.c). */
int ngpt_tok_char_byte(uint32_t c);

/* Reads the whole regular file at path into *buf (malloc'd, *size bytes);
 * bare messages naming it (format.c). */
ngpt_status ngpt_tok_read_file(const char *path, uint8_t **buf, size_t *size);

/* ---- pre-tokenization (pretok.c) */

/* The end of the piece that starts at t[i] (i < n). NGPT_PRETOK_DIGITS is
 * Hugging Face's Sequence[Digits(individual_digits), ByteLevel]: each \p{N}
 * character alone, GPT-2's pattern inside the stretches between them. */
size_t ngpt_pretok_next(ngpt_pretokenizer p, const uint8_t *t, size_t n, size_t i);

#endif
