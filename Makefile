# The two commands: `make demo` and `make test`. Both install what is missing first
# (scripts/bootstrap.sh) and are quick when it is already there.
#
#   make demo          build, then get the reference kernel and call it from C++
#   make test          build, then run every test (ctest, then pytest)
#   make test SAN=1    the same with ASan+UBSan on our code (build directory build-san/)
#   make build         configure and build only

SAN ?=
BUILD_DIR ?= $(if $(SAN),build-san,build)
JOBS ?= $(shell nproc)
VENV := .venv
PYTHON := $(CURDIR)/$(VENV)/bin/python
CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=$(PYTHON) \
               $(if $(SAN),-DKERNELHUB_SANITIZE=address$(,)undefined)
, := ,

.PHONY: all bootstrap build demo test test-cpp test-python clean

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

clean:
	rm -rf build build-san
