// Package raftlog is the replicated log of a cluster: one Raft group of
// every node (go.etcd.io/raft/v3, the library under etcd and CockroachDB;
// this package writes no consensus of its own), its log kept durable on
// disk with the framing, CRC-32C and group-committed fdatasync of package
// wal, and the Ready loop that persists, sends and applies.
//
// In: a directory, this node's id (1..Peers), a function that sends an
// encoded Raft message to a peer (the cluster's fabric), the encoded
// messages that peers send here (Step), and proposals (Propose). Out: the
// committed entries, delivered to Config.Apply once each, in log order, on
// every node; Propose returns once its entry is applied on this node, with
// what Apply returned for it.
//
// # The log on disk
//
// The directory is a wal.Log. Each Ready that carries state to keep
// becomes one record (LSN = a record counter, not a Raft index): the hard
// state, the new entries (which may overwrite a suffix: Raft's
// log-matching rule), and a snapshot's metadata. Opening replays every
// record into a raft.MemoryStorage in order (later entries at an index
// replace earlier ones, as raft.MemoryStorage.Append does), so the log
// after a crash is exactly what was synced: wal cuts a torn or corrupt
// tail at its last whole record. A record is synced before the Ready's
// messages are sent (a vote or an acknowledgement never gets ahead of the
// disk) and before its entries are applied.
//
// The application's state is rebuilt from the log at each start: Apply
// sees every committed entry again from the first (Config.Applied is 0).
// In a cluster the log is the store's write-ahead log — there is no
// second one.
//
// # Proposals
//
// A proposal's entry starts with a 16-byte id (a random per-process
// prefix and a counter), so a proposer recognises its own entry when it
// is applied, and knows its proposal is lost when another entry is
// committed at the index it was appended at (a leader change). A node
// without a leader refuses proposals at once (ErrNoLeader); a proposal
// that is not applied within its context's deadline fails with the
// context's error (its outcome is then unknown: it may still commit).
package raftlog
