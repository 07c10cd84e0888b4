package sparql

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// A reader for the subset of Turtle the W3C test manifests use: @prefix /
// PREFIX, IRIs (relative ones resolved against the manifest's directory as
// file paths), prefixed names, 'a', strings, numbers and booleans, blank
// node property lists and collections.

type mtriple struct{ s, p, o string }

type manifest struct {
	dir     string
	triples []mtriple
}

func (m *manifest) objects(s, p string) []string {
	var out []string
	for _, t := range m.triples {
		if t.s == s && t.p == p {
			out = append(out, t.o)
		}
	}
	return out
}

func (m *manifest) object(s, p string) string {
	if o := m.objects(s, p); len(o) > 0 {
		return o[0]
	}
	return ""
}

// list returns the members of the RDF collection starting at head.
func (m *manifest) list(head string) []string {
	var out []string
	for head != "" && head != "<"+rdfNS+"nil>" {
		out = append(out, m.object(head, "<"+rdfNS+"first>"))
		head = m.object(head, "<"+rdfNS+"rest>")
	}
	return out
}

const (
	rdfNS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	mfNS  = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
	qtNS  = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#"
	utNS  = "http://www.w3.org/2009/sparql/tests/test-update#"
)

type mparser struct {
	src      []rune
	i        int
	dir      string
	prefixes map[string]string
	bnodes   int
	out      []mtriple
}

func readManifest(path string) (*manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &mparser{src: []rune(string(data)), dir: filepath.Dir(path), prefixes: map[string]string{}}
	if err := p.doc(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &manifest{dir: p.dir, triples: p.out}, nil
}

func (p *mparser) ws() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case unicode.IsSpace(c):
			p.i++
		case c == '#':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *mparser) peek() rune {
	p.ws()
	if p.i >= len(p.src) {
		return 0
	}
	return p.src[p.i]
}

func (p *mparser) expect(c rune) error {
	if p.peek() != c {
		return fmt.Errorf("offset %d: expected %q", p.i, c)
	}
	p.i++
	return nil
}

func (p *mparser) word() string {
	p.ws()
	start := p.i
	for p.i < len(p.src) {
		c := p.src[p.i]
		if unicode.IsSpace(c) || strings.ContainsRune("<>()[];,\"", c) {
			break
		}
		if c == '.' && (p.i+1 >= len(p.src) || unicode.IsSpace(p.src[p.i+1])) {
			break
		}
		p.i++
	}
	return string(p.src[start:p.i])
}

func (p *mparser) doc() error {
	for p.peek() != 0 {
		if p.src[p.i] == '@' || strings.EqualFold(string(p.src[p.i:min(p.i+6, len(p.src))]), "PREFIX") {
			kw := p.word()
			name := strings.TrimSuffix(p.word(), ":")
			iri, err := p.term()
			if err != nil {
				return err
			}
			p.prefixes[name] = strings.Trim(iri, "<>")
			if strings.HasPrefix(kw, "@") {
				if err := p.expect('.'); err != nil {
					return err
				}
			}
			continue
		}
		s, err := p.term()
		if err != nil {
			return err
		}
		if p.peek() != '.' {
			if err := p.predicateObjects(s); err != nil {
				return err
			}
		}
		if err := p.expect('.'); err != nil {
			return err
		}
	}
	return nil
}

func (p *mparser) predicateObjects(s string) error {
	for {
		pred, err := p.term()
		if err != nil {
			return err
		}
		for {
			o, err := p.term()
			if err != nil {
				return err
			}
			p.out = append(p.out, mtriple{s, pred, o})
			if p.peek() != ',' {
				break
			}
			p.i++
		}
		if p.peek() != ';' {
			return nil
		}
		for p.peek() == ';' {
			p.i++
		}
		if c := p.peek(); c == '.' || c == ']' {
			return nil
		}
	}
}

func (p *mparser) fresh() string {
	p.bnodes++
	return fmt.Sprintf("_:m%d", p.bnodes)
}

func (p *mparser) term() (string, error) {
	switch c := p.peek(); c {
	case '<':
		j := p.i + 1
		for j < len(p.src) && p.src[j] != '>' {
			j++
		}
		iri := string(p.src[p.i+1 : j])
		p.i = j + 1
		if iri == "" || !strings.Contains(iri, ":") {
			iri = filepath.Join(p.dir, iri)
		}
		return "<" + iri + ">", nil
	case '"', '\'':
		q := string(c)
		if strings.HasPrefix(string(p.src[p.i:min(p.i+3, len(p.src))]), strings.Repeat(q, 3)) {
			q = strings.Repeat(q, 3)
		}
		j := p.i + len(q)
		for j < len(p.src) && !strings.HasPrefix(string(p.src[j:min(j+len(q), len(p.src))]), q) {
			if p.src[j] == '\\' {
				j++
			}
			j++
		}
		s := string(p.src[p.i+len(q) : j])
		p.i = j + len(q)
		if p.i < len(p.src) && p.src[p.i] == '@' {
			p.word()
		} else if p.i+1 < len(p.src) && p.src[p.i] == '^' {
			p.i += 2
			if _, err := p.term(); err != nil {
				return "", err
			}
		}
		return "\"" + s + "\"", nil
	case '[':
		p.i++
		b := p.fresh()
		if p.peek() != ']' {
			if err := p.predicateObjects(b); err != nil {
				return "", err
			}
		}
		return b, p.expect(']')
	case '(':
		p.i++
		var items []string
		for p.peek() != ')' {
			if p.peek() == 0 {
				return "", fmt.Errorf("unterminated collection")
			}
			t, err := p.term()
			if err != nil {
				return "", err
			}
			items = append(items, t)
		}
		p.i++
		head := "<" + rdfNS + "nil>"
		for k := len(items) - 1; k >= 0; k-- {
			n := p.fresh()
			p.out = append(p.out, mtriple{n, "<" + rdfNS + "first>", items[k]}, mtriple{n, "<" + rdfNS + "rest>", head})
			head = n
		}
		return head, nil
	case 0:
		return "", fmt.Errorf("unexpected end of manifest")
	}
	w := p.word()
	if w == "a" {
		return "<" + rdfNS + "type>", nil
	}
	if i := strings.IndexByte(w, ':'); i >= 0 && !strings.HasPrefix(w, "_:") {
		ns, ok := p.prefixes[w[:i]]
		if !ok {
			return "", fmt.Errorf("undefined prefix in %q", w)
		}
		return "<" + ns + w[i+1:] + ">", nil
	}
	if w == "" {
		return "", fmt.Errorf("offset %d: unexpected %q", p.i, p.src[p.i])
	}
	return w, nil
}

// w3cTest is one test of a manifest.
type w3cTest struct {
	name, kind, file string
}

// w3cTests reads every manifest under dir and returns its syntax and
// evaluation tests (kind is the local name of the test type).
func w3cTests(dir string) ([]w3cTest, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "manifest.ttl"))
	if err != nil {
		return nil, err
	}
	var out []w3cTest
	for _, path := range paths {
		m, err := readManifest(path)
		if err != nil {
			return nil, err
		}
		for _, mf := range m.subjectsOfType("<" + mfNS + "Manifest>") {
			for _, l := range m.objects(mf, "<"+mfNS+"entries>") {
				for _, t := range m.list(l) {
					kind := strings.TrimSuffix(strings.TrimPrefix(m.object(t, "<"+rdfNS+"type>"), "<"+mfNS), ">")
					action := m.object(t, "<"+mfNS+"action>")
					if strings.HasPrefix(action, "_:") {
						if q := m.object(action, "<"+qtNS+"query>"); q != "" {
							action = q
						} else {
							action = m.object(action, "<"+utNS+"request>")
						}
					}
					if action == "" {
						continue
					}
					name := strings.Trim(m.object(t, "<"+mfNS+"name>"), "\"")
					out = append(out, w3cTest{name: filepath.Base(filepath.Dir(path)) + "/" + name, kind: kind, file: strings.Trim(action, "<>")})
				}
			}
		}
	}
	return out, nil
}

func (m *manifest) subjectsOfType(typ string) []string {
	var out []string
	for _, t := range m.triples {
		if t.p == "<"+rdfNS+"type>" && t.o == typ {
			out = append(out, t.s)
		}
	}
	return out
}
