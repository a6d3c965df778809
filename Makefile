# Trainyard: `make demo` runs a job end to end; `make test` runs every test.
# Both install what is missing first (scripts/deps.sh, Debian packages only).

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)

.PHONY: all deps build build-asan test unit unit-asan e2e demo bench clean

all: build

deps:
	@scripts/deps.sh all

build:
	@scripts/deps.sh build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

build-asan:
	@scripts/deps.sh build
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTY_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)

unit: build
	cd $(BUILD) && ctest --output-on-failure

unit-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure

e2e: deps build
	TRAINYARD=$(CURDIR)/$(BUILD)/trainyard tests/e2e/run.sh

test: deps
	$(MAKE) unit
	$(MAKE) unit-asan
	$(MAKE) e2e

demo: build
	@scripts/deps.sh demo
	TRAINYARD=$(CURDIR)/$(BUILD)/trainyard scripts/demo.sh

bench: build
	bench/run-api-bench.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
