// Package graphstore is the RDF graph store: the dictionary (term <-> ID),
// the 64-bit key (vertex, predicate, direction), shards partitioned by
// vertex, index vertices, planner statistics, the builder from triples to
// shards, and snapshots on disk.
//
// In: rdf.Triple batches from the loader (Builder.AddTriples, safe from many
// goroutines). Out: a *Store: sorted ID lists per key (local or through an
// rdmakv.Fabric), statistics for the planner, and terms for result output.
//
// # IDs and keys
//
// ID is a uint64. 0 is never a term. Predicates and classes (objects of
// rdf:type) get IDs 1..Dict.NumPredicatesAndClasses() (below 2^23);
// rdf:type is always TypeID = 1. Every other term gets an ID from
// FirstVertexID = 2^23 up. Terms first seen as plain vertices and later as
// predicates or classes still end in the low range: the builder hands out
// provisional numbers and renumbers once, at Build.
//
// Key packs (vertex 40 bits, predicate 23 bits, direction 1 bit); key.go
// lays out every bit. IndexVertex (0) in the vertex field and
// AllPredicates (0) in the predicate field name the index keys:
//
//	(v, p, Out)          objects of v via p     (on Owner(v))
//	(v, p, In)           subjects of v via p    (on Owner(v)); never for p = rdf:type
//	(v, rdf:type, Out)   the classes of v
//	(v, AllPredicates, d) the predicates of v's d-edges (rdf:type included for Out)
//	(0, p, Out)          local subjects having p (on every shard, its own vertices)
//	(0, p, In)           local objects of p
//	(0, c, In)           local instances of class c (the type index)
//	(0, AllPredicates, d) the predicates having a local d-edge
//
// Every distinct triple (s p o) is stored once as (s,p,Out)→o on Owner(s)
// and once as (o,p,In)→s on Owner(o) (except rdf:type, see above).
// Caveat: an ID that is both a predicate and a class (OWL punning) shares
// (0, id, In) between its objects and its instances (the union is stored);
// an engine scanning it as a type index must check (v, rdf:type, Out).
//
// # Dictionary
//
// Dict.Lookup(term) → (ID, ok) (unknown query constants give ok = false),
// Dict.Term(id) → rdf.Term (strings copied), Dict.AppendNTriples(dst, id)
// (no allocation for terms that need no escaping), Len, IsPredicateOrClass,
// IsPredicate, IsClass, TypeID, MaxID. Terms are kept exactly as written
// ("01"^^xsd:integer stays "01"). Storage is one string arena in ID order,
// an offset table and an open-addressing hash table of entry indexes
// (fixed hash, so the table maps straight from a snapshot; offsets and
// slots take 3 bytes when they fit). Shared parts of terms live once in a
// prefix table: IRI namespaces (with the word of a word+number local name,
// ".../GraduateStudent" of ".../GraduateStudent45"), and of literals the
// part from the last '@' and a leading word before a number; dict.go
// describes the entries.
//
// # Building
//
// NewBuilder(shards); AddTriples(batch []rdf.Triple) or, for a parser that
// keeps terms as bytes, AddRawTriples(batch []RawTriple) (no string is
// allocated for a term already known; the bytes are only read during the
// call), from any goroutines: a batch takes each of 16 dictionary stripe
// locks once, free stripes first. Counters() (read, duplicates, distinct,
// terms); Build() → *Store. Build renumbers the terms, partitions edges by
// owner (parallel), sorts them (counting sort by vertex) and deduplicates
// each shard, lays out its rdmakv table and collects Stats (parallel over
// shards). Named graphs: see Datasets.
//
// # Snapshots
//
// WriteSnapshot(dir, store) writes manifest.json (format version, counts
// "triples", "terms", "shards", and each file's size and CRC-32C),
// dict.bin, stats.json and one shard-NNNNN.kv region per shard into a
// temporary sibling directory, fsyncs, and renames it into place (an
// existing snapshot is exchanged atomically and then removed; a directory
// that is not a snapshot is never replaced). OpenSnapshot(dir, OpenOptions)
// maps the files and is ready at once; OpenOptions.Shards opens only some
// shards (a node of a cluster) and OpenOptions.Fabric reads the others.
// A truncated, corrupted, incomplete or newer-format snapshot is refused
// with an error wrapping ErrBadSnapshot. ReadManifest reads the counts
// alone.
//
// # Store and ShardView
//
// Store: NumShards, Owner(v), NodeOf(shard) (= shard mod Nodes), Dict, Stats,
// Fabric, Counters, LocalShards, Shard(i) → *ShardView (nil if shard i is
// not in this process), RemoteTable(ctx, from, i) (shard i's table through
// the fabric, opened once and shared: the views and cluster use it),
// RegionBytes, Close (unmaps a snapshot: IDs and
// decoded terms stay valid, views do not). A built store uses a loopback fabric with
// one node per shard, so every lookup of another shard's key goes through
// the fabric as it would over RDMA.
//
// ShardView is the engine's view from one shard: AppendEdges(ctx, dst, v,
// p, d) (local region, or READ bucket chain then READ value), the batched
// AppendEdgesBatch(ctx, keys, dst, ends) (one fabric ReadBatch per round for
// all remote keys), AppendIndex(dst, p, d) and AppendPredicates(dst, d) for
// the shard's local index vertices, IsLocal(v). Append* return dst grown;
// nothing returned aliases the store. Absent keys append nothing; only the
// fabric returns errors.
//
// # Datasets (named graphs)
//
// A *Dataset is the default graph plus named graphs, each its own *Store
// (same shard count, same layout), all over ONE dictionary: a term has the
// same ID in every graph, so GRAPH ?g { … } rows join default-graph rows by
// ID, and ?g binds to the graph name's ID (names are interned too).
//
//	Default() *Store                         never nil
//	Graph(name rdf.Term) (*Store, bool)      IRI or blank node; zero Term → false
//	GraphByID(id ID) (NamedGraph, bool)      for a bound ?g
//	Graphs() []NamedGraph                    {Name, ID, Store}; IRIs, then blank
//	                                         nodes, each by value (stable order)
//	NumGraphs, NumShards, Triples (distinct quads), Terms, Dict, Close
//
// Dataset.Dict() is the authority for lookups and decoding: a store shared
// from an older dataset (below) keeps the older dictionary it was built
// on, which gives its terms the same IDs but lacks newer terms.
//
// Building: NewDatasetBuilder(shards); AddQuads(batch) (G zero = default
// graph), AddTriples(graph, batch), AddRawTriples(graph, batch) (terms as
// bytes, as the loader's N-Triples path feeds them), AddGraph(graph) (an
// empty graph), from
// any goroutines; Build() interns once (one Builder's stripes), renumbers
// once and builds one store per graph. Counters() gives totals and per
// graph read/duplicates/distinct. NewDataset(st) wraps one store.
//
// Changes (Graph Store Protocol, SPARQL Update): Apply(ctx, ...GraphChange)
// returns a new dataset, Version()+1; GraphChange{Graph, Drop, Clear,
// Delete, Insert} is applied in that order; ReplaceGraph (PUT), MergeGraph
// (POST) and DeleteGraph (DELETE) are shorthands. Amend adds a later step
// of the same request (same version); Discard drops a built version no
// reader saw. Untouched graphs keep the very same *Store pointers; stores
// are reference-counted across datasets, so close every dataset when
// done, in any order. A change of the newest version costs what it
// touches: each shard has a delta (an rdmakv.DeltaTable in region
// NumShards()+shard) of toggled IDs under the base's keys, read at the
// version's stamp and merged into every list (delta.go,
// dataset_write.go). New terms extend the dictionary without renumbering
// (dict_delta.go). Compact merges base and delta into new tables, same
// IDs. Every shard must be local. Store.EachTriple(ctx, fn) scans a
// store's triples.
//
// Snapshots: WriteDataset(dir, ds) / OpenDataset(dir, opts) /
// ReadDatasetManifest(dir). The default graph is the top level of the
// directory (the single-graph layout, one dict.bin for all graphs), named
// graph i in graph-0000i/ (stats.json, shard files); manifest.json lists
// the graphs (name, ID, directory, triples) and every file's size and
// CRC-32C, and records the total distinct triples, terms and shards.
// Without named graphs the snapshot is format 1, identical to
// WriteSnapshot's; with them DatasetFormatVersion (2), which OpenSnapshot
// refuses, naming OpenDataset. OpenDataset opens single-graph snapshots as
// datasets without named graphs. Named graphs cannot yet be opened over a
// given Fabric (region IDs are shard numbers, so graphs would collide).
//
// # Statistics
//
// Stats: distinct triples, terms, subjects, objects, average predicates
// per vertex (OutPredicates/Subjects), per predicate (triples, distinct
// subjects and objects), per class (instances), per (class, predicate,
// dir) fan-out (instances having the edge, edges), triples per shard.
package graphstore
