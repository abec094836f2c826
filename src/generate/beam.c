/* beam.c — beam search of width W over KV slots 0..W-1.
 *
 * Each step, every live beam b scores its continuations t with
 * score(b) + log softmax(z_b)[t] (z_b: logits after the sampler's ban, bias
 * and repetition penalty; temperature and filters do not apply). The 2W best
 * candidates, ordered by (score desc, logit desc, beam asc, token asc), are
 * taken in turn: one ending in end_token or a stop sequence becomes a
 * finished hypothesis (output cut before the stop sequence; the pool keeps
 * the W best by normalised score), the others become the next live beams
 * until there are W. Normalised score = score / len^length_penalty with len
 * the generated tokens including the last one. The search ends when W
 * hypotheses are finished, no beam is live, max_tokens is reached or the
 * context is full (beams do not slide); the answer is the best normalised
 * score among finished and live hypotheses (finished first on ties).
 * Width 1 picks the argmax each step: it equals greedy sampling. Under a
 * grammar each beam has its matcher state (two buffers: the step's
 * parents and children), a beam's tokens are those its state allows, and a
 * continuation that completes the grammar is a finished hypothesis. */
#include <math.h>
#include <sleef.h>
#include <string.h>

#include "generate/beam.h"
#include "generate/constrain.h"
#include "generate/sampler.h"
#include "generate/stop.h"
#include "model/model.h"
#include "model/kv.h"

/* One candidate of a step: continue beam `beam` with token `tok`. The plan
 * carves 2W of them (plan.beam.cand, NGPT_BEAM_CAND_BYTES each). */
typedef struct ngpt_beam_cand {
    float score;                /* beam score + log p(tok) */
    float z;                    /* the token's logit (tie-break: width 1 == greedy) */
    int32_t beam, tok;
} ngpt_beam_cand;
_Static_assert(sizeof(ngpt_beam_cand) == NGPT_BEAM_CAND_BYTES, "runtime/plan.h sizes a candidate");

static bool cand_before(const ngpt_beam_cand *a, const ngpt_beam_cand *b)
{
    if (a->score != b->score) return a->score > b->score;
    if (a->z != b->z) return a->z > b->z;
    if (a->beam != b->beam) return a->beam < b->beam;
    return a->tok < b->tok;
}

/* Inserts c into the sorted list (n entries, capacity cap). */
static void cand_insert(ngpt_beam_cand *list, int32_t *n, int32_t cap, const ngpt_beam_cand *c)
{
    if (*n == cap && !cand_before(c, &list[cap - 1])) return;
    int32_t i = *n < cap ? (*n)++ : cap - 1;
    while (i > 0 && cand_before(c, &list[i - 1])) {
        list[i] = list[i - 1];
        i--;
    }
    list[i] = *c;
}

static float normalise(float score, int32_t len, float penalty)
{
    return score / Sleef_finz_powf1_u10purecfma((float)len, penalty);
}

/* A finished hypothesis' end, in beam.work[3W + slot]: its stop reason and
 * a detail: for a stop sequence that begins inside its last kept token, the
 * bytes of that token before it (at most 256); for an end token, which
 * (below 2^20). */
#define END_WORD(reason, detail) ((int32_t)(reason) | (detail) << 8)
#define END_REASON(word) ((ngpt_stop_reason)((word) & 0xff))
#define END_DETAIL(word) ((word) >> 8)

/* Adds a finished hypothesis (the first n_keep generated tokens of beam b's
 * continuation by tok; a stop sequence's: the last of them cut to its first
 * `detail` bytes when detail > 0; an end token's: detail is the token) to the
 * pool if it is among the W best. */
static void finish(ngpt_context *ctx, int32_t W, int32_t *nf, const ngpt_beam_cand *c,
                   int32_t prompt_len, int32_t gen, int32_t n_keep, float penalty, int32_t reason,
                   int32_t detail)
{
    ngpt_plan *p = &ctx->plan;
    const size_t TC = (size_t)ctx->cfg.context_len;
    float s = normalise(c->score, gen, penalty);
    int32_t slot = *nf;
    if (*nf == W) {     /* replace the worst (the last of the worst on ties) if s beats it */
        slot = 0;
        for (int32_t i = 1; i < W; i++)
            if (p->beam.fin_score[i] <= p->beam.fin_score[slot]) slot = i;
        if (!(s > p->beam.fin_score[slot])) return;
    } else {
        (*nf)++;
    }
    int32_t *dst = p->beam.fin_tok + (size_t)slot * TC;
    const int32_t *src = ngpt_kv_tokens(ctx, c->beam) + prompt_len;
    for (int32_t i = 0; i < n_keep; i++) dst[i] = i < gen - 1 ? src[i] : c->tok;
    p->beam.fin_len[slot] = n_keep;
    p->beam.fin_score[slot] = s;
    p->beam.work[3 * W + slot] = END_WORD(reason, detail);
}

ngpt_status ngpt_beam_search(ngpt_context *ctx, const ngpt_generate_config *gc,
                             const int32_t *prompt, int32_t prompt_len, int32_t *out,
                             ngpt_token_fn fn, void *user, ngpt_generate_result *res)
{
    ngpt_plan *p = &ctx->plan;
    const int32_t W = gc->beam_width, V = ctx->cfg.vocab_size, T = ctx->cfg.context_len;
    const size_t TC = (size_t)T;
    const float *row;
    ngpt_status st;
    ngpt_model_prefill(ctx, 0, prompt, prompt_len, &row);
    if (gc->on_prefilled) gc->on_prefilled(user);

    int32_t nb = 1, nf = 0, gen = 0;
    p->beam.score[0] = 0.0f;
    ngpt_stop_reason reason = NGPT_STOP_MAX_TOKENS;
    ngpt_constraint con;
    ngpt_constraint_start(&con, ctx, gc);
    const int32_t B = ctx->shape.batch;
    int32_t cur = 0;    /* which half of the beams' states the live beams' are */
    if (con.g) {
        ngpt_gm_copy(ngpt_constraint_beam(&con, 0, 0, B), con.st);
        if (ngpt_gm_complete(con.st)) nb = 0, reason = NGPT_STOP_GRAMMAR_COMPLETE;
    }
    while (nb > 0) {
        /* the 2W best continuations of the live beams */
        ngpt_beam_cand *cand = p->beam.cand;
        int32_t nc = 0;
        for (int32_t b = 0; b < nb; b++) {
            const float *logits = gen == 0 ? row : p->logits + (size_t)b * V;
            float *z = p->beam.z, *pr = p->beam.p;
            const uint64_t *allowed = NULL;
            if (con.g) {
                if (!ngpt_constraint_mask(&con, ngpt_constraint_beam(&con, cur, b, B))) continue;
                allowed = con.mask;
            }
            if ((st = ngpt_sampler_adjust(ctx, &gc->sampler, logits, ngpt_kv_tokens(ctx, b),
                                          ngpt_kv_len(ctx, b), allowed, z)))
                return st;
            ctx->k->softmax(pr, z, V);
            for (int32_t t = 0; t < V; t++) {
                if (!(pr[t] > 0.0f)) continue;
                ngpt_beam_cand c = {p->beam.score[b] + Sleef_finz_logf1_u10purecfma(pr[t]), z[t],
                                    b, t};
                cand_insert(cand, &nc, 2 * W, &c);
            }
        }
        gen++;
        /* take them in order: finished hypotheses or the next live beams */
        int32_t nl = 0;
        for (int32_t i = 0; i < nc && nl < W; i++) {
            const ngpt_beam_cand c = cand[i];
            const int32_t *tail = ngpt_kv_tokens(ctx, c.beam) + ngpt_kv_len(ctx, c.beam);
            int32_t keep_bytes = 0;
            int32_t m = ngpt_stop_is_end(gc, ctx->tokenizer, c.tok)
                            ? -1
                            : ngpt_stop_match(gc, ctx->tokenizer, tail, gen - 1, c.tok, NULL,
                                              &keep_bytes);
            if (m < 0) {
                finish(ctx, W, &nf, &c, prompt_len, gen, gen - 1, gc->length_penalty,
                       NGPT_STOP_END_TOKEN, c.tok);
            } else if (m > 0) {     /* the token where it begins is kept when part of it is */
                finish(ctx, W, &nf, &c, prompt_len, gen, gen - m + (keep_bytes > 0),
                       gc->length_penalty, NGPT_STOP_SEQUENCE, keep_bytes);
            } else {
                if (con.g) {
                    uint32_t *child = ngpt_constraint_beam(&con, !cur, nl, B);
                    const uint32_t *parent = ngpt_constraint_beam(&con, cur, c.beam, B);
                    if (ngpt_grammar_advance(con.g, parent, c.tok, child, &con.w) != NGPT_GM_OK)
                        continue;   /* past the planned depth: this way is not taken */
                    if (ngpt_gm_complete(child)) {
                        finish(ctx, W, &nf, &c, prompt_len, gen, gen, gc->length_penalty,
                               NGPT_STOP_GRAMMAR_COMPLETE, 0);
                        continue;
                    }
                }
                p->beam.parent[nl] = c.beam;
                p->beam.tok[nl] = c.tok;
                p->beam.score[nl] = c.score;
                nl++;
            }
        }
        nb = nl;
        cur = !cur;
        if (nf == W || nb == 0) break;
        if (gen >= gc->max_tokens) break;
        if (ngpt_kv_len(ctx, 0) >= T) {
            reason = NGPT_STOP_CONTEXT_FULL;
            break;
        }
        ngpt_kv_reorder(ctx, p->beam.parent, nb, p->beam.work);
        ngpt_model_append(ctx, 0, nb, p->beam.tok, 1);
    }

    /* the answer: best normalised score, finished hypotheses first on ties */
    int32_t best_f = -1, best_l = -1;
    float best = -INFINITY;
    for (int32_t i = 0; i < nf; i++)
        if (best_f < 0 || p->beam.fin_score[i] > best) {
            best_f = i;
            best = p->beam.fin_score[i];
        }
    for (int32_t i = 0; i < nb; i++) {
        float s = normalise(p->beam.score[i], gen, gc->length_penalty);
        if ((best_f < 0 && best_l < 0) || s > best) {
            best_l = i;
            best_f = -1;
            best = s;
        }
    }
    const int32_t *toks;
    int32_t n, keep_bytes = 0, end_token = -1;
    if (best_f >= 0) {
        toks = p->beam.fin_tok + (size_t)best_f * TC;
        n = p->beam.fin_len[best_f];
        reason = END_REASON(p->beam.work[3 * W + best_f]);
        const int32_t detail = END_DETAIL(p->beam.work[3 * W + best_f]);
        if (reason == NGPT_STOP_END_TOKEN) end_token = detail;
        else keep_bytes = detail;
    } else if (best_l >= 0) {   /* a live beam: its parent's tokens then its new token */
        int32_t par = p->beam.parent[best_l];
        if (con.g && !ngpt_gm_can_end(ngpt_constraint_beam(&con, cur, best_l, B)) &&
            reason == NGPT_STOP_MAX_TOKENS)
            reason = NGPT_STOP_GRAMMAR_INCOMPLETE;
        int32_t *dst = p->beam.fin_tok;     /* the pool is no longer needed */
        memcpy(dst, ngpt_kv_tokens(ctx, par) + prompt_len, (size_t)(gen - 1) * sizeof(int32_t));
        dst[gen - 1] = p->beam.tok[best_l];
        toks = dst;
        n = gen;
    } else {    /* nothing: a grammar of the empty text alone, or every way past its depth */
        toks = p->beam.fin_tok;
        n = 0;
        if (reason == NGPT_STOP_MAX_TOKENS) reason = NGPT_STOP_GRAMMAR_DEPTH;
    }
    ngpt_output sm = {.out = out, .fn = fn, .user = user};
    for (int32_t i = 0; i < n - (keep_bytes > 0) && ngpt_output_put(&sm, toks[i]); i++) {}
    if (keep_bytes > 0) ngpt_output_prefix(&sm, ctx->tokenizer, toks[n - 1], keep_bytes);
    if (sm.stopped) reason = NGPT_STOP_CALLBACK, end_token = -1;
    res->end_token = end_token;
    res->n_generated = gen;
    res->n_tokens = sm.n_out;
    res->reason = reason;
    return NGPT_OK;
}
