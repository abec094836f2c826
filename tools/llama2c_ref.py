#!/usr/bin/python3
"""llama2c_ref.py — an independent reference of llama2.c (its model.py/run.c
forward and its run.c tokenizer), and a writer of random-weight llama2.c files
to test ngpt's importer.

  /usr/bin/python3 tools/llama2c_ref.py write DIR [--dim 288] [--hidden 768]
        [--layers 6] [--heads 6] [--kv-heads 6] [--vocab 32000] [--seq 256]
        [--unshared] [--seed S] [--version 0|1|2] [--group-size GS]
  /usr/bin/python3 tools/llama2c_ref.py run DIR --prompt TEXT [--greedy N]

Written from llama2.c's description (https://github.com/karpathy/llama2.c:
model.py, export.py, run.c, runq.c), not from tools/ngpt_torch.py:
  x = tok_emb[t]; per layer h = x + attn(rmsnorm(x) * rms_att),
  x = h + w2(silu(w1 u) * w3 u) with u = rmsnorm(h) * rms_ffn;
  logits = (rmsnorm(x) * rms_final) · wclsᵀ (wcls = tok_emb when shared).
  rmsnorm(x) = x / sqrt(mean(x²) + 1e-5). Attention: q = wq x, k = wk x,
  v = wv x; heads of hs = dim/n_heads; RoPE as complex numbers on the pairs
  (2i, 2i+1) of each head, freq_i = 10000^(-2i/hs), angle = pos · freq_i;
  grouped-query: query head h reads key/value head h // (n_heads/n_kv_heads);
  causal softmax of q·k/√hs.
The reference computes in float64 from the float32 weights the file holds
(version 2: its int8 values times their scales, in float32).

model.bin is version 0 (run.c's legacy layout): 7 int32 dim, hidden_dim,
n_layers, n_heads, n_kv_heads, vocab_size (negative: unshared classifier),
seq_len, then float32 tok_emb, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3,
rms_final, freq_cis_real, freq_cis_imag, [wcls]. --version 1 writes
export.py's version 1 instead: a 256-byte header (u32 magic "ak42", i32 1,
the 7 int32 with vocab_size positive, u8 shared classifier, zeros), then
rms_att, rms_ffn, rms_final, tok_emb, wq, wk, wv, wo, w1, w2, w3, [wcls].
--version 2 writes export.py's version2_export (runq.c's int8 "Q8_0"): the
same header with the group size GS as int32 at byte 37 (export.py's: 64
halved until it divides dim; --group-size overrides it, e.g. one that is no
power of two, which runq.c reads all the same), the float32 norms, then each
matrix of each layer (tok_emb whole; wq of every layer, ... w3; [wcls]) as
int8 q followed by float32 scales, quantized as export.py's quantize_q80
does; read back, value i = q[i] * scale[i // GS] in float32 (runq.c's
dequantize), and the reference runs on those values.

tokenizer.bin: u32 max_token_length, then per token f32 score, i32 length,
bytes. Its vocabulary is built here as llama2.c's is laid out: 0 <unk>,
1 "\\n<s>\\n", 2 "\\n</s>\\n", 3..258 <0x00>..<0xFF>, then single characters
(ASCII letters, digits, punctuation, ' ' for ▁, a few multi-byte characters),
then merges learned on a small English sample (a piece's score is minus its
rank divided by 3, so groups of three pieces tie and the leftmost pair wins),
then filler pieces up to the vocabulary size that text never forms.
encode() is run.c's encode (FORMATS §5): " " first for non-empty text, each
UTF-8 code point its piece or its bytes as <0xNN> (id b + 3), then the
adjacent pair whose concatenation is the best-scored piece merged (strictly
greater, so the leftmost of equals) until none is. BOS 1 starts a prompt.
"""
import argparse
import math
import os
import struct
import sys

import numpy as np
import torch

BOS, EOS = 1, 2
SAMPLE = ("Once upon a time there was a little girl named Lily. She loved to play "
          "outside in the sun with her dog. One day, Lily saw a big red ball in the "
          "park. She ran to it and said, \"Look, a ball!\" Her mom smiled. They played "
          "together all day and were very happy. The end. Tom and Ben went to the "
          "shop to buy some milk and bread for their mother, who was at home.")
EXTRA_CHARS = ["é", "ü", "ß", "—", "日", "本"]      # "中" and emoji stay out: byte fallback

# ------------------------------------------------------------------ tokenizer


def build_vocab(vocab_size):
    """(pieces as bytes, scores): llama2.c's layout, merges learned on SAMPLE."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    scores = [0.0] * len(pieces)
    chars = [chr(c) for c in range(33, 127)] + [" "] + EXTRA_CHARS
    for c in chars:
        pieces.append(c.encode())
        scores.append(-1e5)          # single characters never merge among themselves by score
    have = set(pieces)
    # merges: the most frequent adjacent pair of the sample's current split
    text = [c.encode() for c in " " + SAMPLE]
    rank = 0
    n_merges = min(300, vocab_size - len(pieces) - 8)
    while rank < n_merges:
        counts = {}
        for a, b in zip(text, text[1:]):
            counts[a + b] = counts.get(a + b, 0) + 1
        new = [(n, p) for p, n in counts.items() if p not in have and len(p) <= 16]
        if not new:
            break
        _, best = max(new)
        pieces.append(best)
        scores.append(-float(rank // 3))
        have.add(best)
        rank += 1
        out, i = [], 0
        while i < len(text):
            if i + 1 < len(text) and text[i] + text[i + 1] == best:
                out.append(best)
                i += 2
            else:
                out.append(text[i])
                i += 1
        text = out
    k = 0
    while len(pieces) < vocab_size:
        pieces.append(b"<fill%d>" % k)
        scores.append(-1e6)
        k += 1
    return pieces[:vocab_size], scores[:vocab_size]


def write_tokenizer(path, pieces, scores):
    with open(path, "wb") as f:
        f.write(struct.pack("<I", max(len(p) for p in pieces)))
        for p, s in zip(pieces, scores):
            f.write(struct.pack("<fi", s, len(p)))
            f.write(p)


def read_tokenizer(path, vocab_size):
    data = open(path, "rb").read()
    at = 4
    pieces, scores = [], []
    for _ in range(vocab_size):
        s, n = struct.unpack_from("<fi", data, at)
        pieces.append(data[at + 8:at + 8 + n])
        scores.append(s)
        at += 8 + n
    return pieces, scores


class Tokenizer:
    def __init__(self, pieces, scores):
        self.pieces = pieces
        self.scores = [float(np.float32(s)) for s in scores]
        self.index = {p: i for i, p in enumerate(pieces)}

    def encode(self, text, bos=False):
        data = text.encode() if isinstance(text, str) else text
        ids = [BOS] if bos else []
        if data:
            ids.append(self.index[b" "])
        i = 0
        while i < len(data):        # a code point: a byte and at most 3 continuation bytes
            j = i + 1
            while j < len(data) and (data[j] & 0xC0) == 0x80 and j - i < 4:
                j += 1
            cp = data[i:j]
            if cp in self.index:
                ids.append(self.index[cp])
            else:
                ids.extend(b + 3 for b in cp)
            i = j
        while True:
            best, best_id, at = -1e10, -1, -1
            for k in range(len(ids) - 1):
                m = self.index.get(self.pieces[ids[k]] + self.pieces[ids[k + 1]])
                if m is not None and self.scores[m] > best:
                    best, best_id, at = self.scores[m], m, k
            if best_id < 0:
                break
            ids[at:at + 2] = [best_id]
        return ids

    def decode(self, ids):
        out, prev = b"", None
        for t in ids:
            p = self.pieces[t]
            if prev == BOS and p.startswith(b" "):
                p = p[1:]
            if len(p) == 6 and p.startswith(b"<0x") and p.endswith(b">"):
                p = bytes([int(p[3:5], 16)])
            out += p
            prev = t
        return out

# ---------------------------------------------------------------------- model


def random_weights(cfg, seed):
    g = np.random.default_rng(seed)
    D, F, L, V = cfg["dim"], cfg["hidden"], cfg["layers"], cfg["vocab"]
    KVD = D // cfg["heads"] * cfg["kv_heads"]

    def n(*shape, std=0.02):
        return (g.standard_normal(shape) * std).astype(np.float32)

    w = {"tok_emb": n(V, D, std=0.5), "rms_att": 1 + n(L, D, std=0.1), "wq": n(L, D, D, std=0.08),
         "wk": n(L, KVD, D, std=0.08), "wv": n(L, KVD, D, std=0.08), "wo": n(L, D, D, std=0.05),
         "rms_ffn": 1 + n(L, D, std=0.1), "w1": n(L, F, D, std=0.06), "w2": n(L, D, F, std=0.04),
         "w3": n(L, F, D, std=0.06), "rms_final": 1 + n(D, std=0.1)}
    if cfg["unshared"]:
        w["wcls"] = n(V, D, std=0.1)
    return w


ORDER = ["tok_emb", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2", "w3", "rms_final"]


V1_ORDER = ["rms_att", "rms_ffn", "rms_final", "tok_emb", "wq", "wk", "wv", "wo", "w1", "w2", "w3"]


def export_group_size(dim):
    """export.py's version2_export: 64, halved until it divides dim."""
    gs = 64
    while dim % gs != 0:
        gs //= 2
    return gs


def quantize_q80(w, group_size):
    """export.py's quantize_q80 (int8 values, float32 scales), as it is written."""
    w = torch.from_numpy(np.array(w, dtype=np.float32)).reshape(-1, group_size)   # a copy: writable
    scale = torch.abs(w).max(dim=1).values / 127.0
    q = torch.round(w / scale[:, None]).to(torch.int8)
    return q.numpy(), scale.numpy()


Q_ORDER = ["tok_emb", "wq", "wk", "wv", "wo", "w1", "w2", "w3"]


def write_model_v2(path, cfg, w, group_size=None):
    """export.py's version2_export: int8 matrices with float32 scales per group."""
    gs = group_size or export_group_size(cfg["dim"])
    with open(path, "wb") as f:
        head = struct.pack("<Ii7iBi", 0x616B3432, 2, cfg["dim"], cfg["hidden"], cfg["layers"],
                           cfg["heads"], cfg["kv_heads"], cfg["vocab"], cfg["seq"],
                           0 if cfg["unshared"] else 1, gs)
        f.write(head + b"\0" * (256 - len(head)))
        for k in ["rms_att", "rms_ffn", "rms_final"]:
            f.write(w[k].astype("<f4").tobytes())
        for k in Q_ORDER + (["wcls"] if cfg["unshared"] else []):
            for m in ([w[k]] if k in ("tok_emb", "wcls") else list(w[k])):    # each layer's
                q, scale = quantize_q80(m, gs)
                f.write(q.tobytes())
                f.write(scale.astype("<f4").tobytes())


def write_model(path, cfg, w, version=0, group_size=None):
    hs = cfg["dim"] // cfg["heads"]
    if version == 2:
        write_model_v2(path, cfg, w, group_size)
        return
    if version == 1:        # export.py's version1_export: 256-byte header, norms first, no freq_cis
        with open(path, "wb") as f:
            head = struct.pack("<Ii7iB", 0x616B3432, 1, cfg["dim"], cfg["hidden"], cfg["layers"],
                               cfg["heads"], cfg["kv_heads"], cfg["vocab"], cfg["seq"],
                               0 if cfg["unshared"] else 1)
            f.write(head + b"\0" * (256 - len(head)))
            for k in V1_ORDER + (["wcls"] if cfg["unshared"] else []):
                f.write(w[k].astype("<f4").tobytes())
        return
    with open(path, "wb") as f:
        f.write(struct.pack("<7i", cfg["dim"], cfg["hidden"], cfg["layers"], cfg["heads"],
                            cfg["kv_heads"], -cfg["vocab"] if cfg["unshared"] else cfg["vocab"],
                            cfg["seq"]))
        for k in ORDER:
            f.write(w[k].astype("<f4").tobytes())
        freqs = 1.0 / (10000.0 ** (np.arange(0, hs, 2)[: hs // 2] / hs))
        ang = np.outer(np.arange(cfg["seq"]), freqs)
        f.write(np.cos(ang).astype("<f4").tobytes())
        f.write(np.sin(ang).astype("<f4").tobytes())
        if cfg["unshared"]:
            f.write(w["wcls"].astype("<f4").tobytes())


def read_model(path):
    data = open(path, "rb").read()
    if struct.unpack_from("<I", data, 0)[0] == 0x616B3432:
        if struct.unpack_from("<i", data, 4)[0] == 2:
            return read_model_v2(data)
        return read_model_v1(data)
    dim, hidden, layers, heads, kv, vocab, seq = struct.unpack_from("<7i", data, 0)
    cfg = {"dim": dim, "hidden": hidden, "layers": layers, "heads": heads, "kv_heads": kv,
           "vocab": abs(vocab), "seq": seq, "unshared": vocab < 0}
    D, F, L, V, KVD, hs = dim, hidden, layers, abs(vocab), dim // heads * kv, dim // heads
    shapes = {"tok_emb": (V, D), "rms_att": (L, D), "wq": (L, D, D), "wk": (L, KVD, D),
              "wv": (L, KVD, D), "wo": (L, D, D), "rms_ffn": (L, D), "w1": (L, F, D),
              "w2": (L, D, F), "w3": (L, F, D), "rms_final": (D,)}
    at, w = 28, {}
    for k in ORDER:
        n = int(np.prod(shapes[k]))
        w[k] = np.frombuffer(data, "<f4", n, at).reshape(shapes[k])
        at += 4 * n
    at += 4 * seq * hs          # freq_cis_real and _imag
    if vocab < 0:
        w["wcls"] = np.frombuffer(data, "<f4", V * D, at).reshape(V, D)
        at += 4 * V * D
    assert at == len(data), "model.bin size"
    return cfg, w


def header_shapes(dim, hidden, layers, heads, kv, vocab, seq, shared):
    """The config and every tensor's shape of a version 1 or 2 header."""
    cfg = {"dim": dim, "hidden": hidden, "layers": layers, "heads": heads, "kv_heads": kv,
           "vocab": vocab, "seq": seq, "unshared": not shared}
    D, F, L, V, KVD = dim, hidden, layers, vocab, dim // heads * kv
    shapes = {"rms_att": (L, D), "rms_ffn": (L, D), "rms_final": (D,), "tok_emb": (V, D),
              "wq": (L, D, D), "wk": (L, KVD, D), "wv": (L, KVD, D), "wo": (L, D, D),
              "w1": (L, F, D), "w2": (L, D, F), "w3": (L, F, D), "wcls": (V, D)}
    return cfg, shapes


def read_model_v1(data):
    version, dim, hidden, layers, heads, kv, vocab, seq, shared = struct.unpack_from("<i7iB", data, 4)
    assert version == 1
    cfg, shapes = header_shapes(dim, hidden, layers, heads, kv, vocab, seq, shared)
    at, w = 256, {}
    for k in V1_ORDER + (["wcls"] if not shared else []):
        n = int(np.prod(shapes[k]))
        w[k] = np.frombuffer(data, "<f4", n, at).reshape(shapes[k])
        at += 4 * n
    assert at == len(data), "model.bin size"
    return cfg, w


def read_model_v2(data):
    """Version 2's values as runq.c dequantizes them: float32 q * scale."""
    version, dim, hidden, layers, heads, kv, vocab, seq, shared, gs = \
        struct.unpack_from("<i7iBi", data, 4)
    assert version == 2 and gs > 0 and dim % gs == 0
    cfg, shapes = header_shapes(dim, hidden, layers, heads, kv, vocab, seq, shared)
    at, w = 256, {}
    for k in ["rms_att", "rms_ffn", "rms_final"]:
        n = int(np.prod(shapes[k]))
        w[k] = np.frombuffer(data, "<f4", n, at).reshape(shapes[k])
        at += 4 * n
    for k in Q_ORDER + (["wcls"] if not shared else []):
        one = shapes[k] if k in ("tok_emb", "wcls") else shapes[k][1:]
        n, mats = int(np.prod(one)), []
        for _ in range(1 if k in ("tok_emb", "wcls") else layers):
            q = np.frombuffer(data, np.int8, n, at).astype(np.float32)
            scale = np.frombuffer(data, "<f4", n // gs, at + n)
            mats.append((q * np.repeat(scale, gs)).astype(np.float32).reshape(one))
            at += n + 4 * (n // gs)
        w[k] = mats[0] if k in ("tok_emb", "wcls") else np.stack(mats)
    assert at == len(data), "model.bin size"
    return cfg, w


class Model:
    def __init__(self, cfg, w):
        self.cfg = cfg
        self.w = {k: torch.from_numpy(np.array(v, dtype=np.float64)) for k, v in w.items()}

    @staticmethod
    def rmsnorm(x, g):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * g

    def rope(self, x, T):
        hs = x.shape[-1]
        freqs = 1.0 / (10000.0 ** (torch.arange(0, hs, 2, dtype=torch.float64) / hs))
        cis = torch.polar(torch.ones(T, hs // 2, dtype=torch.float64),
                          torch.outer(torch.arange(T, dtype=torch.float64), freqs))
        xc = torch.view_as_complex(x.reshape(*x.shape[:-1], hs // 2, 2).contiguous())
        return torch.view_as_real(xc * cis[:, None, :]).reshape(x.shape)

    def logits(self, ids):
        c, w = self.cfg, self.w
        T, H, KV = len(ids), c["heads"], c["kv_heads"]
        hs = c["dim"] // H
        x = w["tok_emb"][torch.tensor(ids)]
        mask = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), 1)
        for l in range(c["layers"]):
            u = self.rmsnorm(x, w["rms_att"][l])
            q = self.rope((u @ w["wq"][l].T).view(T, H, hs), T)
            k = self.rope((u @ w["wk"][l].T).view(T, KV, hs), T)
            v = (u @ w["wv"][l].T).view(T, KV, hs)
            k = k.repeat_interleave(H // KV, dim=1)
            v = v.repeat_interleave(H // KV, dim=1)
            att = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hs) + mask
            y = torch.einsum("hts,shd->thd", torch.softmax(att, -1), v).reshape(T, H * hs)
            x = x + y @ w["wo"][l].T
            u = self.rmsnorm(x, w["rms_ffn"][l])
            a = u @ w["w1"][l].T
            x = x + (a * torch.sigmoid(a) * (u @ w["w3"][l].T)) @ w["w2"][l].T
        x = self.rmsnorm(x, w["rms_final"])
        return (x @ (w["wcls"] if c["unshared"] else w["tok_emb"]).T).numpy()

    def greedy(self, ids, n):
        ids, out = list(ids), []
        for _ in range(n):
            t = int(np.argmax(self.logits(ids)[-1]))
            out.append(t)
            ids.append(t)
        return out


def write_dir(d, cfg, seed=1, version=0, group_size=None):
    """model.bin (version 0, 1 or 2) and tokenizer.bin of a random model into d."""
    os.makedirs(d, exist_ok=True)
    write_model(os.path.join(d, "model.bin"), cfg, random_weights(cfg, seed), version, group_size)
    write_tokenizer(os.path.join(d, "tokenizer.bin"), *build_vocab(cfg["vocab"]))


def load_dir(d):
    cfg, w = read_model(os.path.join(d, "model.bin"))
    return Model(cfg, w), Tokenizer(*read_tokenizer(os.path.join(d, "tokenizer.bin"), cfg["vocab"]))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("dir")
    for k, v in (("dim", 288), ("hidden", 768), ("layers", 6), ("heads", 6), ("kv-heads", 6),
                 ("vocab", 32000), ("seq", 256), ("seed", 1)):
        w.add_argument("--" + k, type=int, default=v)
    w.add_argument("--unshared", action="store_true")
    w.add_argument("--version", type=int, choices=(0, 1, 2), default=0)
    w.add_argument("--group-size", type=int, default=None, help="version 2 (default: export.py's)")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--prompt", required=True)
    r.add_argument("--greedy", type=int, default=8)
    a = ap.parse_args()
    if a.cmd == "write":
        cfg = {"dim": a.dim, "hidden": a.hidden, "layers": a.layers, "heads": a.heads,
               "kv_heads": a.kv_heads, "vocab": a.vocab, "seq": a.seq, "unshared": a.unshared}
        write_dir(a.dir, cfg, a.seed, a.version, a.group_size)
        return 0
    model, tok = load_dir(a.dir)
    ids = tok.encode(a.prompt, bos=True)
    print("ids:", " ".join(map(str, ids)))
    g = model.greedy(ids, a.greedy)
    print("greedy:", " ".join(map(str, g)))
    print("text:", tok.decode(ids + g).decode(errors="replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
