"""ngpt.finetune: a few optimizer steps on a text, from a checkpoint."""
import math
from ctypes import byref, c_char_p, c_float, c_void_p

from ._lib import NGPT_MODE_TRAIN, check, fspath, lib


def finetune(model_path, out_path, text=None, path=None, steps=10, batch=4, seq=64, lr=3e-4,
             seed=0, holdout=0.1, threads=1, progress=None):
    """Fine-tunes the checkpoint at model_path on text (str or bytes) or the file at
    path for `steps` AdamW steps of `batch` windows of `seq` tokens (learning rate lr,
    constant after no warmup), then writes the model to out_path. progress(step, loss)
    is called after each step (1-based); returning False stops early (the model so
    far is still written). Returns the list of the steps' losses. Deterministic: the
    same arguments give the same file on every machine."""
    if (text is None) == (path is None):
        raise TypeError("ngpt.finetune: give text or path, not both or neither")
    shape = lib.ngpt_shape_default(NGPT_MODE_TRAIN)
    shape.batch, shape.seq, shape.threads = batch, seq, threads
    m, ctx, tok, data = c_void_p(), c_void_p(), c_void_p(), c_void_p()
    opt = lib.ngpt_optim_config_default()
    opt.lr, opt.min_lr, opt.warmup, opt.total_steps = lr, lr, 0, max(steps, 1)
    check(lib.ngpt_optim_config_validate(byref(opt)))
    try:
        check(lib.ngpt_model_open(byref(m), fspath(model_path)))   # one read of the file
        check(lib.ngpt_model_tokenizer(m, byref(tok)))             # borrowed from the model
        check(lib.ngpt_context_init(byref(ctx), m, None, byref(shape), None, 0))
        check(lib.ngpt_context_optim_reset(ctx))        # a fine-tune: a fresh optimizer
        if text is not None:
            buf = text.encode("utf-8") if isinstance(text, str) else bytes(text)
            check(lib.ngpt_data_open_mem(byref(data), buf, len(buf), holdout, seq))
        else:
            check(lib.ngpt_data_open(byref(data), (c_char_p * 1)(fspath(path)), 1, holdout, seq))
        if tok.value:
            check(lib.ngpt_data_tokenize(data, tok, seq))
        losses = []
        for step in range(steps):
            loss = c_float()
            check(lib.ngpt_context_train_step(ctx, byref(opt), data, seed, batch, seq, byref(loss),
                                      None, None))
            losses.append(loss.value)
            if progress is not None and progress(step + 1, loss.value) is False:
                break
        if not all(math.isfinite(x) for x in losses):
            raise ValueError("ngpt.finetune: a loss was not finite")
        check(lib.ngpt_context_save(ctx, fspath(out_path)))
        return losses
    finally:
        lib.ngpt_data_free(data)
        lib.ngpt_context_free(ctx)
        lib.ngpt_model_close(m)         # after its context
