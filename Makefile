# wukongd — the two commands a newcomer needs are `make run` and `make test`.
GO      ?= go
BIN     := bin/wukongd
ADDR    ?= 127.0.0.1:8080
PKGS    := ./...

.PHONY: all build test lint generate bench run clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/wukongd

# Tests: vet and format checks first, then every package's tests.
test: lint
	$(GO) test -count=1 -timeout 25m $(PKGS)

lint:
	$(GO) vet $(PKGS)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './sparql/internal/*') | grep -v '^sparql/internal/' || true); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi

# Regenerates the ANTLR parser under sparql/internal (needs Node; the output is committed).
generate:
	$(GO) generate ./sparql/...

# Micro-benchmarks next to the code.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

run: build
	$(BIN) serve --addr $(ADDR)

clean:
	rm -rf bin
