package graphstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// Checkpoints of the delta alone (DESIGN.md §9): a version of a dataset
// written as what it adds to the snapshot its graphs were opened from —
// every graph's delta, the dictionary's overlay, the statistics — so that
// a restart maps the snapshot, loads the checkpoint and replays only the
// log records after it, instead of the whole log.
//
// Layout of a checkpoint directory (DIR/ckpt/<version> for the service):
//
//	checkpoint.json         first line: the CRC-32C (8 hex digits) of the
//	                        rest, the manifest (CheckpointManifest)
//	dict.bin                the overlay's terms, roles and aliases
//	g-NNNNN/stats.json      graph NNNNN's statistics (0: the default graph)
//	g-NNNNN/delta-SSSSS.img shard SSSSS's delta, squashed (rdmakv images)
//	g-NNNNN/net-SSSSS.bin   the writer's per-key list growth of that shard
//
// Every file but the manifest is listed in it with its size and CRC-32C.
// A graph's base is a graph of the snapshot (named by the snapshot's
// directory of it) or empty (a graph created, cleared or dropped since).
// The snapshot is named by a tag (SnapshotTag: a hash of its manifest), so
// a checkpoint over an older snapshot is never applied to a newer one.

// CheckpointFormatVersion is the format of checkpoints this build writes
// and reads.
const CheckpointFormatVersion = 1

// ErrBadCheckpoint is wrapped by errors about a checkpoint that is
// damaged, incomplete, or not over the snapshot it is opened on.
var ErrBadCheckpoint = errors.New("bad checkpoint")

// ErrNoCheckpoint is returned by Dataset.Checkpoint for a dataset whose
// versions cannot be checkpointed (one with an inferred layer, whose
// reasoner keeps state of its own; or one not over a marked snapshot).
var ErrNoCheckpoint = errors.New("cannot checkpoint this dataset")

const checkpointManifestName = "checkpoint.json"

// CheckpointManifest is the manifest of a checkpoint.
type CheckpointManifest struct {
	FormatVersion int    `json:"format_version"`
	Version       uint64 `json:"version"` // the dataset version checkpointed
	Stamp         uint64 `json:"stamp"`   // its delta stamp
	Snapshot      string `json:"snapshot"`
	SnapVersion   uint64 `json:"snapshot_version"`
	Shards        int    `json:"shards"`
	// The overlay: the base dictionary's counts it starts from, and how
	// many entries of each kind it holds.
	DictPC0 uint64            `json:"dict_pc0"`
	DictV0  uint64            `json:"dict_v0"`
	DictPC  int               `json:"dict_pc"`
	DictV   int               `json:"dict_v"`
	Roles   int               `json:"roles"`
	Aliases int               `json:"aliases"`
	Graphs  []CheckpointGraph `json:"graphs"`
	Files   []FileInfo        `json:"files"`
	// LogWeight is the caller's (Checkpoint.LogWeight): the service's
	// weight of the log from the snapshot up to this version.
	LogWeight int64 `json:"log_weight"`
}

// CheckpointGraph is a graph of a checkpoint.
type CheckpointGraph struct {
	Name    *GraphName `json:"name,omitempty"` // nil: the default graph
	ID      ID         `json:"id,omitempty"`
	Base    string     `json:"base"` // "snapshot" or "empty"
	BaseDir string     `json:"base_dir,omitempty"`
	Dir     string     `json:"dir"`
	Triples uint64     `json:"triples"`
	Deltas  []int      `json:"deltas,omitempty"` // the shards with a delta image
}

// snapBase says which graph of which snapshot a store's base is.
type snapBase struct {
	tag uint64
	dir string // "" for the default graph, else graph-NNNNN
}

// SnapshotTag returns the tag of the snapshot at dir: a hash of its
// manifest, different for every snapshot written (the manifest holds
// every file's checksum and the version).
func SnapshotTag(dir string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return 0, fmt.Errorf("cannot read the manifest of snapshot %s: %w", dir, err)
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64(), nil
}

// MarkSnapshot records that d's graphs are the graphs of the snapshot
// tagged tag, as OpenDataset opened them or WriteDataset wrote them: the
// checkpoints of d's later versions name their bases by it. d must have
// no delta and no overlay (it is what the snapshot holds).
func (d *Dataset) MarkSnapshot(tag uint64) error {
	if d.needsCompaction() {
		return fmt.Errorf("BUG: marking a dataset with a delta as a snapshot")
	}
	d.def.st.sh.snap = &snapBase{tag: tag}
	for i, n := range d.named {
		n.g.st.sh.snap = &snapBase{tag: tag, dir: graphDirName(i + 1)}
	}
	return nil
}

// Checkpoint is a version of a dataset taken for WriteCheckpoint: what
// must be copied while no write runs (the writer's per-key counts, which
// only the newest version matches), and the version itself, read later.
type Checkpoint struct {
	// LogWeight is written into the manifest as it is (the caller's
	// measure of the log the checkpoint holds).
	LogWeight int64

	d      *Dataset
	tag    uint64
	snapV  uint64
	graphs []ckptGraph
}

type ckptGraph struct {
	name rdf.Term
	id   ID
	st   *Store
	base *snapBase // nil: empty
	nets []map[Key]int64
}

// Checkpoint takes d, the newest version of its lineage (no write may run
// until it returns), for a checkpoint over the snapshot tagged tag at
// version snapVersion. It copies the writer's per-key counts; the rest is
// read by Write, which may run while writes go on. d must stay open until
// Write returns.
func (d *Dataset) Checkpoint(tag, snapVersion uint64) (*Checkpoint, error) {
	if d.inferred != nil {
		return nil, fmt.Errorf("%w: it has an inferred layer", ErrNoCheckpoint)
	}
	d.lin.mu.Lock()
	newest := d.lin.stamp == d.stamp
	d.lin.mu.Unlock()
	if !newest {
		return nil, fmt.Errorf("%w: version %d is %w", ErrNoCheckpoint, d.version, errNotNewest)
	}
	c := &Checkpoint{d: d, tag: tag, snapV: snapVersion}
	add := func(name rdf.Term, id ID, st *Store) error {
		g := ckptGraph{name: name, id: id, st: st}
		if len(st.LocalShards()) != st.n {
			return fmt.Errorf("%w: %w", ErrNoCheckpoint, ErrAllShardsNeeded)
		}
		if b := st.sh.snap; b != nil && b.tag == tag {
			g.base = b
		} else {
			for _, t := range st.tables {
				if t.Len() != 0 {
					return fmt.Errorf("%w: graph %v is not over snapshot %016x", ErrNoCheckpoint, name, tag)
				}
			}
		}
		g.nets = make([]map[Key]int64, st.n)
		if w := st.sh.w; w != nil {
			for i, m := range w.net {
				if w.deltas[i] != nil {
					g.nets[i] = maps.Clone(m)
				}
			}
		}
		c.graphs = append(c.graphs, g)
		return nil
	}
	if err := add(rdf.Term{}, 0, d.def.st); err != nil {
		return nil, err
	}
	for _, n := range d.named {
		if err := add(n.name, n.id, n.g.st); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Version returns the version checkpointed.
func (c *Checkpoint) Version() uint64 { return c.d.version }

// SnapVersion returns the version of the snapshot it is over.
func (c *Checkpoint) SnapVersion() uint64 { return c.snapV }

// Write writes the checkpoint into directory dir (which must not exist):
// into a temporary sibling first, every file fsynced, the manifest last,
// then renamed into place and the parent fsynced. A failure leaves
// nothing at dir. It returns the bytes written.
func (c *Checkpoint) Write(dir string) (n int64, err error) {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(dir); err == nil {
		return 0, fmt.Errorf("cannot write checkpoint %s: it exists", dir)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return 0, fmt.Errorf("cannot write checkpoint %s: %w", dir, err)
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%x", dir, os.Getpid(), rand.Uint32())
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return 0, fmt.Errorf("cannot write checkpoint %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
			err = fmt.Errorf("cannot write checkpoint %s: %w", dir, err)
		}
	}()
	d := c.d
	m := CheckpointManifest{FormatVersion: CheckpointFormatVersion, Version: d.version, Stamp: d.stamp,
		Snapshot: fmt.Sprintf("%016x", c.tag), SnapVersion: c.snapV, Shards: d.shards, LogWeight: c.LogWeight}
	add := func(name string, write func(w io.Writer) error) error {
		fi, err := writeFile(filepath.Join(tmp, filepath.FromSlash(name)), write)
		if err != nil {
			return err
		}
		fi.Name = name
		m.Files = append(m.Files, fi)
		n += fi.Size
		return nil
	}
	if ov := d.dict.ov; ov != nil {
		m.DictPC0, m.DictV0 = ov.npc0, ov.nv0
		m.DictPC, m.DictV, m.Roles, m.Aliases = d.dict.ovPC, d.dict.ovV, d.dict.ovRoles, d.dict.ovAlias
		if err := add(dictName, func(w io.Writer) error { return writeOverlay(w, d.dict) }); err != nil {
			return 0, err
		}
	}
	for gi, g := range c.graphs {
		sub := fmt.Sprintf("g-%05d", gi)
		if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
			return 0, err
		}
		cg := CheckpointGraph{ID: g.id, Base: "empty", Dir: sub, Triples: g.st.stats.Triples}
		if !g.name.IsZero() {
			gn := graphNameOf(g.name)
			cg.Name = &gn
		}
		if g.base != nil {
			cg.Base, cg.BaseDir = "snapshot", g.base.dir
		}
		if err := add(path.Join(sub, statsName), func(w io.Writer) error { return json.NewEncoder(w).Encode(g.st.stats) }); err != nil {
			return 0, err
		}
		if w := g.st.sh.w; w != nil {
			for i, dt := range w.deltas {
				if dt == nil {
					continue
				}
				// The version's lists, one group each (at stamp 1: every
				// later version reads it).
				sq, err := dt.Squash(g.st.stamp, 1, deltaReserve)
				if err != nil {
					return 0, fmt.Errorf("graph %d shard %d: %w", gi, i, err)
				}
				err = add(path.Join(sub, fmt.Sprintf("delta-%05d.img", i)), sq.WriteImage)
				sq.Close()
				if err != nil {
					return 0, err
				}
				nets := g.nets[i]
				if err := add(path.Join(sub, fmt.Sprintf("net-%05d.bin", i)), func(w io.Writer) error { return writeNets(w, nets) }); err != nil {
					return 0, err
				}
				cg.Deltas = append(cg.Deltas, i)
			}
		}
		if err := syncDir(filepath.Join(tmp, sub)); err != nil {
			return 0, err
		}
		m.Graphs = append(m.Graphs, cg)
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return 0, err
	}
	if _, err := writeFile(filepath.Join(tmp, checkpointManifestName), func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%08x\n%s\n", crc32.Checksum(body, castagnoli), body)
		return err
	}); err != nil {
		return 0, err
	}
	if err := syncDir(tmp); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return 0, err
	}
	if err := syncDir(parent); err != nil {
		return 0, err
	}
	return n, nil
}

// ReadCheckpointManifest reads and checks the manifest of the checkpoint
// at dir (its checksum and format; not the files).
func ReadCheckpointManifest(dir string) (*CheckpointManifest, error) {
	bad := func(format string, a ...any) error { return badCheckpoint(dir, format, a...) }
	b, err := os.ReadFile(filepath.Join(dir, checkpointManifestName))
	if err != nil {
		return nil, bad("%v", err)
	}
	line, body, ok := bytes.Cut(b, []byte("\n"))
	sum, perr := strconv.ParseUint(string(line), 16, 32)
	if !ok || len(line) != 8 || perr != nil {
		return nil, bad("the manifest does not start with its checksum")
	}
	body = bytes.TrimSuffix(body, []byte("\n"))
	if c := crc32.Checksum(body, castagnoli); c != uint32(sum) {
		return nil, bad("manifest checksum %08x, it says %08x", c, sum)
	}
	var m CheckpointManifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, bad("manifest: %v", err)
	}
	switch {
	case m.FormatVersion != CheckpointFormatVersion:
		return nil, bad("format version %d, this build reads %d", m.FormatVersion, CheckpointFormatVersion)
	case len(m.Graphs) == 0 || m.Graphs[0].Name != nil:
		return nil, bad("no default graph")
	}
	return &m, nil
}

func badCheckpoint(dir, format string, a ...any) error {
	return fmt.Errorf("cannot open checkpoint %s: %w: %s", dir, ErrBadCheckpoint, fmt.Sprintf(format, a...))
}

// OpenCheckpoint returns the version the checkpoint at dir holds, over
// base: the dataset of the snapshot tagged tag, as opened (version
// snapVersion, no delta, not written to). The new dataset shares base's
// graphs and dictionary (close both). A damaged checkpoint, or one over
// another snapshot, is refused with an error wrapping ErrBadCheckpoint;
// base is then unchanged.
func OpenCheckpoint(dir string, base *Dataset, tag uint64) (ds *Dataset, err error) {
	m, err := ReadCheckpointManifest(dir)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error { return badCheckpoint(dir, format, a...) }
	switch {
	case m.Snapshot != fmt.Sprintf("%016x", tag):
		return nil, bad("it is over snapshot %s, not %016x", m.Snapshot, tag)
	case m.SnapVersion != base.version || m.Version < m.SnapVersion:
		return nil, bad("version %d over snapshot version %d; the snapshot is at %d", m.Version, m.SnapVersion, base.version)
	case m.Shards != base.shards:
		return nil, bad("%d shards, the snapshot has %d", m.Shards, base.shards)
	case m.Stamp < 1 && len(m.Files) > len(m.Graphs):
		return nil, bad("stamp %d", m.Stamp)
	case base.needsCompaction() || base.inferred != nil || base.dict.ov != nil:
		return nil, fmt.Errorf("cannot open checkpoint %s: the dataset it is opened over is not a snapshot as opened", dir)
	}
	files := map[string]FileInfo{}
	for _, f := range m.Files {
		files[f.Name] = f
	}
	// Every file is read whole and its checksum checked as it is read.
	open := func(name string) (*os.File, FileInfo, error) {
		fi, ok := files[name]
		if !ok {
			return nil, fi, bad("%s is not in the manifest", name)
		}
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, fi, bad("%v", err)
		}
		st, err := f.Stat()
		if err == nil && st.Size() != fi.Size {
			err = fmt.Errorf("%s has %d bytes, the manifest says %d", name, st.Size(), fi.Size)
		}
		if err != nil {
			f.Close()
			return nil, fi, bad("%v", err)
		}
		return f, fi, nil
	}
	readAll := func(name string) ([]byte, error) {
		f, fi, err := open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b := make([]byte, fi.Size)
		if _, err := io.ReadFull(f, b); err != nil {
			return nil, bad("%s: %v", name, err)
		}
		if c := crc32.Checksum(b, castagnoli); c != fi.CRC32C {
			return nil, bad("%s: checksum %08x, the manifest says %08x", name, c, fi.CRC32C)
		}
		return b, nil
	}

	// The overlay and every shard's delta and counts are read in
	// parallel (they are independent; a restart waits for all of them).
	dict := base.dict.withOverlay()
	ov := dict.ov
	var jobs []func() error
	if m.DictPC+m.DictV+m.Roles+m.Aliases > 0 {
		if ov.npc0 != m.DictPC0 || ov.nv0 != m.DictV0 {
			return nil, bad("the overlay starts at %d/%d terms, the snapshot's dictionary has %d/%d", m.DictPC0, m.DictV0, ov.npc0, ov.nv0)
		}
		jobs = append(jobs, func() error {
			b, err := readAll(dictName)
			if err != nil {
				return err
			}
			if err := readOverlay(b, ov, m); err != nil {
				return bad("%s: %v", dictName, err)
			}
			return nil
		})
	}

	// The graphs: everything is read and checked before base is touched.
	type loaded struct {
		cg     CheckpointGraph
		name   rdf.Term
		st     *Store // the base store (of base, or a new empty one)
		fresh  bool
		stats  Stats
		deltas []*rdmakv.DeltaTable
		nets   []map[Key]int64
	}
	var graphs []*loaded
	defer func() {
		if err != nil {
			for _, g := range graphs {
				for _, t := range g.deltas {
					if t != nil {
						t.Close()
					}
				}
				if g.fresh && g.st != nil {
					g.st.Close()
				}
			}
		}
	}()
	baseByDir := map[string]*Store{"": base.def.st}
	for i, n := range base.named {
		baseByDir[graphDirName(i+1)] = n.g.st
	}
	seen := map[string]bool{}
	for gi, cg := range m.Graphs {
		g := &loaded{cg: cg, deltas: make([]*rdmakv.DeltaTable, m.Shards), nets: make([]map[Key]int64, m.Shards)}
		graphs = append(graphs, g)
		if (cg.Name != nil) != (gi > 0) {
			return nil, bad("graph %d: a name only for named graphs", gi)
		}
		switch cg.Base {
		case "snapshot":
			st, ok := baseByDir[cg.BaseDir]
			if !ok || seen[cg.BaseDir] {
				return nil, bad("graph %d: base %q is not a graph of the snapshot (or is used twice)", gi, cg.BaseDir)
			}
			seen[cg.BaseDir] = true
			if st.sh.w != nil {
				return nil, fmt.Errorf("cannot open checkpoint %s: the snapshot's graph %q was written to", dir, cg.BaseDir)
			}
			g.st = st
		case "empty":
			st, _, _, err := buildGraph(m.Shards, base.dict, nil, nil)
			if err != nil {
				return nil, err
			}
			g.st, g.fresh = st, true
		default:
			return nil, bad("graph %d: base %q", gi, cg.Base)
		}
		sb, err := readAll(path.Join(cg.Dir, statsName))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(sb, &g.stats); err != nil {
			return nil, bad("%s: %v", path.Join(cg.Dir, statsName), err)
		}
		if g.stats.Triples != cg.Triples || len(g.stats.ShardTriples) != m.Shards {
			return nil, bad("graph %d: the statistics count %d triples on %d shards, the manifest %d", gi, g.stats.Triples, len(g.stats.ShardTriples), cg.Triples)
		}
		claimed := make([]bool, m.Shards)
		for _, i := range cg.Deltas {
			if i < 0 || i >= m.Shards || claimed[i] {
				return nil, bad("graph %d: delta of shard %d", gi, i)
			}
			claimed[i] = true
			jobs = append(jobs, func() error {
				name := path.Join(cg.Dir, fmt.Sprintf("delta-%05d.img", i))
				f, fi, err := open(name)
				if err != nil {
					return err
				}
				t, err := rdmakv.LoadDeltaTable(bufio.NewReaderSize(f, 1<<20), fi.Size, deltaReserve, func(b []byte) error {
					if c := crc32.Checksum(b, castagnoli); c != fi.CRC32C {
						return fmt.Errorf("checksum %08x, the manifest says %08x", c, fi.CRC32C)
					}
					return nil
				})
				f.Close()
				if err != nil {
					return bad("%s: %v", name, err)
				}
				g.deltas[i] = t
				nb, err := readAll(path.Join(cg.Dir, fmt.Sprintf("net-%05d.bin", i)))
				if err != nil {
					return err
				}
				if g.nets[i], err = readNets(nb); err != nil {
					return bad("graph %d shard %d: %v", gi, i, err)
				}
				return nil
			})
		}
	}
	if err := runParallel(jobs); err != nil {
		return nil, err
	}
	dict = dict.tip()
	for gi, g := range graphs {
		if g.cg.Name == nil {
			continue
		}
		t, err := g.cg.Name.Term()
		if err != nil {
			return nil, bad("graph %d: %v", gi, err)
		}
		if id, ok := dict.Lookup(t); !ok || id != g.cg.ID {
			return nil, bad("graph %v has ID %d in the manifest, %d in the dictionary", t, g.cg.ID, id)
		}
		g.name = t
	}

	// Assemble: each graph's store gets the loaded deltas and a version at
	// the checkpoint's stamp.
	dref := base.dref.retain()
	var def *graphRef
	var named []namedGraph
	var refs []*graphRef
	for _, g := range graphs {
		w := g.st.writer()
		for i, t := range g.deltas {
			if t == nil {
				continue
			}
			if err := g.st.fabric.Register(g.st.NodeOf(i), g.st.deltaRegion(i), t.Region()); err != nil {
				for _, r := range refs {
					r.release()
				}
				dref.release()
				return nil, fmt.Errorf("cannot open checkpoint %s: cannot register the delta of shard %d: %w", dir, i, err)
			}
			w.deltas[i], w.net[i] = t, g.nets[i]
			g.deltas[i] = nil // the store owns it now
		}
		stats := g.stats
		v, err := g.st.version(m.Stamp, &stats, dict)
		if err != nil {
			return nil, err
		}
		if g.fresh {
			g.st.Close() // the version holds the base now
			g.fresh = false
		}
		ref := newGraphRef(v, dref)
		refs = append(refs, ref)
		if g.name.IsZero() {
			def = ref
		} else {
			named = append(named, namedGraph{name: g.name, id: g.cg.ID, g: ref})
		}
	}
	nd := newDataset(dict, dref, m.Shards, def, named)
	nd.version, nd.stamp = m.Version, m.Stamp
	nd.lin.stamp = m.Stamp
	return nd, nil
}

// runParallel runs jobs on up to GOMAXPROCS goroutines and returns the
// first error (after all have stopped).
func runParallel(jobs []func() error) error {
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				errs[j] = jobs[j]()
			}
		}()
	}
	for j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// The overlay file: the low-range terms with their roles, the vertex
// terms, the role additions (ID, role) and the aliases (from, to), each
// as in the order the overlay holds them; a term is a kind byte and its
// value, datatype and language as uvarint-length strings.
func writeOverlay(w io.Writer, d *Dict) error {
	o := d.ov
	o.mu.RLock()
	defer o.mu.RUnlock()
	bw := bufio.NewWriterSize(w, 1<<20)
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	term := func(t rdf.Term) {
		b = append(b, byte(t.Kind))
		str(t.Value)
		str(t.Datatype)
		str(t.Lang)
	}
	flush := func() error {
		_, err := bw.Write(b)
		b = b[:0]
		return err
	}
	for i, t := range o.pc[:d.ovPC] {
		term(t)
		b = append(b, o.pcRoles[i])
		if len(b) > 64<<10 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for _, t := range o.v[:d.ovV] {
		term(t)
		if len(b) > 64<<10 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for _, r := range o.roleLog[:d.ovRoles] {
		b = binary.AppendUvarint(b, uint64(r.id))
		b = append(b, r.role)
	}
	for _, a := range o.aliases[:d.ovAlias] {
		b = binary.AppendUvarint(b, uint64(a.from))
		b = binary.AppendUvarint(b, uint64(a.to))
	}
	if err := flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// readOverlay fills the empty overlay o from b (writeOverlay's bytes,
// with m's counts).
func readOverlay(b []byte, o *dictOverlay, m *CheckpointManifest) error {
	pos := 0
	bs := string(b) // one allocation: the terms' strings are its substrings
	fail := errors.New("truncated or damaged")
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 {
			return 0, fail
		}
		pos += n
		return v, nil
	}
	str := func() (string, error) {
		n, err := uv()
		if err != nil || n > uint64(len(b)-pos) {
			return "", fail
		}
		s := bs[pos : pos+int(n)]
		pos += int(n)
		return s, nil
	}
	term := func() (rdf.Term, error) {
		if pos >= len(b) {
			return rdf.Term{}, fail
		}
		t := rdf.Term{Kind: rdf.Kind(b[pos])}
		pos++
		var err error
		if t.Value, err = str(); err != nil {
			return t, err
		}
		if t.Datatype, err = str(); err != nil {
			return t, err
		}
		if t.Lang, err = str(); err != nil {
			return t, err
		}
		switch t.Kind {
		case rdf.KindIRI, rdf.KindBlank, rdf.KindLiteral:
		default:
			return t, fmt.Errorf("a term of kind %d", t.Kind)
		}
		return t, nil
	}
	if m.DictPC < 0 || m.DictV < 0 || m.Roles < 0 || m.Aliases < 0 || m.DictPC+m.DictV > len(b) {
		return fmt.Errorf("counts %d/%d/%d/%d", m.DictPC, m.DictV, m.Roles, m.Aliases)
	}
	if o.npc0+uint64(m.DictPC) > uint64(MaxPredicate) {
		return fmt.Errorf("%d low-range terms", m.DictPC)
	}
	o.pc = make([]rdf.Term, 0, m.DictPC)
	o.pcRoles = make([]byte, 0, m.DictPC)
	for range m.DictPC {
		t, err := term()
		if err != nil {
			return err
		}
		if pos >= len(b) {
			return fail
		}
		o.pc = append(o.pc, t)
		o.pcRoles = append(o.pcRoles, b[pos])
		pos++
	}
	o.v = make([]rdf.Term, 0, m.DictV)
	for range m.DictV {
		t, err := term()
		if err != nil {
			return err
		}
		o.v = append(o.v, t)
	}
	// IDs as add gave them: a term's first ID wins (a vertex later given
	// a low ID keeps its vertex ID in the map, and an alias to the low
	// one), and vertices were always added before their low IDs.
	o.ids = make(map[rdf.Term]ID, m.DictPC+m.DictV)
	for i, t := range o.v {
		if _, ok := o.ids[termKey(t)]; !ok {
			o.ids[termKey(t)] = FirstVertexID + ID(o.nv0+uint64(i))
		}
	}
	for i, t := range o.pc {
		if _, ok := o.ids[termKey(t)]; !ok {
			o.ids[termKey(t)] = ID(o.npc0 + uint64(i) + 1)
		}
	}
	lowEnd := ID(o.npc0) + ID(len(o.pc))
	for range m.Roles {
		id, err := uv()
		if err != nil || pos >= len(b) {
			return fail
		}
		if id < 1 || ID(id) > lowEnd {
			return fmt.Errorf("a role for ID %d, not a predicate or class", id)
		}
		o.roleOf[ID(id)] = append(o.roleOf[ID(id)], len(o.roleLog))
		o.roleLog = append(o.roleLog, roleAdd{ID(id), b[pos]})
		pos++
	}
	for range m.Aliases {
		from, err := uv()
		if err != nil {
			return err
		}
		to, err := uv()
		if err != nil {
			return err
		}
		if ID(from) < FirstVertexID || to < 1 || ID(to) > lowEnd {
			return fmt.Errorf("alias %d → %d", from, to)
		}
		o.aliasOf[ID(from)] = len(o.aliases)
		o.aliases = append(o.aliases, alias{ID(from), ID(to)})
	}
	if pos != len(b) {
		return fmt.Errorf("%d bytes after the overlay", len(b)-pos)
	}
	return nil
}

// The net file: the number of entries, then (key, count) pairs, 16 bytes
// each, little-endian.
func writeNets(w io.Writer, m map[Key]int64) error {
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 64<<10), uint64(len(m)))
	for k, v := range m {
		b = binary.LittleEndian.AppendUint64(b, uint64(k))
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
		if len(b) >= 64<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}

func readNets(b []byte) (map[Key]int64, error) {
	if len(b) < 8 {
		return nil, errors.New("net file truncated")
	}
	n := binary.LittleEndian.Uint64(b)
	if uint64(len(b)-8) != n*16 {
		return nil, fmt.Errorf("net file of %d bytes for %d entries", len(b), n)
	}
	m := make(map[Key]int64, n)
	for p := 8; p < len(b); p += 16 {
		m[Key(binary.LittleEndian.Uint64(b[p:]))] = int64(binary.LittleEndian.Uint64(b[p+8:]))
	}
	return m, nil
}

// CheckpointVersionOf returns the version a checkpoint directory's name
// says (DIR/ckpt/<version>), ok false for another name (a temporary one).
func CheckpointVersionOf(name string) (uint64, bool) {
	if strings.ContainsRune(name, '.') {
		return 0, false
	}
	v, err := strconv.ParseUint(name, 10, 64)
	return v, err == nil
}
