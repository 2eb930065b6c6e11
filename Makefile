# keyvaultd: the two commands that set up a fresh machine are `make demo` and `make test`.
.PHONY: deps build test demo bench clean

deps:
	@./scripts/install-deps.sh

build: deps
	swift build

# Suites start real daemons; they run one at a time so a 2-core machine is not
# oversubscribed (each suite still runs its daemons concurrently where it means to).
# A throwaway PostgreSQL cluster serves the PostgreSQL relay tests; it is removed
# afterwards whatever the outcome.
test: deps
	./scripts/with-test-postgres.sh sh -c 'swift build --build-tests && swift test --skip-build --no-parallel'

demo: build
	@./scripts/demo.sh

# The bench measures the relay service (on PostgreSQL) beside the embedded relay,
# so it runs under a throwaway PostgreSQL cluster too (removed afterwards).
bench: deps
	swift build -c release --product keyvault-bench
	swift build -c release --product keyvault-relay
	./scripts/with-test-postgres.sh "$$(swift build -c release --show-bin-path)/keyvault-bench" \
		--baseline "$$(./scripts/build-bench-baseline.sh)" --output docs/BENCHMARKS.md

clean:
	swift package clean
