#!/bin/sh
# test_cli_finetune.sh — `ngpt train --init MODEL`: fine-tuning starts from a
# trained BPE model's weights and tokenizer (its first loss is the trained
# model's, far below a fresh one's) with a fresh optimizer at step 0, also
# from a training checkpoint; its checkpoints carry the tokenizer; a run
# stopped and resumed equals an unbroken one byte for byte; --config may
# set only dropout; an 8-bit model and conflicting options are refused; an
# arena the machine cannot allocate names what to lower.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
i=0
while [ $i -lt 200 ]; do printf 'user: hi\nassistant: ok\n' >> "$dir/d.txt"; i=$((i + 1)); done
i=0
while [ $i -lt 100 ]; do printf 'user: hi\nassistant: ok, hi\n' >> "$dir/f.txt"; i=$((i + 1)); done
TINY="--config T=16 --config C=32 --config L=2 --config H=4 --config d_ff=64"

# the pretrained model: a BPE tokenizer and 40 steps on d.txt
$N tokenizer train --data "$dir/d.txt" --vocab 266 --split lines --no-pad --out "$dir/t.tok" > /dev/null 2>&1 &&
    $N train --data "$dir/d.txt" --tokenizer "$dir/t.tok" $TINY --batch 8 --seq 16 --steps 40 \
        --warmup 4 --lr 1e-2 --eval-every 0 --eval-batches 1 --out "$dir/base.ngpt" > "$dir/base.log" 2>&1
check $? "the model to fine-tune: $(cat "$dir/base.log")"

FT="--data $dir/f.txt --batch 4 --seq 16 --steps 8 --warmup 2 --lr 3e-3 --eval-every 4 --eval-batches 1"
$N train --init "$dir/base.ngpt" $FT --out "$dir/a.ngpt" --log-csv "$dir/a.csv" > "$dir/a.log" 2>&1
check $? "train --init: $(cat "$dir/a.log")"
grep -q "^fine-tuning $dir/base.ngpt: its weights and tokenizer, a fresh optimizer$" "$dir/a.log" &&
    grep -q "^model V=266 T=16 C=32 L=2 H=4 d_ff=64 dropout=0.1 " "$dir/a.log" &&
    grep -q "steps 0\.\.8," "$dir/a.log" &&
    grep -q "^tokenizer $dir/base.ngpt: 266 tokens (9 merges); [0-9]* tokens train" "$dir/a.log"
check $? "the model's config and tokenizer, step 0: $(head -4 "$dir/a.log")"
# from the weights: the first loss is the trained model's (a fresh one starts near ln 266 = 5.6)
first=$(sed -n 2p "$dir/a.csv" | cut -d, -f2)
awk -v l="$first" 'BEGIN { exit !(l < 3.0) }'
check $? "the first fine-tuning loss $first is a trained model's (< 3.0)"
$N tokenizer info "$dir/a.ngpt" > "$dir/ti" 2>&1 && $N tokenizer info "$dir/t.tok" > "$dir/ti2" 2>&1 &&
    [ "$(grep checksum "$dir/ti")" = "$(grep checksum "$dir/ti2")" ]
check $? "the fine-tuned checkpoint carries the model's tokenizer: $(cat "$dir/ti")"
$N generate --model "$dir/a.ngpt" --prompt "$(printf 'user: hi\nassistant: ')" -n 4 --temp 0 \
    > /dev/null 2> "$dir/g.err"
check $? "generate with the fine-tuned model: $(cat "$dir/g.err")"

# stopped at 3 and resumed: the same bytes as the unbroken run
$N train --init "$dir/base.ngpt" $FT --out "$dir/b.ngpt" --log-csv "$dir/b.csv" --stop-at 3 > "$dir/b.log" 2>&1 &&
    $N train --resume "$dir/b.ngpt" --data "$dir/f.txt" --out "$dir/b.ngpt" --log-csv "$dir/b.csv" > "$dir/b2.log" 2>&1
check $? "train --init --stop-at 3, then --resume: $(cat "$dir/b.log" "$dir/b2.log")"
cmp -s "$dir/a.ngpt" "$dir/b.ngpt"
check $? "the resumed fine-tuning's checkpoint equals the unbroken run's"
cut -d, -f1-4,6 "$dir/a.csv" > "$dir/a.cut"; cut -d, -f1-4,6 "$dir/b.csv" > "$dir/b.cut"
cmp -s "$dir/a.cut" "$dir/b.cut"
check $? "the resumed fine-tuning's csv (without tokens/s) equals the unbroken run's"
! grep -q warning "$dir/b2.log"
check $? "resuming a fine-tuning with its saved settings does not warn: $(grep warning "$dir/b2.log")"
# the same from another thread count (the threads change no bit)
$N train --init "$dir/base.ngpt" $FT --threads 3 --out "$dir/c.ngpt" > /dev/null 2>&1 && cmp -s "$dir/a.ngpt" "$dir/c.ngpt"
check $? "fine-tuning with 3 threads writes the same checkpoint"

# a training checkpoint as --init: its weights, not its optimizer or step
$N train --init "$dir/a.ngpt" $FT --steps 2 --out "$dir/d.ngpt" > "$dir/d.log" 2>&1 &&
    grep -q "steps 0\.\.2," "$dir/d.log"
check $? "--init of a training checkpoint starts at step 0: $(head -4 "$dir/d.log")"
# --config dropout=P on top of the model's config
$N train --init "$dir/base.ngpt" $FT --steps 2 --config dropout=0 --out "$dir/e.ngpt" > "$dir/e.log" 2>&1 &&
    $N info "$dir/e.ngpt" | grep -q "^config:      V=266 T=16 C=32 L=2 H=4 d_ff=64 dropout=0 "
check $? "--config dropout=0 with --init: $(cat "$dir/e.log")"
# a byte-level model fine-tunes on bytes
$N init --out "$dir/byte.ngpt" $TINY > /dev/null 2>&1 &&
    $N train --init "$dir/byte.ngpt" $FT --steps 2 --out "$dir/f.ngpt" > "$dir/f.log" 2>&1 &&
    grep -q "^fine-tuning $dir/byte.ngpt: its weights and bytes as tokens" "$dir/f.log"
check $? "fine-tuning a byte-level model: $(cat "$dir/f.log")"

# errors
$N quantize "$dir/base.ngpt" "$dir/q.ngpt" > /dev/null 2>&1
expect() {  # expect CODE PATTERN ARGS...: exit code, a stderr pattern, no --out written
    code=$1 pat=$2; shift 2
    rm -f "$dir/x.ngpt"
    $N "$@" --out "$dir/x.ngpt" > /dev/null 2> "$dir/err"; rc=$?
    [ $rc -eq "$code" ] && grep -q -e "$pat" "$dir/err" && [ ! -e "$dir/x.ngpt" ]
    check $? "ngpt $* -> exit $rc (want $code), stderr: $(cat "$dir/err") (want /$pat/)"
}
expect 1 "q.ngpt holds 8-bit weights (weights=q8), which are for inference only: fine-tune its float32 original" \
    train --init "$dir/q.ngpt" $FT
expect 2 "--config C=64: with --init only dropout can be set" train --init "$dir/base.ngpt" $FT --config C=64
expect 2 "give --init MODEL (start fine-tuning) or --resume FILE" train --init "$dir/base.ngpt" --resume "$dir/a.ngpt" $FT
expect 2 "--tokenizer and --vocab cannot change the tokenizer of --init" train --init "$dir/base.ngpt" --tokenizer "$dir/t.tok" $FT
expect 1 "cannot fine-tune $dir/missing.ngpt" train --init "$dir/missing.ngpt" $FT
expect 2 "--seq 32 is longer than the model's context T=16" train --init "$dir/base.ngpt" $FT --seq 32
# an arena this machine cannot allocate (address space capped natively; not
# under qemu or a sanitizer, which need theirs): say what to lower
case "$B" in *asan*|*tsan*) ;; *)
    if [ -z "$RUN_ENV" ]; then
        (ulimit -v 1000000; exec $N train --init "$dir/base.ngpt" $FT --batch 60000 --out "$dir/x.ngpt") > /dev/null 2> "$dir/err"
        [ $? -eq 1 ] && grep -q "^ngpt train: training needs a [0-9]* MiB arena at --batch 60000 --seq 16 and this machine could not allocate it: lower --batch and --seq (ngpt info $dir/base.ngpt --batch B --seq T sizes them" "$dir/err"
        check $? "an arena too big for the machine: $(cat "$dir/err")"
    fi ;;
esac
summary test_cli_finetune
