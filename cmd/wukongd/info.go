package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

func init() {
	register(&command{name: "info", summary: "describe a snapshot: counts, sizes, predicates and classes", run: runInfo})
}

func runInfo(args []string) error {
	fs := newFlagSet("info", "[flags] DIR", `Opens the snapshot in DIR (verifying its checksums) and prints its
counts, the size of its dictionary and shards in bytes per triple, and
the largest predicates and classes with their statistics.`)
	top := fs.Int("top", 20, "how many predicates and classes to list (0: all)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("info: want one snapshot directory, got %d arguments", fs.NArg())
	}
	return writeInfo(os.Stdout, fs.Arg(0), *top)
}

// writeInfo prints the description of the snapshot at dir to w.
func writeInfo(w io.Writer, dir string, top int) error {
	m, err := graphstore.ReadManifest(dir)
	if err != nil {
		return err
	}
	st, err := graphstore.OpenSnapshot(dir, graphstore.OpenOptions{})
	if err != nil {
		return err
	}
	defer st.Close()
	stats, d := st.Stats(), st.Dict()
	z := st.Sizes()
	per := func(b uint64) string {
		if stats.Triples == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f B/triple", float64(b)/float64(stats.Triples))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "snapshot\t%s (format %d)\n", dir, m.FormatVersion)
	fmt.Fprintf(tw, "triples\t%d\n", stats.Triples)
	if dm, err := graphstore.ReadDatasetManifest(dir); err == nil && dm.Reasoning != "" {
		fmt.Fprintf(tw, "reasoning\t%s: %d explicit + %d inferred triples (default graph; the inferred layer in %s/inferred)\n",
			dm.Reasoning, stats.Triples-dm.Inferred, dm.Inferred, dir)
	} else {
		fmt.Fprintf(tw, "reasoning\tnone (%d explicit triples)\n", stats.Triples)
	}
	fmt.Fprintf(tw, "terms\t%d (%d predicates and classes)\n", d.Len(), d.NumPredicatesAndClasses())
	fmt.Fprintf(tw, "subjects / objects\t%d / %d (%d subjects without rdf:type)\n", stats.Subjects, stats.Objects, stats.Untyped)
	fmt.Fprintf(tw, "shards\t%d, triples per shard %v\n", st.NumShards(), stats.ShardTriples)
	fmt.Fprintf(tw, "store\t%d keys, buckets %s, values %s\n", z.Keys, per(z.BucketBytes), per(z.ValueBytes))
	fmt.Fprintf(tw, "dictionary\tstrings %s, index %s\n", per(z.DictArena), per(z.DictOffsets+z.DictHash+z.DictOther))
	fmt.Fprintf(tw, "total\t%s\n", per(z.BucketBytes+z.ValueBytes+z.DictArena+z.DictOffsets+z.DictHash+z.DictOther))
	if err := tw.Flush(); err != nil {
		return err
	}
	name := func(id graphstore.ID) string {
		if t, ok := d.Term(id); ok {
			return t.String()
		}
		return fmt.Sprintf("#%d", id)
	}
	preds := largest(stats.Predicates, top, func(p graphstore.PredicateStats) uint64 { return p.Triples })
	fmt.Fprintf(w, "\npredicates (%d, largest first)\n", len(stats.Predicates))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "triples\tsubjects\tobjects\t predicate")
	for _, p := range preds {
		fmt.Fprintf(tw, "%d\t%d\t%d\t %s\n", p.Triples, p.Subjects, p.Objects, name(p.Pred))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	classes := largest(stats.Classes, top, func(c graphstore.ClassStats) uint64 { return c.Instances })
	fmt.Fprintf(w, "\nclasses (%d, largest first)\n", len(stats.Classes))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "instances\t class")
	for _, c := range classes {
		fmt.Fprintf(tw, "%d\t %s\n", c.Instances, name(c.Class))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if id, ok := d.Lookup(rdf.NewIRI(rdf.RDFType)); !ok || id != graphstore.TypeID {
		return fmt.Errorf("snapshot %s: rdf:type is not ID %d", dir, graphstore.TypeID)
	}
	return nil
}

// largest returns a copy of xs sorted by size, largest first (a stable
// sort), cut to its top entries when top > 0.
func largest[T any](xs []T, top int, size func(T) uint64) []T {
	xs = append([]T(nil), xs...)
	sort.SliceStable(xs, func(i, j int) bool { return size(xs[i]) > size(xs[j]) })
	if top > 0 && len(xs) > top {
		xs = xs[:top]
	}
	return xs
}
