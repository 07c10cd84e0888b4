package results

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

// ParseTerm parses one RDF term at the start of s in N-Triples syntax, plus
// the Turtle forms the TSV results format allows: single-quoted and
// long-quoted strings, and the bare numbers and booleans (4, -1.5, 1e3,
// true). It returns the term and the number of bytes it used.
func ParseTerm(s string) (rdf.Term, int, error) {
	if s == "" {
		return rdf.Term{}, 0, fmt.Errorf("expected a term, found end of input")
	}
	switch c := s[0]; {
	case c == '<':
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return rdf.Term{}, 0, fmt.Errorf("unterminated IRI")
		}
		iri, err := unescapeIRI(s[1:end])
		if err != nil {
			return rdf.Term{}, 0, err
		}
		return rdf.NewIRI(iri), end + 1, nil
	case c == '_':
		if len(s) < 3 || s[1] != ':' {
			return rdf.Term{}, 0, fmt.Errorf("bad blank node %q", s)
		}
		n := 2
		for n < len(s) {
			r, w := utf8.DecodeRuneInString(s[n:])
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ',' || r == ';' || r == ')' || r == ']' || r == '<' || r == '"' {
				break
			}
			n += w
		}
		for n > 2 && s[n-1] == '.' {
			n--
		}
		if n == 2 {
			return rdf.Term{}, 0, fmt.Errorf("empty blank node label")
		}
		return rdf.NewBlank(s[2:n]), n, nil
	case c == '"' || c == '\'':
		return parseLiteral(s)
	case c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9':
		return parseNumber(s)
	case strings.HasPrefix(s, "true"):
		return rdf.NewLiteral("true", rdf.XSDBoolean), 4, nil
	case strings.HasPrefix(s, "false"):
		return rdf.NewLiteral("false", rdf.XSDBoolean), 5, nil
	}
	return rdf.Term{}, 0, fmt.Errorf("expected a term at %q", truncate(s))
}

func truncate(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

func parseLiteral(s string) (rdf.Term, int, error) {
	q := s[0]
	long := len(s) >= 3 && s[1] == q && s[2] == q
	i := 1
	if long {
		i = 3
	}
	var b strings.Builder
	for {
		if i >= len(s) {
			return rdf.Term{}, 0, fmt.Errorf("unterminated string")
		}
		c := s[i]
		if c == q {
			if !long {
				i++
				break
			}
			if i+2 < len(s) && s[i+1] == q && s[i+2] == q {
				// A long string may end with extra quotes: """a"""" is a".
				for i+3 < len(s) && s[i+3] == q {
					b.WriteByte(q)
					i++
				}
				i += 3
				break
			}
		}
		if c == '\\' {
			r, n, err := unescape(s[i:])
			if err != nil {
				return rdf.Term{}, 0, err
			}
			b.WriteRune(r)
			i += n
			continue
		}
		if !long && (c == '\n' || c == '\r') {
			return rdf.Term{}, 0, fmt.Errorf("line break in a string")
		}
		b.WriteByte(c)
		i++
	}
	lex := b.String()
	switch {
	case strings.HasPrefix(s[i:], "^^<"):
		end := strings.IndexByte(s[i+3:], '>')
		if end < 0 {
			return rdf.Term{}, 0, fmt.Errorf("unterminated datatype IRI")
		}
		dt, err := unescapeIRI(s[i+3 : i+3+end])
		if err != nil {
			return rdf.Term{}, 0, err
		}
		return rdf.NewLiteral(lex, dt), i + 3 + end + 1, nil
	case strings.HasPrefix(s[i:], "@"):
		n := i + 1
		for n < len(s) && (isAlpha(s[n]) || s[n] == '-' || (n > i+1 && s[n] >= '0' && s[n] <= '9')) {
			n++
		}
		if n == i+1 {
			return rdf.Term{}, 0, fmt.Errorf("empty language tag")
		}
		return rdf.NewLangLiteral(lex, s[i+1:n]), n, nil
	}
	return rdf.NewLiteral(lex, ""), i, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// unescape decodes the escape at the start of s (which begins with '\').
func unescape(s string) (rune, int, error) {
	if len(s) < 2 {
		return 0, 0, fmt.Errorf("bad escape at end of input")
	}
	switch s[1] {
	case 't':
		return '\t', 2, nil
	case 'b':
		return '\b', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 'f':
		return '\f', 2, nil
	case '"', '\'', '\\':
		return rune(s[1]), 2, nil
	case 'u', 'U':
		n := 4
		if s[1] == 'U' {
			n = 8
		}
		if len(s) < 2+n {
			return 0, 0, fmt.Errorf("short \\%c escape", s[1])
		}
		v, err := strconv.ParseUint(s[2:2+n], 16, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			return 0, 0, fmt.Errorf("bad \\%c escape %q", s[1], s[:2+n])
		}
		return rune(v), 2 + n, nil
	}
	return 0, 0, fmt.Errorf("bad escape \\%c", s[1])
}

func unescapeIRI(s string) (string, error) {
	if !strings.ContainsRune(s, '\\') {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			r, n, err := unescape(s[i:])
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
			i += n
			continue
		}
		if s[i] == '\\' {
			return "", fmt.Errorf("bad escape in IRI")
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), nil
}

// parseNumber parses a Turtle INTEGER, DECIMAL or DOUBLE.
func parseNumber(s string) (rdf.Term, int, error) {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	digits := func() int {
		st := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - st
	}
	intDigits := digits()
	dt := rdf.XSDInteger
	if i < len(s) && s[i] == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
		i++
		digits()
		dt = rdf.XSDDecimal
	} else if intDigits == 0 && !(i < len(s) && (s[i] == 'e' || s[i] == 'E')) {
		return rdf.Term{}, 0, fmt.Errorf("bad number %q", truncate(s))
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return rdf.Term{}, 0, fmt.Errorf("bad exponent in %q", truncate(s))
		}
		dt = rdf.XSDDouble
	}
	return rdf.NewLiteral(s[:i], dt), i, nil
}
