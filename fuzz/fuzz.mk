# fuzz.mk — fuzzing and the valgrind run (included by the Makefile).
#   make fuzz [FUZZ_SECONDS=N]   builds the libFuzzer targets (clang, ASan+UBSan)
#                                and runs each for N seconds (default 60)
#   make fuzz-smoke              each target for a few seconds (~60 s in all; CI)
# Crashes are saved in build/fuzz/artifacts/<target>/; new inputs found go to
# build/fuzz/corpus/<target>/ (the committed seeds in fuzz/corpus/ are read
# only). Every crash, once fixed, goes to fuzz/regressions/<target>/, which
# tests/test_fuzz_replay.c replays in `make test`.

FUZZ_CC ?= clang
FUZZ_BUILD ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_HDR := $(wildcard fuzz/*.h)
# The CLI's commands without its main, for cli_main in fuzz_cli and the replay test.
CLI_LIB := $(BUILD)/libngpt-cli.a
# fuzz_cli caps the library's allocations through the linker (GNU ld only).
ifeq ($(shell uname -s),Linux)
  FUZZ_WRAP := -DNGPT_FUZZ_WRAP_MALLOC -Wl,--wrap=malloc -Wl,--wrap=calloc
endif

.PHONY: fuzz fuzz-smoke fuzz-bins
# Code that runs per byte of a text (BPE, encoding, training a tokenizer)
# keeps its edge coverage but not trace-cmp: its comparisons are of ids,
# ranks and positions, not of the input against constants (what trace-cmp
# helps the fuzzer guess), and tracing them was half of fuzz_tokenizer's
# time. (build.c, which checks what a tokenizer file says, keeps it.)
FUZZ_NO_TRACE_CMP := $(addprefix src/tokenizer/,bpe.c encode.c train.c)
# The fuzz build's objects are remade when what they leave uninstrumented changes.
ifneq ($(findstring fuzz/coverage-ignore.txt,$(SANFLAGS)),)
$(LIB_OBJ) $(CLI_OBJ) $(BENCH_OBJ): fuzz/coverage-ignore.txt fuzz/fuzz.mk
$(FUZZ_NO_TRACE_CMP:%.c=$(BUILD)/obj/%.o): ALL_CFLAGS += -fno-sanitize-coverage=trace-cmp
endif
$(CLI_LIB): $(filter-out %/cli/main.o,$(CLI_OBJ)) $(BENCH_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# One libFuzzer binary per fuzz/fuzz_<name>.c (made in the recursive make below).
$(BUILD)/bin/fuzz_%: fuzz/fuzz_%.c $(FUZZ_HDR) $(LIB) $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Icli -Ifuzz $(ALL_CFLAGS) -fsanitize=fuzzer $(FUZZ_EXTRA) -o $@ $< \
	    $(CLI_LIB) $(LIB) $(LDFLAGS) $(LDLIBS)
$(BUILD)/bin/fuzz_cli: FUZZ_EXTRA = $(FUZZ_WRAP)
fuzz-bins: $(FUZZ_NAMES:%=$(BUILD)/bin/fuzz_%)

# The replay test links every target's entry function (NGPT_FUZZ_REPLAY).
$(BUILD)/tests/test_fuzz_replay: tests/test_fuzz_replay.c $(FUZZ_SRC) $(FUZZ_HDR) tests/test.h \
                                 $(LIB) $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests -Icli -Ifuzz $(ALL_CFLAGS) -DNGPT_FUZZ_REPLAY \
	    -DNGPT_SOURCE_DIR='"$(CURDIR)"' $(FUZZ_WRAP) -o $@ tests/test_fuzz_replay.c $(FUZZ_SRC) \
	    $(CLI_LIB) $(LIB) $(LDFLAGS) $(LDLIBS)

# libFuzzer comes with clang's runtime (Debian: clang and libclang-rt-14-dev,
# which apt installs only as a recommendation).
FUZZ_CHECK = printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' | \
    $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c - -o $(FUZZ_BUILD)/check 2>/dev/null || \
    { echo "fuzz: $(FUZZ_CC) cannot link libFuzzer: install clang and its runtime (Debian: apt-get install clang libclang-rt-14-dev)"; exit 1; }
FUZZ_MAKE = mkdir -p $(FUZZ_BUILD) && $(FUZZ_CHECK) && $(MAKE) --no-print-directory CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) ARCH=$(ARCH) \
            TOOLCHAIN= SANFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link -fsanitize-coverage-ignorelist=fuzz/coverage-ignore.txt" fuzz-bins
fuzz:
	$(FUZZ_MAKE)
	sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_NAMES)
fuzz-smoke:
	$(FUZZ_MAKE)
	sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) $(FUZZ_NAMES)

# make valgrind: the CLI's main paths (init, save, load, forward, train,
# resume, eval, generate, beam search, trace) under valgrind memcheck.
# valgrind's CPU has no AVX-512 (the library would refuse it, rightly): an
# avx512 build is checked through its AVX2 twin in build/avx2.
.PHONY: valgrind
ifeq ($(ARCH),avx512)
valgrind:
	@$(MAKE) --no-print-directory ARCH=avx2 BUILD=$(BUILD)/avx2 valgrind
else
valgrind: all $(BUILD)/tests/test_import
	sh tests/valgrind.sh $(CLI)
endif
