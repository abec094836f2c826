#!/bin/sh
# test_examples.sh — runs examples/stream (built by `make examples` against the
# installed library through pkg-config) on a tiny model made by the CLI.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
$RUN_ENV "$B/ngpt" init --out "$dir/m.ngpt" --seed 3 --config T=32 --config C=32 --config L=2 \
    --config H=4 --config d_ff=64 >/dev/null 2>&1
check $? "ngpt init"
out=$($RUN_ENV "$B/examples/stream" "$dir/m.ngpt" "hello" 20 2>"$dir/err")
check $? "stream exit status: $(cat "$dir/err")"
grep -q "stream: 20 tokens (max tokens)" "$dir/err"
check $? "stream summary: $(cat "$dir/err")"
out2=$($RUN_ENV "$B/examples/stream" "$dir/m.ngpt" "hello" 20 2>/dev/null)
[ "$out" = "$out2" ]
check $? "same seed, same text"
$RUN_ENV "$B/examples/stream" "$dir/missing.ngpt" "x" 2>"$dir/err"
[ $? -ne 0 ] && grep -q "stream: .*missing.ngpt" "$dir/err"
check $? "a missing model is a clear error"
# one version everywhere: ngpt.h, the tool, the installed pkg-config file
want=$(awk '/^#define NGPT_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 } END { print v }' include/ngpt.h)
got_tool=$($RUN_ENV "$B/ngpt" --version | awk '{ print $2 }')
got_pc=$(sed -n 's/^Version: //p' "$B/examples/prefix/lib/pkgconfig/ngpt.pc")
[ -n "$want" ] && [ "$got_tool" = "$want" ] && [ "$got_pc" = "$want" ]
check $? "one version: ngpt.h $want, ngpt --version $got_tool, ngpt.pc $got_pc"
summary test_examples
