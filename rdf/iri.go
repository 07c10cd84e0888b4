package rdf

import "strings"

// HasScheme reports whether s starts with an RFC 3986 scheme and a colon,
// that is, whether s is an absolute IRI rather than a relative reference.
func HasScheme[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// ResolveIRI resolves the reference ref against base (RFC 3986 section
// 5.2). An absolute ref is returned with its dot segments removed, and
// unchanged when it has no "/." in it; with an empty base a relative ref is
// returned as is.
func ResolveIRI(base, ref string) string {
	if HasScheme(ref) {
		if !strings.Contains(ref, "/.") {
			return ref
		}
		r := splitIRI(ref)
		r.path = removeDotSegments(r.path)
		return r.String()
	}
	if base == "" {
		return ref
	}
	b := splitIRI(base)
	r := splitIRI(ref)
	var t iriRef
	t.scheme = b.scheme
	switch {
	case r.hasAuth:
		t.hasAuth, t.auth = true, r.auth
		t.path = removeDotSegments(r.path)
		t.hasQuery, t.query = r.hasQuery, r.query
	case r.path == "":
		t.hasAuth, t.auth = b.hasAuth, b.auth
		t.path = b.path
		if r.hasQuery {
			t.hasQuery, t.query = true, r.query
		} else {
			t.hasQuery, t.query = b.hasQuery, b.query
		}
	default:
		t.hasAuth, t.auth = b.hasAuth, b.auth
		if strings.HasPrefix(r.path, "/") {
			t.path = removeDotSegments(r.path)
		} else {
			var merged string
			if b.hasAuth && b.path == "" {
				merged = "/" + r.path
			} else if i := strings.LastIndexByte(b.path, '/'); i >= 0 {
				merged = b.path[:i+1] + r.path
			} else {
				merged = r.path
			}
			t.path = removeDotSegments(merged)
		}
		t.hasQuery, t.query = r.hasQuery, r.query
	}
	t.hasFrag, t.frag = r.hasFrag, r.frag
	return t.String()
}

// iriRef is an IRI reference split into its RFC 3986 components.
type iriRef struct {
	scheme            string
	hasAuth           bool
	auth, path        string
	hasQuery, hasFrag bool
	query, frag       string
}

func splitIRI(s string) iriRef {
	var r iriRef
	if HasScheme(s) {
		i := strings.IndexByte(s, ':')
		r.scheme, s = s[:i], s[i+1:]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		r.hasFrag, r.frag, s = true, s[i+1:], s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		r.hasQuery, r.query, s = true, s[i+1:], s[:i]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		r.hasAuth, r.auth, s = true, s[:i], s[i:]
	}
	r.path = s
	return r
}

func (r *iriRef) String() string {
	var b strings.Builder
	if r.scheme != "" {
		b.WriteString(r.scheme)
		b.WriteByte(':')
	}
	if r.hasAuth {
		b.WriteString("//")
		b.WriteString(r.auth)
	}
	b.WriteString(r.path)
	if r.hasQuery {
		b.WriteByte('?')
		b.WriteString(r.query)
	}
	if r.hasFrag {
		b.WriteByte('#')
		b.WriteString(r.frag)
	}
	return b.String()
}

// removeDotSegments is RFC 3986 section 5.2.4.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string // output segments, each starting with "/" except maybe the first
	for in != "" {
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
			i := strings.IndexByte(in[1:], '/')
			if i < 0 {
				out = append(out, in)
				in = ""
			} else {
				out = append(out, in[:i+1])
				in = in[i+1:]
			}
		}
	}
	return strings.Join(out, "")
}
