#!/usr/bin/python3
"""test_llama2c.py — llama2.c's model.bin + tokenizer.bin -> ngpt, run by `make test-hf`.

tools/llama2c_ref.py writes random-weight llama2.c files: the stories15M
shape (dim 288, hidden 768, 6 layers, 6 heads, vocab 32000, seq 256, shared
classifier), and a grouped-query one with an unshared classifier (6 heads,
2 KV heads, 2 layers, vocab 1000), one in export.py's version 1 (3 KV
heads), and two in its version 2 (int8, runq.c's): unshared with
export.py's group size (32 for dim 288), and shared with a group size of 144
(no power of two: the importer reads w2 in panels of 16 rows of 768, which
start and end mid-group). For each,
`ngpt import --llama2c` gives:
  - logits (tests/interop/ngpt_logits) within REL of the float64 reference
    (llama2c_ref.py's own forward, not tools/ngpt_torch.py) over every
    position of a BOS-prefixed prompt;
  - the same greedy continuation (full recomputation) as the reference, and
    `ngpt generate --temp 0` the same text through the cache (the prompt
    starts with BOS there too);
  - the reference's run.c encode for tricky texts (`ngpt tokenizer encode`:
    no BOS): multi-byte characters in and out of the vocabulary (byte
    fallback), tied scores, leading and trailing spaces, the empty text;
  - `--weights q8` the file `ngpt quantize` makes of the float32 import
    (gqa-unshared, v2-unshared);
  - version 2: the checkpoint of version 0 holding its dequantized values
    (q * scale in float32), byte for byte.
REL = 1e-4. Env: RUN_ENV (e.g. qemu for a cross build). Prints
"test_llama2c: N passed, M failed".
"""
import argparse
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import llama2c_ref as ref  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_hf_gpt2 import check, run  # noqa: E402
import test_hf_gpt2 as common  # noqa: E402

REL = 1e-4
PROMPT = "Once upon a time, Lily saw a big red ball."
TEXTS = ["Hello world", " leading space", "trailing space ", "  two  spaces  ", "",
         "café über straße", "日本 and 中文 😀", "a—b", "The end.\nTom", "ballballball"]
CASES = [("stories15M", dict(dim=288, hidden=768, layers=6, heads=6, kv_heads=6, vocab=32000,
                              seq=256, unshared=False)),
         ("gqa-unshared", dict(dim=288, hidden=768, layers=2, heads=6, kv_heads=2, vocab=1000,
                               seq=128, unshared=True)),
         ("v1-gqa", dict(dim=288, hidden=768, layers=2, heads=6, kv_heads=3, vocab=1000,
                         seq=128, unshared=False, version=1)),
         ("v2-unshared", dict(dim=288, hidden=768, layers=2, heads=6, kv_heads=2, vocab=1000,
                              seq=128, unshared=True, version=2)),
         ("v2-gs144", dict(dim=288, hidden=768, layers=2, heads=6, kv_heads=3, vocab=1000,
                           seq=128, unshared=False, version=2, group_size=144))]
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--greedy", type=int, default=8)
    a = ap.parse_args()
    env = os.environ.get("RUN_ENV", "").split()
    cli = env + [os.path.join(a.build, "ngpt")]
    logits_bin = env + [os.path.join(a.build, "tests", "interop", "ngpt_logits")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, cfg in CASES:
            d = os.path.join(tmp, name)
            cfg = dict(cfg)
            version = cfg.pop("version", 0)
            ref.write_dir(d, cfg, version=version, group_size=cfg.pop("group_size", None))
            mb, tb = os.path.join(d, "model.bin"), os.path.join(d, "tokenizer.bin")
            model = os.path.join(tmp, name + ".ngpt")
            if not check(run(cli + ["import", "--llama2c", mb, "--tokenizer", tb, "--out", model])
                         .returncode == 0, f"{name}: ngpt import --llama2c"):
                continue
            m, tok = ref.load_dir(d)
            if version == 2:
                v0, m0 = os.path.join(d, "dequantized.bin"), os.path.join(tmp, name + "-v0.ngpt")
                ref.write_model(v0, cfg, ref.read_model(mb)[1], 0)
                ok = run(cli + ["import", "--llama2c", v0, "--tokenizer", tb, "--out", m0]
                         ).returncode == 0
                check(ok and open(m0, "rb").read() == open(model, "rb").read(),
                      f"{name}: the import of version 0 with the dequantized values is the same")
            ids = tok.encode(PROMPT, bos=True)
            ids_f, out_f = os.path.join(tmp, "ids.i32"), os.path.join(tmp, "out")
            np.asarray(ids, dtype="<i4").tofile(ids_f)
            want = m.logits(ids)
            if check(run(logits_bin + [model, ids_f, out_f]).returncode == 0, f"{name}: logits"):
                got = np.fromfile(out_f, dtype="<f4").reshape(len(ids), -1)
                e = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                print(f"{name}: logits vs the llama2.c reference: max rel error {e:.2e} over "
                      f"{got.shape[0]} x {got.shape[1]}")
                check(e <= REL, f"{name}: logits rel error {e:.3e} > {REL}")
            want_g = m.greedy(ids, a.greedy)
            p = run(logits_bin + ["--greedy", str(a.greedy), model, ids_f, out_f])
            got_g = np.fromfile(out_f, dtype="<i4").tolist() if p.returncode == 0 else None
            check(got_g == want_g, f"{name}: greedy {got_g} (reference {want_g})")
            p = run(cli + ["generate", "--model", model, "--prompt", PROMPT, "-n", str(a.greedy),
                           "--temp", "0"])
            text = tok.decode(want_g)
            check(p.returncode == 0 and p.stdout == text,
                  f"{name}: generate --temp 0: {p.stdout!r} (reference {text!r})")
            for t in TEXTS:
                p = run(cli + ["tokenizer", "encode", "--tokenizer", model, "--text", t])
                got_t = [int(x) for x in p.stdout.split()] if p.returncode == 0 else None
                check(got_t == tok.encode(t), f"{name}: encode {t!r}: {got_t} (reference "
                      f"{tok.encode(t)})")
            if name in ("gqa-unshared", "v2-unshared"):
                q1, q2 = os.path.join(tmp, "q1.ngpt"), os.path.join(tmp, "q2.ngpt")
                ok = (run(cli + ["import", "--llama2c", mb, "--tokenizer", tb, "--out", q1,
                                 "--weights", "q8"]).returncode == 0
                      and run(cli + ["quantize", model, q2]).returncode == 0)
                check(ok and open(q1, "rb").read() == open(q2, "rb").read(),
                      f"{name}: import --weights q8 == quantize of the float32 import")
    print(f"test_llama2c: {common.passed} passed, {common.failed} failed")
    return 0 if common.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
