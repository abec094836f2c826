#!/bin/sh
# test_cli_train.sh — `ngpt train` and `ngpt eval` end to end on a tiny model:
# a run stopped at step 5 (--stop-at, as Ctrl-C saves) and resumed ends with
# byte-identical latest and best checkpoints and CSV log to an unbroken run,
# also with other thread counts (2 unbroken; 1, then resumed with 3);
# checksum and eval print the same for any --threads; bad inputs are clear errors with the documented exit codes.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
i=0
while [ $i -lt 40 ]; do   # ~4 KB of text
    echo "line $i: the quick brown fox jumps over the lazy dog; pack my box with five dozen jugs" >> "$dir/d.txt"
    i=$((i + 1))
done
M="--data $dir/d.txt --config T=16 --config C=32 --config L=2 --config H=4 --config d_ff=64
   --batch 2 --seq 16 --steps 12 --warmup 2 --lr 3e-3 --eval-every 4 --eval-batches 2"

$N train $M --threads 2 --out "$dir/a.ngpt" --keep-best "$dir/ab.ngpt" --log-csv "$dir/a.csv" > "$dir/a.log" 2>&1
check $? "train: $(cat "$dir/a.log")"
grep -q "^step 12/12 loss .* eval_loss .* bits/byte" "$dir/a.log"
check $? "plain progress lines when stdout is not a terminal: $(cat "$dir/a.log")"
[ "$(wc -l < "$dir/a.csv")" -eq 13 ] && head -n 1 "$dir/a.csv" | grep -q "^step,loss,lr,grad_norm,tokens_per_s,eval_loss,bits_per_byte,eval_bits_per_byte$"
check $? "csv log: header + 12 rows"

$N train $M --threads 1 --out "$dir/b.ngpt" --keep-best "$dir/bb.ngpt" --log-csv "$dir/b.csv" --stop-at 5 > "$dir/b.log" 2>&1
check $? "train --stop-at: $(cat "$dir/b.log")"
grep -q "saved .*b.ngpt at step 5" "$dir/b.log"
check $? "stopped at 5: $(cat "$dir/b.log")"
# (natively, strace counts the opens of the resumed file: it is read once)
if [ -z "$RUN_ENV" ] && command -v strace > /dev/null 2>&1; then
    # (LeakSanitizer cannot run under ptrace: an ASan build checks leaks elsewhere)
    N_RESUME="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -e trace=open,openat -o $dir/trace $N"
else
    N_RESUME=$N
fi
$N_RESUME train --resume "$dir/b.ngpt" --threads 3 --data "$dir/d.txt" --out "$dir/b.ngpt" --keep-best "$dir/bb.ngpt" --log-csv "$dir/b.csv" > "$dir/b2.log" 2>&1
check $? "train --resume: $(cat "$dir/b2.log")"
if [ -f "$dir/trace" ]; then
    opens=$(grep -c "\"$dir/b.ngpt\", O_RDONLY" "$dir/trace")
    [ "$opens" -eq 1 ]
    check $? "train --resume reads the checkpoint once (opened $opens times for reading)"
fi
cmp -s "$dir/a.ngpt" "$dir/b.ngpt"
check $? "resumed latest checkpoint differs from the unbroken run's"
cmp -s "$dir/ab.ngpt" "$dir/bb.ngpt"
check $? "resumed best checkpoint differs from the unbroken run's"
cut -d, -f1-4,6 "$dir/a.csv" > "$dir/a.cut"; cut -d, -f1-4,6 "$dir/b.csv" > "$dir/b.cut"
cmp -s "$dir/a.cut" "$dir/b.cut"
check $? "resumed csv (without tokens/s) differs"
! grep -q "warning" "$dir/b2.log"
check $? "resuming with the saved settings does not warn: $(grep warning "$dir/b2.log")"
$N train --resume "$dir/b.ngpt" --out "$dir/c.ngpt" --steps 13 2> "$dir/err" > /dev/null
grep -q "warning: the data differs" "$dir/err"
check $? "resuming on other data warns: $(cat "$dir/err")"
grep -q "^ngpt train: warning: --steps 13 (saved: 12) differs from the run saved in $dir/b.ngpt; the learning-rate schedule changes and the resumed run is no longer bit-identical to an uninterrupted one$" "$dir/err"
check $? "resuming with another --steps warns, naming both values: $(cat "$dir/err")"
$N train --resume "$dir/b.ngpt" --data "$dir/d.txt" --out "$dir/c.ngpt" --steps 12 --lr 1e-3 --seed 42 2> "$dir/err" > /dev/null
grep -q "^ngpt train: warning: --lr 0.001 (saved: 0.003) differs from the run saved in $dir/b.ngpt; the resumed run is no longer bit-identical" "$dir/err"
check $? "only the setting that differs is named: $(cat "$dir/err")"

out=$($N eval --model "$dir/a.ngpt" --data "$dir/d.txt" --batches 2 --batch 2 --threads 1 2>&1)
check $? "eval: $out"
echo "$out" | grep -Eq "^loss [0-9.]+ nats/byte, [0-9.]+ bits/byte"
check $? "eval output: $out"
out3=$($N eval --model "$dir/a.ngpt" --data "$dir/d.txt" --batches 2 --batch 2 --threads 3 2>&1)
[ "$out3" = "$out" ]
check $? "eval --threads 3 prints $out3, --threads 1 $out"
c1=$($N checksum "$dir/a.ngpt" --threads 1 2>&1) && c3=$($N checksum "$dir/a.ngpt" --threads 3 2>&1) &&
    [ "$c1" = "$c3" ] && echo "$c1" | grep -q "^logits_train="
check $? "checksum --threads 1 and 3: $c1 / $c3"

: > "$dir/empty.txt"
printf 'short' > "$dir/short.txt"
expect() {  # expect CODE PATTERN ARGS...: exit status and a message on stderr
    code=$1 pat=$2; shift 2
    $N "$@" > /dev/null 2> "$dir/err"
    rc=$?
    [ $rc -eq "$code" ] && grep -q -- "$pat" "$dir/err"
    check $? "ngpt $* -> exit $rc (want $code), stderr: $(cat "$dir/err") (want /$pat/)"
}
expect 1 "cannot open $dir/missing.txt" train --data "$dir/missing.txt" --steps 1
expect 1 "empty.txt is empty" train --data "$dir/empty.txt" --steps 1
expect 1 "short.txt has 5 bytes" train --data "$dir/short.txt" --steps 1 --config T=16
expect 2 "steps" train --steps 0
expect 2 "threads" train --threads 0
expect 2 "unknown option" train --bogus
expect 2 "--config cannot change" train --resume "$dir/a.ngpt" --config C=64
expect 1 "missing.ngpt" train --resume "$dir/missing.ngpt"
expect 2 "required" eval --model "$dir/a.ngpt"
expect 1 "missing.ngpt" eval --model "$dir/missing.ngpt" --data "$dir/d.txt"
summary test_cli_train
