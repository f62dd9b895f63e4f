# The two commands: `make demo` and `make test`. Both install what is missing first
# (scripts/bootstrap.sh) and are quick when it is already there.
#
#   make demo          build, then get the reference kernel and call it from C++
#   make test          build, then run every test (ctest, then pytest)
#   make test SAN=1    the same with ASan+UBSan on our code (build directory build-san/)
#   make build         configure and build only

, := ,
SAN ?=
BUILD_DIR ?= $(if $(SAN),build-san,build)
JOBS ?= $(shell nproc)
VENV := .venv
PYTHON := $(CURDIR)/$(VENV)/bin/python
CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=$(PYTHON) \
               $(if $(SAN),-DKERNELHUB_SANITIZE=address$(,)undefined)

.PHONY: all bootstrap build demo test clean

all: build

bootstrap:
	@scripts/bootstrap.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt | bootstrap
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: bootstrap $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD_DIR)

test: build
	@scripts/test.sh $(BUILD_DIR)

# make fuzz: libFuzzer (clang-14, ASan+UBSan) on the untrusted-input parsers (fuzz/README.md
# lists them), FUZZ_SECONDS each, in build-fuzz/ (see fuzz/CMakeLists.txt). New inputs
# go to build-fuzz/corpus/<name>/, crashes to build-fuzz/<name>-crash-*; seeds are fuzz/corpus/.
FUZZ_SECONDS ?= 60
FUZZ_DIR ?= build-fuzz
FUZZERS := variant elf fatbin lockfile metadata repo_tree manifest repo_path http_headers commit_body lfs_batch hub_answers

.PHONY: fuzz
fuzz:
	@command -v clang++-14 >/dev/null || { echo "make fuzz needs clang-14 (apt-get install clang-14)"; exit 1; }
	CC=clang-14 CXX=clang++-14 cmake -S fuzz -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERNELHUB_FUZZ=ON
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	@for f in $(FUZZERS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$f; \
	  echo "== $$f fuzzer, $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/$${f}_fuzzer -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$$f- \
	    $$(case $$f in elf|fatbin) echo -dict=fuzz/fatbin.dict;; lockfile|metadata|repo_tree|commit_body|lfs_batch|hub_answers) echo -dict=fuzz/json.dict;; esac) \
	    $(FUZZ_DIR)/corpus/$$f fuzz/corpus/$$f || exit 1; \
	done

clean:
	rm -rf build build-san
