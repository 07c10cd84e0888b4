// Package cluster runs wukongd as one process per node over the tcp fabric
// (DESIGN.md §3), and manages such processes for tests and `make cluster`.
//
// In: a snapshot directory written by `wukongd load --shards N`, this
// node's index and every node's fabric address. Out: a web.Backend that
// serves SPARQL over the whole cluster from this node, plus per-peer fabric
// metrics.
//
// # A node
//
// Open maps the snapshot's dictionary, statistics and the shards s with
// s mod nodes == node (the others stay on their nodes), starts the
// rdmakv.TCP fabric (its goroutines answer the peers' one-sided READs from
// the mapped shards), and runs an exec.Engine whose workers serve only the
// local shards (exec.Config.LocalShards). ShardStore adapts the partial
// store to the engine: a lookup of a local shard reads its region, a
// lookup of a remote shard is a batched rdmakv.LookupBatch through the
// fabric (one round trip per peer per round); fork-join messages carry a
// small header (destination and source shard) and a router hands them to
// the destination shard's dispatcher. Every node serves HTTP and
// coordinates the queries it receives.
//
// The cluster id, a hash of the snapshot's manifest, is checked at every
// fabric handshake, so nodes serving different data refuse each other.
//
// # Writes and versions
//
// Writes go through a replicated log (package raftlog, Raft over the same
// fabric connections; replicate.go): any node turns a request into its
// changes, proposes them, and answers once they are applied there; every
// node applies every entry in order with graphstore.Dataset.ApplyHosted.
// A query reads the version its coordinator applied; the version travels
// with its fork-join messages, and every lookup merges the shard's delta
// at that version once the shard's node has applied it (versions.go).
// A CLEAR or DROP of the default graph (and Graph Store PUT and DELETE)
// is an entry too: every node empties the lists of the shards it holds
// (each deletes the triples its shards know). Named graphs are refused.
//
// # Failures
//
// A peer that is down makes the READs and messages that need it fail with
// rdmakv.ErrNodeDown (after at most the fabric's ConnectWait), which the
// query reports (503 over HTTP). A query coordinated here that sent a
// sub-query to a node is cancelled, with a cause naming the node, when the
// fabric loses that node (rdmakv.TCPOptions.OnPeerLost), so it does not
// wait for a reply that cannot come; a sub-query forked on by another node
// still waits for the query's deadline. Other queries go on; the fabric
// reconnects by itself when the peer returns. Ready (/readyz) fails while
// a peer is not connected.
//
// # Processes
//
// Procs starts N `wukongd serve --node I --peers …` processes of a binary
// on 127.0.0.1 with free ports, waits until they are ready, and can kill
// and restart single nodes (the end-to-end test and `wukongd cluster`).
package cluster
