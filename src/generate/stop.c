/* stop.c — stop sequences and the delivery of generated tokens (stop.h). */
#include <string.h>

#include "generate/stop.h"

/* The j-th newest generated token: j = 0 is tok, j >= 1 is prior_end[-j]. */
static int32_t gen_at(const int32_t *prior_end, int32_t tok, int32_t j)
{
    return j == 0 ? tok : prior_end[-j];
}

int32_t ngpt_stop_match(const ngpt_generate_config *gc, const int32_t *prior_end, int32_t avail,
                        int32_t tok, int32_t *hold)
{
    int32_t done = 0, partial = 0;
    for (int32_t s = 0; s < gc->n_stop; s++) {
        const unsigned char *str = (const unsigned char *)gc->stop[s];
        const int32_t m = (int32_t)strlen(gc->stop[s]);
        /* the tail of length k equals str[0..k) for k <= m */
        for (int32_t k = m; k >= 1; k--) {
            if (k > avail + 1 || (k == m ? k <= done : k <= partial)) continue;
            bool eq = true;
            for (int32_t j = 0; j < k && eq; j++)
                eq = gen_at(prior_end, tok, j) == (int32_t)str[k - 1 - j];
            if (!eq) continue;
            if (k == m) done = m;
            else partial = k;
            break;
        }
    }
    if (hold) *hold = partial;
    return done;
}

bool ngpt_output_put(ngpt_output *sm, int32_t tok)
{
    if (sm->stopped) return false;
    if (sm->out) sm->out[sm->n_out] = tok;
    sm->n_out++;
    if (sm->fn && sm->fn(tok, sm->user)) sm->stopped = true;
    return !sm->stopped;
}

void ngpt_output_release(ngpt_output *sm, const int32_t *prior_end, int32_t tok, int32_t keep)
{
    for (int32_t j = sm->pending - 1; j >= keep && !sm->stopped; j--) {
        ngpt_output_put(sm, gen_at(prior_end, tok, j));
        sm->pending = j;
    }
    if (!sm->stopped && sm->pending > keep) sm->pending = keep;
}
