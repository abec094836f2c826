#!/bin/sh
# test_cli_quantize.sh — `ngpt quantize` end to end: the 8-bit default model
# (seed 42) prints README's checksums on this build (natively, or under qemu
# for the ARM builds) with 1 and 3 threads, is 3.5x smaller and the same
# bytes every time; `ngpt info` names its type, size and arenas; a tiny
# dialogue model (trained as in test_cli_chat_trace.sh) still answers "ok"
# when quantized, evaluates within 2% of its float32 bits per byte, and
# generates, traces and chats; train refuses an 8-bit model; bad usage gets
# the documented exit codes. The same for 4-bit (--weights q4): README's
# checksums, info, eval within 10%, generate/trace/chat, the refusals.
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
$N quantize --help | grep -q "usage: ngpt quantize IN OUT \[--weights q8|q4\]"
check $? "quantize --help"

# 4-bit: the default model's checksums (README), its size, info, refusals
$N quantize "$dir/m.ngpt" "$dir/q4.ngpt" --weights q4 > "$dir/out" 2> "$dir/err"
check $? "ngpt quantize --weights q4: $(cat "$dir/err")"
grep -q "^wrote $dir/q4.ngpt: 4-bit weights, [0-9]* bytes ($dir/m.ngpt: [0-9]* bytes, 6\.[0-9][0-9]x smaller)$" "$dir/out"
check $? "quantize --weights q4 says what it wrote, at least 6x smaller: $(cat "$dir/out")"
printf 'params=d39376f8cf9ffb58\nlogits_eval=124f9c110b456944\nlogits_train=3b46e7e865b39337\n' > "$dir/want"
for threads in 1 3; do
    $N checksum "$dir/q4.ngpt" --threads $threads > "$dir/got" 2> "$dir/err"
    cmp -s "$dir/want" "$dir/got"
    check $? "4-bit seed 42, --threads $threads: $(tr '\n' ' ' < "$dir/got") $(cat "$dir/err")"
done
readme_shows "$dir/want"
check $? "README shows the 4-bit model's checksums"
$N info "$dir/q4.ngpt" > "$dir/info" 2> "$dir/err"
grep -q "^weights: *q4: 4-bit Linear weights in the blocks.*the lm_head (tied: the embedding) stays 8-bit" "$dir/info" &&
    grep -q "^config: .* weights=q4$" "$dir/info" && grep -q "^arena train: none" "$dir/info"
check $? "info names a 4-bit model and what stays 8-bit: $(cat "$dir/info") $(cat "$dir/err")"
$N quantize "$dir/t.ngpt" "$dir/t4.ngpt" --weights q4 > /dev/null 2> "$dir/err"
check $? "quantize the dialogue model to q4: $(cat "$dir/err")"
f=$(bpb "$dir/t.ngpt") q=$(bpb "$dir/t4.ngpt")
[ -n "$f" ] && [ -n "$q" ] && awk -v f="$f" -v q="$q" 'BEGIN { exit !(q <= f * 1.10 + 0.01 && q >= f * 0.90 - 0.01) }'
check $? "eval: 4-bit bits per byte $q within 10% of float32's $f"
$N generate --model "$dir/t4.ngpt" --prompt 'user: hi' -n 12 --temp 0 > "$dir/g1" 2> "$dir/err" &&
    $N generate --model "$dir/t4.ngpt" --prompt 'user: hi' -n 12 --temp 0 --no-cache > "$dir/g2" 2>> "$dir/err" &&
    cmp -s "$dir/g1" "$dir/g2"
check $? "a 4-bit model generates, cached and not alike: $(cat "$dir/g1") / $(cat "$dir/g2") $(cat "$dir/err")"
$N trace --model "$dir/t4.ngpt" --prompt 'user: hi' --text > /dev/null 2> "$dir/err"
check $? "trace a 4-bit model: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/t4.ngpt" --temp 0 -n 20 > /dev/null 2> "$dir/err"
check $? "chat with a 4-bit model: $(cat "$dir/err")"
# --lm-head q4: the lm_head (tied: the embedding) 4-bit too
$N quantize "$dir/t.ngpt" "$dir/t4h.ngpt" --weights q4 --lm-head q4 > "$dir/out" 2> "$dir/err"
check $? "quantize --lm-head q4: $(cat "$dir/err")"
grep -q "^wrote $dir/t4h.ngpt: 4-bit weights and lm_head, " "$dir/out" &&
    [ "$(wc -c < "$dir/t4h.ngpt")" -lt "$(wc -c < "$dir/t4.ngpt")" ]
check $? "quantize --lm-head q4 says so and writes a smaller file: $(cat "$dir/out")"
h=$(bpb "$dir/t4h.ngpt")
[ -n "$f" ] && [ -n "$h" ] && awk -v f="$f" -v q="$h" 'BEGIN { exit !(q <= f * 1.15 + 0.01 && q >= f * 0.90 - 0.01) }'
check $? "eval: bits per byte with a 4-bit lm_head $h within 15% of float32's $f (8-bit head: $q)"
$N info "$dir/t4h.ngpt" > "$dir/info" 2> "$dir/err"
grep -q "^weights: *q4 lm_head_q4: 4-bit Linear weights and lm_head" "$dir/info" &&
    grep -q "^config: .* weights=q4 lm_head_q4=1$" "$dir/info"
check $? "info names a 4-bit lm_head: $(cat "$dir/info") $(cat "$dir/err")"
$N generate --model "$dir/t4h.ngpt" --prompt 'user: hi' -n 12 --temp 0 > "$dir/g1" 2> "$dir/err" &&
    $N generate --model "$dir/t4h.ngpt" --prompt 'user: hi' -n 12 --temp 0 --no-cache > "$dir/g2" 2>> "$dir/err" &&
    cmp -s "$dir/g1" "$dir/g2"
check $? "a 4-bit head generates, cached and not alike: $(cat "$dir/g1") / $(cat "$dir/g2") $(cat "$dir/err")"
$N quantize "$dir/t.ngpt" "$dir/x.ngpt" --lm-head q4 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q -- "--lm-head q4 needs --weights q4" "$dir/err"
check $? "--lm-head q4 without --weights q4 is a usage error: $(cat "$dir/err")"
$N quantize "$dir/t.ngpt" "$dir/x.ngpt" --weights q4 --lm-head q5 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q -- "--lm-head expects q8 or q4" "$dir/err"
check $? "--lm-head q5 is a usage error: $(cat "$dir/err")"
$N quantize "$dir/t4.ngpt" "$dir/x.ngpt" --weights q4 --lm-head q4 > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "holds 4-bit weights already" "$dir/err" && [ ! -e "$dir/x.ngpt" ]
check $? "a q4 model's 8-bit head does not become 4-bit: $(cat "$dir/err")"
$N quantize "$dir/q.ngpt" "$dir/x.ngpt" --weights q4 > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "holds 8-bit weights (weights=q8), which do not become 4-bit.*quantize its float32 original with --weights q4" "$dir/err"
check $? "quantize refuses q8 -> q4, saying what to do: $(cat "$dir/err")"
$N quantize "$dir/m.ngpt" "$dir/x.ngpt" --weights q3 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q -- "--weights expects q8 or q4" "$dir/err"
check $? "quantize --weights q3 is a usage error: $(cat "$dir/err")"
$N train --resume "$dir/t4.ngpt" --data "$dir/d.txt" --steps 1 --out "$dir/x.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "holds 4-bit weights (weights=q4), which are for inference only: resume from its float32 original" "$dir/err"
check $? "train --resume refuses a 4-bit model: $(cat "$dir/err")"
$N train --data "$dir/d.txt" --config weights=q4 --steps 1 --out "$dir/x.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "4-bit weights (weights=q4) runs inference and LoRA adapters only (shape.adapter); train its float32 original" "$dir/err"
check $? "train --config weights=q4 is refused: $(cat "$dir/err")"
summary test_cli_quantize
