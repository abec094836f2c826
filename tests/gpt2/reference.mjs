// reference.mjs — the other side of `make test-gpt2` (tests/gpt2/test_gpt2.sh):
//
//     node tests/gpt2/reference.mjs NODE_PREFIX SOURCE_DIR OUT_DIR
//
// writes OUT_DIR/text.txt, at least 1 MB of mixed text, and OUT_DIR/ids.txt,
// its ids under js-tiktoken's "gpt2" encoding (installed under NODE_PREFIX by
// npm), on one line separated by spaces, as `ngpt tokenizer encode` prints
// them. The text is mixed_text.mjs's (the project's own code and prose in
// SOURCE_DIR, and made-up text in many scripts). It is valid UTF-8 (what
// tiktoken takes) and never holds "<|endoftext|>" (which js-tiktoken
// refuses in text).
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mixedText } from "./mixed_text.mjs";

const [prefix, srcDir, outDir] = process.argv.slice(2);
const require = createRequire(join(prefix, "node_modules") + "/");
const { getEncoding } = require("js-tiktoken");

const text = mixedText(srcDir).replaceAll("<|endoftext|>", "<|end of text|>");

const ids = getEncoding("gpt2").encode(text);
const bytes = Buffer.from(text, "utf8");
writeFileSync(join(outDir, "text.txt"), bytes);
writeFileSync(join(outDir, "ids.txt"), ids.join(" ") + "\n");
console.log(`reference: ${bytes.length} bytes of text, ${ids.length} ids (js-tiktoken gpt2)`);
