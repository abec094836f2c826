// reference.mjs — the reference renderings for tests/chat_template/test_chat_template.sh:
// @huggingface/transformers' apply_chat_template (which renders with
// @huggingface/jinja) on every case of CASES (a JSON list of {name,
// config, tokenizer, messages, add_generation_prompt, enable_thinking,
// ids}: config a tokenizer_config.json, tokenizer a tokenizer.json), with
// strftime_now's clock fixed at NOW (Unix seconds; run with TZ=UTC).
// Writes OUT: a JSON object, name -> {text} or {error}, and with ids also
// {ids}: apply_chat_template's tokens.
// Usage: node reference.mjs NODE_MODULES_PARENT CASES NOW OUT
import fs from 'fs';
import path from 'path';
import { createRequire } from 'module';

const [prefix, casesPath, now, outPath] = process.argv.slice(2);
const require = createRequire(path.resolve(prefix) + '/package.json');
const { PreTrainedTokenizer } = await import(require.resolve('@huggingface/transformers'));

const RealDate = Date;      // strftime_now reads new Date(): a fixed clock
globalThis.Date = class extends RealDate {
    constructor(...a) { super(...(a.length ? a : [Number(now) * 1000])); }
    static now() { return Number(now) * 1000; }
};

const cache = new Map();
function tokenizer(config, tokenizerJson) {
    const key = config + '\0' + tokenizerJson;
    if (!cache.has(key)) {
        const tc = JSON.parse(fs.readFileSync(config, 'utf8'));
        const tj = JSON.parse(fs.readFileSync(tokenizerJson, 'utf8'));
        cache.set(key, new PreTrainedTokenizer(tj, tc));
    }
    return cache.get(key);
}

const out = {};
for (const c of JSON.parse(fs.readFileSync(casesPath, 'utf8'))) {
    const opts = { add_generation_prompt: c.add_generation_prompt, tokenize: false };
    if (c.enable_thinking !== undefined) opts.enable_thinking = c.enable_thinking;
    try {
        const tok = tokenizer(c.config, c.tokenizer);
        out[c.name] = { text: tok.apply_chat_template(c.messages, opts) };
        if (c.ids)
            out[c.name].ids = Array.from(tok.apply_chat_template(c.messages,
                { ...opts, tokenize: true, return_tensor: false }));
    } catch (e) {
        out[c.name] = { error: String(e.message || e) };
    }
}
fs.writeFileSync(outPath, JSON.stringify(out));
