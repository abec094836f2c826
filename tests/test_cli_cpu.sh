#!/bin/sh
# test_cli_cpu.sh — the tool on a CPU without the build's instruction set
# (NGPT_CPU_HIDE pretends one is missing; src/base/cpu.c): it stops with
# exit 1 and a message naming the build's kernels and the missing feature,
# never a signal. x86-64 builds need FMA; elsewhere nothing is checked and
# the tool runs. Env: BUILD, RUN_ENV.
. tests/cli_lib.sh
init="init --out $dir/m.ngpt --config T=8 --config C=8 --config L=1 --config H=2 --config d_ff=16"
$N $init > /dev/null 2>&1
check $? "ngpt init"
case "$($N --version)" in
*target=x86_64*)
    NGPT_CPU_HIDE=fma $N generate --model "$dir/m.ngpt" --prompt hi -n 2 > "$dir/out" 2> "$dir/err"
    rc=$?
    [ $rc -eq 1 ]
    check $? "a missing FMA exits 1, not $rc (a signal is 128+)"
    grep -q "^ngpt generate: this library was built for the .* kernels, which need .*, but this CPU lacks FMA" "$dir/err"
    check $? "the message names the kernels and FMA: $(cat "$dir/err")"
    NGPT_CPU_HIDE=fma $N $init > /dev/null 2> "$dir/err"
    [ $? -eq 1 ] && grep -q "lacks FMA" "$dir/err"
    check $? "ngpt init refuses too: $(cat "$dir/err")"
    NGPT_CPU_HIDE=fma $N bench --quick --kernels none > /dev/null 2> "$dir/err"
    [ $? -eq 1 ] && grep -q "^ngpt bench: .*lacks FMA" "$dir/err"
    check $? "ngpt bench refuses before it runs a kernel: $(cat "$dir/err")"
    ;;
*)
    NGPT_CPU_HIDE=fma,avx2 $N generate --model "$dir/m.ngpt" --prompt hi -n 2 > /dev/null 2>&1
    check $? "nothing to check on this target: the tool runs"
    ;;
esac
$N generate --model "$dir/m.ngpt" --prompt hi -n 2 > /dev/null 2>&1
check $? "without NGPT_CPU_HIDE the tool runs"
# An 8-bit model's 60-row pass: AMX's blocks of 16 rows where this CPU has
# them, the VNNI blocks with NGPT_CPU_HIDE=amx (and on every other CPU):
# the same logits either way.
$N init --out "$dir/c.ngpt" --config T=64 --config C=64 --config L=2 --config H=2 \
    --config d_ff=128 > /dev/null 2>&1 && $N quantize "$dir/c.ngpt" "$dir/c8.ngpt" > /dev/null 2>&1
check $? "an 8-bit model"
p="the quick brown fox jumps over the lazy dog, again and again"
$N checksum "$dir/c8.ngpt" --prompt "$p" > "$dir/amx" 2>&1 &&
    NGPT_CPU_HIDE=amx $N checksum "$dir/c8.ngpt" --prompt "$p" > "$dir/noamx" 2>&1 &&
    cmp -s "$dir/amx" "$dir/noamx" && grep -q "^logits_eval=" "$dir/amx"
check $? "the same 8-bit logits with and without AMX: $(cat "$dir/amx" "$dir/noamx")"
summary test_cli_cpu
