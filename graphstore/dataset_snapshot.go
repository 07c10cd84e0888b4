package graphstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// Dataset snapshot layout: a single-graph snapshot (see snapshot.go) whose
// top level is the default graph, plus one subdirectory per named graph:
//
//	manifest.json           format version, totals, graphs, every file's size and CRC-32C
//	dict.bin                the dictionary, shared by all graphs
//	stats.json              the default graph's statistics
//	shard-NNNNN.kv          the default graph's shards
//	graph-NNNNN/stats.json  named graph NNNNN (1, 2, … in Dataset.Graphs order)
//	graph-NNNNN/shard-NNNNN.kv
//
// A dataset without named graphs is written as format version 1, exactly
// a single-graph snapshot (OpenSnapshot reads it); with named graphs as
// DatasetFormatVersion, which OpenSnapshot and older builds refuse. The
// manifest's "triples" counts the distinct triples of all graphs together
// (each graph's own count is in its entry), "terms" the dictionary.
const DatasetFormatVersion = 2

// DatasetManifest is the content of a dataset snapshot's manifest.json: a
// Manifest (Files lists the files of every graph, named by their path
// relative to the snapshot) plus the named graphs.
type DatasetManifest struct {
	Manifest
	Graphs []GraphManifest `json:"graphs,omitempty"`
	// Reasoning is the profile the default graph was materialized with
	// (package reason; "" for none); its inferred layer is in
	// inferredDir, with Inferred triples (counted in the default graph's
	// too, not again in Triples).
	Reasoning string `json:"reasoning,omitempty"`
	Inferred  uint64 `json:"inferred,omitempty"`
}

// inferredDir is the subdirectory of a dataset snapshot holding the
// default graph's inferred layer (dataset_reason.go).
const inferredDir = "inferred"

// GraphManifest is a named graph of a dataset snapshot.
type GraphManifest struct {
	Name    GraphName `json:"name"`
	ID      ID        `json:"id"`      // the name's ID in the dictionary
	Dir     string    `json:"dir"`     // subdirectory: graph-NNNNN
	Triples uint64    `json:"triples"` // distinct triples of the graph
}

// GraphName is a graph name as written in a manifest.
type GraphName struct {
	Kind  string `json:"kind"` // "iri" or "blank"
	Value string `json:"value"`
}

func graphNameOf(t rdf.Term) GraphName {
	if t.Kind == rdf.KindBlank {
		return GraphName{Kind: "blank", Value: t.Value}
	}
	return GraphName{Kind: "iri", Value: t.Value}
}

// Term returns the graph name as a term.
func (n GraphName) Term() (rdf.Term, error) {
	switch n.Kind {
	case "iri":
		return rdf.NewIRI(n.Value), nil
	case "blank":
		return rdf.NewBlank(n.Value), nil
	}
	return rdf.Term{}, fmt.Errorf("graph name of kind %q", n.Kind)
}

func graphDirName(i int) string { return fmt.Sprintf("graph-%05d", i) }

// WriteDataset writes ds into directory dir with the guarantees of
// WriteSnapshot: everything goes into a temporary sibling directory, every
// file and directory is fsynced, then the directory is renamed into place
// (atomically exchanged with a previous snapshot, which is then removed).
// A failure leaves a previous snapshot at dir intact; dir is never
// replaced if it exists and is not a snapshot. Every shard must be local.
func WriteDataset(dir string, ds *Dataset) (err error) {
	if ds.needsCompaction() {
		c, err := ds.compact(context.Background())
		if err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		defer c.Close()
		ds = c
	}
	graphs := []*Store{ds.def.st}
	for _, n := range ds.named {
		graphs = append(graphs, n.g.st)
	}
	for gi, st := range graphs {
		for i := 0; i < st.n; i++ {
			if st.regions[i] == nil {
				return fmt.Errorf("cannot write snapshot %s: shard %d of graph %d is not local", dir, i, gi)
			}
		}
	}
	dir = filepath.Clean(dir)
	tmp, err := createTempDir(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	m := DatasetManifest{Manifest: Manifest{FormatVersion: FormatVersion, Triples: ds.Triples(),
		Terms: uint64(ds.dict.Len()), Shards: ds.shards, Predicates: ds.dict.NumPredicatesAndClasses(), Version: ds.version}}
	if len(ds.named) > 0 {
		m.FormatVersion = DatasetFormatVersion
	}
	add := func(name string, write func(w io.Writer) error) error {
		fi, err := writeFile(filepath.Join(tmp, filepath.FromSlash(name)), write)
		if err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		fi.Name = name
		m.Files = append(m.Files, fi)
		return nil
	}
	if err := add(dictName, ds.dict.writeTo); err != nil {
		return err
	}
	writeGraph := func(sub string, st *Store) error {
		if err := add(path.Join(sub, statsName), func(w io.Writer) error { return json.NewEncoder(w).Encode(st.stats) }); err != nil {
			return err
		}
		for i, r := range st.regions {
			if err := add(path.Join(sub, shardFileName(i)), func(w io.Writer) error { _, err := w.Write(r.Bytes()); return err }); err != nil {
				return err
			}
		}
		return nil
	}
	if err := writeGraph("", ds.def.st); err != nil {
		return err
	}
	for i, n := range ds.named {
		sub := graphDirName(i + 1)
		if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		if err := writeGraph(sub, n.g.st); err != nil {
			return err
		}
		if err := syncDir(filepath.Join(tmp, sub)); err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		m.Graphs = append(m.Graphs, GraphManifest{Name: graphNameOf(n.name), ID: n.id, Dir: sub, Triples: n.g.st.stats.Triples})
	}
	if ds.inferred != nil {
		if err := os.Mkdir(filepath.Join(tmp, inferredDir), 0o755); err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		if err := writeGraph(inferredDir, ds.inferred.st); err != nil {
			return err
		}
		if err := syncDir(filepath.Join(tmp, inferredDir)); err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		m.Reasoning, m.Inferred = ds.reasoning, ds.inferred.st.stats.Triples
	}
	if err := add(manifestName, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}); err != nil {
		return err
	}
	return publishDir(tmp, dir)
}

// ReadDatasetManifest reads and checks the manifest of the snapshot at dir,
// a dataset snapshot or a single-graph one (no Graphs then).
func ReadDatasetManifest(dir string) (*DatasetManifest, error) {
	bad := func(format string, a ...any) error { return badSnapshot(dir, format, a...) }
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("cannot open snapshot %s: %w: %w", dir, ErrBadSnapshot, err)
	}
	var m DatasetManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, bad("manifest: %v", err)
	}
	switch {
	case m.FormatVersion > DatasetFormatVersion:
		return nil, bad("format version %d is newer than this build's %d", m.FormatVersion, DatasetFormatVersion)
	case m.FormatVersion < 1:
		return nil, bad("format version %d", m.FormatVersion)
	case m.Shards < 1 || m.Shards > 1<<16:
		return nil, bad("%d shards", m.Shards)
	case m.FormatVersion < DatasetFormatVersion && len(m.Graphs) > 0:
		return nil, bad("format version %d cannot have named graphs", m.FormatVersion)
	}
	seenDir, seenName := map[string]bool{}, map[GraphName]bool{}
	var named uint64
	for i, g := range m.Graphs {
		if g.Dir != graphDirName(i+1) {
			return nil, bad("graph %d is in directory %q, expected %q", i+1, g.Dir, graphDirName(i+1))
		}
		if _, err := g.Name.Term(); err != nil {
			return nil, bad("graph %d: %v", i+1, err)
		}
		if seenDir[g.Dir] || seenName[g.Name] {
			return nil, bad("graph %d: listed twice", i+1)
		}
		seenDir[g.Dir], seenName[g.Name] = true, true
		if named+g.Triples < named || named+g.Triples > m.Triples {
			return nil, bad("the graphs count more triples than the manifest's %d", m.Triples)
		}
		named += g.Triples
	}
	return &m, nil
}

// OpenDataset maps the snapshot at dir, a dataset snapshot or a
// single-graph one (a dataset without named graphs then), and returns a
// dataset ready for lookups. A truncated, corrupted or newer-format
// snapshot, or a missing file, is refused with an error wrapping
// ErrBadSnapshot. opts applies to every graph; a Fabric can only be given
// for a dataset without named graphs (region IDs are shard numbers, so the
// graphs' shards would collide on one fabric).
func OpenDataset(dir string, opts OpenOptions) (ds *Dataset, err error) {
	m, err := ReadDatasetManifest(dir)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error { return badSnapshot(dir, format, a...) }
	if opts.Fabric != nil && len(m.Graphs) > 0 {
		return nil, fmt.Errorf("cannot open snapshot %s: a dataset with named graphs cannot be opened over a given fabric yet", dir)
	}
	files := map[string]FileInfo{}
	for _, f := range m.Files {
		files[f.Name] = f
	}
	var mapped []*rdmakv.Region // regions not yet owned by a store
	var refs []*graphRef
	var dref *dictRef
	defer func() {
		if err != nil {
			for _, r := range mapped {
				r.Close()
			}
			for _, g := range refs {
				g.release()
			}
			if dref != nil {
				dref.release()
			}
		}
	}()
	open := func(name string) (*rdmakv.Region, error) {
		r, err := openSnapshotFile(dir, name, files, opts.SkipChecksums)
		if err == nil {
			mapped = append(mapped, r)
		}
		return r, err
	}
	dr, dict, err := openDict(open, m.Terms, bad)
	if err != nil {
		return nil, err
	}
	mapped = mapped[:0]
	dref = newDictRef(dr)

	shards := opts.Shards
	if shards == nil {
		for i := 0; i < m.Shards; i++ {
			shards = append(shards, i)
		}
	}
	for _, i := range shards {
		if i < 0 || i >= m.Shards {
			return nil, fmt.Errorf("cannot open shard %d of snapshot %s with %d shards", i, dir, m.Shards)
		}
	}
	openGraph := func(sub string, triples uint64) (*Store, error) {
		sr, err := open(path.Join(sub, statsName))
		if err != nil {
			return nil, err
		}
		var stats Stats
		err = json.Unmarshal(sr.Bytes(), &stats)
		mapped = mapped[:len(mapped)-1]
		sr.Close()
		if err != nil {
			return nil, bad("%s: %v", path.Join(sub, statsName), err)
		}
		if stats.Triples != triples {
			return nil, bad("%s counts %d triples, the manifest %d", path.Join(sub, statsName), stats.Triples, triples)
		}
		regions := make([]*rdmakv.Region, m.Shards)
		for _, i := range shards {
			r, err := open(path.Join(sub, shardFileName(i)))
			if err != nil {
				return nil, err
			}
			if _, err := rdmakv.OpenTable(r); err != nil {
				return nil, bad("%s: %v", path.Join(sub, shardFileName(i)), err)
			}
			regions[i] = r
		}
		st, err := newStore(dict, &stats, regions, opts.Fabric, opts.Place)
		if err != nil {
			return nil, fmt.Errorf("cannot open snapshot %s: %w", dir, err)
		}
		mapped = mapped[:0] // the store owns its regions now
		return st, nil
	}
	defTriples := m.Triples
	for _, g := range m.Graphs {
		defTriples -= g.Triples
	}
	def, err := openGraph("", defTriples)
	if err != nil {
		return nil, err
	}
	refs = append(refs, newGraphRef(def, dref))
	var named []namedGraph
	for _, g := range m.Graphs {
		name, _ := g.Name.Term()
		if id, ok := dict.Lookup(name); !ok || id != g.ID {
			return nil, bad("graph %v has ID %d in the manifest, %d in the dictionary", name, g.ID, id)
		}
		st, err := openGraph(g.Dir, g.Triples)
		if err != nil {
			return nil, err
		}
		ref := newGraphRef(st, dref)
		refs = append(refs, ref)
		named = append(named, namedGraph{name: name, id: g.ID, g: ref})
	}
	var layer *graphRef
	if m.Reasoning != "" {
		if m.Inferred > defTriples {
			return nil, bad("%d inferred triples of %d in the default graph", m.Inferred, defTriples)
		}
		st, err := openGraph(inferredDir, m.Inferred)
		if err != nil {
			return nil, err
		}
		layer = newGraphRef(st, dref)
		refs = append(refs, layer)
	}
	ds = newDataset(dict, dref, m.Shards, refs[0], named)
	ds.version = m.Version
	ds.reasoning, ds.inferred = m.Reasoning, layer
	return ds, nil
}
