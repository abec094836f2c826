#!/usr/bin/python3
"""test_interop.py — PyTorch <-> ngpt (issue #5), run by `make test-interop`.

Random PyTorch models (tiny and default configs) -> tools/convert.py import
-> ngpt logits (build/tests/interop/ngpt-logits) equal PyTorch's within a
stated tolerance, greedy 64-byte continuations identical; export -> PyTorch
logits equal ngpt's; import -> export and .ngpt -> export -> import round
trips bit-exact; bad checkpoints rejected naming the key; AdamW state
survives the round trip (training continues bit-identically in PyTorch).

Tolerance (max abs logit error against the float64 PyTorch model): 1e-5 for
the tiny config, 5e-5 for the default one, the same as tests/test_golden.c
and for the same reason: ngpt computes in float32 with chains of at most
max(C, d_ff) terms per layer, which gives ~1e-7 (tiny) to ~1e-6 (default)
here; the bounds sit well above that and well below any wiring mistake.
"""
import argparse
import dataclasses
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import ngpt_torch as nt  # noqa: E402

CONVERT = [sys.executable, os.path.join(ROOT, "tools", "convert.py")]
TEXT = b"Once upon a time, a small model on a small board read one byte at a time. " * 4
passed = failed = 0


@dataclasses.dataclass
class ModelConfig:
    """Stands for the original training code's config class: it lives in this
    script's __main__, which convert.py cannot import (tests its fallback)."""
    V: int
    T: int
    C: int
    L: int
    H: int
    d_ff: int
    dropout: float
    rope_theta: float


def check(cond, msg):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {msg}", file=sys.stderr)
    return cond


def run(cmd, expect_ok=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        print(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}{p.stderr}", file=sys.stderr)
    return p


def random_model(cfg, seed):
    """Default init, then LayerNorm and biases perturbed so that a swapped
    weight/bias or a wrong tensor would show up in the logits."""
    torch.manual_seed(seed)
    m = nt.NGPT(cfg)
    with torch.no_grad():
        for n, p in m.named_parameters():
            if p.dim() == 1:
                p.copy_((1.0 if n.endswith("weight") else 0.0) + 0.1 * torch.randn_like(p))
    return m.eval()


def torch_logits(model, tokens, dtype):
    m = model.to(dtype)
    with torch.no_grad():
        logits, _ = m(torch.tensor([tokens]))
    model.to(torch.float32)
    return logits[0].to(torch.float64).numpy()


def torch_greedy(model, prompt, n, T):
    m = model.to(torch.float64)
    seq = list(prompt)
    min_gap = float("inf")
    with torch.no_grad():
        for _ in range(n):
            logits, _ = m(torch.tensor([seq[-T:]]))
            row = logits[0, -1]
            top = torch.topk(row, 2).values
            min_gap = min(min_gap, float(top[0] - top[1]))
            seq.append(int(torch.argmax(row)))       # first maximum on ties
    model.to(torch.float32)
    return seq[len(prompt):], min_gap


class Ngpt:
    def __init__(self, build, run_env):
        self.helper = os.path.join(build, "tests", "interop", "ngpt-logits")
        self.cli = os.path.join(build, "ngpt")
        self.env = shlex.split(run_env or "")

    def logits(self, path, tokens, V, tmp):
        tf, of = os.path.join(tmp, "tok.i32"), os.path.join(tmp, "out.f32")
        np.asarray(tokens, dtype="<i4").tofile(tf)
        if run(self.env + [self.helper, path, tf, of]).returncode:
            return None
        return np.fromfile(of, dtype="<f4").reshape(len(tokens), V).astype(np.float64)

    def greedy(self, path, prompt, n, tmp):
        tf, of = os.path.join(tmp, "tok.i32"), os.path.join(tmp, "gen.i32")
        np.asarray(prompt, dtype="<i4").tofile(tf)
        if run(self.env + [self.helper, "--greedy", str(n), path, tf, of]).returncode:
            return None
        return [int(x) for x in np.fromfile(of, dtype="<i4")]


def test_config(ng, name, cfg, tol, tmp, cfg_style):
    model = random_model(cfg, seed=1234 + cfg.C)
    pt, ck, back = (os.path.join(tmp, f"{name}.{e}") for e in ("pt", "ngpt", "back.pt"))
    cfg_obj = ModelConfig(**dataclasses.asdict(cfg)) if cfg_style == "dataclass" \
        else dataclasses.asdict(cfg)
    torch.save({"model_state": model.state_dict(), "model_cfg": cfg_obj}, pt)
    check(run(CONVERT + ["import", pt, ck]).returncode == 0, f"{name}: import")

    n = min(cfg.T, 64)
    tokens = list(TEXT[:n])
    got = ng.logits(ck, tokens, cfg.V, tmp)
    if not check(got is not None, f"{name}: ngpt logits"):
        return
    ref64 = torch_logits(model, tokens, torch.float64)
    ref32 = torch_logits(model, tokens, torch.float32)
    e64, e32 = np.max(np.abs(got - ref64)), np.max(np.abs(got - ref32))
    print(f"{name}: import -> ngpt logits ({n} tokens): max abs err {e64:.3g} vs PyTorch float64, "
          f"{e32:.3g} vs PyTorch float32 (max |logit| {np.max(np.abs(ref64)):.3g}), tolerance {tol:.0e}")
    check(e64 <= tol, f"{name}: logits err {e64:.3g} > {tol:.0e}")

    prompt = list(b"Once upo")
    gen = ng.greedy(ck, prompt, 64, tmp)
    want, gap = torch_greedy(model, prompt, 64, cfg.T)
    same = gen == want
    print(f"{name}: greedy 64 bytes (full forwards, window T={cfg.T}): "
          f"{'identical' if same else 'DIFFERENT'}; smallest top-2 logit gap {gap:.3g}")
    check(same, f"{name}: greedy continuation differs:\n ngpt  {gen}\n torch {want}")

    check(run(CONVERT + ["export", ck, back]).returncode == 0, f"{name}: export")
    exp = torch.load(back)
    ecfg = exp["model_cfg"]
    m2 = nt.NGPT(nt.ModelConfig(**ecfg))
    m2.load_state_dict(exp["model_state"], strict=True)
    m2.eval()
    orig = model.state_dict()
    exact = list(exp["model_state"]) == list(orig) and all(
        torch.equal(exp["model_state"][k], orig[k]) for k in orig)
    print(f"{name}: import -> export round trip: {len(orig)} tensors "
          f"{'bit-exact' if exact else 'NOT exact'}")
    check(exact, f"{name}: round trip not bit-exact")
    e_exp = np.max(np.abs(torch_logits(m2, tokens, torch.float32) - got))
    print(f"{name}: export -> PyTorch float32 logits vs ngpt: max abs err {e_exp:.3g}")
    check(e_exp <= tol, f"{name}: exported logits err {e_exp:.3g} > {tol:.0e}")
    return model


def test_bare_and_cli(ng, tmp):
    """A bare state_dict with --config equals the dict form; a C-written
    .ngpt survives export -> import byte for byte."""
    cfg = dataclasses.replace(nt.TINY, dropout=0.1)
    model = random_model(cfg, seed=7)
    a, b = os.path.join(tmp, "a.pt"), os.path.join(tmp, "b.pt")
    torch.save({"model_state": model.state_dict(), "model_cfg": dataclasses.asdict(cfg)}, a)
    torch.save({f"module.{k}": v for k, v in model.state_dict().items()}, b)   # DDP-style keys
    ka, kb = os.path.join(tmp, "a.ngpt"), os.path.join(tmp, "b.ngpt")
    run(CONVERT + ["import", a, ka])
    p = run(CONVERT + ["import", b, kb, "--config", "T=16", "H=4"])
    check(p.returncode == 0 and "dropout=0.1" in p.stdout, f"bare import: {p.stdout}{p.stderr}")
    same = open(ka, "rb").read() == open(kb, "rb").read()
    print(f"bare state_dict ('module.' prefix) + --config T=16 H=4: {'same file' if same else 'DIFFERENT'}"
          " as the dict form")
    check(same, "bare state_dict import differs from dict import")

    c = os.path.join(tmp, "c.ngpt")
    r = run(ng.env + [ng.cli, "init", "--seed", "5", "--out", c] +
            sum([["--config", kv] for kv in ("T=16", "C=32", "L=2", "H=4", "d_ff=64")], []))
    if not check(r.returncode == 0, "ngpt init"):
        return
    cp, c2 = os.path.join(tmp, "c.pt"), os.path.join(tmp, "c2.ngpt")
    run(CONVERT + ["export", c, cp])
    run(CONVERT + ["import", cp, c2])
    same = open(c, "rb").read() == open(c2, "rb").read()
    print(f"ngpt init -> export -> import: {'byte-identical file' if same else 'DIFFERENT'}")
    check(same, "C-written checkpoint does not survive export -> import byte for byte")


def test_rejects(tmp):
    cfg = nt.TINY
    sd = random_model(cfg, seed=3).state_dict()
    cases = {
        "unknown": ({**sd, "blocks.0.attn.bias": torch.zeros(4)}, "blocks.0.attn.bias"),
        "missing": ({k: v for k, v in sd.items() if k != "ln_f.bias"}, "ln_f.bias"),
        "shape": ({**sd, "blocks.1.mlp.fc2.weight": sd["blocks.1.mlp.fc2.weight"].t().contiguous()},
                  "blocks.1.mlp.fc2.weight"),
        "untied": ({**sd, "lm_head.weight": sd["lm_head.weight"] + 1e-3}, "lm_head.weight"),
    }
    for what, (bad, key) in cases.items():
        pt = os.path.join(tmp, f"bad_{what}.pt")
        torch.save({"model_state": bad, "model_cfg": dataclasses.asdict(cfg)}, pt)
        p = run(CONVERT + ["import", pt, os.path.join(tmp, "bad.ngpt")], expect_ok=False)
        ok = p.returncode != 0 and key in p.stderr
        print(f"reject {what}: exit {p.returncode}: {p.stderr.strip()[:160]}")
        check(ok, f"bad checkpoint ({what}) not rejected naming {key}")


def test_optimizer(ng, tmp):
    """AdamW state: PyTorch -> .ngpt (optim.m/v + train.*) -> PyTorch; the
    continued training equals training without the round trip bit for bit."""
    cfg = nt.TINY
    x = torch.tensor([list(TEXT[:16]), list(TEXT[16:32])])
    y = torch.tensor([list(TEXT[1:17]), list(TEXT[17:33])])

    def make_opt(m):
        return torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.95), eps=1e-8,
                                 weight_decay=0.1)

    def step(m, opt):
        opt.zero_grad()
        _, loss = m(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        return loss.item()

    model = random_model(cfg, seed=11)
    opt = make_opt(model)
    for _ in range(3):
        step(model, opt)
    pt, ck, back = (os.path.join(tmp, f"opt.{e}") for e in ("pt", "ngpt", "back.pt"))
    torch.save({"model_state": model.state_dict(), "model_cfg": dataclasses.asdict(cfg),
                "optim_state": opt.state_dict()}, pt)
    check(run(CONVERT + ["import", pt, ck]).returncode == 0, "import with optimizer state")
    _, tensors, meta = nt.read_ngpt(ck)
    m_ok = all(np.array_equal(tensors[f"optim.m.{n}"], opt.state[p]["exp_avg"].numpy()) and
               np.array_equal(tensors[f"optim.v.{n}"], opt.state[p]["exp_avg_sq"].numpy())
               for n, p in model.named_parameters())
    check(m_ok and meta.get("train.step") == 3, f"optimizer tensors/metadata: step {meta.get('train.step')}")
    check(ng.logits(ck, list(TEXT[:16]), cfg.V, tmp) is not None,
          "the C loader accepts a checkpoint with optimizer state")
    check(run(CONVERT + ["export", ck, back]).returncode == 0, "export with optimizer state")
    exp = torch.load(back)
    m2 = nt.NGPT(nt.ModelConfig(**exp["model_cfg"]))
    m2.load_state_dict(exp["model_state"], strict=True)
    opt2 = make_opt(m2)
    opt2.load_state_dict(exp["optim_state"])
    la = [step(model, opt) for _ in range(3)]
    lb = [step(m2, opt2) for _ in range(3)]
    same = la == lb and all(torch.equal(a, b) for a, b in zip(model.parameters(), m2.parameters()))
    print(f"AdamW state round trip (3 steps, then 3 more in PyTorch): "
          f"{'bit-identical continuation' if same else 'DIFFERENT'}; losses {['%.6f' % v for v in lb]}")
    check(same, "training after the optimizer round trip differs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    ng = Ngpt(args.build, os.environ.get("RUN_ENV", ""))
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        test_config(ng, "tiny", dataclasses.replace(nt.TINY, dropout=0.1), 1e-5, tmp, "dataclass")
        test_config(ng, "default", nt.DEFAULT, 5e-5, tmp, "dict")
        test_bare_and_cli(ng, tmp)
        test_rejects(tmp)
        test_optimizer(ng, tmp)
        if run([ng.cli, "train", "--help"], expect_ok=False).returncode != 0:
            print("PENDING: ngpt train is not on this branch yet: the ngpt -> PyTorch -> ngpt "
                  "training continuation test is not run")
    print(f"test_interop: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
