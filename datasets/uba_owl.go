package datasets

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// owlSink writes UBA's own layout: one RDF/XML file per department,
// University<u>_<d>.owl in dir, byte for byte as UBA 1.7's OwlWriter
// writes it (with -onto http://swat.cse.lehigh.edu/onto/univ-bench.owl).
// Repeated University types are kept, as UBA writes them. The first error
// is kept in err and stops the writing.
type owlSink struct {
	dir   string
	f     *os.File      // the open file; nil between files
	w     *bufio.Writer // buffers f; reused from file to file
	open  class         // class of the open section
	inSec bool
	files int
	err   error
	name  []byte
}

func (o *owlSink) write(parts ...string) {
	if o.err != nil || o.f == nil {
		return
	}
	for _, p := range parts {
		o.w.WriteString(p) // errors are sticky in bufio.Writer; Flush reports them
	}
}

func (o *owlSink) writeBytes(b []byte) {
	if o.err == nil && o.f != nil {
		o.w.Write(b)
	}
}

// closeFile ends the open file, if any.
func (o *owlSink) closeFile() {
	if o.f == nil {
		return
	}
	o.closeSection()
	o.write("</rdf:RDF>\n")
	err := o.w.Flush()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("cannot write %s: %w", o.f.Name(), err)
	}
	o.f = nil
}

func (o *owlSink) closeSection() {
	if o.inSec {
		o.write("</ub:", className[o.open], ">\n")
		o.inSec = false
	}
}

func (o *owlSink) file(u, d int) {
	o.closeFile()
	if o.err != nil {
		return
	}
	o.name = appendFileName(o.name[:0], u, d)
	f, err := os.Create(filepath.Join(o.dir, string(o.name)))
	if err != nil {
		o.err = fmt.Errorf("cannot create a UBA file: %w", err)
		return
	}
	o.files++
	o.f = f
	if o.w == nil {
		o.w = bufio.NewWriterSize(f, 256<<10)
	} else {
		o.w.Reset(f)
	}
	o.write(`<?xml version="1.0" encoding="UTF-8" ?>`+"\n",
		"<rdf:RDF\n",
		`xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"`+"\n",
		`xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#"`+"\n",
		`xmlns:owl="http://www.w3.org/2002/07/owl#"`+"\n",
		`xmlns:ub="`+UnivBenchOntology+`#">`+"\n",
		"\n\n",
		`<owl:Ontology rdf:about="">`+"\n",
		`<owl:imports rdf:resource="`+UnivBenchOntology+`" />`+"\n",
		"</owl:Ontology>\n")
}

func (o *owlSink) typ(s []byte, c class, _ bool) {
	o.closeSection()
	o.write("\n<ub:", className[c], ` rdf:about="`)
	o.writeBytes(s)
	o.write("\">\n")
	o.open, o.inSec = c, true
}

func (o *owlSink) iri(_ []byte, p predicate, v []byte) {
	o.write("   <ub:", predicateName(p), ` rdf:resource="`)
	o.writeBytes(v)
	o.write("\" />\n")
}

func (o *owlSink) lit(_ []byte, p predicate, v []byte) {
	name := predicateName(p)
	o.write("   <ub:", name, ">")
	o.writeBytes(v)
	o.write("</ub:", name, ">\n")
}

func (o *owlSink) univ(_ []byte, p predicate, v []byte, _ bool) {
	name := predicateName(p)
	o.write("   <ub:", name, ">\n      <ub:University rdf:about=\"")
	o.writeBytes(v)
	o.write("\" />   </ub:", name, ">\n")
}

// predicateName is the local name of a univ-bench predicate.
func predicateName(p predicate) string { return predicateIRI[p][len(UnivBench):] }

// WriteUBAFiles writes LUBM in UBA's own layout into the directory dir
// (which must exist): one RDF/XML file per department,
// University<u>_<d>.owl, byte for byte the files UBA 1.7 writes for the
// same universities, index and seed (cfg.Gzip is ignored). Universities
// are written in parallel. It returns the number of files written.
func WriteUBAFiles(dir string, cfg LUBMConfig) (int, error) {
	if err := cfg.check(); err != nil {
		return 0, err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("not a directory")
		}
		return 0, fmt.Errorf("cannot write UBA files to %s: %w", dir, err)
	}
	workers := cfg.workers()
	gens := make([]*univGen, workers)
	sinks := make([]*owlSink, workers)
	for i := range gens {
		sinks[i] = &owlSink{dir: dir}
		gens[i] = newUnivGen(cfg.Seed, sinks[i])
	}
	files := 0
	err := ordered(cfg.Universities, workers,
		func(worker, u int) error {
			s := sinks[worker]
			gens[worker].generate(cfg.Index+u, nil) // the types repeat in this layout
			s.closeFile()
			err := s.err
			s.err = nil
			return err
		},
		func(u int, err error) error {
			if err != nil {
				return err
			}
			if cfg.Progress != nil {
				cfg.Progress(u+1, cfg.Universities)
			}
			return nil
		})
	for _, s := range sinks {
		files += s.files
	}
	return files, err
}
