package expr

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// IsCast reports whether iri names an XSD constructor function this package
// implements (xsd:string, xsd:integer, xsd:decimal, xsd:float, xsd:double,
// xsd:boolean, xsd:dateTime, xsd:date and the types derived from
// xsd:integer).
func IsCast(iri string) bool {
	local, ok := strings.CutPrefix(iri, rdf.XSD)
	if !ok {
		return false
	}
	switch local {
	case "string", "integer", "decimal", "float", "double", "boolean", "dateTime", "date":
		return true
	}
	_, ok = integerSubtypes[local]
	return ok
}

// xsdSpace is XSD's whitespace-collapse for the atomic types cast from
// strings.
func xsdTrim(s string) string { return strings.Trim(s, " \t\n\r") }

// Cast converts v to the XSD datatype iri following the XPath casting rules
// as SPARQL restricts them (§17.5): from xsd:string by the target's lexical
// space, between numerics (truncating toward zero into xsd:integer; NaN and
// infinities cannot become integers or decimals), from and to xsd:boolean,
// from numerics and booleans into strings in their XPath canonical form
// (1.0 → "1", 1.0E7 → "1.0E7"), from IRIs to xsd:string only. Everything
// else (blank nodes, language-tagged strings, unknown datatypes, ill-typed
// literals) is an error.
func Cast(iri string, v Value) (Value, error) {
	local, ok := strings.CutPrefix(iri, rdf.XSD)
	if !ok {
		return Value{}, errCastType
	}
	if !v.IsBound() {
		return Value{}, errUnbound
	}
	switch v.kind {
	case KindBlank, KindLangString, KindOther:
		return Value{}, errCastType
	case KindIRI:
		if local == "string" {
			return String(v.term.Value), nil
		}
		return Value{}, errCastType
	}
	switch local {
	case "string":
		return String(castString(v)), nil
	case "integer":
		return castInteger(v)
	case "decimal":
		return castDecimal(v)
	case "float", "double":
		f, err := castFloat(v, local == "float")
		if err != nil {
			return Value{}, err
		}
		if local == "float" {
			return floatValue(f), nil
		}
		return Double(f), nil
	case "boolean":
		return castBoolean(v)
	case "dateTime", "date":
		var d dateTime
		switch v.kind {
		case KindString:
			s := xsdTrim(v.str())
			if local == "dateTime" {
				d, ok = parseDateTime(s)
			} else {
				d, ok = parseDate(s)
			}
			if !ok {
				return Value{}, errBadCast
			}
		case KindDateTime, KindDate:
			d = v.dt
		default:
			return Value{}, errCastType
		}
		if local == "date" {
			d.hour, d.minute, d.nsec = 0, 0, 0
			return Value{kind: KindDate, dt: d}, nil
		}
		return Value{kind: KindDateTime, dt: d}, nil
	}
	r, ok := integerSubtypes[local]
	if !ok {
		return Value{}, errCastType
	}
	n, err := castInteger(v)
	if err != nil {
		return Value{}, err
	}
	if !r.contains(n) {
		return Value{}, errBadCast
	}
	n.term = rdf.Term{Kind: rdf.KindLiteral, Value: n.integerString(), Datatype: iri}
	return n, nil
}

// castString is the XPath cast of a typed value to xsd:string.
func castString(v Value) string {
	switch v.kind {
	case KindString:
		return v.str()
	case KindBoolean:
		if v.i != 0 {
			return "true"
		}
		return "false"
	case KindInteger:
		return v.integerString()
	case KindDecimal:
		if r := v.decRat(); r.IsInt() {
			return r.Num().String()
		}
		return v.decimalString()
	case KindFloat, KindDouble:
		bits := 64
		if v.kind == KindFloat {
			bits = 32
		}
		a := math.Abs(v.f)
		switch {
		case v.f == 0:
			if math.Signbit(v.f) {
				return "-0"
			}
			return "0"
		case a >= 1e-6 && a < 1e6:
			return strconv.FormatFloat(v.f, 'f', -1, bits)
		}
		return formatFloat(v.f, bits)
	case KindDateTime:
		return v.dt.format(true)
	case KindDate:
		return v.dt.format(false)
	}
	return v.term.Value
}

func castInteger(v Value) (Value, error) {
	switch v.kind {
	case KindString:
		n, ok := parseInteger(xsdTrim(v.str()))
		if !ok {
			return Value{}, errBadCast
		}
		return n, nil
	case KindBoolean:
		return Int(v.i), nil
	case KindInteger:
		return computed(v), nil
	case KindDecimal:
		if v.d == nil {
			return Int(v.i / pow10[v.scale]), nil
		}
		return intValue(new(big.Int).Quo(v.d.Num(), v.d.Denom())), nil
	case KindFloat, KindDouble:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return Value{}, errBadCast
		}
		t := math.Trunc(v.f)
		if t >= -(1<<63) && t < 1<<63 {
			return Int(int64(t)), nil
		}
		n, _ := new(big.Float).SetFloat64(t).Int(nil)
		return intValue(n), nil
	}
	return Value{}, errCastType
}

func castDecimal(v Value) (Value, error) {
	switch v.kind {
	case KindString:
		d, ok := parseDecimal(xsdTrim(v.str()))
		if !ok {
			return Value{}, errBadCast
		}
		return d, nil
	case KindBoolean:
		return decimalValue(new(big.Rat).SetInt64(v.i)), nil
	case KindInteger:
		return decimalValue(new(big.Rat).SetInt(v.bigInt())), nil
	case KindDecimal:
		return computed(v), nil
	case KindFloat, KindDouble:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return Value{}, errBadCast
		}
		bits := 64
		if v.kind == KindFloat {
			bits = 32
		}
		// The shortest decimal that reads back as the same float.
		d, ok := parseDecimal(strconv.FormatFloat(v.f, 'f', -1, bits))
		if !ok {
			panic("BUG: FormatFloat gave an invalid decimal")
		}
		return d, nil
	}
	return Value{}, errCastType
}

func castFloat(v Value, single bool) (float64, error) {
	switch v.kind {
	case KindString:
		bits := 64
		if single {
			bits = 32
		}
		f, ok := parseFloatLex(xsdTrim(v.str()), bits)
		if !ok {
			return 0, errBadCast
		}
		return f, nil
	case KindBoolean:
		return float64(v.i), nil
	case KindInteger, KindDecimal, KindFloat, KindDouble:
		return v.float(), nil
	}
	return 0, errCastType
}

func castBoolean(v Value) (Value, error) {
	switch v.kind {
	case KindString:
		switch xsdTrim(v.str()) {
		case "true", "1":
			return Bool(true), nil
		case "false", "0":
			return Bool(false), nil
		}
		return Value{}, errBadCast
	case KindBoolean:
		return computed(v), nil
	case KindInteger, KindDecimal, KindFloat, KindDouble:
		return Bool(numericSign(v) != 0 && !v.isNaN()), nil
	}
	return Value{}, errCastType
}

// EBV returns the effective boolean value of v (§17.2.2): a boolean's
// value; false for the empty string and true for any other string (simple
// or language-tagged); false for a numeric zero or NaN and true for other
// numbers; false for an ill-typed boolean or numeric literal; a type error
// for everything else (IRIs, blank nodes, dateTimes, unknown datatypes) and
// for the unbound Value.
func EBV(v Value) (bool, error) {
	switch v.kind {
	case KindBoolean:
		return v.i != 0, nil
	case KindString, KindLangString:
		return v.term.Value != "", nil
	case KindInteger, KindDecimal, KindFloat, KindDouble:
		return numericSign(v) != 0 && !v.isNaN(), nil
	case KindOther:
		if isNumericOrBooleanIRI(v.term.Datatype) {
			return false, nil // ill-typed
		}
		return false, errNotBoolean
	case KindUnbound:
		return false, errUnbound
	}
	return false, errNotBoolean
}

func isNumericOrBooleanIRI(dt string) bool {
	switch dt {
	case rdf.XSDBoolean, rdf.XSDInteger, rdf.XSDDecimal, rdf.XSDFloat, rdf.XSDDouble:
		return true
	}
	local, ok := strings.CutPrefix(dt, rdf.XSD)
	if !ok {
		return false
	}
	_, ok = integerSubtypes[local]
	return ok
}
