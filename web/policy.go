package web

import (
	"strings"
)

// remoteRefs scans SPARQL text for the IRIs that SERVICE clauses (keyword
// "SERVICE") or LOAD operations (keyword "LOAD") reach out to, without a
// full parse: it skips comments, strings and IRIs, tracks PREFIX
// declarations to expand prefixed names, and reports a variable endpoint
// (SERVICE ?s) as "?s". Keywords inside strings, IRIs, prefixed names and
// variable names do not count.
func remoteRefs(text, keyword string) []string { return scanRefs(text, keyword, false) }

// scanRefs is remoteRefs; with skipSilent it leaves out the IRIs of
// "keyword SILENT" (a refused LOAD SILENT succeeds without effect, which
// the backend decides).
func scanRefs(text, keyword string, skipSilent bool) []string {
	if !mayContainWord(text, keyword) {
		return nil // most queries: no lexing (BenchmarkRemoteRefs)
	}
	toks := lexSPARQL(text)
	prefixes := map[string]string{}
	var out []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokWord {
			continue
		}
		switch {
		case strings.EqualFold(t.text, "PREFIX") && i+2 < len(toks) && toks[i+1].kind == tokPName && toks[i+2].kind == tokIRI:
			prefixes[strings.TrimSuffix(toks[i+1].text, ":")] = toks[i+2].text
			i += 2
		case strings.EqualFold(t.text, keyword):
			j := i + 1
			if j < len(toks) && toks[j].kind == tokWord && strings.EqualFold(toks[j].text, "SILENT") {
				if skipSilent {
					continue
				}
				j++
			}
			if j >= len(toks) {
				out = append(out, "")
				continue
			}
			switch n := toks[j]; n.kind {
			case tokIRI:
				out = append(out, n.text)
			case tokVar:
				out = append(out, n.text)
			case tokPName:
				p, local, _ := strings.Cut(n.text, ":")
				if ns, ok := prefixes[p]; ok {
					out = append(out, ns+local)
				} else {
					out = append(out, n.text)
				}
			default:
				out = append(out, "")
			}
		}
	}
	return out
}

// allowed reports whether ref is in the allow-list (or the list has "*").
func allowed(ref string, list []string) bool { return Allowed(ref, list) }

// Allowed reports whether the IRI ref is allowed by list (--allow-service,
// --allow-load): an entry "*" allows any IRI, an entry ending in "*" every
// IRI that starts with the rest ("http://data.example/pub/*"), any other
// entry that IRI exactly.
func Allowed(ref string, list []string) bool {
	if ref == "" {
		return false
	}
	for _, a := range list {
		if a == "*" || a == ref {
			return true
		}
		if p, ok := strings.CutSuffix(a, "*"); ok && p != "" && strings.HasPrefix(ref, p) {
			return true
		}
	}
	return false
}

type tokKind uint8

const (
	tokWord  tokKind = iota // a keyword or bare name
	tokPName                // prefix:local or prefix:
	tokIRI                  // <…>, text without the brackets
	tokVar                  // ?x or $x
	tokOther
)

type token struct {
	kind tokKind
	text string
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c >= 0x80
}

// mayContainWord reports whether text may hold a word that
// strings.EqualFold matches with the ASCII keyword: whether it holds the
// keyword's letters ASCII case-insensitively, leaving out its leading and
// trailing k and s, which also fold with U+212A and U+017F. A keyword with
// k or s inside always may.
func mayContainWord(text, keyword string) bool {
	needle := strings.TrimRight(strings.TrimLeft(keyword, "kKsS"), "kKsS")
	if needle == "" || strings.ContainsAny(needle, "kKsS") {
		return true
	}
	n := len(needle)
	for i := 0; i+n <= len(text); i++ {
		if text[i]|0x20 == needle[0]|0x20 && asciiEqualFold(text[i:i+n], needle) {
			return true
		}
	}
	return false
}

func asciiEqualFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x != y && (x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z') {
			return false
		}
	}
	return true
}

// lexSPARQL splits SPARQL text into the few token kinds remoteRefs needs.
func lexSPARQL(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i = skipString(s, i)
			toks = append(toks, token{kind: tokOther})
		case c == '<':
			j := i + 1
			for j < len(s) && s[j] != '>' && s[j] > ' ' && !strings.ContainsRune("<\"{}|^`", rune(s[j])) {
				j++
			}
			if j < len(s) && s[j] == '>' {
				toks = append(toks, token{kind: tokIRI, text: s[i+1 : j]})
				i = j + 1
			} else {
				toks = append(toks, token{kind: tokOther, text: "<"})
				i++
			}
		case c == '?' || c == '$':
			j := i + 1
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tokVar, text: s[i:j]})
			i = j
		case isNameByte(c) || c == ':':
			j := i
			colon := false
			for j < len(s) && (isNameByte(s[j]) || s[j] == ':' || (s[j] == '\\' && j+1 < len(s)) || s[j] == '%') {
				if s[j] == ':' {
					colon = true
				}
				if s[j] == '\\' {
					j++
				}
				j++
			}
			k := tokWord
			if colon {
				k = tokPName
			}
			toks = append(toks, token{kind: k, text: s[i:j]})
			i = j
		default:
			toks = append(toks, token{kind: tokOther, text: s[i : i+1]})
			i++
		}
	}
	return toks
}

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) int {
	q := s[i]
	if strings.HasPrefix(s[i:], strings.Repeat(string(q), 3)) {
		end := strings.Index(s[i+3:], strings.Repeat(string(q), 3))
		for end >= 0 && isEscaped(s, i+3+end) {
			next := strings.Index(s[i+3+end+1:], strings.Repeat(string(q), 3))
			if next < 0 {
				end = -1
				break
			}
			end += 1 + next
		}
		if end < 0 {
			return len(s)
		}
		return i + 3 + end + 3
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j + 1
		case '\n', '\r':
			return j
		}
	}
	return len(s)
}

func isEscaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}
