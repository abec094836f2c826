/* bpe.h — byte-pair merging of one run of bytes (bpe.c), shared by the
 * encoder (encode.c) and the tokenizer's build (build.c, which finds the
 * tokens that encode to themselves). */
#ifndef NGPT_TOKENIZER_BPE_H
#define NGPT_TOKENIZER_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "tokenizer/tokenizer.h"

/* A run of at most NGPT_BPE_SCAN bytes is merged by scanning arrays (the
 * fastest for short words), a longer one with a heap in the scratch, whose
 * stack block holds NGPT_BPE_STACK_SYMBOLS symbols. */
enum { NGPT_BPE_SCAN = 32, NGPT_BPE_STACK_SYMBOLS = 128 };

/* Where the (internal) ids go: ids[0..cap) (NULL: count only); n counts
 * every id. */
typedef struct ngpt_bpe_writer {
    int32_t *ids;
    size_t cap, n;
    /* a byte fallback tokenizer (NGPT_TOK_BYTE_FALLBACK), or NULL: a merge
     * of it without a model id (part of a character) is written as the
     * tokens of its bytes */
    const ngpt_tokenizer *fallback;
} ngpt_bpe_writer;

static inline void ngpt_bpe_emit_one(ngpt_bpe_writer *w, int32_t id)
{
    if (w->ids && w->n < w->cap) w->ids[w->n] = id;
    w->n++;
}

static inline void ngpt_bpe_emit(ngpt_bpe_writer *w, int32_t id)
{
    const ngpt_tokenizer *t = w->fallback;
    if (t && t->model_id[id] < 0) {
        for (uint32_t i = t->off[id]; i < t->off[id + 1]; i++) ngpt_bpe_emit_one(w, t->byte_id[t->bytes[i]]);
        return;
    }
    ngpt_bpe_emit_one(w, id);
}

/* Working memory for long runs: a stack block, or a heap block once a run
 * needs more (kept for the next runs; ngpt_bpe_scratch_free frees it). */
typedef struct ngpt_bpe_scratch {
    void *buf;                  /* stack, or a heap block */
    size_t syms;                /* symbols buf has room for */
    uint64_t stack[NGPT_BPE_STACK_SYMBOLS * 5];     /* 40 bytes a symbol */
} ngpt_bpe_scratch;

void ngpt_bpe_scratch_init(ngpt_bpe_scratch *s);
void ngpt_bpe_scratch_free(ngpt_bpe_scratch *s);

/* Merges the m >= 1 bytes p (a run that no token spans out of) and writes
 * the ids to w. Fails (a bare message) only when a run is too long for the
 * memory: NGPT_ERR_TOO_LONG, NGPT_ERR_OVERFLOW, NGPT_ERR_NO_MEMORY. */
ngpt_status ngpt_bpe_part(const ngpt_tokenizer *t, const uint8_t *p, size_t m, ngpt_bpe_writer *w,
                          ngpt_bpe_scratch *s);

#endif
