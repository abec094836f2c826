"""Progress callbacks: a Python callable as ngpt_progress_callback_set's callback."""
import contextlib

from ._lib import PROGRESS_FN, lib

#: The stages a progress callback sees (ngpt_progress_stage).
STAGES = ("prefill", "evaluate", "write", "quantize")


@contextlib.contextmanager
def progress_callback(fn):
    """While the block runs, long calls on this thread report to fn(stage, done, total)
    (stage: "prefill", "evaluate", "write" or "quantize"); fn returning False cancels the call,
    which then raises Error (status "stopped"). fn None: nothing is set."""
    if fn is None:
        yield
        return

    def trampoline(stage, done, total, _user):
        try:
            return fn(STAGES[stage] if stage < len(STAGES) else stage, done, total) is not False
        except BaseException:       # an exception cannot cross C: cancel instead
            return False

    cfn = PROGRESS_FN(trampoline)
    lib.ngpt_progress_callback_set(cfn, None)
    try:
        yield
    finally:
        lib.ngpt_progress_callback_set(PROGRESS_FN(), None)
