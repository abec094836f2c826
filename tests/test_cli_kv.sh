#!/bin/sh
# test_cli_kv.sh — the 8-bit KV cache from the tool: generate --kv q8 (and
# --kv-k / --kv-v alone) gives the same text on 1 and 3 threads and with
# --lookup (speculative) as without; a q8 session resumes across processes
# to the bytes of one run, and is refused under another --kv with one line;
# --kv q8 --no-cache and a bad --kv value are usage errors; info --kv q8
# sizes the cache; eval --kv feeds its windows through the cache: with f32 the
# bits per byte of a full forward, --kld then measures no divergence, while q8
# keys or values (read back from the cache) diverge, the same on 1 and 3
# threads; --kld without --kv and --kv with --compare are usage errors, and a
# held-out target outside V is refused in one line.
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

# eval through the cache (README.md's held-out tail, 8 windows of 128 bytes)
EV="eval --model $dir/f.ngpt --data README.md --batches 2 --batch 4"
bpb() { sed -n 's/^loss [0-9.]* nats\/byte, \([0-9.]*\) bits\/byte.*/\1/p' "$1"; }
$N $EV > "$dir/plain" 2>&1 && $N $EV --kv f32 --kld > "$dir/f32" 2>&1
check $? "eval, eval --kv f32 --kld: $(cat "$dir/plain" "$dir/f32")"
awk -v a="$(bpb "$dir/plain")" -v b="$(bpb "$dir/f32")" 'BEGIN { d = a - b; exit !(a > 0 && d * d < 1e-8) }'
check $? "a float32 cache's bits per byte are the full forward's: $(cat "$dir/plain" "$dir/f32")"
grep -q "through a KV cache of keys f32, values f32" "$dir/f32" &&
    grep -q "KL divergence: mean 0.000e+00 +- 0.0e+00, .* max 0.000e+00$" "$dir/f32" &&
    grep -q "same most likely next byte: 100.000%" "$dir/f32"
check $? "a float32 cache against a float32 cache: no divergence: $(cat "$dir/f32")"
for kv in "--kv q8" "--kv-k q8" "--kv-v q8"; do
    $N $EV $kv --kld --threads 1 > "$dir/q1" 2>&1 && $N $EV $kv --kld --threads 3 > "$dir/q3" 2>&1
    check $? "[$kv] eval --kld: $(cat "$dir/q1")"
    kld=$(sed -n 's/^KL divergence: mean \([^ ]*\) .*/\1/p' "$dir/q1")
    awk -v k="$kld" 'BEGIN { exit !(k > 0 && k < 0.01) }' && grep -q "at the same 1024 positions" "$dir/q1"
    check $? "[$kv] the 8-bit rows read back diverge a little: $(cat "$dir/q1")"
    cmp -s "$dir/q1" "$dir/q3"
    check $? "[$kv] eval --kld on 1 thread and 3 differ"
done
$N $EV --kld > /dev/null 2> "$dir/e"
[ $? -eq 2 ] && grep -q "give one of them" "$dir/e"
check $? "--kld without --kv is a usage error: $(cat "$dir/e")"
$N $EV --kv q8 --compare "$dir/f.ngpt" > /dev/null 2> "$dir/e"
[ $? -eq 2 ] && grep -q "not with --kv" "$dir/e"
check $? "--kv with --compare is a usage error: $(cat "$dir/e")"
# a held-out split whose one window is valid input but whose last target is
# no token of a V=128 model: refused in one line (not read past the logits)
$N init --out "$dir/v128.ngpt" --config V=128 --config T=32 --config C=16 --config L=1 --config H=2 \
    --config d_ff=32 > /dev/null 2>&1
head -c 3399 /dev/zero | tr '\0' a > "$dir/bad.txt" && printf '\303' >> "$dir/bad.txt"
$N eval --model "$dir/v128.ngpt" --data "$dir/bad.txt" --holdout 0.01 --batches 1 --batch 1 --kv q8 \
    --kld > "$dir/o" 2> "$dir/e"
[ $? -eq 1 ] && [ ! -s "$dir/o" ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && grep -q "token 195, which is not one of the model's V=128" "$dir/e"
check $? "a target outside V through the cache: $(cat "$dir/e")"
summary test_cli_kv
