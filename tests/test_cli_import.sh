#!/bin/sh
# test_cli_import.sh — `ngpt import` end to end on a small Hugging Face GPT-2
# directory (written by build/tests/test_import --write): the float32 and
# the 8-bit import (byte for byte `ngpt quantize`'s file), files named one
# by one, a sharded BF16 model; the imported model generates and its info
# shows GPT-2's switches; a Llama directory likewise, and rope scaling refused;
# --context writes a shorter T; errors are one line with nothing written; usage
# errors exit 2. llama2.c's model.bin + tokenizer.bin (test_llama2c --write)
# import in one command and generate; info sizes a model.bin.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

$RUN_ENV "$B/tests/test_import" --write "$dir" 2> "$dir/err"
check $? "test_import --write: $(cat "$dir/err")"
hf=$dir/gpt2

$N import "$hf" --out "$dir/m.ngpt" > "$dir/out" 2> "$dir/err"
check $? "ngpt import: $(cat "$dir/err")"
grep -q "^wrote $dir/m.ngpt: 121344 parameters, float32 weights, [0-9]* bytes" "$dir/out" &&
    grep -q "proj_bias=1 gelu=tanh" "$dir/out"
check $? "import says what it wrote: $(cat "$dir/out")"
$N info "$dir/m.ngpt" > "$dir/info" 2> "$dir/err"
check $? "info on the import: $(cat "$dir/err")"
$N generate --model "$dir/m.ngpt" --prompt "the" -n 8 --temp 0 > "$dir/gen" 2> "$dir/err"
check $? "generate on the import: $(cat "$dir/err")"

$N import "$hf" --out "$dir/q.ngpt" --weights q8 > /dev/null 2> "$dir/err"
check $? "ngpt import --weights q8: $(cat "$dir/err")"
$N quantize "$dir/m.ngpt" "$dir/q2.ngpt" > /dev/null 2>&1 && cmp -s "$dir/q.ngpt" "$dir/q2.ngpt"
check $? "import --weights q8 writes ngpt quantize's bytes"
$N import "$hf" --out "$dir/q4.ngpt" --weights q4 > "$dir/out" 2> "$dir/err" &&
    grep -q "^wrote $dir/q4.ngpt: 121344 parameters, 4-bit weights" "$dir/out"
check $? "ngpt import --weights q4: $(cat "$dir/out" "$dir/err")"
$N quantize "$dir/m.ngpt" "$dir/q42.ngpt" --weights q4 > /dev/null 2>&1 && cmp -s "$dir/q4.ngpt" "$dir/q42.ngpt"
check $? "import --weights q4 writes ngpt quantize --weights q4's bytes"
$N generate --model "$dir/q4.ngpt" --prompt "the" -n 8 --temp 0 > /dev/null 2> "$dir/err"
check $? "generate on the 4-bit import: $(cat "$dir/err")"
$N import "$hf" --out "$dir/q4h.ngpt" --weights q4 --lm-head q4 > /dev/null 2> "$dir/err" &&
    $N quantize "$dir/m.ngpt" "$dir/q4h2.ngpt" --weights q4 --lm-head q4 > /dev/null 2>&1 &&
    cmp -s "$dir/q4h.ngpt" "$dir/q4h2.ngpt" && ! cmp -s "$dir/q4h.ngpt" "$dir/q4.ngpt"
check $? "import --weights q4 --lm-head q4 writes ngpt quantize --lm-head q4's bytes: $(cat "$dir/err")"
$N import "$hf" --out "$dir/x.ngpt" --lm-head q4 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q -- "--lm-head q4 needs --weights q4" "$dir/err" && [ ! -e "$dir/x.ngpt" ]
check $? "import --lm-head q4 without --weights q4: $(cat "$dir/err")"

$N import --config "$hf/config.json" --safetensors "$hf/model.safetensors" \
    --vocab "$hf/vocab.json" --merges "$hf/merges.txt" --out "$dir/n.ngpt" > /dev/null 2> "$dir/err" &&
    cmp -s "$dir/m.ngpt" "$dir/n.ngpt"
check $? "files named one by one: the same model: $(cat "$dir/err")"
b=$dir/gpt2_bf16
$N import "$b" --out "$dir/b.ngpt" > /dev/null 2> "$dir/err"
check $? "a sharded BF16 model: $(cat "$dir/err")"
$N import --config "$b/config.json" --safetensors "$b/model-00001-of-00002.safetensors" \
    --safetensors "$b/model-00002-of-00002.safetensors" --vocab "$hf/vocab.json" --merges "$hf/merges.txt" \
    --out "$dir/b2.ngpt" > /dev/null 2> "$dir/err" && cmp -s "$dir/b.ngpt" "$dir/b2.ngpt"
check $? "shards named one by one: $(cat "$dir/err")"

# a Llama directory (BF16, GQA, head_dim other than C/H): Llama's switches;
# it generates; --weights q8 is ngpt quantize's file
$N import "$dir/llama" --out "$dir/l.ngpt" > "$dir/out" 2> "$dir/err" &&
    grep -q "norm_type=rms mlp=swiglu mlp_bias=0 kv_heads=2 head_dim=24 rope_pairs=halves" "$dir/out"
check $? "ngpt import of a Llama directory: $(cat "$dir/out" "$dir/err")"
$N generate --model "$dir/l.ngpt" --prompt "the" -n 8 --temp 0 > /dev/null 2> "$dir/err"
check $? "generate on the Llama import: $(cat "$dir/err")"
# fine-tuning goes through RMSNorm, SwiGLU and grouped-query attention
# backward; the tuned model keeps the switches and the tokenizer, and evaluates
i=0
while [ $i -lt 60 ]; do printf 'the cat sat on the mat %d\n' $i >> "$dir/ft.txt"; i=$((i + 1)); done
FT="--data $dir/ft.txt --batch 2 --seq 8 --steps 3 --warmup 1 --lr 1e-3 --eval-every 0 --eval-batches 1 --threads 1"
$N train --init "$dir/l.ngpt" $FT --out "$dir/lft.ngpt" > "$dir/out" 2> "$dir/err" &&
    $N info "$dir/lft.ngpt" > "$dir/info" 2>> "$dir/err" &&
    grep -q "norm_type=rms mlp=swiglu mlp_bias=0 kv_heads=2 head_dim=24 rope_pairs=halves" "$dir/info" &&
    $N eval --model "$dir/lft.ngpt" --data "$dir/ft.txt" --batches 2 > "$dir/out" 2>> "$dir/err"
check $? "Llama: train --init fine-tunes the import, eval reads it: $(cat "$dir/out" "$dir/err")"
# tokenizer_config.json: SmolLM2-Instruct's end token <|im_end|> (id 298 of
# 300) and a ChatML template, which the model keeps; another template
# (Llama-3's) by --tokenizer-config, kept too; one ngpt cannot render is kept
# and said so; add_bos_token=true: prompts begin with bos_token
$N import "$dir/llama_chat" --out "$dir/lc.ngpt" > "$dir/out" 2> "$dir/err" &&
    grep -q "^  end token: 298 <|im_end|>$" "$dir/out" &&
    grep -q "^  chat: the model's chat template (ngpt chat renders it as Hugging Face does)$" "$dir/out" &&
    $N tokenizer info "$dir/lc.ngpt" > "$dir/info" 2>> "$dir/err" && grep -q "298 \"<|im_end|>\" (end of text)" "$dir/info"
check $? "import reads tokenizer_config.json's eos_token: $(cat "$dir/out" "$dir/info" "$dir/err")"
# conversations (--chat) train an adapter of the ChatML model, only the replies as targets
i=0
while [ $i -lt 40 ]; do
    printf '{"messages": [{"role": "user", "content": "hi %d"}, {"role": "assistant", "content": "no"}]}\n' $i >> "$dir/chat.jsonl"
    i=$((i + 1))
done
$N train --init "$dir/lc.ngpt" --lora r=2 --chat --data "$dir/chat.jsonl" --steps 3 --batch 2 --seq 16 \
    --eval-every 0 --eval-batches 1 --threads 1 --out "$dir/chat.lora" > "$dir/out" 2>&1 &&
    [ -s "$dir/chat.lora" ] && [ -s "$dir/chat.lora.train" ] && grep -q "^saved $dir/chat.lora at step 3$" "$dir/out"
check $? "train --chat: a LoRA adapter on ChatML conversations: $(cat "$dir/out")"
# a model that carries SmolLM2's template: --chat renders it by default (its
# default system message included: more tokens than the bare ChatML turns)
chat_tokens() {
    $N train --lora r=2 --chat "$@" --data "$dir/chat.jsonl" --steps 1 --batch 2 --seq 16 \
        --eval-every 0 --eval-batches 1 --threads 1 --out "$dir/chat2.lora" 2>&1 |
        sed -n 's/^tokenizer .*; \([0-9]*\) tokens train.*/\1/p'
}
$N import "$dir/llama_chat" --tokenizer-config tests/chat_template/smollm2.json --out "$dir/lcs.ngpt" > /dev/null 2>&1
model_n=$(chat_tokens --init "$dir/lcs.ngpt") chatml_n=$(chat_tokens --init "$dir/lcs.ngpt" --template chatml)
file_n=$(chat_tokens --init "$dir/lc.ngpt" --template tests/chat_template/smollm2.json)
[ -n "$model_n" ] && [ -n "$chatml_n" ] && [ "$model_n" -gt "$chatml_n" ] && [ "$file_n" = "$model_n" ]
check $? "train --chat renders the model's template by default, --template chatml the bare turns ($model_n, $chatml_n, $file_n tokens)"
$N train --init "$dir/lc.ngpt" --lora r=2 --chat --template plain --data "$dir/chat.jsonl" --steps 1 --seq 16 --out "$dir/bad.lora" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && [ ! -e "$dir/bad.lora" ] && grep -q "^ngpt train: --template plain: conversations to train on need a template" "$dir/err"
check $? "train --chat --template plain is refused: $(cat "$dir/err")"
$N train --init "$dir/lc.ngpt" --lora r=2 --date 2024-07-26 --data "$dir/chat.jsonl" --steps 1 --seq 16 --out "$dir/bad.lora" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && [ ! -e "$dir/bad.lora" ] && grep -q "go with --chat" "$dir/err"
check $? "train --date without --chat is refused: $(cat "$dir/err")"
for i in 1 2 3 4 5 6 7 8; do printf '{"messages": [{"role": "user", "content": "hi"}]}\nnot json\n'; done > "$dir/bad.jsonl"
$N train --init "$dir/lc.ngpt" --lora r=2 --chat --data "$dir/bad.jsonl" --steps 1 --seq 16 --out "$dir/bad.lora" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && [ ! -e "$dir/bad.lora" ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "line 2 of the data is not a JSON object" "$dir/err"
check $? "train --chat on a line that is not a conversation: one line, nothing written: $(cat "$dir/err")"
printf '{"eos_token": "<|endoftext|>", "chat_template": "{{ bos_token }}<|start_header_id|>"}' > "$dir/l3.json"
$N import "$dir/llama_chat" --tokenizer-config "$dir/l3.json" --out "$dir/lc3.ngpt" > "$dir/out" 2> "$dir/err" &&
    grep -q "^  end token: 299 <|endoftext|>$" "$dir/out" &&
    grep -q "^  chat: the model's chat template (ngpt chat renders it" "$dir/out" &&
    printf '[{"role": "user", "content": "hi"}]' > "$dir/conv.json" &&
    [ "$($N chat --model "$dir/lc3.ngpt" --render "$dir/conv.json" 2>> "$dir/err")" = "<|start_header_id|>" ]
check $? "--tokenizer-config with another template, rendered: $(cat "$dir/out" "$dir/err")"
printf '{"eos_token": "<|im_end|>", "chat_template": "{%% call x() %%}{%% endcall %%}"}' > "$dir/call.json"
$N import "$dir/llama_chat" --tokenizer-config "$dir/call.json" --out "$dir/lcc.ngpt" > "$dir/out" 2> "$dir/err" &&
    grep -q "^  chat: the model's chat template is kept, but ngpt cannot render it (.*\"call\".*); ngpt chat needs --template chatml or plain$" "$dir/out"
check $? "a template outside the subset is kept and reported: $(cat "$dir/out" "$dir/err")"
printf '{"eos_token": "<|im_end|>", "bos_token": "<|im_start|>", "add_bos_token": true}' > "$dir/bos.json"
$N import "$dir/llama_chat" --tokenizer-config "$dir/bos.json" --out "$dir/lcb.ngpt" > "$dir/out" 2> "$dir/err" &&
    grep -q "^  BOS: 297 <|im_start|> (prompts begin with it)$" "$dir/out" &&
    $N info "$dir/lcb.ngpt" | grep -q "BOS 297, end 298"
check $? "add_bos_token=true: prompts begin with bos_token: $(cat "$dir/out" "$dir/err")"
printf '{"bos_token": "<s>", "add_bos_token": true}' > "$dir/bos.json"
$N import "$dir/llama_chat" --tokenizer-config "$dir/bos.json" --out "$dir/lcb2.ngpt" > "$dir/out" 2> "$dir/err"
[ $? -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q 'bos_token "<s>" is not a special token' "$dir/err" && [ ! -e "$dir/lcb2.ngpt" ]
check $? "add_bos_token=true with a bos_token the tokenizer lacks: refused by name, nothing written: $(cat "$dir/err")"
$N import "$dir/llama" --out "$dir/lq.ngpt" --weights q8 > /dev/null 2> "$dir/err" &&
    $N quantize "$dir/l.ngpt" "$dir/lq2.ngpt" > /dev/null 2>&1 && cmp -s "$dir/lq.ngpt" "$dir/lq2.ngpt"
check $? "Llama: import --weights q8 writes ngpt quantize's bytes: $(cat "$dir/err")"
sed 's/"rope_scaling": null/"rope_scaling": {"rope_type": "yarn", "factor": 4.0}/' \
    "$dir/llama/config.json" > "$dir/scaled.json"
$N import "$dir/llama" --config "$dir/scaled.json" --out "$dir/bad.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "^ngpt import: .*rope_scaling" "$dir/err" &&
    [ ! -e "$dir/bad.ngpt" ]
check $? "Llama with rope scaling: refused by name, nothing written: $(cat "$dir/err")"

# --context: a shorter T (learned positions: the first rows of wpe; RoPE:
# no table); what fits generates the same text; a longer one is refused
for m in gpt2 llama; do
    $N import "$dir/$m" --out "$dir/${m}_full.ngpt" > /dev/null 2>&1 &&
        $N import "$dir/$m" --out "$dir/${m}_16.ngpt" --context 16 > "$dir/out" 2> "$dir/err" &&
        grep -q " T=16 " "$dir/out" &&
        $N generate --model "$dir/${m}_full.ngpt" --prompt "the" -n 10 --temp 0 > "$dir/g1" 2> /dev/null &&
        $N generate --model "$dir/${m}_16.ngpt" --prompt "the" -n 10 --temp 0 > "$dir/g2" 2> /dev/null &&
        cmp -s "$dir/g1" "$dir/g2"
    check $? "$m: import --context 16 generates what the full context does: $(cat "$dir/out" "$dir/err")"
done
$N import "$dir/llama" --out "$dir/bad.ngpt" --context 33 > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "context 33 is longer than the 32 positions" "$dir/err" && [ ! -e "$dir/bad.ngpt" ]
check $? "--context past config.json's: refused: $(cat "$dir/err")"

# errors: one line, exit 1, nothing written
head -c 1000 "$hf/model.safetensors" > "$dir/cut.safetensors"
$N import "$hf" --safetensors "$dir/cut.safetensors" --out "$dir/bad.ngpt" > /dev/null 2> "$dir/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "^ngpt import: .*cut.safetensors.*truncated" "$dir/err" &&
    [ ! -e "$dir/bad.ngpt" ]
check $? "a truncated file: exit 1 ($rc), one line, nothing written: $(cat "$dir/err")"
$N import "$dir/nowhere" --out "$dir/bad.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "^ngpt import: " "$dir/err" && [ ! -e "$dir/bad.ngpt" ]
check $? "a missing directory: $(cat "$dir/err")"
$N import "$hf" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q -- "--out" "$dir/err"
check $? "no --out: exit 2: $(cat "$dir/err")"
$N import "$hf" --out "$dir/x.ngpt" --weights q3 > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "f32, q8 or q4" "$dir/err"
check $? "--weights q3: exit 2: $(cat "$dir/err")"
$N import --help | grep -q "^usage: ngpt import"
check $? "import --help"
$N --help | grep -q "^  import "
check $? "ngpt --help lists import"
# llama2.c's files (build/tests/test_llama2c --write): one command, then generate
$RUN_ENV "$B/tests/test_llama2c" --write "$dir/l2c" 2> "$dir/err"
check $? "test_llama2c --write: $(cat "$dir/err")"
l2c=$dir/l2c
$N import --llama2c "$l2c/model.bin" --tokenizer "$l2c/tokenizer.bin" --out "$dir/l.ngpt" > "$dir/out" 2> "$dir/err" &&
    grep -q "norm_type=rms mlp=swiglu mlp_bias=0 kv_heads=2" "$dir/out"
check $? "ngpt import --llama2c: $(cat "$dir/out" "$dir/err")"
$N generate --model "$dir/l.ngpt" --prompt "abc" -n 4 --temp 0 > /dev/null 2> "$dir/err"
check $? "generate on the llama2.c import: $(cat "$dir/err")"
$N train --init "$dir/l.ngpt" $FT --out "$dir/l2ft.ngpt" > "$dir/out" 2> "$dir/err" &&
    $N generate --model "$dir/l2ft.ngpt" --prompt "abc" -n 4 --temp 0 > /dev/null 2>> "$dir/err" &&
    $N eval --model "$dir/l2ft.ngpt" --data "$dir/ft.txt" --batches 2 > "$dir/out" 2>> "$dir/err"
check $? "llama2.c: train --init fine-tunes the import (scored tokenizer), generate and eval: $(cat "$dir/out" "$dir/err")"
$N info "$dir/l.ngpt" > "$dir/out" 2> "$dir/err" && grep -q "^tokenizer:   scored (llama2.c's), 274 tokens (BOS 1, end 2)" "$dir/out" &&
    $N tokenizer info "$dir/l.ngpt" > "$dir/out" 2> "$dir/err" && grep -q '^special:       1 "\\n<s>\\n" (begins a prompt)' "$dir/out"
check $? "info and tokenizer info show the scored tokenizer: $(cat "$dir/out" "$dir/err")"
$N tokenizer encode --tokenizer "$dir/l.ngpt" --text "babc" > "$dir/out" 2> "$dir/err" && [ "$(cat "$dir/out")" = "259 261 266 262" ]
check $? "tokenizer encode: run.c's ids: $(cat "$dir/out" "$dir/err")"
$N tokenizer encode --tokenizer "$dir/l.ngpt" --text "bbb" > "$dir/out" 2> "$dir/err" && [ "$(cat "$dir/out")" = "259 261 261 261" ]
check $? "tokenizer encode: the dummy \" \" makes one id more than the text's bytes: $(cat "$dir/out" "$dir/err")"
$N info "$l2c/model.bin" > "$dir/out" 2> "$dir/err" && grep -q "^parameters: " "$dir/out"
check $? "info sizes a model.bin: $(cat "$dir/out" "$dir/err")"
head -c 100 "$l2c/model.bin" > "$dir/cut.bin"
$N import --llama2c "$dir/cut.bin" --tokenizer "$l2c/tokenizer.bin" --out "$dir/bad.ngpt" > /dev/null 2> "$dir/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "^ngpt import: .*cut.bin is 100 bytes but its version-0 header" "$dir/err" &&
    [ ! -e "$dir/bad.ngpt" ]
check $? "a truncated model.bin: exit 1 ($rc), one line, nothing written: $(cat "$dir/err")"
$N import --llama2c "$l2c/model.bin" --out "$dir/bad.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q -- "--tokenizer" "$dir/err"
check $? "--llama2c without --tokenizer: usage: $(cat "$dir/err")"
$N import "$hf" --llama2c "$l2c/model.bin" --tokenizer "$l2c/tokenizer.bin" --out "$dir/bad.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && [ ! -e "$dir/bad.ngpt" ]
check $? "--llama2c with a directory: usage: $(cat "$dir/err")"

summary test_cli_import
