/* kcase_list.c — the list of cases, one per kernel of src/kernels.inc, in
 * the list's order (kcase.h). Apart from the helpers in kcase.c, which the
 * cases call, so that no two files call each other. */
#include "kcase.h"

const kc_entry kc_all[] = {
#define NGPT_KERNEL(kernel, op, ...) {#kernel, #op, &kc_##kernel},
#include "kernels.inc"
};
const int kc_count = (int)(sizeof kc_all / sizeof kc_all[0]);
