package expr

import (
	"crypto/md5"
	crand "crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// arity bounds of the built-ins: min, max (-1: any).
var builtinArity = map[string][2]int{
	"STR": {1, 1}, "LANG": {1, 1}, "LANGMATCHES": {2, 2}, "DATATYPE": {1, 1},
	"BOUND": {1, 1}, "IRI": {1, 1}, "URI": {1, 1}, "BNODE": {0, 1}, "RAND": {0, 0},
	"ABS": {1, 1}, "CEIL": {1, 1}, "FLOOR": {1, 1}, "ROUND": {1, 1},
	"CONCAT": {0, -1}, "SUBSTR": {2, 3}, "STRLEN": {1, 1}, "REPLACE": {3, 4},
	"UCASE": {1, 1}, "LCASE": {1, 1}, "ENCODE_FOR_URI": {1, 1},
	"CONTAINS": {2, 2}, "STRSTARTS": {2, 2}, "STRENDS": {2, 2},
	"STRBEFORE": {2, 2}, "STRAFTER": {2, 2},
	"YEAR": {1, 1}, "MONTH": {1, 1}, "DAY": {1, 1}, "HOURS": {1, 1},
	"MINUTES": {1, 1}, "SECONDS": {1, 1}, "TIMEZONE": {1, 1}, "TZ": {1, 1},
	"NOW": {0, 0}, "UUID": {0, 0}, "STRUUID": {0, 0},
	"MD5": {1, 1}, "SHA1": {1, 1}, "SHA256": {1, 1}, "SHA384": {1, 1}, "SHA512": {1, 1},
	"COALESCE": {0, -1}, "IF": {3, 3}, "STRLANG": {2, 2}, "STRDT": {2, 2},
	"SAMETERM": {2, 2}, "ISIRI": {1, 1}, "ISURI": {1, 1}, "ISBLANK": {1, 1},
	"ISLITERAL": {1, 1}, "ISNUMERIC": {1, 1}, "REGEX": {2, 3},
}

func strict1(a node, f func(Value) (Value, error)) node {
	return func(row Binding) (Value, error) {
		x, err := a(row)
		if err != nil {
			return Value{}, err
		}
		return f(x)
	}
}

func strict2(a, b node, f func(Value, Value) (Value, error)) node {
	return func(row Binding) (Value, error) {
		x, err := a(row)
		if err != nil {
			return Value{}, err
		}
		y, err := b(row)
		if err != nil {
			return Value{}, err
		}
		return f(x, y)
	}
}

func strict3(a, b, c node, f func(Value, Value, Value) (Value, error)) node {
	return func(row Binding) (Value, error) {
		x, err := a(row)
		if err != nil {
			return Value{}, err
		}
		y, err := b(row)
		if err != nil {
			return Value{}, err
		}
		z, err := c(row)
		if err != nil {
			return Value{}, err
		}
		return f(x, y, z)
	}
}

func (c *compiler) compileCall(e *sparql.CallExpr) (node, error) {
	ar, ok := builtinArity[e.Name]
	if !ok {
		return nil, fmt.Errorf("unknown built-in function %s at %d:%d", e.Name, e.Line, e.Col)
	}
	if len(e.Args) < ar[0] || (ar[1] >= 0 && len(e.Args) > ar[1]) {
		return nil, fmt.Errorf("%s at %d:%d: wrong number of arguments (%d)", e.Name, e.Line, e.Col, len(e.Args))
	}
	if e.Name == "BOUND" {
		ve, ok := e.Args[0].(*sparql.VarExpr)
		if !ok {
			return nil, fmt.Errorf("BOUND at %d:%d: the argument must be a variable", e.Line, e.Col)
		}
		name := ve.Var
		return func(row Binding) (Value, error) {
			_, ok := row.Lookup(name)
			return Bool(ok), nil
		}, nil
	}
	if e.Name == "REGEX" || e.Name == "REPLACE" {
		return c.compileRegexCall(e)
	}
	args := make([]node, len(e.Args))
	for i, a := range e.Args {
		var err error
		if args[i], err = c.compile(a); err != nil {
			return nil, err
		}
	}
	env := c.env
	switch e.Name {
	case "STR":
		return strict1(args[0], fnStr), nil
	case "LANG":
		return strict1(args[0], func(v Value) (Value, error) {
			if !v.kind.isLiteral() {
				return Value{}, errNotLiteral
			}
			return String(v.term.Lang), nil
		}), nil
	case "LANGMATCHES":
		return strict2(args[0], args[1], fnLangMatches), nil
	case "DATATYPE":
		return strict1(args[0], func(v Value) (Value, error) {
			if !v.kind.isLiteral() {
				return Value{}, errNotLiteral
			}
			return Value{kind: KindIRI, term: rdf.NewIRI(v.Term().DatatypeIRI())}, nil
		}), nil
	case "IRI", "URI":
		base := env.Base
		return strict1(args[0], func(v Value) (Value, error) { return fnIRI(v, base) }), nil
	case "BNODE":
		if len(args) == 0 {
			return func(Binding) (Value, error) {
				return Value{kind: KindBlank, term: rdf.NewBlank(env.BlankPrefix + "n" + strconv.FormatUint(env.counter.Add(1), 36))}, nil
			}, nil
		}
		c.rowScoped = true
		mk, a := bnodeFromString(env), args[0]
		return func(row Binding) (Value, error) {
			v, err := a(row)
			if err != nil {
				return Value{}, err
			}
			return mk(row, v)
		}, nil
	case "RAND":
		return func(Binding) (Value, error) { return Double(env.rand()), nil }, nil
	case "ABS":
		return strict1(args[0], numAbs), nil
	case "CEIL":
		return strict1(args[0], func(v Value) (Value, error) { return numRound('c', v) }), nil
	case "FLOOR":
		return strict1(args[0], func(v Value) (Value, error) { return numRound('f', v) }), nil
	case "ROUND":
		return strict1(args[0], func(v Value) (Value, error) { return numRound('r', v) }), nil
	case "CONCAT":
		return concatNode(env, args), nil
	case "SUBSTR":
		if len(args) == 2 {
			return strict2(args[0], args[1], func(s, start Value) (Value, error) {
				return fnSubstr(s, start, Value{}, false)
			}), nil
		}
		return strict3(args[0], args[1], args[2], func(s, start, n Value) (Value, error) {
			return fnSubstr(s, start, n, true)
		}), nil
	case "STRLEN":
		return strict1(args[0], func(v Value) (Value, error) {
			if !v.isStringLit() {
				return Value{}, errNotString
			}
			return Int(int64(utf8.RuneCountInString(v.str()))), nil
		}), nil
	case "UCASE", "LCASE":
		f := strings.ToUpper
		if e.Name == "LCASE" {
			f = strings.ToLower
		}
		name := e.Name
		return strict1(args[0], func(v Value) (Value, error) {
			if !v.isStringLit() {
				return Value{}, errNotString
			}
			if err := env.checkSize(name, len(v.str())); err != nil {
				return Value{}, err
			}
			return stringLike(f(v.str()), v), nil
		}), nil
	case "ENCODE_FOR_URI":
		return strict1(args[0], func(v Value) (Value, error) {
			if !v.isStringLit() {
				return Value{}, errNotString
			}
			out := encodeForURI(v.str())
			if err := env.checkSize("ENCODE_FOR_URI", len(out)); err != nil {
				return Value{}, err
			}
			return String(out), nil
		}), nil
	case "CONTAINS", "STRSTARTS", "STRENDS":
		var f func(string, string) bool
		switch e.Name {
		case "CONTAINS":
			f = strings.Contains
		case "STRSTARTS":
			f = strings.HasPrefix
		default:
			f = strings.HasSuffix
		}
		return strict2(args[0], args[1], func(a, b Value) (Value, error) {
			if err := compatibleArgs(a, b); err != nil {
				return Value{}, err
			}
			return Bool(f(a.str(), b.str())), nil
		}), nil
	case "STRBEFORE", "STRAFTER":
		after := e.Name == "STRAFTER"
		return strict2(args[0], args[1], func(a, b Value) (Value, error) {
			return fnStrBeforeAfter(a, b, after)
		}), nil
	case "YEAR", "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE", "TZ":
		name := e.Name
		return strict1(args[0], func(v Value) (Value, error) { return dateField(name, v) }), nil
	case "NOW":
		return constNode(env.now), nil
	case "UUID", "STRUUID":
		iri := e.Name == "UUID"
		return func(Binding) (Value, error) {
			u := newUUID()
			if iri {
				return Value{kind: KindIRI, term: rdf.NewIRI("urn:uuid:" + u)}, nil
			}
			return String(u), nil
		}, nil
	case "MD5", "SHA1", "SHA256", "SHA384", "SHA512":
		var newHash func() hash.Hash
		switch e.Name {
		case "MD5":
			newHash = md5.New
		case "SHA1":
			newHash = sha1.New
		case "SHA256":
			newHash = sha256.New
		case "SHA384":
			newHash = sha512.New384
		default:
			newHash = sha512.New
		}
		return strict1(args[0], func(v Value) (Value, error) {
			if v.kind != KindString {
				return Value{}, errNotSimple
			}
			h := newHash()
			h.Write([]byte(v.str()))
			return String(hex.EncodeToString(h.Sum(nil))), nil
		}), nil
	case "COALESCE":
		return func(row Binding) (Value, error) {
			for _, a := range args {
				if v, err := a(row); err == nil && v.IsBound() {
					return v, nil
				}
			}
			return Value{}, errUnbound
		}, nil
	case "IF":
		cond, then, els := args[0], args[1], args[2]
		return func(row Binding) (Value, error) {
			b, err := ebvOf(cond, row)
			if err != nil {
				return Value{}, err
			}
			if b {
				return then(row)
			}
			return els(row)
		}, nil
	case "STRLANG":
		return strict2(args[0], args[1], fnStrLang), nil
	case "STRDT":
		return strict2(args[0], args[1], func(s, dt Value) (Value, error) {
			if s.kind != KindString {
				return Value{}, errNotSimple
			}
			if dt.kind != KindIRI {
				return Value{}, errNotIRI
			}
			if dt.term.Value == rdf.RDFLangString {
				return Value{}, newEvalError("STRDT: rdf:langString needs a language tag")
			}
			return Decode(rdf.NewLiteral(s.str(), dt.term.Value)), nil
		}), nil
	case "SAMETERM":
		return strict2(args[0], args[1], func(a, b Value) (Value, error) { return Bool(SameTerm(a, b)), nil }), nil
	case "ISIRI", "ISURI", "ISBLANK", "ISLITERAL", "ISNUMERIC":
		var test func(Kind) bool
		switch e.Name {
		case "ISBLANK":
			test = func(k Kind) bool { return k == KindBlank }
		case "ISLITERAL":
			test = Kind.isLiteral
		case "ISNUMERIC":
			test = Kind.IsNumeric
		default:
			test = func(k Kind) bool { return k == KindIRI }
		}
		return strict1(args[0], func(v Value) (Value, error) { return Bool(test(v.kind)), nil }), nil
	}
	return nil, fmt.Errorf("BUG: built-in %s has an arity but no implementation", e.Name)
}

// isStringLit reports whether v is a string literal: simple, xsd:string or
// language-tagged.
func (v Value) isStringLit() bool { return v.kind == KindString || v.kind == KindLangString }

func fnStr(v Value) (Value, error) {
	switch {
	case v.kind == KindIRI:
		return String(v.term.Value), nil
	case v.kind == KindString:
		return v, nil
	case v.kind.isLiteral():
		return String(v.Term().Value), nil
	case v.kind == KindBlank:
		return Value{}, errBlankStr
	}
	return Value{}, errUnbound
}

// fnLangMatches is RFC 4647 basic filtering: "*" matches every non-empty
// tag; otherwise the range matches the tag itself or a prefix of it ending
// before a "-", case-insensitively.
func fnLangMatches(tag, rng Value) (Value, error) {
	if tag.kind != KindString || rng.kind != KindString {
		return Value{}, errNotSimple
	}
	t, r := tag.str(), rng.str()
	if r == "*" {
		return Bool(t != ""), nil
	}
	if r == "" {
		return Bool(t == ""), nil
	}
	if len(t) < len(r) || !strings.EqualFold(t[:len(r)], r) {
		return Bool(false), nil
	}
	return Bool(len(t) == len(r) || t[len(r)] == '-'), nil
}

func fnIRI(v Value, base string) (Value, error) {
	switch v.kind {
	case KindIRI:
		return v, nil
	case KindString:
	default:
		return Value{}, errNotSimple
	}
	s := v.str()
	ref, err := url.Parse(s)
	if err != nil {
		return Value{}, fmt.Errorf("%w: IRI(%q): %v", ErrEval, s, err)
	}
	if ref.IsAbs() {
		return Value{kind: KindIRI, term: rdf.NewIRI(s)}, nil
	}
	if base == "" {
		return Value{}, errRelativeIRI
	}
	b, err := url.Parse(base)
	if err != nil {
		return Value{}, fmt.Errorf("%w: base IRI %q: %v", ErrEval, base, err)
	}
	return Value{kind: KindIRI, term: rdf.NewIRI(b.ResolveReference(ref).String())}, nil
}

func bnodeFromString(env *Env) func(row Binding, v Value) (Value, error) {
	return func(row Binding, v Value) (Value, error) {
		if v.kind != KindString {
			return Value{}, errNotSimple
		}
		var key uint64
		if rk, ok := row.(RowKeyer); ok {
			key = rk.RowKey()
		}
		label := env.BlankPrefix + "r" + strconv.FormatUint(key, 36) + "x" + hex.EncodeToString([]byte(v.str()))
		return Value{kind: KindBlank, term: rdf.NewBlank(label)}, nil
	}
}

func concatNode(env *Env, args []node) node {
	return func(row Binding) (Value, error) {
		var b strings.Builder
		lang, sameLang := "", true
		for i, a := range args {
			v, err := a(row)
			if err != nil {
				return Value{}, err
			}
			if !v.isStringLit() {
				return Value{}, errNotString
			}
			if err := env.checkSize("CONCAT", b.Len()+len(v.str())); err != nil {
				return Value{}, err
			}
			if i == 0 {
				lang = v.term.Lang
			} else if v.term.Lang != lang {
				sameLang = false
			}
			b.WriteString(v.str())
		}
		if sameLang && lang != "" {
			return Value{kind: KindLangString, term: rdf.Term{Kind: rdf.KindLiteral, Value: b.String(), Lang: lang}}, nil
		}
		return String(b.String()), nil
	}
}

// xpathRound is fn:round on a double: half toward positive infinity.
func xpathRound(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return r
}

// fnSubstr is fn:substring: the characters (code points) at positions p
// with round(start) ≤ p < round(start) + round(length), counted from 1.
func fnSubstr(s, start, length Value, hasLen bool) (Value, error) {
	if !s.isStringLit() {
		return Value{}, errNotString
	}
	if !start.kind.IsNumeric() || (hasLen && !length.kind.IsNumeric()) {
		return Value{}, errNotNumeric
	}
	first := xpathRound(start.float())
	last := math.Inf(1)
	if hasLen {
		last = first + xpathRound(length.float())
	}
	str := s.str()
	from, to := -1, -1
	p := 1.0
	for i := 0; i < len(str); {
		_, n := utf8.DecodeRuneInString(str[i:])
		if p >= first && p < last {
			if from < 0 {
				from = i
			}
			to = i + n
		}
		i += n
		p++
	}
	if from < 0 {
		return stringLike("", s), nil
	}
	return stringLike(str[from:to], s), nil
}

// compatibleArgs checks the argument compatibility rules of §17.4.3.1.1:
// both simple (or xsd:string), both with the same language tag, or the
// first language-tagged and the second simple.
func compatibleArgs(a, b Value) error {
	if !a.isStringLit() || !b.isStringLit() {
		return errNotString
	}
	if b.kind == KindLangString && a.term.Lang != b.term.Lang {
		return errIncompatible
	}
	return nil
}

// fnStrBeforeAfter is STRBEFORE / STRAFTER: on a match the result keeps the
// first argument's language tag; without a match it is the empty simple
// literal.
func fnStrBeforeAfter(a, b Value, after bool) (Value, error) {
	if err := compatibleArgs(a, b); err != nil {
		return Value{}, err
	}
	i := strings.Index(a.str(), b.str())
	if i < 0 {
		return String(""), nil
	}
	if after {
		return stringLike(a.str()[i+len(b.str()):], a), nil
	}
	return stringLike(a.str()[:i], a), nil
}

func encodeForURI(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func dateField(name string, v Value) (Value, error) {
	if v.kind != KindDateTime && (v.kind != KindDate || name == "HOURS" || name == "MINUTES" || name == "SECONDS") {
		return Value{}, errNotDateTime
	}
	d := v.dt
	switch name {
	case "YEAR":
		return Int(d.year), nil
	case "MONTH":
		return Int(int64(d.month)), nil
	case "DAY":
		return Int(int64(d.day)), nil
	case "HOURS":
		return Int(int64(d.hour)), nil
	case "MINUTES":
		return Int(int64(d.minute)), nil
	case "SECONDS":
		return d.seconds(), nil
	case "TIMEZONE":
		if !d.hasTZ {
			return Value{}, errNoTimezone
		}
		return Value{kind: KindOther, term: rdf.NewLiteral(d.timezoneDuration(), xsdDayTimeDuration)}, nil
	}
	return String(d.tzString()), nil // TZ
}

// fnStrLang is STRLANG: a simple literal and a language tag (BCP 47
// syntax: alphanumeric subtags of 1 to 8 characters, the first alphabetic).
func fnStrLang(s, lang Value) (Value, error) {
	if s.kind != KindString || lang.kind != KindString {
		return Value{}, errNotSimple
	}
	if !validLangTag(lang.str()) {
		return Value{}, newEvalError("STRLANG: invalid language tag")
	}
	return Value{kind: KindLangString, term: rdf.NewLangLiteral(s.str(), lang.str())}, nil
}

func validLangTag(t string) bool {
	if t == "" {
		return false
	}
	for i, sub := range strings.Split(t, "-") {
		if len(sub) == 0 || len(sub) > 8 {
			return false
		}
		for j := 0; j < len(sub); j++ {
			c := sub[j]
			alpha := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
			if !alpha && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return true
}

func newUUID() string {
	var u [16]byte
	_, _ = crand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// compileFunc compiles a call of a function named by an IRI: the XSD casts.
// Any other IRI compiles to an expression that raises an error.
func (c *compiler) compileFunc(e *sparql.FuncExpr) (node, error) {
	if e.Distinct {
		return nil, fmt.Errorf("custom aggregate <%s> at %d:%d is not supported", e.IRI, e.Line, e.Col)
	}
	if !IsCast(e.IRI) {
		return errNode(fmt.Errorf("%w: unknown function <%s>", ErrEval, e.IRI)), nil
	}
	if len(e.Args) != 1 {
		return nil, fmt.Errorf("cast <%s> at %d:%d takes one argument, got %d", e.IRI, e.Line, e.Col, len(e.Args))
	}
	arg, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	iri := e.IRI
	return strict1(arg, func(v Value) (Value, error) { return Cast(iri, v) }), nil
}
