/* rng.h — Philox4x32-10 (Salmon et al., SC'11), the only random source.
 *
 * Every random number is a pure function of (seed, stream, step, index):
 *   key = {seed lo32, seed hi32}
 *   ctr = {index/4 lo32, index/4 hi32, stream, step lo32}
 * and word index%4 of the block. Streams keep init, dropout, data sampling
 * and token sampling apart, so a seed means the same thing everywhere.
 */
#ifndef NGPT_BASE_RNG_H
#define NGPT_BASE_RNG_H

#include <stdint.h>

enum {
    NGPT_STREAM_INIT = 0x10000000u,     /* | tensor index */
    NGPT_STREAM_DROPOUT = 0x20000000u,  /* | layer << 4 | site kind */
    NGPT_STREAM_DATA = 0x30000000u,     /* | purpose */
    NGPT_STREAM_SAMPLE = 0x40000000u,   /* | purpose */
    NGPT_STREAM_LORA = 0x50000000u      /* | layer << 4 | module kind: a new adapter's A */
};

/* Dropout sites within a layer; the embedding uses layer index L. */
enum {
    NGPT_SITE_EMBED = 0,
    NGPT_SITE_ATTN_PROBS = 1,
    NGPT_SITE_ATTN_OUT = 2,
    NGPT_SITE_MLP_OUT = 3,
    NGPT_SITE_LORA = 4          /* + the module's kind (runtime/lora.h): its input's dropout */
};

/* Philox4x32's round multipliers and key increments (the paper's
 * constants), for philox.c and the vector dropout kernels. */
#define NGPT_PHILOX_M0 0xD2511F53u
#define NGPT_PHILOX_M1 0xCD9E8D57u
#define NGPT_PHILOX_W0 0x9E3779B9u
#define NGPT_PHILOX_W1 0xBB67AE85u

void ngpt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* The 4 words of block `group` of a stream. */
void ngpt_rng_block(uint64_t seed, uint32_t stream, uint64_t step, uint64_t group,
                    uint32_t out[4]);

/* Word `index` of a stream (one Philox block per call: use blocks in loops). */
uint32_t ngpt_rng_u32(uint64_t seed, uint32_t stream, uint64_t step, uint64_t index);

/* Uniform in [0, 1) with 24 random bits: (w >> 8) * 2^-24. */
static inline float ngpt_rng_uniform(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }

/* Four N(0,1) values from one block: Box–Muller on word pairs (0,1), (2,3),
 * u1 = ((w0>>8)+1)*2^-24 in (0,1], u2 = (w1>>8)*2^-24,
 * r = sqrtf(-2*logf(u1)), (z0, z1) = (r*cosf(2pi*u2), r*sinf(2pi*u2)),
 * with SLEEF's deterministic logf/sincosf. */
void ngpt_rng_normal4(const uint32_t w[4], float z[4]);

static inline uint32_t ngpt_rng_site_dropout(int layer, int kind)
{
    return NGPT_STREAM_DROPOUT | ((uint32_t)layer << 4) | (uint32_t)kind;
}

/* Dropout stream position: masks are a pure function of these. */
typedef struct ngpt_dropout_key {
    uint64_t seed;
    uint64_t step;
    uint32_t site;              /* ngpt_rng_site_dropout(layer, kind) */
    float p;                    /* drop probability in (0, 1) */
} ngpt_dropout_key;

/* Dropout keep decision of element e: (w >> 8) >= floor(p * 2^24). */
int ngpt_dropout_keep(const ngpt_dropout_key *key, uint64_t e);
uint32_t ngpt_dropout_threshold(float p);

#endif
