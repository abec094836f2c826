/* fuzz_checkpoint_mem.c — arbitrary bytes as a model file in memory:
 * ngpt_model_open_mem, then what the model answers and the contexts made
 * from it (fuzz_checkpoint.h lists the properties checked). Seeds: model
 * files saved by ngpt. */
#include "fuzz_checkpoint.h"

NGPT_FUZZ_ENTRY(checkpoint_mem)
{
    fuzz_ckpt_run(data, size, NULL);
    return 0;
}
