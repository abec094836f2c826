#!/bin/sh
# test_cli_lora.sh — LoRA adapters from the command line: `ngpt train --init
# MODEL --lora ...` trains an adapter of a tiny model (the float32 file and its
# 8-bit copy, frozen) that turns its "ok" into "no"; the adapter file is the
# same on every build; a run stopped and continued (--init MODEL --resume
# FILE, which reads FILE.train) ends with the same bytes, as does one with
# --grad-checkpoint and --loss-chunk; generate, chat, eval and trace apply it (--adapter
# FILE[:SCALE]; scale 0 is the model itself); an adapter of another model is
# refused in one line; `ngpt info` describes it; bad options are refused.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
train_ok_model "$dir/base.ngpt"
check $? "the model to adapt: $(cat "$dir/train.log")"
$N quantize "$dir/base.ngpt" "$dir/q8.ngpt" > /dev/null 2>&1
check $? "its 8-bit copy"
i=0
while [ $i -lt 200 ]; do printf 'user: hi\nassistant: no\n' >> "$dir/n.txt"; i=$((i + 1)); done
PROMPT=$(printf 'user: hi\nassistant: ')
LORA="--lora r=4,targets=all-linear --data $dir/n.txt --batch 8 --seq 16 --steps 20 --lr 1e-2 --eval-every 10 --eval-batches 1 --threads 1"
# greedy MODEL [ARGS...]: the model's 3-byte answer, on one line
greedy() {
    m=$1; shift
    $N generate --model "$m" --prompt "$PROMPT" -n 3 --temp 0 "$@" 2> "$dir/g.err" | od -An -c | tr -s ' '
}

# ---- training, on the float32 model and on its 8-bit copy
for w in base q8; do
    $N train --init "$dir/$w.ngpt" $LORA --out "$dir/$w.lora" --log-csv "$dir/$w.csv" > "$dir/$w.log" 2>&1
    check $? "[$w] train --lora: $(cat "$dir/$w.log")"
    grep -q "^LoRA adapter of $dir/$w.ngpt (frozen, .* weights): r=4 alpha=16 targets=all-linear, 3072 floats (.*); a new adapter" "$dir/$w.log" &&
        grep -q "steps 0\.\.20, lr 0\.01 -> 0\.001," "$dir/$w.log" && grep -q "^saved $dir/$w.lora at step 20$" "$dir/$w.log"
    check $? "[$w] the run's report: $(head -3 "$dir/$w.log")"
    first=$(sed -n 2p "$dir/$w.csv" | cut -d, -f2) last=$(sed -n 21p "$dir/$w.csv" | cut -d, -f2)
    awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a / 2) }'
    check $? "[$w] the adapter learns the new answer: loss $first -> $last"
    [ "$(greedy "$dir/base.ngpt" --adapter "$dir/$w.lora")" = " n o \n" ]
    check $? "[$w] the adapted model answers no: $(greedy "$dir/base.ngpt" --adapter "$dir/$w.lora") $(cat "$dir/g.err")"
    # the adapter alone, its training state beside it (3 times the floats)
    [ -s "$dir/$w.lora.train" ] && [ "$(wc -c < "$dir/$w.lora.train")" -gt "$(( $(wc -c < "$dir/$w.lora") * 2 ))" ]
    check $? "[$w] the adapter and its training state beside it: $(ls -l "$dir/$w.lora" "$dir/$w.lora.train")"
    # stopped at step 7 and continued from its state: the same bytes
    $N train --init "$dir/$w.ngpt" $LORA --out "$dir/$w-b.lora" --log-csv "$dir/$w-b.csv" --stop-at 7 > "$dir/b.log" 2>&1 &&
        $N train --init "$dir/$w.ngpt" --resume "$dir/$w-b.lora" --data "$dir/n.txt" --out "$dir/$w-b.lora" \
            --log-csv "$dir/$w-b.csv" > "$dir/b2.log" 2>&1
    check $? "[$w] --stop-at 7, then --resume: $(cat "$dir/b.log" "$dir/b2.log")"
    cmp -s "$dir/$w.lora" "$dir/$w-b.lora" && cmp -s "$dir/$w.lora.train" "$dir/$w-b.lora.train"
    check $? "[$w] the continued run's adapter and state equal the unbroken run's"
    cut -d, -f1-4,6 "$dir/$w.csv" > "$dir/a.cut"; cut -d, -f1-4,6 "$dir/$w-b.csv" > "$dir/b.cut"
    cmp -s "$dir/a.cut" "$dir/b.cut" && grep -q "going on from $dir/$w-b.lora.train" "$dir/b2.log" && ! grep -q warning "$dir/b2.log"
    check $? "[$w] the continued run's csv equals the unbroken run's, without a warning: $(cat "$dir/b2.log")"
done
# every build trains the same adapter (the files' CRC: bits, settings, identity)
[ "$(cksum < "$dir/base.lora")" = "3658192509 14920" ] && [ "$(cksum < "$dir/base.lora.train")" = "4002976612 44872" ]
check $? "the adapter and its state are the same on every build: cksum $(cksum < "$dir/base.lora") and $(cksum < "$dir/base.lora.train")"
$N train --init "$dir/base.ngpt" $LORA --threads 3 --out "$dir/t3.lora" > /dev/null 2>&1 &&
    cmp -s "$dir/base.lora" "$dir/t3.lora" && cmp -s "$dir/base.lora.train" "$dir/t3.lora.train"
check $? "3 threads train the same adapter"
$N train --init "$dir/base.ngpt" $LORA --grad-checkpoint --loss-chunk 5 --out "$dir/gc.lora" > "$dir/gc.log" 2>&1 &&
    cmp -s "$dir/base.lora" "$dir/gc.lora" && cmp -s "$dir/base.lora.train" "$dir/gc.lora.train"
check $? "--grad-checkpoint and --loss-chunk 5 train the same adapter: $(cat "$dir/gc.log")"
$N train --init "$dir/base.ngpt" $LORA --lora-dropout 0.1 --steps 1 --out "$dir/d.lora" > /dev/null 2>&1 &&
    $N info "$dir/d.lora" | grep -q "^adapter:     LoRA r=4 alpha=16 targets=all-linear dropout=0.1:"
check $? "--lora-dropout P is --lora dropout=P: $($N info "$dir/d.lora" 2>&1)"

# ---- applying it: either model file takes either adapter (one identity)
[ "$(greedy "$dir/base.ngpt")" = " o k \n" ] && [ "$(greedy "$dir/base.ngpt" --adapter "$dir/base.lora:0")" = " o k \n" ]
check $? "without the adapter, or at scale 0, the model answers ok"
[ "$(greedy "$dir/q8.ngpt" --adapter "$dir/base.lora")" = " n o \n" ] &&
    [ "$(greedy "$dir/q8.ngpt" --adapter "$dir/q8.lora:0.5" --adapter "$dir/base.lora:0.5")" = " n o \n" ]
check $? "the 8-bit model applies the float32 model's adapter, and two at half scale: $(cat "$dir/g.err")"
# speculative decoding within the context (T=16): the adapted model's text
S="--model $dir/base.ngpt --adapter $dir/base.lora --prompt nt: -n 12 --temp 0"
$N generate $S > "$dir/plain" 2> /dev/null && $N generate $S --lookup 3 > "$dir/spec" 2> "$dir/spec.err" &&
    $N generate $S --draft "$dir/q8.ngpt" > "$dir/draft" 2> "$dir/draft.err" &&
    cmp -s "$dir/plain" "$dir/spec" && cmp -s "$dir/plain" "$dir/draft" &&
    ! grep -q " 0 of 0 proposals" "$dir/spec.err" "$dir/draft.err"
check $? "speculative decoding (--lookup, an unadapted --draft) writes the adapted model's text: $(cat "$dir/plain" "$dir/spec" "$dir/draft" "$dir/spec.err" "$dir/draft.err")"
printf 'hi\n' | $N chat --model "$dir/base.ngpt" --template plain --temp 0 -n 3 --adapter "$dir/base.lora" > "$dir/chat" 2>&1 &&
    [ "$(head -1 "$dir/chat")" = "no" ]
check $? "chat with the adapter: $(cat "$dir/chat")"
$N eval --model "$dir/base.ngpt" --data "$dir/n.txt" --batches 1 --batch 4 --adapter "$dir/base.lora" \
    --compare "$dir/base.ngpt" > "$dir/eval" 2>&1 &&
    with=$(sed -n 's/^loss \([0-9.]*\) .*/\1/p' "$dir/eval") &&
    without=$(sed -n 's/.*ngpt: loss \([0-9.]*\) .*/\1/p' "$dir/eval") &&
    awk -v a="$with" -v b="$without" 'BEGIN { exit !(a < b / 2) }'
check $? "eval: the adapter lowers the loss on its text ($with against $without): $(cat "$dir/eval")"
$N trace --model "$dir/base.ngpt" --prompt hi --text --adapter "$dir/base.lora" > "$dir/trace" 2>&1 &&
    grep -q "^layer 1 head 3" "$dir/trace"
check $? "trace with the adapter: $(head -3 "$dir/trace")"
# a session made under the adapter is refused without it
$N generate --model "$dir/base.ngpt" --prompt "$PROMPT" -n 2 --adapter "$dir/base.lora" \
    --session "$dir/s.sess" > /dev/null 2>&1 &&
    ! $N generate --model "$dir/base.ngpt" -n 2 --session "$dir/s.sess" > /dev/null 2> "$dir/err" &&
    grep -q "other adapters" "$dir/err"
check $? "a session of the adapted model is refused without the adapter: $(cat "$dir/err")"

# ---- another model: one clear line, nothing generated or written
$N init --out "$dir/other.ngpt" --seed 5 --config T=16 --config C=32 --config L=2 --config H=4 \
    --config d_ff=64 > /dev/null 2>&1
$N generate --model "$dir/other.ngpt" --prompt hi -n 2 --adapter "$dir/base.lora" > "$dir/o" 2> "$dir/e"
[ $? -eq 1 ] && [ ! -s "$dir/o" ] && [ "$(wc -l < "$dir/e")" -eq 1 ] &&
    grep -q "^ngpt generate: --adapter $dir/base.lora does not apply to $dir/other.ngpt: the adapter was made for another model of this config" "$dir/e"
check $? "generate refuses an adapter of another model in one line: $(cat "$dir/e")"
$N train --init "$dir/other.ngpt" --adapter "$dir/base.lora" --data "$dir/n.txt" --out "$dir/x.lora" > /dev/null 2> "$dir/e"
[ $? -eq 1 ] && [ ! -e "$dir/x.lora" ] && [ "$(wc -l < "$dir/e")" -eq 1 ] &&
    grep -q "^ngpt train: --adapter $dir/base.lora does not apply to $dir/other.ngpt: " "$dir/e"
check $? "train refuses to go on with an adapter of another model in one line: $(cat "$dir/e")"
$N init --out "$dir/wide.ngpt" --config T=16 --config C=64 --config L=2 --config H=4 --config d_ff=64 > /dev/null 2>&1
$N eval --model "$dir/wide.ngpt" --data "$dir/n.txt" --batches 1 --adapter "$dir/base.lora" > /dev/null 2> "$dir/e"
[ $? -eq 1 ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && grep -q "another config" "$dir/e"
check $? "eval refuses an adapter of another config in one line: $(cat "$dir/e")"
$N train --init "$dir/wide.ngpt" --adapter "$dir/base.lora" --data "$dir/n.txt" --out "$dir/x.lora" > /dev/null 2> "$dir/e"
[ $? -eq 1 ] && [ ! -e "$dir/x.lora" ] && [ "$(wc -l < "$dir/e")" -eq 1 ] &&
    grep -q "^ngpt train: --adapter $dir/base.lora does not apply to $dir/wide.ngpt: .*another model (its config differs)" "$dir/e"
check $? "train refuses an adapter of another config before its settings apply: $(cat "$dir/e")"

# ---- ngpt info
$N info "$dir/base.lora" > "$dir/info" 2>&1 &&
    grep -q "^adapter:     LoRA r=4 alpha=16 targets=all-linear: scale 4, 3072 floats (0.01 MiB) in 2 of 2 layers: c_attn,o_proj,c_fc,down_proj$" "$dir/info" &&
    grep -q "^model:       V=256 T=16 C=32 L=2 H=4 d_ff=64 dropout=0 .*; identity [0-9a-f]\{16\} " "$dir/info" &&
    grep -q "^training:    none: the adapter alone$" "$dir/info" &&
    $N info "$dir/base.lora.train" > "$dir/info" 2>&1 &&
    grep -q "^training:    step 20 of 20, batch 8, seq 16, lr 0.01 -> 0.001, seed 42, best eval loss " "$dir/info"
check $? "info of an adapter and of its training state: $(cat "$dir/info")"
$N info "$dir/q8.ngpt" --batch 8 --seq 16 --lora r=4,targets=all-linear > "$dir/info" 2>&1 &&
    grep -q "^lora train:  [0-9]* bytes (.*) at batch 8, seq 16: a LoRA adapter r=4 alpha=16 targets=all-linear, 3072 floats (0.01 MiB), on these q8 weights, frozen" "$dir/info"
check $? "info sizes a LoRA run of a model: $(grep lora "$dir/info")"
lora_bytes() { $N info "$dir/base.ngpt" --batch 8 --seq 16 --lora r=4,targets=all-linear "$@" | sed -n 's/^lora train:  \([0-9]*\) bytes.*/\1/p'; }
plain=$(lora_bytes) saved=$(lora_bytes --grad-checkpoint --loss-chunk 16)
[ -n "$plain" ] && [ -n "$saved" ] && [ "$saved" -lt "$plain" ] &&
    $N info "$dir/base.ngpt" --grad-checkpoint --loss-chunk 16 | grep -q "^arena train: .*, --grad-checkpoint, --loss-chunk 16 ("
check $? "info --grad-checkpoint --loss-chunk sizes the smaller run ($saved against $plain bytes)"
arena=$(sed -n 's/^lora train:  [0-9]* bytes (\([0-9.]*\) MiB).*/\1/p' "$dir/info")
grep -q "; arena $arena MiB (batch 8, seq 16," "$dir/q8.log"
check $? "the arena info gave ($arena MiB) is the one train plans: $(head -1 "$dir/q8.log")"

# ---- bad options: exit 2 (usage) or 1, nothing written
expect() {  # expect CODE PATTERN ARGS...
    code=$1 pat=$2; shift 2
    rm -f "$dir/x.lora"
    $N "$@" > /dev/null 2> "$dir/err"; rc=$?
    [ $rc -eq "$code" ] && grep -q -e "$pat" "$dir/err" && [ ! -e "$dir/x.lora" ]
    check $? "ngpt $* -> exit $rc (want $code), stderr: $(cat "$dir/err") (want /$pat/)"
}
T="--data $dir/n.txt --steps 2 --out $dir/x.lora"
expect 2 "--lora and --adapter train an adapter of a model: name the model with --init MODEL" train --lora r=4 $T
expect 2 "give --lora (a new adapter) or --adapter FILE" train --init "$dir/base.ngpt" --lora r=4 --adapter "$dir/base.lora" $T
expect 2 "--config: an adapter trains on" train --init "$dir/base.ngpt" --lora r=4 --config dropout=0 $T
expect 2 "--no-decay-norms: an adapter has no norms" train --init "$dir/base.ngpt" --lora r=4 --no-decay-norms $T
expect 2 "--lora: unknown key \"beta\"" train --init "$dir/base.ngpt" --lora r=4,beta=2 $T
expect 2 "--lora: targets: gate_proj and up_proj are a gated MLP's" train --init "$dir/base.ngpt" --lora targets=gate_proj $T
expect 2 "--lora: targets: lm_head is the embedding or the lm_head" train --init "$dir/base.ngpt" --lora targets=lm_head $T
expect 2 "--out $dir/base.ngpt is the model the adapter trains on" train --init "$dir/base.ngpt" --lora r=4 --data "$dir/n.txt" --out "$dir/base.ngpt"
expect 2 "--resume $dir/base.lora continues an adapter's run: give no --lora or --adapter" train --init "$dir/base.ngpt" --resume "$dir/base.lora" --lora r=4 $T
expect 2 "with --init, --resume ADAPTER continues an adapter's run from ADAPTER.train, and $dir/q8.ngpt.train does not exist" train --init "$dir/base.ngpt" --resume "$dir/q8.ngpt" $T
expect 2 "--chat: conversations are tokens of a model's tokenizer" train --init "$dir/base.ngpt" --lora r=4 --chat $T
expect 1 "cannot go on training $dir/base.ngpt: .*is not a LoRA adapter" train --init "$dir/base.ngpt" --adapter "$dir/base.ngpt" $T
expect 1 "is a LoRA adapter, not a model" generate --model "$dir/base.lora" --prompt hi
expect 1 "cannot open $dir/none.lora" generate --model "$dir/base.ngpt" --prompt hi --adapter "$dir/none.lora"
expect 2 "--adapter $dir/base.lora:nan: the scale must be finite" generate --model "$dir/base.ngpt" --prompt hi --adapter "$dir/base.lora:nan"
A="--adapter $dir/base.lora"
expect 2 "at most 8 --adapter" generate --model "$dir/base.ngpt" --prompt hi $A $A $A $A $A $A $A $A $A
summary test_cli_lora
