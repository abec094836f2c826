#!/bin/sh
# test_cli_chat_template.sh — `ngpt chat` with ChatML on a tiny model whose
# tokenizer has <|im_start|> (261) and <|im_end|> (262) (written by
# build/tests/test_chat --write; trained a little on plain text): --verbose shows each turn's prompt ids,
# which must be exactly the template (the markers as the special ids, the
# rest as `ngpt tokenizer encode` encodes it, typed markers as plain text),
# SmolLM2's system message by default, the template chosen from the
# tokenizer, turn 2 prefilling only what is new, a --session resuming the
# same conversation, and --template chatml refused without the markers; a model
# imported with SmolLM2's chat template renders it (--render, --ids,
# --no-generation-prompt), as --template chatml and the template's file do; a Jinja
# file; refusals by name; and ten turns each prefilling only what is new.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

i=0                 # text to train on, so that replies depend on what came before
while [ $i -lt 40 ]; do
    echo "the quick brown fox jumps over the lazy dog, and the cat sat on the mat; line $i" >> "$dir/t.txt"
    i=$((i + 1))
done
$RUN_ENV "$B/tests/test_chat" --write "$dir" > "$dir/err" 2>&1 &&
    $N train --data "$dir/t.txt" --tokenizer "$dir/chatml.tok" --config T=128 --config C=32 \
        --config L=1 --config H=2 --config d_ff=64 --config dropout=0 --batch 8 --seq 64 \
        --steps 150 --warmup 5 --lr 1e-2 --eval-every 0 --eval-batches 1 \
        --out "$dir/m.ngpt" > /dev/null 2>> "$dir/err" &&
    $N init --out "$dir/plain.ngpt" --tokenizer "$dir/plain.tok" --config T=128 --config C=32 \
        --config L=1 --config H=2 --config d_ff=64 > /dev/null 2>> "$dir/err" &&
    $N init --out "$dir/bytes.ngpt" --config T=64 --config C=32 --config L=1 --config H=2 \
        --config d_ff=64 > /dev/null 2>> "$dir/err"
check $? "the models: $(cat "$dir/err")"
S=261 E=262
enc() { $N tokenizer encode --tokenizer "$dir/chatml.tok" --text "$1"; }
NL=$(enc '\n')
# the ids --verbose prints for turn $1 of stderr file $2
prompt_of() { sed -n "s/^ngpt chat: turn $1 prompt (+[0-9]*): //p" "$2"; }

# two turns: system, user, generation prompt; then the reply closed, user, prompt
printf 'hi\nyou <|im_end|> there\n' | $N chat --model "$dir/m.ngpt" --template chatml \
    --system "be brief" --temp 0 -n 3 --verbose > "$dir/out" 2> "$dir/err"
check $? "chat --template chatml: $(cat "$dir/err")"
want1="$S $(enc 'system\nbe brief') $E $NL $S $(enc 'user\nhi') $E $NL $S $(enc 'assistant\n')"
[ "$(prompt_of 1 "$dir/err")" = "$want1" ]
check $? "turn 1's prompt is the template: $(prompt_of 1 "$dir/err") (want $want1)"
want2="$E $NL $S $(enc 'user\nyou <|im_end|> there') $E $NL $S $(enc 'assistant\n')"
[ "$(prompt_of 2 "$dir/err")" = "$want2" ]
check $? "turn 2 closes the reply and adds the user's turn: $(prompt_of 2 "$dir/err") (want $want2)"
[ "$(prompt_of 2 "$dir/err" | tr ' ' '\n' | grep -c -x -e $S -e $E)" -eq 4 ]
check $? "the typed <|im_end|> is plain text, not the marker"
n2=$(echo "$want2" | wc -w)
grep -q "^ngpt chat: turn 2 prefilled $((n2 + 1)) of " "$dir/err"
check $? "turn 2 prefills its $n2 ids and the reply's last token, no earlier turn: $(cat "$dir/err")"

# the template comes from the tokenizer; without --system, SmolLM2's message
printf 'hi\n' | $N chat --model "$dir/m.ngpt" --temp 0 -n 1 --verbose > /dev/null 2> "$dir/err"
want="$S $(enc 'system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face') $E $NL $S $(enc 'user\nhi') $E $NL $S $(enc 'assistant\n')"
[ "$(prompt_of 1 "$dir/err")" = "$want" ]
check $? "chatml by default, with SmolLM2's system message: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/m.ngpt" --template plain --temp 0 -n 1 --verbose > /dev/null 2> "$dir/err"
[ "$(prompt_of 1 "$dir/err")" = "$(enc 'user: hi\nassistant: ')" ]
check $? "--template plain keeps the original's format: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/plain.ngpt" --temp 0 -n 1 --verbose > /dev/null 2> "$dir/err"
[ "$(prompt_of 1 "$dir/err")" = "$($N tokenizer encode --tokenizer "$dir/plain.tok" --text 'user: hi\nassistant: ')" ]
check $? "a tokenizer without the markers chats in the plain format: $(cat "$dir/err")"

# a session resumes the same conversation: no system turn again, nothing re-prefilled
# (sampled: turn i draws with seed S+i, so the resumed run's first turn takes S+1)
printf 'hi\nagain\n' | $N chat --model "$dir/m.ngpt" --system "be brief" --seed 5 -n 12 > "$dir/whole" 2> "$dir/err"
check $? "two turns in one run: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/m.ngpt" --system "be brief" --seed 5 -n 12 --session "$dir/s.sess" > "$dir/part1" 2> "$dir/err" &&
    printf 'again\n' | $N chat --model "$dir/m.ngpt" --seed 6 -n 12 --session "$dir/s.sess" \
        --system "ignored" --verbose > "$dir/part2" 2> "$dir/err"
check $? "two runs of one session: $(cat "$dir/err")"
cat "$dir/part1" "$dir/part2" | cmp -s - "$dir/whole"
check $? "the resumed session answers as the single run does"
want="$S $(enc 'user\nagain') $E $NL $S $(enc 'assistant\n')"
[ "$(prompt_of 1 "$dir/err")" = "$want" ] && grep -q "tokens restored" "$dir/err" &&
    grep -q "^ngpt chat: turn 1 prefilled $(echo "$want" | wc -w) of " "$dir/err"
check $? "the resumed turn adds and prefills only the new turn: $(cat "$dir/err")"

# a chat template: SmolLM2-Instruct's (tests/chat_template/smollm2.json) is what --template chatml
# renders, and what a model imported with it renders by default; --render prints it exactly
T=$(cd "$(dirname "$0")" && pwd)/chat_template
$RUN_ENV "$B/tests/test_import" --write "$dir" > "$dir/err" 2>&1 &&
    cp "$T/smollm2.json" "$dir/llama_chat/tokenizer_config.json" &&
    $N import "$dir/llama_chat" --out "$dir/smol.ngpt" > /dev/null 2>> "$dir/err"
check $? "a model imported with SmolLM2's template: $(cat "$dir/err")"
printf '[{"role": "user", "content": "hi <|im_end|>"}, {"role": "assistant", "content": "yo"}]' > "$dir/conv.json"
$N chat --model "$dir/smol.ngpt" --render "$dir/conv.json" > "$dir/model.txt" 2> "$dir/err" &&
    $N chat --model "$dir/smol.ngpt" --template chatml --render "$dir/conv.json" > "$dir/chatml.txt" 2>> "$dir/err" &&
    $N chat --model "$dir/smol.ngpt" --template "$T/smollm2.json" --render "$dir/conv.json" > "$dir/file.txt" 2>> "$dir/err"
check $? "--render: $(cat "$dir/err")"
printf '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nhi <|im_end|><|im_end|>\n<|im_start|>assistant\nyo<|im_end|>\n<|im_start|>assistant\n' > "$dir/want.txt"
cmp -s "$dir/model.txt" "$dir/want.txt" && cmp -s "$dir/chatml.txt" "$dir/want.txt" && cmp -s "$dir/file.txt" "$dir/want.txt"
check $? "the model's template, chatml and the file render SmolLM2's prompt: $(od -c "$dir/model.txt" | head -3)"
$N chat --model "$dir/smol.ngpt" --render "$dir/conv.json" --no-generation-prompt > "$dir/nogen.txt" 2> "$dir/err"
head -c -22 "$dir/want.txt" | cmp -s - "$dir/nogen.txt"
check $? "--no-generation-prompt: $(cat "$dir/err")"
$N chat --model "$dir/smol.ngpt" --render "$dir/conv.json" --ids > "$dir/ids.txt" 2> "$dir/err"
[ $? -eq 0 ] && [ "$(tr ' ' '\n' < "$dir/ids.txt" | grep -c -x -e 297 -e 298)" -eq 7 ]
check $? "--ids: the template's 7 markers are tokens, the typed one text: $(cat "$dir/ids.txt" "$dir/err")"
printf '{%% for m in messages %%}[{{ m.role | upper }}] {{ m.content | trim }}\n{%% endfor %%}' > "$dir/t.jinja"
$N chat --model "$dir/smol.ngpt" --template "$dir/t.jinja" --render "$dir/conv.json" > "$dir/out" 2> "$dir/err"
printf '[USER] hi <|im_end|>\n[ASSISTANT] yo\n' | cmp -s - "$dir/out"
check $? "--template a Jinja file: $(cat "$dir/out" "$dir/err")"
printf '{{ x | title }}' > "$dir/bad.jinja"
$N chat --model "$dir/smol.ngpt" --template "$dir/bad.jinja" --render "$dir/conv.json" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q 'line 1, column 8: the filter "title"' "$dir/err"
check $? "a template outside the subset is refused by name: $(cat "$dir/err")"
$N chat --model "$dir/m.ngpt" --template model --render "$dir/conv.json" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "carries no chat template" "$dir/err"
check $? "--template model without one: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/smol.ngpt" --ids > /dev/null 2> "$dir/err"
[ $? -eq 2 ]
check $? "--ids goes with --render: $(cat "$dir/err")"

# ten turns with SmolLM2's template on a model with room for them (T=1024; replies held
# to ASCII): each turn after the first prefills its new tokens and the reply's last token
$N init --out "$dir/t1024.ngpt" --tokenizer "$dir/chatml.tok" --config T=1024 --config C=32 \
    --config L=1 --config H=2 --config d_ff=64 > /dev/null 2> "$dir/err"
check $? "a T=1024 model: $(cat "$dir/err")"
ban=$(i=128; while [ $i -lt 256 ]; do printf '%d,' $i; i=$((i + 1)); done)260
i=1
while [ $i -le 10 ]; do echo "question number $i"; i=$((i + 1)); done |
    $N chat --model "$dir/t1024.ngpt" --template "$T/smollm2.json" --temp 0 -n 6 --ban "$ban" \
        --verbose > /dev/null 2> "$dir/err"
check $? "ten turns: $(tail -n 2 "$dir/err")"
new=$(sed -n 's/^ngpt chat: turn \([0-9]*\) prompt (+\([0-9]*\)).*/\2/p' "$dir/err" | tr '\n' ' ')
pre=$(sed -n 's/^ngpt chat: turn [0-9]* prefilled \([0-9]*\) of .*/\1/p' "$dir/err" | tr '\n' ' ')
ok=0 k=0
for p in $pre; do
    k=$((k + 1))
    n=$(echo $new | cut -d' ' -f$k)
    [ $k -eq 1 ] || [ "$p" -eq $((n + 1)) ] || ok=1
done
[ $k -eq 10 ] && [ $ok -eq 0 ]
check $? "each turn prefills its new tokens and one more: prefilled $pre, new $new"

# refusals
printf 'hi\n' | $N chat --model "$dir/plain.ngpt" --template chatml > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "ngpt chat: --template chatml: .*<|im_start|>" "$dir/err"
check $? "--template chatml without the markers names the missing one: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/bytes.ngpt" --template chatml > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "no tokenizer" "$dir/err"
check $? "--template chatml on a byte-level model: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/m.ngpt" --template llama > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "chatml, plain, model or a template file" "$dir/err"
check $? "an unknown template is a usage error: $(cat "$dir/err")"

summary test_cli_chat_template
