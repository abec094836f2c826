#!/bin/sh
# cpu_avx512.sh FLAGS... — exits 0 when the compiler $CC accepts FLAGS (the
# AVX-512 kernels' flags) and this machine's CPU has AVX-512 F, BW, VL and
# DQ with the OS saving their registers: a probe compiled with FLAGS asks
# cpuid (through the compiler's __builtin_cpu_supports) and is run here.
# The Makefile's ARCH=auto picks the avx512 kernels by it; it says nothing
# about another machine (a binary built here refuses a CPU without them at
# ngpt_context_init, src/base/cpu.c).
CC=${CC:-cc}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cat > "$dir/probe.c" <<'END'
int main(void)
{
    __builtin_cpu_init();
    return !(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"));
}
END
$CC "$@" -o "$dir/probe" "$dir/probe.c" > /dev/null 2>&1 && "$dir/probe"
