/* positions.h — the position tables a context computes once at init
 * (runtime/positions.c): RoPE's cos/sin, and pos=sinusoidal's table. Angles
 * as the original computes them: the inverse frequency in double, the angle
 * rounded to float, then sin/cos in float (SLEEF's finz_ scalars). */
#ifndef NGPT_RUNTIME_POSITIONS_H
#define NGPT_RUNTIME_POSITIONS_H

#include "ngpt.h"

/* RoPE tables for positions 0..T-1: (T, D/2) each. */
void ngpt_rope_tables(const ngpt_config *cfg, float *cos_t, float *sin_t);
/* The local layers' (sliding_window): base rope_local_theta, no rope_scaling. */
void ngpt_rope_local_tables(const ngpt_config *cfg, float *cos_t, float *sin_t);

/* pos=sinusoidal's table (T, C): pe[p][2i] = sin(p w_i), pe[p][2i+1] =
 * cos(p w_i), w_i = rope_theta^(-2i/C). */
void ngpt_sinusoid_table(const ngpt_config *cfg, float *pe);

#endif
