#!/bin/sh
# test_cli_model_reads.sh — every command that reads a model file opens it
# once (ngpt_model_open: one open, one map, one verification): `ngpt
# generate`, `chat`, `eval` (and the --compare model), `trace`, `checksum`,
# `info`, `quantize` (to q8 and q4), `train --init` and `--resume`, `bench
# --model`, `tokenizer encode --tokenizer MODEL` and `init --tokenizer MODEL`,
# and with LoRA adapters (`train --init MODEL --lora`, `generate --adapter`),
# counted with strace: every successful open of the file's path, whatever the
# call (open, openat, openat2).
# Skipped (0 checks) under RUN_ENV (qemu) or without strace, which .ci/run installs.
# Env: BUILD (build dir), RUN_ENV. Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
if [ -n "$RUN_ENV" ] || ! command -v strace > /dev/null 2>&1; then
    summary test_cli_model_reads
    exit
fi
$N init --out "$dir/m.ngpt" --seed 7 --config T=32 --config C=16 --config L=1 --config H=2 \
    --config d_ff=32 > /dev/null 2>&1
check $? "ngpt init"
printf 'the cat sat on the mat. %.0s' $(seq 40) > "$dir/d.txt"
# a BPE model (its tokenizer inside) and a training checkpoint of it
$N train --vocab 300 --data "$dir/d.txt" --config T=32 --config C=16 --config L=1 --config H=2 \
    --config d_ff=32 --batch 2 --seq 8 --steps 2 --threads 1 --out "$dir/t.ngpt" > /dev/null 2>&1
check $? "ngpt train --vocab"
# an adapter of m.ngpt
$N train --init "$dir/m.ngpt" --lora r=2 --data "$dir/d.txt" --batch 2 --seq 8 --steps 1 --threads 1 \
    --out "$dir/a.lora" > /dev/null 2>&1
check $? "ngpt train --lora"
# opens CMD...: the successful opens of m.ngpt while the CLI runs CMD
opens() {
    strace -f -qq -e trace=open,openat,openat2 -o "$dir/trace" "$B/ngpt" "$@" < "$dir/in" \
        > "$dir/out" 2> "$dir/err" || echo "exit $? $(cat "$dir/err")" >&2
    grep "m\.ngpt\"" "$dir/trace" | grep -vc "= -1"
}
printf 'hi\n' > "$dir/in"
for cmd in "generate --model $dir/m.ngpt --prompt ab -n 4 --seed 1" \
           "chat --model $dir/m.ngpt -n 4" \
           "eval --model $dir/m.ngpt --data $dir/d.txt --batches 1 --batch 1 --seq 8" \
           "trace --model $dir/m.ngpt --prompt ab --text" \
           "quantize $dir/m.ngpt $dir/q8.ngpt" \
           "quantize $dir/m.ngpt $dir/q4.ngpt --weights q4" \
           "bench --model $dir/m.ngpt --quick --kernels none --no-bandwidth --runs 1 --warmup 0 --threads 1 --weights f32,q8" \
           "checksum $dir/m.ngpt" \
           "info $dir/m.ngpt" \
           "train --init $dir/m.ngpt --data $dir/d.txt --batch 2 --seq 8 --steps 1 --threads 1 --out $dir/f.ngpt" \
           "train --init $dir/m.ngpt --lora r=2 --data $dir/d.txt --batch 2 --seq 8 --steps 1 --threads 1 --out $dir/b.lora" \
           "generate --model $dir/m.ngpt --adapter $dir/a.lora --prompt ab -n 4 --seed 1"; do
    # shellcheck disable=SC2086
    n=$(opens $cmd 2>"$dir/why")
    [ "$n" = 1 ]
    check $? "ngpt ${cmd%% *} opens the model $n times, not once: $(cat "$dir/why")"
done
# the BPE model: its tokenizer is read from the one open too
cp "$dir/t.ngpt" "$dir/m.ngpt"
for cmd in "train --resume $dir/m.ngpt --data $dir/d.txt --steps 3 --threads 1 --out $dir/r.ngpt" \
           "tokenizer encode --tokenizer $dir/m.ngpt --text hello" \
           "init --tokenizer $dir/m.ngpt --out $dir/i.ngpt --config T=32 --config C=16 --config L=1 --config H=2 --config d_ff=32" \
           "generate --model $dir/m.ngpt --prompt ab -n 4 --seed 1" \
           "eval --model $dir/r.ngpt --compare $dir/m.ngpt --data $dir/d.txt --batches 1 --batch 1 --seq 8"; do
    # shellcheck disable=SC2086
    n=$(opens $cmd 2>"$dir/why")
    [ "$n" = 1 ]
    check $? "ngpt ${cmd%% *} opens the model $n times, not once: $(cat "$dir/why")"
done
summary test_cli_model_reads
