#!/bin/sh
# test_examples.sh — runs the examples (built by `make examples` against the
# installed library through pkg-config) on a tiny model made by the CLI:
# stream, sampling (greedy, top-k and top-p side by side) and attention
# (every head's weights as text), with and without a tokenizer file, and on
# a model that carries one; chat (ChatML) against ngpt chat; extract (a JSON
# Schema's output read back).
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
$RUN_ENV "$B/ngpt" init --out "$dir/m.ngpt" --seed 3 --config T=32 --config C=32 --config L=2 \
    --config H=4 --config d_ff=64 >/dev/null 2>&1
check $? "ngpt init"
out=$($RUN_ENV "$B/examples/stream" "$dir/m.ngpt" "hello" 20 2>"$dir/err")
check $? "stream exit status: $(cat "$dir/err")"
grep -q "stream: 20 tokens (max tokens)" "$dir/err"
check $? "stream summary: $(cat "$dir/err")"
out2=$($RUN_ENV "$B/examples/stream" "$dir/m.ngpt" "hello" 20 2>/dev/null)
[ "$out" = "$out2" ]
check $? "same seed, same text"
$RUN_ENV "$B/examples/stream" "$dir/missing.ngpt" "x" 2>"$dir/err"
[ $? -ne 0 ] && grep -q "stream: .*missing.ngpt" "$dir/err"
check $? "a missing model is a clear error"
# one version everywhere: ngpt.h, the tool, the installed pkg-config file
want=$(awk '/^#define NGPT_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 } END { print v }' include/ngpt.h)
got_tool=$($RUN_ENV "$B/ngpt" --version | awk '{ print $2 }')
got_pc=$(sed -n 's/^Version: //p' "$B/examples/prefix/lib/pkgconfig/ngpt.pc")
[ -n "$want" ] && [ "$got_tool" = "$want" ] && [ "$got_pc" = "$want" ]
check $? "one version: ngpt.h $want, ngpt --version $got_tool, ngpt.pc $got_pc"

# sampling: three columns, deterministic, greedy is ngpt generate --temp 0
out=$($RUN_ENV "$B/examples/sampling" "$dir/m.ngpt" "hello" 30 2>"$dir/err")
check $? "sampling exit status: $(cat "$dir/err")"
echo "$out" | grep -q "^greedy  *| top-k 40, T 0.8  *| top-p 0.9, T 0.8"
check $? "sampling prints the three columns: $out"
[ "$(echo "$out" | grep -c "(30 tokens, max tokens)")" = 1 ] && echo "$out" | grep -q "(30 tokens, max tokens) *| (30 tokens"
check $? "sampling: 30 tokens in each column"
[ "$out" = "$($RUN_ENV "$B/examples/sampling" "$dir/m.ngpt" "hello" 30 2>/dev/null)" ]
check $? "sampling: the same seed, the same columns"
greedy=$(echo "$out" | sed -n 5p | cut -c1-26)
want=$($N generate --model "$dir/m.ngpt" --prompt hello --temp 0 -n 30 2>/dev/null | tr '\n' '|' |
       LC_ALL=C tr -c ' -~' '.' | cut -c1-26)
[ ${#greedy} -eq 26 ] && [ "$greedy" = "$want" ]
check $? "the greedy column is ngpt generate --temp 0: \"$greedy\" vs \"$want\""
$N tokenizer train --data "$dir/m.ngpt" --vocab 256 --no-end --no-pad --out "$dir/bytes.tok" >/dev/null 2>&1
out2=$($RUN_ENV "$B/examples/sampling" "$dir/m.ngpt" "hello" 30 "$dir/bytes.tok" 2>"$dir/err")
[ "$out2" = "$out" ]
check $? "sampling with a byte tokenizer file prints the same: $(cat "$dir/err")"
$N tokenizer train --data "$dir/m.ngpt" --vocab 300 --out "$dir/big.tok" >/dev/null 2>&1
$RUN_ENV "$B/examples/sampling" "$dir/m.ngpt" "hello" 30 "$dir/big.tok" >/dev/null 2>"$dir/err"
[ $? -eq 1 ] && grep -q "tokenizer has 300 tokens but the model only V=256" "$dir/err"
check $? "sampling with a tokenizer larger than V: $(cat "$dir/err")"
# a model that carries a tokenizer: the examples use it without being told
$RUN_ENV "$B/ngpt" init --out "$dir/bpe.ngpt" --tokenizer "$dir/big.tok" --seed 3 --config T=32 \
    --config C=32 --config L=2 --config H=4 --config d_ff=64 >/dev/null 2>&1
out=$($RUN_ENV "$B/examples/sampling" "$dir/bpe.ngpt" "hello" 12 2>"$dir/err")
greedy=$(echo "$out" | sed -n 5p | cut -c1-26 | sed 's/ *$//')
want=$($N generate --model "$dir/bpe.ngpt" --prompt hello --temp 0 -n 12 2>/dev/null |
       tr '\n' '|' | LC_ALL=C tr -c ' -~' '.' | cut -c1-26 | sed 's/ *$//')
[ -n "$greedy" ] && [ "$greedy" = "$want" ]
check $? "sampling a BPE model: the greedy column is ngpt generate's: \"$greedy\" vs \"$want\" $(cat "$dir/err")"
$RUN_ENV "$B/examples/attention" "$dir/bpe.ngpt" "hello hello" > "$dir/att" 2>"$dir/err"
check $? "attention on a BPE model: $(cat "$dir/err")"

# attention: L*H grids whose rows are distributions
out=$($RUN_ENV "$B/examples/attention" "$dir/m.ngpt" "hello" 2>"$dir/err")
check $? "attention exit status: $(cat "$dir/err")"
[ "$(echo "$out" | grep -c "^layer [01] head [0-3]$")" = 8 ]
check $? "attention prints 2 layers x 4 heads"
[ "$(echo "$out" | grep -c "rows sum to 1.0000..1.0000")" = 8 ]
check $? "attention rows sum to 1: $(echo "$out" | grep "rows sum" | sort | uniq -c)"
echo "$out" | sed -n 2p | grep -q "^ *h |@    |$"
check $? "the first token attends only to itself: $(echo "$out" | sed -n 2p)"
$RUN_ENV "$B/examples/attention" "$dir/m.ngpt" "0123456789012345678901234567890123" >/dev/null 2>"$dir/err"
[ $? -eq 2 ] && grep -q "the model takes 1..32" "$dir/err"
check $? "attention with a prompt longer than T: $(cat "$dir/err")"
# chat: a chat template through the library (ChatML: the model carries none) on a model whose tokenizer has the
# markers (test_chat --write), trained a little; greedy, it answers as ngpt chat
i=0
while [ $i -lt 40 ]; do echo "the cat sat on the mat and the dog ran; line $i" >> "$dir/t.txt"; i=$((i + 1)); done
$RUN_ENV "$B/tests/test_chat" --write "$dir" > "$dir/err" 2>&1 &&
    $RUN_ENV "$B/ngpt" train --data "$dir/t.txt" --tokenizer "$dir/chatml.tok" --config T=128 \
        --config C=32 --config L=1 --config H=2 --config d_ff=64 --config dropout=0 --batch 8 \
        --seq 64 --steps 60 --warmup 5 --lr 1e-2 --eval-every 0 --eval-batches 1 \
        --out "$dir/chatml.ngpt" > /dev/null 2>> "$dir/err"
check $? "a ChatML model: $(cat "$dir/err")"
printf 'hi\nand the dog\n' | $RUN_ENV "$B/examples/chat" "$dir/chatml.ngpt" "be brief" > "$dir/chat.out" 2> "$dir/err"
check $? "chat exit status: $(cat "$dir/err")"
printf 'hi\nand the dog\n' | $RUN_ENV "$B/ngpt" chat --model "$dir/chatml.ngpt" --system "be brief" --temp 0 \
    -n 128 > "$dir/cli.out" 2> "$dir/err"
cmp -s "$dir/chat.out" "$dir/cli.out" && [ "$(wc -l < "$dir/chat.out")" -ge 2 ]
check $? "chat answers as ngpt chat --temp 0: $(od -c "$dir/chat.out" | head -3)"
$RUN_ENV "$B/examples/chat" "$dir/m.ngpt" "x" < /dev/null > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "chat: .*no tokenizer" "$dir/err"
check $? "chat on a byte-level model is refused: $(cat "$dir/err")"

# shared_model: three contexts on one model, each what a context of its own
# gives (context 0 with seed 0 is also context 0 of a one-context run); the
# first conversation saved as a session that loads into a context
out=$($RUN_ENV "$B/examples/shared_model" "$dir/m.ngpt" 3 12 "$dir/s.session" 2>"$dir/err")
check $? "shared_model exit status: $(cat "$dir/err")"
[ "$(echo "$out" | grep -c "^context [012]: Once upon a time")" = 3 ] &&
    grep -q "3 contexts on one model: resident" "$dir/err"
check $? "shared_model prints three contexts: $out $(cat "$dir/err")"
one=$($RUN_ENV "$B/examples/shared_model" "$dir/m.ngpt" 1 12 2>/dev/null)
[ "$one" = "$(echo "$out" | sed -n 1p)" ]
check $? "shared_model: context 0 of three = the only context: $one"
[ -s "$dir/s.session" ] && $N generate --model "$dir/m.ngpt" --session "$dir/s.session" --prompt "x" -n 2 >/dev/null 2>"$dir/err"
check $? "shared_model's session resumes in ngpt generate: $(cat "$dir/err")"
$RUN_ENV "$B/examples/shared_model" "$dir/missing.ngpt" 2>"$dir/err"
[ $? -ne 0 ] && grep -q "shared_model: ngpt_model_open: .*missing.ngpt" "$dir/err"
check $? "shared_model: a missing model is a clear error: $(cat "$dir/err")"
# extract: a JSON Schema holds the output, then the fields are read back
$RUN_ENV "$B/ngpt" init --out "$dir/long.ngpt" --seed 3 --config T=256 --config C=32 --config L=2 \
    --config H=4 --config d_ff=64 >/dev/null 2>&1
for model in long bpe; do
    [ $model = bpe ] && $RUN_ENV "$B/ngpt" init --out "$dir/bpe.ngpt" --tokenizer "$dir/big.tok" \
        --seed 3 --config T=256 --config C=32 --config L=2 --config H=4 --config d_ff=64 >/dev/null 2>&1
    $RUN_ENV "$B/examples/extract" "$dir/$model.ngpt" "call the plumber by friday" > "$dir/x" 2> "$dir/err"
    check $? "extract ($model): $(cat "$dir/err")"
    head -n 1 "$dir/x" | grep -Eq '^\{"title":".+","due":"[0-9]{4}-[0-9]{2}-[0-9]{2}","priority":[1-3]\}$' &&
        sed -n 4p "$dir/x" | grep -Eq '^priority: [1-3]$'
    check $? "extract ($model) prints the JSON and its fields: $(cat "$dir/x")"
done
summary test_examples
