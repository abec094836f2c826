/* table.c — the reference kernel table (the specification). */
#include "../kernels.h"

const ngpt_kernels ngpt_kernels_ref = NGPT_KERNELS_REF_INIT("scalar");
