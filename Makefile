# The tasks a contributor runs. Each target is a plain command you can also
# type yourself; CI (.ci/run) runs `make lint` and the README's test command.

GO ?= go
# staticcheck, pinned; `go run pkg@version` builds it without touching go.mod.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOIMPORTS ?= $(GO) run golang.org/x/tools/cmd/goimports@v0.39.0
FUZZTIME ?= 10s
BENCHCOUNT ?= 5

.PHONY: all help test test-short lint fmt bench bench-memrank fuzz demo tidy js

all: lint test

## test: the README's test command (what CI runs)
test:
	$(GO) vet ./... && $(GO) test -race -count=1 ./...

## test-short: the tests without the race detector, for a quick loop
test-short:
	$(GO) test -count=1 ./...

## lint: gofmt, goimports' grouping, go vet, staticcheck (staticcheck.conf), go mod tidy
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@out=$$($(GOIMPORTS) -l -local github.com/memrank/memrank $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "goimports -local github.com/memrank/memrank would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff

## fmt: format every Go file, imports grouped (standard library, others, memrank)
fmt:
	$(GOIMPORTS) -w -local github.com/memrank/memrank $$(git ls-files '*.go')

## bench: the hot-path benchmarks (go test -bench), BENCHCOUNT runs each
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./...

## bench-memrank: the end-to-end benchmarks of the README's table
bench-memrank:
	$(GO) run ./cmd/memrank bench store
	$(GO) run ./cmd/memrank bench proxy
	$(GO) run ./cmd/memrank bench observe

## fuzz: every fuzz target for FUZZTIME each (the seed corpora run in `make test`)
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## demo: memrank on its embedded store with the demo memories (the README's first command)
demo:
	$(GO) run ./cmd/memrank serve --demo

## js: install every npm package the tests need (Node 20+): the JS clients (test/js), the TypeScript SDK (sdk/js), the MCP client (test/mcp) and the explain page's browser test (test/ui, which also needs Chromium); then `make test` runs them
js:
	npm ci --prefix test/js --no-audit --no-fund
	npm ci --prefix sdk/js --no-audit --no-fund
	npm ci --prefix test/mcp --no-audit --no-fund
	npm ci --prefix test/ui --no-audit --no-fund

## tidy: go mod tidy
tidy:
	$(GO) mod tidy

## help: this list
help:
	@grep -h '^## ' $(MAKEFILE_LIST) | sed 's/^## //'
