package loader

import (
	"bytes"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// fuzzParse checks that parsing never panics, that every error is a
// *SyntaxError with a position, and that emitted terms are well formed.
func fuzzParse(t *testing.T, f Format, data []byte) {
	err := Parse(bytes.NewReader(data), f, Options{Name: "fuzz", Base: "http://example.org/base/"}, func(q rdf.Quad) error {
		if q.S.IsZero() || q.P.Kind != rdf.KindIRI || q.O.IsZero() {
			t.Fatalf("malformed statement %#v", q)
		}
		return nil
	})
	if err != nil {
		se, ok := err.(*SyntaxError)
		if !ok {
			t.Fatalf("error is not a *SyntaxError: %v", err)
		}
		if se.Line < 1 || se.Col < 1 {
			t.Fatalf("bad position in %v", se)
		}
	}
	// With recovery, parsing also terminates without a panic.
	_ = Parse(bytes.NewReader(data), f, Options{OnError: func(*SyntaxError) error { return nil }}, func(rdf.Quad) error { return nil })
}

func FuzzNTriples(f *testing.F) {
	f.Add([]byte("<http://a/s> <http://a/p> \"x\\u00e9\"@en .\n_:b <http://a/p> \"1\"^^<http://a/d> .\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, NTriples, data) })
}

func FuzzNQuads(f *testing.F) {
	f.Add([]byte("<http://a/s> <http://a/p> <http://a/o> <http://a/g> .\n_:b <http://a/p> \"x\" _:g .\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, NQuads, data) })
}

func FuzzTurtle(f *testing.F) {
	f.Add([]byte("@prefix : <http://a/> . :s :p [ :q (1 2.5 -3e4 true) ], \"\"\"long\"\"\"@en ; a :C . _:x :p 'y'^^:d ."))
	f.Add([]byte("PREFIX p: <x#> BASE <http://b/> <s> p:a\\.b%20 <../o> ."))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, Turtle, data) })
}

func FuzzTriG(f *testing.F) {
	f.Add([]byte("@prefix : <http://a/> . GRAPH :g { :s :p :o } [] { :a :b :c . } { :x :y ( :z ) }"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TriG, data) })
}

func FuzzRDFXML(f *testing.F) {
	f.Add([]byte(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/"><e:T rdf:about="a" e:x="1"><e:p rdf:parseType="Resource"><e:q>v</e:q></e:p><e:l rdf:parseType="Collection"><e:T/></e:l><e:m rdf:parseType="Literal"><b xmlns="http://h/">x</b></e:m></e:T></rdf:RDF>`))
	f.Add([]byte(`<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY a "x&amp;"><!ENTITY b "&a;&a;&a;"><!ENTITY c "&b;&b;"><!ENTITY d SYSTEM "file:///etc/passwd">]><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/"><e:T rdf:about="&c;"><e:p>&b;&c;</e:p></e:T></rdf:RDF>`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, RDFXML, data) })
}
