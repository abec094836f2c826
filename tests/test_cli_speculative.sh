#!/bin/sh
# test_cli_speculative.sh — `ngpt generate --draft MODEL` and `--lookup N`
# write exactly the bytes plain generation writes with the same seed and
# settings (greedy and sampled, with a stop sequence), report the acceptance
# rate on stderr, and refuse what cannot be speculative (--beam, --no-cache,
# both drafts, --draft-tokens alone, a draft of another vocabulary).
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
tiny="--config T=32 --config C=16 --config H=2 --config d_ff=32"
$N init --out "$dir/m.ngpt" --seed 7 $tiny --config L=2 > /dev/null 2>&1
check $? "ngpt init (target)"
$N init --out "$dir/d.ngpt" --seed 8 $tiny --config L=1 > /dev/null 2>&1
check $? "ngpt init (draft)"
$N init --out "$dir/w.ngpt" --seed 8 $tiny --config L=1 --config V=300 > /dev/null 2>&1
check $? "ngpt init (another vocabulary)"

gen="generate --model $dir/m.ngpt --prompt abcabcabcab -n 50"
for opts in "--temp 0" "--temp 0.9 --seed 3 --top-k 40" "--temp 0.8 --seed 4 --stop ab"; do
    $N $gen $opts > "$dir/plain" 2> /dev/null
    check $? "plain $opts"
    for spec in "--draft $dir/d.ngpt" "--draft $dir/m.ngpt --draft-tokens 3" "--lookup 3" \
                "--lookup 2 --draft-tokens 8"; do
        $N $gen $opts $spec > "$dir/spec" 2> "$dir/spec.err"
        check $? "$opts $spec: $(cat "$dir/spec.err")"
        cmp -s "$dir/plain" "$dir/spec"
        check $? "$opts $spec: the same bytes as plain generation"
        grep -Eq "(draft|lookup) K=[0-9]+: [0-9]+ of [0-9]+ proposals accepted" "$dir/spec.err"
        check $? "$opts $spec: stderr gives the acceptance: $(cat "$dir/spec.err")"
    done
done
$N $gen --temp 0 --draft "$dir/m.ngpt" 2> "$dir/self.err" > /dev/null
grep -Eq "draft K=4: ([0-9]+) of \\1 proposals accepted \\(100%\\)" "$dir/self.err"
check $? "the model as its own draft: every proposal accepted, K=4 by default: $(cat "$dir/self.err")"

refuse() {  # refuse "WHAT" "EXPECTED TEXT" ARGS...
    what=$1 want=$2
    shift 2
    $N $gen "$@" > /dev/null 2> "$dir/err"
    [ $? -ne 0 ] && grep -q "$want" "$dir/err"
    check $? "$what is refused: $(cat "$dir/err")"
}
refuse "--beam with --draft" "not with --beam" --beam 2 --draft "$dir/d.ngpt"
refuse "--no-cache with --lookup" "not with --no-cache" --no-cache --lookup 2
refuse "--draft with --lookup" "give one" --draft "$dir/d.ngpt" --lookup 2
refuse "--draft-tokens alone" "needs --draft MODEL or --lookup N" --draft-tokens 4
refuse "--draft-tokens 17" "draft-tokens" --lookup 2 --draft-tokens 17
refuse "a draft of another vocabulary" "share the model's tokenizer" --draft "$dir/w.ngpt"
$N generate --help | grep -q -- "--draft-tokens K"
check $? "generate --help lists --draft-tokens"
summary test_cli_speculative
