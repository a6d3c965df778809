# Trainyard: `make demo` runs a job end to end; `make test` runs every test.
# Both install what is missing first (scripts/deps.sh, Debian packages only).

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
# make fuzz: seconds per target; make test: seconds per target of the
# brief run (each after replaying its committed corpus; tests/fuzz/run.sh)
FUZZ_SECONDS    ?= 60
FUZZ_CI_SECONDS ?= 10

.PHONY: all deps build build-asan test unit unit-asan e2e browser demo bench clean fuzz fuzz-build fuzz-ci crds

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

# libFuzzer targets (tests/fuzz), built with clang under ASan+UBSan.
fuzz-build:
	@scripts/deps.sh fuzz
	CC=clang-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTY_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) --target fuzz_targets -j$(JOBS)

fuzz: fuzz-build
	FUZZ_BUILD=$(CURDIR)/$(FUZZ_BUILD) tests/fuzz/run.sh -k $(FUZZ_SECONDS)

fuzz-ci: fuzz-build
	FUZZ_BUILD=$(CURDIR)/$(FUZZ_BUILD) tests/fuzz/run.sh $(FUZZ_CI_SECONDS)

# deploy/crds from the API schema (trainyard crds); test_crd fails when
# they differ, so run this after changing a custom kind's schema.
crds: build
	rm -f deploy/crds/*.yaml deploy/crds/Kustomization
	mkdir -p deploy/crds
	$(BUILD)/trainyard crds --output-dir deploy/crds

unit: build
	cd $(BUILD) && ctest --output-on-failure

unit-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure

e2e: deps build
	TRAINYARD=$(CURDIR)/$(BUILD)/trainyard tests/e2e/run.sh

# The web console in headless Chromium (tests/browser; npm ci of
# console/package-lock.json's playwright-core first).
browser: deps build
	TRAINYARD=$(CURDIR)/$(BUILD)/trainyard tests/browser/run.sh

test: deps
	$(MAKE) unit
	$(MAKE) unit-asan
	$(MAKE) fuzz-ci
	$(MAKE) e2e
	$(MAKE) browser

demo: build
	@scripts/deps.sh demo
	TRAINYARD=$(CURDIR)/$(BUILD)/trainyard scripts/demo.sh

bench: build
	bench/run-api-bench.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
