package expr

import (
	"math"
	"math/big"
	"strconv"

	"github.com/wukongd/wukongd/rdf"
)

// Kind classifies a Value by the part of SPARQL's type system it belongs
// to. Every literal whose datatype this package does not know, and every
// literal of a known datatype whose lexical form is not in its lexical space
// (an ill-typed literal such as "abc"^^xsd:integer), is KindOther: it is a
// valid term that compares only by term identity.
type Kind uint8

const (
	// KindUnbound is the zero Value: no term.
	KindUnbound Kind = iota
	KindIRI
	KindBlank
	// KindString is a simple literal (xsd:string in RDF 1.1).
	KindString
	// KindLangString is a language-tagged literal (rdf:langString).
	KindLangString
	KindBoolean
	// KindInteger is xsd:integer and every datatype derived from it.
	KindInteger
	KindDecimal
	KindFloat
	KindDouble
	KindDateTime
	// KindDate is xsd:date: comparable with dates, usable by YEAR, MONTH,
	// DAY and TIMEZONE/TZ.
	KindDate
	// KindOther is a literal of an unknown datatype or an ill-typed literal.
	KindOther
)

// IsNumeric reports whether k is one of the four numeric kinds.
func (k Kind) IsNumeric() bool { return k >= KindInteger && k <= KindDouble }

// Value is a decoded RDF term: the term plus its typed value. Values are
// small and immutable; copy them freely. Decoding is cheap (no allocation
// for IRIs, blank nodes, strings, booleans, int64 integers, floats, doubles
// and dateTimes; one big.Rat for a decimal), so an engine that caches
// decoded values by term ID saves only the parse.
//
// A Value computed by an expression (1+1, ROUND(?x)) carries no term until
// Term is called, which then formats the canonical lexical form. A Value
// decoded from a term keeps that term exactly (a literal from the data is
// never rewritten).
type Value struct {
	kind Kind
	// scale makes a small decimal (d == nil): its value is i / 10^scale.
	scale uint8
	term  rdf.Term // the term as given; zero for computed typed values
	i     int64    // integer (when n == nil); boolean 0/1
	f     float64  // float (rounded to float32) or double
	n     *big.Int // integer outside int64
	d     *big.Rat // decimal, when not small; its denominator divides a power of ten
	dt    dateTime // dateTime, date
}

// Kind returns v's kind.
func (v Value) Kind() Kind { return v.kind }

// IsBound reports whether v is a term (not the zero Value).
func (v Value) IsBound() bool { return v.kind != KindUnbound }

// Decode returns the typed value of t. It never fails: a literal whose
// lexical form is not valid for its datatype decodes as KindOther.
func Decode(t rdf.Term) Value {
	switch t.Kind {
	case rdf.KindIRI:
		return Value{kind: KindIRI, term: t}
	case rdf.KindBlank:
		return Value{kind: KindBlank, term: t}
	case rdf.KindLiteral:
	default:
		return Value{}
	}
	if t.Lang != "" {
		return Value{kind: KindLangString, term: t}
	}
	dt := t.Datatype
	if dt == "" || dt == rdf.XSDString {
		t.Datatype = ""
		return Value{kind: KindString, term: t}
	}
	if len(dt) <= len(rdf.XSD) || dt[:len(rdf.XSD)] != rdf.XSD {
		return Value{kind: KindOther, term: t}
	}
	v, ok := decodeXSD(dt[len(rdf.XSD):], t.Value)
	if !ok {
		return Value{kind: KindOther, term: t}
	}
	v.term = t
	return v
}

// decodeXSD parses lex as the XSD datatype named local (without the
// namespace). ok is false for an unknown datatype or an invalid lexical form.
func decodeXSD(local, lex string) (Value, bool) {
	switch local {
	case "integer":
		return parseInteger(lex)
	case "decimal":
		return parseDecimal(lex)
	case "double":
		f, ok := parseFloatLex(lex, 64)
		return Value{kind: KindDouble, f: f}, ok
	case "float":
		f, ok := parseFloatLex(lex, 32)
		return Value{kind: KindFloat, f: f}, ok
	case "boolean":
		switch lex {
		case "true", "1":
			return Value{kind: KindBoolean, i: 1}, true
		case "false", "0":
			return Value{kind: KindBoolean}, true
		}
		return Value{}, false
	case "dateTime", "dateTimeStamp":
		d, ok := parseDateTime(lex)
		if ok && local == "dateTimeStamp" && !d.hasTZ {
			return Value{}, false
		}
		return Value{kind: KindDateTime, dt: d}, ok
	case "date":
		d, ok := parseDate(lex)
		return Value{kind: KindDate, dt: d}, ok
	}
	if r, ok := integerSubtypes[local]; ok {
		v, ok := parseInteger(lex)
		if !ok || !r.contains(v) {
			return Value{}, false
		}
		return v, true
	}
	return Value{}, false
}

// intRange is the value range of a datatype derived from xsd:integer; a nil
// bound is unbounded.
type intRange struct{ min, max *big.Int }

func (r intRange) contains(v Value) bool {
	if v.n == nil {
		if r.min != nil && r.min.IsInt64() && v.i < r.min.Int64() {
			return false
		}
		if r.max != nil && r.max.IsInt64() && v.i > r.max.Int64() {
			return false
		}
		return true
	}
	return (r.min == nil || v.n.Cmp(r.min) >= 0) && (r.max == nil || v.n.Cmp(r.max) <= 0)
}

func bigOf(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("BUG: bad big integer constant " + s)
	}
	return n
}

var integerSubtypes = map[string]intRange{
	"nonPositiveInteger": {nil, big.NewInt(0)},
	"negativeInteger":    {nil, big.NewInt(-1)},
	"long":               {big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)},
	"int":                {big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)},
	"short":              {big.NewInt(math.MinInt16), big.NewInt(math.MaxInt16)},
	"byte":               {big.NewInt(math.MinInt8), big.NewInt(math.MaxInt8)},
	"nonNegativeInteger": {big.NewInt(0), nil},
	"positiveInteger":    {big.NewInt(1), nil},
	"unsignedLong":       {big.NewInt(0), bigOf("18446744073709551615")},
	"unsignedInt":        {big.NewInt(0), big.NewInt(math.MaxUint32)},
	"unsignedShort":      {big.NewInt(0), big.NewInt(math.MaxUint16)},
	"unsignedByte":       {big.NewInt(0), big.NewInt(math.MaxUint8)},
}

// parseInteger parses the xsd:integer lexical form [+-]?[0-9]+.
func parseInteger(s string) (Value, bool) {
	digits := s
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" {
		return Value{}, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return Value{}, false
		}
	}
	if len(digits) <= 18 {
		var n int64
		for i := 0; i < len(digits); i++ {
			n = n*10 + int64(digits[i]-'0')
		}
		if s[0] == '-' {
			n = -n
		}
		return Value{kind: KindInteger, i: n}, true
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return Value{}, false
	}
	return intValue(n), true
}

// parseDecimal parses the xsd:decimal lexical form
// [+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+).
func parseDecimal(s string) (Value, bool) {
	body := s
	neg := false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	intPart, frac := body, ""
	for i := 0; i < len(body); i++ {
		if body[i] == '.' {
			intPart, frac = body[:i], body[i+1:]
			break
		}
	}
	if intPart == "" && frac == "" {
		return Value{}, false
	}
	for _, part := range [2]string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return Value{}, false
			}
		}
	}
	if len(intPart)+len(frac) <= 18 {
		var m int64
		for _, part := range [2]string{intPart, frac} {
			for i := 0; i < len(part); i++ {
				m = m*10 + int64(part[i]-'0')
			}
		}
		if neg {
			m = -m
		}
		return Value{kind: KindDecimal, i: m, scale: uint8(len(frac))}, true
	}
	num, ok := new(big.Int).SetString("0"+intPart+frac, 10)
	if !ok {
		return Value{}, false
	}
	if neg {
		num.Neg(num)
	}
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	return Value{kind: KindDecimal, d: new(big.Rat).SetFrac(num, den)}, true
}

// parseFloatLex parses the xsd:double / xsd:float lexical form:
// (\+|-)?([0-9]+(\.[0-9]*)?|\.[0-9]+)([Ee](\+|-)?[0-9]+)?|(\+|-)?INF|NaN.
// strconv alone is too lenient (it takes "Inf", "0x1p3", "1_0").
func parseFloatLex(s string, bits int) (float64, bool) {
	switch s {
	case "INF", "+INF":
		return math.Inf(1), true
	case "-INF":
		return math.Inf(-1), true
	case "NaN":
		return math.NaN(), true
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	mant := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		mant++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			mant++
		}
	}
	if mant == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		// Out of range: ParseFloat returns ±Inf (or 0) with ErrRange,
		// which is the IEEE value the lexical form denotes.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}

// ---------------------------------------------------------------------------
// Constructors of computed values.

func intValue(n *big.Int) Value {
	if n.IsInt64() {
		return Value{kind: KindInteger, i: n.Int64()}
	}
	return Value{kind: KindInteger, n: n}
}

// Int returns the xsd:integer value n.
func Int(n int64) Value { return Value{kind: KindInteger, i: n} }

// Bool returns the xsd:boolean value b.
func Bool(b bool) Value {
	if b {
		return Value{kind: KindBoolean, i: 1}
	}
	return Value{kind: KindBoolean}
}

// Double returns the xsd:double value f.
func Double(f float64) Value { return Value{kind: KindDouble, f: f} }

func floatValue(f float64) Value { return Value{kind: KindFloat, f: float64(float32(f))} }

func decimalValue(r *big.Rat) Value { return Value{kind: KindDecimal, d: r} }

// String returns the simple literal s.
func String(s string) Value {
	return Value{kind: KindString, term: rdf.Term{Kind: rdf.KindLiteral, Value: s}}
}

// stringLike returns a string literal with the language of like (simple if
// like has none).
func stringLike(s string, like Value) Value {
	if like.kind == KindLangString {
		return Value{kind: KindLangString, term: rdf.Term{Kind: rdf.KindLiteral, Value: s, Lang: like.term.Lang}}
	}
	return String(s)
}

// FromTerm is Decode.
func FromTerm(t rdf.Term) Value { return Decode(t) }

// ---------------------------------------------------------------------------
// Accessors.

// Bool returns the boolean of a KindBoolean value.
func (v Value) Bool() bool { return v.i != 0 }

// str is the string of a string literal (simple or language-tagged).
func (v Value) str() string { return v.term.Value }

// Term returns v as an RDF term: the term it was decoded from, or for a
// computed value the canonical form (integers "-12", decimals "1.5" and
// "2.0", doubles and floats "1.0E0", booleans "true"/"false", dateTimes as
// written by XSD's canonical mapping).
func (v Value) Term() rdf.Term {
	if v.term.Kind != rdf.KindNone {
		return v.term
	}
	switch v.kind {
	case KindBoolean:
		if v.i != 0 {
			return rdf.Term{Kind: rdf.KindLiteral, Value: "true", Datatype: rdf.XSDBoolean}
		}
		return rdf.Term{Kind: rdf.KindLiteral, Value: "false", Datatype: rdf.XSDBoolean}
	case KindInteger:
		return rdf.Term{Kind: rdf.KindLiteral, Value: v.integerString(), Datatype: rdf.XSDInteger}
	case KindDecimal:
		return rdf.Term{Kind: rdf.KindLiteral, Value: v.decimalString(), Datatype: rdf.XSDDecimal}
	case KindDouble:
		return rdf.Term{Kind: rdf.KindLiteral, Value: formatFloat(v.f, 64), Datatype: rdf.XSDDouble}
	case KindFloat:
		return rdf.Term{Kind: rdf.KindLiteral, Value: formatFloat(v.f, 32), Datatype: rdf.XSDFloat}
	case KindDateTime:
		return rdf.Term{Kind: rdf.KindLiteral, Value: v.dt.format(true), Datatype: rdf.XSDDateTime}
	case KindDate:
		return rdf.Term{Kind: rdf.KindLiteral, Value: v.dt.format(false), Datatype: xsdDate}
	}
	return rdf.Term{}
}

const (
	xsdDate            = rdf.XSD + "date"
	xsdDayTimeDuration = rdf.XSD + "dayTimeDuration"
)

func (v Value) integerString() string {
	if v.n != nil {
		return v.n.String()
	}
	return strconv.FormatInt(v.i, 10)
}

// decimalString formats a decimal value canonically (see formatDecimal).
func (v Value) decimalString() string {
	if v.d != nil {
		return formatDecimal(v.d)
	}
	m, neg := v.i, v.i < 0
	var digits string
	if neg {
		digits = strconv.FormatUint(-uint64(m), 10)
	} else {
		digits = strconv.FormatInt(m, 10)
	}
	sc := int(v.scale)
	for len(digits) <= sc {
		digits = "0" + digits
	}
	intPart, frac := digits[:len(digits)-sc], digits[len(digits)-sc:]
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if frac == "" {
		frac = "0"
	}
	s := intPart + "." + frac
	if neg {
		s = "-" + s
	}
	return s
}

// formatDecimal formats a decimal in the canonical form: at least one digit
// on each side of the point, no other leading or trailing zeros ("1.5",
// "2.0", "-0.25").
func formatDecimal(r *big.Rat) string {
	den := r.Denom()
	twos := den.TrailingZeroBits()
	rest := new(big.Int).Rsh(den, twos)
	fives := uint(0)
	five := big.NewInt(5)
	var m big.Int
	for rest.Cmp(big.NewInt(1)) > 0 {
		q, _ := new(big.Int).QuoRem(rest, five, &m)
		if m.Sign() != 0 {
			break
		}
		rest = q
		fives++
	}
	digits := max(twos, fives, 1)
	s := r.FloatString(int(digits))
	for len(s) > 2 && s[len(s)-1] == '0' && s[len(s)-2] != '.' {
		s = s[:len(s)-1]
	}
	return s
}

// formatFloat formats a double (bits 64) or float (bits 32) in the XSD
// canonical form: one non-zero digit before the point, at least one after,
// and an exponent: "1.0E0", "1.25E2", "-3.0E-5", "0.0E0", "INF", "NaN".
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0E0"
		}
		return "0.0E0"
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // "1.5E+00", "1E-07"
	e := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 'E' {
			mant := s[:i]
			exp, _ := strconv.Atoi(s[i+1:])
			e = exp
			s = mant
			break
		}
	}
	hasPoint := false
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			hasPoint = true
		}
	}
	if !hasPoint {
		s += ".0"
	}
	return s + "E" + strconv.Itoa(e)
}
