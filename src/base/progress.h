/* progress.h — the calling thread's progress callback (base/progress.c,
 * ngpt.h "Progress"): long calls report their work through
 * ngpt_progress_report and stop, changing nothing, when it returns false. */
#ifndef NGPT_BASE_PROGRESS_H
#define NGPT_BASE_PROGRESS_H

#include "ngpt.h"

/* Tells the calling thread's callback (if any) that `done` of `total` units
 * of `what` are done; false when it asks to cancel. */
bool ngpt_progress_report(ngpt_progress_stage what, uint64_t done, uint64_t total);

/* Whether the calling thread has a callback (to skip the bookkeeping). */
bool ngpt_progress_wanted(void);

#endif
