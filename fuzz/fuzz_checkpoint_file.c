/* fuzz_checkpoint_file.c — arbitrary bytes as a model file: written to a
 * temporary file, then ngpt_model_open (the mmap path), what the model
 * answers and the contexts made from it (fuzz_checkpoint.h lists the
 * properties checked). */
#include "fuzz_checkpoint.h"

static char ckpt_path[512];

static void remove_ckpt(void) { unlink(ckpt_path); }

NGPT_FUZZ_ENTRY(checkpoint_file)
{
    if (!ckpt_path[0]) {
        snprintf(ckpt_path, sizeof ckpt_path, "%s/ngpt-fuzz-ckpt-%d.ngpt", fuzz_tmpdir(), (int)getpid());
        atexit(remove_ckpt);
    }
    fuzz_ckpt_run(data, size, ckpt_path);
    return 0;
}
