/* match.c — the matcher's states (automaton.h): sets of stacks of automaton
 * states, advanced byte by byte. A byte is read from a stack's top
 * directly or through the calls the top starts (each pushing its return
 * state); the result is made canonical (a top that can finish its rule
 * also pops). Pops never follow pushes between two bytes: a rule that
 * matched nothing is the empty move its call already has. */
#include <string.h>

#include "grammar/automaton.h"

size_t ngpt_gm_words(ngpt_gm_limits lim)
{
    return ngpt_gram_state_words(lim.depth, lim.stacks);
}

static void clear(uint32_t *st)
{
    st[0] = st[1] = 0;
}

/* Adds stack s[0..d) to st unless it is there: NGPT_GM_OVERFLOW when st
 * holds `stacks` others. */
static int add(uint32_t *st, ngpt_gm_limits lim, const uint32_t *s, int32_t d)
{
    const uint32_t *p = st + 2;
    for (uint32_t i = 0; i < st[0]; i++, p = ngpt_gm_after(p))
        if (p[0] == (uint32_t)d && !memcmp(p + 1, s, (size_t)d * sizeof *s)) return NGPT_GM_OK;
    if (st[0] == (uint32_t)lim.stacks) return NGPT_GM_OVERFLOW;
    uint32_t *w = st + 2 + st[1];
    w[0] = (uint32_t)d;
    memcpy(w + 1, s, (size_t)d * sizeof *s);
    st[0]++;
    st[1] += 1 + (uint32_t)d;
    return NGPT_GM_OK;
}

/* Adds stack s[0..d) (d >= 1) canonically: itself while its top goes on,
 * and popped while its top can finish. */
static int emit(const ngpt_automaton *a, ngpt_gm_limits lim, uint32_t *dst, const uint32_t *s,
                int32_t d, bool *exits)
{
    int rc = NGPT_GM_OK;
    for (;;) {
        const uint32_t top = s[d - 1];
        if (a->has_out[top]) rc |= add(dst, lim, s, d);
        if (!a->accept[top]) return rc;
        if (d == 1) {
            if (exits) *exits = true;
            else rc |= add(dst, lim, s, 0);
            return rc;
        }
        d--;
    }
}

/* Reads a byte of class c at the top of buf[0..d) (buf has room for
 * lim.depth states): directly, and through each call that can start with
 * it. buf is restored before return. */
static int consume(const ngpt_automaton *a, ngpt_gm_limits lim, uint32_t *dst, uint32_t *buf,
                   int32_t d, int32_t c, bool *exits)
{
    const uint32_t q = buf[d - 1];
    int rc = NGPT_GM_OK;
    const int32_t t = a->next[(size_t)q * a->n_classes + c];
    if (t >= 0) {
        buf[d - 1] = (uint32_t)t;
        rc |= emit(a, lim, dst, buf, d, exits);
        buf[d - 1] = q;
    }
    if (!ngpt_gm_bit(a->call_first, a->fw, (int32_t)q, c)) return rc;
    for (uint32_t i = a->call_off[q]; i < a->call_off[q + 1]; i++) {
        const int32_t st = a->rule_start[a->call_rule[i]];
        if (!ngpt_gm_bit(a->first, a->fw, st, c)) continue;
        if (d + 1 > lim.depth) {
            rc |= NGPT_GM_OVERFLOW;
            continue;
        }
        buf[d - 1] = (uint32_t)a->call_to[i];
        buf[d] = (uint32_t)st;
        rc |= consume(a, lim, dst, buf, d + 1, c, exits);
        buf[d - 1] = q;
    }
    return rc;
}

void ngpt_gm_start(const ngpt_automaton *a, uint32_t *st)
{
    const ngpt_gm_limits lim = {1, 2};
    uint32_t s = (uint32_t)a->rule_start[a->root];
    clear(st);
    emit(a, lim, st, &s, 1, NULL);
}

int ngpt_gm_from_stack(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *s, int32_t d,
                       uint32_t *dst, bool *exits)
{
    clear(dst);
    if (d == 0) return add(dst, lim, s, 0);
    return emit(a, lim, dst, s, d, exits);
}

int ngpt_gm_step(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *src, uint8_t byte,
                 uint32_t *dst, bool *exits)
{
    uint32_t buf[ngpt_gm_copy_words(lim)];     /* consume's copy of a stack */
    const int32_t c = a->cls[byte];
    int rc = NGPT_GM_OK;
    clear(dst);
    const uint32_t *p = ngpt_gm_first(src);
    for (uint32_t i = 0; i < src[0]; i++, p = ngpt_gm_after(p)) {
        const int32_t d = (int32_t)p[0];
        if (d == 0 || !ngpt_gm_bit(a->first, a->fw, (int32_t)p[d], c)) continue;
        memcpy(buf, p + 1, (size_t)d * sizeof *buf);
        rc |= consume(a, lim, dst, buf, d, c, exits);
    }
    if (rc & NGPT_GM_OVERFLOW) return NGPT_GM_OVERFLOW;
    return dst[0] ? NGPT_GM_OK : NGPT_GM_DEAD;
}

int ngpt_gm_step_stack(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *s, int32_t d,
                       uint8_t byte, uint32_t *dst, bool *exits)
{
    uint32_t buf[ngpt_gm_copy_words(lim)];
    clear(dst);
    if (d == 0) return NGPT_GM_DEAD;
    memcpy(buf, s, (size_t)d * sizeof *buf);
    int rc = consume(a, lim, dst, buf, d, a->cls[byte], exits);
    if (rc & NGPT_GM_OVERFLOW) return NGPT_GM_OVERFLOW;
    return dst[0] ? NGPT_GM_OK : NGPT_GM_DEAD;
}

int ngpt_gm_advance(const ngpt_automaton *a, ngpt_gm_limits lim, const uint32_t *src,
                    const uint8_t *bytes, size_t n, uint32_t *dst, uint32_t *tmp, bool *exits)
{
    if (n == 0) {
        ngpt_gm_copy(dst, src);
        return src[0] ? NGPT_GM_OK : NGPT_GM_DEAD;
    }
    uint32_t *out[2] = {n % 2 ? dst : tmp, n % 2 ? tmp : dst};
    const uint32_t *cur = src;
    for (size_t i = 0; i < n; i++) {
        uint32_t *o = out[i % 2];
        int rc = ngpt_gm_step(a, lim, cur, bytes[i], o, exits);
        if (rc != NGPT_GM_OK) return rc;
        cur = o;
    }
    return NGPT_GM_OK;
}

bool ngpt_gm_can_end(const uint32_t *st)
{
    const uint32_t *p = ngpt_gm_first(st);
    for (uint32_t i = 0; i < st[0]; i++, p = ngpt_gm_after(p))
        if (p[0] == 0) return true;
    return false;
}

bool ngpt_gm_complete(const uint32_t *st)
{
    return st[0] == 1 && st[2] == 0;
}
