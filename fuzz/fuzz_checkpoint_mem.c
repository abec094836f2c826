/* fuzz_checkpoint_mem.c — arbitrary bytes as a checkpoint in memory:
 * ngpt_checkpoint_config_mem + ngpt_checkpoint_load_mem (fuzz_checkpoint.h lists
 * the properties checked). Seeds: checkpoints saved by ngpt. */
#include "fuzz_checkpoint.h"

NGPT_FUZZ_ENTRY(checkpoint_mem)
{
    fuzz_ckpt_run(data, size, NULL);
    return 0;
}
