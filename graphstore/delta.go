package graphstore

import (
	"context"
	"fmt"

	"github.com/wukongd/wukongd/rdmakv"
)

// The delta: writes over the immutable base (DESIGN.md §9).
//
// Every shard of a graph store may have a delta table (rdmakv.DeltaTable)
// in a second registered region of the shard's node, region ID
// NumShards()+shard, holding toggles under the same (vertex, predicate,
// direction) keys as the base, index vertices included. A toggle of ID x
// under key k flips x's membership in k's list: the writer appends x only
// when the change makes x enter or leave the list, so a list as of stamp s
// is the base list XOR the IDs toggled an odd number of times in groups
// with stamps ≤ s (mergeToggles). No delete marker is needed, and a reader
// at any stamp gets an exact list from the newest bytes.
//
// Readers: a Store version reads at its stamp; deltaOn says which shards
// have a delta at all, so a store with an empty delta reads exactly as
// before (no lookup, no merge).

// storeWriter is the write state of a graph store, kept by the dataset's
// writer: the delta tables and, per shard, how much each touched key's
// list has grown or shrunk against the base (so the writer knows when a
// list becomes empty or non-empty without reading it).
type storeWriter struct {
	deltas []*rdmakv.DeltaTable
	net    []map[Key]int64
}

func (w *storeWriter) close() error {
	var first error
	for _, d := range w.deltas {
		if d != nil {
			if err := d.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Delta sizing: each shard's region reserves deltaReserve bytes of address
// space (committed only as written) with at least deltaBuckets main
// buckets, and more for a big base: one bucket (7 slots) per
// deltaKeysPerBucket keys of the shard's base, up to maxDeltaBuckets, so
// that a delta of a fair fraction of the base (a bulk insertion, the
// deltas compaction is triggered at) keeps its chains short — a key's
// lookup and a peer's READ of it cost a bucket or two, not a chain of
// overflow buckets. The buckets' pages are committed as keys hash into
// them: a small delta costs the pages it touches.
var (
	deltaReserve       = 4 << 30
	deltaBuckets       = 1 << 14
	maxDeltaBuckets    = 1 << 19
	deltaKeysPerBucket = 32
)

// deltaBucketsFor returns the main buckets of the delta of a shard whose
// base has baseKeys keys.
func deltaBucketsFor(baseKeys int) int {
	return min(max(deltaBuckets, baseKeys/deltaKeysPerBucket), maxDeltaBuckets)
}

// mergeToggles replaces the sorted list dst[start:] with itself XOR the
// IDs of tg that occur an odd number of times. tg is reordered.
func mergeToggles(dst []ID, start int, tg []uint64) []ID {
	if len(tg) == 0 {
		return dst
	}
	t := rdmakv.OddOnes(tg)
	if len(t) == 0 {
		return dst
	}
	base := dst[start:]
	out := make([]ID, 0, len(base)+len(t))
	out = symDiff(out, base, t)
	return append(dst[:start], out...)
}

// MergeToggles is mergeToggles for a reader of delta records outside the
// package (a cluster node reading another node's delta at a stamp through
// rdmakv.LookupDeltaBatch).
func MergeToggles(dst []ID, start int, tg []uint64) []ID { return mergeToggles(dst, start, tg) }

// symDiff appends the symmetric difference of sorted distinct a and t.
func symDiff(out, a []ID, t []uint64) []ID {
	i, j := 0, 0
	for i < len(a) && j < len(t) {
		switch x, y := a[i], ID(t[j]); {
		case x < y:
			out = append(out, x)
			i++
		case x > y:
			out = append(out, y)
			j++
		default:
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	for ; j < len(t); j++ {
		out = append(out, ID(t[j]))
	}
	return out
}

// mergeLocalDelta merges the delta of key k of local shard o into the
// list dst[start:].
func (s *Store) mergeLocalDelta(dst []ID, start, o int, k Key) []ID {
	recs := s.sh.w.deltas[o].Records(uint64(k))
	if len(recs) == 0 {
		return dst
	}
	return mergeToggles(dst, start, rdmakv.AppendVisible(nil, recs, s.stamp))
}

// mergeBatchDelta merges the deltas of keys into the lists AppendEdgesBatch
// read (dst[start0:], ends): the local shards' directly, the others' in one
// batched fabric lookup.
func (v *ShardView) mergeBatchDelta(ctx context.Context, keys []Key, shard int, dst []ID, start0 int, ends []int) ([]ID, []int, error) {
	s := v.s
	owner := func(k Key) int { return v.keyOwner(k, shard) }
	var lookups []rdmakv.DeltaLookup
	var remoteAt []int
	for i, k := range keys {
		if o := owner(k); s.deltaOn[o] && !v.localShard(o) {
			rd, err := s.remoteDelta(ctx, v.node, o)
			if err != nil {
				return dst, ends, fmt.Errorf("shard %d: %w", o, err)
			}
			lookups = append(lookups, rdmakv.DeltaLookup{Delta: rd, Key: uint64(k)})
			remoteAt = append(remoteAt, i)
		}
	}
	var rvals []uint64
	var rends []int
	if len(lookups) > 0 {
		var err error
		rvals, rends, err = rdmakv.LookupDeltaBatch(ctx, s.fabric, v.node, lookups, s.stamp, nil, nil)
		if err != nil {
			return dst, ends, fmt.Errorf("cannot read the deltas of %d keys through the fabric: %w", len(lookups), err)
		}
	}
	var tg []uint64
	out := make([]ID, 0, len(dst)-start0)
	prev, ri, rstart := start0, 0, 0
	for i, k := range keys {
		tg = tg[:0]
		if ri < len(remoteAt) && remoteAt[ri] == i {
			tg = append(tg, rvals[rstart:rends[ri]]...)
			rstart = rends[ri]
			ri++
		} else if o := owner(k); s.deltaOn[o] {
			tg = rdmakv.AppendVisible(tg, s.sh.w.deltas[o].Records(uint64(k)), s.stamp)
		}
		base := dst[prev:ends[i]]
		prev = ends[i]
		if len(tg) == 0 {
			out = append(out, base...)
		} else {
			out = symDiff(out, base, rdmakv.OddOnes(tg))
		}
		ends[i] = start0 + len(out)
	}
	return append(dst[:start0], out...), ends, nil
}

// ListsSameAs reports whether key k's list reads the same on every shard
// of s as on old, an earlier version of the same store: they share the
// base and the delta regions (a compaction or a reopened checkpoint makes
// another store), and no shard's delta has a record of k from a write
// after old's stamp up to s's. False when it cannot tell: a shard whose
// delta is another process's, or old is not an earlier version of s.
// The engine of a new version keeps its predecessor's bitmaps of the
// classes whose type index (IndexVertex, c, In) is the same
// (exec.Engine.InheritTypeSets).
func (s *Store) ListsSameAs(old *Store, k Key) bool {
	if old == nil || old.sh != s.sh || old.n != s.n || old.stamp > s.stamp {
		return false
	}
	w := s.sh.w
	for o := range s.n {
		if s.tables[o] == nil || old.tables[o] != s.tables[o] {
			return false
		}
		if old.stamp == s.stamp || w == nil || w.deltas[o] == nil {
			continue
		}
		if rdmakv.StampedIn(w.deltas[o].Records(uint64(k)), old.stamp, s.stamp) {
			return false
		}
	}
	return true
}

// writer returns s's write state, creating it.
func (s *Store) writer() *storeWriter {
	if s.sh.w == nil {
		w := &storeWriter{deltas: make([]*rdmakv.DeltaTable, s.n), net: make([]map[Key]int64, s.n)}
		for i := range w.net {
			w.net[i] = map[Key]int64{}
		}
		s.sh.w = w
	}
	return s.sh.w
}

// DeltaBytes returns the bytes the local shards' deltas use.
func (s *Store) DeltaBytes() uint64 {
	var n uint64
	if w := s.sh.w; w != nil {
		for _, d := range w.deltas {
			if d != nil {
				n += d.UsedBytes()
			}
		}
	}
	return n
}

// deltaTable returns shard i's delta table, creating and registering it.
func (s *Store) deltaTable(i int) (*rdmakv.DeltaTable, error) {
	w := s.writer()
	if w.deltas[i] != nil {
		return w.deltas[i], nil
	}
	if s.tables[i] == nil {
		return nil, fmt.Errorf("cannot write shard %d: %w", i, ErrAllShardsNeeded)
	}
	d, err := rdmakv.NewDeltaTable(deltaReserve, deltaBucketsFor(s.tables[i].Len()))
	if err != nil {
		return nil, err
	}
	// On the fabric every version of the store reads through.
	if err := s.fabric.Register(s.NodeOf(i), s.deltaRegion(i), d.Region()); err != nil {
		d.Close()
		return nil, fmt.Errorf("cannot register the delta of shard %d: %w", i, err)
	}
	w.deltas[i] = d
	return d, nil
}
