# keyvaultd: the two commands that set up a fresh machine are `make demo` and `make test`.
.PHONY: deps build test fuzz demo bench release clean

deps:
	@./scripts/install-deps.sh

build: deps
	swift build

# Suites start real daemons; scripts/run-suites.sh runs three at a time, each in a test
# process of its own (most of a suite's time is spent waiting on its daemons), then the
# suites that bound a time one at a time with nothing beside them.
# The daemons, CLIs and relay servers they start are the release build's executables
# (KEYVAULT_BIN_DIR), built as `make release` ships them: the suites test what users
# run, and an unoptimised daemon spent most of the suites' time. `make release` then
# finds them built.
# A throwaway PostgreSQL cluster serves the PostgreSQL relay tests; it is removed
# afterwards whatever the outcome.
# Then the API against docs/openapi.yaml: the document itself, every answer the
# suites' daemon client recorded (KEYVAULT_API_RECORD, made anew each run), and
# schemathesis fuzzing a live daemon (scripts/fuzz-api.sh); then the Python client
# (clients/python): its generated code is what the pinned generator makes from the
# spec, and its tests pass against a live daemon. Last, the release archive
# (make release) is built and run with the toolchain's folder hidden (scripts/test-release.sh).
# The libFuzzer targets (Fuzz/) replay their corpora and run briefly (scripts/fuzz.sh replay);
# a crash fails the test.
API_RECORD := $(CURDIR)/.build/api-answers.jsonl
test: deps
	rm -f "$(API_RECORD)"
	./scripts/release.sh --build-only
	./scripts/with-test-postgres.sh sh -c 'swift build --build-tests && KEYVAULT_BIN_DIR="$$(./scripts/release.sh --bin-path)" KEYVAULT_API_RECORD="$(API_RECORD)" ./scripts/run-suites.sh'
	./scripts/fuzz.sh replay
	.build-venv/bin/openapi-spec-validator docs/openapi.yaml
	.build-venv/bin/python tools/check-openapi "$(API_RECORD)"
	./scripts/fuzz-api.sh "$$(swift build --show-bin-path)/keyvaultd"
	./scripts/python-client.sh check
	./scripts/python-client.sh test "$$(swift build --show-bin-path)/keyvaultd"
	./scripts/release.sh
	./scripts/test-release.sh

# Every libFuzzer target (Fuzz/README.md) for FUZZ_SECONDS each, one after another, on its
# corpus; crashes are kept in .build-fuzz/artifacts/TARGET/.
FUZZ_SECONDS ?= 600
fuzz: deps
	./scripts/fuzz.sh run $(FUZZ_SECONDS)

demo: build
	@./scripts/demo.sh

# The three executables with the Swift runtime linked in, stripped, with the units, the
# default policy, man pages and completions, in .build/release-archive/ with its checksum.
release: deps
	./scripts/release.sh

# The bench measures the relay service (on PostgreSQL) beside the embedded relay,
# so it runs under a throwaway PostgreSQL cluster too (removed afterwards).
# Built as `make release` builds (the Swift runtime linked in): what the CLI section times is what
# ships, the callgrind section's relay is one valgrind can read (a relay linked to the toolchain's
# runtime libraries crashes valgrind 3.19's reader of their DWARF 5), and a `make bench` after
# `make test` reuses its build instead of compiling everything again with other flags.
bench: deps
	swift build -c release --static-swift-stdlib --product keyvault-bench
	swift build -c release --static-swift-stdlib --product keyvault-relay
	swift build -c release --static-swift-stdlib --product keyvault
	./scripts/with-test-postgres.sh "$$(swift build -c release --static-swift-stdlib --show-bin-path)/keyvault-bench" \
		--baseline "$$(./scripts/build-bench-baseline.sh)" --output docs/BENCHMARKS.md

clean:
	swift package clean
