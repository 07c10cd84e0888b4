// Package rdmakv is the RDMA-readable key/value layer: registered regions
// (flat byte arenas addressed by offsets, in memory or mapped from a file), a
// DrTM-KV style cluster-hashing table over a region, and the Fabric interface
// through which one node reads another node's regions one-sidedly and sends it
// messages.
//
// In: keys (uint64) and sorted lists of uint64 values from graphstore. Out:
// the list for a key, read locally (Table) or through a Fabric
// (RemoteTable, LookupBatch), and operation/byte counters.
//
// # Regions
//
// A Region (NewRegion over a []byte, or MapFile for a read-only file
// mapping) holds no Go pointers; its bytes are immutable once registered.
// Regions are registered on a Fabric under (node, RegionID).
//
// # Tables
//
// TableBuilder lays out (key, sorted list) entries as a table in one
// region; the layout (header, buckets of 8 slots of 16 bytes whose last
// slot chains to an overflow bucket, value area) is documented bit by bit
// in table.go. A list of one value is stored inline in its slot, so a
// remote lookup of a single-valued key is one READ. Values are 4 or 8 bytes
// wide per table. The table is built offline from all its keys, so
// overflow buckets are packed (shared by several main buckets). At the
// default load (TableOptions.Load 0.97 keys per main slot) about 93% of the
// slots of LUBM-10's tables hold a key (metric slot-load of
// `go test ./graphstore -run '^$' -bench StoreSize -benchtime 1x`); a key
// in an overflow bucket costs a second bucket READ.
// AddShared stores a list equal to an earlier AddShared list once (both
// slots point at it), for lists that repeat such as predicate sets.
//
// Table is the local view (lookups read the bytes directly, no error
// path); RemoteTable is a peer's table through a Fabric: OpenRemoteTable
// READs the header once, AppendValues READs the bucket chain and then the
// value; LookupBatch does many keys of any peers in as few ReadBatch rounds
// as the chains need (usually two). Absent keys give empty lists; errors
// come only from the fabric or a damaged table (ErrCorrupt).
//
// Slices returned by Append* are the caller's (dst grown); nothing aliases
// a region.
//
// # Fabric
//
// Fabric: Read/ReadBatch (one-sided), Send/Recv (receive rings), Counters.
// Every call takes a context and returns an error; ErrNodeDown,
// ErrNoRegion, ErrOutOfRange, ErrClosed, ErrNotLocal are the sentinels.
// ContextWithMeter attaches a per-query Meter that is charged alongside the
// fabric's totals.
//
// Loopback is the in-process fabric of N nodes; a NetModel charges
// deterministic simulated time per round trip, per byte and per message to
// Counters.ModelNanos (and sleeps it if asked). SetDown simulates a failed
// node.
//
// TCP (NewTCP) is the fabric of one process per node (a node hosts shards s
// with s mod nodes == node); IsLocal is true only for its own node. Its
// goroutines answer the peers' READs from the registered regions without
// the query engine; the READs of a ReadBatch to one peer travel in one
// frame and one round trip; messages are acknowledged once in the peer's
// ring. Frames (tcp_frame.go) are length-checked and carry a CRC-32C; a
// handshake checks the cluster size, the node and a cluster id. Connections
// are kept up with backoff and heartbeats; a call to a peer that is down
// fails with ErrNodeDown, never hangs. Peers() gives per-peer counters and
// link state, ContextWithPeerMeter per-peer counts of one query. SimNet is a
// deterministic simulated network (seeded drop, corruption, delay,
// partition, crash) for TCP's fault tests without sockets.
package rdmakv
