/* packed.h — the Linear weights in gemm_packed's layout (gemm.h), kept in
 * infer mode for the cached passes of generation (model/packed.c says when
 * they are repacked; runtime/layout.h where each Linear's copy sits). */
#ifndef NGPT_MODEL_PACKED_H
#define NGPT_MODEL_PACKED_H

#include "runtime/context.h"

/* The packed W of Linear `which` of `layer` (plan.packed_w). */
const float *ngpt_packed_w(const ngpt_context *ctx, int layer, ngpt_linear which);

/* Repacks every Linear from the parameters unless they have not been
 * written since the last packing (run.params_epoch == run.packed_epoch). */
void ngpt_packed_refresh(ngpt_context *ctx);

#endif
