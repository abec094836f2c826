#!/bin/sh
# test_cli_bpe.sh — a model with a BPE tokenizer through the tool: trained
# with --tokenizer (the file, or a checkpoint that carries one) and with
# --vocab; its checkpoints carry the tokenizer (info, tokenizer info/encode
# read it), resume keeps it bit for bit; chat's role markers are matched on
# bytes across tokens (the marker begins inside the reply's last token);
# generate stops exactly before a stop sequence; eval prints nats per token,
# bits per byte and perplexity; trace labels are the tokens' text; checksum
# encodes its prompt and prints golden values on every build; bad usage and
# mismatches get clear errors.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
i=0
while [ $i -lt 200 ]; do printf 'user: hi\nassistant: ok\n' >> "$dir/d.txt"; i=$((i + 1)); done
TINY="--config T=16 --config C=32 --config L=2 --config H=4 --config d_ff=64"

# A tokenizer whose tokens cross the role markers: "ok\n" is one token, so
# "\nuser: " begins inside the reply's last token; ": " is one token.
$N tokenizer train --data "$dir/d.txt" --vocab 266 --split lines --no-pad --out "$dir/t.tok" > /dev/null 2>&1
check $? "tokenizer train"
$N tokenizer encode --tokenizer "$dir/t.tok" --text 'assistant: ok\nuser: ' > "$dir/ids" 2>&1
[ "$(cat "$dir/ids")" = "258 115 261 116 257 116 256 263 117 264 256" ]
check $? "the marker spans tokens, beginning inside \"ok\\\\n\": $(cat "$dir/ids")"

# chat: a dialogue model of these tokens answers "ok" and stops at the marker
$N train --data "$dir/d.txt" --tokenizer "$dir/t.tok" $TINY --config dropout=0 --batch 8 --seq 16 \
    --steps 60 --warmup 5 --lr 1e-2 --min-lr 1e-3 --eval-every 0 --eval-batches 1 \
    --out "$dir/m.ngpt" > "$dir/train.log" 2>&1
check $? "train --tokenizer: $(cat "$dir/train.log")"
grep -q "^tokenizer $dir/t.tok: 266 tokens (9 merges); [0-9]* tokens train" "$dir/train.log" &&
    grep -q "^model V=266 " "$dir/train.log"
check $? "the tokenizer sets V and is reported: $(head -3 "$dir/train.log")"
grep -Eq "^step 60/60 loss [0-9.]+ \([0-9.]+ bits/byte\) .* eval_loss [0-9.]+ bits/byte [0-9.]+$" "$dir/train.log"
check $? "losses per token and per byte: $(tail -2 "$dir/train.log")"
printf 'hi\nhi\n' | $N chat --model "$dir/m.ngpt" --temp 0 -n 20 > "$dir/chat.out" 2> "$dir/chat.err"
check $? "chat: $(cat "$dir/chat.err")"
printf 'ok\nok\n' | cmp -s - "$dir/chat.out"
check $? "chat answers ok and stops inside the token that begins the marker: $(od -c "$dir/chat.out" | head -3)"
grep -q "longer than the model's context (T=16 tokens): its first [0-9]* tokens were dropped" "$dir/chat.err"
check $? "chat counts the dropped part in tokens: $(cat "$dir/chat.err")"

# the checkpoint carries the tokenizer
$N info "$dir/m.ngpt" > "$dir/info" 2>&1 && grep -q "^tokenizer:   BPE, 266 tokens (9 merges, 1 special; end 265)" "$dir/info"
check $? "info names the tokenizer: $(tail -1 "$dir/info")"
$N tokenizer info "$dir/m.ngpt" > "$dir/tinfo" 2>&1 && $N tokenizer info "$dir/t.tok" > "$dir/tinfo2" 2>&1 &&
    [ "$(grep checksum "$dir/tinfo")" = "$(grep checksum "$dir/tinfo2")" ]
check $? "the checkpoint's tokenizer is the file's: $(cat "$dir/tinfo")"
[ "$($N tokenizer encode --tokenizer "$dir/m.ngpt" --text 'assistant: ok\nuser: ')" = "$(cat "$dir/ids")" ]
check $? "tokenizer encode reads a checkpoint's tokenizer"
$N init --out "$dir/b.ngpt" $TINY > /dev/null 2>&1 && $N info "$dir/b.ngpt" | grep -q "^tokenizer:   none: tokens are bytes"
check $? "a byte-level model has none"

# generate stops exactly before a stop sequence, wherever the tokens fall
$N generate --model "$dir/m.ngpt" --prompt "$(printf 'user: hi\nassistant: ')" -n 12 --temp 0 \
    --end -1 > "$dir/g.out" 2> "$dir/g.err"
check $? "generate: $(cat "$dir/g.err")"
printf 'ok\nuser: hi\nassistant' | cmp -s - "$dir/g.out"
check $? "greedy text: $(od -c "$dir/g.out" | head -3)"
grep -q "decode 12 tokens in .* tok/s, 21 bytes: .* bytes/s" "$dir/g.err"
check $? "generate reports bytes/s: $(cat "$dir/g.err")"
# each stop sequence's first occurrence in that text ends the output
stop_case() {   # stop_case STOP WANT (printf formats)
    $N generate --model "$dir/m.ngpt" --prompt "$(printf 'user: hi\nassistant: ')" -n 12 --temp 0 \
        --end -1 --stop "$1" > "$dir/s.out" 2> "$dir/s.err"
    printf "$2" | cmp -s - "$dir/s.out" && grep -q "stop: stop sequence" "$dir/s.err"
    check $? "--stop '$1' ends the output just before it: $(od -c "$dir/s.out" | head -2)"
}
stop_case 'k\nu' 'o'                              # begins inside "ok\n", ends inside "user"
stop_case 'i\nass' 'ok\nuser: h'                 # begins inside "hi"
stop_case 'hi' 'ok\nuser: '                       # a whole token
stop_case 'er: h' 'ok\nus'                        # begins inside "ser", spans three tokens
stop_case 'istant' 'ok\nuser: hi\nass'           # begins inside "is", ends with the text
$N generate --model "$dir/m.ngpt" --prompt "$(printf 'user: hi\nassistant: ')" -n 12 --temp 0 \
    --end 263 > "$dir/e.out" 2> "$dir/e.err"
[ ! -s "$dir/e.out" ] && grep -q "stop: end token" "$dir/e.err"
check $? "--end ID: the token \"ok\\n\" ends it at once: $(cat "$dir/e.err")"

# resume keeps the tokenizer and continues bit for bit
$N train --data "$dir/d.txt" --tokenizer "$dir/m.ngpt" $TINY --batch 4 --seq 16 --steps 8 --warmup 2 \
    --eval-every 4 --eval-batches 1 --out "$dir/a.ngpt" > "$dir/a.log" 2>&1
check $? "train --tokenizer CHECKPOINT: $(cat "$dir/a.log")"
$N train --data "$dir/d.txt" --tokenizer "$dir/t.tok" $TINY --batch 4 --seq 16 --steps 8 --warmup 2 \
    --eval-every 4 --eval-batches 1 --out "$dir/c.ngpt" --stop-at 3 > "$dir/c.log" 2>&1 &&
    $N train --resume "$dir/c.ngpt" --data "$dir/d.txt" --out "$dir/c.ngpt" > "$dir/c2.log" 2>&1
check $? "train --stop-at, then --resume: $(cat "$dir/c.log" "$dir/c2.log")"
cmp -s "$dir/a.ngpt" "$dir/c.ngpt"
check $? "the resumed run's checkpoint equals the unbroken run's"
grep -q "^tokenizer $dir/c.ngpt: 266 tokens" "$dir/c2.log"
check $? "resume reports the checkpoint's tokenizer: $(head -3 "$dir/c2.log")"

# --vocab: a tokenizer trained on the training split first
$N train --data "$dir/d.txt" --vocab 270 $TINY --batch 4 --seq 16 --steps 2 --warmup 1 \
    --eval-batches 1 --out "$dir/v.ngpt" > "$dir/v.log" 2>&1
check $? "train --vocab: $(cat "$dir/v.log")"
grep -q "^tokenizer --vocab: 270 tokens (12 merges), trained on the training split" "$dir/v.log" &&
    $N info "$dir/v.ngpt" | grep -q "^config:      V=270 "
check $? "--vocab sets V: $(head -3 "$dir/v.log")"

# eval, trace, checksum
out=$($N eval --model "$dir/m.ngpt" --data "$dir/d.txt" --batches 2 --batch 2 2>&1)
echo "$out" | grep -Eq "^loss [0-9.]+ nats/token, [0-9.]+ bits/byte, perplexity [0-9.]+ \(2 x 2 windows of 16 tokens from the last 460 bytes, [0-9]+ tokens: [0-9.]+ bytes/token\)$"
check $? "eval: $out"
$N trace --model "$dir/m.ngpt" --prompt "$(printf 'user: hi\nassistant: ok')" --text --layer 0 > "$dir/trace" 2>&1
check $? "trace: $(head -3 "$dir/trace")"
sed -n 2p "$dir/trace" | grep -q '^           u   ser    :␣    hi    \\n    as     s    is     t    an     t    :␣     o     k$'
check $? "trace labels are the tokens' text, escaped: $(sed -n 2p "$dir/trace")"
$N trace --model "$dir/m.ngpt" --prompt "x" --svg "$dir/t.svg" > /dev/null 2>&1
check $? "trace --svg"
c1=$($N checksum "$dir/m.ngpt" --prompt "$(printf 'user: hi\nassistant: ')" --threads 1)
c3=$($N checksum "$dir/m.ngpt" --prompt "$(printf 'user: hi\nassistant: ')" --threads 3)
[ -n "$c1" ] && [ "$c1" = "$c3" ]
check $? "checksum --threads 1 and 3: $c1 / $c3"
$N init --out "$dir/g.ngpt" --tokenizer "$dir/t.tok" --seed 3 $TINY > /dev/null 2>&1
g=$($N checksum "$dir/g.ngpt" --prompt "$(printf 'user: hi\nassistant: ok\n')" | tr '\n' ' ')
[ "$g" = "params=87653c1005a7ff27 logits_eval=2f6e1043790e99f2 logits_train=c3aeefa7d038cabe " ]
check $? "golden checksums of a BPE model: $g"

# quantize keeps the tokenizer; eval --compare reads both models' tokens
$N quantize "$dir/m.ngpt" "$dir/q.ngpt" > "$dir/q.log" 2>&1
check $? "quantize a BPE model: $(cat "$dir/q.log")"
$N info "$dir/q.ngpt" > "$dir/qinfo" 2>&1 && grep -q "^tokenizer:   BPE, 266 tokens (9 merges, 1 special; end 265)" "$dir/qinfo"
check $? "the 8-bit file carries the tokenizer: $(tail -1 "$dir/qinfo")"
# info's file sizes (ngpt_config_file_size) are those of the model files (g.ngpt:
# ngpt init's, of m.ngpt's config; m.ngpt also holds AdamW's moments), tokenizer included
$N info "$dir/m.ngpt" > "$dir/minfo" 2>&1 &&
    grep -q "^file size:   f32 $(wc -c < "$dir/g.ngpt") bytes (.*), q8 $(wc -c < "$dir/q.ngpt") bytes (.*), with the tokenizer$" "$dir/minfo" &&
    grep -q "^file size:   f32 $(wc -c < "$dir/g.ngpt") bytes (.*), q8 $(wc -c < "$dir/q.ngpt") bytes" "$dir/qinfo"
check $? "info gives both files' sizes: $(grep 'file size' "$dir/minfo" "$dir/qinfo")"
$N generate --model "$dir/q.ngpt" --prompt "$(printf 'user: hi\nassistant: ')" -n 4 --temp 0 --end -1 > /dev/null 2> "$dir/qg.err"
check $? "generate with the 8-bit BPE model: $(cat "$dir/qg.err")"
out=$($N eval --model "$dir/q.ngpt" --data "$dir/d.txt" --batches 2 --batch 2 --compare "$dir/m.ngpt" 2>&1)
echo "$out" | grep -Eq "^$dir/m.ngpt: loss [0-9.]+ nats/token, [0-9.]+ bits/byte" &&
    echo "$out" | grep -q "the same most likely next token at" &&
    echo "$out" | grep -q "greedy after the held-out text's first 16 tokens"
check $? "eval --compare of a BPE model's two forms: $out"
$N eval --model "$dir/q.ngpt" --data "$dir/d.txt" --batches 1 --batch 1 --compare "$dir/v.ngpt" > /dev/null 2> "$dir/err"
[ $? -ne 0 ] && grep -q "V=270 T=16 differ\|its tokenizer is not the model's" "$dir/err"
check $? "eval --compare refuses another tokenizer's model: $(cat "$dir/err")"

# errors
expect() {  # expect CODE PATTERN ARGS...: exit code and a stderr pattern
    code=$1 pat=$2; shift 2
    $N "$@" > /dev/null 2> "$dir/err"; rc=$?
    [ $rc -eq "$code" ] && grep -q -e "$pat" "$dir/err"
    check $? "ngpt $* -> exit $rc (want $code), stderr: $(cat "$dir/err") (want /$pat/)"
}
expect 2 "give --tokenizer FILE or --vocab N, not both" train --data "$dir/d.txt" --tokenizer "$dir/t.tok" --vocab 300
expect 2 "cannot change a resumed model" train --resume "$dir/c.ngpt" --tokenizer "$dir/t.tok"
expect 2 "disagrees with the tokenizer's 266 tokens" train --data "$dir/d.txt" --tokenizer "$dir/t.tok" --config V=300
expect 1 "is a byte-level model: it carries no tokenizer" train --data "$dir/d.txt" --tokenizer "$dir/b.ngpt"
expect 1 "is a byte-level model" tokenizer info "$dir/b.ngpt"
expect 2 "--vocab expects an integer in 258" train --vocab 100
expect 2 "the prompt has 17 tokens but the model's context is T=16" checksum "$dir/m.ngpt" --prompt "$(printf 'hi hi hi hi hi hi hi hi hi')"
summary test_cli_bpe
