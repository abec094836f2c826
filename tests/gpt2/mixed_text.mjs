// mixed_text.mjs — the text the tokenizer references encode (tests/gpt2/
// reference.mjs, tests/hf_tokenizers/reference.mjs): the project's own code
// and prose, and made-up text from a seeded generator: many scripts,
// combining marks, emoji, digits of many kinds, runs of every white space
// character, numbers and contractions. It is valid UTF-8.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

// ---- the project's own files: code and prose
function files(dir, exts) {
    let out = [];
    for (const name of readdirSync(dir).sort()) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) out = out.concat(files(p, exts));
        else if (exts.some((e) => name.endsWith(e))) out.push(p);
    }
    return out;
}

// ---- made-up text

// A seeded generator (mulberry32: the same text on every machine): rand()
// in [0, 1), pick(array), int(lo, hi) inclusive.
export function seeded(seed) {
    let state = seed;
    const rand = () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    return { rand, pick: (a) => a[Math.floor(rand() * a.length)],
             int: (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)) };
}
let rand, pick, int;                    // mixedText's generator
const cp = (c) => String.fromCodePoint(c);
const range = (lo, hi) => () => cp(int(lo, hi));

const letters = [
    range(0x61, 0x7a), range(0x41, 0x5a), range(0xc0, 0xff), range(0x100, 0x17f),
    range(0x391, 0x3c9), range(0x410, 0x44f), range(0x531, 0x556), range(0x5d0, 0x5ea),
    range(0x627, 0x64a), range(0x905, 0x939), range(0xe01, 0xe30), range(0x4e00, 0x9fff),
    range(0xac00, 0xd7a3), range(0x3041, 0x3096), range(0x30a1, 0x30fa), range(0x1d400, 0x1d7cb),
    range(0x10400, 0x1044f), range(0x20000, 0x2a6df),
];
const marks = [range(0x300, 0x36f), range(0x93e, 0x94d), range(0x64b, 0x65f), range(0xfe00, 0xfe0f)];
const digits = [
    range(0x30, 0x39), range(0x660, 0x669), range(0x966, 0x96f), range(0xff10, 0xff19),
    range(0xb2, 0xb3), range(0xbc, 0xbe), range(0x2160, 0x2188), range(0x2460, 0x249b),
    range(0x1d7ce, 0x1d7ff), range(0x10107, 0x10133),
];
const symbols = [
    range(0x21, 0x2f), range(0x3a, 0x40), range(0x5b, 0x60), range(0x7b, 0x7e), range(0xa1, 0xbf),
    range(0x2010, 0x2027), range(0x2190, 0x21ff), range(0x2200, 0x22ff), range(0x2500, 0x257f),
    range(0x1f300, 0x1f5ff), range(0x1f600, 0x1f64f), range(0x1f900, 0x1f9ff), range(0xe000, 0xe0ff),
];
const spaces = [" ", " ", " ", "\t", "\n", "\n", "\r", "\v", "\f", "\u00a0", "\u1680", "\u2000",
    "\u2005", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\u0085",
    "\u180e", "\u200b"];
const contractions = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ll", "'x",
    "''s", "' s", "'", "\u2019s", "n't", "'ss", "'dd"];
const words = ["the", "a", "of", "tokenizer", "BPE", "model", "don", "it", "we", "they", "I",
    "naïve", "Straße", "日本語", "Ελληνικά", "русский", "עברית", "العربية", "हिन्दी", "ไทย",
    "한국어", "🙂", "👩‍💻", "🏳️‍🌈", "e\u0301", "x²", "½", "Ⅻ", "１２３"];

function wordOf(gens, lo, hi) {
    let s = "";
    for (let n = int(lo, hi); n > 0; n--) s += pick(gens)();
    return s;
}
function number() {
    switch (int(0, 5)) {
    case 0: return String(int(0, 9));
    case 1: return String(int(0, 1e9));
    case 2: return `${int(0, 999)}.${int(0, 99999)}`;
    case 3: return `${int(1, 999)},${String(int(0, 999)).padStart(3, "0")}`;
    case 4: return "".padStart(int(10, 40), String(int(0, 9))) + String(int(0, 1e6));
    default: return `-${int(0, 99)}e${int(-30, 30)}`;
    }
}
function token() {
    switch (int(0, 11)) {
    case 0: case 1: return pick(words);
    case 2: return wordOf(letters, 1, 12);
    case 3: return wordOf(letters, 1, 4) + wordOf(marks, 1, 3) + wordOf(letters, 0, 4);
    case 4: return number();
    case 5: return wordOf(digits, 1, 8);
    case 6: return wordOf(symbols, 1, 6);
    case 7: return pick(words) + pick(contractions);
    case 8: return pick(contractions);
    case 9: {                           // any code point but surrogates
        let c;
        do c = int(0x80, 0x10ffff); while (c >= 0xd800 && c <= 0xdfff);
        return cp(c);
    }
    case 10: return wordOf([range(0x21, 0x7e)], 1, 10);
    default: return wordOf([() => pick(spaces)], 2, 30);
    }
}
function separator() {
    const r = rand();
    if (r < 0.6) return " ";
    if (r < 0.7) return "";
    if (r < 0.8) return "\n";
    return wordOf([() => pick(spaces)], 1, r < 0.97 ? 4 : 80);
}

// The project's own code and prose (the files of srcDir, in a fixed order),
// then made-up text of the made-up length in UTF-16 units, from the seeded
// generator above (the same text on every machine).
export function mixedText(srcDir, made_length = 700000) {
    const own = ["src", "cli", "tests", "docs", "tools", "examples", "fuzz"]
        .flatMap((d) => files(join(srcDir, d), [".c", ".h", ".sh", ".md", ".py", ".mjs"]))
        .concat([join(srcDir, "README.md"), join(srcDir, "Makefile"), join(srcDir, "include/ngpt.h")]);
    ({ rand, pick, int } = seeded(0x9e3779b9));
    let made = "";
    while (made.length < made_length) made += token() + separator();
    return own.map((p) => readFileSync(p, "utf8")).join("\n") + "\n" + made;
}

