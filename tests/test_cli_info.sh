#!/bin/sh
# test_cli_info.sh — `ngpt info`: a file's sizes and those --config gives
# for the same model agree; the file sizes are the files' (ngpt init's
# float32 file, ngpt quantize's 8-bit one); the arenas are those train and
# generate plan (train's report line); the GPT-2 family's configs have
# their published parameter counts; a Hugging Face config.json is sized as
# its import; SmolLM2-135M and -360M have their published counts; usage
# errors.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
TINY="--config T=16 --config C=32 --config L=2 --config H=4 --config d_ff=64 --config pos=learned"
$N init --out "$dir/m.ngpt" $TINY > /dev/null 2>&1 && $N quantize "$dir/m.ngpt" "$dir/q.ngpt" > /dev/null 2>&1 &&
    $N quantize "$dir/m.ngpt" "$dir/q4.ngpt" --weights q4 > /dev/null 2>&1
check $? "init and quantize"
$N info "$dir/m.ngpt" --batch 4 --seq 8 > "$dir/file" 2>&1 && $N info $TINY --batch 4 --seq 8 > "$dir/cfg" 2>&1
check $? "info FILE and info --config: $(cat "$dir/file" "$dir/cfg")"
grep -v '^file:\|^weights:\|^tokenizer:\|^lora train:' "$dir/file" > "$dir/file.cut"
cmp -s "$dir/file.cut" "$dir/cfg"
check $? "info --config prints what info FILE does for the same model: $(diff "$dir/file.cut" "$dir/cfg")"
grep -q "^file size:   f32 $(wc -c < "$dir/m.ngpt") bytes (.*), q8 $(wc -c < "$dir/q.ngpt") bytes (.*), q4 $(wc -c < "$dir/q4.ngpt") bytes (.*)$" "$dir/file"
check $? "the file sizes are the files': $(grep 'file size' "$dir/file")"
grep -Eq "^arena infer: [0-9]+ bytes \([0-9.]+ MiB\) at batch 1 with f32 weights; q8 [0-9]+ bytes \([0-9.]+ MiB\), q4 [0-9]+ bytes \([0-9.]+ MiB\) \(the default plan: passes of at most 16 positions, the logits of the last one; 1 thread\)$" "$dir/file" &&
    grep -Eq "^arena full: [0-9]+ bytes \([0-9.]+ MiB\) at batch 1, seq 16 with f32 weights; q8 [0-9]+ bytes \([0-9.]+ MiB\), q4 [0-9]+ bytes \([0-9.]+ MiB\) \(one pass of T, every position's logits\)$" "$dir/file" &&
    grep -Eq "^arena train: [0-9]+ bytes \(([0-9.]+) MiB\) at batch 4, seq 8 \(1 thread; ngpt train --init fine-tunes it\)$" "$dir/file"
check $? "the arena lines: $(grep arena "$dir/file")"
# the default inference arena: the logits of one position instead of 16, V=256 floats each
full=$(sed -n 's/^arena full: \([0-9]*\) bytes.*/\1/p' "$dir/file")
infer=$(sed -n 's/^arena infer: \([0-9]*\) bytes.*/\1/p' "$dir/file")
[ -n "$infer" ] && [ -n "$full" ] && [ $((full - infer)) -eq $((15 * 256 * 4)) ]
check $? "the default arena saves 15 logits rows: $full against $infer: $(grep arena "$dir/file")"
printf 'the quick brown fox jumps over the lazy dog\n%.0s' $(seq 40) > "$dir/d.txt"
$N train --init "$dir/m.ngpt" --data "$dir/d.txt" --batch 4 --seq 8 --steps 1 --threads 1 --out "$dir/t.ngpt" > "$dir/train.log" 2>&1
mib=$(sed -n 's/^arena train: [0-9]* bytes (\([0-9.]*\) MiB).*/\1/p' "$dir/file")
grep -q "; arena $mib MiB (batch 4, seq 8, accum 1, 1 thread)" "$dir/train.log"
check $? "train --init plans the arena info gave ($mib MiB): $(head -1 "$dir/train.log")"
$N info "$dir/q.ngpt" > "$dir/qinfo" 2>&1 && grep -q "^arena train: none: an 8-bit model is not trained (its float32 original needs [0-9]* bytes" "$dir/qinfo" &&
    grep -q "^arena infer: [0-9]* bytes (.*) at batch 1 with q8 weights; f32 " "$dir/qinfo"
check $? "an 8-bit file: $(cat "$dir/qinfo")"

# the GPT-2 family's published configs (config.json: n_layer, n_embd, n_head;
# vocab 50257, n_positions 1024, n_inner 4*n_embd) have their published
# parameter counts, and info sizes them
gpt2_case() {   # gpt2_case NAME L C H PARAMS
    $N info --config V=50257 --config T=1024 --config L=$2 --config C=$3 --config H=$4 \
        --config d_ff=$(($3 * 4)) --config pos=learned --config qkv_bias=1 --config proj_bias=1 \
        --config gelu=tanh --batch 1 --seq 256 > "$dir/$1" 2>&1 &&
        grep -q "^parameters:  $5 " "$dir/$1" && grep -q "^file size:   f32 [0-9]* bytes" "$dir/$1" &&
        grep -q "^arena infer: [0-9]* bytes .* with f32 weights; q8 [0-9]* bytes" "$dir/$1" &&
        grep -q "^arena train: [0-9]* bytes .* at batch 1, seq 256" "$dir/$1"
    check $? "$1: $(cat "$dir/$1")"
}
# a 32-bit build (ARMv7) cannot plan the fine-tuning arena of the larger two
# (over 4 GiB): info still sizes the rest and says so on that line
gpt2_too_large_here() {   # gpt2_too_large_here NAME L C H PARAMS
    $N info --config V=50257 --config T=1024 --config L=$2 --config C=$3 --config H=$4 \
        --config d_ff=$(($3 * 4)) --config pos=learned --config qkv_bias=1 --config proj_bias=1 \
        --config gelu=tanh --batch 1 --seq 256 > "$dir/$1" 2>&1 &&
        grep -q "^parameters:  $5 " "$dir/$1" && grep -q "^file size:   f32 [0-9]* bytes" "$dir/$1" &&
        grep -q "^arena train: too large for this machine's size_t (a 32-bit build) at batch 1, seq 256" "$dir/$1"
    check $? "$1 on a 32-bit build: $(cat "$dir/$1")"
}
gpt2_case gpt2 12 768 12 124439808
if $N --version | grep -q " target=armv7 "; then
    gpt2_too_large_here gpt2-medium 24 1024 16 354823168
    gpt2_too_large_here gpt2-large 36 1280 20 774030080
else
    gpt2_case gpt2-medium 24 1024 16 354823168
    gpt2_case gpt2-large 36 1280 20 774030080
fi
gpt2_case distilgpt2 6 768 12 81912576

# a Hugging Face config.json: the model ngpt import makes of it, before the weights
mkdir "$dir/hf" && $RUN_ENV "$B/tests/test_import" --write "$dir/hf" > /dev/null 2>&1 &&
    $N import "$dir/hf/gpt2" --out "$dir/g.ngpt" > /dev/null 2>&1 &&
    $N info "$dir/hf/gpt2/config.json" > "$dir/hfc" 2>&1 && $N info "$dir/g.ngpt" > "$dir/hff" 2>&1
check $? "info config.json: $(cat "$dir/hfc")"
grep '^config:\|^parameters:\|^arena' "$dir/hff" > "$dir/hff.cut"
grep '^config:\|^parameters:\|^arena' "$dir/hfc" > "$dir/hfc.cut"
cmp -s "$dir/hff.cut" "$dir/hfc.cut"
check $? "info config.json sizes the model its import makes: $(diff "$dir/hff.cut" "$dir/hfc.cut")"
echo '{"model_type": "gpt2", "activation_function": "relu"}' > "$dir/relu.json"
$N info "$dir/relu.json" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q 'activation_function "relu"' "$dir/err"
check $? "info of a config.json ngpt cannot run: $(cat "$dir/err")"

# SmolLM2's published config.json (the hub's, keys as transformers 4.42 writes
# them) and its published parameter counts; 8192 positions (RoPE: no table),
# info sizes the arena for the context the user runs (--seq)
smollm2() {   # smollm2 NAME HIDDEN INTERMEDIATE LAYERS HEADS KV PARAMS
    cat > "$dir/$1.json" <<JSON
{"architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
 "bos_token_id": 0, "eos_token_id": 0, "head_dim": 64, "hidden_act": "silu",
 "hidden_size": $2, "initializer_range": 0.02, "intermediate_size": $3,
 "is_llama_config": true, "max_position_embeddings": 8192, "mlp_bias": false,
 "model_type": "llama", "num_attention_heads": $5, "num_hidden_layers": $4,
 "num_key_value_heads": $6, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
 "rope_interleaved": false, "rope_scaling": null, "rope_theta": 100000,
 "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.42.3",
 "use_cache": true, "vocab_size": 49152}
JSON
    $N info "$dir/$1.json" --seq 512 > "$dir/$1" 2>&1 &&
        grep -q "^parameters: *$7\b\|^parameters:.*\b$7\b" "$dir/$1" &&
        grep -q "kv_heads=$6" "$dir/$1" && grep -q "norm_type=rms" "$dir/$1" &&
        grep -q "mlp=swiglu" "$dir/$1" && grep -q "rope_pairs=halves" "$dir/$1"
    check $? "$1: $7 parameters, GQA $5:$6, RMSNorm, SwiGLU, rotate-half RoPE: $(cat "$dir/$1")"
}
smollm2 SmolLM2-135M 576 1536 30 9 3 134515008
smollm2 SmolLM2-360M 960 2560 32 15 5 361821120
sed 's/"rope_scaling": null/"rope_scaling": {"rope_type": "linear", "factor": 2.0}/' \
    "$dir/SmolLM2-135M.json" > "$dir/scaled.json"
$N info "$dir/scaled.json" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q 'rope_scaling' "$dir/err"
check $? "info of a Llama config.json with rope scaling: $(cat "$dir/err")"

# Qwen2.5-0.5B's, Qwen3-0.6B's and Llama-3.2-1B's published config.json
# (the hub's keys): their published parameter counts, T = ngpt import's
# default context (said on a line of its own), the family's switches
cat > "$dir/qwen25.json" <<JSON
{"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
 "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
 "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
 "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
 "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
 "sliding_window": 32768, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
 "transformers_version": "4.40.1", "use_cache": true, "use_sliding_window": false,
 "vocab_size": 151936}
JSON
cat > "$dir/qwen3.json" <<JSON
{"architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
 "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
 "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072,
 "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
 "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
 "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null,
 "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
 "use_cache": true, "use_sliding_window": false, "vocab_size": 151936}
JSON
cat > "$dir/llama32.json" <<JSON
{"architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
 "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
 "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
 "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
 "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
 "pretraining_tp": 1, "rms_norm_eps": 1e-05,
 "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                  "original_max_position_embeddings": 8192, "rope_type": "llama3"},
 "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
 "transformers_version": "4.45.0.dev0", "use_cache": true, "vocab_size": 128256}
JSON
# Gemma-3-1B's published config.json (Gemma-3-270M's: tests/test_import.c)
cat > "$dir/gemma3.json" <<JSON
{"architectures": ["Gemma3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
 "attn_logit_softcapping": null, "bos_token_id": 2, "cache_implementation": "hybrid",
 "eos_token_id": [1, 106], "final_logit_softcapping": null, "head_dim": 256,
 "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "initializer_range": 0.02,
 "intermediate_size": 6912, "max_position_embeddings": 32768, "model_type": "gemma3_text",
 "num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1,
 "pad_token_id": 0, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
 "rope_local_base_freq": 10000, "rope_scaling": null, "rope_theta": 1000000,
 "sliding_window": 512, "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
 "transformers_version": "4.50.0.dev0", "use_cache": true, "vocab_size": 262144}
JSON
family() {  # family NAME PARAMS PATTERN
    $N info "$dir/$1.json" --seq 256 --batch 1 > "$dir/$1" 2>&1 &&
        grep -q "^parameters:  $2 " "$dir/$1" && grep -q "^context:     T=4096, ngpt import" "$dir/$1" &&
        grep -q "^config:      .* T=4096 .*$3" "$dir/$1"
    check $? "$1: $2 parameters, T=4096, $3: $(cat "$dir/$1")"
}
family qwen25 494032768 "qkv_bias=1 .*kv_heads=2"
family qwen3 596049920 "head_dim=128 rope_pairs=halves qk_norm=1"
family gemma3 999885952 "norm=sandwich .*mlp=geglu .*qk_norm=1 norm_offset=1 sliding_window=512 sliding_pattern=6 rope_local_theta=10000 attn_scalar=256 emb_scale=34"
family llama32 1235814400 "rope_scaling=llama3 rope_factor=32 rope_low_freq_factor=1 rope_high_freq_factor=4 rope_original_context=8192"
sed 's/"use_sliding_window": false/"use_sliding_window": true/' "$dir/qwen25.json" > "$dir/window.json"
$N info "$dir/window.json" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q 'use_sliding_window' "$dir/err" && [ "$(wc -l < "$dir/err")" -eq 1 ]
check $? "info of a Qwen config.json with sliding windows on: $(cat "$dir/err")"

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
# llama2.c's stories15M, sized from its 28-byte header alone (the weights need not be there)
printf '\040\001\000\000\000\003\000\000\006\000\000\000\006\000\000\000\006\000\000\000\000\175\000\000\000\001\000\000' > "$dir/stories15M.bin"
$N info "$dir/stories15M.bin" > "$dir/out" 2> "$dir/err" && grep -q "^parameters:  15191712 " "$dir/out" &&
    grep -q "norm_type=rms mlp=swiglu mlp_bias=0 kv_heads=6" "$dir/out"
check $? "info stories15M.bin (header only): $(cat "$dir/out" "$dir/err")"

summary test_cli_info
