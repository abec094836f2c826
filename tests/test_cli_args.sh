#!/bin/sh
# test_cli_args.sh — malformed numeric options are usage errors (exit 2) with
# a message naming the option, never a silently different number: blanks,
# signs, overflow, NaN/Inf, out-of-range values. Env: BUILD, RUN_ENV.
B=${BUILD:-build}
passed=0 failed=0
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
bad() {     # bad OPTION VALUE COMMAND...
    opt=$1 val=$2
    shift 2
    $RUN_ENV "$B/ngpt" "$@" "$opt" "$val" > "$dir/out" 2> "$dir/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q -- "$opt" "$dir/err"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: ngpt $* $opt '$val': exit $rc, $(cat "$dir/err")"
    fi
}
init="init --out $dir/m.ngpt --config T=8 --config C=8 --config L=1 --config H=2 --config d_ff=16"
bad --seed " -1" $init
bad --seed "-1" $init
bad --seed "18446744073709551616" $init
bad --seed " 5" $init
bad --seed "5x" $init
bad --seed "" $init
$RUN_ENV "$B/ngpt" $init > /dev/null 2>&1 || { echo "FAIL: init"; failed=$((failed + 1)); }
gen="generate --model $dir/m.ngpt --prompt hi"
bad -n 0 $gen
bad -n "-3" $gen
bad -n "99999999999" $gen
bad --temp "-1" $gen
bad --temp nan $gen
bad --temp inf $gen
bad --top-k "-1" $gen
bad --top-p 0 $gen
bad --top-p 1.5 $gen
bad --beam 0 $gen
bad --ban "1,x" $gen
bad --threads 0 $gen
train="train --data $dir/m.ngpt --out $dir/t.ngpt"
bad --steps 0 $train
bad --steps " 3" $train
bad --batch "2147483648" $train
bad --lr nan $train
bad --lr "1e999" $train
bad --holdout 1 $train
bad --accum 0 $train
echo "test_cli_args: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
