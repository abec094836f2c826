#!/bin/sh
# test_cli_compose.sh — what shapes a generation, all at once:
# greedy text under a grammar, speculative (--lookup, or --draft), with a LoRA
# adapter applied and an 8-bit KV cache, saved to a session after 23 tokens
# and resumed in another process for 37 more, is the text of one 60-token run
# with the same options, and plain decoding's. Each option is checked to act
# (without the grammar or the adapter the text differs; speculation's
# proposals are accepted), the session to record the q8 cache and the adapter
# (resuming without it is refused in one line). The grammar starts afresh in
# each call (docs/GENERATION.md, "Sessions and chat"), so the grammar is one
# whose state is the same after every byte ([a-z ]*): under a grammar that
# remembers where it is, the resumed call would rightly constrain another text.
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
GRAMMAR="--grammar $dir/g.gbnf" ADAPTER="--adapter $dir/a.lora" KV="--kv q8"
$N $GEN $GRAMMAR $ADAPTER $KV --prompt One -n 60 > "$dir/plain" 2> "$dir/plain.err"
check $? "plain decoding: $(cat "$dir/plain.err")"
[ "$(wc -c < "$dir/plain")" -eq 60 ] && ! LC_ALL=C grep -q '[^a-z ]' "$dir/plain"
check $? "60 bytes the grammar allows: $(cat "$dir/plain")"
# (training and generation give the same bits on every build and thread count)
[ "$(cat "$dir/plain")" = " cattsee catsee catsee catsee catsee catsee catsee catsee ca" ]
check $? "the same text on every build: '$(cat "$dir/plain")'"
# the grammar and the adapter shape the text: without either, another text
$N $GEN $ADAPTER $KV --prompt One -n 60 > "$dir/without" 2> /dev/null
! cmp -s "$dir/plain" "$dir/without"
check $? "without the grammar the same text: $(cat "$dir/without")"
$N $GEN $GRAMMAR $KV --prompt One -n 60 > "$dir/without" 2> /dev/null
! cmp -s "$dir/plain" "$dir/without"
check $? "without the adapter the same text: $(cat "$dir/without")"

# speculative by prompt lookup, and by a draft (the model without the
# adapter, so that some of its proposals miss)
for SPEC in "--lookup 3" "--draft $dir/m.ngpt"; do
    ALL="$GRAMMAR $SPEC $ADAPTER $KV"
    $N $GEN $ALL --prompt One -n 60 > "$dir/all" 2> "$dir/all.err"
    check $? "[$SPEC] one go: $(cat "$dir/all.err")"
    cmp -s "$dir/all" "$dir/plain"
    check $? "[$SPEC] greedy speculative decoding differs from plain: $(cat "$dir/all") vs $(cat "$dir/plain")"
    accepted=$(sed -n 's/.* K=[0-9]*: \([0-9]*\) of [0-9]* proposals accepted.*/\1/p' "$dir/all.err")
    [ "${accepted:-0}" -gt 0 ]
    check $? "[$SPEC] proposals accepted: $(cat "$dir/all.err")"
    # 23 tokens to a session, then 37 more in another process: the same text
    rm -f "$dir/s.sess"
    $N $GEN $ALL --prompt One -n 23 --session "$dir/s.sess" > "$dir/a" 2> "$dir/a.err" &&
        $N $GEN $ALL -n 37 --session "$dir/s.sess" > "$dir/b" 2> "$dir/b.err"
    check $? "[$SPEC] saved and resumed: $(cat "$dir/a.err" "$dir/b.err")"
    grep -q "session $dir/s.sess: 26 tokens restored, 63 saved" "$dir/b.err"
    check $? "[$SPEC] the resumed run restored the first run's 26 tokens: $(cat "$dir/b.err")"
    cat "$dir/a" "$dir/b" | cmp -s - "$dir/all"
    check $? "[$SPEC] 23 + 37 tokens across a session differ from 60 in one go: $(cat "$dir/a")|$(cat "$dir/b") vs $(cat "$dir/all")"
done
# the session holds an 8-bit cache (header bytes 96, 97: the K and V types)
[ "$(od -An -tu1 -j96 -N2 "$dir/s.sess" | tr -s ' ')" = " 1 1" ]
check $? "the session's KV types: $(od -An -tu1 -j96 -N2 "$dir/s.sess")"
# and is the adapted model's: resumed without the adapter, refused in one line
cp "$dir/s.sess" "$dir/keep.sess"
$N $GEN $GRAMMAR --lookup 3 $KV -n 5 --session "$dir/s.sess" > "$dir/o" 2> "$dir/e"
[ $? -ne 0 ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && [ ! -s "$dir/o" ] && cmp -s "$dir/s.sess" "$dir/keep.sess"
check $? "the session resumed without its adapter is refused with one line: $(cat "$dir/e")"
summary test_cli_compose
