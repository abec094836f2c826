#!/usr/bin/python3
"""hf_llama.py — an independent PyTorch reference of Hugging Face's Llama
(LlamaForCausalLM), Qwen2 (Qwen2ForCausalLM), Qwen3 (Qwen3ForCausalLM) and
Gemma 3's text model (Gemma3ForCausalLM), Llama 3's rope scaling included,
and a writer of random-weight model directories of those families to test
importers.

  /usr/bin/python3 tools/hf_llama.py write DIR [--layers L] [--hidden C] [--heads H]
        [--kv-heads KV] [--head-dim D] [--intermediate F] [--vocab V] [--untied]
        [--dtype F32|BF16] [--seed S]
  /usr/bin/python3 tools/hf_llama.py run DIR [--tokens 1,2,3] [--greedy N]

The model is written from the architecture's description (transformers'
src/transformers/models/llama/modeling_llama.py,
https://github.com/huggingface/transformers), not imported from transformers
nor from ngpt's tools/ngpt_torch.py:
  x = embed_tokens[t]; per layer
    h = x + o_proj(attn(rms(x) * input_layernorm))
    x = h + down_proj(silu(gate_proj(r)) * up_proj(r)),  r = rms(h) * post_attention_layernorm
  logits = lm_head(rms(x) * norm)   (lm_head = embed_tokens when tied)
rms(x) = x * rsqrt(mean(x²) + rms_norm_eps). Attention: q (H heads), k and v
(KV heads) of head_dim D each, RoPE with θᵢ = rope_theta^(−2i/D) rotating
the halves (x_i, x_{i+D/2}) (rotate_half), causal softmax(q·kᵀ/√D), query
head h reading KV head ⌊h/(H/KV)⌋. Biases only with attention_bias (q, k,
v and o) and mlp_bias (gate, up, down), false in SmolLM2. The reference
computes in float64 from the weights exactly as the files store them (BF16
widened exactly).

The other families, from their descriptions (transformers'
models/qwen2/modeling_qwen2.py, models/qwen3/modeling_qwen3.py,
modeling_rope_utils.py's _compute_llama3_parameters):
  Qwen2: q_proj, k_proj and v_proj have biases, o_proj none; sliding_window
         unused while use_sliding_window is false.
  Qwen3: q and k, per head of D, are RMS-normalised (rms_norm_eps) and
         multiplied by self_attn.q_norm.weight / k_norm.weight before RoPE;
         attention_bias as Llama's.
  rope_scaling {"rope_type": "llama3", factor, low_freq_factor,
         high_freq_factor, original_max_position_embeddings}: with
         wavelength w = 2π/θᵢ, lo = orig/low_freq_factor, hi =
         orig/high_freq_factor: w < hi keeps θᵢ, w > lo gives θᵢ/factor,
         between them s = (orig/w − low)/(high − low) and θᵢ' = (1 − s)·θᵢ/factor
         + s·θᵢ.
  Gemma 3 (models/gemma3/modeling_gemma3.py, configuration_gemma3.py):
         rms(x)·(1 + w) for every norm (q_norm, k_norm too), computed in
         float32 there; x = embed_tokens[t] · √hidden_size, the factor a
         float32 tensor cast to torch_dtype (bfloat16: √640 = 25.25);
         per layer h = x + post_attention_layernorm(attn(input_layernorm(x))),
         x = h + post_feedforward_layernorm(down(gelu_tanh(gate(r)) · up(r))),
         r = pre_feedforward_layernorm(h); scores · query_pre_attn_scalar^−½;
         layer i is sliding iff (i + 1) % sliding_window_pattern ≠ 0 (or as
         layer_types says): its query at position i sees keys j with
         i − sliding_window < j ≤ i (masking_utils' sliding_window_overlay)
         and RoPE base rope_local_base_freq without scaling; full layers
         rope_theta; logits = cap·tanh(logits/cap) with
         final_logit_softcapping when not null.

`write` makes config.json (LlamaConfig's keys as SmolLM2's hub copies have
them), model.safetensors (F32 or BF16; tools/hf_gpt2.py's writer) and
vocab.json + merges.txt of tools/hf_gpt2.py's byte-level BPE.
tests/interop/test_hf_llama.py (make test-hf) uses the module directly.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_gpt2  # noqa: E402  (safetensors and the byte-level BPE only)


def llama_config(layers=2, hidden=576, heads=9, kv_heads=3, head_dim=None, intermediate=1536,
                 vocab=2000, positions=2048, tied=True, theta=100000.0, eps=1e-5, bias=False,
                 family="llama", rope_scaling=None, gemma=None):
    """config.json as SmolLM2's hub copies have it (bias: attention_bias and
    mlp_bias, as some Llama derivatives set them); family "qwen2" or "qwen3":
    as Qwen2.5's and Qwen3's hub copies have theirs; "gemma3_text": as
    Gemma-3-1B's, with gemma's keys (query_pre_attn_scalar, sliding_window,
    sliding_window_pattern or layer_types, rope_local_base_freq,
    final_logit_softcapping, torch_dtype) over its values; rope_scaling: a
    dict (Llama 3's)."""
    if family == "gemma3_text":
        cfg = {"architectures": ["Gemma3ForCausalLM"], "attention_bias": bias,
               "attention_dropout": 0.0, "attn_logit_softcapping": None, "bos_token_id": 2,
               "eos_token_id": [1, 106], "final_logit_softcapping": None,
               "head_dim": head_dim if head_dim else hidden // heads,
               "hidden_activation": "gelu_pytorch_tanh", "hidden_size": hidden,
               "initializer_range": 0.02, "intermediate_size": intermediate,
               "max_position_embeddings": positions, "model_type": "gemma3_text",
               "num_attention_heads": heads, "num_hidden_layers": layers,
               "num_key_value_heads": kv_heads, "pad_token_id": 0,
               "query_pre_attn_scalar": 256, "rms_norm_eps": eps,
               "rope_local_base_freq": 10000.0, "rope_scaling": rope_scaling,
               "rope_theta": theta, "sliding_window": 512, "sliding_window_pattern": 6,
               "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
               "use_cache": True, "vocab_size": vocab}
        if not tied:
            cfg["tie_word_embeddings"] = False      # (absent: tied)
        cfg.update(gemma or {})
        if "layer_types" in cfg:
            cfg.pop("sliding_window_pattern")
        return cfg
    if family == "qwen2":
        return {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
                "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu",
                "hidden_size": hidden, "initializer_range": 0.02,
                "intermediate_size": intermediate, "max_position_embeddings": positions,
                "max_window_layers": layers, "model_type": "qwen2",
                "num_attention_heads": heads, "num_hidden_layers": layers,
                "num_key_value_heads": kv_heads, "rms_norm_eps": eps,
                "rope_scaling": rope_scaling, "rope_theta": theta, "sliding_window": positions,
                "tie_word_embeddings": tied, "torch_dtype": "bfloat16",
                "transformers_version": "4.40.1", "use_cache": True, "use_sliding_window": False,
                "vocab_size": vocab}
    if family == "qwen3":
        return {"architectures": ["Qwen3ForCausalLM"], "attention_bias": bias,
                "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0,
                "head_dim": head_dim if head_dim else hidden // heads, "hidden_act": "silu",
                "hidden_size": hidden, "initializer_range": 0.02,
                "intermediate_size": intermediate, "max_position_embeddings": positions,
                "max_window_layers": layers, "model_type": "qwen3",
                "num_attention_heads": heads, "num_hidden_layers": layers,
                "num_key_value_heads": kv_heads, "rms_norm_eps": eps,
                "rope_scaling": rope_scaling, "rope_theta": theta, "sliding_window": None,
                "tie_word_embeddings": tied, "torch_dtype": "bfloat16",
                "transformers_version": "4.51.0", "use_cache": True, "use_sliding_window": False,
                "vocab_size": vocab}
    return {"architectures": ["LlamaForCausalLM"], "attention_bias": bias,
            "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0,
            "head_dim": head_dim if head_dim else hidden // heads, "hidden_act": "silu",
            "hidden_size": hidden, "initializer_range": 0.02, "intermediate_size": intermediate,
            "max_position_embeddings": positions, "mlp_bias": bias, "model_type": "llama",
            "num_attention_heads": heads, "num_hidden_layers": layers,
            "num_key_value_heads": kv_heads, "pretraining_tp": 1, "rms_norm_eps": eps,
            "rope_scaling": rope_scaling, "rope_theta": theta, "tie_word_embeddings": tied,
            "torch_dtype": "bfloat16", "transformers_version": "4.42.3", "use_cache": True,
            "vocab_size": vocab}


def dims(cfg):
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    KV = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or C // H
    return C, H, KV, D


# ------------------------------------------------------------------ the model


class Llama:
    """LlamaForCausalLM's forward from a Hugging Face state dict (numpy)."""

    def __init__(self, cfg, tensors):
        self.cfg = cfg
        self.family = cfg.get("model_type", "llama")
        if self.family not in ("llama", "qwen2", "qwen3", "gemma3_text"):
            raise ValueError(f"model_type {self.family}: this reference implements llama, "
                             "qwen2, qwen3 and gemma3_text")
        self.gemma = self.family == "gemma3_text"
        rs = cfg.get("rope_scaling")
        if rs is not None and rs.get("rope_type", rs.get("type")) != "llama3":
            raise ValueError("rope_scaling: this reference implements llama3's only")
        if cfg.get("use_sliding_window") or (self.family == "llama" and
                                             cfg.get("sliding_window") is not None):
            raise ValueError("sliding windows: this reference implements Gemma 3's only")
        if cfg.get("hidden_act", "silu") != "silu" or (
                self.gemma and cfg.get("hidden_activation") != "gelu_pytorch_tanh"):
            raise ValueError("this reference implements silu (gelu_pytorch_tanh: Gemma 3)")
        self.w = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)) for k, v in tensors.items()
                  if not k.endswith("rotary_emb.inv_freq")}
        if cfg.get("tie_word_embeddings", self.gemma):   # Gemma: absent means tied
            head = self.w.pop("lm_head.weight", None)
            if head is not None and not torch.equal(head, self.w["model.embed_tokens.weight"]):
                raise ValueError("lm_head.weight differs from model.embed_tokens.weight: tied")
            self.head = self.w["model.embed_tokens.weight"]
        else:
            self.head = self.w["lm_head.weight"]

    def rms(self, x, weight):
        """Gemma 3's multiplies by (1 + w)."""
        eps = self.cfg.get("rms_norm_eps", 1e-6)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (
            1 + weight if self.gemma else weight)

    def sliding(self, i):
        """Gemma 3: whether layer i is a sliding (local) one."""
        if not self.gemma:
            return False
        types = self.cfg.get("layer_types")
        if types is not None:
            return types[i] == "sliding_attention"
        return (i + 1) % self.cfg.get("sliding_window_pattern", 6) != 0

    def inv_freq(self, D, local=False):
        """θᵢ = rope_theta^(−2i/D), rescaled as Llama 3's rope_scaling says;
        a Gemma 3 sliding layer's: rope_local_base_freq, no scaling."""
        theta = self.cfg.get("rope_theta", 10000.0)
        if local:
            theta = self.cfg.get("rope_local_base_freq", 10000.0)
        inv = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D)
        rs = self.cfg.get("rope_scaling")
        if rs is None or local:
            return inv
        factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        orig = rs["original_max_position_embeddings"]
        out = []
        for t in inv.tolist():
            w = 2 * math.pi / t
            if w < orig / high:
                out.append(t)
            elif w > orig / low:
                out.append(t / factor)
            else:
                s = (orig / w - low) / (high - low)
                out.append((1 - s) * t / factor + s * t)
        return torch.tensor(out, dtype=torch.float64)

    def rope(self, x, pos, local=False):
        """x (heads, T, D): each pair (x_i, x_{i+D/2}) rotated by pos·θᵢ."""
        D = x.shape[-1]
        inv = self.inv_freq(D, local)
        ang = pos[:, None].double() * inv[None, :]             # (T, D/2)
        cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
        rotated = torch.cat([-x[..., D // 2:], x[..., :D // 2]], -1)   # rotate_half
        return x * cos + rotated * sin

    def linear(self, x, name):
        """nn.Linear: x·Wᵀ (+ b when the model has one: attention_bias, mlp_bias)."""
        y = x @ self.w[name + ".weight"].T
        return y + self.w[name + ".bias"] if name + ".bias" in self.w else y

    def attention(self, i, x):
        C, H, KV, D = dims(self.cfg)
        T, p = x.shape[0], f"model.layers.{i}.self_attn."
        q = self.linear(x, p + "q_proj").view(T, H, D).transpose(0, 1)
        k = self.linear(x, p + "k_proj").view(T, KV, D).transpose(0, 1)
        v = self.linear(x, p + "v_proj").view(T, KV, D).transpose(0, 1)
        if self.family in ("qwen3", "gemma3_text"):  # RMSNorm of each head of q and k, before RoPE
            q, k = self.rms(q, self.w[p + "q_norm.weight"]), self.rms(k, self.w[p + "k_norm.weight"])
        pos, local = torch.arange(T), self.sliding(i)
        q, k = self.rope(q, pos, local), self.rope(k, pos, local)
        group = H // KV
        k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)  # head h -> h // group
        scale = self.cfg["query_pre_attn_scalar"] ** -0.5 if self.gemma else 1 / math.sqrt(D)
        s = q @ k.transpose(1, 2) * scale
        masked = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)     # key j > query i
        if local:               # and j <= i - sliding_window
            masked |= torch.tril(torch.ones(T, T, dtype=torch.bool), -self.cfg["sliding_window"])
        s = s.masked_fill(masked, float("-inf"))
        y = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(T, H * D)
        return self.linear(y, p + "o_proj")

    def mlp(self, i, x):
        p = f"model.layers.{i}.mlp."
        gate, up = self.linear(x, p + "gate_proj"), self.linear(x, p + "up_proj")
        act = F.gelu(gate, approximate="tanh") if self.gemma else F.silu(gate)
        return self.linear(act * up, p + "down_proj")

    def embed_scale(self):
        """Gemma 3: √hidden_size as a float32 tensor cast to torch_dtype."""
        dt = {"bfloat16": torch.bfloat16, "float16": torch.float16,
              "float32": torch.float32}[self.cfg.get("torch_dtype", "float32")]
        return float(torch.tensor(self.cfg["hidden_size"] ** 0.5).to(dt))

    @torch.no_grad()
    def logits(self, ids):
        x = self.w["model.embed_tokens.weight"][torch.tensor(ids)]
        if self.gemma:
            x = x * self.embed_scale()
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"model.layers.{i}."
            if self.gemma:      # the branches' own norms before the residual adds
                x = x + self.rms(self.attention(i, self.rms(x, self.w[p + "input_layernorm.weight"])),
                                 self.w[p + "post_attention_layernorm.weight"])
                x = x + self.rms(self.mlp(i, self.rms(x, self.w[p + "pre_feedforward_layernorm.weight"])),
                                 self.w[p + "post_feedforward_layernorm.weight"])
                continue
            x = x + self.attention(i, self.rms(x, self.w[p + "input_layernorm.weight"]))
            x = x + self.mlp(i, self.rms(x, self.w[p + "post_attention_layernorm.weight"]))
        z = self.rms(x, self.w["model.norm.weight"]) @ self.head.T
        cap = self.cfg.get("final_logit_softcapping") if self.gemma else None
        if cap is not None:
            z = torch.tanh(z / cap) * cap
        return z.numpy()

    def greedy(self, ids, n, n_tokens=None):
        """n tokens, each the argmax (lowest id on ties) of a full forward,
        over the first n_tokens ids (rows past a tokenizer's: never picked)."""
        ids, out = list(ids), []
        for _ in range(n):
            nxt = int(np.argmax(self.logits(ids)[-1][:n_tokens]))
            out.append(nxt)
            ids.append(nxt)
        return out


def load_reference(d):
    cfg, tensors = hf_gpt2.read_hf_dir(d)
    return Llama(cfg, tensors)

# ------------------------------------------------------------ HF directory


def random_weights(cfg, seed):
    """LlamaForCausalLM's parameters, float32, the hub's names. Scales as an
    initialised model's (0.02, residual projections / sqrt(2L)) with the
    norms' gains random around 1, so that every term of the forward counts."""
    g = np.random.default_rng(seed)
    C, H, KV, D = dims(cfg)
    L, V, Fi = cfg["num_hidden_layers"], cfg["vocab_size"], cfg["intermediate_size"]

    def n(*shape, std):
        return (g.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    gemma = cfg.get("model_type") == "gemma3_text"
    # a norm's weight: a gain around 1, or Gemma's w of (1 + w) around 0
    norm = (lambda k: n(k, std=0.1)) if gemma else (lambda k: 1 + n(k, std=0.1))
    w = {"model.embed_tokens.weight": n(V, C, std=0.5 / math.sqrt(C) if gemma else 0.5)}
    proj = 0.1 / math.sqrt(2 * L)
    for i in range(L):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(C)
        w[p + "self_attn.q_proj.weight"] = n(H * D, C, std=0.08)
        w[p + "self_attn.k_proj.weight"] = n(KV * D, C, std=0.08)
        w[p + "self_attn.v_proj.weight"] = n(KV * D, C, std=0.05)
        w[p + "self_attn.o_proj.weight"] = n(C, H * D, std=proj)
        w[p + "post_attention_layernorm.weight"] = norm(C)
        if gemma:
            w[p + "pre_feedforward_layernorm.weight"] = norm(C)
            w[p + "post_feedforward_layernorm.weight"] = norm(C)
        w[p + "mlp.gate_proj.weight"] = n(Fi, C, std=0.05)
        w[p + "mlp.up_proj.weight"] = n(Fi, C, std=0.05)
        w[p + "mlp.down_proj.weight"] = n(C, Fi, std=proj)
        if cfg.get("attention_bias"):
            for name, rows in (("q", H * D), ("k", KV * D), ("v", KV * D), ("o", C)):
                w[p + f"self_attn.{name}_proj.bias"] = n(rows, std=0.02)
        if cfg.get("model_type") == "qwen2":    # q, k and v biased, o not
            for name, rows in (("q", H * D), ("k", KV * D), ("v", KV * D)):
                w[p + f"self_attn.{name}_proj.bias"] = n(rows, std=0.3)
        if cfg.get("model_type") in ("qwen3", "gemma3_text"):    # per-head q and k norms
            w[p + "self_attn.q_norm.weight"] = norm(D)
            w[p + "self_attn.k_norm.weight"] = norm(D)
        if cfg.get("mlp_bias"):
            for name, rows in (("gate", Fi), ("up", Fi), ("down", C)):
                w[p + f"mlp.{name}_proj.bias"] = n(rows, std=0.02)
    w["model.norm.weight"] = norm(C)
    if not cfg.get("tie_word_embeddings", gemma):
        w["lm_head.weight"] = n(V, C, std=0.05)
    return w


def write_hf_dir(d, cfg, weights, bpe, dtype="F32", inv_freq=False):
    """config.json, model.safetensors (with the rotary inv_freq buffers older
    saves hold, if asked), vocab.json + merges.txt."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    bpe.save(d)
    t = dict(weights)
    if inv_freq:
        _, _, _, D = dims(cfg)
        inv = (1.0 / cfg["rope_theta"] ** (np.arange(0, D, 2) / D)).astype(np.float32)
        for i in range(cfg["num_hidden_layers"]):
            t[f"model.layers.{i}.self_attn.rotary_emb.inv_freq"] = inv
    hf_gpt2.write_safetensors(os.path.join(d, "model.safetensors"), t, dtype)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="a random-weight Hugging Face Llama directory")
    w.add_argument("dir")
    w.add_argument("--layers", type=int, default=2)
    w.add_argument("--hidden", type=int, default=576)
    w.add_argument("--heads", type=int, default=9)
    w.add_argument("--kv-heads", type=int, default=3)
    w.add_argument("--head-dim", type=int, default=0)
    w.add_argument("--intermediate", type=int, default=1536)
    w.add_argument("--vocab", type=int, default=2000)
    w.add_argument("--untied", action="store_true")
    w.add_argument("--dtype", choices=("F32", "BF16"), default="BF16")
    w.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("run", help="the reference's greedy continuation of token ids")
    r.add_argument("dir")
    r.add_argument("--tokens", default="1,2,3,4")
    r.add_argument("--greedy", type=int, default=16)
    a = ap.parse_args(argv)
    if a.cmd == "write":
        cfg = llama_config(a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim or None,
                           a.intermediate, a.vocab, tied=not a.untied)
        write_hf_dir(a.dir, cfg, random_weights(cfg, a.seed), hf_gpt2.make_bpe(a.vocab), a.dtype)
        print(f"wrote {a.dir}: {json.dumps({k: cfg[k] for k in ('hidden_size', 'num_attention_heads', 'num_key_value_heads', 'head_dim', 'vocab_size', 'tie_word_embeddings')})}, {a.dtype}")
        return 0
    report(load_reference(a.dir), a.tokens, a.greedy)
    return 0


def report(model, tokens, greedy):
    """`run`'s lines: a reference's greedy ids after tokens ("1,2,3") and its
    last position's top logits."""
    ids = [int(x) for x in tokens.split(",")]
    last = model.logits(ids)[-1]
    print("greedy ids:", " ".join(map(str, model.greedy(ids, greedy))))
    print("top logits:", " ".join(f"{i}:{last[i]:.6f}" for i in np.argsort(-last, kind="stable")[:5]))


if __name__ == "__main__":
    sys.exit(main())
