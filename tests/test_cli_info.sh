#!/bin/sh
# test_cli_info.sh — `ngpt info`: a file's sizes and those --config gives
# for the same model agree; the file sizes are the files' (ngpt init's
# float32 file, ngpt quantize's 8-bit one); the arenas are those train and
# generate plan (train's report line); usage errors.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
TINY="--config T=16 --config C=32 --config L=2 --config H=4 --config d_ff=64 --config pos=learned"
$N init --out "$dir/m.ngpt" $TINY > /dev/null 2>&1 && $N quantize "$dir/m.ngpt" "$dir/q.ngpt" > /dev/null 2>&1
check $? "init and quantize"
$N info "$dir/m.ngpt" --batch 4 --seq 8 > "$dir/file" 2>&1 && $N info $TINY --batch 4 --seq 8 > "$dir/cfg" 2>&1
check $? "info FILE and info --config: $(cat "$dir/file" "$dir/cfg")"
grep -v '^file:\|^weights:\|^tokenizer:' "$dir/file" > "$dir/file.cut"
cmp -s "$dir/file.cut" "$dir/cfg"
check $? "info --config prints what info FILE does for the same model: $(diff "$dir/file.cut" "$dir/cfg")"
grep -q "^file size:   f32 $(wc -c < "$dir/m.ngpt") bytes (.*), q8 $(wc -c < "$dir/q.ngpt") bytes (.*)$" "$dir/file"
check $? "the file sizes are the files': $(grep 'file size' "$dir/file")"
grep -Eq "^arena infer: [0-9]+ bytes \([0-9.]+ MiB\) at batch 1, seq 16 with f32 weights; q8 [0-9]+ bytes \([0-9.]+ MiB\) \(1 thread\)$" "$dir/file" &&
    grep -Eq "^arena train: [0-9]+ bytes \(([0-9.]+) MiB\) at batch 4, seq 8 \(1 thread; ngpt train --init fine-tunes it\)$" "$dir/file"
check $? "the arena lines: $(grep arena "$dir/file")"
printf 'the quick brown fox jumps over the lazy dog\n%.0s' $(seq 40) > "$dir/d.txt"
$N train --init "$dir/m.ngpt" --data "$dir/d.txt" --batch 4 --seq 8 --steps 1 --threads 1 --out "$dir/t.ngpt" > "$dir/train.log" 2>&1
mib=$(sed -n 's/^arena train: [0-9]* bytes (\([0-9.]*\) MiB).*/\1/p' "$dir/file")
grep -q "; arena $mib MiB (batch 4, seq 8, accum 1, 1 thread)" "$dir/train.log"
check $? "train --init plans the arena info gave ($mib MiB): $(head -1 "$dir/train.log")"
$N info "$dir/q.ngpt" > "$dir/qinfo" 2>&1 && grep -q "^arena train: none: an 8-bit model is not trained (its float32 original needs [0-9]* bytes" "$dir/qinfo" &&
    grep -q "^arena infer: [0-9]* bytes (.*) at batch 1, seq 16 with q8 weights; f32 " "$dir/qinfo"
check $? "an 8-bit file: $(cat "$dir/qinfo")"

expect() {  # expect CODE PATTERN ARGS...: exit code and a stderr pattern
    code=$1 pat=$2; shift 2
    $N "$@" > /dev/null 2> "$dir/err"; rc=$?
    [ $rc -eq "$code" ] && grep -q -e "$pat" "$dir/err"
    check $? "ngpt $* -> exit $rc (want $code), stderr: $(cat "$dir/err") (want /$pat/)"
}
expect 2 "a checkpoint FILE or --config key=value is required" info
expect 2 "give a checkpoint FILE or --config" info "$dir/m.ngpt" --config C=64
expect 2 "H" info --config H=5
expect 2 "unknown key" info --config bogus=1
expect 1 "shape.seq must be in 1..T=16" info "$dir/m.ngpt" --seq 17
$N info "$dir/m.ngpt" --seq 17 2>/dev/null | grep -q . ; [ $? -ne 0 ]
check $? "a bad shape prints nothing on stdout"
expect 1 "missing.ngpt" info "$dir/missing.ngpt"
summary test_cli_info
