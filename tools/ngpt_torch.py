"""ngpt_torch.py — the reference model in PyTorch (docs/DESIGN.md §1), the shared
Philox4x32-10 generator, the deterministic golden weights, and readers and
writers of the .ngpt checkpoint (docs/FORMAT.md) and golden bundles
(tests/golden/*.bin). Run with Debian's /usr/bin/python3 (python3-torch).

The model's state_dict names are exactly the .ngpt names, plus lm_head.weight
(the same tensor as tok_emb.weight when tied), so a .pt written by
tools/convert.py loads with load_state_dict(strict=True). The variants of
ngpt_config (qkv_bias, tie_lm_head, final_norm, norm, pos, proj_bias, gelu,
the Llama family's norm_type, norm_eps, mlp, mlp_bias, kv_heads,
head_dim, rope_pairs, and Qwen3's qk_norm and Llama 3's rope_scaling with
rope_factor, rope_low_freq_factor, rope_high_freq_factor,
rope_original_context) are ModelConfig fields with the names of ngpt's
--config keys and the same defaults.
"""
import ctypes
import ctypes.util
import dataclasses
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# ------------------------------------------------------------------ config


@dataclasses.dataclass
class ModelConfig:
    """Field names as the original training code stores model_cfg."""
    V: int = 256
    T: int = 256
    C: int = 256
    L: int = 4
    H: int = 4
    d_ff: int = 1024
    dropout: float = 0.1
    rope_theta: float = 10000.0
    qkv_bias: bool = False          # attn.qkv.bias (3C) per block
    tie_lm_head: bool = True        # False: its own lm_head.weight (V, C)
    final_norm: bool = True         # False: no ln_f
    norm: str = "pre"               # "post": LayerNorm after each residual add
    pos: str = "rope"               # "sinusoidal" | "learned": added to tok_emb
    # later switches, last so that positional construction keeps working
    proj_bias: bool = False         # attn.proj.bias (C) per block (GPT-2)
    gelu: str = "exact"             # "tanh": GPT-2's approximation (gelu_new)
    # the Llama family's switches
    norm_type: str = "layer"        # "rms": RMSNorm, weight only
    norm_eps: float = 1e-5          # the eps of either norm
    mlp: str = "gelu"               # "swiglu": fc2(silu(gate) * up), fc1 = [gate; up] (2 d_ff, C)
    mlp_bias: bool = True           # False: no mlp.fc1.bias, mlp.fc2.bias
    kv_heads: int = 0               # 0 = H; grouped-query attention
    head_dim: int = 0               # 0 = C/H
    rope_pairs: str = "interleaved"  # "halves": Hugging Face's rotate_half
    # Qwen3's and Llama 3's
    qk_norm: bool = False           # RMSNorm (norm_eps) over each head of q and k, before RoPE
    rope_scaling: str = "none"      # "llama3": Llama 3.1's rescaled inverse frequencies
    rope_factor: float = 0.0        # and its parameters (0 without rope_scaling)
    rope_low_freq_factor: float = 0.0
    rope_high_freq_factor: float = 0.0
    rope_original_context: int = 0

    @property
    def D(self):
        return self.head_dim or self.C // self.H

    @property
    def KV(self):
        return self.kv_heads or self.H

    @property
    def QKV(self):
        return (self.H + 2 * self.KV) * self.D

    @property
    def F1(self):
        return 2 * self.d_ff if self.mlp == "swiglu" else self.d_ff

    def validate(self):
        for f in ("V", "T", "C", "L", "H", "d_ff"):
            if int(getattr(self, f)) <= 0:
                raise ValueError(f"config: {f}={getattr(self, f)} must be > 0")
        if self.kv_heads < 0 or self.head_dim < 0:
            raise ValueError(f"config: kv_heads={self.kv_heads} and head_dim={self.head_dim} "
                             "must be >= 0 (0: the default)")
        if self.H % self.KV:
            raise ValueError(f"config: H={self.H} is not a multiple of kv_heads={self.KV}")
        if not self.head_dim and self.C % self.H:
            raise ValueError(f"config: C={self.C} is not a multiple of H={self.H} (set head_dim)")
        for f, names in (("norm_type", NORM_TYPES), ("mlp", MLPS), ("rope_pairs", ROPE_PAIRS)):
            if getattr(self, f) not in names:
                raise ValueError(f"config: {f}={getattr(self, f)!r} must be one of {' '.join(names)}")
        if not (self.norm_eps >= 0 and math.isfinite(self.norm_eps)):
            raise ValueError(f"config: norm_eps={self.norm_eps} must be finite and > 0")
        if self.norm not in NORMS:
            raise ValueError(f"config: norm={self.norm!r} must be one of {' '.join(NORMS)}")
        if self.gelu not in GELUS:
            raise ValueError(f"config: gelu={self.gelu!r} must be one of {' '.join(GELUS)}")
        if self.pos not in POSITIONS:
            raise ValueError(f"config: pos={self.pos!r} must be one of {' '.join(POSITIONS)}")
        if self.pos == "rope" and self.D % 2:
            raise ValueError(f"config: head size D={self.D} must be even (RoPE pairs)")
        if self.pos == "sinusoidal" and self.C % 2:
            raise ValueError(f"config: C={self.C} must be even for pos=sinusoidal")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"config: dropout={self.dropout} must be in [0, 1)")
        if not self.rope_theta > 0:
            raise ValueError(f"config: rope_theta={self.rope_theta} must be > 0")
        scaling = (self.rope_factor, self.rope_low_freq_factor, self.rope_high_freq_factor,
                   self.rope_original_context)
        if self.rope_scaling not in ROPE_SCALINGS:
            raise ValueError(f"config: rope_scaling={self.rope_scaling!r} must be one of "
                             f"{' '.join(ROPE_SCALINGS)}")
        if self.rope_scaling == "none" and any(scaling):
            raise ValueError("config: rope_factor, rope_low_freq_factor, rope_high_freq_factor "
                             "and rope_original_context must be 0 without rope_scaling")
        if self.rope_scaling == "llama3" and not (
                self.pos == "rope" and self.rope_factor >= 1 and
                0 < self.rope_low_freq_factor < self.rope_high_freq_factor and
                math.isfinite(self.rope_factor) and math.isfinite(self.rope_high_freq_factor) and
                self.rope_original_context > 0):
            raise ValueError(f"config: rope_scaling=llama3 needs pos=rope, rope_factor >= 1, "
                             f"0 < rope_low_freq_factor < rope_high_freq_factor and "
                             f"rope_original_context > 0, got {scaling}")
        return self


NORMS = ("pre", "post")                       # ngpt_norm_placement order
POSITIONS = ("rope", "sinusoidal", "learned")  # ngpt_pos_encoding order
GELUS = ("exact", "tanh")                      # ngpt_gelu order
NORM_TYPES = ("layer", "rms")                  # ngpt_norm_type order
MLPS = ("gelu", "swiglu")                      # ngpt_mlp order
ROPE_PAIRS = ("interleaved", "halves")         # ngpt_rope_pairs order
ROPE_SCALINGS = ("none", "llama3")             # ngpt_rope_scaling order
LLAMA_FIELDS = ("norm_type", "norm_eps", "mlp", "mlp_bias", "kv_heads", "head_dim", "rope_pairs")
QWEN_LLAMA3_FIELDS = ("qk_norm", "rope_scaling", "rope_factor", "rope_low_freq_factor",
                      "rope_high_freq_factor", "rope_original_context")
VARIANT_FIELDS = ("qkv_bias", "tie_lm_head", "final_norm", "norm", "pos", "proj_bias",
                  "gelu") + LLAMA_FIELDS + QWEN_LLAMA3_FIELDS

TINY = ModelConfig(V=256, T=16, C=32, L=2, H=4, d_ff=64, dropout=0.0)
DEFAULT = ModelConfig()

# ------------------------------------------------------------------- model


def inv_frequency(cfg, i):
    """theta^(-2i/D) in double, then rope_scaling=llama3's rescaling: Hugging
    Face's _compute_llama3_parameters (modeling_rope_utils.py), in double."""
    inv = math.pow(float(cfg.rope_theta), -(2.0 * i) / cfg.D)
    if cfg.rope_scaling != "llama3":
        return inv
    factor, orig = float(cfg.rope_factor), float(cfg.rope_original_context)
    low, high = float(cfg.rope_low_freq_factor), float(cfg.rope_high_freq_factor)
    wavelen = 2.0 * math.pi / inv
    if wavelen < orig / high:
        return inv
    if wavelen > orig / low:
        return inv / factor
    s = (orig / wavelen - low) / (high - low)
    return (1.0 - s) * inv / factor + s * inv


def rope_tables(cfg, T, dtype=torch.float64):
    """(T, D/2) cos and sin. inv_freq_i (inv_frequency) and the angle
    pos*inv_freq in double, the angle rounded to float32 (as the original's
    float32 cache), then cos/sin (in `dtype`). Kept per (D, theta, scaling,
    T, dtype): every layer of every forward asks for the same tables."""
    D = cfg.D
    key = (D, float(cfg.rope_theta), cfg.rope_scaling, float(cfg.rope_factor),
           float(cfg.rope_low_freq_factor), float(cfg.rope_high_freq_factor),
           int(cfg.rope_original_context), int(T), dtype)
    if key not in _ROPE_TABLES:
        half = D // 2
        inv = np.array([inv_frequency(cfg, i) for i in range(half)])
        ang = (np.arange(T, dtype=np.float64)[:, None] * inv[None, :]).astype(np.float32)
        with torch.inference_mode(False):   # usable by autograd later on
            a = torch.from_numpy(ang).to(dtype)
            _ROPE_TABLES[key] = (torch.cos(a), torch.sin(a))
    return _ROPE_TABLES[key]


_ROPE_TABLES = {}


def sinusoid_table(cfg, dtype=torch.float64):
    """(T, C) table of pos=sinusoidal: pe[p, 2i] = sin(p w_i), pe[p, 2i+1] =
    cos(p w_i), w_i = theta^(-2i/C) in double, the angle rounded to float32
    (ngpt_sinusoid_table)."""
    half = cfg.C // 2
    inv = np.array([math.pow(float(cfg.rope_theta), -(2.0 * i) / cfg.C) for i in range(half)])
    ang = torch.from_numpy((np.arange(cfg.T, dtype=np.float64)[:, None] * inv[None, :])
                           .astype(np.float32)).to(dtype)
    return torch.stack((torch.sin(ang), torch.cos(ang)), dim=-1).flatten(-2)


def apply_rope(x, cos, sin, pairs="interleaved"):
    """x (B,H,T,D), interleaved pairs (2i, 2i+1):
    x'_2i = x_2i c - x_2i+1 s, x'_2i+1 = x_2i s + x_2i+1 c;
    halves (i, i + D/2) as Hugging Face's Llama: x cos + rotate_half(x) sin
    with the tables repeated over both halves."""
    if pairs == "halves":
        x0, x1 = x.chunk(2, dim=-1)
        return torch.cat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    y0 = x0 * cos - x1 * sin
    y1 = x0 * sin + x1 * cos
    return torch.stack((y0, y1), dim=-1).flatten(-2)


class RMSNorm(nn.Module):
    """norm_type=rms: x * rsqrt(mean(x^2) + eps) * weight (Llama's, in float)."""

    def __init__(self, C, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(C))     # C: or D, qk_norm's per head

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def make_norm(cfg):
    if cfg.norm_type == "rms":
        return RMSNorm(cfg.C, cfg.norm_eps)
    return nn.LayerNorm(cfg.C, eps=cfg.norm_eps)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.C, cfg.QKV, bias=cfg.qkv_bias)
        if cfg.qk_norm:     # Qwen3's: one weight of D for every head of q, one for k (before
            self.q_norm = RMSNorm(cfg.D, cfg.norm_eps)  # proj: parameters in ngpt's order)
            self.k_norm = RMSNorm(cfg.D, cfg.norm_eps)
        self.proj = nn.Linear(cfg.H * cfg.D, cfg.C, bias=cfg.proj_bias)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)
        self.last_att = None        # (B,H,T,T) pre-dropout probabilities when traced

    def forward(self, x, trace=False, cache=None, pos=0):
        """cache: this layer's (keys, values) buffers of a KVCache; the new
        tokens sit at positions pos.. and see every cached key before them."""
        B, T, C = x.shape
        H, KV, D = self.cfg.H, self.cfg.KV, self.cfg.D
        # columns: q (H heads), k (KV heads), v (KV heads), each head D wide
        q, k, v = self.qkv(x).split((H * D, KV * D, KV * D), dim=2)
        q = q.view(B, T, H, D).transpose(1, 2)
        k, v = (t.view(B, T, KV, D).transpose(1, 2) for t in (k, v))
        if self.cfg.qk_norm:        # after qkv's bias, before RoPE
            q, k = self.q_norm(q), self.k_norm(k)
        if self.cfg.pos == "rope":
            cos, sin = rope_tables(self.cfg, pos + T, x.dtype)
            cos, sin = cos[pos:].to(x.device), sin[pos:].to(x.device)
            q = apply_rope(q, cos, sin, self.cfg.rope_pairs)
            k = apply_rope(k, cos, sin, self.cfg.rope_pairs)
        if cache is not None:                       # keys stored after RoPE, as ngpt's
            keys, values = cache
            keys[:, :, pos:pos + T] = k
            values[:, :, pos:pos + T] = v
            k, v = keys[:, :, :pos + T], values[:, :, :pos + T]
        if KV != H:     # query head h reads key/value head h // (H / KV) (Llama's repeat_kv)
            k, v = (t.repeat_interleave(H // KV, dim=1) for t in (k, v))
        s = (q @ k.transpose(-2, -1)) / math.sqrt(D)
        mask = torch.ones(T, pos + T, dtype=torch.bool, device=x.device).tril(pos)
        s = s.masked_fill(~mask, torch.finfo(torch.float32).min)
        p = F.softmax(s, dim=-1)
        self.last_att = p.detach() if trace else None
        p = self.attn_drop(p)
        o = (p @ v).transpose(1, 2).contiguous().view(B, T, H * D)
        return self.resid_drop(self.proj(o))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg.C, cfg.F1, bias=cfg.mlp_bias)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.C, bias=cfg.mlp_bias)
        self.drop = nn.Dropout(cfg.dropout)
        self.swiglu = cfg.mlp == "swiglu"
        # exact (erf) GELU, or GPT-2's tanh form
        self.approximate = "tanh" if cfg.gelu == "tanh" else "none"

    def forward(self, x):
        if self.swiglu:     # fc1's rows: gate, then up (Llama's gate_proj, up_proj)
            gate, up = self.fc1(x).chunk(2, dim=-1)
            return self.drop(self.fc2(F.silu(gate) * up))
        return self.drop(self.fc2(F.gelu(self.fc1(x), approximate=self.approximate)))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        # registration order = state_dict order = ngpt's tensor order
        self.ln1 = make_norm(cfg)
        self.attn = Attention(cfg)
        self.ln2 = make_norm(cfg)
        self.mlp = MLP(cfg)

        self.post = cfg.norm == "post"

    def forward(self, x, trace=False, cache=None, pos=0):
        if self.post:       # the 2017 Transformer's order
            x = self.ln1(x + self.attn(x, trace, cache, pos))
            return self.ln2(x + self.mlp(x))
        x = x + self.attn(self.ln1(x), trace, cache, pos)
        return x + self.mlp(self.ln2(x))


class NGPT(nn.Module):
    """tokens (B,T) -> tok_emb [+ positions] -> dropout -> L x Block -> [ln_f] ->
    lm_head (tied by default)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.V, cfg.C)
        if cfg.pos == "learned":
            self.pos_emb = nn.Embedding(cfg.T, cfg.C)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.L)])
        self.ln_f = make_norm(cfg) if cfg.final_norm else nn.Identity()
        self.lm_head = nn.Linear(cfg.C, cfg.V, bias=False)
        if cfg.tie_lm_head:
            self.lm_head.weight = self.tok_emb.weight       # tied
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None, trace=False, cache=None):
        """Returns (logits (B,T,V), mean cross-entropy or None). With a
        KVCache, idx continues the cached sequences (at position cache.len)
        and is appended to them."""
        pos = cache.len if cache is not None else 0
        x = self.tok_emb(idx)
        if self.cfg.pos != "rope":
            at = torch.arange(pos, pos + idx.shape[1], device=idx.device)
            if self.cfg.pos == "learned":
                x = x + self.pos_emb(at)
            else:
                x = x + sinusoid_table(self.cfg, x.dtype).to(x.device)[at]
        x = self.drop(x)
        for i, b in enumerate(self.blocks):
            x = b(x, trace, cache.layer(i) if cache is not None else None, pos)
        if cache is not None:
            cache.len += idx.shape[1]
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    def attention_maps(self):
        return [b.attn.last_att for b in self.blocks]


class KVCache:
    """Keys (after RoPE) and values of every layer for `batch` sequences of
    up to cfg.T tokens, preallocated (B, KV, T, D) each, as ngpt's KV cache:
    a token fed to a cache holding n tokens sits at position n."""

    def __init__(self, cfg, batch, dtype=torch.float32, device=None):
        shape = (batch, cfg.KV, cfg.T, cfg.D)
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(cfg.L)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(cfg.L)]
        self.len = 0

    def layer(self, i):
        return self.keys[i], self.values[i]

    def clear(self):
        self.len = 0


def param_names(cfg):
    """Parameter tensors in ngpt order (= state_dict order without a tied
    lm_head; = named_parameters() order)."""
    names = ["tok_emb.weight"] + (["pos_emb.weight"] if cfg.pos == "learned" else [])
    nb = cfg.norm_type == "layer"       # RMSNorm has no bias
    block = ["ln1.weight"] + (["ln1.bias"] if nb else []) + ["attn.qkv.weight"] + \
        (["attn.qkv.bias"] if cfg.qkv_bias else []) + \
        (["attn.q_norm.weight", "attn.k_norm.weight"] if cfg.qk_norm else []) + \
        ["attn.proj.weight"] + (["attn.proj.bias"] if cfg.proj_bias else []) + \
        ["ln2.weight"] + (["ln2.bias"] if nb else []) + ["mlp.fc1.weight"] + \
        (["mlp.fc1.bias"] if cfg.mlp_bias else []) + ["mlp.fc2.weight"] + \
        (["mlp.fc2.bias"] if cfg.mlp_bias else [])
    for i in range(cfg.L):
        names += [f"blocks.{i}.{n}" for n in block]
    if cfg.final_norm:
        names += ["ln_f.weight"] + (["ln_f.bias"] if nb else [])
    return names + ([] if cfg.tie_lm_head else ["lm_head.weight"])


def param_shapes(cfg):
    V, C, Fd, F1, Q = cfg.V, cfg.C, cfg.d_ff, cfg.F1, cfg.QKV
    per = {"ln1.weight": (C,), "ln1.bias": (C,), "attn.qkv.weight": (Q, C),
           "attn.proj.weight": (C, cfg.H * cfg.D), "ln2.weight": (C,), "ln2.bias": (C,),
           "mlp.fc1.weight": (F1, C), "mlp.fc1.bias": (F1,), "mlp.fc2.weight": (C, Fd),
           "mlp.fc2.bias": (C,), "attn.qkv.bias": (Q,), "attn.proj.bias": (C,),
           "attn.q_norm.weight": (cfg.D,), "attn.k_norm.weight": (cfg.D,)}
    out = {}
    for n in param_names(cfg):
        if n in ("tok_emb.weight", "lm_head.weight"):
            out[n] = (V, C)
        elif n == "pos_emb.weight":
            out[n] = (cfg.T, C)
        elif n.startswith("ln_f."):
            out[n] = (C,)
        else:
            out[n] = per[n.split(".", 2)[2]]
    return out

# ------------------------------------------------------------------ Philox

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_LO = np.uint64(0xFFFFFFFF)


def philox4x32_10(ctr, key):
    """ctr: uint32 array (..., 4), key: (k0, k1). Returns uint32 (..., 4).
    Random123's Philox4x32-10: the key is bumped before every round after the first."""
    c = np.asarray(ctr, dtype=np.uint32)
    c0, c1, c2, c3 = (c[..., i].astype(np.uint64) for i in range(4))
    k0, k1 = np.uint32(key[0]), np.uint32(key[1])
    with np.errstate(over="ignore"):
        for rnd in range(10):
            if rnd:
                k0 = np.uint32(k0 + _W0)
                k1 = np.uint32(k1 + _W1)
            p0 = _M0 * c0
            p1 = _M1 * c2
            hi0, lo0 = p0 >> np.uint64(32), p0 & _LO
            hi1, lo1 = p1 >> np.uint64(32), p1 & _LO
            c0, c1, c2, c3 = (hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0)
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def rng_words(seed, stream, step, n):
    """Words 0..n-1 of a stream, = ngpt_rng_u32(seed, stream, step, e) (src/base/rng.h)."""
    groups = np.arange((n + 3) // 4, dtype=np.uint64)
    ctr = np.empty(groups.shape + (4,), dtype=np.uint32)
    ctr[:, 0] = (groups & _LO).astype(np.uint32)
    ctr[:, 1] = (groups >> np.uint64(32)).astype(np.uint32)
    ctr[:, 2] = np.uint32(stream)
    ctr[:, 3] = np.uint32(step & 0xFFFFFFFF)
    key = (seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF)
    return philox4x32_10(ctr, key).reshape(-1)[:n]


# Random123's tests/kat_vectors, philox4x32 10 (github.com/DEShawResearch/random123 @ 9545ff64)
KAT = [  # ctr, key, expected
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def philox_selftest():
    for ctr, key, want in KAT:
        got = tuple(int(w) for w in philox4x32_10(np.array([ctr], dtype=np.uint32), key)[0])
        if got != want:
            raise AssertionError(f"Philox KAT failed: ctr={ctr} key={key} got {got} want {want}")

# ------------------------------------------------------------ golden weights

GOLDEN_STREAM = 0x70000000


def golden_scale(name, ndim):
    """(base, scale) of the golden fill (docs/GOLDEN.md)."""
    leaf = name.rsplit(".", 2)
    is_ln = len(leaf) >= 2 and leaf[-2] in ("ln1", "ln2", "ln_f")
    if is_ln and name.endswith(".weight"):
        return 1.0, 0.1
    if is_ln:
        return 0.0, 0.1
    if ndim == 1:
        return 0.0, 0.02
    return 0.0, 0.035


def golden_weights(cfg, seed):
    """{name: float32 ndarray} in ngpt order: value = base + scale*(float32(2u)-1)."""
    out = {}
    for t, (name, shape) in enumerate(param_shapes(cfg).items()):
        n = int(np.prod(shape))
        w = rng_words(seed, GOLDEN_STREAM | t, 0, n)
        u = (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)
        r = np.float32(2.0) * u - np.float32(1.0)
        base, scale = golden_scale(name, len(shape))
        v = np.float32(base) + np.float32(scale) * r
        assert v.dtype == np.float32
        out[name] = v.reshape(shape)
    return out


def model_from_params(cfg, params, dtype=torch.float32):
    """An NGPT whose parameters are `params` (name -> array), converted exactly."""
    m = NGPT(cfg)
    sd = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in params.items()}
    if cfg.tie_lm_head:
        sd["lm_head.weight"] = sd["tok_emb.weight"]
    m.load_state_dict(sd, strict=True)
    return m.to(dtype)

# ------------------------------------------------------------------ XXH3-64


def _xxh3_impl():
    try:
        import xxhash
        return lambda b: xxhash.xxh3_64_intdigest(bytes(b))
    except ImportError:
        name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
        lib = ctypes.CDLL(name)
        lib.XXH3_64bits.restype = ctypes.c_uint64
        lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return lambda b: int(lib.XXH3_64bits(bytes(b), len(b)))


xxh3_64 = _xxh3_impl()

# --------------------------------------------------------- .ngpt checkpoint

MAGIC = b"NGPTCKPT"
VERSION = 1             # files of float32 tensors only
VERSION_BYTES = 2       # files that hold a byte tensor: a model's tokenizer
TOKENIZER = "tokenizer"
TOKENIZER_MAGIC = b"NGPTTOKN"
DTYPE_F32, DTYPE_Q8, DTYPE_BYTES, DTYPE_Q4, DTYPE_F32_PACKED = 0, 1, 2, 3, 4
META_U64, META_F64, META_I64 = 0, 1, 2
_HDR = struct.Struct("<8sIIQII6iff12Bfii2B2x3fi20x")  # 128 bytes
_TENSOR = struct.Struct("<64sII4IQQ24x")       # 128 bytes: docs/FORMAT.md, "Tensor table entry"
_META = struct.Struct("<48sII8s")              # 64 bytes
assert _HDR.size == 128 and _TENSOR.size == 128 and _META.size == 64


def _align64(n):
    return (n + 63) // 64 * 64


def tokenizer_tokens(image):
    """The token count of a tokenizer file image (docs/FORMAT.md, "Tokenizer
    files"), after checking its magic and size; FormatError otherwise."""
    if len(image) < 64 + 256 + 8 or image[:8] != TOKENIZER_MAGIC:
        raise FormatError("the tokenizer is not an ngpt tokenizer file (no NGPTTOKN)")
    (file_bytes,) = struct.unpack_from("<Q", image, 40)
    if file_bytes != len(image):
        raise FormatError(f"the tokenizer says {file_bytes} bytes but has {len(image)}")
    return struct.unpack_from("<I", image, 12)[0]


def write_ngpt(path, cfg, tensors, meta=None):
    """Writes a .ngpt file. tensors: ordered {name: float32 array}, and
    optionally "tokenizer": the bytes of the model's tokenizer file (a byte
    tensor: the file is then version 2); meta: {key: int | float |
    ("u64"|"i64"|"f64", value)}. Model tensors first in ngpt order, then any
    optim.* tensors in the given order, the tokenizer last (as ngpt writes
    them). A model without optimizer state stores its Linear weights packed
    (dtype 4), as ngpt's importers and inference saves do; a training
    checkpoint stores them row-major, as ngpt's training saves do. Atomic
    (temp file, fsync, rename)."""
    meta = meta or {}
    packed = set() if any(n.startswith("optim.") for n in tensors) else linear_names(cfg)
    items = [(n, np.ascontiguousarray(a, dtype="<f4")) for n, a in tensors.items()
             if n != TOKENIZER]
    if TOKENIZER in tensors:
        image = bytes(tensors[TOKENIZER])
        if tokenizer_tokens(image) != cfg.V:
            raise FormatError(f"the tokenizer has {tokenizer_tokens(image)} tokens but the model's "
                              f"vocabulary is V={cfg.V}")
        items.append((TOKENIZER, image))
    for n, a in items:
        if len(n.encode()) >= 64:
            raise ValueError(f"tensor name too long: {n}")
        if n != TOKENIZER and not 1 <= a.ndim <= 4:
            raise ValueError(f"tensor {n}: ndim {a.ndim} not in 1..4")
    header_bytes = _align64(128 + 128 * len(items) + 64 * len(meta))
    off = header_bytes
    table, blobs = [], []
    for n, a in items:
        if n == TOKENIZER:
            table.append(_TENSOR.pack(n.encode(), DTYPE_BYTES, 1, len(a), 0, 0, 0, off, len(a)))
            blobs.append(a + b"\0" * (_align64(len(a)) - len(a)))
            off += _align64(len(a))
            continue
        shape = list(a.shape) + [0] * (4 - a.ndim)
        dtype = DTYPE_F32_PACKED if n in packed else DTYPE_F32
        data = pack_f32(a) if n in packed else a
        table.append(_TENSOR.pack(n.encode(), dtype, a.ndim, *shape, off, a.nbytes))
        blobs.append(data.tobytes() + b"\0" * (_align64(a.nbytes) - a.nbytes))
        off += _align64(a.nbytes)
    file_bytes = off + 8
    mtab = []
    for k, v in meta.items():
        if isinstance(v, tuple):
            kind, v = v
        else:
            kind = "f64" if isinstance(v, float) else ("u64" if v >= 0 else "i64")
        if len(k.encode()) >= 48:
            raise ValueError(f"metadata key too long: {k}")
        if kind == "u64":
            mtab.append(_META.pack(k.encode(), META_U64, 0, struct.pack("<Q", int(v))))
        elif kind == "i64":
            mtab.append(_META.pack(k.encode(), META_I64, 0, struct.pack("<q", int(v))))
        else:
            mtab.append(_META.pack(k.encode(), META_F64, 0, struct.pack("<d", float(v))))
    version = VERSION_BYTES if TOKENIZER in tensors else VERSION
    hdr = _HDR.pack(MAGIC, version, header_bytes, file_bytes, len(items), len(meta),
                    cfg.V, cfg.T, cfg.C, cfg.L, cfg.H, cfg.d_ff,
                    float(cfg.dropout), float(cfg.rope_theta), int(cfg.qkv_bias),
                    int(cfg.tie_lm_head), int(cfg.final_norm), NORMS.index(cfg.norm),
                    POSITIONS.index(cfg.pos), 0, int(cfg.proj_bias), GELUS.index(cfg.gelu),
                    NORM_TYPES.index(cfg.norm_type), MLPS.index(cfg.mlp), int(not cfg.mlp_bias),
                    ROPE_PAIRS.index(cfg.rope_pairs),
                    # 0 for the default eps, as ngpt writes it
                    0.0 if np.float32(cfg.norm_eps) in (np.float32(1e-5), 0) else float(cfg.norm_eps),
                    int(cfg.kv_heads), int(cfg.head_dim),
                    int(cfg.qk_norm), ROPE_SCALINGS.index(cfg.rope_scaling),
                    float(cfg.rope_factor), float(cfg.rope_low_freq_factor),
                    float(cfg.rope_high_freq_factor), int(cfg.rope_original_context))
    head = hdr + b"".join(table) + b"".join(mtab)
    body = head + b"\0" * (header_bytes - len(head)) + b"".join(blobs)
    assert len(body) == file_bytes - 8
    data = body + struct.pack("<Q", xxh3_64(body))
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class FormatError(ValueError):
    pass


Q8_GROUP, Q8_NR, Q8_BLOCK = 32, 16, 576     # src/q8.h; docs/FORMAT.md, "8-bit weights"


def q8_bytes(n, k):
    return (n + Q8_NR - 1) // Q8_NR * ((k + Q8_GROUP - 1) // Q8_GROUP) * Q8_BLOCK


def dequantize_q8(data, off, n, k):
    """An 8-bit (dtype 1) tensor (n, k) as float32: value * scale of its
    group, the product ngpt's embed_q8 computes (float32, exact rounding)."""
    P, G = (n + Q8_NR - 1) // Q8_NR, (k + Q8_GROUP - 1) // Q8_GROUP
    blk = np.frombuffer(data, dtype=np.uint8, count=P * G * Q8_BLOCK, offset=off).reshape(P, G, Q8_BLOCK)
    scales = blk[:, :, :64].copy().view("<f4").reshape(P, G, Q8_NR)
    q = blk[:, :, 64:].copy().view(np.int8).reshape(P, G, Q8_GROUP // 4, Q8_NR, 4)
    w = q.astype(np.float32) * scales[:, :, None, :, None]     # (panel, group, quad, row, byte)
    w = w.transpose(0, 3, 1, 2, 4).reshape(P * Q8_NR, G * Q8_GROUP)
    return np.ascontiguousarray(w[:n, :k], dtype=np.float32)


Q4_BLOCK = 320      # src/q4.h; docs/FORMAT.md, "4-bit weights"


def q4_bytes(n, k):
    return (n + Q8_NR - 1) // Q8_NR * ((k + Q8_GROUP - 1) // Q8_GROUP) * Q4_BLOCK


def dequantize_q4(data, off, n, k):
    """A 4-bit (dtype 3) tensor (n, k) as float32: value * scale of its
    group (float32, exact rounding). Byte b[h][row][t] of a block holds
    input 4h + t in its low nibble and 16 + 4h + t in its high one, two's
    complement."""
    P, G = (n + Q8_NR - 1) // Q8_NR, (k + Q8_GROUP - 1) // Q8_GROUP
    blk = np.frombuffer(data, dtype=np.uint8, count=P * G * Q4_BLOCK, offset=off).reshape(P, G, Q4_BLOCK)
    scales = blk[:, :, :64].copy().view("<f4").reshape(P, G, Q8_NR)
    b = blk[:, :, 64:].reshape(P, G, 4, Q8_NR, 4)                # (panel, group, quad, row, byte)
    nib = np.concatenate([b & 15, b >> 4], axis=2).astype(np.int16)   # quads 0..3, then 4..7
    q = np.where(nib >= 8, nib - 16, nib)
    w = q.astype(np.float32) * scales[:, :, None, :, None]
    w = w.transpose(0, 3, 1, 2, 4).reshape(P * Q8_NR, G * Q8_GROUP)
    return np.ascontiguousarray(w[:n, :k], dtype=np.float32)


def unpack_f32(data, off, n, k):
    """A packed float32 (dtype 4) Linear weight (n, k) in the state_dict's
    rows: floor(n/16) panels, panel p holding W[16p + j][kk] at kk*16 + j,
    then the last n % 16 rows as they are."""
    w = np.frombuffer(data, dtype="<f4", count=n * k, offset=off)
    full = n // Q8_NR * Q8_NR
    panels = w[:full * k].reshape(n // Q8_NR, k, Q8_NR).transpose(0, 2, 1).reshape(full, k)
    return np.concatenate([panels, w[full * k:].reshape(n - full, k)]).astype(np.float32)


def pack_f32(a):
    """A float32 Linear weight (n, k) as dtype 4 stores it (unpack_f32's
    inverse): its full panels of 16 rows transposed, the last rows as they are."""
    n, k = a.shape
    full = n // Q8_NR * Q8_NR
    panels = a[:full].reshape(n // Q8_NR, Q8_NR, k).transpose(0, 2, 1).reshape(-1)
    return np.ascontiguousarray(np.concatenate([panels, a[full:].reshape(-1)]), dtype="<f4")


def linear_names(cfg):
    """The float32 Linear weights of cfg's model: what ngpt stores packed."""
    names = ["tok_emb.weight" if cfg.tie_lm_head else "lm_head.weight"]
    for i in range(cfg.L):
        names += [f"blocks.{i}.{n}.weight" for n in ("attn.qkv", "attn.proj", "mlp.fc1", "mlp.fc2")]
    return set(names)


def read_ngpt(path, quantized=None):
    """Reads and validates a .ngpt file. Returns (cfg, {name: float32 array}, {key: value});
    the tensors of a model with 8-bit or 4-bit weights (weights=q8, q4; byte 69
    is 3 for q4 with a 4-bit lm_head, whose tensor's dtype says so) come
    dequantized,
    and their names are appended to the list `quantized` when one is given;
    a model's tokenizer, if the file carries one, is tensors["tokenizer"]:
    the bytes of its tokenizer file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 128 + 8:
        raise FormatError(f"{path}: {len(data)} bytes is too short for an ngpt checkpoint")
    (magic, version, header_bytes, file_bytes, n_t, n_m, V, T, C, L, H, d_ff, dropout, theta,
     qkv_bias, tie, final_norm, norm, pos, weights, proj_bias, gelu, norm_type, mlp, no_mlp_bias,
     rope_pairs, norm_eps, kv_heads, head_dim, qk_norm, rope_scaling, rope_factor, rope_low,
     rope_high, rope_original) = _HDR.unpack_from(data, 0)
    if magic != MAGIC:
        raise FormatError(f"{path}: not an ngpt checkpoint (magic {magic!r})")
    if version not in (VERSION, VERSION_BYTES):
        raise FormatError(f"{path}: format version {version}, this tool reads {VERSION} and "
                          f"{VERSION_BYTES}")
    if file_bytes != len(data):
        raise FormatError(f"{path}: header says {file_bytes} bytes, file has {len(data)} (truncated?)")
    (want,) = struct.unpack_from("<Q", data, file_bytes - 8)
    got = xxh3_64(data[:file_bytes - 8])
    if got != want:
        raise FormatError(f"{path}: checksum mismatch (stored {want:016x}, computed {got:016x})")
    if max(qkv_bias, tie, final_norm, proj_bias, no_mlp_bias) > 1 or weights > 3 or norm >= len(NORMS) \
            or pos >= len(POSITIONS) or gelu >= len(GELUS) or norm_type >= len(NORM_TYPES) \
            or mlp >= len(MLPS) or rope_pairs >= len(ROPE_PAIRS) or qk_norm > 1 \
            or rope_scaling >= len(ROPE_SCALINGS):
        raise FormatError(f"{path}: unknown model variant (qkv_bias={qkv_bias} tie_lm_head={tie} "
                          f"final_norm={final_norm} norm={norm} pos={pos} weights={weights} "
                          f"proj_bias={proj_bias} gelu={gelu} norm_type={norm_type} mlp={mlp} "
                          f"no_mlp_bias={no_mlp_bias} rope_pairs={rope_pairs} qk_norm={qk_norm} "
                          f"rope_scaling={rope_scaling})")
    if header_bytes % 64 or header_bytes < 128 + 128 * n_t + 64 * n_m or header_bytes > file_bytes - 8:
        raise FormatError(f"{path}: bad header_bytes {header_bytes}")
    # the shortest decimal that rounds to the stored float32 (0.1, not 0.10000000149)
    f32 = lambda x: float(str(np.float32(x)))  # noqa: E731
    cfg = ModelConfig(V, T, C, L, H, d_ff, f32(dropout), f32(theta), bool(qkv_bias), bool(tie),
                      bool(final_norm), NORMS[norm], POSITIONS[pos], bool(proj_bias),
                      GELUS[gelu], NORM_TYPES[norm_type], f32(norm_eps) if norm_eps else 1e-5,
                      MLPS[mlp], not no_mlp_bias, kv_heads, head_dim,
                      ROPE_PAIRS[rope_pairs], bool(qk_norm), ROPE_SCALINGS[rope_scaling],
                      f32(rope_factor), f32(rope_low), f32(rope_high), rope_original).validate()
    tensors = {}
    for i in range(n_t):
        name, dtype, ndim, s0, s1, s2, s3, off, nbytes = _TENSOR.unpack_from(data, 128 + 128 * i)
        if b"\0" not in name:
            raise FormatError(f"{path}: tensor {i}: name is not NUL-terminated")
        name = name.split(b"\0", 1)[0].decode()
        shape = (s0, s1, s2, s3)[:ndim]
        byte_tensor = dtype == DTYPE_BYTES and version == VERSION_BYTES and ndim == 1 \
            and name == TOKENIZER
        if not (dtype in (DTYPE_F32, DTYPE_Q8, DTYPE_Q4, DTYPE_F32_PACKED) or byte_tensor) \
                or not 1 <= ndim <= 4 or (dtype in (DTYPE_Q8, DTYPE_Q4, DTYPE_F32_PACKED) and ndim != 2):
            raise FormatError(f"{path}: tensor {name}: dtype {dtype} / ndim {ndim} unknown")
        want = (int(np.prod(shape)) if byte_tensor else
                q8_bytes(*shape) if dtype == DTYPE_Q8 else q4_bytes(*shape) if dtype == DTYPE_Q4
                else 4 * int(np.prod(shape)))
        if nbytes != want or off % 64 or off < header_bytes or off + nbytes > file_bytes - 8:
            raise FormatError(f"{path}: tensor {name}: bad offset/size")
        if name in tensors:
            raise FormatError(f"{path}: tensor {name} appears twice")
        if byte_tensor:
            tensors[name] = bytes(data[off:off + nbytes])
            if tokenizer_tokens(tensors[name]) != V:
                raise FormatError(f"{path}: its tokenizer has {tokenizer_tokens(tensors[name])} "
                                  f"tokens but its model's vocabulary is V={V}")
        elif dtype in (DTYPE_Q8, DTYPE_Q4):
            tensors[name] = (dequantize_q8 if dtype == DTYPE_Q8 else dequantize_q4)(data, off, *shape)
            if quantized is not None:
                quantized.append(name)
        elif dtype == DTYPE_F32_PACKED:
            tensors[name] = unpack_f32(data, off, *shape)
        else:
            tensors[name] = np.frombuffer(data, dtype="<f4", count=nbytes // 4, offset=off) \
                .reshape(shape).astype(np.float32)
    meta = {}
    base = 128 + 128 * n_t
    for i in range(n_m):
        key, kind, _, raw = _META.unpack_from(data, base + 64 * i)
        if b"\0" not in key:
            raise FormatError(f"{path}: metadata {i}: key is not NUL-terminated")
        key = key.split(b"\0", 1)[0].decode()
        fmt = {META_U64: "<Q", META_F64: "<d", META_I64: "<q"}.get(kind)
        if fmt is None:
            raise FormatError(f"{path}: metadata {key}: unknown type {kind}")
        meta[key] = struct.unpack(fmt, raw)[0]
    shapes = param_shapes(cfg)
    for n, s in shapes.items():
        if n not in tensors:
            raise FormatError(f"{path}: model tensor {n} is missing")
        if tensors[n].shape != s:
            raise FormatError(f"{path}: tensor {n} has shape {tensors[n].shape}, config implies {s}")
    for n in tensors:
        if n not in shapes and not n.startswith("optim.") and n != TOKENIZER:
            raise FormatError(f"{path}: unknown tensor {n}")
    return cfg, tensors, meta

# ----------------------------------------------------------- golden bundles

GOLD_MAGIC = b"NGPTGOLD"


def write_golden(path, entries):
    """entries: ordered {name: array}; stored as float32 (ints exact below 2^24)."""
    out = [GOLD_MAGIC, struct.pack("<II", 1, len(entries))]
    for name, a in entries.items():
        a = np.asarray(a)
        if a.ndim == 0:
            a = a.reshape(1)
        f = np.ascontiguousarray(a, dtype="<f4")
        if a.dtype.kind in "iu":
            assert np.array_equal(f.astype(np.int64), a.astype(np.int64)), name
        assert 1 <= f.ndim <= 4 and len(name.encode()) < 64, name
        shape = list(f.shape) + [0] * (4 - f.ndim)
        out.append(struct.pack("<64sI4I", name.encode(), f.ndim, *shape))
        out.append(f.tobytes())
    with open(path, "wb") as fh:
        fh.write(b"".join(out))


def read_golden(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != GOLD_MAGIC:
        raise FormatError(f"{path}: not a golden bundle")
    version, n = struct.unpack_from("<II", data, 8)
    if version != 1:
        raise FormatError(f"{path}: golden version {version}")
    pos, out = 16, {}
    for _ in range(n):
        name, ndim, *shape = struct.unpack_from("<64sI4I", data, pos)
        pos += 84
        shape = tuple(shape[:ndim])
        cnt = int(np.prod(shape))
        out[name.split(b"\0", 1)[0].decode()] = np.frombuffer(
            data, dtype="<f4", count=cnt, offset=pos).reshape(shape).copy()
        pos += 4 * cnt
    if pos != len(data):
        raise FormatError(f"{path}: {len(data) - pos} trailing bytes")
    return out


if __name__ == "__main__":
    philox_selftest()
    print("Philox4x32-10 KAT: 3/3 ok")
