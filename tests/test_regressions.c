/* test_regressions.c — one test per bug found by fuzzing or by the bad-input
 * audit (issue #6), stated directly through the public API. The crashing
 * inputs themselves are replayed by test_fuzz_replay (fuzz/regressions/). */
#include <stdlib.h>

#include "test.h"

/* fuzz_checkpoint_mem: a stored config with L = 687865857 passed validation
 * (its parameters fit in 64-bit sizes), then 1 + 10*L + 2 overflowed the int
 * tensor count. Now both this and 3*C (the widest kernel dimension) are
 * checked by validation. */
static void huge_layer_count(void)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 2, c.d_model = 2, c.n_heads = 1, c.d_ff = 1, c.context_len = 1;
    c.n_layers = 687865857;
    CHECK_STATUS(ngpt_config_validate(&c), NGPT_ERR_OVERFLOW);
    CHECK(strstr(ngpt_last_error(), "L (n_layers") != NULL, "names L: %s", ngpt_last_error());
    c.n_layers = (INT32_MAX - 3) / 10 + 1;
    CHECK_STATUS(ngpt_config_validate(&c), NGPT_ERR_OVERFLOW);
    size_t n;
    CHECK_STATUS(ngpt_arena_size(&c, &(ngpt_shape){.batch = 1, .threads = 1}, &n), NGPT_ERR_OVERFLOW);
    c.n_layers = 1;
    c.d_model = INT32_MAX / 3 + 1 + 1, c.n_heads = 1;     /* even, so D is even */
    CHECK_STATUS(ngpt_config_validate(&c), NGPT_ERR_OVERFLOW);
    CHECK(strstr(ngpt_last_error(), "3*C") != NULL, "names 3*C: %s", ngpt_last_error());
}

int main(void)
{
    huge_layer_count();
    return test_summary("test_regressions");
}
