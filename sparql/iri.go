package sparql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

// unescapeString decodes the escapes of a SPARQL string or IRI body:
// \t \b \n \r \f \" \' \\ and \uXXXX / \UXXXXXXXX. Surrogate code points
// and values above U+10FFFF are errors.
func unescapeString(s string) (string, error) {
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", errors.New("dangling backslash")
		}
		i++
		switch s[i] {
		case 't':
			sb.WriteByte('\t')
		case 'b':
			sb.WriteByte('\b')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 'f':
			sb.WriteByte('\f')
		case '"', '\'', '\\':
			sb.WriteByte(s[i])
		case 'u', 'U':
			n := 4
			if s[i] == 'U' {
				n = 8
			}
			if i+n >= len(s) {
				return "", fmt.Errorf("short \\%c escape", s[i])
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", fmt.Errorf("bad \\%c escape", s[i])
			}
			r := rune(v)
			if (r >= 0xD800 && r <= 0xDFFF) || r > utf8.MaxRune {
				return "", fmt.Errorf("escape \\%c%s is not a valid code point", s[i], s[i+1:i+1+n])
			}
			sb.WriteRune(r)
			i += n
		default:
			return "", fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return sb.String(), nil
}

// resolveIRI resolves ref against base (RFC 3986 §5.2). An absolute ref
// (one with a scheme) and a base that is not absolute leave ref as it is:
// unlike rdf.ResolveIRI, dot segments in an absolute IRI are kept.
func resolveIRI(base, ref string) string {
	if !rdf.HasScheme(base) || rdf.HasScheme(ref) {
		return ref
	}
	return rdf.ResolveIRI(base, ref)
}
