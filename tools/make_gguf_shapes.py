#!/usr/bin/env python3
"""Random-weight GGUF files of `ngpt bench --preset`'s Qwen and Llama 3 shapes, for llama.cpp's
llama-bench: the same shapes measured by both engines (docs/BENCH.md, "Qwen and Llama 3 shapes
against llama.cpp").

    PYTHONPATH=LLAMACPP/gguf-py python3 tools/make_gguf_shapes.py OUTDIR [SHAPE ...]
    LLAMACPP/build/bin/llama-quantize --pure OUTDIR/NAME-f32.gguf OUTDIR/NAME-Q8_0.gguf Q8_0

SHAPE: qwen2.5-0.5b, qwen3-0.6b, llama3.2-1b (default: all); each file is OUTDIR/SHAPE-f32.gguf.
gguf-py is llama.cpp's own writer (https://github.com/ggml-org/llama.cpp, folder gguf-py; it
imports numpy, yaml and sentencepiece). `--pure` keeps every matrix, the tied embedding too, in the
one format, as ngpt's q8/q4 do (without it llama-quantize gives the tied embedding Q6_K or Q8_0).

Weights N(0, 0.02), norms 1, biases 0 (speed does not depend on the values); tokenizer model "none"
(llama-bench needs no vocabulary); no output.weight, so llama.cpp ties the head to token_embd as
the published checkpoints do. Llama 3's rope_scaling becomes rope_freqs.weight, the per-pair
factors llama.cpp's convert_hf_to_gguf.py derives from Hugging Face's _compute_llama3_parameters.
llama.cpp gained the qwen3 architecture after commit c392e50: that file needs a newer build.
numpy shapes are the reverse of ggml's ne[]: ggml {C, H*D} is numpy (H*D, C).
"""
import math
import os
import sys

import numpy as np

try:
    import gguf
except ImportError as e:
    sys.exit(f"make_gguf_shapes.py: needs llama.cpp's gguf-py on PYTHONPATH ({e})")

# The published config.json values of each model, as cli/cmd_bench.c's PRESETS hold them:
# arch, V, C, L, H, KV heads, head_dim, d_ff, rms eps, rope theta, q/k/v biases, q/k norms,
# llama3 rope scaling (factor, low_freq_factor, high_freq_factor, original context) or None.
SHAPES = {
    "qwen2.5-0.5b": ("qwen2", 151936, 896, 24, 14, 2, 64, 4864, 1e-6, 1e6, True, False, None),
    "qwen3-0.6b": ("qwen3", 151936, 1024, 28, 16, 8, 128, 3072, 1e-6, 1e6, False, True, None),
    "llama3.2-1b": ("llama", 128256, 2048, 16, 32, 8, 64, 8192, 1e-5, 5e5, False, False,
                    (32.0, 1.0, 4.0, 8192)),
}
CONTEXT = 4096      # ngpt import's default context, the presets' T


def llama3_rope_factors(theta, head_dim, scaling):
    """The divisor of each pair's inverse frequency (llama.cpp's rope_freqs)."""
    factor, low, high, original = scaling
    low_wavelen, high_wavelen = original / low, original / high
    out = []
    for i in range(0, head_dim, 2):
        wavelen = 2 * math.pi * theta ** (i / head_dim)
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (original / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def write(path, arch, V, C, L, H, KV, D, F, eps, theta, qkv_bias, qk_norm, scaling, seed=0):
    rng = np.random.default_rng(seed)

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)

    ones = lambda n: np.ones(n, dtype=np.float32)
    zeros = lambda n: np.zeros(n, dtype=np.float32)
    w = gguf.GGUFWriter(path, arch)
    w.add_name(os.path.basename(path))
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_context_length(CONTEXT)
    w.add_embedding_length(C)
    w.add_block_count(L)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    if H * D != C:
        w.add_key_length(D)
        w.add_value_length(D)
    w.add_rope_dimension_count(D)
    w.add_rope_freq_base(theta)
    w.add_layer_norm_rms_eps(eps)
    w.add_vocab_size(V)
    w.add_tokenizer_model("none")
    w.add_tensor("token_embd.weight", normal(V, C))
    if scaling:
        w.add_tensor("rope_freqs.weight", llama3_rope_factors(theta, D, scaling))
    for i in range(L):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", ones(C))
        w.add_tensor(p + "attn_q.weight", normal(H * D, C))
        w.add_tensor(p + "attn_k.weight", normal(KV * D, C))
        w.add_tensor(p + "attn_v.weight", normal(KV * D, C))
        if qkv_bias:
            for name, n in (("attn_q", H * D), ("attn_k", KV * D), ("attn_v", KV * D)):
                w.add_tensor(p + name + ".bias", zeros(n))
        if qk_norm:
            w.add_tensor(p + "attn_q_norm.weight", ones(D))
            w.add_tensor(p + "attn_k_norm.weight", ones(D))
        w.add_tensor(p + "attn_output.weight", normal(C, H * D))
        w.add_tensor(p + "ffn_norm.weight", ones(C))
        w.add_tensor(p + "ffn_gate.weight", normal(F, C))
        w.add_tensor(p + "ffn_up.weight", normal(F, C))
        w.add_tensor(p + "ffn_down.weight", normal(C, F))
    w.add_tensor("output_norm.weight", ones(C))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote", path)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    names = argv[2:] or list(SHAPES)
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        print(f"make_gguf_shapes.py: unknown shape {unknown[0]!r} (known: {', '.join(SHAPES)})",
              file=sys.stderr)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    for n in names:
        write(os.path.join(argv[1], n + "-f32.gguf"), *SHAPES[n])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
