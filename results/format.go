package results

import (
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Format is a wire format for query results or RDF graphs.
type Format uint8

const (
	// FormatNone is no format (nothing acceptable).
	FormatNone Format = iota
	// Solution formats (SELECT; JSON and XML also carry ASK booleans).
	FormatJSON
	FormatXML
	FormatCSV
	FormatTSV
	// Graph formats (CONSTRUCT, DESCRIBE, Graph Store Protocol).
	FormatNTriples
	FormatTurtle
	FormatJSONLD
	FormatRDFXML
)

// SolutionFormats are the formats for SELECT results, in the server's order
// of preference.
var SolutionFormats = []Format{FormatJSON, FormatXML, FormatCSV, FormatTSV}

// BooleanFormats are the formats for ASK results, in order of preference.
var BooleanFormats = []Format{FormatJSON, FormatXML}

// GraphFormats are the formats for RDF graphs, in order of preference.
var GraphFormats = []Format{FormatTurtle, FormatNTriples, FormatJSONLD, FormatRDFXML}

type formatInfo struct {
	name      string   // short name, used in format= parameters
	ext       string   // file extension without dot
	media     string   // the canonical media type (with charset where useful)
	aliases   []string // other media types that mean this format
	nameAlias []string
}

var formats = [...]formatInfo{
	FormatNone:     {},
	FormatJSON:     {name: "json", ext: "srj", media: "application/sparql-results+json", aliases: []string{"application/json"}, nameAlias: []string{"srj"}},
	FormatXML:      {name: "xml", ext: "srx", media: "application/sparql-results+xml", aliases: []string{"application/xml", "text/xml"}, nameAlias: []string{"srx"}},
	FormatCSV:      {name: "csv", ext: "csv", media: "text/csv", nameAlias: nil},
	FormatTSV:      {name: "tsv", ext: "tsv", media: "text/tab-separated-values", nameAlias: nil},
	FormatNTriples: {name: "ntriples", ext: "nt", media: "application/n-triples", aliases: []string{"text/plain"}, nameAlias: []string{"nt", "n-triples"}},
	FormatTurtle:   {name: "turtle", ext: "ttl", media: "text/turtle", aliases: []string{"application/x-turtle"}, nameAlias: []string{"ttl"}},
	FormatJSONLD:   {name: "jsonld", ext: "jsonld", media: "application/ld+json", aliases: []string{"application/json"}, nameAlias: []string{"json-ld", "json"}},
	FormatRDFXML:   {name: "rdfxml", ext: "rdf", media: "application/rdf+xml", aliases: []string{"application/xml", "text/xml"}, nameAlias: []string{"rdf", "rdf/xml", "xml"}},
}

// String returns the short name of f ("json", "turtle", …).
func (f Format) String() string {
	if int(f) < len(formats) && f != FormatNone {
		return formats[f].name
	}
	return "none"
}

// MediaType returns the canonical media type of f, without parameters.
func (f Format) MediaType() string {
	if int(f) < len(formats) {
		return formats[f].media
	}
	return ""
}

// ContentType returns the Content-Type header value for f (with
// charset=utf-8 on the text formats that do not imply it).
func (f Format) ContentType() string {
	switch f {
	case FormatCSV, FormatTSV, FormatTurtle:
		return f.MediaType() + "; charset=utf-8"
	case FormatNone:
		return ""
	}
	return f.MediaType()
}

// Extension returns the usual file extension of f, without the dot.
func (f Format) Extension() string {
	if int(f) < len(formats) {
		return formats[f].ext
	}
	return ""
}

// IsGraph reports whether f is an RDF graph format.
func (f Format) IsGraph() bool { return f >= FormatNTriples && f <= FormatRDFXML }

// matches reports whether the media type mt (lower-case, no parameters)
// names f.
func (f Format) matches(mt string) bool {
	fi := &formats[f]
	if mt == fi.media {
		return true
	}
	for _, a := range fi.aliases {
		if mt == a {
			return true
		}
	}
	return false
}

// ParseFormat returns the format among offers that s names: a short name
// ("json", "xml", "csv", "tsv", "nt", "ntriples", "ttl", "turtle", "jsonld",
// "rdfxml", …) or a media type. It returns FormatNone if s names none of the
// offers. This serves the format= and output= parameters some clients add.
func ParseFormat(s string, offers []Format) Format {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if s == "" {
		return FormatNone
	}
	for _, f := range offers {
		fi := &formats[f]
		if s == fi.name || f.matches(s) {
			return f
		}
		for _, a := range fi.nameAlias {
			if s == a {
				return f
			}
		}
	}
	return FormatNone
}

// mediaRange is one element of an Accept header.
type mediaRange struct {
	typ, sub string
	q        float64
	order    int
}

func parseAccept(accept string) []mediaRange {
	var out []mediaRange
	for i, part := range strings.Split(accept, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		params := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(params[0]))
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok {
			if mt != "*" {
				continue
			}
			typ, sub = "*", "*"
		}
		r := mediaRange{typ: strings.TrimSpace(typ), sub: strings.TrimSpace(sub), q: 1, order: i}
		for _, p := range params[1:] {
			k, v, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || q < 0 || q > 1 {
					q = 0
				}
				r.q = q
			}
		}
		out = append(out, r)
	}
	return out
}

// specificity of range r for media type mt: -1 if it does not match,
// 0 for */*, 1 for type/*, 2 for an exact match.
func (r mediaRange) specificity(mt string) int {
	typ, sub, _ := strings.Cut(mt, "/")
	switch {
	case r.typ == "*" && r.sub == "*":
		return 0
	case r.typ == typ && r.sub == "*":
		return 1
	case r.typ == typ && r.sub == sub:
		return 2
	}
	return -1
}

// Negotiate picks the format among offers (in the server's order of
// preference) that the Accept header value prefers. The quality of an offer
// is that of the most specific media range matching any of its media types
// (RFC 9110 §12.5.1); the highest quality wins, ties go to the earlier offer.
// An empty Accept header accepts anything (the first offer). It returns
// FormatNone when nothing is acceptable: the caller answers 406.
func Negotiate(accept string, offers []Format) Format {
	// Clients send the same few Accept headers on every request: the
	// answers are cached (parsing one costs about 1.5 µs and 14 allocations).
	if len(accept) > maxCachedAccept || len(offers) > len(negotiateKey{}.offers) {
		return negotiate(accept, offers)
	}
	k := negotiateKey{accept: accept, n: uint8(len(offers))}
	copy(k.offers[:], offers)
	negotiateCache.RLock()
	f, ok := negotiateCache.m[k]
	negotiateCache.RUnlock()
	if ok {
		return f
	}
	f = negotiate(accept, offers)
	negotiateCache.Lock()
	if len(negotiateCache.m) < maxNegotiateCache {
		if negotiateCache.m == nil {
			negotiateCache.m = make(map[negotiateKey]Format)
		}
		negotiateCache.m[k] = f
	}
	negotiateCache.Unlock()
	return f
}

type negotiateKey struct {
	accept string
	offers [8]Format
	n      uint8
}

const (
	maxCachedAccept   = 512
	maxNegotiateCache = 1024
)

var negotiateCache struct {
	sync.RWMutex
	m map[negotiateKey]Format
}

func negotiate(accept string, offers []Format) Format {
	if len(offers) == 0 {
		return FormatNone
	}
	if strings.TrimSpace(accept) == "" {
		return offers[0]
	}
	ranges := parseAccept(accept)
	type cand struct {
		f    Format
		q    float64
		spec int
		pos  int
	}
	var cands []cand
	for pos, f := range offers {
		best := cand{f: f, q: 0, spec: -1, pos: pos}
		mts := append([]string{formats[f].media}, formats[f].aliases...)
		for _, mt := range mts {
			for _, r := range ranges {
				s := r.specificity(mt)
				if s < 0 {
					continue
				}
				// The most specific range decides; among equally specific
				// ones (several aliases), the best quality.
				if s > best.spec || (s == best.spec && r.q > best.q) {
					best.spec, best.q = s, r.q
				}
			}
		}
		if best.spec >= 0 && best.q > 0 {
			cands = append(cands, best)
		}
	}
	if len(cands) == 0 {
		return FormatNone
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].q != cands[j].q {
			return cands[i].q > cands[j].q
		}
		if cands[i].spec != cands[j].spec {
			return cands[i].spec > cands[j].spec
		}
		return cands[i].pos < cands[j].pos
	})
	return cands[0].f
}
