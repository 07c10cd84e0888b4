package web

import (
	"net/http"
	"net/textproto"
	"strings"
)

// head is a request header the connection loop serves itself.
type head struct {
	method, target, path, rawQuery, host string
	header                               http.Header
	contentLength                        int64
	close                                bool
}

// parseHead parses raw (a request line and header fields, CRLF-ended, up
// to the blank line) and reports whether the loop serves it (the rule in
// h1.go). It refuses — ok false, for net/http to answer — anything outside
// the plain subset, so it never has to decide what a malformed request
// deserves.
func parseHead(raw []byte) (h head, ok bool) {
	s := string(raw) // one copy: every string of the request is a part of it
	line, rest, ok := cutLine(s)
	if !ok {
		return h, false
	}
	switch {
	case strings.HasPrefix(line, "GET "):
		h.method, line = http.MethodGet, line[4:]
	case strings.HasPrefix(line, "POST "):
		h.method, line = http.MethodPost, line[5:]
	default:
		return h, false
	}
	target, proto, ok := strings.Cut(line, " ")
	if !ok || proto != "HTTP/1.1" || !visibleASCII(target) {
		return h, false
	}
	path, rawQuery, _ := strings.Cut(target, "?")
	switch path {
	case "/sparql", "/query":
	default:
		return h, false
	}
	h.target, h.path, h.rawQuery = target, path, rawQuery

	h.header = make(http.Header, strings.Count(rest, "\n"))
	values := make([]string, strings.Count(rest, "\n"))
	hosts, lengths := 0, 0
	cl := ""
	for {
		line, rest, ok = cutLine(rest)
		if !ok {
			return h, false
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			return h, false
		}
		value = strings.Trim(value, " \t")
		if !fieldValue(value) {
			return h, false
		}
		key := canonicalKey(name)
		switch key {
		case "Host":
			hosts++
			h.host = value
			continue // in Request.Host, not the header (as net/http)
		case "Content-Length":
			lengths++
			cl = value
		case "Transfer-Encoding", "Expect", "Upgrade", "Te", "Trailer":
			return h, false
		case "Connection":
			for _, tok := range strings.Split(value, ",") {
				switch tok = strings.TrimSpace(tok); {
				case strings.EqualFold(tok, "close"):
					h.close = true
				case strings.EqualFold(tok, "upgrade"):
					return h, false
				}
			}
		}
		vs := values[:1:1]
		values = values[1:]
		vs[0] = value
		if old, dup := h.header[key]; dup {
			vs = append(old, value)
		}
		h.header[key] = vs
	}
	if hosts != 1 || !validHost(h.host) || lengths > 1 {
		return h, false
	}
	if lengths == 1 {
		n, ok := parseLength(cl)
		if !ok {
			return h, false
		}
		h.contentLength = n
	}
	switch {
	case h.method == http.MethodPost && lengths == 0:
		return h, false // a body in chunks, or none said: net/http's
	case h.method == http.MethodGet && h.contentLength != 0:
		return h, false
	}
	return h, true
}

// cutLine cuts s after its first CRLF; a bare LF is not taken.
func cutLine(s string) (line, rest string, ok bool) {
	i := strings.IndexByte(s, '\n')
	if i < 1 || s[i-1] != '\r' {
		return "", "", false
	}
	return s[:i-1], s[i+1:], true
}

// visibleASCII reports whether s is non-empty printable ASCII without
// spaces (a request target as the loop takes it).
func visibleASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// isToken reports whether s is an HTTP token (a field name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// fieldValue reports whether s is a field value of printable ASCII and
// tabs.
func fieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// validHost reports whether s is a plain host[:port] (names, IPv4, [IPv6]).
func validHost(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_') {
			return false
		}
	}
	return true
}

// parseLength parses a Content-Length: digits only, at most 18 of them.
func parseLength(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// canonicalKey is textproto's canonical form of a field name, without an
// allocation for the names clients send already canonical.
func canonicalKey(name string) string {
	switch name {
	case "Host", "Accept", "Content-Type", "Content-Length", "User-Agent", "Connection", "Authorization", "Origin", "X-Query-Id", "Accept-Encoding":
		return name
	case "host":
		return "Host"
	case "accept":
		return "Accept"
	case "content-type":
		return "Content-Type"
	case "content-length":
		return "Content-Length"
	case "user-agent":
		return "User-Agent"
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}
