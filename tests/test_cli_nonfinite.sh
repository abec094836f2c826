#!/bin/sh
# test_cli_nonfinite.sh — ngpt train when the loss goes NaN/Inf: a first run
# saves a good checkpoint; resuming it with settings that diverge (learning
# rate 10, weight decay 10) stops with exit status 1 and a message naming
# the step, and --out then holds the last good state, which loads and is
# finite; with --skip-nonfinite the failing steps are skipped (at most 10 in
# a row), each named. Env: BUILD, RUN_ENV. Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
i=0
while [ $i -lt 20 ]; do echo "The quick brown fox jumps over the lazy dog $i"; i=$((i + 1)); done > "$dir/d.txt"
tiny="--config T=16 --config C=16 --config L=1 --config H=2 --config d_ff=32"
common="--data $dir/d.txt --batch 2 --eval-every 0 --holdout 0.1"

$RUN_ENV "$B/ngpt" train $common --steps 2 --out "$dir/t.ngpt" $tiny > "$dir/out0" 2>&1
check $? "a good first run: $(tail -n 2 "$dir/out0")"

$RUN_ENV "$B/ngpt" train $common --resume "$dir/t.ngpt" --steps 40 --lr 10 --min-lr 10 \
    --warmup 0 --weight-decay 10 --out "$dir/t.ngpt" > "$dir/out1" 2>&1
rc=$?
[ $rc -eq 1 ]
check $? "a diverging run exits with 1 (got $rc)"
grep -q "^ngpt train: the \(loss\|gradient norm\) of step [0-9]* is .*\(nan\|inf\)" "$dir/out1"
check $? "the message names the step: $(grep 'ngpt train:' "$dir/out1" | tail -n 1)"
grep -q "saved the last good state in $dir/t.ngpt at step" "$dir/out1"
check $? "the last good state is saved: $(tail -n 1 "$dir/out1")"
$RUN_ENV "$B/ngpt" checksum "$dir/t.ngpt" > "$dir/sum" 2>&1
check $? "the saved checkpoint loads and runs: $(cat "$dir/sum")"

$RUN_ENV "$B/ngpt" train $common --steps 40 --lr 10 --min-lr 10 --warmup 0 --weight-decay 10 \
    --skip-nonfinite --out "$dir/s.ngpt" $tiny > "$dir/out2" 2>&1
[ "$(grep -c 'ngpt train: skipped: the \(loss\|gradient norm\) of step' "$dir/out2")" -eq 10 ]
check $? "--skip-nonfinite skips 10 named steps in a row: $(grep -c skipped "$dir/out2")"
grep -q "stopped on a non-finite value" "$dir/out2"
check $? "then stops: $(tail -n 1 "$dir/out2")"
summary test_cli_nonfinite
