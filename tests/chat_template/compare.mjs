// compare.mjs — `make test-hf`'s chat templates (tests/chat_template/test_chat_template.sh):
// every conversation of conversations.json, with and without the generation
// prompt and with enable_thinking unset, true and false, rendered by the
// reference (@huggingface/transformers' apply_chat_template, which renders
// with @huggingface/jinja) and by `ngpt chat --render`, for each template
// given; the texts must be byte-identical, and where the reference refuses
// a conversation (raise_exception) ngpt must refuse it too. A template with
// ",ids" compares the tokens too (`--render --ids`): equal, except where a
// message holds a special token's name, which the reference makes that
// token and ngpt leaves as text (on purpose): then ngpt's tokens must
// decode to the same text with exactly that many special tokens fewer.
// strftime_now's clock is fixed at --date (run with TZ=UTC).
// Usage: node compare.mjs PREFIX NGPT MODEL DATE CONVERSATIONS NAME=CONFIG,TOKENIZER[,ids] ...
// (CONFIG: a tokenizer_config.json or a .jinja template; PREFIX holds node_modules)
// Prints FAIL lines and "N passed, M failed".
import fs from 'fs';
import os from 'os';
import path from 'path';
import { execFileSync } from 'child_process';
import { createRequire } from 'module';

const [prefix, ngpt, model, date, conversations, ...templates] = process.argv.slice(2);
const require = createRequire(path.resolve(prefix) + '/package.json');
const { PreTrainedTokenizer } = await import(require.resolve('@huggingface/transformers'));

const now = Date.parse(date + 'T00:00:00Z');
const RealDate = Date;          // strftime_now reads new Date(): a fixed clock
globalThis.Date = class extends RealDate {
    constructor(...a) { super(...(a.length ? a : [now])); }
    static now() { return now; }
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ngpt-chat-template-'));
let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.log('FAIL: ' + what); } };

function ngptRender(config, conv, args) {
    fs.writeFileSync(path.join(tmp, 'conv.json'), JSON.stringify(conv));
    try {
        return { out: execFileSync(ngpt, ['chat', '--model', model, '--template', config, '--render',
                                          path.join(tmp, 'conv.json'), '--date', date, ...args],
                                   { stdio: ['ignore', 'pipe', 'pipe'] }) };
    } catch (e) {
        return { error: String(e.stderr) };
    }
}

const convs = JSON.parse(fs.readFileSync(conversations, 'utf8'));
for (const spec of templates) {
    const [name, rest] = spec.split('=');
    const [config, tokenizerJson, ids] = rest.split(',');
    const tc = config.endsWith('.jinja') ? { chat_template: fs.readFileSync(config, 'utf8') }
                                         : JSON.parse(fs.readFileSync(config, 'utf8'));
    const tok = new PreTrainedTokenizer(JSON.parse(fs.readFileSync(tokenizerJson, 'utf8')), tc);
    const specials = tok.all_special_tokens || [];
    for (const c of convs) for (const gen of [true, false]) for (const think of [undefined, true, false]) {
        const what = `${name} ${c.name} ${gen ? 'gen' : 'no-gen'} enable_thinking=${think}`;
        const opts = { add_generation_prompt: gen, tokenize: false };
        const args = gen ? [] : ['--no-generation-prompt'];
        if (think !== undefined) opts.enable_thinking = think, args.push(think ? '--think' : '--no-think');
        let want;
        try { want = tok.apply_chat_template(c.messages, opts); } catch (e) { want = null; }
        const got = ngptRender(config, c.messages, args);
        if (want === null) { check(got.error !== undefined, `${what}: the reference refuses, ngpt renders`); continue; }
        check(got.out !== undefined && Buffer.compare(got.out, Buffer.from(want, 'utf8')) === 0,
              `${what}: ${got.error || JSON.stringify(String(got.out))}\n  want ${JSON.stringify(want)}`);
        if (ids !== 'ids') continue;
        const wantIds = Array.from(tok.apply_chat_template(c.messages, { ...opts, tokenize: true, return_tensor: false, return_dict: false }));
        const r = ngptRender(config, c.messages, [...args, '--ids']);
        const gotIds = r.out ? String(r.out).trim().split(' ').filter(x => x).map(Number) : [];
        let typed = 0;
        for (const m of c.messages) for (const s of specials) typed += m.content.split(s).length - 1;
        const count = (v) => v.filter(i => specials.includes(tok.decode([i]))).length;
        if (!typed)
            check(JSON.stringify(gotIds) === JSON.stringify(wantIds), `${what} ids: ${gotIds} want ${wantIds}`);
        else
            check(tok.decode(gotIds) === want && count(wantIds) - count(gotIds) === typed,
                  `${what} ids: the ${typed} typed special tokens must stay text: ${gotIds} (reference ${wantIds})`);
    }
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`compare: ${passed} passed, ${failed} failed`);
