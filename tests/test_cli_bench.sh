#!/bin/sh
# test_cli_bench.sh — `ngpt bench` end to end on a tiny model (a few seconds,
# also under qemu): every section of the markdown report is there and every
# figure in it is a positive number; the JSON has every key docs/BENCH.md
# promises, with positive figures; the SVG is one closed <svg> element; bad
# usage exits 2. Env: BUILD, RUN_ENV. Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

tiny="--config T=8 --config C=8 --config L=1 --config H=2 --config d_ff=16"
# Natively: two thread counts and every kernel. Under qemu-user: one thread
# count (its pthread_create hangs (qemu-aarch64 7.2) or crashes (qemu-arm) on
# this project's CI hosts) and the cheap kernels (the GEMMs at the default
# model's shapes take seconds each when emulated). Under a sanitizer (make
# SANITIZE=..., which says so here) the cheap kernels too: the GEMMs take 3
# minutes under ASan, test_kernels runs every kernel under it, and the rows'
# bits against the reference are the other builds' check.
cheap=attn_scores,softmax,layernorm_fwd,rope
if [ -z "$RUN_ENV" ]; then
    threads=1,2 nt=2 kernels=all
else
    threads=1 nt=1 kernels=$cheap
fi
[ -n "$SANITIZE" ] && kernels=$cheap
$N bench --quick $tiny --runs 3 --threads $threads --kernels $kernels --bandwidth-mib 16 --json "$dir/b.json" \
    --svg "$dir/b.svg" > "$dir/b.md" 2> "$dir/err"
check $? "ngpt bench --quick on a tiny config: $(cat "$dir/err")"

# Markdown: the rows each section must have (prefill twice: T/2 and 5
# positions; decode twice: batch 1 and 4, each with float32 and 8-bit
# weights; train twice: B=8 and B=32; a LoRA adapter's training at both, and
# decode at batch 1, on f32 and q8; per thread count) ...
count() { grep -c "^| $1 " "$dir/b.md"; }
[ "$(count 'prefill  ')" = $((2 * nt)) ] && [ "$(count 'decode  ')" = $((2 * nt)) ] &&
    [ "$(count 'prefill q8')" = $((2 * nt)) ] && [ "$(count 'decode q8')" = $((2 * nt)) ] &&
    [ "$(count 'train  ')" = $((2 * nt)) ] && [ "$(count 'train lora  ')" = $((2 * nt)) ] &&
    [ "$(count 'train lora q8')" = $((2 * nt)) ] && [ "$(count 'decode lora  ')" = $nt ] &&
    [ "$(count 'decode lora q8')" = $nt ]
check $? "workload rows (prefill, decode b1/b4, f32 and q8, train B=8/B=32, LoRA, per thread count): $(cat "$dir/b.md")"
[ "$(count 'arena, infer  ')" = $((2 * nt)) ] && [ "$(count 'arena, infer q8')" = $((2 * nt)) ] &&
    [ "$(count 'arena, train')" = $((2 * nt)) ] && [ "$(count 'arena, lora')" = $((4 * nt)) ] &&
    [ "$(count 'peak RSS')" = 1 ]
check $? "memory rows (arena per context, peak RSS)"
$N bench --quick $tiny --runs 1 --threads 1 --kernels none --no-bandwidth --weights q8 > "$dir/q.md" 2> "$dir/err"
grep -q "^| decode q8 " "$dir/q.md" && ! grep -q "^| decode  " "$dir/q.md" && grep -q "^| train " "$dir/q.md" &&
    ! grep -q "read bandwidth" "$dir/q.md" && grep -q "^| weight bytes, decode q8 .*B=1 " "$dir/q.md"
check $? "--weights q8: 8-bit prefill and decode rows only, training stays; --no-bandwidth: no probe row, the decode's weight bytes still: $(cat "$dir/q.md" "$dir/err")"
$N bench --quick $tiny --runs 1 --threads 1 --kernels none --no-bandwidth --weights f32,q8,q4 > "$dir/q4.md" 2> "$dir/err"
grep -q "^| decode q4 " "$dir/q4.md" && grep -q "^| prefill q4 " "$dir/q4.md" && grep -q "^| decode q8 " "$dir/q4.md" &&
    grep -q "^| decode  " "$dir/q4.md" && grep -q "^| arena, infer q4 " "$dir/q4.md" &&
    [ "$(grep -n '^| decode q8 .*B=1' "$dir/q4.md" | cut -d: -f1)" -lt "$(grep -n '^| decode q4 .*B=1' "$dir/q4.md" | cut -d: -f1)" ]
check $? "--weights f32,q8,q4: the 4-bit rows under the 8-bit ones: $(cat "$dir/q4.md" "$dir/err")"
$N bench --quick $tiny --runs 1 --threads 1 --kernels none --no-bandwidth --no-train --weights q8,q4 \
    --lm-head q4 > "$dir/q4h.md" 2> "$dir/err"
grep -q "^| decode q4h " "$dir/q4h.md" && grep -q "^| decode q8 " "$dir/q4h.md" &&
    ! grep -q "^| decode q4 " "$dir/q4h.md" && grep -q "^| weight bytes, decode q4h .*B=1 " "$dir/q4h.md"
check $? "--lm-head q4: the q4 rows with a 4-bit head, q4h: $(cat "$dir/q4h.md" "$dir/err")"
$N bench --quick $tiny --runs 1 --threads 1 --kernels none --no-bandwidth --prompt 5 > "$dir/p.md" 2> "$dir/err"
grep -q "^| prefill .* prompt=5 " "$dir/p.md"
check $? "--prompt 5 sets the prefill's prompt: $(cat "$dir/p.md" "$dir/err")"
$N bench --quick $tiny --runs 1 --threads 1 --kernels none --no-bandwidth --weights q8 --config T=24 --decode-at 5 \
    > "$dir/d.md" 2> "$dir/err"
grep -q "^| decode at 5 (kv f32) q8 .* new=16 " "$dir/d.md" && grep -q "^| decode at 5 (kv q8) q8 .* new=16 " "$dir/d.md"
check $? "--decode-at 5: decode after a 5-token prompt with each KV cache: $(cat "$dir/d.md" "$dir/err")"
$N bench $tiny --decode-at 1 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "decode-at 1: the prompt and 16 new tokens exceed the model's context T=8" "$dir/err"
check $? "--decode-at past T - 16 is a usage error: $(cat "$dir/err")"
# the speculative workload (a 32-token prompt: T=64 leaves it 32 new tokens)
# and a 5-position pass against a decode step; one thread: no two-thread probe
$N bench --quick $tiny --config T=64 --runs 1 --threads 1 --kernels none --bandwidth-mib 16 --weights q8 \
    --json "$dir/s.json" > "$dir/s.md" 2> "$dir/err"
grep -q "^| generate q8 .*B=1 new=32 " "$dir/s.md" && grep -q "^| spec lookup q8 .* of " "$dir/s.md" &&
    grep -q "^| spec draft q8 .* of .*(100%)" "$dir/s.md" && grep -q "^| 5-position pass ÷ decode step q8 " "$dir/s.md" &&
    [ "$(grep -c '^| read bandwidth (probe) ' "$dir/s.md")" = 1 ] && grep -q '"test": "spec draft".*"proposed"' "$dir/s.json" &&
    ! grep -q '"read_bandwidth_2"' "$dir/s.json"
check $? "speculative rows (plain, lookup, self-draft: every proposal kept), pass ÷ step, one probe: $(cat "$dir/s.md" "$dir/err")"
# --tokenizer: a BPE model's figures (V from it, bytes/s from its bytes per token)
printf 'the cat sat on the mat; the cat ate the rat. ' > "$dir/text"
for i in 1 2 3 4 5 6; do cat "$dir/text" "$dir/text" > "$dir/text2" && mv "$dir/text2" "$dir/text"; done
$N tokenizer train --data "$dir/text" --vocab 270 --out "$dir/t.tok" > /dev/null 2>&1
$N bench --quick $tiny --runs 1 --threads 1 --kernels none --no-bandwidth --tokenizer "$dir/t.tok" --text "$dir/text" \
    --json "$dir/t.json" > "$dir/t.md" 2> "$dir/err"
grep -q "^- config: V=270 " "$dir/t.md" &&
    grep -Eq "^Tokenizer .*: [0-9.]+ bytes per token on .*; bytes/s = tok/s x [0-9.]+: prefill .* bytes/s; decode .* bytes/s" "$dir/t.md" &&
    grep -Eq '"bytes_per_token": [0-9.]+' "$dir/t.json"
check $? "--tokenizer sets V and adds bytes/s: $(cat "$dir/t.md" "$dir/err")"
$N bench $tiny --text "$dir/text" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "text needs --tokenizer" "$dir/err"
check $? "--text alone is a usage error: $(cat "$dir/err")"
$N bench $tiny --prompt 9 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "prompt 9 is longer than the model's context T=8" "$dir/err"
check $? "--prompt past T is a usage error: $(cat "$dir/err")"
grep -q "^- build: ngpt .*kernels=.*sleef=.*xxhash=.*cc=.*flags=" "$dir/b.md"
check $? "the build-info line names kernels, SLEEF, xxHash, compiler and flags"
[ "$(count 'fma peak (probe)')" = $nt ]
check $? "an FMA peak per thread count"
# the read-bandwidth probe (one thread, and two when --threads has 2), and
# decode at batch 1 against it: per weight type and thread count, weight
# MiB/token, GB/s and % read bw
[ "$(grep -c '^| read bandwidth (probe) *| sum of 16 MiB .*[0-9] |' "$dir/b.md")" = $nt ] &&
    [ "$(grep -c '^| weight bytes, decode  .*B=1 .*|.*|.*|.*|.*|.*[0-9] |$' "$dir/b.md")" = $nt ] &&
    [ "$(grep -c '^| weight bytes, decode q8 .*B=1 .*|.*|.*|.*|.*|.*[0-9] |$' "$dir/b.md")" = $nt ] &&
    ! grep -q '^| weight bytes, .*B=4 ' "$dir/b.md"
check $? "read-bandwidth rows (1 thread, 2 with --threads 1,2), and a weight-traffic row with % read bw per batch-1 decode"
# the peak is the CPU's widest FMA; a build whose kernels use a narrower one
# (AVX2 kernels on an AVX-512 CPU, the scalar reference) gets a row of that
# width per thread count too, and its JSON peak entries say which is which
widths=$(count "fma (the kernels' width)")
case "$(sed -n 's/.*kernels=\([a-z0-9]*\).*/\1/p' "$dir/b.md" | head -1) $(grep -c 'AVX-512 FMA' "$dir/b.md")" in
avx2\ [1-9]*|scalar\ [1-9]*) want=$nt ;;     # an AVX-512 CPU, narrower kernels
scalar\ 0) want=$(grep -q 'fma peak (probe) | scalar' "$dir/b.md" && echo 0 || echo $nt) ;;
*) want=0 ;;
esac
[ "$widths" = "$want" ] && [ "$(grep -c '"widest": false' "$dir/b.json")" = "$want" ] &&
    [ "$(grep -c '"widest": true' "$dir/b.json")" = $nt ]
check $? "a probe row in the kernels' width exactly when it is narrower than the peak ($widths, want $want)"
# the kernel list's products and row kernels, each with a rate and no mismatch
if [ "$kernels" = all ]; then
    [ "$(count gemm)" -ge $((2 * nt)) ] && [ "$(count gelu_fwd)" = $nt ] && [ "$(count adamw)" = $nt ]
    check $? "a kernel row per kernel of the list"
fi
# (attn_scores has two rows: one query head, and the 7 heads of a key/value head)
[ "$(count softmax)" = $nt ] && [ "$(count layernorm_fwd)" = $nt ] &&
    [ "$(count attn_scores)" = $((2 * nt)) ] && ! grep -q DIFFERS "$dir/b.md"
check $? "kernel rows, each giving the reference's bits"
# ... and every numeric cell of every table row (ranges "a – b" included) is > 0.
awk -F'|' '/^\| / && !/^\| -/ && !/^\| (test|kernel|traffic|memory) / {
    for (i = 2; i < NF; i++) {
        c = $i; gsub(/^ +| +$/, "", c)
        n = split(c, part, / – /)
        for (j = 1; j <= n; j++)
            if (part[j] ~ /^[0-9.]+$/ && part[j] + 0 <= 0) { print "not positive: " $0; bad = 1 }
    }
    rows++
} END { exit bad || rows < 10 }' "$dir/b.md"
check $? "every figure in the tables is positive"

# JSON: the documented keys, and every median/min/max and byte count > 0.
for key in '"schema": "ngpt-bench/1"' '"build_info"' '"cpu"' '"config"' '"threads": \[' '"weights": "q8"' \
    '"workloads"' '"tokens_per_s"' '"ms_per_call"' '"peak"' '"kernels"' '"us_per_call"' '"gflops"' \
    '"gbps"' '"arena"' '"peak_rss_bytes"' '"read_bandwidth": {"threads": 1, "bytes": 16777216' \
    '"weight_bytes_per_token"' '"weight_gbps"' '"read_bw_pct"'; do
    grep -q "$key" "$dir/b.json"
    check $? "JSON key $key"
done
if [ $nt = 2 ]; then
    grep -q '"read_bandwidth_2": {"threads": 2, "bytes": 16777216' "$dir/b.json"
    check $? "JSON key read_bandwidth_2 (the two-thread probe, --threads 1,2)"
fi
tr ',{}' '\n\n\n' < "$dir/b.json" | awk -F': ' '
    /"(median|min|max|bytes|peak_rss_bytes|tokens|flops|ms_per_call|us_per_call|calls|peak_pct|weight_bytes_per_token|read_bw_pct)": *[^ {[]/ {
        v = $NF; gsub(/[ \]\n]/, "", v)
        if (v !~ /^[0-9.]+([eE][+-]?[0-9]+)?$/ || v + 0 <= 0) { print "not positive: " $0; bad = 1 }
        n++
    } END { exit bad || n < 40 }'
check $? "every JSON figure is positive"
$N bench --quick $tiny --runs 1 --warmup 0 --kernels none --no-bandwidth --json - > "$dir/stdout.json" 2> /dev/null
head -c 1 "$dir/stdout.json" | grep -q '{' && tail -n 1 "$dir/stdout.json" | grep -q '^}$' &&
    grep -q '"kernels": \[$' "$dir/stdout.json" && ! grep -q read_bandwidth "$dir/stdout.json" && grep -A1 '"kernels": \[$' "$dir/stdout.json" | grep -q '^  \],'
check $? "--json - writes the JSON alone to stdout; --kernels none leaves the kernel list empty"

head -n 1 "$dir/b.svg" | grep -q '^<svg ' && tail -n 1 "$dir/b.svg" | grep -q '^</svg>$' &&
    [ "$(grep -c '<rect ' "$dir/b.svg")" -ge $((9 * nt + 1)) ]
check $? "the SVG is one <svg> element with a bar per figure"

# The Qwen, Llama 3 and Gemma 3 presets carry their families' switches (one layer, a small V and T
# here: their full size is docs/BENCH.md's); --no-train leaves out training and LoRA.
small="--config L=1 --config V=512 --config T=64 --config d_ff=64"
for p in "qwen2.5-0.5b:C=896 .*H=14 .*qkv_bias=1 .*kv_heads=2 " \
    "qwen3-0.6b:C=1024 .*H=16 .*qkv_bias=0 .*kv_heads=8 head_dim=128 .*qk_norm=1" \
    "llama3.2-1b:C=2048 .*H=32 .*kv_heads=8 .*rope_scaling=llama3 rope_factor=32 rope_low_freq_factor=1 rope_high_freq_factor=4 rope_original_context=8192" \
    "gemma3-270m:C=640 .*H=4 .*norm=sandwich .*mlp=geglu .*kv_heads=1 head_dim=256 .*sliding_window=512 sliding_pattern=6"; do
    $N bench --preset "${p%%:*}" $small --quick --runs 1 --warmup 0 --kernels none --no-bandwidth --no-train \
        --weights q8 --prompt 4 > "$dir/p.md" 2> "$dir/err"
    grep -q "^- config: .*${p#*:}.* (preset ${p%%:*}" "$dir/p.md" && grep -q "^| decode q8 " "$dir/p.md" &&
        ! grep -q "^| train" "$dir/p.md" && ! grep -q "^| decode lora" "$dir/p.md"
    check $? "--preset ${p%%:*} --no-train: the family's switches, no training rows: $(cat "$dir/p.md" "$dir/err")"
done

for bad in "--threads 0" "--threads 1,x" "--preset gpt3" "--runs 0" "--config Q=1" "--kernels gemm,nope" \
    "--frobnicate" "--weights q3" "--weights q8,q8" "--weights q4,f32,q4" "--config weights=q8" "--bandwidth-mib 0" \
    "--lm-head q4" "--weights q4 --lm-head q5"; do
    $N bench $bad > /dev/null 2> "$dir/err"
    [ $? = 2 ] && [ -s "$dir/err" ]
    check $? "ngpt bench $bad exits 2 with a message"
done
$N bench --help | grep -q "usage: ngpt bench"
check $? "ngpt bench --help"

summary test_cli_bench
