/* progress.c — the progress callback, one per thread: an app that runs
 * several contexts on several threads gets each thread's reports on its own
 * callback, and a worker of the pool never reports. */
#include "base/fpmode.h"
#include "base/progress.h"

static _Thread_local ngpt_progress_fn progress_fn;
static _Thread_local void *progress_user;

void ngpt_progress_callback_set(ngpt_progress_fn fn, void *user)
{
    NGPT_FPMODE_SCOPE;
    progress_fn = fn;
    progress_user = user;
}

bool ngpt_progress_wanted(void)
{
    return progress_fn != NULL;
}

bool ngpt_progress_report(ngpt_progress_stage what, uint64_t done, uint64_t total)
{
    return !progress_fn || progress_fn(what, done, total, progress_user);
}
