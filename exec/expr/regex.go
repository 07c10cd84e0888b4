package expr

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/wukongd/wukongd/internal/lru"
	"github.com/wukongd/wukongd/sparql"
)

// XPath regular expressions (fn:matches, fn:replace) run on Go's RE2. The
// flags translate as: i → (?i), m → (?m), s → (?s) (without s, "." matches
// neither \n nor \r, as in XPath), x → whitespace outside character classes
// is removed, q → the pattern is a literal string. XPath features RE2 lacks
// (character class subtraction, \i \c escapes, back-references) make the
// pattern invalid, which is an evaluation error.

type regex struct {
	re           *regexp.Regexp
	matchesEmpty bool
	// local: no assertion of the pattern looks before a match (^, \A,
	// \b, \B), so matching the rest of a text from a position is
	// matching the whole text from there (REPLACE matches one at a time).
	local bool
}

// localPattern reports whether the regular expression src has no
// assertion that depends on the text before the match.
func localPattern(src string) bool {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return false
	}
	local := true
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			local = false
		}
		for _, sub := range r.Sub {
			if local {
				walk(sub)
			}
		}
	}
	walk(re)
	return local
}

func translateRegex(pattern, flags string) (string, error) {
	var goFlags []byte
	var dotAll, extended, literal bool
	for i := 0; i < len(flags); i++ {
		switch flags[i] {
		case 'i', 'm':
			goFlags = append(goFlags, flags[i])
		case 's':
			dotAll = true
			goFlags = append(goFlags, 's')
		case 'x':
			extended = true
		case 'q':
			literal = true
		default:
			return "", fmt.Errorf("invalid regex flag %q", flags[i])
		}
	}
	var b strings.Builder
	if len(goFlags) > 0 {
		b.WriteString("(?")
		b.Write(goFlags)
		b.WriteByte(')')
	}
	if literal {
		b.WriteString(regexp.QuoteMeta(pattern))
		return b.String(), nil
	}
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\':
			b.WriteByte(c)
			if i+1 < len(pattern) {
				i++
				b.WriteByte(pattern[i])
			}
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A ']' right after '[' or '[^' is a literal in RE2 but an
			// error in XPath; keep RE2's reading.
		case extended && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
		case c == '.' && !dotAll:
			b.WriteString(`[^\n\r]`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// regexCache holds compiled regexps for patterns that are not constants of
// the query, least recently used out first, bounded in entries and in
// bytes (each entry is charged regexCost). A pattern longer than
// maxCachedPattern is compiled for each use and never kept.
var regexCache struct {
	sync.Mutex
	lru *lru.LRU[string, *regex]
}

const (
	regexCacheSize   = 1024
	regexCacheBytes  = 16 << 20
	maxCachedPattern = 4 << 10
)

// regexCost estimates the memory of a cached regex: its key and a compiled
// program of a few instructions per byte of pattern, each some tens of
// bytes.
func regexCost(key string) int { return 64*len(key) + 1024 }

func getRegex(pattern, flags string) (*regex, error) {
	if len(pattern) > maxCachedPattern {
		return compileRegex(pattern, flags)
	}
	key := flags + "\x00" + pattern
	regexCache.Lock()
	if regexCache.lru == nil {
		regexCache.lru = lru.New[string, *regex](regexCacheSize, regexCacheBytes)
	}
	r, ok := regexCache.lru.Get(key)
	regexCache.Unlock()
	if ok {
		return r, nil
	}
	r, err := compileRegex(pattern, flags)
	if err != nil {
		return nil, err // errors are not kept
	}
	regexCache.Lock()
	regexCache.lru.Add(key, r, regexCost(key))
	regexCache.Unlock()
	return r, nil
}

func compileRegex(pattern, flags string) (*regex, error) {
	src, err := translateRegex(pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("%w: regex %q: %v", ErrEval, pattern, err)
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%w: regex %q: %v", ErrEval, pattern, err)
	}
	return &regex{re: re, matchesEmpty: re.MatchString(""), local: localPattern(src)}, nil
}

// constString returns the string of e if it is a constant simple literal.
func constString(e sparql.Expr) (string, bool) {
	te, ok := e.(*sparql.TermExpr)
	if !ok {
		return "", false
	}
	v := Decode(te.Term)
	if v.kind != KindString {
		return "", false
	}
	return v.str(), true
}

// compileRegexCall compiles REGEX(text, pattern [, flags]) and
// REPLACE(text, pattern, replacement [, flags]). A constant pattern and
// flags are compiled once, here.
func (c *compiler) compileRegexCall(e *sparql.CallExpr) (node, error) {
	args := make([]node, len(e.Args))
	for i, a := range e.Args {
		var err error
		if args[i], err = c.compile(a); err != nil {
			return nil, err
		}
	}
	replace := e.Name == "REPLACE"
	flagsAt := 2
	if replace {
		flagsAt = 3
	}
	var fixed *regex
	var fixedErr error
	if pat, ok := constString(e.Args[1]); ok {
		flags, constFlags := "", true
		if len(e.Args) > flagsAt {
			flags, constFlags = constString(e.Args[flagsAt])
		}
		if constFlags {
			fixed, fixedErr = compileRegex(pat, flags)
			if fixedErr != nil {
				return errNode(fixedErr), nil
			}
		}
	}
	return func(row Binding) (Value, error) {
		text, err := args[0](row)
		if err != nil {
			return Value{}, err
		}
		if !text.isStringLit() {
			return Value{}, errNotString
		}
		re := fixed
		if re == nil {
			pat, err := args[1](row)
			if err != nil {
				return Value{}, err
			}
			flags := Value{kind: KindString}
			if len(args) > flagsAt {
				if flags, err = args[flagsAt](row); err != nil {
					return Value{}, err
				}
			}
			if pat.kind != KindString || flags.kind != KindString {
				return Value{}, errNotSimple
			}
			if err := c.env.stopped(); err != nil {
				return Value{}, err // a regex per row: each compile costs
			}
			if re, err = getRegex(pat.str(), flags.str()); err != nil {
				return Value{}, err
			}
		}
		if !replace {
			return Bool(re.re.MatchString(text.str())), nil
		}
		repl, err := args[2](row)
		if err != nil {
			return Value{}, err
		}
		if repl.kind != KindString {
			return Value{}, errNotSimple
		}
		if re.matchesEmpty {
			return Value{}, errEmptyMatch
		}
		if err := c.env.stopped(); err != nil && len(text.str()) > 1<<16 {
			return Value{}, err
		}
		out, err := xpathReplace(c.env, re, text.str(), repl.str())
		if err != nil {
			return Value{}, err
		}
		return stringLike(out, text), nil
	}, nil
}

// xpathReplace replaces every match of re in s by repl, where "$n" is the
// n-th group ("" if it did not take part; the longest run of digits that
// names an existing group, as fn:replace says), "\$" a dollar and "\\" a
// backslash; any other "\" or "$" is an error.
//
// The pattern matches no empty string (REPLACE refuses those), so the
// matches follow each other without overlap: a local pattern is matched
// one match at a time from the end of the last, so that what REPLACE holds
// besides its output is one match's indexes, and the output's size is
// checked before each piece is written; a pattern with an assertion on
// what comes before a match lists its matches first.
func xpathReplace(env *Env, rx *regex, s, repl string) (string, error) {
	re := rx.re
	// Validate once, before the first match.
	for i := 0; i < len(repl); i++ {
		switch repl[i] {
		case '\\':
			if i+1 >= len(repl) || (repl[i+1] != '\\' && repl[i+1] != '$') {
				return "", errBadReplacement
			}
			i++
		case '$':
			if i+1 >= len(repl) || repl[i+1] < '0' || repl[i+1] > '9' {
				return "", errBadReplacement
			}
		}
	}
	groups := re.NumSubexp()
	var b strings.Builder
	last := 0
	var all [][]int
	if !rx.local {
		all = re.FindAllStringSubmatchIndex(s, -1)
	}
	for k := 0; ; k++ {
		if k%4096 == 4095 {
			if err := env.stopped(); err != nil {
				return "", err
			}
		}
		var m []int
		if rx.local {
			if m = re.FindStringSubmatchIndex(s[last:]); m == nil {
				break
			}
			for j := range m {
				if m[j] >= 0 {
					m[j] += last
				}
			}
		} else if k < len(all) {
			m = all[k]
		} else {
			break
		}
		if err := env.checkSize("REPLACE", b.Len()+m[0]-last+len(repl)); err != nil {
			return "", err
		}
		b.WriteString(s[last:m[0]])
		for i := 0; i < len(repl); i++ {
			c := repl[i]
			switch c {
			case '\\':
				i++
				b.WriteByte(repl[i])
			case '$':
				i++
				n := int(repl[i] - '0')
				for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' && n*10+int(repl[i+1]-'0') <= groups {
					i++
					n = n*10 + int(repl[i]-'0')
				}
				if n <= groups && m[2*n] >= 0 {
					b.WriteString(s[m[2*n]:m[2*n+1]])
				}
			default:
				b.WriteByte(c)
			}
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), nil
}
