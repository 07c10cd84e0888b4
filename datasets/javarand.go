package datasets

// javaRandom is java.util.Random: the 48-bit linear congruential generator
// that UBA draws from, as the Java SE documentation specifies it (the
// multiplier 0x5DEECE66D, the addend 0xB, the seed scrambled by XOR with the
// multiplier). Reproducing UBA's data means reproducing its draws exactly,
// so this is the only random source of the generator. UBA 1.7 only calls
// setSeed and nextInt(bound).
type javaRandom struct{ seed uint64 }

const (
	javaMultiplier = 0x5DEECE66D
	javaAddend     = 0xB
	javaMask       = 1<<48 - 1
)

// setSeed is Random.setSeed (and the Random(long) constructor).
func (r *javaRandom) setSeed(seed int64) {
	r.seed = (uint64(seed) ^ javaMultiplier) & javaMask
}

// next is Random.next(bits) for 1 <= bits <= 31: the top bits of the
// advanced state, non-negative.
func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaMultiplier + javaAddend) & javaMask
	return int32(r.seed >> (48 - bits))
}

// nextInt is Random.nextInt(bound) for bound > 0: a power of two takes
// the high bits of one draw; any other bound rejects the draws that would
// make the modulo biased (those where bits - val + (bound-1) overflows an
// int).
func (r *javaRandom) nextInt(bound int32) int32 {
	if bound <= 0 {
		panic("BUG: javaRandom.nextInt with a bound <= 0")
	}
	if bound&-bound == bound {
		return int32((int64(bound) * int64(r.next(31))) >> 31)
	}
	for {
		bits := r.next(31)
		val := bits % bound
		if int64(bits)-int64(val)+int64(bound-1) <= 1<<31-1 {
			return val
		}
	}
}

// between is UBA's _getRandomFromRange: uniform in [lo, hi].
func (r *javaRandom) between(lo, hi int) int {
	return lo + int(r.nextInt(int32(hi-lo+1)))
}
