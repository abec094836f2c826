#!/bin/sh
# test_cli_session.sh — `--session FILE` across processes: generate -n 40
# saving a session, then -n 60 in a new process resuming it, writes exactly
# the bytes of one -n 100 run (float32, 8-bit and BPE models, argmax); the
# resumed run prefills nothing the file holds; a session of another model,
# a damaged or truncated one, is refused with one line and left as it was;
# chat resumes a conversation and its reply equals the one the whole
# conversation gives without a session.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
SHAPE="--config T=128 --config C=32 --config L=2 --config H=4 --config d_ff=64"
$N init --out "$dir/f.ngpt" --seed 7 $SHAPE > /dev/null 2>&1
check $? "ngpt init"
$N quantize "$dir/f.ngpt" "$dir/q.ngpt" > /dev/null 2>&1
check $? "ngpt quantize"
printf 'the cat sat on the mat, the cat ate the rat; a bat sat on a hat\n' > "$dir/t.txt"
$N tokenizer train --data "$dir/t.txt" --vocab 280 --out "$dir/t.tok" > /dev/null 2>&1 &&
    $N init --out "$dir/b.ngpt" --seed 7 $SHAPE --tokenizer "$dir/t.tok" > /dev/null 2>&1
check $? "a BPE model"

for m in f q b; do
    gen="generate --model $dir/$m.ngpt --temp 0"
    $N $gen --prompt "the cat" -n 100 > "$dir/all" 2> /dev/null
    check $? "[$m] generate -n 100"
    $N $gen --prompt "the cat" -n 40 --session "$dir/$m.sess" > "$dir/a" 2> "$dir/a.err"
    check $? "[$m] generate -n 40 --session: $(cat "$dir/a.err")"
    $N $gen -n 60 --session "$dir/$m.sess" > "$dir/b" 2> "$dir/b.err"
    check $? "[$m] generate -n 60 --session: $(cat "$dir/b.err")"
    cat "$dir/a" "$dir/b" | cmp -s - "$dir/all"
    check $? "[$m] 40 + 60 tokens across two processes differ from 100 in one go"
    grep -q "tokens restored" "$dir/b.err" && ! grep -q ": 0 tokens restored" "$dir/b.err"
    check $? "[$m] the second run restored the session: $(cat "$dir/b.err")"
done

# refusals: one line naming the file, the file unchanged, nothing generated
cp "$dir/f.sess" "$dir/keep.sess"
$N init --out "$dir/g.ngpt" --seed 8 $SHAPE > /dev/null 2>&1
$N generate --model "$dir/g.ngpt" -n 5 --session "$dir/f.sess" > "$dir/o" 2> "$dir/e"
[ $? -ne 0 ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && grep -q "saved by another model" "$dir/e" &&
    cmp -s "$dir/f.sess" "$dir/keep.sess" && [ ! -s "$dir/o" ]
check $? "a session of another model is refused in one line: $(cat "$dir/e")"
$N generate --model "$dir/q.ngpt" -n 5 --session "$dir/f.sess" > "$dir/o" 2> "$dir/e"
[ $? -ne 0 ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && grep -q "a model of another config" "$dir/e" &&
    cmp -s "$dir/f.sess" "$dir/keep.sess" && [ ! -s "$dir/o" ]
check $? "a session of the float32 model is refused by the 8-bit one: $(cat "$dir/e")"
head -c 2000 "$dir/keep.sess" > "$dir/cut.sess"
$N generate --model "$dir/f.ngpt" -n 5 --session "$dir/cut.sess" > /dev/null 2> "$dir/e"
[ $? -ne 0 ] && [ "$(wc -l < "$dir/e")" -eq 1 ] && grep -q "damaged or truncated" "$dir/e" &&
    [ "$(wc -c < "$dir/cut.sess")" -eq 2000 ]
check $? "a truncated session is refused in one line: $(cat "$dir/e")"
printf 'X' | dd of="$dir/f.sess" bs=1 seek=300 conv=notrunc 2> /dev/null
$N generate --model "$dir/f.ngpt" -n 5 --session "$dir/f.sess" > /dev/null 2> "$dir/e"
[ $? -ne 0 ] && grep -q "damaged or truncated" "$dir/e"
check $? "a damaged session is refused: $(cat "$dir/e")"

# chat: two turns in one run == one turn, then one more resumed from the session
chat="chat --model $dir/f.ngpt --temp 0 -n 20 --system brief"
printf 'hi\nhow are you\n' | $N $chat > "$dir/both" 2> /dev/null
check $? "chat, two turns"
printf 'hi\n' | $N $chat --session "$dir/c.sess" > "$dir/one" 2> /dev/null
check $? "chat, one turn saved"
printf 'how are you\n' | $N $chat --session "$dir/c.sess" > "$dir/two" 2> "$dir/two.err"
check $? "chat, one turn resumed: $(cat "$dir/two.err")"
cat "$dir/one" "$dir/two" | cmp -s - "$dir/both"
check $? "a resumed chat answers as the uninterrupted one: $(od -c "$dir/both" | head -3) / $(cat "$dir/one" "$dir/two" | od -c | head -3)"
summary test_cli_session
