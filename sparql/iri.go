package sparql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
// (one with a scheme) and a base that is not absolute leave ref as it is.
func resolveIRI(base, ref string) string {
	if !hasScheme(base) || hasScheme(ref) {
		return ref
	}
	b := splitIRI(base)
	r := splitIRI(ref)
	t := r
	t.scheme = b.scheme
	if !r.hasAuth {
		t.auth, t.hasAuth = b.auth, b.hasAuth
		switch {
		case r.path == "":
			t.path = b.path
			if !r.hasQuery {
				t.query, t.hasQuery = b.query, b.hasQuery
			}
		case strings.HasPrefix(r.path, "/"):
			t.path = removeDots(r.path)
		default:
			t.path = removeDots(merge(b.hasAuth, b.path, r.path))
		}
	} else {
		t.path = removeDots(r.path)
	}
	var sb strings.Builder
	sb.WriteString(t.scheme)
	sb.WriteByte(':')
	if t.hasAuth {
		sb.WriteString("//")
		sb.WriteString(t.auth)
	}
	sb.WriteString(t.path)
	if t.hasQuery {
		sb.WriteByte('?')
		sb.WriteString(t.query)
	}
	if t.hasFrag {
		sb.WriteByte('#')
		sb.WriteString(t.frag)
	}
	return sb.String()
}

type iriParts struct {
	scheme, auth, path, query, frag string
	hasAuth, hasQuery, hasFrag      bool
}

func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return true
		default:
			return false
		}
	}
	return false
}

// splitIRI splits an IRI reference into its five components.
func splitIRI(s string) iriParts {
	var p iriParts
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, p.frag, p.hasFrag = s[:i], s[i+1:], true
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s, p.query, p.hasQuery = s[:i], s[i+1:], true
	}
	if hasScheme(s) {
		i := strings.IndexByte(s, ':')
		p.scheme, s = s[:i], s[i+1:]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		p.auth, p.hasAuth, s = s[:i], true, s[i:]
	}
	p.path = s
	return p
}

func merge(baseHasAuth bool, basePath, ref string) string {
	if baseHasAuth && basePath == "" {
		return "/" + ref
	}
	i := strings.LastIndexByte(basePath, '/')
	return basePath[:i+1] + ref
}

// removeDots is remove_dot_segments of RFC 3986 §5.2.4.
func removeDots(in string) string {
	var out []string
	for len(in) > 0 {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "/..":
			in = "/"
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "." || in == "..":
			in = ""
		default:
			start := 0
			if in[0] == '/' {
				start = 1
			}
			j := strings.IndexByte(in[start:], '/')
			if j < 0 {
				j = len(in)
			} else {
				j += start
			}
			out = append(out, in[:j])
			in = in[j:]
		}
	}
	return strings.Join(out, "")
}
