# wukongd — the two commands a newcomer needs are `make run` and `make test`.
GO      ?= go
BIN     := bin/wukongd
ADDR    ?= 127.0.0.1:8080
PKGS    := ./...

.PHONY: all build test test-lubm test-lubm-reasoning test-uba test-crash test-crash-bulk lint generate bench bench-micro bench-e2e bench-peers bench-doc bench-scale run clean conformance

all: build

build:
	$(GO) build -o $(BIN) ./cmd/wukongd

# The long crash run: the built binary serves LUBM-1 with durable writes
# under a write storm and is killed with SIGKILL CRASH_KILLS times
# (cmd/wukongd/crash_test.go; CI runs 3 kills on a small data set), and
# killed again just after big writes stopped at their deadline, while their
# rollback runs (crash_stop_test.go).
CRASH_KILLS ?= 25
test-crash: build
	WUKONGD_BIN=$(CURDIR)/$(BIN) WUKONGD_CRASH_KILLS=$(CRASH_KILLS) WUKONGD_CRASH_STOP_KILLS=$(CRASH_KILLS) WUKONGD_CRASH_LUBM1=1 \
		$(GO) test -count=1 -timeout 60m -run 'TestCrashHarness|TestSecondServerRefused|TestCrashStoppedWriteRollback' -v ./cmd/wukongd

# kill -9 during big Graph Store POSTs of new data (issue 12 item 6): each
# POST is there in full or not at all, every acknowledged write stays.
CRASH_BULK_KILLS ?= 20
CRASH_BULK_TRIPLES ?= 300000
test-crash-bulk: build
	WUKONGD_BIN=$(CURDIR)/$(BIN) WUKONGD_CRASH_BULK_KILLS=$(CRASH_BULK_KILLS) WUKONGD_CRASH_BULK_TRIPLES=$(CRASH_BULK_TRIPLES) \
		WUKONGD_CRASH_LUBM1=1 $(GO) test -count=1 -timeout 60m -run 'TestCrashBulkPost' -v ./cmd/wukongd

# The long cluster crash run: 3 processes with 2 replicas of each shard under
# a write storm with readers on every node, kill -9 of a follower and of the
# leader, restart, STORM_ROUNDS times: every acknowledged write on every node,
# no version backwards, no query failed that started after a kill
# (cluster/storm_test.go; CI runs one round).
STORM_ROUNDS ?= 10
.PHONY: test-cluster-crash
test-cluster-crash: build
	WUKONGD_BIN=$(CURDIR)/$(BIN) WUKONGD_STORM_ROUNDS=$(STORM_ROUNDS) \
		$(GO) test -count=1 -timeout 60m -run 'TestClusterWriteStorm' -v ./cluster

# Tests: vet and format checks first, then every package's tests.
test: lint
	$(GO) test -count=1 -timeout 25m $(PKGS)

# The generator against the LUBM-1/10/40 reference files (LUBM-40: ~10 s, not in CI).
test-lubm:
	WUKONGD_LUBM40=1 $(GO) test -count=1 -run 'IsUBA' -v ./datasets

# The committed LUBM-10 and LUBM-40 Q1–Q14 answers with owl-rl reasoning,
# each checked by something other than the reasoner (reason's
# TestLUBMScaleStdQueries says how); a few minutes, ~2 GB.
test-lubm-reasoning:
	WUKONGD_LUBM_SCALES=10,40 $(GO) test -count=1 -timeout 30m -run 'TestLUBMScaleStdQueries' -v ./reason

# The generator against UBA 1.7 itself (Java; UBA=classpath of its compiled classes), other seeds
# and start indices; UPDATE=-update rewrites datasets/testdata/uba.tsv. About 3 minutes.
test-uba:
	WUKONGD_UBA=$(UBA) $(GO) test -count=1 -timeout 30m -run 'TestAgainstUBA' -v ./datasets $(UPDATE)

lint:
	$(GO) vet $(PKGS)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './sparql/internal/*') | grep -v '^sparql/internal/' || true); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi

# The W3C SPARQL 1.1 suites (query, update, syntax, Protocol, Graph Store
# Protocol) and our feature tests, on 1 and 4 shards: the EARL report in
# var/conformance/earl.ttl and its summary in docs/CONFORMANCE.md.
conformance:
	$(GO) test -count=1 ./conformance -run 'TestW3C|TestFeatures' \
		-conformance.earl $(CURDIR)/var/conformance/earl.ttl \
		-conformance.summary $(CURDIR)/docs/CONFORMANCE.md

# Regenerates the ANTLR parser under sparql/internal (needs Node; the output is committed).
generate:
	$(GO) generate ./sparql/...

# End-to-end benchmark (bench/, `wukongd bench`): LUBM-$(SCALE) from
# ../shared/datasets/lubm (or generated), load + reopen, L1–L7 and the 14
# standard queries in process (per execution mode) and over HTTP, and the
# mixed-workload throughput against clients. Report in var/bench/latest/.
# bench-peers runs Virtuoso and Oxigraph too (installs them if missing);
# bench-doc rewrites docs/PERFORMANCE.md's end-to-end section from the
# latest report. MACHINE names the machine in the report (e.g. dev-2c).
SCALE       ?= 40
MACHINE     ?=
BENCH_FLAGS ?=

bench: bench-e2e

bench-e2e: build
	$(BIN) bench --scale $(SCALE) --machine "$(MACHINE)" $(BENCH_FLAGS)

bench-peers: build
	$(BIN) bench --scale $(SCALE) --machine "$(MACHINE)" --peers virtuoso,oxigraph $(BENCH_FLAGS)

bench-doc: build
	$(BIN) bench report --in var/bench/latest/report.json --doc docs/PERFORMANCE.md

# How load and L1–L7 costs grow with the data (issue 15): LUBM at each of
# SCALES generated, loaded out of core and queried; results accumulate in
# SCALE_WORK/scale.json, the table and docs/scale.svg go into
# docs/PERFORMANCE.md. LUBM-2560 needs ~8 GB of RAM, ~30 GB of disk and
# about an hour on 2 cores. Not in CI.
SCALES     ?= 10,40,160,640,2560
SCALE_WORK ?= /work/big/scale
bench-scale: build
	$(BIN) bench-scale --scales $(SCALES) --work $(SCALE_WORK) --doc docs/PERFORMANCE.md $(BENCH_FLAGS)

# The hostile-input suite at length (internal/hostile): LUBM-1, 50 MB
# texts, and 8 concurrent attackers for HOSTILE_ATTACK against the RSS
# budget (2 GB). `make test` runs its short form.
HOSTILE_ATTACK ?= 5m
.PHONY: test-hostile fuzz
test-hostile:
	$(GO) test -count=1 -timeout 90m -v ./internal/hostile -args -long -attack $(HOSTILE_ATTACK)

# Parser fuzzing: each target for FUZZTIME (corpus in testdata/fuzz).
FUZZTIME ?= 2m
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./sparql
	for t in FuzzNTriples FuzzNQuads FuzzTurtle FuzzTriG FuzzRDFXML; do \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./loader || exit 1; done

# Micro-benchmarks next to the code.
bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

run: build
	$(BIN) serve --addr $(ADDR)

clean:
	rm -rf bin

# A writable cluster of 3 node processes on 127.0.0.1 over the default data
# set, each shard on CLUSTER_REPLICAS (2) nodes so any one may die (HTTP on :8080-8082, fabric on :7080-7082; writes with
# "Authorization: Bearer $(CLUSTER_TOKEN)" through any node, kept in each
# node's replicated log under the snapshot's raft/); runs in the foreground,
# Ctrl-C stops all. Flags for every node after --, e.g.
# make cluster CLUSTER_ARGS="-- --mode fork-join".
CLUSTER_TOKEN ?= dev-token
CLUSTER_REPLICAS ?= 2
.PHONY: cluster
cluster: build
	$(BIN) cluster --nodes 3 --replicas $(CLUSTER_REPLICAS) --update-token $(CLUSTER_TOKEN) $(CLUSTER_ARGS)
