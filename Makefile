# airlock: `make demo` shows a tainted session refused; `make test` runs every test.
GO      ?= go
BIN     := bin
PKGS    := ./...
FIXTURES := ./testdata/fakeserver/ ./testdata/sdkserver/

.PHONY: all build demo test vet fmt-check rego-test peers test-peers test-faults fuzz-ci bench bench-e2e conformance clean

all: build

build:
	$(GO) build -o $(BIN)/airlock ./cmd/airlock
	$(GO) build -o $(BIN)/fakeserver ./testdata/fakeserver

# The demo: a scripted client reads an untrusted page through airlock, which
# taints the session, then tries to send a message and is refused.
demo: build
	$(GO) run ./testdata/demo -airlock $(BIN)/airlock -server $(BIN)/fakeserver

# Everything CI runs: formatting, vet, the Go tests (which also run the Rego
# tests with the embedded engine, the fault tests and, with the peers
# installed, the real-peer tests), the fixtures' own tests, the stock OPA CLI
# on the default bundle, the conformance suite through airlock, and a short
# run of every fuzz target.
test: fmt-check vet peers
	AIRLOCK_REQUIRE_PEERS=1 $(GO) test -race -count=1 $(PKGS) $(FIXTURES)
	$(MAKE) rego-test
	$(MAKE) conformance
	$(MAKE) fuzz-ci

# The real MCP peers (npm: the reference servers, the TypeScript SDK, the
# Inspector), pinned in testdata/peers/package-lock.json.
peers:
	testdata/peers/install.sh

# Real third-party MCP clients and servers through airlock, compared with a
# direct connection (cmd/airlock/peers_test.go).
test-peers: peers
	AIRLOCK_REQUIRE_PEERS=1 $(GO) test -race -count=1 -run 'TestPeer' -v ./cmd/airlock

# Faults end to end: server crash, hang, garbage, stderr flood, client gone,
# kill -9, state directory full or read-only (cmd/airlock/faults_test.go).
test-faults:
	$(GO) test -race -count=1 -run 'TestFault' -v ./cmd/airlock

# Every fuzz target for FUZZTIME each (default 50000 executions; FUZZTIME=5m for a long run).
fuzz-ci:
	testdata/fuzz-ci.sh

vet:
	$(GO) vet $(PKGS) $(FIXTURES) ./testdata/demo

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The stock OPA CLI, pinned in go.mod as a tool, on the default bundle.
rego-test:
	$(GO) tool opa test --fail-on-empty rego/
	$(GO) tool opa check --strict rego/

# The official MCP conformance suite's server scenarios against the Go SDK's
# conformance server, direct and through airlock: the same checks must pass
# (testdata/conformance/run.sh). The suite, supergateway and Node 22 come from
# the npm registry into testdata/conformance/node_modules.
conformance: build
	testdata/conformance/install.sh
	testdata/conformance/run.sh $(BIN)/airlock

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pep/ ./pep/audit/ ./pep/sessions/ ./detectors/

# End to end: direct, a bare relay and airlock side by side (see bench/README.md).
bench-e2e: build
	$(GO) build -o $(BIN)/relay ./bench/relay
	$(GO) run ./bench -airlock $(BIN)/airlock -relay $(BIN)/relay -server $(BIN)/fakeserver

clean:
	rm -rf $(BIN)
