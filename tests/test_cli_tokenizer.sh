#!/bin/sh
# test_cli_tokenizer.sh — `ngpt tokenizer` end to end: train on a text with
# each pre-tokenizer, encode and decode it back byte for byte (NUL and bytes
# that are not UTF-8 included), the same tokenizer file from every build
# (its checksum is a golden constant), info, and the errors: bad usage (exit
# 2), bad files and ids out of range (exit 1) with messages that name them.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
i=0
while [ $i -lt 60 ]; do
    printf 'the cat sat on the mat; the dog sat on the log. %d cats, %d dogs.\n' $i $((i * 7)) >> "$dir/a.txt"
    printf 'int main(void) { return %d; }  // caf\303\251 \346\227\245\n' $i >> "$dir/b.txt"
    i=$((i + 1))
done
printf 'bytes: \000\377\300\200 end\n' > "$dir/odd.bin"

$N tokenizer train --data "$dir/a.txt" --data "$dir/b.txt" --vocab 340 --out "$dir/t.tok" 2> "$dir/err"
check $? "train: $(cat "$dir/err")"
grep -q "tokenizer train: 340 tokens (82 merges) from " "$dir/err"
check $? "train says what it made: $(cat "$dir/err")"
$N tokenizer info "$dir/t.tok" > "$dir/info" 2>&1
check $? "info: $(cat "$dir/info")"
grep -q "^checksum: *3f8a9f462b9dc3ae$" "$dir/info"
check $? "the same tokenizer on every build (golden checksum): $(grep checksum "$dir/info")"
grep -q '^special: *338 "<|endoftext|>" (end of text)$' "$dir/info" &&
    grep -q '^special: *339 "<|pad|>" (padding)$' "$dir/info" && grep -q "^pre-tokenizer: gpt2$" "$dir/info"
check $? "info names the special tokens and the pre-tokenizer: $(cat "$dir/info")"
$N tokenizer info "$dir/t.tok" --tokens | grep -q '^257	"'
check $? "info --tokens lists the tokens"

for split in gpt2 lines none; do
    $N tokenizer train --data "$dir/a.txt" --data "$dir/b.txt" --vocab 300 --split $split --no-pad \
        --out "$dir/$split.tok" 2> "$dir/err"
    check $? "train --split $split: $(cat "$dir/err")"
    cat "$dir/a.txt" "$dir/odd.bin" "$dir/b.txt" > "$dir/all.bin"
    $N tokenizer encode --tokenizer "$dir/$split.tok" --in "$dir/all.bin" --out "$dir/ids" --stats 2> "$dir/err"
    check $? "encode ($split): $(cat "$dir/err")"
    grep -q "bytes per token" "$dir/err"
    check $? "encode --stats ($split): $(cat "$dir/err")"
    $N tokenizer decode --tokenizer "$dir/$split.tok" --in "$dir/ids" --out "$dir/back.bin"
    cmp -s "$dir/all.bin" "$dir/back.bin"
    check $? "decode(encode(x)) == x with NUL and invalid UTF-8 ($split)"
done
ids=$($N tokenizer encode --tokenizer "$dir/t.tok" --text 'the cat\n')
[ -n "$ids" ] && [ "$(echo "$ids" | wc -w)" -lt 8 ]
check $? "encode --text merges (\"the cat\\n\" -> $ids)"
out=$($N tokenizer decode --tokenizer "$dir/t.tok" --ids "$ids")
[ "$out" = "the cat" ]
check $? "decode --ids: \"$out\""
echo "$ids" | $N tokenizer decode --tokenizer "$dir/t.tok" > "$dir/o"
printf 'the cat\n' | cmp -s - "$dir/o"
check $? "decode reads standard input"
printf 'the cat\n' | $N tokenizer encode --tokenizer "$dir/t.tok" > "$dir/o"
[ "$(cat "$dir/o")" = "$ids" ]
check $? "encode reads standard input"
[ "$($N tokenizer decode --tokenizer "$dir/t.tok" --ids "338 339")" = "<|endoftext|><|pad|>" ]
check $? "special tokens decode to their names"

# errors
$N tokenizer > /dev/null 2>&1; [ $? -eq 2 ]
check $? "no command: usage"
$N tokenizer frob 2> "$dir/err"; [ $? -eq 2 ] && grep -q 'unknown command "frob"' "$dir/err"
check $? "unknown command: $(cat "$dir/err")"
$N tokenizer train --data "$dir/a.txt" 2> "$dir/err"; [ $? -eq 2 ] && grep -q -- "--out FILE is required" "$dir/err"
check $? "train without --out: $(cat "$dir/err")"
$N tokenizer train --data "$dir/a.txt" --vocab 100 --out "$dir/x.tok" 2> "$dir/err"; [ $? -eq 2 ] && grep -q -- "--vocab" "$dir/err"
check $? "train --vocab 100: $(cat "$dir/err")"
$N tokenizer train --data "$dir/a.txt" --split words --out "$dir/x.tok" 2> "$dir/err"; [ $? -eq 2 ] && grep -q "gpt2, lines, none, digits, llama3 or qwen2" "$dir/err"
check $? "train --split words: $(cat "$dir/err")"
$N tokenizer train --data "$dir/missing.txt" --out "$dir/x.tok" 2> "$dir/err"; [ $? -eq 1 ] && grep -q "missing.txt" "$dir/err"
check $? "train on a missing file: $(cat "$dir/err")"
$N tokenizer encode --text x 2> "$dir/err"; [ $? -eq 2 ] && grep -q -- "--tokenizer FILE is required" "$dir/err"
check $? "encode without --tokenizer: $(cat "$dir/err")"
$N tokenizer encode --tokenizer "$dir/a.txt" --text x 2> "$dir/err"; [ $? -eq 1 ] &&
    grep -q "^ngpt tokenizer encode: .*a.txt is not an ngpt tokenizer" "$dir/err"
check $? "encode with a text file as tokenizer: $(cat "$dir/err")"
head -c 200 "$dir/t.tok" > "$dir/short.tok"
$N tokenizer info "$dir/short.tok" 2> "$dir/err"; [ $? -eq 1 ] && grep -q "truncated" "$dir/err"
check $? "a truncated tokenizer: $(cat "$dir/err")"
$N tokenizer decode --tokenizer "$dir/t.tok" --ids "1 2 340" 2> "$dir/err"; [ $? -eq 1 ] &&
    grep -q "id 340 at index 2 is outside the vocabulary (0..339)" "$dir/err"
check $? "decode an id out of range: $(cat "$dir/err")"
$N tokenizer decode --tokenizer "$dir/t.tok" --ids "1 two" 2> "$dir/err"; [ $? -eq 2 ] && grep -q '"two" is not a token id' "$dir/err"
check $? "decode a word: $(cat "$dir/err")"
$N tokenizer import-gpt2 --encoder "$dir/a.txt" --vocab "$dir/b.txt" --out "$dir/g.tok" 2> "$dir/err"
[ $? -eq 1 ] && grep -q "a.txt is not GPT-2's encoder.json" "$dir/err"
check $? "import-gpt2 of other files: $(cat "$dir/err")"
$N tokenizer import-gpt2 --encoder "$dir/a.txt" 2> "$dir/err"; [ $? -eq 2 ]
check $? "import-gpt2 without --vocab and --out: usage"
# a SmolLM2-shaped tokenizer.json (the fuzz seed without its mode byte): specials 0..2, 'Q' and 0xFF absent
tail -c +2 "$(dirname "$0")/../fuzz/corpus/import/tokenizer_smollm2" > "$dir/tokenizer.json"
$N tokenizer import-hf --json "$dir/tokenizer.json" --out "$dir/s.tok" 2> "$dir/err"
check $? "import-hf of a SmolLM2-shaped tokenizer.json: $(cat "$dir/err")"
$N tokenizer encode --tokenizer "$dir/s.tok" --text "hello world 12 Q" > "$dir/ids" 2>&1 &&
    [ "$(cat "$dir/ids")" = "260 261 113 116 110 102 35 52 53 35" ]
check $? "the file's ids, digits apart, Q dropped (as tools/hf_bpe_reference.py): $(cat "$dir/ids")"
$N tokenizer info "$dir/s.tok" > "$dir/info" 2>&1 && grep -q '^special: *2 "<|im_end|>"$' "$dir/info" &&
    grep -q '^special: *0 "<|endoftext|>" (end of text)$' "$dir/info" && grep -q "^pre-tokenizer: digits$" "$dir/info"
check $? "info lists the specials at their ids: $(cat "$dir/info")"
printf '{"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "Whitespace"}}' > "$dir/ws.json"
$N tokenizer import-hf --json "$dir/ws.json" --out "$dir/w.tok" 2> "$dir/err"; [ $? -eq 1 ] &&
    grep -q 'pre_tokenizer "Whitespace"' "$dir/err"
check $? "import-hf refuses another pre-tokenizer by name: $(cat "$dir/err")"
$N tokenizer encode --help | grep -q "usage: ngpt tokenizer encode"
check $? "encode --help"
summary test_cli_tokenizer
