#!/bin/sh
# test_cli_quantize.sh — `ngpt quantize` end to end: the 8-bit default model
# (seed 42) prints README's checksums on this build (natively, or under qemu
# for the ARM builds) with 1 and 3 threads, is 3.5x smaller and the same
# bytes every time; `ngpt info` names its type, size and arenas; a tiny
# dialogue model (trained as in test_cli_chat_trace.sh) still answers "ok"
# when quantized, evaluates within 2% of its float32 bits per byte, and
# generates, traces and chats; train refuses an 8-bit model; bad usage gets
# the documented exit codes.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

$N init --out "$dir/m.ngpt" > /dev/null 2> "$dir/err"
check $? "ngpt init: $(cat "$dir/err")"
$N quantize "$dir/m.ngpt" "$dir/q.ngpt" > "$dir/out" 2> "$dir/err"
check $? "ngpt quantize: $(cat "$dir/err")"
grep -q "^wrote $dir/q.ngpt: 8-bit weights, [0-9]* bytes ($dir/m.ngpt: [0-9]* bytes, 3\.[5-9][0-9]x smaller)$" "$dir/out"
check $? "quantize says what it wrote, at least 3.5x smaller: $(cat "$dir/out")"
$N quantize "$dir/m.ngpt" "$dir/q2.ngpt" > /dev/null 2>&1 && cmp -s "$dir/q.ngpt" "$dir/q2.ngpt"
check $? "quantize writes the same bytes every time"
printf 'params=3b5aebe829e45a76\nlogits_eval=fd181c24c57930f2\nlogits_train=a4031740f56c1444\n' > "$dir/want"
for threads in 1 3; do
    $N checksum "$dir/q.ngpt" --threads $threads > "$dir/got" 2> "$dir/err"
    cmp -s "$dir/want" "$dir/got"
    check $? "8-bit seed 42, --threads $threads: $(tr '\n' ' ' < "$dir/got") $(cat "$dir/err")"
done
readme_shows "$dir/want"
check $? "README shows the 8-bit model's checksums"

$N info "$dir/q.ngpt" > "$dir/info" 2> "$dir/err"
check $? "info on an 8-bit model: $(cat "$dir/err")"
grep -q "^file: .*q.ngpt, [0-9]* bytes" "$dir/info" && grep -q "^weights: *q8: 8-bit" "$dir/info" &&
    grep -q "^config: .* weights=q8$" "$dir/info" && grep -q "^arena infer: [0-9]* bytes" "$dir/info" &&
    grep -q "^arena train: none" "$dir/info"
check $? "info names the type, the file size and the arenas: $(cat "$dir/info")"
$N info "$dir/m.ngpt" | grep -q "^weights: *f32"
check $? "info on a float32 model says f32"

# a tiny model that answers "ok", float32 and quantized
train_ok_model "$dir/t.ngpt"
check $? "train the dialogue model: $(cat "$dir/train.log")"
$N quantize "$dir/t.ngpt" "$dir/t8.ngpt" > /dev/null 2> "$dir/err"
check $? "quantize the dialogue model: $(cat "$dir/err")"
printf 'hi\nhi\n' | $N chat --model "$dir/t8.ngpt" --temp 0 -n 20 > "$dir/chat.out" 2> "$dir/chat.err"
printf 'ok\nok\n' | cmp -s - "$dir/chat.out"
check $? "the 8-bit model answers ok twice: $(od -c "$dir/chat.out" | head -3) $(cat "$dir/chat.err")"
bpb() { $N eval --model "$1" --data "$dir/d.txt" --batches 4 2> /dev/null | sed -n 's/.*, \([0-9.]*\) bits\/byte.*/\1/p'; }
f=$(bpb "$dir/t.ngpt") q=$(bpb "$dir/t8.ngpt")
[ -n "$f" ] && [ -n "$q" ] && awk -v f="$f" -v q="$q" 'BEGIN { exit !(q <= f * 1.02 + 0.002 && q >= f * 0.98 - 0.002) }'
check $? "eval: 8-bit bits per byte $q within 2% of float32's $f"
$N generate --model "$dir/t8.ngpt" --prompt 'user: hi' -n 12 --temp 0 > "$dir/g1" 2> "$dir/err" &&
    $N generate --model "$dir/t8.ngpt" --prompt 'user: hi' -n 12 --temp 0 --no-cache > "$dir/g2" 2>> "$dir/err"
check $? "generate, cached and not: $(cat "$dir/err")"
cmp -s "$dir/g1" "$dir/g2"
check $? "cached and uncached generation agree: $(cat "$dir/g1") / $(cat "$dir/g2")"
$N trace --model "$dir/t8.ngpt" --prompt 'user: hi' --text > "$dir/trace.txt" 2> "$dir/err"
check $? "trace an 8-bit model: $(cat "$dir/err")"

# what an 8-bit model cannot do, and bad usage
$N train --resume "$dir/t8.ngpt" --data "$dir/d.txt" --steps 1 --out "$dir/x.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "holds 8-bit weights (weights=q8), which are for inference only: resume from its float32 original" "$dir/err"
check $? "train --resume refuses an 8-bit model, saying what to do: $(cat "$dir/err")"
$N train --data "$dir/d.txt" --config weights=q8 --steps 1 --out "$dir/x.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "train its float32 original (weights=f32) and quantize that (ngpt quantize)" "$dir/err"
check $? "train --config weights=q8 is refused: $(cat "$dir/err")"
$N quantize "$dir/q.ngpt" "$dir/x.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "holds 8-bit weights already" "$dir/err"
check $? "quantize refuses an 8-bit input: $(cat "$dir/err")"
$N quantize "$dir/m.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "an input and an output FILE are required" "$dir/err"
check $? "quantize with one file is a usage error: $(cat "$dir/err")"
$N quantize "$dir/missing.ngpt" "$dir/x.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "missing.ngpt" "$dir/err"
check $? "quantize of a missing file names it: $(cat "$dir/err")"
head -c 1000 "$dir/q.ngpt" > "$dir/cut.ngpt"
$N generate --model "$dir/cut.ngpt" --prompt x -n 1 > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "cut.ngpt" "$dir/err"
check $? "a truncated 8-bit file is refused: $(cat "$dir/err")"
$N quantize --help | grep -q "usage: ngpt quantize IN OUT"
check $? "quantize --help"
summary test_cli_quantize
