"""ngpt.finetune: a few optimizer steps on a text, from a checkpoint: of the model, or
of a LoRA adapter of it (the model frozen)."""
import math
from ctypes import byref, c_char_p, c_float, c_void_p

from ._lib import NGPT_MODE_TRAIN, check, fspath, lib
from .lora import Adapter, lora_config


def finetune(model_path, out_path, text=None, path=None, steps=10, batch=4, seq=64, lr=None,
             seed=0, holdout=0.1, threads=1, progress=None, lora=None, adapter=None):
    """Fine-tunes the checkpoint at model_path on text (str or bytes) or the file at
    path for `steps` AdamW steps of `batch` windows of `seq` tokens (learning rate lr,
    constant after no warmup), then writes the model to out_path. progress(step, loss)
    is called after each step (1-based); returning False stops early (the model so
    far is still written). Returns the list of the steps' losses. Deterministic: the
    same arguments give the same file on every machine.

    With lora (a LoRA config: words such as "r=16 alpha=32 targets=q_proj,v_proj", a
    dict or a LoraConfig; see ngpt.lora_config) it trains a new LoRA adapter of the
    model instead, A drawn from seed and B zero; with adapter (an ngpt.Adapter or the
    path of an adapter file) it goes on training that one (a training file of `ngpt
    train` with its AdamW moments). The model, float32, 8-bit or 4-bit, stays frozen,
    and out_path receives the adapter alone (ngpt_context_save), which
    Model(..., adapters=[out_path]) applies. lr defaults to 3e-4 for a model, 1e-3 for
    an adapter, whose weight decay is 0 (docs/TRAINING.md, "LoRA adapters")."""
    if (text is None) == (path is None):
        raise TypeError("ngpt.finetune: give text or path, not both or neither")
    if lora is not None and adapter is not None:
        raise TypeError("ngpt.finetune: give lora (a new adapter) or adapter (go on training "
                        "one), not both")
    adapting = lora is not None or adapter is not None
    shape = lib.ngpt_shape_default(NGPT_MODE_TRAIN)
    shape.batch, shape.seq, shape.threads = batch, seq, threads
    m, ctx, tok, data, ad = c_void_p(), c_void_p(), c_void_p(), c_void_p(), None
    opt = lib.ngpt_optim_config_default()
    lr = lr if lr is not None else 1e-3 if adapting else 3e-4
    opt.lr, opt.min_lr, opt.warmup, opt.total_steps = lr, lr, 0, max(steps, 1)
    if adapting:
        opt.weight_decay = 0.0
    check(lib.ngpt_optim_config_validate(byref(opt)))
    own = None
    try:
        check(lib.ngpt_model_open(byref(m), fspath(model_path)))   # one read of the file
        check(lib.ngpt_model_tokenizer(m, byref(tok)))             # borrowed from the model
        if lora is not None:
            lc, made = lora_config(lora), c_void_p()
            check(lib.ngpt_adapter_create(byref(made), m, byref(lc), seed))
            own = ad = made
        elif adapter is not None:
            if not isinstance(adapter, Adapter):
                adapter = own = Adapter(adapter)
            ad = adapter._live()
        shape.adapter = ad.value if ad is not None else None
        check(lib.ngpt_context_init(byref(ctx), m, None, byref(shape), None, 0))
        if not adapting:
            check(lib.ngpt_context_optim_reset(ctx))    # a fine-tune: a fresh optimizer
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
        if isinstance(own, Adapter):    # after its context
            own.close()
        elif own is not None:
            lib.ngpt_adapter_close(own)
        lib.ngpt_model_close(m)         # after its context
