/* optim_config.c — the optimizer's settings (ngpt_optim_config): defaults,
 * their check, and the learning-rate schedule they define (docs/DESIGN.md
 * §1), computed in double with SLEEF's deterministic cos and rounded to
 * float once. Below the training layer, so that a training checkpoint's
 * reader (io/) checks the settings it restores. */
#include <math.h>
#include <sleef.h>

#include "base/fpmode.h"
#include "runtime/optim_config.h"

ngpt_optim_config ngpt_optim_config_default(void)
{
    NGPT_FPMODE_SCOPE;
    ngpt_optim_config o = {.lr = 3e-4f, .min_lr = 3e-5f, .warmup = 200, .total_steps = 5000,
                           .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                           .decay_all = true, .clip = 1.0f, .accum = 1};
    return o;
}

static bool finite_in(float x, float lo, float hi) { return isfinite(x) && x >= lo && x <= hi; }

ngpt_status ngpt_optim_config_validate(const ngpt_optim_config *o)
{
    NGPT_FPMODE_SCOPE;
    if (!o) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_optim_config_validate: NULL config");
    return ngpt_prefixed("ngpt_optim_config_validate", ngpt_optim_check(o));
}

ngpt_status ngpt_optim_check(const ngpt_optim_config *o)
{
    ngpt_status st = NGPT_RESERVED_CHECK("optim_config", o);
    if (st) return st;
    if (!finite_in(o->lr, 0.0f, 1e3f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "lr must be finite and >= 0, got %g", (double)o->lr);
    if (!finite_in(o->min_lr, 0.0f, o->lr))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "min_lr must be in [0, lr=%g], got %g",
                         (double)o->lr, (double)o->min_lr);
    if (o->warmup < 0) return ngpt_fail(NGPT_ERR_BAD_ARG, "warmup must be >= 0");
    if (o->total_steps < 1) return ngpt_fail(NGPT_ERR_BAD_ARG, "total_steps must be >= 1");
    if (!finite_in(o->beta1, 0.0f, 0.999999f) || o->beta1 >= 1.0f)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "beta1 must be in [0, 1), got %g", (double)o->beta1);
    if (!finite_in(o->beta2, 0.0f, 0.999999f) || o->beta2 >= 1.0f)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "beta2 must be in [0, 1), got %g", (double)o->beta2);
    if (!(o->eps > 0.0f) || !isfinite(o->eps))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "eps must be > 0, got %g", (double)o->eps);
    if (!finite_in(o->weight_decay, 0.0f, 1e3f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "weight_decay must be finite and >= 0, got %g",
                         (double)o->weight_decay);
    if (!isfinite(o->clip)) return ngpt_fail(NGPT_ERR_BAD_ARG, "clip must be finite");
    if (o->accum < 1 || o->accum > 1 << 20)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "accum must be in 1..%d, got %d", 1 << 20,
                         (int)o->accum);
    return NGPT_OK;
}

ngpt_status ngpt_optim_config_lr(const ngpt_optim_config *o, int64_t step, float *lr)
{
    NGPT_FPMODE_SCOPE;
    if (!o || !lr) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_optim_config_lr: NULL argument");
    ngpt_status st = ngpt_optim_check(o);
    if (st) return ngpt_prefixed("ngpt_optim_config_lr", st);
    if (step < 0) return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_optim_config_lr: step must be >= 0");
    *lr = ngpt_optim_config_lr_unchecked(o, step);
    return NGPT_OK;
}

float ngpt_optim_config_lr_unchecked(const ngpt_optim_config *o, int64_t step)
{
    const double base = o->lr, lo = o->min_lr;
    double r;
    if (step < o->warmup) {
        r = base * (double)step / (double)o->warmup;
    } else {
        double span = (double)(o->total_steps - o->warmup);
        double p = span > 0.0 ? (double)(step - o->warmup) / span : 1.0;
        if (p > 1.0) p = 1.0;
        r = lo + (base - lo) * 0.5 * (1.0 + Sleef_finz_cosd1_u10purecfma(3.14159265358979323846 * p));
        if (r < lo) r = lo;
        if (r > base) r = base;
    }
    return (float)r;
}
