package expr

import (
	"cmp"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// isLiteral reports whether k is a literal kind.
func (k Kind) isLiteral() bool { return k >= KindString }

// Equal is the SPARQL = operator (§17.3): numeric, string, boolean and
// dateTime values compare by value (1 = 1.0, "01"^^xsd:integer = 1);
// other terms by RDFterm-equal. Two literals that are not the same term,
// one of which has an unknown datatype or is ill-typed, give a type error,
// as RDFterm-equal says; two literals of different known types (a number
// and a string, say) are simply unequal. A dateTime (or date) with a
// timezone and one without are unequal when they are more than 14 hours
// apart (XSD's rule for partially ordered values); nearer than that their
// relation is indeterminate, a type error.
func Equal(a, b Value) (bool, error) {
	if !a.IsBound() || !b.IsBound() {
		return false, errUnbound
	}
	if a.kind.IsNumeric() && b.kind.IsNumeric() {
		c, ok := compareNumeric(a, b)
		return ok && c == 0, nil
	}
	if a.kind == b.kind {
		switch a.kind {
		case KindString:
			return a.str() == b.str(), nil
		case KindLangString:
			return a.str() == b.str() && a.term.Lang == b.term.Lang, nil
		case KindBoolean:
			return a.i == b.i, nil
		case KindDateTime, KindDate:
			c, ok := compareDateTimes(a.dt, b.dt)
			if !ok {
				return false, errNotComparable
			}
			return c == 0, nil
		case KindIRI, KindBlank:
			return a.term.Value == b.term.Value, nil
		}
	}
	if a.kind == KindOther || b.kind == KindOther {
		if a.term == b.term {
			return true, nil
		}
		if a.kind.isLiteral() && b.kind.isLiteral() {
			return false, errUnknownEqual
		}
	}
	return false, nil
}

// Less is the SPARQL < operator (§17.3): defined between numerics, between
// simple literals (by code point), between booleans (false < true) and
// between dateTimes (or dates) whose order is determinate; a type error
// otherwise. NaN is not less than anything and nothing is less than NaN.
func Less(a, b Value) (bool, error) {
	c, ok, err := orderOp(a, b)
	return ok && c < 0, err
}

// orderOp compares a and b for <, <=, >, >=. ok is false (without error)
// when a NaN makes every relation false.
func orderOp(a, b Value) (c int, ok bool, err error) {
	if !a.IsBound() || !b.IsBound() {
		return 0, false, errUnbound
	}
	if a.kind.IsNumeric() && b.kind.IsNumeric() {
		c, ok := compareNumeric(a, b)
		return c, ok, nil
	}
	if a.kind == b.kind {
		switch a.kind {
		case KindString:
			return strings.Compare(a.str(), b.str()), true, nil
		case KindBoolean:
			return int(a.i - b.i), true, nil
		case KindDateTime, KindDate:
			c, ok := compareDateTimes(a.dt, b.dt)
			if !ok {
				return 0, false, errNotComparable
			}
			return c, true, nil
		}
	}
	return 0, false, errNotComparable
}

// Compare orders two terms for ORDER BY (§15.1): the zero Term (unbound)
// first, then blank nodes, then IRIs, then literals. Literals that < orders
// are in that order; the rest are in a fixed total order: numerics first (by
// value, NaN first), then simple literals, language-tagged literals (by
// text, then tag), booleans, dateTimes, dates (by instant, a value without a
// timezone read as UTC), and literals of other datatypes (by datatype IRI,
// then lexical form). Values that are equal but different terms (1 and
// 1.0) are ordered by kind and lexical form, so Compare returns 0 only for
// identical terms.
func Compare(a, b rdf.Term) int { return CompareValues(Decode(a), Decode(b)) }

func termRank(k Kind) int {
	switch k {
	case KindUnbound:
		return 0
	case KindBlank:
		return 1
	case KindIRI:
		return 2
	}
	return 3
}

func literalRank(k Kind) int {
	switch {
	case k.IsNumeric():
		return 0
	case k == KindString:
		return 1
	case k == KindLangString:
		return 2
	case k == KindBoolean:
		return 3
	case k == KindDateTime:
		return 4
	case k == KindDate:
		return 5
	}
	return 6
}

// CompareValues is Compare on decoded values.
func CompareValues(a, b Value) int {
	if c := cmp.Compare(termRank(a.kind), termRank(b.kind)); c != 0 {
		return c
	}
	switch a.kind {
	case KindUnbound:
		return 0
	case KindBlank, KindIRI:
		return strings.Compare(a.term.Value, b.term.Value)
	}
	if c := cmp.Compare(literalRank(a.kind), literalRank(b.kind)); c != 0 {
		return c
	}
	var c int
	switch {
	case a.kind.IsNumeric():
		var ok bool
		c, ok = compareNumeric(a, b)
		if !ok {
			an, bn := a.isNaN(), b.isNaN()
			switch {
			case an && !bn:
				return -1
			case bn && !an:
				return 1
			}
			c = 0
		}
		if c == 0 {
			c = cmp.Compare(int(a.kind), int(b.kind))
		}
	case a.kind == KindString:
		c = strings.Compare(a.str(), b.str())
	case a.kind == KindLangString:
		c = strings.Compare(a.str(), b.str())
		if c == 0 {
			c = strings.Compare(a.term.Lang, b.term.Lang)
		}
	case a.kind == KindBoolean:
		c = cmp.Compare(int(a.i), int(b.i))
	case a.kind == KindDateTime || a.kind == KindDate:
		as, an := a.dt.timeline()
		bs, bn := b.dt.timeline()
		c = cmpInstant(as, an, bs, bn)
	default:
		c = strings.Compare(a.term.Datatype, b.term.Datatype)
	}
	if c != 0 {
		return c
	}
	at, bt := a.Term(), b.Term()
	if c := strings.Compare(at.Value, bt.Value); c != 0 {
		return c
	}
	return strings.Compare(at.Datatype, bt.Datatype)
}

func (v Value) isNaN() bool {
	return (v.kind == KindFloat || v.kind == KindDouble) && v.f != v.f
}

// SameTerm reports whether a and b are the same RDF term (sameTerm).
func SameTerm(a, b Value) bool { return a.IsBound() && b.IsBound() && a.Term() == b.Term() }
