#!/usr/bin/python3
"""lora_torch_step.py — PyTorch's time for the training step `ngpt train
--init MODEL --lora ...` takes, on the same shape: a Llama-family model
(SmolLM2-135M's by default) in float32 with random weights, frozen, LoRA
adapters (PEFT's forward: y = W x + s B (A x), A uniform in +-1/sqrt(in),
B zero) on the chosen Linears, AdamW over A and B only, the mean
cross-entropy of B x T tokens; or, with --full, the whole model trained (a
full fine-tune's step). Prints the median step time and tokens/s after a
warm-up, the figure to put beside `ngpt train`'s tokens/s.

  MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=-1 /usr/bin/python3 tools/lora_torch_step.py \\
      [--layers 30 --hidden 576 --heads 9 --kv-heads 3 --intermediate 1536 --vocab 49152] \\
      [--batch 2 --seq 128] [--r 16 --alpha 32] [--targets all-linear | q_proj,v_proj] \\
      [--full] [--threads 2] [--steps 10]

The model is written plainly from the published architecture (RMSNorm,
rotate-half RoPE, grouped-query causal attention, SwiGLU, a tied lm_head)
in operations every PyTorch from 1.13 (Debian 12's) has, as a PyTorch user
would write it; nothing of ngpt is used. Debian's
python3-torch with libopenblas0-pthread is the fair build (docs/TRAINING.md, LoRA).
"""
import argparse
import math
import os
import statistics
import time

# Debian's torch runs its OpenMP threads beside OpenBLAS's pthreads: with
# OpenMP's default (active) waiting its idle threads spin on the cores
# OpenBLAS needs, and a step of this shape took 5.0 s instead of 2.3 s on a
# 2-vCPU machine. Passive waiting is PyTorch at its best here.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

LINEARS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class LoraLinear(nn.Module):
    """A frozen Linear (no bias) and, when adapted, PEFT's low-rank term."""

    def __init__(self, n_in, n_out, r, scale, adapted):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * 0.02)
        self.adapted = adapted
        if adapted:
            bound = 1.0 / math.sqrt(n_in)
            self.lora_A = nn.Parameter(torch.empty(r, n_in).uniform_(-bound, bound))
            self.lora_B = nn.Parameter(torch.zeros(n_out, r))
            self.scale = scale

    def forward(self, x):
        y = F.linear(x, self.weight)
        if self.adapted:
            y = y + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scale
        return y


class Block(nn.Module):
    def __init__(self, a, targets, scale):
        super().__init__()
        C, hd = a.hidden, a.hidden // a.heads
        self.heads, self.kv_heads, self.hd = a.heads, a.kv_heads, hd
        dims = {"q_proj": (C, C), "k_proj": (C, a.kv_heads * hd), "v_proj": (C, a.kv_heads * hd),
                "o_proj": (C, C), "gate_proj": (C, a.intermediate), "up_proj": (C, a.intermediate),
                "down_proj": (a.intermediate, C)}
        for name, (i, o) in dims.items():
            setattr(self, name, LoraLinear(i, o, a.r, scale, name in targets))
        self.causal = torch.ones(a.seq, a.seq, dtype=torch.bool).triu(1)
        self.norm1 = nn.Parameter(torch.ones(C))
        self.norm2 = nn.Parameter(torch.ones(C))

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        h = rms_norm(x, self.norm1)
        q = self.q_proj(h).view(B, T, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.hd))
        att = att.masked_fill(self.causal[:T, :T], float("-inf")).softmax(dim=-1)
        y = att @ v
        x = x + self.o_proj(y.transpose(1, 2).reshape(B, T, C))
        h = rms_norm(x, self.norm2)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


def rms_norm(x, w, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rot * sin


class Llama(nn.Module):
    def __init__(self, a, targets):
        super().__init__()
        scale = a.alpha / a.r
        self.embed = nn.Parameter(torch.randn(a.vocab, a.hidden) * 0.02)
        self.blocks = nn.ModuleList(Block(a, targets, scale) for _ in range(a.layers))
        self.norm = nn.Parameter(torch.ones(a.hidden))
        hd = a.hidden // a.heads
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(a.seq).float(), inv)
        self.cos = torch.cat((ang.cos(), ang.cos()), dim=-1)
        self.sin = torch.cat((ang.sin(), ang.sin()), dim=-1)

    def forward(self, tokens, targets):
        x = F.embedding(tokens, self.embed)
        for b in self.blocks:
            x = b(x, self.cos, self.sin)
        x = rms_norm(x, self.norm)
        logits = F.linear(x, self.embed)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in [("layers", 30), ("hidden", 576), ("heads", 9), ("kv-heads", 3),
                          ("intermediate", 1536), ("vocab", 49152), ("batch", 2), ("seq", 128),
                          ("r", 16), ("threads", 2), ("steps", 10)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--alpha", type=float, default=32.0)
    p.add_argument("--targets", default="all-linear")
    p.add_argument("--full", action="store_true", help="train every weight (no adapter)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    targets = set() if a.full else set(LINEARS if a.targets == "all-linear" else a.targets.split(","))
    model = Llama(a, targets)
    if a.full:
        params = list(model.parameters())
    else:
        params = [q for n, q in model.named_parameters() if "lora_" in n]
        for n, q in model.named_parameters():
            q.requires_grad_("lora_" in n)
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0 if not a.full else 0.1)
    g = torch.Generator().manual_seed(1)
    times = []
    for step in range(a.steps + 2):            # two warm-up steps
        tok = torch.randint(0, 256, (a.batch, a.seq + 1), generator=g)
        t0 = time.perf_counter()
        loss = model(tok[:, :-1], tok[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        if step >= 2:
            times.append(dt)
    med = statistics.median(times)
    n = sum(q.numel() for q in params)
    what = "full fine-tune" if a.full else f"LoRA r={a.r} alpha={a.alpha:g} {a.targets}"
    print(f"pytorch {torch.__version__}, {a.threads} threads: {what}, {n} trained floats, "
          f"batch {a.batch} x seq {a.seq}: median step {med * 1000:.0f} ms, "
          f"{a.batch * a.seq / med:.1f} tok/s (of {len(times)} steps)")


if __name__ == "__main__":
    main()
