#!/bin/sh
# test_kernel_files.sh — the layout the list of kernels (src/kernels.inc)
# promises: each kernel's reference is defined in src/ref/<op>.c and nowhere
# else, its ISA kernel in arch/<isa>/<op>.c exactly where the ISA's column
# says SIMD (none where it says REF, nor where avx512's says AVX2: that
# build borrows the AVX2 kernel, which must then exist in arch/avx2/<op>.c;
# both where avx512's says VNNI), and its case in kcases/<op>.c. Reads sources only (with the host's
# C preprocessor).
passed=0 failed=0
check() {   # check DESCRIPTION WANT_FILE GOT_FILES
    if [ "$2" = "$3" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $1: defined in '$3', want '$2'"
    fi
}
defined_in() {  # files of DIR defining the function or object NAME (at column 0)
    grep -l -E "^[a-z].*[ *]$2( =|\()" "$1"/*.c 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}
isas="avx2 neon avx512"    # the list's ISA columns, in order
entries=$(${CC:-cc} -E -P -x c -D'NGPT_KERNEL(k, op, ret, params, ...)=@ k op __VA_ARGS__' \
          src/kernels.inc | tr '\n' ' ' | tr -d ',' | tr '@' '\n')
[ -n "$entries" ] || { echo "FAIL: no kernels read from src/kernels.inc"; failed=1; }
while read -r k op flags; do
    [ -n "$k" ] || continue
    check "ngpt_f32_${k}_ref" "src/ref/$op.c" "$(defined_in src/ref "ngpt_f32_${k}_ref")"
    check "kc_$k" "kcases/$op.c" "$(defined_in kcases "kc_$k")"
    set -- $flags
    for isa in $isas; do
        flag=${1:-missing}
        [ $# -gt 0 ] && shift
        case $flag in
        SIMD) want="arch/$isa/$op.c" ;;
        REF) want="" ;;
        AVX2)
            want=""
            [ "$isa" = avx512 ] || want="AVX2 only in the avx512 column, not in $isa's"
            check "ngpt_f32_${k}__avx2 (borrowed by $isa)" "arch/avx2/$op.c" \
                "$(defined_in arch/avx2 "ngpt_f32_${k}__avx2")"
            ;;
        VNNI)   # its own kernel with VNNI, the AVX2 one without: both exist
            want="arch/$isa/$op.c"
            [ "$isa" = avx512 ] || want="VNNI only in the avx512 column, not in $isa's"
            check "ngpt_f32_${k}__avx2 (borrowed by $isa without VNNI)" "arch/avx2/$op.c" \
                "$(defined_in arch/avx2 "ngpt_f32_${k}__avx2")"
            ;;
        *) want="a known flag (SIMD, REF, AVX2, VNNI), not '$flag'" ;;
        esac
        check "ngpt_f32_${k}__$isa ($flag)" "$want" "$(defined_in "arch/$isa" "ngpt_f32_${k}__$isa")"
    done
done <<END
$entries
END
echo "test_kernel_files: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
