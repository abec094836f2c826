#!/usr/bin/python3
"""hf_gpt2.py — an independent PyTorch reference of Hugging Face's GPT-2, and
a writer of random-weight Hugging Face model directories to test importers.

  /usr/bin/python3 tools/hf_gpt2.py write DIR [--layers L] [--embd C] [--heads H]
        [--vocab V] [--positions P] [--dtype F32|BF16] [--prefix] [--shards N]
        [--masks] [--seed S]
  /usr/bin/python3 tools/hf_gpt2.py run DIR [--prompt TEXT | --tokens 1,2,3] [--greedy N]

The model is written from GPT-2's documented architecture (transformers'
src/transformers/models/gpt2/modeling_gpt2.py,
https://github.com/huggingface/transformers), not imported from transformers:
x = wte[t] + wpe[p]; per block x += attn(ln_1 x), x += mlp(ln_2 x); ln_f;
logits = x · wteᵀ (the head is tied). Conv1D layers hold their weight as
(in, out): y = x·W + b. attn.c_attn's columns are q | k | v, head h at
h·hd..(h+1)·hd; scores q·kᵀ/√hd (and /(layer+1) with
scale_attn_by_inverse_layer_idx), causal, softmax; attn.c_proj; mlp: c_fc,
gelu_new 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))), c_proj. LayerNorm eps is
config.json's layer_norm_epsilon. The reference computes in float64 from the
weights exactly as the files store them (BF16 widened exactly).

`write` makes what a user downloads from the hub, with random weights:
config.json; model.safetensors written by hand (an 8-byte little-endian
header length, the JSON header space-padded to 8 bytes, the raw
little-endian tensors; no safetensors package), F32 or BF16 (rounded to
nearest even), with bare names as the hub's gpt2 (--masks adds its
attn.bias / attn.masked_bias buffers) or with GPT2LMHeadModel's
`transformer.` prefix and lm_head.weight (--prefix), or split into N shards
with model.safetensors.index.json (--shards); and vocab.json + merges.txt
of a byte-level BPE laid out as GPT-2's: ids 0..255 the byte symbols in
bytes_to_unicode order, merge k makes id 256 + k, <|endoftext|> is the last
id. Its merges are learned on a sample of English (each token has exactly
one split into two tokens, so applying merges by pair rank, as Hugging Face
does, and by the rank of the merged token, as tiktoken and ngpt do, give the
same ids), then filled up to the vocabulary size with tokens of bytes
0x80..0xFF, which ASCII text never meets.

`run` prints the ids of the prompt, the greedy continuation and the last
position's top logits. tests/interop/test_hf_gpt2.py (make test-hf) uses the
module directly.
"""
import argparse
import json
import math
import os
import re
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

EOT = "<|endoftext|>"

# ------------------------------------------------------------------ the model


class Conv1D(nn.Module):
    """transformers' Conv1D: a Linear whose weight is stored (in, out)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_in, n_out, dtype=torch.float64))
        self.bias = nn.Parameter(torch.zeros(n_out, dtype=torch.float64))

    def forward(self, x):
        return x @ self.weight + self.bias


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


class Attention(nn.Module):
    def __init__(self, cfg, layer):
        super().__init__()
        C = cfg["n_embd"]
        self.n_head, self.layer = cfg["n_head"], layer
        self.by_layer = bool(cfg.get("scale_attn_by_inverse_layer_idx", False))
        self.scale = bool(cfg.get("scale_attn_weights", True))
        self.c_attn = Conv1D(C, 3 * C)
        self.c_proj = Conv1D(C, C)

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, hd).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-2, -1)
        if self.scale:
            s = s / math.sqrt(hd)
        if self.by_layer:
            s = s / float(self.layer + 1)
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        s = s.masked_fill(~causal, float("-inf"))
        y = F.softmax(s, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        inner = cfg.get("n_inner") or 4 * C
        self.c_fc = Conv1D(C, inner)
        self.c_proj = Conv1D(inner, C)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, cfg, layer):
        super().__init__()
        C, eps = cfg["n_embd"], cfg.get("layer_norm_epsilon", 1e-5)
        self.ln_1 = nn.LayerNorm(C, eps=eps, dtype=torch.float64)
        self.attn = Attention(cfg, layer)
        self.ln_2 = nn.LayerNorm(C, eps=eps, dtype=torch.float64)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.wte = nn.Embedding(cfg["vocab_size"], C, dtype=torch.float64)
        self.wpe = nn.Embedding(cfg["n_positions"], C, dtype=torch.float64)
        self.h = nn.ModuleList(Block(cfg, i) for i in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(C, eps=cfg.get("layer_norm_epsilon", 1e-5), dtype=torch.float64)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        x = self.wte(ids) + self.wpe(pos)[None]
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    """Its state_dict names are Hugging Face's: transformer.h.0.attn.c_attn.weight, ..."""

    def __init__(self, cfg):
        super().__init__()
        act = cfg.get("activation_function", "gelu_new")
        if act != "gelu_new":
            raise ValueError(f"activation_function {act!r}: this reference implements gelu_new")
        self.cfg = cfg
        self.transformer = GPT2Model(cfg)

    def forward(self, ids):
        """ids (B, T) int64 -> logits (B, T, V) float64; the head is wte."""
        return self.transformer(ids) @ self.transformer.wte.weight.T

    def load_hf(self, tensors):
        """Loads a Hugging Face state dict (bare or transformer.-prefixed names,
        numpy arrays); buffers (attn.bias, attn.masked_bias) and a tied
        lm_head.weight are checked and skipped. Every parameter must be there."""
        own = dict(self.transformer.named_parameters())
        seen = set()
        for name, arr in tensors.items():
            bare = name[len("transformer."):] if name.startswith("transformer.") else name
            if re.fullmatch(r"h\.\d+\.attn\.(bias|masked_bias)", bare):
                continue
            if bare == "lm_head.weight":
                if not np.array_equal(arr, tensors.get("transformer.wte.weight", tensors.get("wte.weight"))):
                    raise ValueError("lm_head.weight differs from wte.weight: GPT-2's head is tied")
                continue
            if bare not in own:
                raise ValueError(f"unexpected tensor {name}")
            p = own[bare]
            if tuple(p.shape) != tuple(arr.shape):
                raise ValueError(f"{name}: shape {arr.shape}, the model's {tuple(p.shape)}")
            with torch.no_grad():
                p.copy_(torch.from_numpy(np.asarray(arr, dtype=np.float64)))
            seen.add(bare)
        missing = sorted(set(own) - seen)
        if missing:
            raise ValueError(f"missing tensors: {', '.join(missing[:4])}")
        return self

    @torch.no_grad()
    def logits(self, ids):
        return self(torch.tensor([ids], dtype=torch.int64))[0].numpy()

    @torch.no_grad()
    def greedy(self, ids, n):
        """n tokens, each the argmax (lowest id on ties) of a full forward."""
        ids, out = list(ids), []
        for _ in range(n):
            ctx = ids[-self.cfg["n_positions"]:]
            nxt = int(np.argmax(self.logits(ctx)[-1]))
            out.append(nxt)
            ids.append(nxt)
        return out


def hf_to_ngpt_names(cfg):
    """Hugging Face name -> (ngpt name, transpose) for tools/convert.py's export."""
    m = {"wte.weight": ("tok_emb.weight", False), "wpe.weight": ("pos_emb.weight", False),
         "ln_f.weight": ("ln_f.weight", False), "ln_f.bias": ("ln_f.bias", False)}
    for i in range(cfg["n_layer"]):
        for hf, ng, t in (("ln_1.weight", "ln1.weight", False), ("ln_1.bias", "ln1.bias", False),
                          ("attn.c_attn.weight", "attn.qkv.weight", True),
                          ("attn.c_attn.bias", "attn.qkv.bias", False),
                          ("attn.c_proj.weight", "attn.proj.weight", True),
                          ("attn.c_proj.bias", "attn.proj.bias", False),
                          ("ln_2.weight", "ln2.weight", False), ("ln_2.bias", "ln2.bias", False),
                          ("mlp.c_fc.weight", "mlp.fc1.weight", True),
                          ("mlp.c_fc.bias", "mlp.fc1.bias", False),
                          ("mlp.c_proj.weight", "mlp.fc2.weight", True),
                          ("mlp.c_proj.bias", "mlp.fc2.bias", False)):
            m[f"h.{i}.{hf}"] = (f"blocks.{i}.{ng}", t)
    return m


def from_ngpt_state(cfg, sd):
    """A Hugging Face state dict (bare names, numpy) from an ngpt state dict
    (tools/convert.py export's model_state): Linear (out, in) -> Conv1D (in, out)."""
    out = {}
    for hf, (ng, t) in hf_to_ngpt_names(cfg).items():
        a = sd[ng].detach().cpu().numpy() if torch.is_tensor(sd[ng]) else np.asarray(sd[ng])
        out[hf] = np.ascontiguousarray(a.T if t else a)
    return out

# -------------------------------------------------------------- safetensors


def bf16_round(a):
    """float32 -> the bfloat16 nearest (ties to even), as uint16 bits."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def bf16_widen(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors, dtype):
    """tensors: name -> float32 array, written as dtype (F32, BF16 or F16,
    each rounded to nearest even), in the given order, offsets from the
    start of the data."""
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        raw = (bf16_round(a) if dtype == "BF16" else
               np.ascontiguousarray(a, dtype="<f2" if dtype == "F16" else "<f4")).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """name -> float32 array (F32, BF16 and F16 widened exactly)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base, out = 8 + n, {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        raw = data[base + b:base + e]
        if t["dtype"] == "F32":
            a = np.frombuffer(raw, dtype="<f4")
        elif t["dtype"] == "BF16":
            a = bf16_widen(np.frombuffer(raw, dtype="<u2"))
        elif t["dtype"] == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            raise ValueError(f"{path}: {name} has dtype {t['dtype']}")
        out[name] = a.reshape(t["shape"]).copy()
    return out


def read_hf_dir(d):
    """config.json and every tensor of a model directory (one file or shards)."""
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    index = os.path.join(d, "model.safetensors.index.json")
    tensors = {}
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
        for fn in files:
            tensors.update(read_safetensors(os.path.join(d, fn)))
    else:
        tensors = read_safetensors(os.path.join(d, "model.safetensors"))
    return cfg, tensors


def load_reference(d):
    cfg, tensors = read_hf_dir(d)
    return GPT2LMHeadModel(cfg).load_hf(tensors)

# -------------------------------------------------------------- tokenizer


def bytes_to_unicode():
    """GPT-2's byte -> character map, in its order (the order of ids 0..255)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) +
          list(range(0xAE, 0xFF + 1)))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return list(zip(bs, map(chr, cs)))


PRETOK = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")

SAMPLE = """Once upon a time there was a small computer on a desk by the window. Every
morning it read the news, the weather and the letters that people wrote to each
other, and every evening it tried to write a little story of its own. The first
stories were short and strange, but the computer kept reading and kept writing.
After many days the stories were longer, and some of them were even good. The
people in the house began to read them at breakfast: "What did the machine write
today?" they asked, and they laughed, and sometimes they were quiet for a while.
It is 12 degrees outside, there are 3 apples on the table and 1024 words in the
book. Don't stop; we'll see what they've made of it, and I'm sure you'd agree.
"""


class ByteBPE:
    """A byte-level BPE as GPT-2's files describe it: vocab (token -> id) and
    merges (pairs by rank)."""

    def __init__(self, vocab, merges):
        self.vocab, self.merges = vocab, merges
        self.rank = {m: i for i, m in enumerate(merges)}
        self.enc = dict(bytes_to_unicode())

    def encode(self, text):
        """Hugging Face's algorithm: merge the adjacent pair of lowest rank
        until none applies. ASCII text only (the pre-tokenizer's classes)."""
        text.encode("ascii")
        ids = []
        for piece in PRETOK.findall(text):
            syms = [self.enc[b] for b in piece.encode()]
            while len(syms) > 1:
                pairs = [(self.rank.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(syms, syms[1:]))]
                r, i = min(pairs)
                if r == 1 << 30:
                    break
                syms[i:i + 2] = [syms[i] + syms[i + 1]]
            ids += [self.vocab[s] for s in syms]
        return ids

    def decode(self, ids):
        dec = {c: b for b, c in bytes_to_unicode()}
        inv = {i: t for t, i in self.vocab.items()}
        return b"".join(bytes(dec[c] for c in inv[i]) if inv[i] != EOT else EOT.encode() for i in ids)

    def save(self, d):
        with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(self.vocab, f, ensure_ascii=False)
        with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            for a, b in self.merges:
                f.write(f"{a} {b}\n")


def make_bpe(vocab_size, learned=400):
    """GPT-2's layout with vocab_size ids: 256 byte symbols, vocab_size - 257
    merges, <|endoftext|>. Learned merges first (see the module's doc), then
    tokens of high bytes."""
    symbols = [c for _, c in bytes_to_unicode()]
    vocab = {c: i for i, c in enumerate(symbols)}
    n_merges = vocab_size - 257
    enc = dict(bytes_to_unicode())
    words = {}
    for piece in PRETOK.findall(SAMPLE):
        w = tuple(enc[b] for b in piece.encode())
        words[w] = words.get(w, 0) + 1
    merges = []

    def unique_split(tok, a, b):
        """tok = a + b has no other split into two tokens, and no longer
        token gains one from tok."""
        for i in range(1, len(tok)):
            if (tok[:i], tok[i:]) != (a, b) and tok[:i] in vocab and tok[i:] in vocab:
                return False
        for t in vocab:
            if len(t) > len(tok) and ((t.startswith(tok) and t[len(tok):] in vocab) or
                                      (t.endswith(tok) and t[:-len(tok)] in vocab)):
                return False
        return True

    banned = set()
    while len(merges) < min(learned, n_merges):
        counts = {}
        for w, n in words.items():
            for p in zip(w, w[1:]):
                counts[p] = counts.get(p, 0) + n
        best = [p for p in sorted(counts, key=lambda p: (-counts[p], p))
                if p not in banned and p[0] + p[1] not in vocab]
        pick = next((p for p in best if unique_split(p[0] + p[1], *p)), None)
        if pick is None:
            break
        banned.update(p for p in best[:best.index(pick)])
        a, b = pick
        merges.append(pick)
        vocab[a + b] = 256 + len(merges) - 1
        new = {}
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == pick:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + n
        words = new
    # the rest: tokens of bytes 0x80..0xFF (never in ASCII text), two bytes,
    # then a two-byte token and one byte, ... each made one way only
    high = [enc[b] for b in range(0x80, 0x100)]
    level = high
    while len(merges) < n_merges:
        nxt = []
        for a in level:
            for b in high:
                if len(merges) == n_merges:
                    break
                if a + b in vocab:
                    continue
                merges.append((a, b))
                vocab[a + b] = 256 + len(merges) - 1
                nxt.append(a + b)
        level = nxt
    vocab[EOT] = vocab_size - 1
    assert len(vocab) == vocab_size
    return ByteBPE(vocab, merges)

# ------------------------------------------------------------ HF directory


def random_weights(cfg, seed):
    """GPT-2's parameters, float32, bare names, the hub's order. Scales are
    GPT-2-like (wte 0.1, layers 0.02 with c_proj / sqrt(2L)) with LayerNorm
    gains and every bias random, so that no term of the forward is idle."""
    g = np.random.default_rng(seed)
    C, L, V, P = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"], cfg["n_positions"]
    inner = cfg.get("n_inner") or 4 * C

    def n(*shape, std):
        return (g.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    w = {"wte.weight": n(V, C, std=0.1), "wpe.weight": n(P, C, std=0.02)}
    proj = 0.02 / math.sqrt(2 * L)
    for i in range(L):
        p = f"h.{i}."
        w[p + "ln_1.weight"] = 1 + n(C, std=0.1)
        w[p + "ln_1.bias"] = n(C, std=0.02)
        w[p + "attn.c_attn.weight"] = n(C, 3 * C, std=0.05)
        w[p + "attn.c_attn.bias"] = n(3 * C, std=0.02)
        w[p + "attn.c_proj.weight"] = n(C, C, std=proj * 4)
        w[p + "attn.c_proj.bias"] = n(C, std=0.02)
        w[p + "ln_2.weight"] = 1 + n(C, std=0.1)
        w[p + "ln_2.bias"] = n(C, std=0.02)
        w[p + "mlp.c_fc.weight"] = n(C, inner, std=0.05)
        w[p + "mlp.c_fc.bias"] = n(inner, std=0.02)
        w[p + "mlp.c_proj.weight"] = n(inner, C, std=proj * 4)
        w[p + "mlp.c_proj.bias"] = n(C, std=0.02)
    w["ln_f.weight"] = 1 + n(C, std=0.1)
    w["ln_f.bias"] = n(C, std=0.02)
    return w


def gpt2_config(layers=12, embd=768, heads=12, vocab=50257, positions=1024):
    """config.json as the hub's gpt2 has it (n_inner null: 4·n_embd)."""
    return {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
            "attn_pdrop": 0.1, "bos_token_id": vocab - 1, "embd_pdrop": 0.1,
            "eos_token_id": vocab - 1, "initializer_range": 0.02, "layer_norm_epsilon": 1e-05,
            "model_type": "gpt2", "n_ctx": positions, "n_embd": embd, "n_head": heads,
            "n_inner": None, "n_layer": layers, "n_positions": positions, "resid_pdrop": 0.1,
            "scale_attn_weights": True, "summary_activation": None, "vocab_size": vocab}


def write_hf_dir(d, cfg, weights, bpe, dtype="F32", prefix=False, shards=1, masks=False):
    """The directory as the hub lays it out (see the module's doc)."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    bpe.save(d)
    P, pre = cfg["n_positions"], "transformer." if prefix else ""
    t = {}
    for name, a in weights.items():
        t[pre + name] = a
        if masks and name.endswith("ln_1.weight"):
            layer = pre + name[:-len("ln_1.weight")]
            t[layer + "attn.bias"] = np.tril(np.ones((P, P), np.float32))[None, None]
            t[layer + "attn.masked_bias"] = np.array(-1e4, np.float32)
    if prefix:
        t["lm_head.weight"] = weights["wte.weight"]
    names = list(t)
    if shards == 1:
        write_safetensors(os.path.join(d, "model.safetensors"), t, dtype)
        return
    per = -(-len(names) // shards)
    weight_map, total = {}, 0
    for s in range(shards):
        fn = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {k: t[k] for k in names[s * per:(s + 1) * per]}
        write_safetensors(os.path.join(d, fn), part, dtype)
        for k, a in part.items():
            weight_map[k] = fn
            total += a.size * (2 if dtype == "BF16" else 4)
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="a random-weight Hugging Face GPT-2 directory")
    w.add_argument("dir")
    w.add_argument("--layers", type=int, default=2)
    w.add_argument("--embd", type=int, default=768)
    w.add_argument("--heads", type=int, default=12)
    w.add_argument("--vocab", type=int, default=50257)
    w.add_argument("--positions", type=int, default=1024)
    w.add_argument("--dtype", choices=("F32", "BF16"), default="F32")
    w.add_argument("--prefix", action="store_true", help="transformer. names and lm_head.weight")
    w.add_argument("--shards", type=int, default=1)
    w.add_argument("--masks", action="store_true", help="the attn.bias/masked_bias buffers")
    w.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("run", help="the reference's greedy continuation of a prompt")
    r.add_argument("dir")
    r.add_argument("--prompt", default="Once upon a time")
    r.add_argument("--tokens", help="comma-separated ids instead of --prompt")
    r.add_argument("--greedy", type=int, default=16)
    a = ap.parse_args(argv)
    if a.cmd == "write":
        cfg = gpt2_config(a.layers, a.embd, a.heads, a.vocab, a.positions)
        write_hf_dir(a.dir, cfg, random_weights(cfg, a.seed), make_bpe(a.vocab), a.dtype,
                     a.prefix, a.shards, a.masks)
        print(f"wrote {a.dir}: n_layer={a.layers} n_embd={a.embd} n_head={a.heads} "
              f"vocab_size={a.vocab} n_positions={a.positions}, {a.dtype}")
        return 0
    model = load_reference(a.dir)
    with open(os.path.join(a.dir, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(a.dir, "merges.txt"), encoding="utf-8") as f:
        merges = [tuple(line.rstrip("\n").split(" ")) for line in f if not line.startswith("#version")]
    bpe = ByteBPE(vocab, merges)
    ids = [int(x) for x in a.tokens.split(",")] if a.tokens else bpe.encode(a.prompt)
    out = model.greedy(ids, a.greedy)
    last = model.logits(ids)[-1]
    top = np.argsort(-last, kind="stable")[:5]
    print("prompt ids:", " ".join(map(str, ids)))
    print("greedy ids:", " ".join(map(str, out)))
    print("greedy text:", bpe.decode(out))
    print("top logits:", " ".join(f"{i}:{last[i]:.6f}" for i in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
