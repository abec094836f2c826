/* scored.h — the scored tokenizer kind (llama2.c's tokenizer.bin, a
 * SentencePiece-style vocabulary; docs/TOKENIZER.md, "Scored
 * tokenizers"): pieces with scores, byte fallback <0xNN> at ids 3..258,
 * merges by score instead of by rank. A tokenizer of this kind has
 * t->scored set; the shared tables (off/bytes) hold each token's decoded
 * bytes (<0xNN> -> the byte), and the pieces as written live here. */
#ifndef NGPT_TOKENIZER_SCORED_H
#define NGPT_TOKENIZER_SCORED_H

#include "base/error.h"
#include "tokenizer/tables.h"   /* not tokenizer.h: tokenizer.c calls this kind */

#define NGPT_TOK_VERSION_SCORED 16     /* the file image's version for this kind: apart
                                       * from the BPE format's own versions (1, 2, ...) */
#define NGPT_TOK_SCORED_FIRST_BYTE 3   /* id of <0x00>: llama2.c's run.c hard-codes b + 3 */
#define NGPT_TOK_SCORED_BOS 1
#define NGPT_TOK_SCORED_EOS 2

struct ngpt_tok_scored {
    float *score;               /* (n_tokens) */
    uint32_t *off;              /* (n_tokens + 1): piece i is bytes[off[i] .. off[i+1]) */
    uint8_t *bytes;
    int32_t *slot;              /* piece -> id + 1 (0 empty), open addressing */
    uint32_t bits;
    int32_t space_id;           /* the piece " " (the dummy prefix) */
};

/* A scored tokenizer from n pieces (piece[i], len[i] bytes, score[i]),
 * checked: no duplicate or empty piece, finite scores, <0xNN> at id
 * NN + 3, a " " piece. Bare messages naming src. */
ngpt_status ngpt_tok_scored_build(ngpt_tokenizer **out, int32_t n, const float *score,
                                  const uint8_t *const *piece, const uint32_t *len,
                                  const char *src);

/* llama2.c's tokenizer.bin (u32 max_token_length; per token f32 score,
 * i32 len, bytes), n_tokens of them (the model's vocabulary), the whole
 * file read. Bare messages naming src. */
ngpt_status ngpt_tok_scored_read_llama2c(ngpt_tokenizer **out, const uint8_t *p, size_t size,
                                         int32_t n_tokens, const char *src);

/* The file image of this kind (version NGPT_TOK_VERSION_SCORED), checked
 * (ngpt_tok_image_check's contract) and parsed. */
ngpt_status ngpt_tok_scored_image_check(const uint8_t *p, size_t size, const char *src,
                                        int32_t *n_tokens, uint64_t *checksum);
ngpt_status ngpt_tok_scored_parse(ngpt_tokenizer **out, const uint8_t *p, size_t size,
                                  const char *src);

/* run.c's encode without BOS/EOS: " " first when len > 0, each UTF-8
 * code point its piece or its bytes' <0xNN>, then the adjacent pair whose
 * concatenation is the best-scored piece merged (leftmost on ties) until
 * none is. Ids to ids[0..cap); *n gets their number. */
ngpt_status ngpt_tok_scored_encode(const ngpt_tokenizer *t, const uint8_t *text, size_t len,
                                   int32_t *ids, size_t cap, size_t *n);

/* ngpt_tok_prefix for this kind: the byte tokens of the first k bytes. */
int32_t ngpt_tok_scored_prefix(const ngpt_tokenizer *t, int32_t id, size_t k, int32_t *out);

void ngpt_tok_scored_free(struct ngpt_tok_scored *s);

#endif
