/* active.c — the scalar build runs the reference kernels. An ISA build
 * compiles arch/<isa>/table.c instead of this file. */
#include "../kernels.h"

const ngpt_kernels ngpt_kernels_active = {
    .name = "scalar",
#define NGPT_KERNEL NGPT_REF_ENTRY
#include "../kernels.inc"
};
