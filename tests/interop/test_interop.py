#!/usr/bin/python3
"""test_interop.py — PyTorch <-> ngpt (docs/PYTORCH.md), run by `make test-interop`.

Random PyTorch models (tiny and default configs) -> tools/convert.py import
-> ngpt logits (build/tests/interop/ngpt_logits) equal PyTorch's within a
stated tolerance, greedy 64-byte continuations identical; export -> PyTorch
logits equal ngpt's; import -> export and .ngpt -> export -> import round
trips bit-exact; bad checkpoints rejected naming the key; AdamW state
survives the round trip (training continues bit-identically in PyTorch).
A model with a BPE tokenizer exports its tokenizer file's bytes beside the
weights, loads the original's way with the same greedy text, and round
trips byte for byte; a byte-level export holds nothing else.
Every export of a model with the variant switches at their defaults loads
the way the original project loads a checkpoint (ModelConfig(**model_cfg)
with its frozen eight-field config class, strict load_state_dict) and gives
the same greedy text as `ngpt generate`; the original's model, saved with
that dataclass as model_cfg, imports back byte for byte; a variant export
says on stderr, naming its switches, that the original cannot load it.
The same for every model variant (ngpt_config's switches, one at a time and
all together, tiny config, the tiny tolerance): logits, greedy text with and
without the cache, the round trips, and 3 training steps continued in the
other framework (the gradients after each step).

Tolerance (max abs logit error against the float64 PyTorch model): 1e-5 for
the tiny config, 5e-5 for the default one, the same as tests/test_golden.c
and for the same reason: ngpt computes in float32 with chains of at most
max(C, d_ff) terms per layer, which gives ~1e-7 (tiny) to ~1e-6 (default)
here; the bounds sit well above that and well below any wiring mistake.
"""
import argparse
import contextlib
import dataclasses
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import convert  # noqa: E402
import ngpt_torch as nt  # noqa: E402

CONVERT = [sys.executable, os.path.join(ROOT, "tools", "convert.py")]
TEXT = b"Once upon a time, a small model on a small board read one byte at a time. " * 4
passed = failed = 0


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Stands for the original training code's config class, a frozen
    dataclass with exactly these fields. It lives in this script's __main__,
    which convert.py run as a command cannot import (tests its fallback)."""
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


def variant_switches(cfg):
    """The variant switches not at their defaults: none for the original's model."""
    return [f for f in nt.VARIANT_FIELDS if getattr(cfg, f) != getattr(nt.DEFAULT, f)]


def export(src, dst, cfg, what):
    """convert.py export, then torch.load (None on failure). A variant model's
    export says in one stderr line, naming its switches, that the original
    cannot load it; the original's model exports without a word."""
    p = run(CONVERT + ["export", src, dst])
    if not check(p.returncode == 0, f"{what}: export"):
        return None
    switches = variant_switches(cfg)
    lines = p.stderr.splitlines()
    named = [f for f in nt.VARIANT_FIELDS if lines and re.search(rf"(?<!\w){f}=", lines[0])]
    if switches:
        ok = len(lines) == 1 and "original" in lines[0] and named == switches
        print(f"{what}: export warns: {lines[0] if lines else 'NOTHING'}")
    else:
        ok = not lines
    check(ok, f"{what}: export stderr {p.stderr!r} (want " +
          (f"one line naming {' '.join(switches)})" if switches else "nothing)"))
    return torch.load(dst)


def load_like_original(ck, what):
    """What the original project does with a checkpoint: ModelConfig(**model_cfg)
    with its frozen eight-field class (any other field is a TypeError), its GPT
    (the reference model with every switch at its default) built from that,
    and a strict load_state_dict. (model, its ModelConfig) or (None, None)."""
    try:
        cfg = ModelConfig(**ck["model_cfg"])
    except TypeError as e:
        check(False, f"{what}: the original's ModelConfig(**model_cfg) fails: {e}")
        return None, None
    kinds = {f.name: type(getattr(cfg, f.name)).__name__ for f in dataclasses.fields(cfg)}
    want = {f.name: ("float" if f.name in ("dropout", "rope_theta") else "int")
            for f in dataclasses.fields(cfg)}
    check(kinds == want, f"{what}: model_cfg types {kinds}")
    model = nt.NGPT(nt.ModelConfig(**dataclasses.asdict(cfg)))
    try:
        model.load_state_dict(ck["model_state"], strict=True)
    except RuntimeError as e:
        check(False, f"{what}: the original's strict load_state_dict fails: {e}")
        return None, None
    return model.eval(), cfg


def load_export(ck, cfg, what):
    """The exported model: loaded the original's way when it is the original's
    model, else with tools/ngpt_torch.py's ModelConfig and NGPT."""
    if variant_switches(cfg):
        m = nt.NGPT(nt.ModelConfig(**ck["model_cfg"]))
        m.load_state_dict(ck["model_state"], strict=True)
        return m.eval()
    return load_like_original(ck, what)[0]


def quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


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
        self.helper = os.path.join(build, "tests", "interop", "ngpt_logits")
        self.cli = os.path.join(build, "ngpt")
        self.env = shlex.split(run_env or "")

    def logits(self, path, tokens, V, tmp):
        tf, of = os.path.join(tmp, "tok.i32"), os.path.join(tmp, "out.f32")
        np.asarray(tokens, dtype="<i4").tofile(tf)
        if run(self.env + [self.helper, path, tf, of]).returncode:
            return None
        return np.fromfile(of, dtype="<f4").reshape(len(tokens), V).astype(np.float64)

    def generate(self, path, prompt, n):
        """`ngpt generate` at temperature 0, or None without the command."""
        if run(self.env + [self.cli, "generate", "--help"], expect_ok=False).returncode != 0:
            return None
        p = subprocess.run(self.env + [self.cli, "generate", "--model", path, "--prompt",
                                       prompt.decode("latin-1"), "-n", str(n), "--temp", "0"],
                           capture_output=True)
        if p.returncode != 0:
            print(p.stderr.decode(errors="replace"), file=sys.stderr)
            return []
        out = p.stdout[:-1] if len(p.stdout) == n + 1 and p.stdout.endswith(b"\n") else p.stdout
        return list(out)

    def greedy(self, path, prompt, n, tmp):
        tf, of = os.path.join(tmp, "tok.i32"), os.path.join(tmp, "gen.i32")
        np.asarray(prompt, dtype="<i4").tofile(tf)
        if run(self.env + [self.helper, "--greedy", str(n), path, tf, of]).returncode:
            return None
        return [int(x) for x in np.fromfile(of, dtype="<i4")]


def test_config(ng, name, cfg, tol, tmp, cfg_style):
    model = random_model(cfg, seed=1234 + cfg.C)
    pt, ck, back = (os.path.join(tmp, f"{name}.{e}") for e in ("pt", "ngpt", "back.pt"))
    sizes = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(ModelConfig)}
    cfg_obj = ModelConfig(**sizes) if cfg_style == "dataclass" else dataclasses.asdict(cfg)
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
    cli = ng.generate(ck, bytes(prompt), 64)
    if cli is None:
        print(f"{name}: PENDING: `ngpt generate` is not in this tree")
    else:
        same = cli == want
        print(f"{name}: ngpt generate --temp 0 -n 64 (KV cache, sliding window): "
              f"{'identical' if same else 'DIFFERENT'} to PyTorch's greedy bytes")
        check(same, f"{name}: ngpt generate differs:\n ngpt  {cli}\n torch {want}")

    exp = export(ck, back, cfg, name)
    m2 = load_export(exp, cfg, name) if exp is not None else None
    if m2 is None:
        return
    if not variant_switches(cfg):
        test_original(ng, name, exp, m2, prompt, cli, ck, tmp)
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


def test_original(ng, name, exp, model, prompt, cli, ck, tmp):
    """The export loaded the original project's way gives `ngpt generate`'s
    greedy text; the original, saving its model with its ModelConfig instance
    as model_cfg, writes a checkpoint that imports back to the same .ngpt
    (convert.py as a command, where that class cannot be imported, and
    in-process, where it can)."""
    print(f"{name}: export -> the original's loader: model_cfg {sorted(exp['model_cfg'])}, "
          "strict load_state_dict ok")
    if cli is not None:
        got, _ = torch_greedy(model, prompt, 64, model.cfg.T)
        same = got == cli
        print(f"{name}: export -> the original's loader, greedy 64 bytes: "
              f"{'identical' if same else 'DIFFERENT'} to ngpt generate --temp 0")
        check(same, f"{name}: greedy text after the original's load differs:\n torch {got}\n ngpt  {cli}")
    pt = os.path.join(tmp, f"{name}.orig.pt")
    torch.save({"model_state": model.state_dict(), "model_cfg": ModelConfig(**exp["model_cfg"])}, pt)
    for how, cmd in (("command", lambda out: run(CONVERT + ["import", pt, out]).returncode),
                     ("in-process", lambda out: quiet(convert.main, ["import", pt, out]))):
        out = os.path.join(tmp, f"{name}.orig.ngpt")
        same = cmd(out) == 0 and open(out, "rb").read() == open(ck, "rb").read()
        print(f"{name}: the original's checkpoint (model_cfg a frozen ModelConfig) -> import ({how}): "
              f"{'the same .ngpt' if same else 'DIFFERENT'}")
        check(same, f"{name}: import of a dataclass model_cfg ({how}) differs from the .ngpt")


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
    ck = export(c, cp, nt.TINY, "ngpt init")
    if ck is not None and load_like_original(ck, "ngpt init")[0] is not None:
        print("ngpt init -> export -> the original's loader: ok")
    check(ck is not None and sorted(ck) == ["model_cfg", "model_state"],
          f"a byte-level export holds model_state and model_cfg only: {sorted(ck or {})}")
    run(CONVERT + ["import", cp, c2])
    same = open(c, "rb").read() == open(c2, "rb").read()
    print(f"ngpt init -> export -> import: {'byte-identical file' if same else 'DIFFERENT'}")
    check(same, "C-written checkpoint does not survive export -> import byte for byte")


def test_quantized(ng, tmp):
    """An 8-bit model (ngpt quantize) exports dequantized: stderr names the
    8-bit tensors, each weight is value x scale (within half a step of the
    float32 original's), and PyTorch's logits of the export stay near ngpt's
    8-bit logits (which also quantize each product's input)."""
    c, q, qp = (os.path.join(tmp, f) for f in ("q32.ngpt", "q8.ngpt", "q8.pt"))
    r = run(ng.env + [ng.cli, "init", "--seed", "5", "--out", c] +
            sum([["--config", kv] for kv in ("T=16", "C=32", "L=2", "H=4", "d_ff=64")], []))
    r2 = run(ng.env + [ng.cli, "quantize", c, q])
    if not check(r.returncode == 0 and r2.returncode == 0, "ngpt init, ngpt quantize"):
        return
    p = run(CONVERT + ["export", q, qp])
    if not check(p.returncode == 0, f"export of an 8-bit model: {p.stderr}"):
        return
    check("holds quantized weights (weights=q8 or q4)" in p.stderr and "tok_emb.weight" in p.stderr,
          f"export names the 8-bit tensors: {p.stderr!r}")
    ck = torch.load(qp)
    _, orig, _ = nt.read_ngpt(c)
    worst = 0.0
    for name in ("tok_emb.weight", "blocks.1.mlp.fc2.weight", "blocks.0.attn.qkv.weight"):
        w, o = ck["model_state"][name].numpy(), orig[name]
        step = np.abs(o).reshape(o.shape[0], -1, 32).max(axis=2) / 127 if o.shape[1] % 32 == 0 else None
        err = np.abs(w - o).reshape(o.shape[0], -1, 32).max(axis=2) if step is not None else None
        if step is not None:
            worst = max(worst, float((err / np.maximum(step, 1e-30)).max()))
    print(f"8-bit export: largest error {worst:.3f} of a quantization step (at most 0.5)")
    check(worst <= 0.5 + 1e-3, f"8-bit export: an error of {worst} steps")
    model = load_export(ck, nt.TINY, "8-bit export")
    tokens = [(i * 37 + 11) % 256 for i in range(16)]
    got = ng.logits(q, tokens, 256, tmp)
    want = torch_logits(model, tokens, torch.float64)
    err = float(np.abs(got - want).max())
    print(f"8-bit ngpt logits vs PyTorch on the dequantized export: max abs {err:.3g}")
    check(err < 0.05, f"8-bit logits differ from the dequantized model's by {err}")


def test_rejects(tmp):
    cfg = nt.TINY
    sd = random_model(cfg, seed=3).state_dict()
    cases = {
        "unknown": ({**sd, "blocks.0.attn.bias": torch.zeros(4)}, "blocks.0.attn.bias"),
        "proj bias": ({**sd, "blocks.1.attn.proj.bias": torch.zeros(cfg.C)},
                      "blocks.1.attn.proj.bias"),
        "missing": ({k: v for k, v in sd.items() if k != "ln_f.bias"}, "ln_f.bias"),
        "shape": ({**sd, "blocks.1.mlp.fc2.weight": sd["blocks.1.mlp.fc2.weight"].t().contiguous()},
                  "blocks.1.mlp.fc2.weight"),
        "untied": ({**sd, "lm_head.weight": sd["lm_head.weight"] + 1e-3}, "lm_head.weight"),
    }
    for what, (bad, key) in cases.items():
        pt = os.path.join(tmp, f"bad_{what}.pt")
        # the stored config says tied: an lm_head that differs cannot be it
        stored = {**dataclasses.asdict(cfg), "tie_lm_head": True} if what == "untied" \
            else {f: getattr(cfg, f) for f in ("V", "T", "C", "L", "H", "d_ff", "dropout", "rope_theta")}
        torch.save({"model_state": bad, "model_cfg": stored}, pt)
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
    want_keys = [f"train.{k}" for k, _, _ in convert.TRAIN_META]      # what a training context made from the file restores
    check(list(meta) == want_keys, f"train.* metadata keys {list(meta)}")
    check(meta["train.lr"] == 1e-3 and meta["train.beta2"] == 0.95 and meta["train.seq"] == cfg.T,
          f"train.* values from the optimizer/config: {meta}")
    check(ng.logits(ck, list(TEXT[:16]), cfg.V, tmp) is not None,
          "the C loader accepts a checkpoint with optimizer state")
    exp = export(ck, back, cfg, "export with optimizer state")
    ck2 = os.path.join(tmp, "opt2.ngpt")
    run(CONVERT + ["import", back, ck2, "--train", "seed=7", "batch=8"])
    _, _, meta2 = nt.read_ngpt(ck2)
    check(meta2["train.seed"] == 7 and meta2["train.batch"] == 8, "--train overrides")
    run(CONVERT + ["import", back, ck2])
    same = open(ck, "rb").read() == open(ck2, "rb").read()
    print(f"checkpoint with optimizer state -> export -> import: {'byte-identical' if same else 'DIFFERENT'}")
    check(same, "optimizer checkpoint does not survive export -> import byte for byte")
    m2 = load_export(exp, cfg, "export with optimizer state") if exp is not None else None
    if m2 is None:
        return
    m2.train()
    opt2 = make_opt(m2)
    opt2.load_state_dict(exp["optim_state"])
    la = [step(model, opt) for _ in range(3)]
    lb = [step(m2, opt2) for _ in range(3)]
    same = la == lb and all(torch.equal(a, b) for a, b in zip(model.parameters(), m2.parameters()))
    print(f"AdamW state round trip (3 steps, then 3 more in PyTorch): "
          f"{'bit-identical continuation' if same else 'DIFFERENT'}; losses {['%.6f' % v for v in lb]}")
    check(same, "training after the optimizer round trip differs")


def test_training(ng, build, tmp, cfg=None, name="tiny"):
    """A model trained a few steps with ngpt, exported, continues training in
    PyTorch; one trained in PyTorch, imported, continues in ngpt. Each
    continuation is compared with the other framework's own continuation
    (float32 both sides, dropout 0, constant lr, the same batch)."""
    helper = os.path.join(build, "tests", "interop", "ngpt_train_steps")
    if not os.path.exists(helper):
        print("PENDING: the training API (ngpt_context_save_train) is not in this tree: the "
              "ngpt <-> PyTorch training continuation test is not run")
        return
    cfg = dataclasses.replace(cfg or nt.TINY, dropout=0.0)
    B, T, lr = 2, 16, 1e-3
    win = np.frombuffer(TEXT[:B * (T + 1)], dtype=np.uint8).astype(np.int64).reshape(B, T + 1)
    wf = os.path.join(tmp, "win.i32")
    win.astype("<i4").tofile(wf)
    x, y = torch.from_numpy(win[:, :-1].copy()), torch.from_numpy(win[:, 1:].copy())

    def ngpt_steps(src, dst, n):
        p = run(ng.env + [helper, src, dst, str(n), repr(lr), wf, str(B), str(T)])
        check(p.returncode == 0, f"ngpt_train_steps {src}")
        return [float(line.split()[3]) for line in p.stdout.splitlines() if line.startswith("step")]

    def torch_steps(m, opt, n):
        m.train()
        out = []
        for _ in range(n):
            opt.zero_grad()
            _, loss = m(x, y)
            out.append(loss.item())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
        return out

    def adamw(m):
        return torch.optim.AdamW(m.parameters(), lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)

    def load_pt(ck, exported):
        """(model, AdamW) of the test's own checkpoint or of an export."""
        if exported:
            m = load_export(ck, cfg, f"{name}: export of an ngpt training checkpoint")
            if m is None:
                return None, None
        else:
            m = nt.NGPT(nt.ModelConfig(**ck["model_cfg"]))
            m.load_state_dict(ck["model_state"], strict=True)
        opt = adamw(m)
        if "optim_state" in ck:
            opt.load_state_dict(ck["optim_state"])
        return m, opt

    def param_err(m, ngpt_file):
        _, t, _ = nt.read_ngpt(ngpt_file)
        return max(float(np.max(np.abs(p.detach().numpy() - t[n]))) for n, p in m.named_parameters())

    base = random_model(cfg, seed=21)
    p0, n0 = os.path.join(tmp, f"{name}_t0.pt"), os.path.join(tmp, f"{name}_t0.ngpt")
    torch.save({"model_state": base.state_dict(), "model_cfg": dataclasses.asdict(cfg)}, p0)
    run(CONVERT + ["import", p0, n0])

    # ngpt 3 steps -> export -> PyTorch 3 steps, against ngpt's own 6 steps
    n3, n6, p3 = (os.path.join(tmp, f) for f in ("n3.ngpt", "n6.ngpt", "n3.pt"))
    la = ngpt_steps(n0, n3, 3)
    lb = ngpt_steps(n3, n6, 3)
    ck = export(n3, p3, cfg, f"{name}: export of an ngpt training checkpoint")
    m, opt = load_pt(ck, True) if ck is not None else (None, None)
    if m is not None:
        check(int(opt.state_dict()["state"][0]["step"]) == 3, "exported AdamW step count")
        lt = torch_steps(m, opt, 3)
        dl, dp = max(abs(a - b) for a, b in zip(lb, lt)), param_err(m, n6)
        print(f"{name}: ngpt 3 steps -> export -> PyTorch 3 steps vs ngpt 6 steps: losses {la + lt}, "
              f"max loss diff {dl:.3g}, max param diff {dp:.3g}")
        check(dl <= 1e-5 and dp <= 1e-5, f"continuation in PyTorch differs: loss {dl:.3g} param {dp:.3g}")

    # PyTorch 3 steps -> import -> ngpt 3 steps, against PyTorch's own 6 steps
    m, opt = load_pt(torch.load(p0), False)
    lt = torch_steps(m, opt, 3)
    q3, q6 = os.path.join(tmp, "q3.pt"), os.path.join(tmp, "q3.ngpt")
    torch.save({"model_state": m.state_dict(), "model_cfg": dataclasses.asdict(cfg),
                "optim_state": opt.state_dict()}, q3)
    check(run(CONVERT + ["import", q3, q6]).returncode == 0, "import of a PyTorch training checkpoint")
    ln = ngpt_steps(q6, os.path.join(tmp, "q6.ngpt"), 3)
    lt2 = torch_steps(m, opt, 3)
    dl, dp = max(abs(a - b) for a, b in zip(ln, lt2)), param_err(m, os.path.join(tmp, "q6.ngpt"))
    print(f"{name}: PyTorch 3 steps -> import -> ngpt 3 steps vs PyTorch 6 steps: losses {lt + ln}, "
          f"max loss diff {dl:.3g}, max param diff {dp:.3g}")
    check(dl <= 1e-5 and dp <= 1e-5, f"continuation in ngpt differs: loss {dl:.3g} param {dp:.3g}")


def test_cli_training(ng, tmp):
    """`ngpt train` -> export -> PyTorch continues; PyTorch -> import ->
    `ngpt train --resume` continues; a training checkpoint survives
    export -> import byte for byte, so resuming from it is bit-identical."""
    if run(ng.env + [ng.cli, "train", "--help"], expect_ok=False).returncode != 0:
        print("PENDING: `ngpt train` is not in this tree: the CLI training round trip is not run")
        return
    data = os.path.join(tmp, "data.txt")
    with open(data, "wb") as f:
        f.write(TEXT * 30)
    tiny = sum([["--config", kv] for kv in ("T=16", "C=32", "L=2", "H=4", "d_ff=64")], [])
    common = ["--data", data, "--batch", "2", "--eval-every", "0", "--eval-batches", "1"]
    a, apt, b = (os.path.join(tmp, f) for f in ("cli_a.ngpt", "cli_a.pt", "cli_b.ngpt"))
    r = run(ng.env + [ng.cli, "train", "--steps", "4", "--warmup", "1", "--out", a] + common + tiny)
    if not check(r.returncode == 0, "ngpt train"):
        return
    ck = export(a, apt, nt.TINY, "export of `ngpt train` output")
    m, mcfg = load_like_original(ck, "export of `ngpt train` output") if ck is not None else (None, None)
    if m is None:
        return
    opt = torch.optim.AdamW(m.parameters(), lr=ck["train_cfg"]["lr"],
                            betas=(ck["train_cfg"]["beta1"], ck["train_cfg"]["beta2"]),
                            eps=ck["train_cfg"]["eps"], weight_decay=ck["train_cfg"]["weight_decay"])
    opt.load_state_dict(ck["optim_state"])
    m.train()
    x = torch.tensor([list(TEXT[:16]), list(TEXT[40:56])])
    y = torch.tensor([list(TEXT[1:17]), list(TEXT[41:57])])
    losses = []
    for _ in range(3):
        opt.zero_grad()
        _, loss = m(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    ok = all(np.isfinite(losses)) and int(opt.state_dict()["state"][0]["step"]) == 7
    print(f"ngpt train 4 steps -> export -> PyTorch 3 more steps: losses {['%.4f' % v for v in losses]}, "
          f"AdamW step {int(opt.state_dict()['state'][0]['step'])}")
    check(ok, "PyTorch does not continue an `ngpt train` checkpoint")

    check(run(CONVERT + ["import", apt, b]).returncode == 0, "import of the exported training checkpoint")
    same = open(a, "rb").read() == open(b, "rb").read()
    print(f"ngpt train checkpoint -> export -> import: {'byte-identical' if same else 'DIFFERENT'}")
    check(same, "training checkpoint does not survive export -> import byte for byte")

    torch.save({"model_state": m.state_dict(), "model_cfg": mcfg,
                "optim_state": opt.state_dict()}, apt)
    check(run(CONVERT + ["import", apt, b]).returncode == 0, "import of a PyTorch-continued checkpoint")
    c = os.path.join(tmp, "cli_c.ngpt")
    r = run(ng.env + [ng.cli, "train", "--resume", b, "--steps", "10", "--out", c] + common)
    _, _, meta = nt.read_ngpt(c) if r.returncode == 0 else (None, None, {})
    print(f"PyTorch 7 steps -> import -> ngpt train --resume to step 10: exit {r.returncode}, "
          f"train.step {meta.get('train.step')}")
    check(r.returncode == 0 and meta.get("train.step") == 10, "ngpt train --resume of an imported model")


def test_bpe(ng, tmp):
    """A model with a BPE tokenizer (`ngpt train --vocab`): its export carries
    the tokenizer file's bytes ("tokenizer", and --tokenizer-out writes the
    file, which ngpt reads); it loads the original project's way, and its
    greedy ids in PyTorch, decoded by the tokenizer, are `ngpt generate
    --temp 0`'s text; export -> import is byte for byte; an import with a
    tokenizer of another size is refused."""
    data = os.path.join(tmp, "bpe.txt")
    with open(data, "wb") as f:
        f.write(TEXT * 30)
    tiny = sum([["--config", kv] for kv in ("T=16", "C=32", "L=2", "H=4", "d_ff=64")], [])
    m, pt, tok, m2 = (os.path.join(tmp, f) for f in ("bpe.ngpt", "bpe.pt", "bpe.tok", "bpe2.ngpt"))
    r = run(ng.env + [ng.cli, "train", "--vocab", "300", "--steps", "4", "--warmup", "1", "--data",
                      data, "--batch", "2", "--eval-every", "0", "--eval-batches", "1", "--out", m]
            + tiny)
    if not check(r.returncode == 0, "ngpt train --vocab 300"):
        return
    p = run(CONVERT + ["export", m, pt, "--tokenizer-out", tok])
    if not check(p.returncode == 0, "export of a BPE model"):
        return
    ck = torch.load(pt)
    image, V = ck.get("tokenizer"), ck["model_cfg"]["V"]
    ok = isinstance(image, bytes) and image == open(tok, "rb").read() and \
        nt.tokenizer_tokens(image) == V and 256 < V <= 300
    print(f"BPE model -> export: 'tokenizer' holds {len(image or b'')} bytes of a "
          f"{nt.tokenizer_tokens(image) if image else 0}-token tokenizer, V={ck['model_cfg']['V']}")
    check(ok, "the export carries the tokenizer file, with V tokens")
    info = run(ng.env + [ng.cli, "tokenizer", "info", tok])
    check(info.returncode == 0 and f"{V} (256 bytes" in info.stdout,
          f"ngpt reads --tokenizer-out: {info.stdout}")
    model, _ = load_like_original(ck, "BPE export")
    if model is not None:
        prompt = "Once upon a time, a small"
        enc = run(ng.env + [ng.cli, "tokenizer", "encode", "--tokenizer", tok, "--text", prompt])
        ids = [int(x) for x in enc.stdout.split()]
        got, gap = torch_greedy(model, ids, 12, model.cfg.T)
        dec = subprocess.run(ng.env + [ng.cli, "tokenizer", "decode", "--tokenizer", tok, "--ids",
                                       " ".join(map(str, got))], capture_output=True)
        cli = subprocess.run(ng.env + [ng.cli, "generate", "--model", m, "--prompt", prompt, "-n",
                                       "12", "--temp", "0", "--end", "-1"], capture_output=True)
        same = dec.returncode == 0 and cli.returncode == 0 and dec.stdout == cli.stdout
        print(f"BPE export -> the original's loader, greedy 12 tokens: {dec.stdout!r} "
              f"{'identical' if same else 'DIFFERENT'} to ngpt generate ({cli.stdout!r}); "
              f"smallest top-2 logit gap {gap:.3g}")
        check(same, "a BPE model's greedy text in PyTorch differs from ngpt generate's")
    same = run(CONVERT + ["import", pt, m2]).returncode == 0 and \
        open(m, "rb").read() == open(m2, "rb").read()
    print(f"BPE training checkpoint -> export -> import: {'byte-identical' if same else 'DIFFERENT'}")
    check(same, "a BPE checkpoint does not survive export -> import byte for byte")
    other = os.path.join(tmp, "other.tok")
    run(ng.env + [ng.cli, "tokenizer", "train", "--data", data, "--vocab", "280", "--out", other])
    p = run(CONVERT + ["import", pt, m2, "--tokenizer", other], expect_ok=False)
    check(p.returncode != 0 and f"V={V}" in p.stderr, f"another tokenizer is refused: {p.stderr}")


LLAMA = dict(H=6, kv_heads=2, head_dim=10, norm_type="rms", norm_eps=1e-6, mlp="swiglu",
             mlp_bias=False, rope_pairs="halves", tie_lm_head=False)

# The model variants (ngpt_config's switches), one at a time and together.
VARIANTS = (
    ("qkv_bias", dict(qkv_bias=True)),
    ("untied", dict(tie_lm_head=False)),
    ("no_final_norm", dict(final_norm=False)),
    ("post_norm", dict(norm="post")),
    ("sinusoidal", dict(pos="sinusoidal")),
    ("learned", dict(pos="learned")),
    ("proj_bias", dict(proj_bias=True)),
    ("gelu_tanh", dict(gelu="tanh")),
    ("gpt2", dict(pos="learned", qkv_bias=True, proj_bias=True, gelu="tanh")),
    ("all", dict(qkv_bias=True, tie_lm_head=False, final_norm=False, norm="post", pos="learned",
                 proj_bias=True, gelu="tanh")),
    # the Llama family's switches, and a Llama's combination (GQA 3:1, 6 heads
    # of 10 on C = 32, RoPE on halves as Hugging Face rotates them)
    ("rms", dict(norm_type="rms")),
    ("norm_eps", dict(norm_eps=1e-6)),
    ("swiglu", dict(mlp="swiglu")),
    ("no_mlp_bias", dict(mlp_bias=False)),
    ("gqa", dict(kv_heads=2)),
    ("head_dim", dict(head_dim=6)),
    ("rope_halves", dict(rope_pairs="halves")),
    ("llama", LLAMA),
    # Qwen3's and Llama 3's: per-head q/k norms, and Llama 3's rope scaling with
    # an original context of 64 so that T=16's D=8 pairs meet all three of its
    # cases (wavelengths 6.3 kept, 63 smoothed, 628 and 6283 divided by 8)
    ("qk_norm", dict(qk_norm=True)),
    ("rope_llama3", dict(rope_scaling="llama3", rope_factor=8.0, rope_low_freq_factor=1.0,
                         rope_high_freq_factor=4.0, rope_original_context=64)),
    ("qwen3", dict(LLAMA, qk_norm=True)),
    ("llama3", dict(LLAMA, rope_scaling="llama3", rope_factor=8.0, rope_low_freq_factor=1.0,
                    rope_high_freq_factor=4.0, rope_original_context=64)),
)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    ng = Ngpt(args.build, os.environ.get("RUN_ENV", ""))
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        if not os.environ.get("INTEROP_ONLY"):     # INTEROP_ONLY=label,...: those variants only
            test_config(ng, "tiny", dataclasses.replace(nt.TINY, dropout=0.1), 1e-5, tmp, "dataclass")
            test_config(ng, "default", nt.DEFAULT, 5e-5, tmp, "dict")
            test_bare_and_cli(ng, tmp)
            test_quantized(ng, tmp)
            test_rejects(tmp)
            test_optimizer(ng, tmp)
            test_training(ng, args.build, tmp)
            test_cli_training(ng, tmp)
            test_bpe(ng, tmp)
        for label, kw in VARIANTS:
            if os.environ.get("INTEROP_ONLY") and label not in os.environ["INTEROP_ONLY"].split(","):
                continue
            cfg = dataclasses.replace(nt.TINY, dropout=0.1, **kw)
            test_config(ng, label, cfg, 1e-5, tmp, "dict")
            test_training(ng, args.build, tmp, cfg, label)
    print(f"test_interop: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
