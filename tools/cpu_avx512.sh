#!/bin/sh
# cpu_avx512.sh FLAGS... — exits 0 when the compiler $CC accepts FLAGS (the
# AVX-512 kernels' flags) and this machine's CPU has every AVX-512 feature
# they name (-mavx512f: AVX-512F, -mavx512vnni: AVX-512 VNNI, ...) with the
# OS saving their registers: a probe compiled with FLAGS asks cpuid (through
# the compiler's __builtin_cpu_supports) and is run here. The Makefile's
# ARCH=auto picks the avx512 kernels by it (F, BW, VL and DQ), and VNNI=auto
# adds VNNI to them; it says nothing about another machine (a binary built
# here refuses a CPU without them at ngpt_context_init, src/base/cpu.c).
CC=${CC:-cc}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
checks=""
for flag in "$@"; do
    case $flag in
    -mavx512*) checks="$checks && __builtin_cpu_supports(\"${flag#-m}\")" ;;
    esac
done
[ -n "$checks" ] || exit 1
cat > "$dir/probe.c" <<END
int main(void)
{
    __builtin_cpu_init();
    return !(1 $checks);
}
END
$CC "$@" -o "$dir/probe" "$dir/probe.c" > /dev/null 2>&1 && "$dir/probe"
