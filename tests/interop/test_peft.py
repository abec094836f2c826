#!/usr/bin/python3
"""test_peft.py — PEFT LoRA adapters <-> ngpt, run by `make test-hf`.

tools/hf_gpt2.py and tools/hf_llama.py write random-weight Hugging Face
models (2 layers, a 2000-token vocabulary) and tools/peft_ref.py random PEFT
adapter directories for them (A uniform in +-1/sqrt(in), B normal and
nonzero; adapter_config.json with the fields peft 0.17 saves), in the ways
adapters select modules:
  gpt2-list      GPT-2 C=256: target_modules [c_attn, c_proj, c_fc] (c_proj:
                 both), r=8, alpha 16, F32
  gpt2-regex     a regular expression (attn.c_proj and mlp.c_fc), rsLoRA,
                 r=4, BF16
  gpt2-layer1    [attn.c_attn] in layer 1 only (layers_to_transform,
                 layers_pattern "h"), F16
  smol-all       Llama at SmolLM2's widths (C=576, H=9, KV=3, BF16 weights):
                 all-linear, r=16, alpha 32, rsLoRA
  llama-qv0      Llama C=256 H=8 KV=2, untied: [q_proj, v_proj] in layer 0, F16
  llama-regex    a regular expression with (?:...) and \\d, minus
                 exclude_modules [down_proj], BF16
For each, after `ngpt import` of the model and `ngpt lora import` of the
adapter:
  - logits with the adapter applied (tests/interop/ngpt_logits --adapter)
    within REL of tools/peft_ref.py's float64 PEFT forward, which the
    adapter moves by more than 1% (so the comparison is not empty), and the
    same greedy continuation;
  - `ngpt lora export` then `ngpt lora import` gives the adapter file byte
    for byte, and the exported directory, read by the reference, holds
    exactly the tensors of the original (widened to float32) and gives the
    same logits;
  - `ngpt lora merge` (at scale 1, and 0.5 with :0.5) writes the weights of
    the reference's merge (get_delta_weight in float64, rounded once) to
    within one ulp (counted), and logits within REL of the reference's
    merged model.
REL = 1e-4 (ngpt computes in float32, the reference in float64).
Options: --build DIR, --greedy N. Env: RUN_ENV.
Prints "test_peft: N passed, M failed".
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_gpt2  # noqa: E402
import hf_llama  # noqa: E402
import ngpt_torch  # noqa: E402
import peft_ref  # noqa: E402
from test_hf_gpt2 import Ngpt, check, rel_err, run  # noqa: E402
import test_hf_gpt2 as common  # noqa: E402

REL = 1e-4
PROMPT = "Once upon a time there was a small computer, and it read 1024 words."
GPT2 = hf_gpt2.gpt2_config(layers=2, embd=256, heads=4, vocab=2000, positions=128)
SMOL = hf_llama.llama_config(layers=2, hidden=576, heads=9, kv_heads=3, intermediate=1536,
                             vocab=2000, positions=128)
LLAMA = hf_llama.llama_config(layers=2, hidden=256, heads=8, kv_heads=2, intermediate=512,
                              vocab=2000, positions=128, tied=False)
LC = peft_ref.lora_config
VARIANTS = [
    ("gpt2-list", GPT2, "F32", LC(target_modules=["c_attn", "c_proj", "c_fc"]), "F32"),
    ("gpt2-regex", GPT2, "F32", LC(target_modules=r".*\.h\.\d+\.(attn\.c_proj|mlp\.c_fc)", r=4,
                                   lora_alpha=8, use_rslora=True), "BF16"),
    ("gpt2-layer1", GPT2, "F32", LC(target_modules=["attn.c_attn"], layers_to_transform=[1],
                                    layers_pattern="h"), "F16"),
    ("smol-all", SMOL, "BF16", LC(target_modules="all-linear", r=16, lora_alpha=32,
                                  use_rslora=True), "F32"),
    ("llama-qv0", LLAMA, "F32", LC(target_modules=["q_proj", "v_proj"], layers_to_transform=[0]),
     "F16"),
    ("llama-regex", LLAMA, "F32",
     LC(target_modules=r"model\.layers\.\d+\.(?:self_attn\.(k|o)_proj|mlp\.(gate|down)_proj)",
        exclude_modules=["down_proj"]), "BF16"),
]


def ngpt_linears(cfg, tensors):
    """The reference's (merged) HF tensors as ngpt's Linear weights (out, in)."""
    out = {}
    if cfg["model_type"] == "gpt2":
        for i in range(cfg["n_layer"]):
            for hf, ng in (("attn.c_attn", "attn.qkv"), ("attn.c_proj", "attn.proj"),
                           ("mlp.c_fc", "mlp.fc1"), ("mlp.c_proj", "mlp.fc2")):
                out[f"blocks.{i}.{ng}.weight"] = tensors[f"h.{i}.{hf}.weight"].T
        return out
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t = {k: tensors[p + k + ".weight"] for k in ("self_attn.q_proj", "self_attn.k_proj",
                                                      "self_attn.v_proj", "self_attn.o_proj",
                                                      "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")}
        out[f"blocks.{i}.attn.qkv.weight"] = np.concatenate(
            [t["self_attn.q_proj"], t["self_attn.k_proj"], t["self_attn.v_proj"]])
        out[f"blocks.{i}.attn.proj.weight"] = t["self_attn.o_proj"]
        out[f"blocks.{i}.mlp.fc1.weight"] = np.concatenate([t["mlp.gate_proj"], t["mlp.up_proj"]])
        out[f"blocks.{i}.mlp.fc2.weight"] = t["mlp.down_proj"]
    return out


def ulps(a, b):
    """Elementwise distance in float32 ulps (same-sign values)."""
    ia = np.ascontiguousarray(a, dtype=np.float32).view(np.int32).astype(np.int64)
    ib = np.ascontiguousarray(b, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.abs(ia - ib)


def compare_logits(name, what, got, want, base=None):
    if not check(got is not None and got.shape == want.shape, f"{name}: {what}: logits' shape"):
        return
    e = rel_err(got, want)
    moved = f", the adapter moves them {rel_err(base, want):.2e}" if base is not None else ""
    print(f"{name}: {what}: max rel error {e:.2e} over {got.shape[0]} x {got.shape[1]}{moved}")
    check(e <= REL, f"{name}: {what}: rel error {e:.3e} > {REL}")
    if base is not None:
        check(rel_err(base, want) > 1e-2, f"{name}: the adapter hardly moves the logits")


def merge_check(ng, tmp, name, model, lora, d, peft_dir, ids, scale):
    """ngpt lora merge against the reference's merge at scale."""
    merged = os.path.join(tmp, name + ".merged.ngpt")
    arg = lora if scale == 1.0 else f"{lora}:{scale:g}"
    if not check(run(ng.cli + ["lora", "merge", model, arg, merged]).returncode == 0,
                 f"{name}: ngpt lora merge {arg}"):
        return
    cfg, tensors = hf_gpt2.read_hf_dir(d)
    want_t = ngpt_linears(cfg, peft_ref.merged_tensors(
        cfg, tensors, peft_ref.Adapter(peft_dir, cfg), scale))
    _, got_t, _ = ngpt_torch.read_ngpt(merged)
    worst, off, total = 0, 0, 0
    for k, w in want_t.items():
        u = ulps(got_t[k].reshape(w.shape), w)
        worst, off, total = max(worst, int(u.max())), off + int((u > 0).sum()), total + u.size
    print(f"{name}: merged at {scale:g}: {off} of {total} Linear weights differ from the "
          f"reference's merge, by at most {worst} ulp")
    check(worst <= 1 and off <= total // 100000, f"{name}: merged weights off by {worst} ulp "
          f"({off} of them)")
    ref = peft_ref.reference(d, peft_dir, scale, merged=True)
    compare_logits(name, f"merged at {scale:g}", ng.logits(merged, ids, tmp), ref.logits(ids))


def variant(ng, tmp, bpes, seed, name, cfg, model_dtype, lc, dtype, greedy):
    d, peft_dir = os.path.join(tmp, name), os.path.join(tmp, name + ".peft")
    model, lora = d + ".ngpt", d + ".lora"
    vocab = cfg["vocab_size"]
    bpe = bpes.setdefault(vocab, hf_gpt2.make_bpe(vocab))
    if cfg["model_type"] == "gpt2":
        hf_gpt2.write_hf_dir(d, cfg, hf_gpt2.random_weights(cfg, seed), bpe, model_dtype)
    else:
        hf_llama.write_hf_dir(d, cfg, hf_llama.random_weights(cfg, seed), bpe, model_dtype)
    written = peft_ref.write_adapter(peft_dir, cfg, lc, seed=seed + 100, dtype=dtype)
    ok = (check(run(ng.cli + ["import", d, "--out", model]).returncode == 0, f"{name}: ngpt import")
          and check(run(ng.cli + ["lora", "import", model, peft_dir, lora]).returncode == 0,
                    f"{name}: ngpt lora import"))
    if not ok:
        return
    ids = bpe.encode(PROMPT)
    ref = peft_ref.reference(d, peft_dir)
    plain = peft_ref.reference(d).logits(ids)
    compare_logits(name, f"{len(written) // 2} modules, {dtype}", ng.logits(model, ids, tmp, lora),
                   ref.logits(ids), plain)
    want_g = ref.greedy(ids, greedy)
    got_g = ng.greedy(model, ids, greedy, tmp, lora)
    check(got_g == want_g, f"{name}: greedy {got_g} (reference {want_g})")

    out, back = os.path.join(tmp, name + ".exported"), os.path.join(tmp, name + ".back.lora")
    ok = (check(run(ng.cli + ["lora", "export", model, lora, out]).returncode == 0,
                f"{name}: ngpt lora export")
          and check(run(ng.cli + ["lora", "import", model, out, back]).returncode == 0,
                    f"{name}: ngpt lora import of the export"))
    if ok:
        check(open(lora, "rb").read() == open(back, "rb").read(),
              f"{name}: exported and imported again: the same adapter file")
        exported = hf_gpt2.read_safetensors(os.path.join(out, "adapter_model.safetensors"))
        check(set(exported) == set(written) and
              all(np.array_equal(exported[k], written[k]) for k in written),
              f"{name}: the export holds the adapter's tensors exactly")
        again = peft_ref.reference(d, out).logits(ids)
        check(np.array_equal(again, ref.logits(ids)),
              f"{name}: the reference reads the export to the same logits")
    for scale in (1.0, 0.5):
        merge_check(ng, tmp, name, model, lora, d, peft_dir, ids, scale)
    for p in (d, peft_dir, out):
        shutil.rmtree(p, ignore_errors=True)


class NgptLora(Ngpt):
    """test_hf_gpt2's runner, with an adapter applied (ngpt_logits --adapter)."""

    def logits(self, model, ids, tmp, adapter=None):
        if adapter is None:
            return super().logits(model, ids, tmp)
        tok, out = os.path.join(tmp, "ids.i32"), os.path.join(tmp, "logits.f32")
        np.asarray(ids, dtype="<i4").tofile(tok)
        p = run(self.logits_bin + ["--adapter", adapter, model, tok, out])
        return np.fromfile(out, dtype="<f4").reshape(len(ids), -1) if p.returncode == 0 else None

    def greedy(self, model, ids, n, tmp, adapter=None):
        if adapter is None:
            return super().greedy(model, ids, n, tmp)
        tok, out = os.path.join(tmp, "ids.i32"), os.path.join(tmp, "greedy.i32")
        np.asarray(ids, dtype="<i4").tofile(tok)
        p = run(self.logits_bin + ["--adapter", adapter, "--greedy", str(n), model, tok, out])
        return np.fromfile(out, dtype="<i4").tolist() if p.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--greedy", type=int, default=8)
    a = ap.parse_args()
    ng = NgptLora(a.build, os.environ.get("RUN_ENV", ""))
    bpes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed, (name, cfg, model_dtype, lc, dtype) in enumerate(VARIANTS, 1):
            variant(ng, tmp, bpes, seed, name, cfg, model_dtype, lc, dtype, a.greedy)
    print(f"test_peft: {common.passed} passed, {common.failed} failed")
    return 0 if common.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
