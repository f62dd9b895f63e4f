# The two commands: `make demo` and `make test`. Both install what is missing first
# (scripts/bootstrap.sh) and are quick when it is already there.
#
#   make demo          build, then get the reference kernel and call it from C++
#   make test          build, then run every test (ctest, then pytest)
#   make test SAN=1    the same with ASan+UBSan on our code (build directory build-san/)
#   make sanitize      every C++ suite (ctest) under ASan+UBSan, then under TSan (CI runs this too)
#   make build         configure and build only
#   make wheel         dist/kernelhub-*-manylinux_2_28_x86_64.whl and ..._aarch64.whl (pip install
#                      it; any torch)
#   make dist          the wheels and dist/kernelhub-*-{x86_64,aarch64}-linux.tar.gz (the torch-free
#                      CLI); all run on glibc 2.28 and newer (scripts/release.sh, scripts/portable_toolchain.sh)
#   make aarch64       the aarch64-linux build, cross-built here into build-aarch64/ (scripts/aarch64.sh;
#                      make test runs it under qemu; docs/AARCH64.md)

, := ,
SAN ?=
BUILD_DIR ?= $(if $(SAN),build-san,build)
JOBS ?= $(shell nproc)
VENV := .venv
PYTHON := $(CURDIR)/$(VENV)/bin/python
# Sanitizer builds compile at -O1 with line tables only (what ASan's documentation advises, and what
# a report's stack needs): ASan+UBSan at -O2 -g took 2.6 times as long to compile (92 -> 35 s for
# client/src/hub_answers.cpp), and the sanitizer stage is most of CI's time.
SAN_OPT := "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
# ccache, where installed (bootstrap installs it), keeps compiled objects outside the checkout
# (~/.cache/ccache), so a second checkout or CI's fresh clone on a warm machine compiles only what
# changed. Paths are hashed relative to the checkout, so any folder hits the same entries (debug
# info may then name the folder that first compiled an object). The launcher looks for ccache at
# each compile (scripts/ccache_launcher.sh); CCACHE_DISABLE=1 turns it off.
export CMAKE_C_COMPILER_LAUNCHER ?= $(CURDIR)/scripts/ccache_launcher.sh
export CMAKE_CXX_COMPILER_LAUNCHER ?= $(CURDIR)/scripts/ccache_launcher.sh
export CMAKE_CUDA_COMPILER_LAUNCHER ?= $(CURDIR)/scripts/ccache_launcher.sh
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
# Three builds (build/, build-asan/, build-tsan/) with debug info outgrow the default 5 GB.
export CCACHE_MAXSIZE ?= 20G
CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=$(PYTHON) \
               $(if $(SAN),-DKERNELHUB_SANITIZE=address$(,)undefined $(SAN_OPT))

.PHONY: all bootstrap bootstrap-test build demo test sanitize clean wheel dist aarch64 aarch64-torch

all: build

bootstrap:
	@scripts/bootstrap.sh

# What only the tests and the release artifacts use (nix-bin, nginx-light, requirements-dev.txt)
# comes with `make test`, `make wheel` and `make dist`, not `make demo`.
bootstrap-test:
	@scripts/bootstrap.sh --test

$(BUILD_DIR)/build.ninja: CMakeLists.txt | bootstrap
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: bootstrap $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The demo builds what it runs: the CLI, hub-publish, the example and the reference kernels' CPU
# variant; the CUDA variant too where a GPU is visible or DEMO_CUDA=1 (`make build` builds it always).
DEMO_TARGETS := kernelhub hub-publish rms_norm_example reference_kernels_cpu
demo: bootstrap $(BUILD_DIR)/build.ninja
	@if [ -n "$(DEMO_CUDA)" ] || nvidia-smi -L >/dev/null 2>&1; then \
	  echo "[demo] building the CPU and CUDA variants of the reference kernels"; \
	  cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS) reference_kernels; \
	else \
	  echo "[demo] no GPU visible: building the CPU variant only (DEMO_CUDA=1 or make build for the CUDA one)"; \
	  cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS); \
	fi
	@scripts/demo.sh $(BUILD_DIR)

test: bootstrap-test build
	@scripts/test.sh $(BUILD_DIR)

# The release artifacts, from the portable toolchain (built once into ~/.cache/kernelhub).
wheel: bootstrap-test
	@JOBS=$(JOBS) scripts/release.sh wheel
	@JOBS=$(JOBS) scripts/aarch64.sh release wheel

dist: bootstrap-test
	@JOBS=$(JOBS) scripts/release.sh all
	@JOBS=$(JOBS) scripts/aarch64.sh release all

# aarch64-linux from this machine (scripts/aarch64.sh): the torch-free core, kernelhub (serve, get),
# the tvm-ffi example and the torch-free suites with zig's clang (the release toolchain), the
# reference kernels' CPU variants with Debian's cross g++ against PyPI's aarch64 LibTorch; Release.
# aarch64-torch adds kernelhub-get and hub-publish (LibTorch), which make test leaves out.
aarch64: bootstrap-test
	@JOBS=$(JOBS) scripts/aarch64.sh build

aarch64-torch: bootstrap-test
	@JOBS=$(JOBS) scripts/aarch64.sh torch

# make sanitize: our code built twice more, with ASan+UBSan (build-asan/) and with TSan
# (build-tsan/), each running every ctest suite; the pytest suite then runs against the ASan+UBSan
# binaries (`kernelhub`, `kernelhub serve`, `hub-publish` in every test that starts them), less
# the reference kernels' own tests, which run no code of ours that a sanitizer sees (the kernels
# are not instrumented, and `make test` has run them). Any
# report fails the test that made it. The CUDA kernel variant and the Python binding are left out
# of these builds: nvcc code is not instrumented, and the binding runs inside an uninstrumented
# Python (its tests skip here; `make test` runs them). LibTorch keeps allocations until exit on
# purpose, so leak reports are off.
SAN_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=$(PYTHON) \
             -DKERNELHUB_BUILD_CUDA_KERNELS=OFF -DKERNELHUB_BUILD_PYTHON=OFF $(SAN_OPT)

sanitize: bootstrap-test
	cmake -S . -B build-asan $(SAN_FLAGS) -DKERNELHUB_SANITIZE=address$(,)undefined
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure --timeout 600 -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 KERNELHUB_BUILD_DIR=$(CURDIR)/build-asan PYTHONSAFEPATH=1 \
	  $(PYTHON) -m pytest tests/python -q -p no:cacheprovider --ignore=tests/python/reference_kernels
	cmake -S . -B build-tsan $(SAN_FLAGS) -DKERNELHUB_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest --test-dir build-tsan --output-on-failure --timeout 600 -j $(JOBS)

# make fuzz: libFuzzer (clang-14, ASan+UBSan) on the untrusted-input parsers (fuzz/README.md
# lists them), FUZZ_SECONDS each, in build-fuzz/ (see fuzz/CMakeLists.txt). New inputs
# go to build-fuzz/corpus/<name>/ (first filled from fuzz/grown-corpus.tar.gz, what earlier runs
# grew, minimised), crashes to build-fuzz/<name>-crash-*; seeds are fuzz/corpus/.
FUZZ_SECONDS ?= 60
FUZZ_DIR ?= build-fuzz
FUZZERS := variant elf fatbin lockfile metadata repo_tree manifest repo_path http_headers commit_body lfs_batch hub_answers sigstore_bundle sigstore_trusted_root

.PHONY: fuzz
fuzz:
	@command -v clang++-14 >/dev/null || { echo "make fuzz needs clang-14 (apt-get install clang-14)"; exit 1; }
	CC=clang-14 CXX=clang++-14 cmake -S fuzz -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERNELHUB_FUZZ=ON
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	@[ -d $(FUZZ_DIR)/corpus ] || { mkdir -p $(FUZZ_DIR)/corpus && tar -C $(FUZZ_DIR)/corpus -xzf fuzz/grown-corpus.tar.gz; }
	@for f in $(FUZZERS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$f; \
	  echo "== $$f fuzzer, $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/$${f}_fuzzer -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$$f- \
	    $$(case $$f in elf|fatbin) echo -dict=fuzz/fatbin.dict;; lockfile|metadata|repo_tree|commit_body|lfs_batch|hub_answers) echo -dict=fuzz/json.dict;; esac) \
	    $(FUZZ_DIR)/corpus/$$f fuzz/corpus/$$f || exit 1; \
	done

clean:
	rm -rf build build-san build-asan build-tsan build-portable build-portable-aarch64 build-aarch64 build-aarch64-torch dist
