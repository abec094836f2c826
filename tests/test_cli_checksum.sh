#!/bin/sh
# test_cli_checksum.sh — the checksums README promises for every board:
# `ngpt init --seed 1` then `ngpt checksum` ("Cross-compiling for a board")
# and the default seed 42 ("Command line") print exactly README's lines, on
# this build (natively, or under qemu for the ARM builds), with 1 and 3
# threads; and README still shows these same lines.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

# seed, then the three lines `ngpt checksum` must print for that model
expect() {
    case $1 in
    1) printf 'params=e6069bdecc9e97d5\nlogits_eval=f3ee05f5589e3f37\nlogits_train=2bb3a5c73965e90b\n' ;;
    42) printf 'params=8f5c4f8cd417858a\nlogits_eval=3f28d41ee780a60c\nlogits_train=6fbcc92d7787bf07\n' ;;
    esac
}
for seed in 1 42; do
    $N init --seed $seed --out "$dir/m$seed.ngpt" > /dev/null 2> "$dir/err"
    check $? "ngpt init --seed $seed: $(cat "$dir/err")"
    expect $seed > "$dir/want"
    for threads in 1 3; do
        $N checksum "$dir/m$seed.ngpt" --threads $threads > "$dir/got" 2> "$dir/err"
        cmp -s "$dir/want" "$dir/got"
        check $? "seed $seed, --threads $threads: $(tr '\n' ' ' < "$dir/got") $(cat "$dir/err")"
    done
    readme_shows "$dir/want"     # README shows the same three lines, one under the other
    check $? "README shows the checksums of seed $seed"
done
summary test_cli_checksum
