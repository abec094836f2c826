#!/bin/sh
# valgrind.sh NGPT — runs the CLI's main paths under valgrind (memcheck):
# init (config, arena, weights, atomic save), info and checksum (verified
# load, forward), a short train with evaluation, checkpoints and a resume,
# eval, generate (sampling, beam search, past the context exact and shifted,
# a prompt longer than the context), trace, tokenizer training with each
# pre-tokenizer, encoding and decoding, a model of a tokenizer's tokens
# (train --vocab, resume, eval, generate with a stop sequence, chat, trace,
# checksum), ngpt import of a Hugging Face directory and of llama2.c files, some with 2
# threads; the arena is
# not cleared at init, so this also checks that nothing reads arena memory
# before writing it. Any memory error or leak
# fails: --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect.
set -e
ngpt=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(mktemp -d "${TMPDIR:-/tmp}/ngpt-valgrind-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
for i in 1 2 3 4 5 6; do
    echo "The quick brown fox jumps over the lazy dog. user: hello assistant: hi there $i"
done > data.txt
vg="valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect"
tiny="--config T=16 --config C=16 --config L=2 --config H=2 --config d_ff=32"
run() {
    echo "valgrind: ngpt $*"
    $vg "$ngpt" "$@" > out.txt 2> err.txt || { cat err.txt; echo "valgrind: FAILED: ngpt $*"; exit 1; }
}
run init --out m.ngpt --seed 7 $tiny
run info m.ngpt
run checksum m.ngpt --prompt "hello"
run train --data data.txt --steps 3 --batch 2 --eval-every 2 --eval-batches 1 --holdout 0.2 \
    --out t.ngpt --keep-best best.ngpt --threads 2 $tiny
run train --data data.txt --resume t.ngpt --steps 4 --batch 2 --holdout 0.2 --out t.ngpt
run eval --model t.ngpt --data data.txt --batches 1 --batch 2 --holdout 0.2
run generate --model t.ngpt --prompt "The quick" -n 8 --temp 0.8 --top-k 10 --seed 1 --threads 2
run generate --model t.ngpt --prompt "ab" -n 4 --beam 2
run generate --model t.ngpt --prompt "ab" -n 20 --temp 0
run generate --model t.ngpt --prompt "The quick brown fox jumps" -n 40 --context shift --seed 2
run trace --model t.ngpt --prompt "abc" --text
run tokenizer train --data data.txt --vocab 300 --out t.tok
run tokenizer train --data data.txt --vocab 300 --split none --out n.tok
run tokenizer encode --tokenizer n.tok --in data.txt --out ids.txt
run tokenizer decode --tokenizer n.tok --in ids.txt
run tokenizer info t.tok --tokens
run train --data data.txt --vocab 280 --steps 2 --batch 2 --eval-every 1 --eval-batches 1 \
    --holdout 0.3 --out b.ngpt $tiny
run train --data data.txt --resume b.ngpt --steps 3 --batch 2 --holdout 0.3 --out b.ngpt
run eval --model b.ngpt --data data.txt --batches 1 --batch 2 --holdout 0.3
run generate --model b.ngpt --prompt "The quick" -n 12 --stop "o" --seed 3
echo "hello" | run chat --model b.ngpt -n 6
run trace --model b.ngpt --prompt "user: hello" --text
run checksum b.ngpt --prompt "the fox"
# ngpt import of a small Hugging Face directory (written by the test
# program beside the tool, when it is built): safetensors mapped, float32
# and 8-bit streamed into checkpoints, a refused file
writer=$(dirname "$ngpt")/tests/test_import
runs=23
if [ -x "$writer" ]; then
    "$writer" --write "$dir"
    run import gpt2 --out i.ngpt
    run import gpt2_bf16 --out q.ngpt --weights q8
    head -c 3000 gpt2/model.safetensors > cut.safetensors
    echo "valgrind: ngpt import (a truncated file: refused, exit 1; memory errors: 99)"
    rc=0
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        "$ngpt" import gpt2 --safetensors cut.safetensors --out x.ngpt > out.txt 2> err.txt || rc=$?
    [ $rc -eq 1 ] && [ ! -e x.ngpt ] || { cat err.txt; echo "valgrind: FAILED: import of a cut file"; exit 1; }
    runs=26
fi
# llama2.c's files (test_llama2c --write): imported, generated from (BOS,
# the scored encoder), its tokenizer encoding
writer=$(dirname "$ngpt")/tests/test_llama2c
if [ -x "$writer" ]; then
    "$writer" --write "$dir/l2c"
    run import --llama2c l2c/model.bin --tokenizer l2c/tokenizer.bin --out l.ngpt --weights q8
    run generate --model l.ngpt --prompt "babc é 日本" -n 4 --temp 0
    run tokenizer encode --tokenizer l.ngpt --text "ccc xx é"
    runs=$((runs + 3))
fi
echo "valgrind: clean ($runs runs)"
