#!/bin/sh
# test_cli_chat_trace.sh — `ngpt chat` and `ngpt trace` end to end. A tiny
# model is trained (60 steps, deterministic on every build) on a dialogue
# where the assistant always answers "ok"; chat must then answer "ok" to each
# line and stop at the next role marker without printing it (on a terminal
# after a "> " marker, piped without). trace must draw
# every head, escape the prompt's bytes in the SVG, and print rows that are
# probability distributions. Bad usage gets the documented exit codes.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
train_ok_model "$dir/m.ngpt"
check $? "train the dialogue model: $(cat "$dir/train.log")"

# chat: one reply per stdin line, cut before "\nuser: " (never printed)
printf 'hi\nhi\n' | $N chat --model "$dir/m.ngpt" --temp 0 -n 20 > "$dir/chat.out" 2> "$dir/chat.err"
check $? "chat exit status: $(cat "$dir/chat.err")"
printf 'ok\nok\n' | cmp -s - "$dir/chat.out"
check $? "chat answers ok twice and stops at the role marker: $(od -c "$dir/chat.out" | head -3)"
# the conversation outgrows T=16 at once: 20 bytes, then 43 (one line per turn)
grep -q "the conversation is longer than the model's context (T=16 bytes): its first 4 bytes were dropped" "$dir/chat.err" &&
    grep -q "its first 27 bytes were dropped" "$dir/chat.err"
check $? "chat says how much of the conversation the model no longer sees: $(cat "$dir/chat.err")"
printf 'hi\n' | $N chat --model "$dir/m.ngpt" --system "be brief" --seed 3 -n 20 > "$dir/chat2.out" 2>&1
check $? "chat with --system"
printf 'hi\n' | $N chat --model "$dir/m.ngpt" --system "be brief" --seed 3 -n 20 > "$dir/chat3.out" 2>&1
cmp -s "$dir/chat2.out" "$dir/chat3.out"
check $? "chat: same seed, same reply"
# on a terminal (util-linux's script gives it one) chat says how it ends and
# marks each line it waits for with "> "; with stdin piped it does not
if script -qec true /dev/null > /dev/null 2>&1; then
    printf 'hi\nhi\n' | script -qec "$N chat --model $dir/m.ngpt --temp 0 -n 20" /dev/null |
        tr -d '\r' > "$dir/tty.out"
    # the terminal echoes the piped "hi" lines wherever they land (before a
    # "> " or after it, as the machine's load decides), and stderr's notes
    # interleave: without those, "> ok" twice and a last "> "
    seen=$(sed 's/ngpt chat: the conversation is longer than the model.s context ([^)]*): its first [0-9]* bytes were dropped//' "$dir/tty.out" |
        tr -d ' \n' | sed 's/hi//g')
    grep -q "Ctrl-D (end of input) ends the chat" "$dir/tty.out" &&
        [ "${seen#*endsthechat}" = ">ok>ok>" ]
    check $? "chat on a terminal: a word on how it ends, \"> \" before each line: $(od -c "$dir/tty.out" | head -8)"
    script -qec "printf 'hi\nhi\n' | $N chat --model $dir/m.ngpt --temp 0 -n 20 2> /dev/null" /dev/null \
        < /dev/null | tr -d '\r' > "$dir/tty.out"
    printf 'ok\nok\n' | cmp -s - "$dir/tty.out"
    check $? "chat with stdin piped, stdout a terminal: the replies alone: $(od -c "$dir/tty.out" | head -3)"
fi
printf 'hi\n' | $N chat > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q -- "--model" "$dir/err"
check $? "chat without --model is a usage error: $(cat "$dir/err")"
printf 'hi\n' | $N chat --model "$dir/missing.ngpt" > /dev/null 2> "$dir/err"
[ $? -eq 1 ] && grep -q "missing.ngpt" "$dir/err"
check $? "chat with a missing model names it: $(cat "$dir/err")"

# trace --text: L*H tables whose rows are distributions with a causal mask
$N trace --model "$dir/m.ngpt" --prompt 'a<&' --text > "$dir/trace.txt" 2> "$dir/err"
check $? "trace --text: $(cat "$dir/err")"
[ "$(grep -c '^layer [01] head [0-3]$' "$dir/trace.txt")" -eq 8 ]
check $? "trace --text prints 2 layers x 4 heads"
awk 'NF == 4 && $1 != "layer" && $2 ~ /^[0-9.]+$/ { rows++; s = $2 + $3 + $4; if (s < 0.998 || s > 1.002) bad++ }
     NF == 4 && $1 == "a" && ($3 != "0.000" || $4 != "0.000") { bad++ }
     END { exit !(rows == 24 && bad == 0) }' "$dir/trace.txt"
check $? "trace rows sum to 1 and the first query sees only itself"
$N trace --model "$dir/m.ngpt" --prompt 'a<&' --layer 1 --text > "$dir/trace1.txt" 2>&1
[ "$(grep -c '^layer 1 head' "$dir/trace1.txt")" -eq 4 ] && ! grep -q '^layer 0' "$dir/trace1.txt"
check $? "trace --layer 1 prints only layer 1"

# trace --svg: a picture per head, the prompt's bytes escaped
$N trace --model "$dir/m.ngpt" --prompt 'x<&"y' --svg "$dir/t.svg" > /dev/null 2>&1
check $? "trace --svg"
head -c 200 "$dir/t.svg" | grep -q "<svg" && tail -c 20 "$dir/t.svg" | grep -q "</svg>"
check $? "the SVG is one <svg> element"
grep -q '&lt;' "$dir/t.svg" && grep -q '&amp;' "$dir/t.svg" && grep -q '&quot;' "$dir/t.svg" &&
    ! grep -q '>[^<]*<&' "$dir/t.svg"
check $? "the SVG escapes <, & and \""
[ "$(grep -o 'layer [01] head [0-3]' "$dir/t.svg" | sort -u | wc -l)" -eq 8 ]
check $? "the SVG has a heatmap per head"
$N trace --model "$dir/m.ngpt" --prompt 'ab' --layer 2 --text > /dev/null 2> "$dir/err"
rc=$?
[ $rc -ne 0 ] && grep -q "layer" "$dir/err"
check $? "trace --layer 2 of a 2-layer model is an error: $(cat "$dir/err")"
$N trace --model "$dir/m.ngpt" --prompt 'ab' > /dev/null 2> "$dir/err"
[ $? -eq 2 ]
check $? "trace without --svg or --text is a usage error: $(cat "$dir/err")"

summary test_cli_chat_trace
