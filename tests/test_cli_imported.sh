#!/bin/sh
# test_cli_imported.sh — the whole tool on a model `ngpt import` made of a
# small Hugging Face GPT-2 directory (build/tests/test_import --write): info
# (GPT-2's switches, the tokenizer, its end token, sizes), generate (cached ==
# recomputed, any thread count) and chat stop at <|endoftext|> by default,
# eval's perplexity, trace, golden checksums (the same on every build and
# thread count), bench --model, quantize (and the 8-bit model generates and
# evaluates), and fine-tuning with train --init.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

$RUN_ENV "$B/tests/test_import" --write "$dir" > /dev/null 2> "$dir/err" &&
    $N import "$dir/gpt2" --out "$dir/m.ngpt" > /dev/null 2>> "$dir/err"
check $? "the imported model: $(cat "$dir/err")"
i=0
while [ $i -lt 60 ]; do
    echo "the quick brown fox jumps over the lazy dog, and the cat sat on the mat; line $i" >> "$dir/t.txt"
    i=$((i + 1))
done

# info
$N info "$dir/m.ngpt" > "$dir/info" 2>&1
check $? "info: $(cat "$dir/info")"
grep -q "^config:      V=300 T=32 C=64 L=2 H=4 d_ff=256 .* qkv_bias=1 tie_lm_head=1 final_norm=1 norm=pre pos=learned proj_bias=1 gelu=tanh$" "$dir/info" &&
    grep -q "^tokenizer:   BPE, 300 tokens (43 merges, 1 special; end 299)" "$dir/info" &&
    grep -q "^file size:   f32 $(wc -c < "$dir/m.ngpt") bytes" "$dir/info"
check $? "info shows GPT-2's wiring, the tokenizer and the file's size: $(cat "$dir/info")"
$N tokenizer info "$dir/m.ngpt" | grep -q '^special: *299 "<|endoftext|>" (end of text)'
check $? "<|endoftext|> is the end token: $($N tokenizer info "$dir/m.ngpt" 2>&1)"

# generate: the cache and the thread count change nothing
$N generate --model "$dir/m.ngpt" --prompt "the cat" -n 24 --temp 0 --threads 1 > "$dir/g1" 2> "$dir/err"
check $? "generate: $(cat "$dir/err")"
$N generate --model "$dir/m.ngpt" --prompt "the cat" -n 24 --temp 0 --threads 2 --no-cache > "$dir/g2" 2> /dev/null
[ -s "$dir/g1" ] && cmp -s "$dir/g1" "$dir/g2"
check $? "greedy text with the cache and 1 thread = without it, 2 threads: $(od -c "$dir/g1" | head -2)"
# The end token: sampled runs (bytes banned, so that the 44 other tokens are
# likely) that meet <|endoftext|> with --end -1 stop just before it by default.
bytes=$(i=0; s=0; while [ $i -lt 256 ]; do printf '%s%d' "${s#0}" $i; s=,; i=$((i + 1)); done)
met=0 cmet=0 seed=1
while [ $seed -le 30 ] && { [ $met -lt 2 ] || [ $cmet -lt 1 ]; }; do
    $N generate --model "$dir/m.ngpt" --prompt "the" -n 31 --temp 1 --seed $seed --ban "$bytes" --end -1 > "$dir/all" 2> /dev/null
    if grep -q '<|endoftext|>' "$dir/all"; then
        met=$((met + 1))
        $N generate --model "$dir/m.ngpt" --prompt "the" -n 31 --temp 1 --seed $seed --ban "$bytes" > "$dir/cut" 2> "$dir/err"
        awk 'BEGIN { RS = "^$" } { i = index($0, "<|endoftext|>"); printf "%s", substr($0, 1, i - 1) }' "$dir/all" > "$dir/want"
        cmp -s "$dir/cut" "$dir/want" && grep -q "stop: end token" "$dir/err"
        check $? "seed $seed: generate stops at <|endoftext|> by default: $(od -c "$dir/cut" | head -2) / $(cat "$dir/err")"
        printf 'the\n' | $N chat --model "$dir/m.ngpt" -n 31 --temp 1 --seed $seed --ban "$bytes" --end -1 > "$dir/call" 2> /dev/null
        printf 'the\n' | $N chat --model "$dir/m.ngpt" -n 31 --temp 1 --seed $seed --ban "$bytes" > "$dir/ccut" 2> /dev/null
        if grep -q '<|endoftext|>' "$dir/call"; then
            cmet=$((cmet + 1))
            awk 'BEGIN { RS = "^$" } { i = index($0, "<|endoftext|>"); printf "%s\n", substr($0, 1, i - 1) }' "$dir/call" > "$dir/cwant"
            cmp -s "$dir/ccut" "$dir/cwant"
            check $? "seed $seed: chat's reply stops at <|endoftext|> by default: $(od -c "$dir/ccut" | head -2)"
        fi
    fi
    seed=$((seed + 1))
done
[ $met -ge 2 ] && [ $cmet -ge 1 ]
check $? "sampled runs met <|endoftext|> (generate $met of 2, chat $cmet of 1)"

# eval: perplexity on a text file, the same for any thread count
$N eval --model "$dir/m.ngpt" --data "$dir/t.txt" --batches 2 --batch 2 --threads 1 > "$dir/e1" 2>&1
check $? "eval: $(cat "$dir/e1")"
grep -Eq "^loss [0-9.]+ nats/token, [0-9.]+ bits/byte, perplexity [0-9.]+ \(2 x 2 windows of 32 tokens" "$dir/e1"
check $? "eval prints the perplexity: $(cat "$dir/e1")"
$N eval --model "$dir/m.ngpt" --data "$dir/t.txt" --batches 2 --batch 2 --threads 2 > "$dir/e2" 2>&1 &&
    cmp -s "$dir/e1" "$dir/e2"
check $? "eval with 2 threads: $(cat "$dir/e2")"

# trace: labels are the tokens' text
$N trace --model "$dir/m.ngpt" --prompt "the cat sat" --text --layer 0 > "$dir/trace" 2>&1
sed -n 2p "$dir/trace" | grep -q '^ *th  *e  *␣c  *at  *␣s  *at$'
check $? "trace: $(head -3 "$dir/trace")"
$N trace --model "$dir/m.ngpt" --prompt "the cat" --svg "$dir/t.svg" > /dev/null 2>&1 && grep -q "<svg" "$dir/t.svg"
check $? "trace --svg"

# checksum: golden, on every build and thread count (of the model that
# test_import --write's directory imports to: a new fixture there, new values here)
c1=$($N checksum "$dir/m.ngpt" --prompt "the cat sat on the mat" --threads 1 | tr '\n' ' ')
c2=$($N checksum "$dir/m.ngpt" --prompt "the cat sat on the mat" --threads 2 | tr '\n' ' ')
[ "$c1" = "params=b53cd3277f1f6d60 logits_eval=336ea8c0845f093a logits_train=8b9b62e20994fc24 " ] && [ "$c1" = "$c2" ]
check $? "golden checksums of the imported model, 1 and 2 threads: $c1 / $c2"

# bench --model: the model's config and tokenizer
$N bench --model "$dir/m.ngpt" --quick --kernels none --runs 1 --warmup 0 --weights f32,q8 > "$dir/bench" 2> "$dir/err"
check $? "bench --model: $(cat "$dir/err")"
grep -q "^- config: V=300 T=32 .* gelu=tanh (model $dir/m.ngpt, --quick)$" "$dir/bench" &&
    grep -q "^| decode q8 *| B=1 new=32 " "$dir/bench" && grep -q "^Tokenizer $dir/m.ngpt: " "$dir/bench"
check $? "bench --model's report: $(head -12 "$dir/bench")"
$N bench --model "$dir/m.ngpt" --preset gpt2-small > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "leave out --preset, --config and --tokenizer" "$dir/err"
check $? "bench --model with --preset: $(cat "$dir/err")"

# quantize: the 8-bit model runs the same commands
$N quantize "$dir/m.ngpt" "$dir/q.ngpt" > /dev/null 2>&1 && $N info "$dir/q.ngpt" > "$dir/qinfo" 2>&1 &&
    grep -q "^config: .* gelu=tanh weights=q8$" "$dir/qinfo" && grep -q "^tokenizer:   BPE, 300 tokens" "$dir/qinfo" &&
    grep -q "^file size:   f32 $(wc -c < "$dir/m.ngpt") bytes (.*), q8 $(wc -c < "$dir/q.ngpt") bytes" "$dir/qinfo"
check $? "quantize and info: $(cat "$dir/qinfo")"
$N generate --model "$dir/q.ngpt" --prompt "the cat" -n 8 --temp 0 > /dev/null 2> "$dir/err"
check $? "generate with the 8-bit model: $(cat "$dir/err")"
out=$($N eval --model "$dir/q.ngpt" --data "$dir/t.txt" --batches 2 --batch 2 --compare "$dir/m.ngpt" 2>&1)
echo "$out" | grep -q "perplexity" && echo "$out" | grep -q "the same most likely next token at"
check $? "eval --compare of the two forms: $out"
$N bench --model "$dir/q.ngpt" --quick --kernels none --runs 1 --warmup 0 --no-bandwidth > "$dir/bench" 2> "$dir/err"
check $? "bench --model of an 8-bit file: $(cat "$dir/err")"
grep -q "^| decode q8 *| B=1 new=32 " "$dir/bench" && ! grep -q "^| decode  " "$dir/bench" &&
    ! grep -q "^| train" "$dir/bench" && grep -q "^Tokenizer $dir/q.ngpt: " "$dir/bench"
check $? "bench --model of an 8-bit file runs its own weights, no training: $(head -20 "$dir/bench")"
$N bench --model "$dir/q.ngpt" --weights f32,q8 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "holds 8-bit weights, which run as they are: leave out --weights" "$dir/err"
check $? "bench --model of an 8-bit file with --weights f32,q8: $(cat "$dir/err")"

# fine-tuning the imported model on the user's text
$N train --init "$dir/m.ngpt" --data "$dir/t.txt" --steps 4 --batch 2 --seq 32 --warmup 1 \
    --eval-every 0 --eval-batches 1 --out "$dir/f.ngpt" > "$dir/ft" 2>&1
check $? "train --init on the imported model: $(cat "$dir/ft")"
grep -q "^fine-tuning $dir/m.ngpt: its weights and tokenizer, a fresh optimizer$" "$dir/ft" &&
    grep -q "^tokenizer $dir/m.ngpt: 300 tokens (43 merges)" "$dir/ft" && grep -q "^step 4/4 loss" "$dir/ft"
check $? "fine-tuning report: $(cat "$dir/ft")"
$N generate --model "$dir/f.ngpt" --prompt "the cat" -n 8 --temp 0 > /dev/null 2> "$dir/err" &&
    grep -q "stop: " "$dir/err"
check $? "generate with the fine-tuned model: $(cat "$dir/err")"
summary test_cli_imported
