package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/wukongd/wukongd/cluster"
	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
)

func init() {
	register(&command{name: "cluster", summary: "run a cluster of serve processes on this machine (Ctrl-C stops all)", run: runCluster})
}

// openClusterNode is serve's cluster mode (--node and --peers): this
// process is node `node` of the cluster whose fabric addresses are peers.
// limits carries serve's query limits (--max-query-memory, --max-memory,
// --max-value-bytes): Data, Node, Peers and Mode are set here.
func openClusterNode(data string, node int, peers []string, mode planner.Mode, limits cluster.Config, log zerolog.Logger) (*cluster.Node, error) {
	if data == "" {
		return nil, errors.New("--peers needs --data DIR (a snapshot made by 'wukongd load --shards N', N ≥ the number of nodes)")
	}
	start := time.Now()
	flog := log.With().Str("component", "fabric").Int("node", node).Logger()
	cfg := limits
	cfg.Data, cfg.Node, cfg.Peers, cfg.Mode = data, node, peers, mode
	cfg.Fabric = rdmakv.TCPOptions{Logf: func(format string, args ...any) { flog.Info().Msgf(format, args...) }}
	n, err := cluster.Open(cfg)
	if err != nil {
		return nil, err
	}
	info := n.Info()
	fmt.Printf("wukongd: node %d of %d serving snapshot %s: %d triples, %d terms, shards %v of %d on fabric %s (opened in %s)\n",
		node, len(peers), data, info.Triples, info.Terms, n.LocalShards(), info.Shards, peers[node], time.Since(start).Round(time.Millisecond))
	return n, nil
}

func runCluster(args []string) error {
	fs := newFlagSet("cluster", "[--nodes N] [--data DIR] [--http-port P] [--fabric-port P] [-- SERVE-FLAGS...]", `
Starts N 'wukongd serve --node I --peers ...' processes on 127.0.0.1 over
one snapshot, waits until every node is connected to every other, prints
their endpoints and runs until Ctrl-C (or SIGTERM), then stops them all.
Without --data it serves the embedded default data set, written once as a
snapshot of 2·N shards into the user cache directory. Node I serves HTTP on
--http-port+I and its fabric on --fabric-port+I. Flags after -- go to every
serve process (for example -- --mode fork-join).`)
	nodes := fs.Int("nodes", 3, "number of node processes")
	data := fs.String("data", "", "snapshot directory (default: the embedded data set)")
	host := fs.String("host", "127.0.0.1", "address to listen on")
	httpPort := fs.Int("http-port", 8080, "HTTP port of node 0 (node I: +I)")
	fabricPort := fs.Int("fabric-port", 7080, "fabric port of node 0 (node I: +I)")
	replicas := fs.Int("replicas", 1, "nodes hosting each shard (serve --replicas): with 2 or more, the cluster survives the loss of replicas-1 nodes")
	token := fs.String("update-token", "", "enable writes on every node (serve --update-token): SPARQL Update and Graph Store POST through the replicated log")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *nodes < 1 {
		return fmt.Errorf("--nodes %d", *nodes)
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the wukongd binary: %w", err)
	}
	if *data == "" {
		if *data, err = defaultClusterSnapshot(2 * *nodes); err != nil {
			return err
		}
	}
	serveArgs := fs.Args()
	if *replicas != 1 {
		serveArgs = append([]string{"--replicas", strconv.Itoa(*replicas)}, serveArgs...)
	}
	if *token != "" {
		serveArgs = append([]string{"--update-token", *token}, serveArgs...)
	}
	cfg := cluster.ProcsConfig{Binary: bin, Data: *data, Nodes: *nodes, Host: *host, Args: serveArgs, Output: os.Stderr}
	for i := 0; i < *nodes; i++ {
		cfg.HTTPPorts = append(cfg.HTTPPorts, *httpPort+i)
		cfg.FabricPorts = append(cfg.FabricPorts, *fabricPort+i)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	procs, err := cluster.StartProcs(wctx, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("wukongd cluster: %d nodes over %s (fabric %s); Ctrl-C stops all\n", *nodes, *data, strings.Join(procs.FabricAddrs(), ","))
	for i := 0; i < *nodes; i++ {
		fmt.Printf("  node %d: %s/sparql  (console %s/, metrics %s/metrics)\n", i, procs.URL(i), procs.URL(i), procs.URL(i))
	}
	exited := make(chan int, *nodes)
	for i := 0; i < *nodes; i++ {
		done, _ := procs.Done(i)
		go func(i int) {
			<-done
			exited <- i
		}(i)
	}
	select {
	case <-ctx.Done():
		fmt.Println("wukongd cluster: stopping")
	case i := <-exited:
		_, errOf := procs.Done(i)
		fmt.Printf("wukongd cluster: node %d exited (%v); stopping the others\n", i, errOf())
	}
	return procs.Stop()
}

// defaultClusterSnapshot writes the embedded default data set as a
// snapshot of shards shards into the user cache directory (once) and
// returns its path.
func defaultClusterSnapshot(shards int) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	c := datasets.DefaultLUBMConfig()
	dir := filepath.Join(base, "wukongd", "default-lubm"+strconv.Itoa(c.Universities)+"-seed"+strconv.FormatInt(int64(c.Seed), 10)+"-shards"+strconv.Itoa(shards))
	if _, err := graphstore.ReadManifest(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("cannot create the snapshot cache: %w", err)
	}
	st, err := service.BuildStore(shards, func(emit func(rdf.Triple) error) error {
		_, err := datasets.DefaultDataset(emit)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("cannot build the default data set: %w", err)
	}
	defer st.Close()
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		return "", err
	}
	fmt.Printf("wukongd cluster: wrote the default data set (%d triples, %d shards) to %s\n", st.Stats().Triples, shards, dir)
	return dir, nil
}
