package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/wukongd/wukongd/cluster"
	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

func init() {
	register(&command{name: "serve", summary: "serve the SPARQL endpoint, graph store and web console", run: runServe})
}

// listFlag collects a repeatable, comma-separated flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func runServe(args []string) error {
	fs := newFlagSet("serve", "[--data DIR | --empty] [--addr HOST:PORT] [flags]", `
Serves the SPARQL 1.1 Protocol on /sparql (and /query, /update), the Graph
Store Protocol on /store, the web console on /, and /healthz, /readyz and
/metrics. With neither --data nor --empty it serves the embedded LUBM
default dataset. Writes (SPARQL Update, Graph Store PUT/POST/DELETE) are off
unless --update-token is given; they then need "Authorization: Bearer TOKEN".`)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	data := fs.String("data", "", "snapshot directory to serve (made by 'wukongd load')")
	empty := fs.Bool("empty", false, "start with an empty store")
	token := fs.String("update-token", "", "enable writes, authorized by this bearer token")
	var cors, services, loads listFlag
	fs.Var(&cors, "cors", "allow browser calls from this origin (repeatable, comma-separated; * for any)")
	fs.Var(&services, "allow-service", "allow SERVICE calls to this endpoint IRI (repeatable; * for any)")
	fs.Var(&loads, "allow-load", "allow LOAD from this IRI (repeatable; PREFIX* for every IRI starting with PREFIX; * for any)")
	loadMax := fs.Int64("load-max-bytes", service.DefaultLoadMaxBytes, "largest document a LOAD fetches, in bytes")
	loadTimeout := fs.Duration("load-timeout", service.DefaultLoadTimeout, "time a LOAD's fetch may take")
	timeout := fs.Duration("timeout", 30*time.Second, "default per-query timeout")
	maxTimeout := fs.Duration("max-timeout", 5*time.Minute, "maximum per-query timeout a request may ask for")
	maxRows := fs.Int("max-rows", 1_000_000, "result row cap (negative: none)")
	maxBody := fs.Int64("max-body", 64<<20, "request body cap in bytes")
	maxConc := fs.Int("max-concurrent", 0, "concurrent query cap (default 4×GOMAXPROCS)")
	maxUpd := fs.Int("max-concurrent-updates", 16, "concurrent update and graph-store-write cap (their own slots; queries' slots are not taken)")
	readTimeout := fs.Duration("read-timeout", time.Minute, "longest a request (headers and body) may take to arrive")
	writeTimeout := fs.Duration("write-timeout", 30*time.Second, "longest a response write may make no progress (a client that stops reading is cut)")
	respBuffer := fs.Int("response-buffer", web.DefaultResponseBuffer, "bytes of an answer held (and charged to its query's memory budget) before its 200 is sent: an answer that fits is sent whole or replaced by an error status; a longer one streams, and is reset if it must stop")
	idleTimeout := fs.Duration("idle-timeout", 2*time.Minute, "longest an idle keep-alive connection stays open")
	httpLoop := fs.Bool("http-loop", false, "serve /sparql and /query with wukongd's own HTTP/1.1 loop (web/h1.go) instead of net/http; off by default until a quiet A/B shows it cheaper than net/http (docs/DESIGN.md §8.2)")
	maxConns := fs.Int("max-connections", 1024, "open connection cap (past it new connections wait to be accepted)")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	// Cluster mode (one process per node over the tcp fabric; cluster.go).
	nodeIdx := fs.Int("node", 0, "with --peers: this node's index in the peer list")
	var peers listFlag
	fs.Var(&peers, "peers", "fabric address of every node (HOST:PORT,HOST:PORT,…): run as node --node of that cluster over --data")
	raftDir := fs.String("raft-dir", "", "with --peers: this node's replicated log (the cluster's write-ahead log; default DATA/raft/node-I)")
	replicas := fs.Int("replicas", 1, "with --peers: the number of nodes hosting each shard (shard s on nodes s, s+1, … mod N; every node must be given the same value): with 2, any one node may die without failing queries")
	snapEntries := fs.Int("raft-snapshot-entries", 0, "with --peers: take a snapshot of the replicated log (and truncate it) after this many applied entries (0: 10,000; -1: never)")
	snapKeep := fs.Int("raft-snapshot-keep", 0, "with --peers: entries kept in memory before a snapshot for peers slightly behind (0: 1,024)")
	commitTimeout := fs.Duration("commit-timeout", 10*time.Second, "with --peers: how long a write waits to be committed and applied on this node (past it 503, outcome unknown)")
	modeName := fs.String("mode", "auto", "execution mode of every query: auto, in-place or fork-join")
	maxQueryMem := fs.Int64("max-query-memory", 0, "memory one query may account, in bytes (default 1/32 of RAM, at least 256 MiB; negative: none); past it 507")
	maxMem := fs.Int64("max-memory", 0, "memory all running queries together may account, in bytes (default 1/16 of RAM, at least 512 MiB; negative: none); past it 503")
	maxValue := fs.Int("max-value-bytes", 0, "largest string an expression may make (CONCAT, REPLACE, GROUP_CONCAT, …), in bytes (default 16 MiB); past it 507")
	gcPercent := fs.Int("gc-percent", defaultGCPercent, "garbage collection target (GOGC; 0: Go's default; $GOGC, when set, wins)")
	checkpoint := fs.Int64("checkpoint-log-triples", service.DefaultCheckpointLogTriples,
		"with --data and writes: write a checkpoint of the delta in the background when the log a restart would replay holds this many triples (bounds the restart; negative: never by the log)")
	compactLog := fs.Int64("compact-log-triples", service.DefaultCompactLogTriples,
		"with --data and writes: compact in the background when the log since the snapshot holds this many triples (bounds the log kept on disk; negative: only by delta size)")
	verify := fs.Bool("verify", false, "verify the snapshot's checksums at startup (reads all of it; without, startup does not read the data)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the server to this file (until it stops on SIGINT or SIGTERM)")
	tracePath := fs.String("trace", "", "write a runtime execution trace of the server to this file (until it stops on SIGINT or SIGTERM; go tool trace reads it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopTrace, err := startTrace(*tracePath)
	if err != nil {
		return err
	}
	defer stopTrace()
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *data != "" && *empty {
		return errors.New("--data and --empty exclude each other")
	}
	lvl, err := zerolog.ParseLevel(*level)
	if err != nil {
		return fmt.Errorf("bad --log-level: %w", err)
	}
	log := zerolog.New(os.Stderr).Level(lvl).With().Timestamp().Str("cmd", "serve").Logger()
	tuneGC(*gcPercent, log)

	mode, ok := planner.ParseMode(*modeName)
	if !ok {
		return fmt.Errorf("bad --mode %q (auto, in-place or fork-join)", *modeName)
	}
	var backend web.Backend
	var registry *prometheus.Registry
	var recovering *service.Service // replays its write-ahead log once serving
	var deltaBytes func() uint64    // the served write delta's size (nil in a cluster node)
	if len(peers) > 0 {
		node, err := openClusterNode(*data, *nodeIdx, peers, mode,
			cluster.Config{MaxQueryMemory: *maxQueryMem, MaxMemory: *maxMem, MaxValueBytes: *maxValue,
				RaftDir: *raftDir, WriteTimeout: *commitTimeout, Replicas: *replicas,
				SnapshotEntries: *snapEntries, SnapshotKeep: *snapKeep}, log)
		if err != nil {
			return err
		}
		defer node.Close()
		backend, registry = node.Backend(), node.Registry()
	} else {
		svc, err := openServeService(*data, *empty, service.Options{Mode: mode, LoadMaxBytes: *loadMax, LoadTimeout: *loadTimeout,
			MaxQueryMemory: *maxQueryMem, MaxMemory: *maxMem, MaxValueBytes: *maxValue, VerifyChecksums: *verify,
			CheckpointLogTriples: *checkpoint, CompactLogTriples: *compactLog,
			OnCheckpoint: func(v uint64, n int64, took time.Duration) {
				fmt.Printf("wukongd: checkpoint of version %d written to %s (%d bytes in %s)\n", v, filepath.Join(*data, service.CheckpointDir), n, took.Round(time.Millisecond))
			}, OnCompacted: func(v uint64) {
				fmt.Printf("wukongd: compacted version %d into the snapshot of %s (the log retired up to it)\n", v, *data)
			}}, *token != "")
		if err != nil {
			return err
		}
		defer svc.Close()
		backend, recovering = svc, svc
		deltaBytes = svc.DeltaBytes
	}
	budget := *maxMem
	if budget == 0 {
		budget = exec.DefaultMemory()
	}
	heapCtx, stopHeap := context.WithCancel(context.Background())
	defer stopHeap()
	limitHeap(heapCtx, budget, deltaBytes, log)
	var examples []web.Example
	for _, q := range datasets.LUBMQueries() {
		name := q.Name
		if q.Label != "" {
			name = q.Label + " (" + q.Name + ")"
		}
		examples = append(examples, web.Example{Name: name, Description: q.Description, Query: q.Text})
	}
	srv, err := web.New(web.Options{
		Backend:              backend,
		Logger:               log,
		DefaultTimeout:       *timeout,
		MaxTimeout:           *maxTimeout,
		MaxRows:              *maxRows,
		MaxBodyBytes:         *maxBody,
		MaxConcurrent:        *maxConc,
		MaxConcurrentUpdates: *maxUpd,
		WriteTimeout:         *writeTimeout,
		ResponseBuffer:       *respBuffer,
		UpdateToken:          *token,
		CORSOrigins:          cors,
		AllowedServices:      services,
		AllowedLoads:         loads,
		Examples:             examples,
		Registry:             registry,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", *addr, err)
	}
	if *maxConns > 0 {
		ln = web.LimitListener(ln, *maxConns)
	}
	// The query endpoint's own HTTP/1.1 loop, net/http for the rest
	// (web/h1.go); the web layer's progress timeout (--write-timeout)
	// bounds each write.
	// net/http by default: the loop's lost-byte race is fixed, but under
	// load it was not shown cheaper (docs/DESIGN.md §8.2).
	var hs interface {
		Serve(net.Listener) error
		Shutdown(context.Context) error
		Close() error
	}
	if *httpLoop {
		hs = web.NewHTTPServer(srv, web.HTTPOptions{ReadHeaderTimeout: min(10*time.Second, *readTimeout), ReadTimeout: *readTimeout,
			IdleTimeout: *idleTimeout, MaxHeaderBytes: 1 << 20})
	} else {
		// No WriteTimeout: it would cut long results that keep flowing; the
		// web layer's progress timeout (--write-timeout) bounds each write.
		hs = &http.Server{Handler: srv, ReadHeaderTimeout: min(10*time.Second, *readTimeout), ReadTimeout: *readTimeout,
			IdleTimeout: *idleTimeout, MaxHeaderBytes: 1 << 20, ConnContext: web.ConnContext}
	}
	fmt.Printf("wukongd serving on http://%s (console: http://%s/, endpoint: http://%s/sparql)\n", ln.Addr(), ln.Addr(), ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc, recErr := make(chan error, 1), make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if recovering != nil {
		// /readyz answers 503 with the progress until the log is replayed.
		go func() {
			if err := recoverService(ctx, recovering, *data); err != nil {
				recErr <- err
			}
		}()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case err := <-recErr:
		hs.Close()
		return err
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// newServeBackend builds the query backend for serve: the snapshot in
// dataDir (--data, mapped, ready without reparsing), an empty store
// (--empty), or the embedded LUBM default (datasets.DefaultDataset,
// generated and built in memory: a fraction of a second, never
// downloaded). A data directory with a write-ahead log is recovered
// (locked, the log replayed) before it returns. It prints what it serves.
func newServeBackend(dataDir string, empty bool) (web.Backend, error) {
	return newServeBackendMode(dataDir, empty, planner.ModeAuto)
}

// newServeBackendMode is newServeBackend with the execution mode of every
// query (--mode).
func newServeBackendMode(dataDir string, empty bool, mode planner.Mode) (web.Backend, error) {
	return newServeBackendOpts(dataDir, empty, service.Options{Mode: mode})
}

// newServeBackendOpts is newServeBackend with the service's options.
func newServeBackendOpts(dataDir string, empty bool, opts service.Options) (web.Backend, error) {
	svc, err := openServeService(dataDir, empty, opts, false)
	if err != nil {
		return nil, err
	}
	if err := recoverService(context.Background(), svc, dataDir); err != nil {
		svc.Close()
		return nil, err
	}
	return svc, nil
}

// openServeService opens what serve serves. With a data directory and
// writes on (--update-token), or a data directory that has a write-ahead
// log, writes are durable: the directory is locked and the service is not
// ready until recoverService has replayed the log. Otherwise writes stay
// in memory.
func openServeService(dataDir string, empty bool, opts service.Options, writes bool) (*service.Service, error) {
	start := time.Now()
	var svc *service.Service
	var err error
	var what, durability string
	switch {
	case dataDir != "":
		if _, err := os.Stat(dataDir); err != nil {
			return nil, fmt.Errorf("cannot serve --data: %w", err)
		}
		logDir := filepath.Join(dataDir, service.LogDir)
		_, statErr := os.Stat(logDir)
		if writes || statErr == nil {
			svc, err = service.OpenDurable(dataDir, opts)
			durability = "writes are durable in " + logDir
		} else {
			svc, err = service.Open(dataDir, opts)
			durability = "read-only"
		}
		what = "snapshot " + dataDir
	case empty:
		svc, err = service.NewEmpty(opts)
		what, durability = "an empty store", "writes stay in memory"
	default:
		svc, err = service.NewDefault(opts)
		c := datasets.DefaultLUBMConfig()
		what = fmt.Sprintf("the embedded default data set (generated LUBM, %d university, seed %d)", c.Universities, c.Seed)
		durability = "writes stay in memory"
	}
	if err != nil {
		return nil, err
	}
	if rec := svc.LogRecovery(); rec.Cut != "" {
		fmt.Fprintf(os.Stderr, "wukongd: the write-ahead log was cut at its last whole record (%d): %s; %d bytes cut, segments set aside: %v\n",
			rec.Last, rec.Cut, rec.CutBytes, rec.CutSegments)
	}
	info := svc.Info()
	fmt.Printf("wukongd: serving %s: %d triples, %d terms, %d shards (opened in %s; %s)\n",
		what, info.Triples, info.Terms, info.Shards, time.Since(start).Round(time.Millisecond), durability)
	return svc, nil
}

// recoverService replays the write-ahead log of svc, if it has one, and
// prints how long it took.
func recoverService(ctx context.Context, svc *service.Service, dataDir string) error {
	rec := svc.LogRecovery()
	if rec.Records == 0 {
		return svc.Recover(ctx)
	}
	start := time.Now()
	if err := svc.Recover(ctx); err != nil {
		return err
	}
	info := svc.Info()
	ck := svc.CheckpointRecovery()
	for _, why := range ck.Refused {
		fmt.Fprintf(os.Stderr, "wukongd: checkpoint not used: %s\n", why)
	}
	first := rec.First
	if ck.Loaded != "" {
		fmt.Printf("wukongd: loaded checkpoint %s (version %d) in %s\n", ck.Loaded, ck.Version, ck.Elapsed.Round(time.Millisecond))
		first = max(first, ck.Version+1)
	}
	fmt.Printf("wukongd: replayed the write-ahead log of %s (records %d..%d) in %s: %d triples, %d terms, version %d; ready\n",
		dataDir, first, rec.Last, time.Since(start).Round(time.Millisecond), info.Triples, info.Terms, svc.Version())
	return nil
}
