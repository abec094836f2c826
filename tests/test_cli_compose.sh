#!/bin/sh
# test_cli_compose.sh — what shapes a generation, all at once (issue 43):
# greedy text under a grammar, speculative (--lookup), with a LoRA adapter
# applied and an 8-bit KV cache, saved to a session after 23 tokens and
# resumed in another process for 37 more, is the text of one 60-token run with
# the same options. Each option is checked to act on that text (without it the
# text differs; with --lookup, proposals are accepted), the session to record
# the q8 cache and the adapter (resuming without it is refused in one line).
# The grammar starts afresh in each call (docs/GENERATION.md, "Sessions and
# chat"), so the grammar is one whose state is the same after every byte
# ([a-z ]*): with a grammar that remembers where it is, the resumed call would
# rightly constrain another text.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
# a tiny model that has learned a capitalized, punctuated line, and an adapter
# that pulls it to another such line: the grammar has bytes to refuse
SHAPE="--config T=128 --config C=32 --config L=2 --config H=4 --config kv_heads=2 --config d_ff=64"
: > "$dir/base.txt"; : > "$dir/ad.txt"
i=0
while [ $i -lt 200 ]; do
    printf 'One cat, two dogs; three birds! Four fish. ' >> "$dir/base.txt"
    printf 'One Red Fox, Two Cats! ' >> "$dir/ad.txt"
    i=$((i + 1))
done
$N train --data "$dir/base.txt" $SHAPE --config dropout=0 --batch 8 --seq 64 --steps 60 --warmup 5 \
    --lr 1e-2 --min-lr 1e-3 --eval-every 0 --eval-batches 1 --threads 1 --out "$dir/m.ngpt" > "$dir/log" 2>&1
check $? "the model: $(cat "$dir/log")"
$N train --init "$dir/m.ngpt" --lora r=4,targets=all-linear --data "$dir/ad.txt" --batch 8 --seq 32 \
    --steps 10 --lr 1e-2 --eval-every 0 --eval-batches 1 --threads 1 --out "$dir/a.lora" > "$dir/log" 2>&1
check $? "the adapter: $(cat "$dir/log")"
printf 'root ::= [a-z ]*\n' > "$dir/g.gbnf"

GEN="generate --model $dir/m.ngpt --temp 0 --no-newline"
GRAMMAR="--grammar $dir/g.gbnf" LOOKUP="--lookup 3" ADAPTER="--adapter $dir/a.lora" KV="--kv q8"
ALL="$GRAMMAR $LOOKUP $ADAPTER $KV"
$N $GEN $ALL --prompt One -n 60 > "$dir/all" 2> "$dir/all.err"
check $? "one go: $(cat "$dir/all.err")"
[ "$(wc -c < "$dir/all")" -eq 60 ] && ! LC_ALL=C grep -q '[^a-z ]' "$dir/all"
check $? "one go: 60 bytes the grammar allows: $(cat "$dir/all")"
accepted=$(sed -n 's/.*lookup K=[0-9]*: \([0-9]*\) of [0-9]* proposals accepted.*/\1/p' "$dir/all.err")
[ "${accepted:-0}" -gt 0 ]
check $? "one go: lookup proposals accepted: $(cat "$dir/all.err")"

# each option shapes the text: without it, another text
$N $GEN $LOOKUP $ADAPTER $KV --prompt One -n 60 > "$dir/without" 2> /dev/null
! cmp -s "$dir/all" "$dir/without"
check $? "without the grammar the same text: $(cat "$dir/without")"
$N $GEN $GRAMMAR $LOOKUP $KV --prompt One -n 60 > "$dir/without" 2> /dev/null
! cmp -s "$dir/all" "$dir/without"
check $? "without the adapter the same text: $(cat "$dir/without")"
# speculation leaves the text as it is (greedy)
$N $GEN $GRAMMAR $ADAPTER $KV --prompt One -n 60 > "$dir/plain" 2> /dev/null
cmp -s "$dir/all" "$dir/plain"
check $? "without --lookup another text: $(cat "$dir/plain") vs $(cat "$dir/all")"

# 23 tokens to a session, then 37 more in another process: the same text
$N $GEN $ALL --prompt One -n 23 --session "$dir/s.sess" > "$dir/a" 2> "$dir/a.err" &&
    $N $GEN $ALL -n 37 --session "$dir/s.sess" > "$dir/b" 2> "$dir/b.err"
check $? "saved and resumed: $(cat "$dir/a.err" "$dir/b.err")"
grep -q "session $dir/s.sess: 26 tokens restored, 63 saved" "$dir/b.err"
check $? "the resumed run restored the first run's 26 tokens: $(cat "$dir/b.err")"
cat "$dir/a" "$dir/b" | cmp -s - "$dir/all"
check $? "23 + 37 tokens across a session differ from 60 in one go: $(cat "$dir/a")|$(cat "$dir/b") vs $(cat "$dir/all")"
# the session holds an 8-bit cache (header bytes 96, 97: the K and V types)
[ "$(od -An -tu1 -j96 -N2 "$dir/s.sess" | tr -s ' ')" = " 1 1" ]
check $? "the session's KV types: $(od -An -tu1 -j96 -N2 "$dir/s.sess")"
# and is the adapted model's: resumed without the adapter, refused in one line
cp "$dir/s.sess" "$dir/keep.sess"
$N $GEN $GRAMMAR $LOOKUP $KV -n 5 --session "$dir/s.sess" > "$dir/o" 2> "$dir/e"
[ $? -ne 0 ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && [ ! -s "$dir/o" ] && cmp -s "$dir/s.sess" "$dir/keep.sess"
check $? "the session resumed without its adapter is refused with one line: $(cat "$dir/e")"
summary test_cli_compose
