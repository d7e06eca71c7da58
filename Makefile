# SPDX-License-Identifier: BSD-2-Clause
# The two commands of the README: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all bootstrap configure build mmaemu python run test test-cluster bench clean coverage \
  package sanitize sanitize-build fuzz fatbins gpu-bundle readme-check

all: build

bootstrap:
	@bash scripts/bootstrap

# The configure's own lines go to $(BUILD)/configure.log; its summary (the "-- mmaemu" lines:
# build type, Python module, benchmarks, OpenBLAS, CUDA) is shown, and the whole log when it fails.
configure: bootstrap
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) \
	  >$(BUILD)/configure.log 2>&1 || { cat $(BUILD)/configure.log; exit 1; }
	@grep '^-- mmaemu' $(BUILD)/configure.log || true

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only the command-line tool and what it links: what `make run` needs.
mmaemu: configure
	@cmake --build $(BUILD) -j $(JOBS) --target mmaemu

# The Python module and $(BUILD)/python/run, the interpreter the configure found with the module
# on its path (the README's Python examples use it).
python: configure
	@cmake --build $(BUILD) -j $(JOBS) --target mmaemu_core || \
	  { echo "make python: this configure does not build the Python module (its summary says why)"; exit 1; }
	@echo "python: $(BUILD)/python/run (e.g. $(BUILD)/python/run -c 'import mmaemu')"

# The main job: replay every committed hardware recording on the reference backend, with a
# validation log of the T1 tier (signed when MMAEMU_SIGNING_KEY names a private key) under
# $(BUILD)/validation_logs/: the committed docs/validation_logs/ only receive logs on purpose
# (`mmaemu tier run --publish`, `mmaemu report publish`), and every log there must verify
# (make test checks it). It builds the mmaemu target only: tests and benchmarks are make test's.
run: mmaemu
	@$(BUILD)/harness/mmaemu tier run T1 --build-dir $(BUILD) --log-dir $(BUILD)/validation_logs \
	  >$(BUILD)/run-T1.txt 2>&1 || \
	  { cat $(BUILD)/run-T1.txt; exit 1; }
	@grep '^log:' $(BUILD)/run-T1.txt
	@$(BUILD)/harness/mmaemu replay --backend reference recordings/data/public/*.h5

# Every ctest test, then the skipped tests with their reasons (scripts/run-tests).
test: build
	@bash scripts/run-tests $(BUILD) $(JOBS)

# A real single-node Slurm (munged, slurmctld, slurmd as root on localhost, started and stopped
# by the test): T1 and a small mutant campaign as job arrays of 4 shards, merged and compared
# with a single-machine run, and a run with a cancelled, a timed-out and a re-queued shard
# (docs/testing.md, "Running on a cluster"). Where the daemons cannot run it is UNSUPPORTED
# (exit 4 of the script), which this target reports and does not count as a failure.
test-cluster: build
	@bash scripts/slurm/test-cluster $(BUILD); rc=$$?; \
	  if [ $$rc -eq 4 ]; then echo "make test-cluster: UNSUPPORTED here (see above), not run"; \
	  else exit $$rc; fi

bench: build
	@$(BUILD)/bench/mmaemu_bench_dot

# Every command of README.md on a scratch clone, in a shuffled order, then `make test` there
# (scripts/readme-check; minutes: a whole build). READMECHECK_FLAGS: e.g. --seed 3 --keep.
READMECHECK_FLAGS ?=
readme-check:
	@bash scripts/readme-check $(READMECHECK_FLAGS)

# Validation tiers (docs/testing.md): `make tier-T0`, `make tier-T1`, ... run one tier through
# `mmaemu tier run` and write its validation log into $(BUILD)/validation_logs/ (signed if
# MMAEMU_SIGNING_KEY names a key; `mmaemu report publish` copies a signed one into docs/).
tier-%: build
	@$(BUILD)/harness/mmaemu tier run $* --build-dir $(BUILD)

# The install package (cpack TGZ) in $(BUILD): CLI, libraries, headers, CMake package config.
package: build
	@cd $(BUILD) && cpack -G TGZ

# gcov build in build-coverage/, T1 then T0 on it, gcovr HTML + Cobertura XML + JSON summary in
# build-coverage/coverage/; the T0 log records the line coverage of emulator/.
COVERAGE_BUILD ?= build-coverage
coverage: bootstrap
	@cmake -S . -B $(COVERAGE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMMAEMU_COVERAGE=ON \
	  -DMMAEMU_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(COVERAGE_BUILD) -j $(JOBS)
	@find $(COVERAGE_BUILD) -name '*.gcda' -delete
	@$(COVERAGE_BUILD)/harness/mmaemu tier run T1 --no-log
	@$(COVERAGE_BUILD)/harness/mmaemu tier run T0 --build-dir $(COVERAGE_BUILD) \
	  --coverage $(COVERAGE_BUILD)/coverage
	@test -f $(COVERAGE_BUILD)/coverage/coverage.xml
	@echo "coverage: $(COVERAGE_BUILD)/coverage/index.html, $(COVERAGE_BUILD)/coverage/coverage.xml"

# The whole ctest suite under AddressSanitizer and UndefinedBehaviorSanitizer (clang, one build
# in build-san/ that also holds the libFuzzer targets), then every fuzz seed replayed once.
SAN_BUILD ?= build-san
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
sanitize-build: bootstrap
	@cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DMMAEMU_SANITIZE=ON -DMMAEMU_FUZZ=ON -DMMAEMU_BENCH=OFF \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS)

sanitize: sanitize-build
	@cd $(SAN_BUILD) && $(SAN_ENV) ctest --output-on-failure -j $(JOBS) -LE slow

# Each libFuzzer target for FUZZ_SECONDS (default 30) from its committed seed corpus; new
# inputs go to a scratch folder, crashes to $(SAN_BUILD)/fuzz-artifacts/.
FUZZ_SECONDS ?= 30
fuzz: sanitize-build
	@$(SAN_ENV) bash scripts/fuzz $(SAN_BUILD) $(FUZZ_SECONDS)

# The release fatbins in kernels/bin (nvcc >= 12.8: $$NVCC, $$CUDA_HOME/bin, PATH), with their
# manifest.json, build_report.json and cuobjdump.txt; a failed build leaves the old ones. The
# build log goes to build/fatbin-build/, and with FATBIN_LOG_DATE=YYYY-MM-DD also to
# docs/validation_logs/<date>/fatbin-build/ (the committed build's log).
fatbins: configure
	@cmake --build $(BUILD) -j $(JOBS) --target mmaemu
	@bash scripts/fatbins $(BUILD)/harness/mmaemu

# build/gpu-bundle/ (<= 48 MiB): mmaemu built without OpenBLAS + its libraries, the fatbins,
# tiers, recordings, keys, scripts/gpu-validate.sh and a source tarball (docs/backends.md).
gpu-bundle: bootstrap
	@bash scripts/gpu-bundle $(CURDIR)/build/gpu-bundle

clean:
	@rm -rf $(BUILD)
