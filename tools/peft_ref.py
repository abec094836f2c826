#!/usr/bin/python3
"""peft_ref.py — a float64 PyTorch reference of PEFT's LoRA adapters on the
references of tools/hf_gpt2.py (GPT-2) and tools/hf_llama.py (Llama), and a
writer of random PEFT adapter directories to test importers.

  /usr/bin/python3 tools/peft_ref.py write MODEL_DIR PEFT_DIR [--r R] [--alpha A]
        [--rslora] [--targets NAME,... | --regex RE | --all-linear] [--layers 0,2]
        [--dtype F32|F16|BF16] [--seed S]
  /usr/bin/python3 tools/peft_ref.py run MODEL_DIR PEFT_DIR [--tokens 1,2,3] [--greedy N]
        [--merged] [--scale S]

PEFT's LoRA (https://github.com/huggingface/peft) is written here from its
source, not imported (peft need not be installed):
- which modules an adapter adapts, src/peft/tuners/tuners_utils.py:
  check_target_module_exists (exclude_modules first; target_modules a
  string: re.fullmatch of the module's name; a list: the name is an entry,
  or ends in "." + an entry and then, with layers_to_transform, its layer
  index, the number after the first ".<name>." (layers_pattern's name, or
  any), is one of them), _maybe_include_all_linear_layers ("all-linear":
  every Linear and Conv1D but the output layer); with no target_modules,
  the model type's default (src/peft/utils/constants.py);
- the forward, src/peft/tuners/lora/layer.py, Linear.forward:
  result = base_layer(x) + lora_B(lora_A(dropout(x))) * scaling, with
  scaling = lora_alpha / r, or lora_alpha / sqrt(r) with use_rslora
  (update_layer); the dropout is the identity in eval;
- merging, Linear.get_delta_weight: W += transpose(B @ A, fan_in_fan_out)
  * scaling (GPT-2's Conv1D stores W as (in, out));
- the files, src/peft/utils/save_and_load.py: adapter_model.safetensors
  holds base_model.model.<module name>.lora_A.weight (r, in) and
  .lora_B.weight (out, r) of each adapted module (nn.Linear's layout for
  a Conv1D base too); adapter_config.json holds LoraConfig's fields
  (src/peft/tuners/lora/config.py).
The reference computes in float64 from the tensors as the files store them
(F16 and BF16 widened exactly). `write` draws A uniform in +-1/sqrt(in)
(peft's kaiming_uniform_ with a = sqrt(5)) and B normal (peft starts B at
zero; a trained adapter's B is not), and writes an adapter_config.json with
the fields peft 0.17 saves. tests/interop/test_peft.py (make test-hf) uses
the module directly.
"""
import argparse
import json
import math
import os
import re
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_gpt2  # noqa: E402
import hf_llama  # noqa: E402

DEFAULT_TARGETS = {"gpt2": ["c_attn"], "llama": ["q_proj", "v_proj"]}


def linear_modules(cfg):
    """The Hugging Face model's Linear (and Conv1D) modules: name -> (in, out),
    the output layer (lm_head) last."""
    V = cfg["vocab_size"]
    out = {}
    if cfg["model_type"] == "gpt2":
        C, L = cfg["n_embd"], cfg["n_layer"]
        F = cfg.get("n_inner") or 4 * C
        for i in range(L):
            p = f"transformer.h.{i}."
            out.update({p + "attn.c_attn": (C, 3 * C), p + "attn.c_proj": (C, C),
                        p + "mlp.c_fc": (C, F), p + "mlp.c_proj": (F, C)})
        out["lm_head"] = (C, V)
        return out
    C, H, KV, D = hf_llama.dims(cfg)
    F, L = cfg["intermediate_size"], cfg["num_hidden_layers"]
    for i in range(L):
        p = f"model.layers.{i}."
        out.update({p + "self_attn.q_proj": (C, H * D), p + "self_attn.k_proj": (C, KV * D),
                    p + "self_attn.v_proj": (C, KV * D), p + "self_attn.o_proj": (H * D, C),
                    p + "mlp.gate_proj": (C, F), p + "mlp.up_proj": (C, F),
                    p + "mlp.down_proj": (F, C)})
    out["lm_head"] = (C, V)
    return out


def selects(lc, name):
    """check_target_module_exists(config, key) for a LoraConfig dict."""
    ex = lc.get("exclude_modules")
    if ex:
        if isinstance(ex, str):
            if re.fullmatch(ex, name):
                return False
        elif name in ex or any(name.endswith(f".{e}") for e in ex):
            return False
    targets = lc["target_modules"]
    if isinstance(targets, str):
        return re.fullmatch(targets, name) is not None
    if name in targets:
        return True
    if not any(name.endswith(f".{t}") for t in targets):
        return False
    layers = lc.get("layers_to_transform")
    if layers is None or (isinstance(layers, list) and len(layers) == 0):
        return True
    pattern = lc.get("layers_pattern")
    if not pattern:
        m = re.match(r".*?\.[^.]*\.(\d+)\.", name)
    else:
        for p in [pattern] if isinstance(pattern, str) else pattern:
            m = re.match(rf".*?\.{p}\.(\d+)\.", name)
            if m is not None:
                break
    if m is None:
        return False
    i = int(m.group(1))
    return i == layers if isinstance(layers, int) else i in layers


def adapted(lc, cfg):
    """The names of the modules lc adapts on a model of cfg, in the model's order."""
    names = linear_modules(cfg)
    lc = dict(lc)
    if lc.get("target_modules") is None:
        lc["target_modules"] = DEFAULT_TARGETS[cfg["model_type"]]
    t = lc["target_modules"]
    if isinstance(t, str) and t.lower() == "all-linear":
        lc["target_modules"] = [n for n in names if n != "lm_head"]
    out = [n for n in names if selects(lc, n)]
    if not out:
        raise ValueError("target_modules selects no module")
    if "lm_head" in out:
        raise ValueError("this reference adapts the blocks' Linears, not lm_head")
    return out


def scaling(lc):
    r, alpha = lc.get("r", 8), lc.get("lora_alpha", 8)
    return alpha / math.sqrt(r) if lc.get("use_rslora") else alpha / r


def lora_config(**fields):
    """adapter_config.json as peft 0.17's save_pretrained writes it, with fields."""
    lc = {"alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": None,
          "bias": "none", "corda_config": None, "eva_config": None, "exclude_modules": None,
          "fan_in_fan_out": False, "inference_mode": True, "init_lora_weights": True,
          "layer_replication": None, "layers_pattern": None, "layers_to_transform": None,
          "loftq_config": {}, "lora_alpha": 16, "lora_bias": False, "lora_dropout": 0.05,
          "megatron_config": None, "megatron_core": "megatron.core", "modules_to_save": None,
          "peft_type": "LORA", "peft_version": "0.17.1", "qalora_group_size": 16, "r": 8,
          "rank_pattern": {}, "revision": None, "target_modules": None,
          "target_parameters": None, "task_type": "CAUSAL_LM", "trainable_token_indices": None,
          "use_dora": False, "use_qalora": False, "use_rslora": False}
    lc.update(fields)
    return lc


def write_adapter(d, cfg, lc, seed=1, dtype="F32", b_std=0.02):
    """A random adapter of lc for a model of cfg in directory d: returns its
    tensors as the file holds them (float32 values)."""
    os.makedirs(d, exist_ok=True)
    lc = dict(lc, fan_in_fan_out=cfg["model_type"] == "gpt2")
    dims, r = linear_modules(cfg), lc["r"]
    g = np.random.default_rng(seed)
    tensors = {}
    for name in adapted(lc, cfg):
        fan_in, fan_out = dims[name]
        bound = 1.0 / math.sqrt(fan_in)
        tensors[f"base_model.model.{name}.lora_A.weight"] = \
            g.uniform(-bound, bound, (r, fan_in)).astype(np.float32)
        tensors[f"base_model.model.{name}.lora_B.weight"] = \
            (g.standard_normal((fan_out, r)) * b_std).astype(np.float32)
    with open(os.path.join(d, "adapter_config.json"), "w") as f:
        json.dump(lc, f, indent=2)
    hf_gpt2.write_safetensors(os.path.join(d, "adapter_model.safetensors"), tensors, dtype)
    return hf_gpt2.read_safetensors(os.path.join(d, "adapter_model.safetensors"))


class Adapter:
    """An adapter directory as peft loads it: config, scaling, and each adapted
    module's A and B (float64)."""

    def __init__(self, d, cfg):
        with open(os.path.join(d, "adapter_config.json")) as f:
            self.lc = json.load(f)
        for k in ("use_dora", "modules_to_save", "rank_pattern", "alpha_pattern", "lora_bias"):
            if self.lc.get(k):
                raise ValueError(f"{k}: this reference implements plain LoRA")
        if self.lc.get("bias", "none") != "none":
            raise ValueError("bias: this reference implements bias \"none\"")
        t = hf_gpt2.read_safetensors(os.path.join(d, "adapter_model.safetensors"))
        self.names = adapted(self.lc, cfg)
        self.pairs = {}
        for n in self.names:
            a = t.pop(f"base_model.model.{n}.lora_A.weight")
            b = t.pop(f"base_model.model.{n}.lora_B.weight")
            self.pairs[n] = (torch.from_numpy(a.astype(np.float64)),
                             torch.from_numpy(b.astype(np.float64)))
        if t:
            raise ValueError(f"unexpected tensors: {', '.join(sorted(t)[:3])}")
        self.scaling = scaling(self.lc)

    def term(self, name, x, scale=1.0):
        """lora_B(lora_A(x)) * scaling (times the user's scale)."""
        a, b = self.pairs[name]
        return (x @ a.T) @ b.T * (self.scaling * scale)

    def delta(self, name, scale=1.0):
        """B @ A * scaling: the (out, in) delta of get_delta_weight before its transpose."""
        a, b = self.pairs[name]
        return (b @ a) * (self.scaling * scale)


class LoraConv1D(nn.Module):
    """peft's lora.Linear around a Conv1D (GPT-2), unmerged."""

    def __init__(self, base, adapter, name, scale):
        super().__init__()
        self.base, self.adapter, self.name, self.scale = base, adapter, name, scale

    def forward(self, x):
        return self.base(x) + self.adapter.term(self.name, x, self.scale)


class LoraLlama(hf_llama.Llama):
    """hf_llama's Llama with peft's lora.Linear on the adapted modules, unmerged."""

    def __init__(self, cfg, tensors, adapter, scale):
        super().__init__(cfg, tensors)
        self.adapter, self.scale = adapter, scale

    def linear(self, x, name):
        y = super().linear(x, name)
        return y + self.adapter.term(name, x, self.scale) if name in self.adapter.pairs else y


def weight_key(tensors, name):
    """The state-dict key of module `name`'s weight in a directory's tensors
    (GPT-2's may lack the transformer. prefix)."""
    key = name + ".weight"
    if key not in tensors and key.startswith("transformer."):
        key = key[len("transformer."):]
    return key


def merged_tensors(cfg, tensors, adapter, scale=1.0):
    """The model's tensors with the adapter merged (get_delta_weight, in
    float64, rounded to float32 once), as peft's merge_and_unload leaves them."""
    out = dict(tensors)
    gpt2 = cfg["model_type"] == "gpt2"
    for n in adapter.names:
        k = weight_key(tensors, n)
        d = adapter.delta(n, scale)
        w = torch.from_numpy(tensors[k].astype(np.float64)) + (d.T if gpt2 else d)
        out[k] = w.numpy().astype(np.float32)
    return out


def reference(model_dir, peft_dir=None, scale=1.0, merged=False):
    """The float64 reference of the model in model_dir with the adapter in
    peft_dir applied (unmerged, or merged into float32 weights)."""
    cfg, tensors = hf_gpt2.read_hf_dir(model_dir)
    adapter = Adapter(peft_dir, cfg) if peft_dir else None
    if adapter and merged:
        tensors, adapter = merged_tensors(cfg, tensors, adapter, scale), None
    if cfg["model_type"] == "llama":
        return LoraLlama(cfg, tensors, adapter, scale) if adapter else hf_llama.Llama(cfg, tensors)
    model = hf_gpt2.GPT2LMHeadModel(cfg).load_hf(tensors)
    for n in adapter.names if adapter else []:
        parent, leaf = n[len("transformer."):].rsplit(".", 1)
        owner = model.transformer.get_submodule(parent)
        setattr(owner, leaf, LoraConv1D(getattr(owner, leaf), adapter, n, scale))
    return model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="a random PEFT adapter directory for a model directory")
    w.add_argument("model")
    w.add_argument("dir")
    w.add_argument("--r", type=int, default=8)
    w.add_argument("--alpha", type=float, default=16)
    w.add_argument("--rslora", action="store_true")
    t = w.add_mutually_exclusive_group()
    t.add_argument("--targets", help="module names, comma-separated (the model type's default)")
    t.add_argument("--regex", help="target_modules as a regular expression")
    t.add_argument("--all-linear", action="store_true")
    w.add_argument("--layers", help="layers_to_transform, comma-separated")
    w.add_argument("--dtype", choices=("F32", "F16", "BF16"), default="F32")
    w.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("run", help="the reference's logits and greedy ids with the adapter")
    r.add_argument("model")
    r.add_argument("dir")
    r.add_argument("--tokens", default="1,2,3,4")
    r.add_argument("--greedy", type=int, default=8)
    r.add_argument("--merged", action="store_true", help="merged into float32 weights")
    r.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args(argv)
    if a.cmd == "write":
        with open(os.path.join(a.model, "config.json")) as f:
            cfg = json.load(f)
        targets = ("all-linear" if a.all_linear else a.regex if a.regex else
                   a.targets.split(",") if a.targets else None)
        lc = lora_config(r=a.r, lora_alpha=a.alpha, use_rslora=a.rslora, target_modules=targets,
                         layers_to_transform=[int(x) for x in a.layers.split(",")] if a.layers else None)
        n = len(write_adapter(a.dir, cfg, lc, a.seed, a.dtype)) // 2
        print(f"wrote {a.dir}: {n} modules, r={a.r}, {a.dtype}")
        return 0
    hf_llama.report(reference(a.model, a.dir, a.scale, a.merged), a.tokens, a.greedy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
