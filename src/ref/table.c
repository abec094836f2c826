/* table.c — the reference kernel table (the specification), from the list. */
#include "../kernels.h"

const ngpt_kernels ngpt_kernels_ref = {
    .name = "scalar",
#define NGPT_KERNEL NGPT_REF_ENTRY
#include "../kernels.inc"
};
