#!/usr/bin/python3
"""golden.py — writes tests/golden/tiny.bin, tests/golden/default.bin and
tests/golden/llama.bin (docs/GOLDEN.md) from the PyTorch reference model in
tools/ngpt_torch.py.

    /usr/bin/python3 tools/golden.py [--out tests/golden]

Weights are the deterministic golden fill (seed 42, float32), converted
exactly to float64; every computation runs in float64 and results are stored
as float32, so a stored value is the exact model up to one float32 rounding.
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngpt_torch as nt  # noqa: E402

TEXT = (b"The quick brown fox jumps over the lazy dog. A byte-level model reads text "
        b"one UTF-8 byte at a time, so every token is a number from 0 to 255.")
SEED = 42
# the tiny config with a Llama's switches: RMSNorm (eps 1e-6), SwiGLU, no
# biases, GQA 3:1, 6 heads of 10 on C = 32, RoPE on halves, an untied head
LLAMA = nt.ModelConfig(V=256, T=16, C=32, L=2, H=6, d_ff=64, dropout=0.0, tie_lm_head=False,
                       norm_type="rms", norm_eps=1e-6, mlp="swiglu", mlp_bias=False,
                       kv_heads=2, head_dim=10, rope_pairs="halves")


def batch(B, T):
    """B windows of T+1 consecutive bytes of TEXT: x = w[:-1], y = w[1:]."""
    assert B * T + 1 <= len(TEXT)
    w = np.frombuffer(TEXT, dtype=np.uint8).astype(np.int64)
    x = np.stack([w[b * T:b * T + T] for b in range(B)])
    y = np.stack([w[b * T + 1:b * T + T + 1] for b in range(B)])
    return torch.from_numpy(x), torch.from_numpy(y)


def f32(t):
    return t.detach().cpu().to(torch.float64).numpy().astype(np.float32)


def forward_entries(cfg, B, T):
    model = nt.model_from_params(cfg, nt.golden_weights(cfg, SEED), torch.float64).eval()
    x, y = batch(B, T)
    out = {"tokens": x.numpy(), "targets": y.numpy()}
    logits, loss = model(x, y, trace=True)
    out["logits"] = f32(logits)
    out["loss"] = f32(loss).reshape(1)
    for l, att in enumerate(model.attention_maps()):
        out[f"att.{l}"] = f32(att)
    return model, x, y, out


def train_entries(cfg, model, x, y):
    """Gradients of the first batch, then AdamW with clip_grad_norm_ for 10 steps."""
    out = {}
    params = dict(model.named_parameters())          # tied: lm_head.weight is tok_emb.weight
    assert list(params) == nt.param_names(cfg), list(params)
    model.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    for n, p in params.items():
        out[f"grad.{n}"] = f32(p.grad)
    model.zero_grad(set_to_none=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), eps=1e-8,
                            weight_decay=0.1)
    losses = []
    for step in range(1, 11):
        opt.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        losses.append(loss.item())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step in (1, 10):
            for n, p in params.items():
                out[f"adamw{step}.{n}"] = f32(p)
    out["adamw.loss"] = np.array(losses, dtype=np.float32)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(here, "tests", "golden"))
    args = ap.parse_args()
    nt.philox_selftest()
    torch.use_deterministic_algorithms(True)
    os.makedirs(args.out, exist_ok=True)

    model, x, y, tiny = forward_entries(nt.TINY, 2, 16)
    tiny.update(train_entries(nt.TINY, model, x, y))
    nt.write_golden(os.path.join(args.out, "tiny.bin"), tiny)

    cfg = nt.ModelConfig(dropout=0.0)               # default config, eval mode
    _, _, _, default = forward_entries(cfg, 1, 32)
    nt.write_golden(os.path.join(args.out, "default.bin"), default)

    model, x, y, llama = forward_entries(LLAMA, 2, 16)
    llama.update(train_entries(LLAMA, model, x, y))
    nt.write_golden(os.path.join(args.out, "llama.bin"), llama)
    for name in ("tiny.bin", "default.bin", "llama.bin"):
        p = os.path.join(args.out, name)
        g = nt.read_golden(p)
        print(f"{p}: {len(g)} entries, {os.path.getsize(p)} bytes, loss {g['loss'][0]:.6f}")


if __name__ == "__main__":
    main()
