package expr

import (
	"cmp"
	"math"
	"math/big"
	"math/bits"

	"github.com/wukongd/wukongd/rdf"
)

// Numeric arithmetic and comparison (XPath op:numeric-*), with the type
// promotion integer → decimal → float → double: the result has the kind of
// the "widest" operand, except that integer division gives a decimal.
// Integers stay on int64 and move to big.Int only on overflow; decimals are
// exact big.Rat values whose denominators divide a power of ten.

// divisionDigits is the number of fractional digits kept when a decimal
// division does not terminate (XPath leaves the precision to the
// implementation; it must be at least 18).
const divisionDigits = 24

func (v Value) bigInt() *big.Int {
	if v.n != nil {
		return v.n
	}
	return big.NewInt(v.i)
}

// rat returns an integer or decimal value as a big.Rat (which must not be
// modified).
func (v Value) rat() *big.Rat {
	switch {
	case v.kind == KindDecimal:
		return v.decRat()
	case v.n != nil:
		return new(big.Rat).SetInt(v.n)
	}
	return new(big.Rat).SetInt64(v.i)
}

// float returns a numeric value as a float64.
func (v Value) float() float64 {
	switch v.kind {
	case KindFloat, KindDouble:
		return v.f
	case KindDecimal:
		if v.d == nil && v.i < 1<<53 && v.i > -(1<<53) {
			return float64(v.i) / pow10f[v.scale] // both exact: one rounding
		}
		f, _ := v.decRat().Float64()
		return f
	case KindInteger:
		if v.n != nil {
			f, _ := new(big.Float).SetInt(v.n).Float64()
			return f
		}
		return float64(v.i)
	}
	return math.NaN()
}

func promote(a, b Kind) Kind { return max(a, b) }

// arith applies op ('+', '-', '*', '/') to two numeric values.
func arith(op byte, a, b Value) (Value, error) {
	if !a.kind.IsNumeric() || !b.kind.IsNumeric() {
		return Value{}, errNotNumeric
	}
	k := promote(a.kind, b.kind)
	if k == KindInteger && op == '/' {
		k = KindDecimal
	}
	switch k {
	case KindInteger:
		if a.n == nil && b.n == nil {
			if r, ok := smallArith(op, a.i, b.i); ok {
				return Int(r), nil
			}
		}
		x, y := a.bigInt(), b.bigInt()
		r := new(big.Int)
		switch op {
		case '+':
			r.Add(x, y)
		case '-':
			r.Sub(x, y)
		case '*':
			r.Mul(x, y)
		}
		return intValue(r), nil
	case KindDecimal:
		if op != '/' {
			if r, ok := smallDecimalArith(op, a, b); ok {
				return r, nil
			}
		}
		x, y := a.rat(), b.rat()
		r := new(big.Rat)
		switch op {
		case '+':
			r.Add(x, y)
		case '-':
			r.Sub(x, y)
		case '*':
			r.Mul(x, y)
		case '/':
			if y.Sign() == 0 {
				return Value{}, errDivByZero
			}
			r.Quo(x, y)
			r = terminating(r)
		}
		return decimalValue(r), nil
	}
	x, y := a.float(), b.float()
	var r float64
	switch op {
	case '+':
		r = x + y
	case '-':
		r = x - y
	case '*':
		r = x * y
	case '/':
		r = x / y
	}
	if k == KindFloat {
		return floatValue(r), nil
	}
	return Double(r), nil
}

// smallArith does int64 arithmetic; ok is false on overflow.
func smallArith(op byte, x, y int64) (int64, bool) {
	switch op {
	case '+':
		r := x + y
		return r, (x >= 0) != (y >= 0) || (r >= 0) == (x >= 0)
	case '-':
		r := x - y
		return r, (x >= 0) == (y >= 0) || (r >= 0) == (x >= 0)
	case '*':
		if x == 0 || y == 0 {
			return 0, true
		}
		neg := (x < 0) != (y < 0)
		ux, uy := uint64(x), uint64(y)
		if x < 0 {
			ux = -ux
		}
		if y < 0 {
			uy = -uy
		}
		hi, lo := bits.Mul64(ux, uy)
		if hi != 0 {
			return 0, false
		}
		if neg {
			if lo > 1<<63 {
				return 0, false
			}
			return -int64(lo), true
		}
		if lo > math.MaxInt64 {
			return 0, false
		}
		return int64(lo), true
	}
	return 0, false
}

// terminating returns r if it has a finite decimal expansion, else r
// rounded (half away from zero) to divisionDigits fractional digits.
func terminating(r *big.Rat) *big.Rat {
	den := new(big.Int).Set(r.Denom())
	den.Rsh(den, den.TrailingZeroBits())
	five, m := big.NewInt(5), new(big.Int)
	one := big.NewInt(1)
	for den.Cmp(one) > 0 {
		q, _ := new(big.Int).QuoRem(den, five, m)
		if m.Sign() != 0 {
			return roundRat(r, divisionDigits)
		}
		den = q
	}
	return r
}

// roundRat rounds r half away from zero to digits fractional digits.
func roundRat(r *big.Rat, digits int) *big.Rat {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)
	num := new(big.Int).Mul(r.Num(), scale)
	num.Mul(num, big.NewInt(2))
	den := new(big.Int).Mul(r.Denom(), big.NewInt(2))
	// (2·n·s + sign·d) / (2·d), truncated toward zero.
	if num.Sign() >= 0 {
		num.Add(num, r.Denom())
	} else {
		num.Sub(num, r.Denom())
	}
	num.Quo(num, den)
	return new(big.Rat).SetFrac(num, scale)
}

// compareNumeric compares two numeric values. ok is false when either is
// NaN (then no order relation holds and they are not equal).
func compareNumeric(a, b Value) (int, bool) {
	k := promote(a.kind, b.kind)
	switch k {
	case KindInteger:
		if a.n == nil && b.n == nil {
			switch {
			case a.i < b.i:
				return -1, true
			case a.i > b.i:
				return 1, true
			}
			return 0, true
		}
		return a.bigInt().Cmp(b.bigInt()), true
	case KindDecimal:
		if am, as, ok := a.smallDecimal(); ok {
			if bm, bs, ok := b.smallDecimal(); ok {
				if x, y, ok := align(am, as, bm, bs); ok {
					return cmp.Compare(x, y), true
				}
			}
		}
		return a.rat().Cmp(b.rat()), true
	}
	x, y := a.float(), b.float()
	if k == KindFloat {
		x, y = float64(float32(x)), float64(float32(y))
	}
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		return 0, false
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	return 0, true
}

// negate is op:numeric-unary-minus.
func negate(v Value) (Value, error) {
	switch v.kind {
	case KindInteger:
		if v.n == nil && v.i != math.MinInt64 {
			return Int(-v.i), nil
		}
		return intValue(new(big.Int).Neg(v.bigInt())), nil
	case KindDecimal:
		if v.d == nil && v.i != math.MinInt64 {
			return Value{kind: KindDecimal, i: -v.i, scale: v.scale}, nil
		}
		return decimalValue(new(big.Rat).Neg(v.decRat())), nil
	case KindFloat:
		return floatValue(-v.f), nil
	case KindDouble:
		return Double(-v.f), nil
	}
	return Value{}, errNotNumeric
}

// computed strips the term of a numeric value, so that it prints in
// canonical form (unary plus, casts to the same type).
func computed(v Value) Value {
	v.term = rdf.Term{}
	return v
}

func numericSign(v Value) int {
	switch v.kind {
	case KindInteger:
		if v.n != nil {
			return v.n.Sign()
		}
		switch {
		case v.i < 0:
			return -1
		case v.i > 0:
			return 1
		}
		return 0
	case KindDecimal:
		if v.d == nil {
			switch {
			case v.i < 0:
				return -1
			case v.i > 0:
				return 1
			}
			return 0
		}
		return v.d.Sign()
	}
	switch {
	case v.f < 0:
		return -1
	case v.f > 0:
		return 1
	}
	return 0
}

// abs, ceil, floor and round keep the numeric type of their argument.
func numAbs(v Value) (Value, error) {
	if !v.kind.IsNumeric() {
		return Value{}, errNotNumeric
	}
	if numericSign(v) < 0 || (v.kind >= KindFloat && math.Signbit(v.f)) {
		return negate(v)
	}
	return computed(v), nil
}

// roundMode: 'c' ceiling, 'f' floor, 'r' XPath fn:round (half toward +∞).
func numRound(mode byte, v Value) (Value, error) {
	switch v.kind {
	case KindInteger:
		return computed(v), nil
	case KindDecimal:
		r := v.decRat()
		num, den := r.Num(), r.Denom()
		q, m := new(big.Int), new(big.Int)
		switch mode {
		case 'f':
			q.Div(num, den) // Euclidean: floor for a positive divisor
		case 'c':
			q.Div(num, den)
			if m.Mod(num, den).Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
		case 'r':
			// floor(x + 1/2) = floor((2n + d) / 2d)
			n2 := new(big.Int).Lsh(num, 1)
			n2.Add(n2, den)
			q.Div(n2, new(big.Int).Lsh(den, 1))
		}
		return decimalValue(new(big.Rat).SetInt(q)), nil
	case KindFloat, KindDouble:
		x := v.f
		var r float64
		switch mode {
		case 'f':
			r = math.Floor(x)
		case 'c':
			r = math.Ceil(x)
		case 'r':
			if math.IsNaN(x) || math.IsInf(x, 0) {
				r = x
			} else {
				r = math.Floor(x)
				if x-r >= 0.5 {
					r++
				}
				if r == 0 && (x < 0 || math.Signbit(x)) {
					r = math.Copysign(0, -1)
				}
			}
		}
		v.f, v.term = r, rdf.Term{}
		return v, nil
	}
	return Value{}, errNotNumeric
}

// pow10 and pow10f are the powers of ten a small decimal's scale uses.
var (
	pow10  [19]int64
	pow10f [19]float64
)

func init() {
	p := int64(1)
	for i := range pow10 {
		pow10[i], pow10f[i] = p, float64(p)
		p *= 10
	}
}

// decRat returns a decimal as a big.Rat (which must not be modified).
func (v Value) decRat() *big.Rat {
	if v.d != nil {
		return v.d
	}
	return new(big.Rat).SetFrac64(v.i, pow10[v.scale])
}

// smallDecimal returns an integer or decimal as mantissa and scale when it
// fits the int64 fast path.
func (v Value) smallDecimal() (m int64, scale uint8, ok bool) {
	switch v.kind {
	case KindInteger:
		return v.i, 0, v.n == nil
	case KindDecimal:
		return v.i, v.scale, v.d == nil
	}
	return 0, 0, false
}

// align brings two scaled mantissas to the same scale; ok is false on
// overflow.
func align(am int64, as uint8, bm int64, bs uint8) (int64, int64, bool) {
	var ok bool
	switch {
	case as < bs:
		am, ok = smallArith('*', am, pow10[bs-as])
	case as > bs:
		bm, ok = smallArith('*', bm, pow10[as-bs])
	default:
		ok = true
	}
	return am, bm, ok
}

// smallDecimalArith adds, subtracts or multiplies two integers or decimals
// on int64 mantissas; ok is false when an operand is not small or the
// result does not fit.
func smallDecimalArith(op byte, a, b Value) (Value, bool) {
	am, as, ok1 := a.smallDecimal()
	bm, bs, ok2 := b.smallDecimal()
	if !ok1 || !ok2 {
		return Value{}, false
	}
	if op == '*' {
		if int(as)+int(bs) > 18 {
			return Value{}, false
		}
		m, ok := smallArith('*', am, bm)
		return Value{kind: KindDecimal, i: m, scale: as + bs}, ok
	}
	x, y, ok := align(am, as, bm, bs)
	if !ok {
		return Value{}, false
	}
	m, ok := smallArith(op, x, y)
	return Value{kind: KindDecimal, i: m, scale: max(as, bs)}, ok
}
