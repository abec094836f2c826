"""ngpt.Adapter: a LoRA adapter file opened once; lora_config: a LoRA config from
words, a dict or a LoraConfig (include/ngpt.h, "LoRA adapters")."""
from ctypes import byref

from ._lib import AdapterInfo, Handle, LoraConfig, check, fspath, lib


def lora_config(spec=None):
    """A LoraConfig: the library's default (r=8 alpha=16 targets=q_proj,v_proj) with
    spec's settings on top. spec is None, a LoraConfig (copied), a str of
    ngpt_lora_config_set's words separated by spaces ("r=16 alpha=32
    targets=q_proj,v_proj", what str(LoraConfig) gives), or a dict {"r": 16,
    "targets": ["q_proj", "v_proj"], "rslora": True, ...}. Keys: r (or rank), alpha,
    rslora, dropout, targets, layers ("0-3,7" or a list of ints). A bad key or value
    raises Error naming it."""
    if isinstance(spec, LoraConfig):
        return LoraConfig.from_buffer_copy(spec)
    lc = lib.ngpt_lora_config_default()
    if spec is None:
        return lc
    if isinstance(spec, str):
        words = spec.split()
    elif isinstance(spec, dict):
        words = []
        for k, v in spec.items():
            if isinstance(v, bool):
                v = int(v)
            elif isinstance(v, (list, tuple)):
                v = ",".join(str(x) for x in v)
            words.append("%s=%s" % (k, v))
    else:
        raise TypeError("ngpt: a LoRA config is a str, a dict or a LoraConfig, not %s"
                        % type(spec).__name__)
    for w in words:
        check(lib.ngpt_lora_config_set(byref(lc), w.encode()))
    return lc


class Adapter(Handle):
    """A LoRA adapter file (`ngpt train --lora`, ngpt.finetune(..., lora=...)), opened
    and verified once (ngpt_adapter_open): read only, shared by any number of
    Models, on any threads.

    Adapter(path) opens it. config is its LoraConfig (str() gives its words), rank
    its r, info its ngpt_adapter_info (info.config: its model's config; info.base:
    the model's identity; info.floats, info.steps). close() (or `with`, or garbage
    collection) frees it; closing while a Model applies it raises Error (set other
    adapters or close the Model first). save(path) writes the adapter alone.
    """

    _what = "adapter"
    _free = lib.ngpt_adapter_close

    def __init__(self, path):
        ad = self._open(lib.ngpt_adapter_open, path)
        self.path = path
        self.config = LoraConfig()
        self.info = AdapterInfo()
        check(lib.ngpt_adapter_lora_config(ad, byref(self.config)))
        check(lib.ngpt_adapter_describe(ad, byref(self.info)))
        self.rank = self.config.rank

    def save(self, path):
        """Writes the adapter alone (atomically): a training file of `ngpt train`
        without its AdamW moments, a third of its size."""
        check(lib.ngpt_adapter_save(self._live(), fspath(path)))

    def __repr__(self):
        return "<ngpt.Adapter %s %s>" % (self.path, "closed" if self.closed else self.config)


def adapter_list(items):
    """[(Adapter, scale)] of items: each an Adapter, a path, or (either, scale), and
    the Adapters opened here (which the caller owns)."""
    out, opened = [], []
    try:
        for item in items:
            ad, scale = item if isinstance(item, tuple) else (item, 1.0)
            if not isinstance(ad, Adapter):
                ad = Adapter(ad)
                opened.append(ad)
            ad._live()
            out.append((ad, float(scale)))
    except BaseException:
        for ad in opened:
            ad.close()
        raise
    return out, opened
