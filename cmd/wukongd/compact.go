package main

import (
	"context"
	"fmt"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/service"
)

func init() {
	register(&command{name: "compact", summary: "merge a data directory's write-ahead log into its snapshot (offline)", run: runCompact})
}

func runCompact(args []string) error {
	fs := newFlagSet("compact", "DIR", `
Opens the data directory DIR as serve --data does (taking its lock, so no
server may run on it), replays its write-ahead log, merges the writes into
a new snapshot (written atomically, the previous one intact on failure)
and retires the log records it holds. A running server compacts by itself
(when its delta grows) and on POST /admin/compact.`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("compact: want one data directory")
	}
	dir := fs.Arg(0)
	m, err := graphstore.ReadDatasetManifest(dir)
	if err != nil {
		return err
	}
	start := time.Now()
	s, err := service.OpenDurable(dir, service.Options{Shards: m.Shards, CompactDeltaBytes: -1, CheckpointLogTriples: -1})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Recover(ctx); err != nil {
		return err
	}
	v, err := s.Compact(ctx)
	if err != nil {
		return err
	}
	info := s.Info()
	fmt.Printf("wukongd compact: %s at version %d: %d triples, %d terms (%.1f s)\n", dir, v, info.Triples, info.Terms, time.Since(start).Seconds())
	return nil
}
