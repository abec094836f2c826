#!/bin/sh
# test_cli_kv.sh — the 8-bit KV cache from the tool: generate --kv q8 (and
# --kv-k / --kv-v alone) gives the same text on 1 and 3 threads and with
# --lookup (speculative) as without; a q8 session resumes across processes
# to the bytes of one run, and is refused under another --kv with one line;
# --kv q8 --no-cache and a bad --kv value are usage errors; info --kv q8
# sizes the cache.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
SHAPE="--config T=128 --config C=32 --config L=2 --config H=4 --config kv_heads=2 --config d_ff=64"
$N init --out "$dir/f.ngpt" --seed 7 $SHAPE > /dev/null 2>&1
check $? "ngpt init"

for kv in "--kv q8" "--kv-k q8" "--kv-v q8"; do
    gen="generate --model $dir/f.ngpt --temp 0 --prompt hello -n 60 $kv"
    $N $gen --threads 1 > "$dir/a" 2> "$dir/a.err"
    check $? "[$kv] generate: $(cat "$dir/a.err")"
    $N $gen --threads 3 > "$dir/b" 2> /dev/null
    cmp -s "$dir/a" "$dir/b"
    check $? "[$kv] 1 thread and 3 differ"
    $N $gen --lookup 3 > "$dir/c" 2> /dev/null
    cmp -s "$dir/a" "$dir/c"
    check $? "[$kv] --lookup differs from plain decoding"
done

gen="generate --model $dir/f.ngpt --temp 0 --kv q8"
$N $gen --prompt "the cat" -n 50 > "$dir/all" 2> /dev/null
$N $gen --prompt "the cat" -n 20 --session "$dir/s.sess" > "$dir/a" 2> /dev/null &&
    $N $gen -n 30 --session "$dir/s.sess" > "$dir/b" 2> "$dir/b.err"
check $? "q8 session resume: $(cat "$dir/b.err")"
cat "$dir/a" "$dir/b" | cmp -s - "$dir/all"
check $? "20 + 30 tokens with a q8 session differ from 50 in one go"
cp "$dir/s.sess" "$dir/keep.sess"
$N generate --model "$dir/f.ngpt" -n 5 --session "$dir/s.sess" > "$dir/o" 2> "$dir/e"
[ $? -ne 0 ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && grep -q "same --kv" "$dir/e" &&
    cmp -s "$dir/s.sess" "$dir/keep.sess" && [ ! -s "$dir/o" ]
check $? "a q8 session under --kv f32 is refused with one line: $(cat "$dir/e")"

$N generate --model "$dir/f.ngpt" --kv q8 --no-cache -n 3 > /dev/null 2> "$dir/e"
[ $? -ne 0 ] && grep -q "8-bit" "$dir/e"
check $? "--kv q8 --no-cache is refused: $(cat "$dir/e")"
$N generate --model "$dir/f.ngpt" --kv q4 -n 3 > /dev/null 2> "$dir/e"
[ $? -eq 2 ] && grep -q "f32 or q8" "$dir/e"
check $? "--kv q4 is a usage error: $(cat "$dir/e")"

$N info "$dir/f.ngpt" --kv q8 > "$dir/i" 2>&1
check $? "info --kv q8"
# L=2 T=128, 2 KV heads of D=8: a row of keys is 64 bytes in f32, 72 in q8
# (a head of 8 is one group: 32 int8 and a scale; q8 pays from D=16 on)
grep -q "kv cache: .*keys q8, values q8): f32 32768 bytes.*q8 36864 bytes" "$dir/i"
check $? "info's kv cache line: $(grep 'kv cache' "$dir/i")"
summary test_cli_kv
