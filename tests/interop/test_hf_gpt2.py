#!/usr/bin/python3
"""test_hf_gpt2.py — Hugging Face GPT-2 directories -> ngpt, run by `make test-hf`.

tools/hf_gpt2.py writes random-weight GPT-2 directories at realistic scale
(n_embd 768, n_head 12, vocab_size 50257, n_positions 1024; 2 layers to keep
it to seconds) as the hub lays them out: F32 with bare names and the
attention-mask buffers (as the hub's gpt2), F32 with GPT2LMHeadModel's
`transformer.` prefix and lm_head.weight, F32 in 3 shards with
model.safetensors.index.json, and BF16. For each, `ngpt import DIR` gives:
  - logits (tests/interop/ngpt_logits) within REL of the float64 PyTorch
    reference (tools/hf_gpt2.py's own GPT-2, not transformers): max |ngpt -
    ref| <= REL * max |ref| over every position and token;
  - the same greedy continuation (16 tokens, full recomputation) as the
    reference, and `ngpt generate --temp 0` the same ids through the cache;
  - the same token ids as the reference's BPE for a few texts;
  - `tools/convert.py export` of the imported model, mapped back to Hugging
    Face's names (Linear (out, in) -> Conv1D (in, out)), holds exactly the
    directory's weights and gives the reference model ngpt's logits.
The three F32 directories hold the same weights, so their imports are the
same file byte for byte. --weights q8 imports the file `ngpt quantize`
makes of the float32 import.

REL = 1e-4: ngpt computes in float32 (chains of at most 3072 terms); the
reference in float64 from the same weights.
Options: --build DIR, --layers L (2), --greedy N (16; under qemu each greedy
token is a full forward, minutes at this vocabulary).
Env: RUN_ENV (e.g. qemu for a cross build). Prints "test_hf_gpt2: N passed, M failed".
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import hf_gpt2 as hf  # noqa: E402

CONVERT = [sys.executable, os.path.join(ROOT, "tools", "convert.py")]
REL = 1e-4
PROMPT = "Once upon a time there was a small computer, and it read 1024 words."
TEXTS = ["Hello world", "It is 12 degrees outside; don't stop.", "  two  spaces\nand a line"]
GREEDY = 16
passed = failed = 0


def check(cond, msg):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {msg}", file=sys.stderr)
    return cond


def run(cmd):
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        print(f"command failed ({p.returncode}): {' '.join(cmd)}\n"
              f"{p.stdout.decode(errors='replace')}{p.stderr.decode(errors='replace')}", file=sys.stderr)
    return p


def rel_err(a, ref):
    return float(np.max(np.abs(a.astype(np.float64) - ref)) / np.max(np.abs(ref)))


class Ngpt:
    def __init__(self, build, run_env):
        self.env = run_env.split()
        self.cli = self.env + [os.path.join(build, "ngpt")]
        self.logits_bin = self.env + [os.path.join(build, "tests", "interop", "ngpt_logits")]

    def logits(self, model, ids, tmp):
        tok, out = os.path.join(tmp, "ids.i32"), os.path.join(tmp, "logits.f32")
        np.asarray(ids, dtype="<i4").tofile(tok)
        p = run(self.logits_bin + [model, tok, out])
        return np.fromfile(out, dtype="<f4").reshape(len(ids), -1) if p.returncode == 0 else None

    def greedy(self, model, ids, n, tmp):
        tok, out = os.path.join(tmp, "ids.i32"), os.path.join(tmp, "greedy.i32")
        np.asarray(ids, dtype="<i4").tofile(tok)
        p = run(self.logits_bin + ["--greedy", str(n), model, tok, out])
        return np.fromfile(out, dtype="<i4").tolist() if p.returncode == 0 else None

    def encode(self, model, text):
        p = run(self.cli + ["tokenizer", "encode", "--tokenizer", model, "--text", text])
        return [int(x) for x in p.stdout.split()] if p.returncode == 0 else None


def case(ng, tmp, name, ref, bpe, src_weights, **layout):
    """Writes the directory, imports it, compares; returns the import's path."""
    d = os.path.join(tmp, name)
    hf.write_hf_dir(d, ref.cfg, src_weights, bpe, **layout)
    model = os.path.join(tmp, name + ".ngpt")
    p = run(ng.cli + ["import", d, "--out", model])
    if not check(p.returncode == 0, f"{name}: ngpt import"):
        return None
    # the reference reads the directory itself, as written (BF16 widened)
    ref = hf.load_reference(d)
    ids = bpe.encode(PROMPT)
    want = ref.logits(ids)
    got = ng.logits(model, ids, tmp)
    if check(got is not None and got.shape == want.shape, f"{name}: logits' shape"):
        e = rel_err(got, want)
        print(f"{name}: logits vs the PyTorch reference: max rel error {e:.2e} over "
              f"{got.shape[0]} x {got.shape[1]}")
        check(e <= REL, f"{name}: logits rel error {e:.3e} > {REL}")
    want_g = ref.greedy(ids, GREEDY)
    got_g = ng.greedy(model, ids, GREEDY, tmp)
    check(got_g == want_g, f"{name}: greedy {got_g} (reference {want_g})")
    for t in TEXTS:
        check(ng.encode(model, t) == bpe.encode(t), f"{name}: encode {t!r}: {ng.encode(model, t)} "
              f"(reference {bpe.encode(t)})")
    return model, ref, ids, got, want_g


def export_check(ng, tmp, name, model, cfg, weights, ngpt_logits, ids):
    """convert.py export -> Hugging Face names -> the reference model."""
    pt = os.path.join(tmp, name + ".pt")
    p = run(CONVERT + ["export", model, pt])
    if not check(p.returncode == 0, f"{name}: convert.py export"):
        return
    sd = hf.from_ngpt_state(cfg, torch.load(pt)["model_state"])
    same = all(np.array_equal(sd[k], weights[k]) for k in weights)
    check(same and set(sd) == set(weights), f"{name}: the export holds the directory's weights exactly")
    back = hf.GPT2LMHeadModel(cfg).load_hf(sd)
    e = rel_err(ngpt_logits, back.logits(ids))
    print(f"{name}: export -> PyTorch reference: max rel error {e:.2e} against ngpt's logits")
    check(e <= REL, f"{name}: exported model's logits rel error {e:.3e} > {REL}")


def main():
    global GREEDY
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--greedy", type=int, default=GREEDY, help="tokens (fewer under qemu)")
    a = ap.parse_args()
    GREEDY = a.greedy
    ng = Ngpt(a.build, os.environ.get("RUN_ENV", ""))
    cfg = hf.gpt2_config(layers=a.layers)
    bpe = hf.make_bpe(cfg["vocab_size"])
    weights = hf.random_weights(cfg, seed=1)
    ref = hf.GPT2LMHeadModel(cfg)
    with tempfile.TemporaryDirectory() as tmp:
        first = case(ng, tmp, "f32-hub", ref, bpe, weights, masks=True)
        if first:
            model, _, ids, logits, greedy = first
            export_check(ng, tmp, "f32-hub", model, cfg, weights, logits, ids)
            # generate: the same ids through the KV cache (greedy, no end token met)
            p = run(ng.cli + ["generate", "--model", model, "--prompt", PROMPT, "-n", str(GREEDY),
                              "--temp", "0"])
            want = bpe.decode(greedy)
            check(p.returncode == 0 and p.stdout == want,
                  f"generate --temp 0: {p.stdout!r} (reference {want!r})")
            # --weights q8: the file ngpt quantize makes of the float32 import
            q1, q2 = os.path.join(tmp, "q1.ngpt"), os.path.join(tmp, "q2.ngpt")
            ok = (run(ng.cli + ["import", os.path.join(tmp, "f32-hub"), "--out", q1, "--weights", "q8"]).returncode == 0
                  and run(ng.cli + ["quantize", model, q2]).returncode == 0)
            check(ok and open(q1, "rb").read() == open(q2, "rb").read(),
                  "import --weights q8 == quantize of the float32 import")
        for name, layout in (("f32-prefixed", {"prefix": True}), ("f32-sharded", {"prefix": True, "shards": 3})):
            r = case(ng, tmp, name, ref, bpe, weights, **layout)
            if r and first:
                check(open(r[0], "rb").read() == open(first[0], "rb").read(),
                      f"{name}: the same .ngpt as f32-hub's, byte for byte")
        bf = {k: hf.bf16_widen(hf.bf16_round(v)) for k, v in weights.items()}
        r = case(ng, tmp, "bf16", ref, bpe, weights, dtype="BF16")
        if r:
            export_check(ng, tmp, "bf16", r[0], cfg, bf, r[3], r[2])
    print(f"test_hf_gpt2: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
