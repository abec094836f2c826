/* grammar_walk.h — what the two grammar targets (fuzz_grammar.c,
 * fuzz_schema.c) check of a grammar that compiled: a walk through its
 * texts by allowed tokens (bytes), where every allowed token advances, no
 * step is a dead end, and the token masks agree with reading each token's
 * bytes. The text walked (NUL-terminated, at most cap - 1 bytes) is
 * returned in out; the return value says whether the grammar may end it. */
#ifndef NGPT_FUZZ_GRAMMAR_WALK_H
#define NGPT_FUZZ_GRAMMAR_WALK_H

#include "fuzz.h"
#include "grammar/grammar.h"

static inline bool fuzz_grammar_walk(const ngpt_grammar *g, uint64_t seed, char *out, size_t cap)
{
    const ngpt_gm_limits lim = {32, 16};
    const size_t words = ngpt_gm_words(lim);
    ngpt_gwork w = {.lim = lim, .gcap = ngpt_gwork_gbuf_words(lim)};
    uint32_t *st = malloc(words * 4), *next = malloc(words * 4);
    uint64_t mask[4], tmp[4];
    w.gbuf = malloc(w.gcap * 4);
    for (int i = 0; i < 3; i++) w.s[i] = malloc(words * 4);
    w.tmp = tmp;
    if (!st || !next || !w.gbuf || !w.s[0] || !w.s[1] || !w.s[2]) abort();
    ngpt_gm_start(&g->a, st);
    size_t n = 0;
    bool end = ngpt_gm_can_end(st);
    for (int step = 0; n + 1 < cap && step < 64; step++) {
        ngpt_grammar_mask(g, st, mask, &w);
        int32_t allowed = 0, pick = -1;
        for (int32_t t = 0; t < 256; t++) {
            int rc = ngpt_grammar_advance(g, st, t, next, &w);
            if ((rc != NGPT_GM_DEAD) != ngpt_mask_bit(mask, t))
                fuzz_fail("the mask of byte %d is %d, reading it says %d", (int)t,
                          ngpt_mask_bit(mask, t), rc != NGPT_GM_DEAD);
            if (rc == NGPT_GM_OK) {
                allowed++;
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                if ((seed >> 33) % (uint64_t)allowed == 0) pick = t;
            }
        }
        end = ngpt_gm_can_end(st);
        if (!allowed && !end && !ngpt_gm_complete(st)) fuzz_fail("a dead end after %zu bytes", n);
        if (pick < 0 || (end && (seed >> 40) % 4 == 0)) break;
        ngpt_grammar_advance(g, st, pick, next, &w);
        uint32_t *t = st;
        st = next, next = t;
        out[n++] = (char)pick;
        end = ngpt_gm_can_end(st);
    }
    out[n] = '\0';
    free(st), free(next), free(w.gbuf);
    for (int i = 0; i < 3; i++) free(w.s[i]);
    return end;
}

#endif
