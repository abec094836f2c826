#!/bin/sh
# test_cli_lora_peft.sh — `ngpt lora` end to end on a small GPT-2 directory and a
# PEFT adapter for it (written by build/tests/test_peft --write): import
# says what it read; export then import gives the same adapter file byte for
# byte (also when imported on the model's 8-bit file); merge writes a model
# that generates, whose weights moved, and at scale 0 the model's own
# weights; a quantized model is refused with the line that says what to
# do; a bad directory is one line and writes nothing; usage errors exit 2;
# every subcommand has --help.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

$RUN_ENV "$B/tests/test_peft" --write "$dir" 2> "$dir/err"
check $? "test_peft --write: $(cat "$dir/err")"
$N import "$dir/gpt2" --out "$dir/m.ngpt" > /dev/null 2> "$dir/err"
check $? "ngpt import: $(cat "$dir/err")"

$N lora import "$dir/m.ngpt" "$dir/peft" "$dir/a.lora" > "$dir/out" 2> "$dir/err" &&
    grep -q "^wrote $dir/a.lora: r=8 alpha=12 from $dir/peft" "$dir/out"
check $? "lora import: $(cat "$dir/out" "$dir/err")"
$N lora export "$dir/m.ngpt" "$dir/a.lora" "$dir/x" > "$dir/out" 2> "$dir/err" &&
    [ -s "$dir/x/adapter_config.json" ] && [ -s "$dir/x/adapter_model.safetensors" ] &&
    $N lora import "$dir/m.ngpt" "$dir/x" "$dir/b.lora" > /dev/null 2>> "$dir/err" &&
    cmp -s "$dir/a.lora" "$dir/b.lora"
check $? "export then import: the same adapter file: $(cat "$dir/err")"

params() { $N checksum "$1" 2> /dev/null | sed -n 's/^params=//p'; }
$N lora merge "$dir/m.ngpt" "$dir/a.lora" "$dir/merged.ngpt" > "$dir/out" 2> "$dir/err" &&
    grep -q "^wrote $dir/merged.ngpt: 1 adapter merged into $dir/m.ngpt" "$dir/out"
check $? "lora merge: $(cat "$dir/out" "$dir/err")"
$N generate --model "$dir/merged.ngpt" --prompt "the" -n 4 --temp 0 > /dev/null 2> "$dir/err"
check $? "the merged model generates: $(cat "$dir/err")"
base=$(params "$dir/m.ngpt")
[ -n "$base" ] && [ "$(params "$dir/merged.ngpt")" != "$base" ]
check $? "the merged weights moved"
$N lora merge "$dir/m.ngpt" "$dir/a.lora:0" "$dir/a.lora:0" "$dir/zero.ngpt" > /dev/null 2>&1 &&
    [ "$(params "$dir/zero.ngpt")" = "$base" ]
check $? "two adapters merged at scale 0: the model's weights"

$N quantize "$dir/m.ngpt" "$dir/q8.ngpt" > /dev/null 2>&1
$N lora merge "$dir/q8.ngpt" "$dir/a.lora" "$dir/y.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "float32 file, then ngpt quantize" "$dir/err" &&
    [ ! -e "$dir/y.ngpt" ]
check $? "a quantized model is refused, one line: $(cat "$dir/err")"
$N lora import "$dir/q8.ngpt" "$dir/peft" "$dir/q.lora" > /dev/null 2> "$dir/err" &&
    $N lora export "$dir/m.ngpt" "$dir/q.lora" "$dir/z" > /dev/null 2>> "$dir/err" &&
    $N lora import "$dir/m.ngpt" "$dir/z" "$dir/z.lora" > /dev/null 2>> "$dir/err" &&
    cmp -s "$dir/a.lora" "$dir/z.lora"
check $? "imported on the 8-bit file, the adapter is the float32 model's: $(cat "$dir/err")"
$N lora import "$dir/m.ngpt" "$dir/nonexistent" "$dir/c.lora" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "^ngpt lora import: .*adapter_config.json" "$dir/err" &&
    [ ! -e "$dir/c.lora" ]
check $? "no adapter_config.json: one line, nothing written: $(cat "$dir/err")"

for args in "lora" "lora frob" "lora import $dir/m.ngpt" "lora export --x a b c" "lora merge $dir/m.ngpt out" \
            "lora merge $dir/m.ngpt $dir/a.lora:inf $dir/o.ngpt"; do
    $N $args > /dev/null 2>&1
    [ $? -eq 2 ]
    check $? "ngpt $args: usage error (exit 2)"
done
for sub in "" import export merge; do
    $N lora $sub --help > "$dir/help" 2>&1 && grep -q "^usage: ngpt lora" "$dir/help"
    check $? "ngpt lora $sub --help"
done

summary test_cli_lora_peft
