/* tokenizer.h — how the BPE tokenizer is made and what its files share
 * (docs/TOKENIZER.md); the object itself, its tables and their lookups:
 * tables.h. build.c makes one from a spec (the merge list and its
 * settings: training, a tokenizer file and GPT-2's files all end there):
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
#include "tokenizer/tables.h"   /* the object's tables and their lookups */

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
    int32_t flags;              /* NGPT_TOK_NFC, ... (tables.h; 0: none) */
    uint8_t added_flags[NGPT_TOK_MAX_SPECIAL];  /* with NGPT_TOK_SPLIT_ADDED: NGPT_ADDED_* */
    int32_t bos_id;             /* with NGPT_TOK_HAS_BOS: a special token's model id */
    /* NULL: a token's model id is its id above (bytes, merges, specials).
     * Else the model id of each of the 256 + n_merges + n_special tokens:
     * -1 for a byte the model lacks (encoding drops it), the others 0..V-1
     * once each (a Hugging Face vocabulary's ids), but that a merge may
     * repeat an earlier merge's id when it makes the same bytes (an alias:
     * Llama 3's merges make most tokens several ways); written as version 2,
     * whose merges may also join tokens that later merges make. */
    const int32_t *model_id;
} ngpt_tok_spec;

/* Whether a model of V rows may carry tokenizer t: a row per token, and
 * maybe rows past its tokens (Qwen's 151936 for 151669 ids), which no
 * text encodes to and generation never samples. */
static inline bool ngpt_tok_fits(const ngpt_tokenizer *t, int32_t V)
{
    return t->n_tokens <= V;
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

/* *tok with special token id (a model id; -1: none) as the BOS prompts
 * begin with (rebuilt from its image; *tok replaced). */
ngpt_status ngpt_tok_with_bos(ngpt_tokenizer **tok, int32_t id, const char *src);

/* *tok without its last special tokens when they have model ids V or more
 * and are never found in text (Gemma's <image_soft_token>, id 262144,
 * which a model of 262144 rows has no row for): rebuilt from its image,
 * *tok replaced; otherwise unchanged. */
ngpt_status ngpt_tok_within(ngpt_tokenizer **tok, int32_t V, const char *src);

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

/* ngpt_tokenizer_encode (encode.c), and without splitting special tokens
 * out of text when specials is false: text that spells one is text (what
 * chat turns encode content with, so no text a user types is a marker). */
ngpt_status ngpt_tok_encode(const ngpt_tokenizer *t, const void *text, size_t len, bool specials,
                            int32_t *ids, size_t cap, size_t *n_ids);

/* ---- pre-tokenization (pretok.c) */

/* The end of the piece that starts at t[i] (i < n). NGPT_PRETOK_DIGITS is
 * Hugging Face's Sequence[Digits(individual_digits), ByteLevel]: each \p{N}
 * character alone, GPT-2's pattern inside the stretches between them. */
size_t ngpt_pretok_next(ngpt_pretokenizer p, const uint8_t *t, size_t n, size_t i);

/* ---- normalization (normalize.c) */

/* NFC of p[0..n) (utf8proc; each run of valid UTF-8 on its own, the other
 * bytes kept): p itself when nothing can change (no code point from U+0300
 * on), else *buf (grown, *cap bytes; the caller frees it) with *len bytes.
 * NULL when out of memory. */
const uint8_t *ngpt_tok_nfc(const uint8_t *p, size_t n, size_t *len, uint8_t **buf, size_t *cap);

/* p[0..n) with every U+2581 (▁) a space (NGPT_TOK_SPACE_MARK: Gemma's
 * tokens hold spaces where its file writes ▁, and its Replace normalizer
 * makes a space ▁): p itself when it holds none, else *buf (grown, *cap
 * bytes; the caller frees it) with *len bytes. NULL when out of memory. */
const uint8_t *ngpt_tok_space_mark(const uint8_t *p, size_t n, size_t *len, uint8_t **buf,
                                   size_t *cap);

/* t[0..n) without its leading (trim_start: the offset of what is left) or
 * trailing (trim_end: the length of what is left) white space, as
 * JavaScript's trimStart() and trimEnd() cut it (the class table's \s). */
size_t ngpt_tok_trim_start(const uint8_t *t, size_t n);
size_t ngpt_tok_trim_end(const uint8_t *t, size_t n);

#endif
