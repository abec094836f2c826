#!/usr/bin/python3
"""convert.py — PyTorch checkpoints of the original model and its variants <-> .ngpt.

  /usr/bin/python3 tools/convert.py import model.pt model.ngpt [--config k=v ...] [--no-optim]
                                           [--tokenizer FILE]
  /usr/bin/python3 tools/convert.py export model.ngpt model.pt [--no-optim] [--cfg-dataclass]
                                           [--tokenizer-out FILE]

import accepts a bare state_dict, or a dict with `model_state` (or
`state_dict`/`model`) and optionally `model_cfg` (a dict, a dataclass or any
object with fields V T C L H d_ff dropout rope_theta) and an AdamW state
(`optim_state`, `optimizer_state`, `optimizer`, `opt_state` or `optim`).
The variants (qkv_bias tie_lm_head final_norm norm pos proj_bias gelu
norm_type norm_eps mlp mlp_bias kv_heads head_dim rope_pairs; tied_head is
an alias of tie_lm_head, n_kv_heads of kv_heads) come from the stored config,
else from the keys: a blocks.N.attn.qkv.bias means qkv_bias=1,
blocks.N.attn.proj.bias proj_bias=1, pos_emb.weight pos=learned, no ln_f.*
final_norm=0, an lm_head.weight that differs from tok_emb.weight
tie_lm_head=0, ln1.weight without ln1.bias norm_type=rms, no mlp biases
mlp_bias=0, an fc1 twice fc2's width mlp=swiglu, and with H known (stored
or given) head_dim and kv_heads from attn.proj.weight (C, H*D) and
attn.qkv.weight ((H + 2 KV) D, C). norm=post, pos=sinusoidal, gelu=tanh,
norm_eps and rope_pairs leave no key behind: pass them with --config when
the checkpoint does not store them. A key that maps to
no ngpt tensor is an error naming it.
Without a stored config it is inferred from the shapes (V, C, L, d_ff); T
defaults to 256, H to 4, dropout to 0.1 and rope_theta to 10000: pass
`--config T=... H=...` for what the shapes cannot tell. A `module.` or
`_orig_mod.` prefix (DDP, torch.compile) is stripped. The AdamW moments become
tensors optim.m.<name> / optim.v.<name> (exp_avg / exp_avg_sq) and the
training state the train.* metadata that a training context made from the file restores (TRAIN_META):
step from the optimizer, lr/betas/eps/weight_decay from its param group,
others from a `train_cfg` entry of the checkpoint, `--train key=value`, or
ngpt's defaults. A model's BPE tokenizer comes from a `tokenizer` entry of
the checkpoint (the bytes of an ngpt tokenizer file, as export writes it) or
from --tokenizer FILE (which wins); its token count must be the model's V.

export writes {"model_state", "model_cfg", ["optim_state", "step",
"train_cfg"]}: the state_dict (with lm_head.weight, tied to tok_emb.weight
unless tie_lm_head=0) loads with load_state_dict(strict=True). When every
variant switch is at its default, model_cfg holds exactly the original's
eight fields (ints V T C L H d_ff, floats dropout rope_theta), so the
original's ModelConfig(**model_cfg) and model class load it; otherwise it
also holds the switches, which only tools/ngpt_torch.py's ModelConfig and
NGPT know, and export says so on stderr;
optim_state loads into torch.optim.AdamW(model.parameters(), ...) with
load_state_dict; train_cfg holds the train.* settings (import reads it back).
A model with 8-bit or 4-bit weights (ngpt quantize) is exported dequantized:
each quantized weight becomes value x scale in float32, and export names them on
stderr (importing that back gives a float32 model of those values).
A model with a BPE tokenizer (a version 2 .ngpt) also gets "tokenizer": the
bytes of its ngpt tokenizer file (`ngpt tokenizer` and the C library read
them); --tokenizer-out FILE also writes them to FILE. A byte-level model has
no such key, and its export is what it always was.
"""
import argparse
import collections
import dataclasses
import os
import pickle
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngpt_torch as nt  # noqa: E402

SIZE_FIELDS = ("V", "T", "C", "L", "H", "d_ff", "dropout", "rope_theta")
CFG_FIELDS = SIZE_FIELDS + nt.VARIANT_FIELDS
BOOL_FIELDS = ("qkv_bias", "tie_lm_head", "final_norm", "proj_bias", "mlp_bias", "qk_norm")
# switches added later: printed (as ngpt does) only when not at their default
LATER_FIELDS = ("proj_bias", "gelu") + nt.LLAMA_FIELDS + nt.QWEN_LLAMA3_FIELDS
NAMED_FIELDS = {"norm": nt.NORMS, "pos": nt.POSITIONS, "gelu": nt.GELUS,
                "norm_type": nt.NORM_TYPES, "mlp": nt.MLPS, "rope_pairs": nt.ROPE_PAIRS,
                "rope_scaling": nt.ROPE_SCALINGS}
FLOAT_FIELDS = ("dropout", "rope_theta", "norm_eps", "rope_factor", "rope_low_freq_factor",
                "rope_high_freq_factor")
CFG_ALIASES = {"vocab_size": "V", "context_len": "T", "block_size": "T", "d_model": "C",
               "n_embd": "C", "n_layers": "L", "n_layer": "L", "n_heads": "H", "n_head": "H",
               "tied_head": "tie_lm_head", "n_kv_heads": "kv_heads"}
MODEL_KEYS = ("model_state", "state_dict", "model")
OPTIM_KEYS = ("optim_state", "optimizer_state", "optimizer", "opt_state", "optim")
TRAIN_CFG_KEYS = ("train_cfg", "train_config", "training_cfg")
# The train.* metadata of ngpt_context_save_train (src/train/train_ckpt.c), in its order and
# types; all of them must be present when optim.* tensors are. None: filled in
# from the optimizer state or the config.
TRAIN_META = (("step", "u64", None), ("seed", "u64", 42), ("batch", "i64", 32),
              ("seq", "i64", None), ("lr", "f64", None), ("min_lr", "f64", None),
              ("warmup", "i64", 200), ("total_steps", "i64", 5000), ("beta1", "f64", None),
              ("beta2", "f64", None), ("eps", "f64", None), ("weight_decay", "f64", None),
              ("decay_all", "u64", 1), ("clip", "f64", 1.0), ("accum", "i64", 1),
              ("best_eval_loss", "f64", float("inf")))
# Written only when given (train_cfg or --train); a training context made from the file reads them.
TRAIN_META_OPTIONAL = (("holdout", "f64"), ("eval_every", "i64"), ("eval_batches", "i64"),
                       ("data_hash", "u64"))
TRAIN_ALIASES = {"batch_size": "batch", "learning_rate": "lr", "max_lr": "lr",
                 "max_steps": "total_steps", "max_iters": "total_steps", "steps": "total_steps",
                 "warmup_steps": "warmup", "warmup_iters": "warmup", "grad_clip": "clip",
                 "grad_accum": "accum", "best_val_loss": "best_eval_loss"}


class ConvertError(Exception):
    pass

# ------------------------------------------------------------------ loading


class _Stub:
    """Stands in for a class the checkpoint names but this Python cannot
    import (e.g. the original training code's config dataclass)."""

    def __init__(self, *args, **kwargs):
        self.__dict__.update(kwargs)

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2:     # (dict, slots)
            state = {**(state[0] or {}), **(state[1] or {})}
        if isinstance(state, dict):
            self.__dict__.update(state)


class _LenientUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError):
            return type(name, (_Stub,), {"__module__": module})


_lenient_pickle = types.ModuleType("ngpt_lenient_pickle")
_lenient_pickle.__dict__.update({k: getattr(pickle, k) for k in dir(pickle) if not k.startswith("__")})
_lenient_pickle.Unpickler = _LenientUnpickler


def torch_load(path):
    # torch 1.13 ignores pickle_module unless weights_only (it resets it to
    # `pickle`), so the module torch.serialization uses is swapped meanwhile.
    import torch.serialization as ser
    saved = ser.pickle
    ser.pickle = _lenient_pickle
    try:
        return torch.load(path, map_location="cpu", pickle_module=_lenient_pickle)
    finally:
        ser.pickle = saved


def fields_of(obj):
    """{name: value} of a dict, a dataclass instance or a plain object."""
    if obj is None:
        return {}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, dict):
        return dict(obj)
    return dict(getattr(obj, "__dict__", {}))


def cfg_from_object(obj):
    """{field: value} from a dict, dataclass or plain object (known aliases too)."""
    out = {}
    for k, v in fields_of(obj).items():
        k = CFG_ALIASES.get(k, k)
        if k in CFG_FIELDS:
            out[k] = v
    return out


def parse_overrides(pairs):
    out = {}
    for kv in pairs or []:
        if "=" not in kv:
            raise ConvertError(f"--config {kv!r}: expected key=value")
        k, v = kv.split("=", 1)
        k = CFG_ALIASES.get(k, k)
        if k not in CFG_FIELDS:
            raise ConvertError(f"--config {kv!r}: unknown key {k!r} (known: {' '.join(CFG_FIELDS)})")
        if k in BOOL_FIELDS:
            if v not in ("0", "1", "true", "false", "yes", "no"):
                raise ConvertError(f"--config {kv!r}: expected 0/1/true/false")
            out[k] = v in ("1", "true", "yes")
            continue
        if k in NAMED_FIELDS:
            out[k] = v
            continue
        try:
            out[k] = float(v) if k in FLOAT_FIELDS else int(v)
        except ValueError:
            raise ConvertError(f"--config {kv!r}: {v!r} is not a number") from None
    return out


def variant_value(k, v):
    """A stored variant field as ModelConfig holds it (bools; norm/pos names,
    also ngpt's enum numbers)."""
    if k in BOOL_FIELDS:
        return bool(v)
    if k not in NAMED_FIELDS:       # numbers: norm_eps, kv_heads, head_dim
        return float(v) if k in FLOAT_FIELDS else int(v)
    names = NAMED_FIELDS[k]
    if isinstance(v, int) and 0 <= v < len(names):
        return names[v]
    return str(v)


def split_checkpoint(obj):
    """(state_dict, cfg object or None, optimizer state or None, train cfg or None)."""
    if not isinstance(obj, dict):
        raise ConvertError(f"the checkpoint holds a {type(obj).__name__}, not a dict/state_dict")
    for k in MODEL_KEYS:
        if k in obj and isinstance(obj[k], dict):
            opt = next((obj[o] for o in OPTIM_KEYS if isinstance(obj.get(o), dict)), None)
            tcfg = next((obj[t] for t in TRAIN_CFG_KEYS if obj.get(t) is not None), None)
            return obj[k], obj.get("model_cfg", obj.get("config")), opt, tcfg
    if all(torch.is_tensor(v) for v in obj.values()):
        return obj, None, None, None
    raise ConvertError("the checkpoint is neither a state_dict nor a dict with 'model_state' "
                       f"(top-level keys: {', '.join(map(str, obj))})")


def strip_prefix(sd):
    for prefix in ("module.", "_orig_mod."):
        if sd and all(k.startswith(prefix) for k in sd):
            print(f"note: stripping the '{prefix}' prefix from every key")
            sd = {k[len(prefix):]: v for k, v in sd.items()}
    return sd


def infer_config(sd, stored, overrides):
    """The config: stored fields, then shapes, then defaults; overrides win."""
    c = dict(stored)
    emb = sd.get("tok_emb.weight")
    if emb is None or emb.dim() != 2:
        raise ConvertError("missing key tok_emb.weight (V, C): cannot tell the model's size")
    c.setdefault("V", emb.shape[0])
    c.setdefault("C", emb.shape[1])
    layers = {int(k.split(".")[1]) for k in sd if k.startswith("blocks.") and k.split(".")[1].isdigit()}
    c.setdefault("L", max(layers) + 1 if layers else 0)
    fc1, fc2 = sd.get("blocks.0.mlp.fc1.weight"), sd.get("blocks.0.mlp.fc2.weight")
    if fc2 is not None and fc2.dim() == 2:
        c.setdefault("d_ff", fc2.shape[1])
    elif fc1 is not None and fc1.dim() == 2:
        c.setdefault("d_ff", fc1.shape[0])
    # the variants the keys tell (a stored or given value wins): biases by
    # their keys, RMSNorm by norm weights without biases, SwiGLU by an fc1
    # twice fc2's width
    told = {"qkv_bias": "blocks.0.attn.qkv.bias" in sd, "final_norm": "ln_f.weight" in sd,
            "proj_bias": "blocks.0.attn.proj.bias" in sd,
            "mlp_bias": "blocks.0.mlp.fc2.bias" in sd or "blocks.0.mlp.fc1.bias" in sd,
            "qk_norm": "blocks.0.attn.q_norm.weight" in sd}
    if "blocks.0.ln1.weight" in sd and "blocks.0.ln1.bias" not in sd:
        told["norm_type"] = "rms"
    if fc1 is not None and fc2 is not None and fc1.dim() == 2 and fc2.dim() == 2 and \
            fc1.shape[0] == 2 * fc2.shape[1]:
        told["mlp"] = "swiglu"
    if "pos_emb.weight" in sd:
        told["pos"] = "learned"
    head, emb = sd.get("lm_head.weight"), sd.get("tok_emb.weight")
    if head is not None:
        told["tie_lm_head"] = tuple(head.shape) == tuple(emb.shape) and torch.equal(
            head.detach().cpu().to(torch.float32), emb.detach().cpu().to(torch.float32))
    for f, v in told.items():
        if f not in c and f not in overrides:
            c[f] = v
    guessed = []
    for f, d in (("T", 256), ("H", 4), ("dropout", 0.1), ("rope_theta", 10000.0)):
        if f not in c and f not in overrides:
            c[f] = d
            guessed.append(f)
    c.update(overrides)
    heads_from_shapes(sd, c)
    if "d_ff" not in c:
        raise ConvertError("missing key blocks.0.mlp.fc1.weight: cannot tell d_ff (pass --config d_ff=N)")
    if guessed:
        print("note: not stored in the checkpoint, using defaults: " +
              " ".join(f"{f}={c[f]}" for f in guessed) + " (override with --config key=value)")
    try:
        cfg = nt.ModelConfig(**{f: (float(c[f]) if f in FLOAT_FIELDS else int(c[f]))
                                for f in SIZE_FIELDS},
                             **{f: variant_value(f, c[f]) for f in nt.VARIANT_FIELDS if f in c})
        return cfg.validate()
    except ValueError as e:
        raise ConvertError(str(e)) from None


def heads_from_shapes(sd, c):
    """head_dim and kv_heads from the shapes when H is known and they are
    not stored or given: attn.proj.weight is (C, H*D), attn.qkv.weight
    ((H + 2 KV) D, C)."""
    proj, qkv = sd.get("blocks.0.attn.proj.weight"), sd.get("blocks.0.attn.qkv.weight")
    H = int(c.get("H", 0))
    if proj is None or qkv is None or proj.dim() != 2 or qkv.dim() != 2 or H <= 0 \
            or proj.shape[1] % H:
        return
    D = proj.shape[1] // H
    if "head_dim" not in c and D != int(c["C"]) // H:
        c["head_dim"] = D
    if "kv_heads" not in c and qkv.shape[0] % D == 0 and (qkv.shape[0] // D - H) % 2 == 0:
        kv = (qkv.shape[0] // D - H) // 2
        if 0 < kv < H:
            c["kv_heads"] = kv


def to_f32(name, t):
    if not torch.is_tensor(t):
        raise ConvertError(f"key {name} is a {type(t).__name__}, not a tensor")
    if not t.is_floating_point():
        raise ConvertError(f"key {name} has dtype {t.dtype}, not a floating-point type")
    a = t.detach().cpu()
    if a.dtype == torch.float64:
        print(f"note: {name} is float64; rounding to float32")
    return a.to(torch.float32).contiguous().numpy().copy()


def check_state(sd, cfg):
    """Model tensors {name: float32} in ngpt order; errors name every bad key."""
    shapes = nt.param_shapes(cfg)
    allowed = set(shapes) | {"lm_head.weight"}
    unknown = sorted(k for k in sd if k not in allowed)
    if unknown:
        unknown[-1] += (" (ngpt maps tok_emb, pos_emb (pos=learned), blocks.N.{ln1,ln2}, "
                        "attn.qkv.weight/.bias (qkv_bias), attn.proj.weight/.bias (proj_bias), "
                        "mlp.fc1/fc2 (.bias: mlp_bias), ln_f "
                        "(final_norm), lm_head (tie_lm_head=0); config " + cfg_str(cfg) + ")")
    missing = [k for k in shapes if k not in sd]
    bad = [f"{k} {tuple(sd[k].shape)} (want {shapes[k]})" for k in shapes
           if k in sd and tuple(sd[k].shape) != shapes[k]]
    if cfg.tie_lm_head and "lm_head.weight" in sd and \
            tuple(sd["lm_head.weight"].shape) != shapes["tok_emb.weight"]:
        bad.append(f"lm_head.weight {tuple(sd['lm_head.weight'].shape)} (want {shapes['tok_emb.weight']})")
    msgs = []
    if unknown:
        msgs.append("unknown keys: " + ", ".join(unknown))
    if missing:
        msgs.append("missing keys: " + ", ".join(missing))
    if bad:
        msgs.append("mis-shaped keys (for config " + cfg_str(cfg) + "): " + "; ".join(bad))
    if msgs:
        raise ConvertError("; ".join(msgs))
    out = collections.OrderedDict((k, to_f32(k, sd[k])) for k in shapes)
    if not cfg.tie_lm_head:
        print("lm_head.weight is its own tensor (tie_lm_head=0)")
    elif "lm_head.weight" in sd:
        head = to_f32("lm_head.weight", sd["lm_head.weight"])
        if not np.array_equal(head, out["tok_emb.weight"]):
            diff = float(np.max(np.abs(head.astype(np.float64) - out["tok_emb.weight"])))
            raise ConvertError("lm_head.weight differs from tok_emb.weight (max abs diff "
                               f"{diff:.3g}) but the config says tie_lm_head=1; import it "
                               "untied with --config tie_lm_head=0")
        print("lm_head.weight equals tok_emb.weight (tied): ok")
    else:
        print("note: no lm_head.weight key; it is tied to tok_emb.weight")
    return out


def field_str(v):
    return int(v) if isinstance(v, bool) else v


def cfg_str(cfg):
    """The config as ngpt's --config writes it (bools as 0/1; the later
    switches only when set)."""
    return " ".join(f"{f}={field_str(getattr(cfg, f))}" for f in CFG_FIELDS
                    if f not in LATER_FIELDS or not same_value(f, getattr(cfg, f), getattr(nt.DEFAULT, f)))


def same_value(f, a, b):
    """Whether two values of field f are the same model (norm_eps as float32; 0 = 1e-5)."""
    if f == "norm_eps":
        return np.float32(a or 1e-5) == np.float32(b or 1e-5)
    return a == b


def optim_tensors(opt, params):
    """AdamW state_dict -> ({optim.m/v.<name>: float32}, step, param group)."""
    groups = opt.get("param_groups") or []
    state = opt.get("state") or {}
    if len(groups) != 1:
        raise ConvertError(f"optimizer state has {len(groups)} parameter groups; only the original's "
                           "single group over model.parameters() can be mapped to tensor names "
                           "(use --no-optim to import the weights alone)")
    ids = list(groups[0]["params"])
    names = list(params)
    if len(ids) != len(names):
        raise ConvertError(f"optimizer state covers {len(ids)} parameters, the model has "
                           f"{len(names)} (use --no-optim to import the weights alone)")
    m, v, steps = {}, {}, set()
    for pid, name in zip(ids, names):
        s = state.get(pid)
        if not s:
            raise ConvertError(f"optimizer state has no entry for parameter {pid} ({name})")
        if "exp_avg" not in s or "exp_avg_sq" not in s:
            raise ConvertError(f"optimizer state of {name} has no exp_avg/exp_avg_sq: not Adam(W)")
        for key, dst in (("exp_avg", m), ("exp_avg_sq", v)):
            a = to_f32(f"{key} of {name}", s[key])
            if a.shape != params[name].shape:
                raise ConvertError(f"optimizer {key} of {name} has shape {a.shape}, want "
                                   f"{params[name].shape}")
            dst[name] = a
        steps.add(int(float(s.get("step", 0))))
    if len(steps) != 1:
        raise ConvertError(f"optimizer steps differ between parameters: {sorted(steps)}")
    tensors = collections.OrderedDict()
    tensors.update((f"optim.m.{k}", a) for k, a in m.items())
    tensors.update((f"optim.v.{k}", a) for k, a in v.items())
    return tensors, steps.pop(), groups[0]


def train_meta(step, group, cfg, stored, overrides):
    """All train.* entries: --train overrides, then the checkpoint's train_cfg,
    then the optimizer's param group, then ngpt's defaults."""
    g = group or {}
    b1, b2 = g.get("betas", (0.9, 0.95))
    lr = float(g.get("initial_lr", g.get("lr", 3e-4)))       # initial_lr: before a scheduler
    from_group = {"step": step, "seq": cfg.T, "lr": lr, "beta1": b1, "beta2": b2,
                  "eps": g.get("eps", 1e-8), "weight_decay": g.get("weight_decay", 0.1)}
    vals = {}
    for key, kind, default in TRAIN_META:
        if key == "step":                  # the optimizer's own count wins
            v = overrides.get(key, step)
        else:
            v = overrides.get(key, stored.get(key, from_group.get(key, default)))
        if key == "min_lr" and v is None:
            v = 0.1 * float(overrides.get("lr", stored.get("lr", lr)))   # docs/DESIGN.md §1: 3e-5 / 3e-4
        vals[key] = v
    optional = [(k, kind) for k, kind in TRAIN_META_OPTIONAL if k in overrides or k in stored]
    for k, _ in optional:
        vals[k] = overrides.get(k, stored.get(k))
    meta = {}
    for key, kind in [(k, t) for k, t, _ in TRAIN_META] + optional:
        v = vals[key]
        try:
            v = float(v) if kind == "f64" else int(v)
        except (TypeError, ValueError):
            raise ConvertError(f"train.{key}: {v!r} is not a number") from None
        if kind == "u64" and v < 0:
            raise ConvertError(f"train.{key} = {v} must be >= 0")
        meta[f"train.{key}"] = (kind, v)
    return meta


def train_from_object(obj):
    """{train setting: value} from a dict, dataclass or plain object."""
    known = {k for k, _, _ in TRAIN_META} | {k for k, _ in TRAIN_META_OPTIONAL}
    out = {}
    for k, v in fields_of(obj).items():
        k = TRAIN_ALIASES.get(k, k)
        if k in known and isinstance(v, (int, float, bool)):
            out[k] = v
    return out


def parse_train_overrides(pairs):
    known = {k for k, _, _ in TRAIN_META} | {k for k, _ in TRAIN_META_OPTIONAL}
    out = {}
    for kv in pairs or []:
        k, sep, v = kv.partition("=")
        k = TRAIN_ALIASES.get(k, k)
        if not sep or k not in known:
            raise ConvertError(f"--train {kv!r}: expected key=value with key one of "
                               f"{' '.join(sorted(known))}")
        try:
            out[k] = float(v)
        except ValueError:
            raise ConvertError(f"--train {kv!r}: {v!r} is not a number") from None
    return out


def do_import(args):
    obj = torch_load(args.input)
    sd, cfg_obj, opt, tcfg = split_checkpoint(obj)
    sd = strip_prefix(dict(sd))
    cfg = infer_config(sd, cfg_from_object(cfg_obj), parse_overrides(args.config))
    params = check_state(sd, cfg)
    tensors, meta = collections.OrderedDict(params), {}
    if opt is not None and not args.no_optim:
        t, step, group = optim_tensors(opt, params)
        tensors.update(t)
        meta = train_meta(step, group, cfg, train_from_object(tcfg), parse_train_overrides(args.train))
        print(f"optimizer state: AdamW moments of {len(params)} tensors, step {step}; " +
              " ".join(f"{k[6:]}={v[1]:g}" for k, v in meta.items() if k != "train.step"))
    elif args.train:
        raise ConvertError("--train needs optimizer state in the checkpoint")
    image = obj.get("tokenizer") if isinstance(obj, dict) else None
    if args.tokenizer:
        with open(args.tokenizer, "rb") as f:
            image = f.read()
    if image is not None:
        if not isinstance(image, (bytes, bytearray)):
            raise ConvertError(f"the checkpoint's 'tokenizer' is a {type(image).__name__}, not the "
                               "bytes of an ngpt tokenizer file")
        n_tok = nt.tokenizer_tokens(bytes(image))
        if n_tok != cfg.V:
            raise ConvertError(f"the tokenizer has {n_tok} tokens but the model's vocabulary is "
                               f"V={cfg.V}; a model and its tokenizer must agree")
        tensors[nt.TOKENIZER] = bytes(image)
        print(f"tokenizer: {n_tok} tokens, {len(image)} bytes (a version 2 file)")
    nt.write_ngpt(args.output, cfg, tensors, meta)
    n = sum(a.size for a in params.values())
    print(f"wrote {args.output}: {cfg_str(cfg)}, {n} parameters")

# ------------------------------------------------------------------- export


def do_export(args):
    quantized = []
    cfg, tensors, meta = nt.read_ngpt(args.input, quantized)
    if quantized:
        print(f"convert.py export: {args.input} holds quantized weights (weights=q8 or q4): "
              f"{', '.join(quantized[:3])}{' ...' if len(quantized) > 3 else ''} are written "
              "dequantized (value x scale) as float32", file=sys.stderr)
    sd = collections.OrderedDict()
    for name in nt.param_names(cfg):
        sd[name] = torch.from_numpy(tensors[name].copy())
    if cfg.tie_lm_head:
        sd["lm_head.weight"] = sd["tok_emb.weight"]             # tied: the same tensor
    switches = [f for f in nt.VARIANT_FIELDS if not same_value(f, getattr(cfg, f), getattr(nt.DEFAULT, f))]
    if args.cfg_dataclass:
        model_cfg = dataclasses.replace(cfg)
    elif switches:
        model_cfg = {f: getattr(cfg, f) for f in CFG_FIELDS}
    else:       # the original's ModelConfig(**model_cfg): exactly its eight fields
        model_cfg = {f: (float if f in ("dropout", "rope_theta") else int)(getattr(cfg, f))
                     for f in SIZE_FIELDS}
    if switches:
        print("convert.py export: warning: the original project cannot load this model: its "
              "ModelConfig has no fields for the switches " +
              " ".join(f"{f}={field_str(getattr(cfg, f))}" for f in switches) +
              " (load it with tools/ngpt_torch.py's NGPT)", file=sys.stderr)
    out = {"model_state": sd, "model_cfg": model_cfg}
    if nt.TOKENIZER in tensors:        # a BPE model: its tokenizer file's bytes
        out["tokenizer"] = tensors[nt.TOKENIZER]
        if args.tokenizer_out:
            with open(args.tokenizer_out, "wb") as f:
                f.write(tensors[nt.TOKENIZER])
        print(f"tokenizer: {nt.tokenizer_tokens(tensors[nt.TOKENIZER])} tokens, in 'tokenizer'" +
              (f" and {args.tokenizer_out}" if args.tokenizer_out else ""))
    elif args.tokenizer_out:
        raise ConvertError(f"{args.input} is a byte-level model: it carries no tokenizer to write")
    has_optim = any(k.startswith("optim.") for k in tensors)
    if has_optim and not args.no_optim:
        names = nt.param_names(cfg)
        missing = [n for n in names if f"optim.m.{n}" not in tensors or f"optim.v.{n}" not in tensors]
        if missing:
            raise ConvertError(f"{args.input}: optimizer state is incomplete (no moments for "
                               f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''})")
        step = int(meta.get("train.step", 0))
        state = {i: {"step": torch.tensor(float(step)),
                     "exp_avg": torch.from_numpy(tensors[f"optim.m.{n}"].copy()),
                     "exp_avg_sq": torch.from_numpy(tensors[f"optim.v.{n}"].copy())}
                 for i, n in enumerate(names)}
        group = {"lr": float(meta.get("train.lr", 3e-4)),
                 "betas": (float(meta.get("train.beta1", 0.9)), float(meta.get("train.beta2", 0.95))),
                 "eps": float(meta.get("train.eps", 1e-8)),
                 "weight_decay": float(meta.get("train.weight_decay", 0.1)),
                 "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                 "params": list(range(len(names)))}
        out["optim_state"] = {"state": state, "param_groups": [group]}
        out["step"] = step
        out["train_cfg"] = {k[len("train."):]: v for k, v in meta.items() if k.startswith("train.")}
        print(f"optimizer state: AdamW moments, step {step}")
    torch.save(out, args.output)
    print(f"wrote {args.output}: {cfg_str(cfg)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert between PyTorch checkpoints of the "
                                 "original model and ngpt's .ngpt format.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    im = sub.add_parser("import", help="PyTorch .pt -> .ngpt")
    im.add_argument("input")
    im.add_argument("output")
    im.add_argument("--config", action="append", metavar="KEY=VALUE", nargs="+",
                    help="set/override config fields (V T C L H d_ff dropout rope_theta "
                    "qkv_bias tie_lm_head final_norm norm pos proj_bias gelu norm_type norm_eps "
                    "mlp mlp_bias kv_heads head_dim rope_pairs)")
    im.add_argument("--no-optim", action="store_true", help="ignore optimizer state")
    im.add_argument("--tokenizer", metavar="FILE",
                    help="the model's BPE tokenizer (an ngpt tokenizer file): carried in the .ngpt")
    im.add_argument("--train", action="append", metavar="KEY=VALUE", nargs="+",
                    help="set train.* settings stored with the optimizer state (seed batch seq "
                    "lr min_lr warmup total_steps beta1 beta2 eps weight_decay decay_all clip "
                    "accum best_eval_loss holdout eval_every eval_batches)")
    ex = sub.add_parser("export", help=".ngpt -> PyTorch .pt")
    ex.add_argument("input")
    ex.add_argument("output")
    ex.add_argument("--no-optim", action="store_true", help="leave out optimizer state")
    ex.add_argument("--tokenizer-out", metavar="FILE",
                    help="also write a BPE model's tokenizer file to FILE")
    ex.add_argument("--cfg-dataclass", action="store_true",
                    help="store model_cfg as ngpt_torch.ModelConfig instead of a plain dict")
    args = ap.parse_args(argv)
    if args.cmd == "import":
        args.config = [kv for group in (args.config or []) for kv in group]
        args.train = [kv for group in (args.train or []) for kv in group]
    try:
        (do_import if args.cmd == "import" else do_export)(args)
    except (ConvertError, nt.FormatError, OSError) as e:
        print(f"convert.py {args.cmd}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
