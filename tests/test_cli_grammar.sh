#!/bin/sh
# test_cli_grammar.sh — `ngpt generate` and `ngpt chat` with --grammar FILE,
# --json-schema FILE and --json: the output is held to them (stop: grammar
# complete; python3's json reads it when there is a python3), the same bytes
# with speculative decoding and on 2 threads, and a bad grammar or schema is
# one line naming the file and the place.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"
$N init --out "$dir/m.ngpt" --seed 3 --config T=128 --config C=32 --config H=2 \
    --config d_ff=64 --config L=2 > /dev/null 2>&1
check $? "ngpt init"
cat > "$dir/task.json" <<'JSON'
{"type": "object", "title": "Task",
 "properties": {"title": {"type": "string", "maxLength": 12},
                "priority": {"type": "integer", "minimum": 1, "maximum": 3},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}},
 "required": ["title", "priority"]}
JSON
printf 'root ::= "(" item ("," item){0,3} ")"\nitem ::= [0-9]+ | root\n' > "$dir/list.gbnf"
py=$(command -v python3)
gen="generate --model $dir/m.ngpt --prompt x: -n 100"
for opts in "--json-schema $dir/task.json" "--json" "--grammar $dir/list.gbnf"; do
    for seed in 1 2 3; do
        $N $gen $opts --seed "$seed" > "$dir/out" 2> "$dir/err"
        check $? "$opts --seed $seed: $(cat "$dir/err")"
        grep -q "stop: grammar complete" "$dir/err" || grep -q "stop: cut before" "$dir/err"
        check $? "$opts --seed $seed: a grammar's stop reason: $(cat "$dir/err")"
        if grep -q "stop: grammar complete" "$dir/err" && [ -n "$py" ] && [ "$opts" != "--grammar $dir/list.gbnf" ]; then
            "$py" -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/out"
            check $? "$opts --seed $seed: JSON: $(cat "$dir/out")"
        fi
        for more in "--lookup 2" "--threads 2"; do
            $N $gen $opts --seed "$seed" $more > "$dir/again" 2> /dev/null
            cmp -s "$dir/out" "$dir/again"
            check $? "$opts --seed $seed $more: the same bytes"
        done
    done
done
$N $gen --json --temp 0 > "$dir/greedy" 2> /dev/null && \
    $N generate --model "$dir/m.ngpt" --prompt x: -n 100 --json --beam 1 > "$dir/beam" 2> /dev/null
cmp -s "$dir/greedy" "$dir/beam"
check $? "beam width 1 under a grammar is greedy"

printf 'root ::= "a" (b\n' > "$dir/bad.gbnf"
$N $gen --grammar "$dir/bad.gbnf" > /dev/null 2> "$dir/err"
[ $? -ne 0 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] &&
    grep -q "bad.gbnf: ngpt_grammar_parse: line 2, column 1: expected ')' to close the '(' of line 1, column 14" "$dir/err"
check $? "a bad grammar is one line naming the file and the place: $(cat "$dir/err")"
printf '{"type": "string", "format": "email"}' > "$dir/bad.json"
$N $gen --json-schema "$dir/bad.json" > /dev/null 2> "$dir/err"
[ $? -ne 0 ] && grep -q 'bad.json: ngpt_grammar_from_json_schema: at /format: format "email" is not supported' "$dir/err"
check $? "an unsupported schema keyword is named: $(cat "$dir/err")"
$N $gen --json --grammar "$dir/list.gbnf" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] && grep -q "give one of --grammar, --json-schema and --json" "$dir/err"
check $? "two grammars are a usage error: $(cat "$dir/err")"

printf 'hello\nmore\n' | $N chat --model "$dir/m.ngpt" --json-schema "$dir/task.json" -n 100 \
    --seed 4 > "$dir/chat" 2> "$dir/err"
check $? "chat --json-schema: $(cat "$dir/err")"
[ "$(wc -l < "$dir/chat")" -eq 2 ] && grep -q '^{"title":"' "$dir/chat"
check $? "chat: each reply is held to the schema: $(cat "$dir/chat")"
summary test_cli_grammar
