package reason

import "math/bits"

// tripleSet is an open-addressing hash set of triples (linear probing;
// the zero triple marks an empty slot, so S is never 0). It is not safe
// for concurrent writes; concurrent reads are fine while nobody writes.
type tripleSet struct {
	slots []Triple
	n     int
	shift uint // 64 - log2(len(slots))
}

func hashTriple(t Triple) uint64 {
	h := uint64(t.S)*0x9e3779b97f4a7c15 ^ uint64(t.P)*0xc2b2ae3d27d4eb4f ^ uint64(t.O)*0x165667b19e3779f9
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	return h
}

func newTripleSet(capacity int) *tripleSet {
	n := 16
	for n < 2*capacity {
		n <<= 1
	}
	return &tripleSet{slots: make([]Triple, n), shift: uint(64 - bits.TrailingZeros(uint(n)))}
}

// slot is the home slot of hash h: the hash's low bits after the
// partition's top bits (rotated so the two never coincide).
func (s *tripleSet) home(h uint64) uint64 { return bits.RotateLeft64(h, 16) >> s.shift }

func (s *tripleSet) has(t Triple, h uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := s.home(h); ; i = (i + 1) & mask {
		switch x := s.slots[i]; {
		case x == t:
			return true
		case x.S == 0:
			return false
		}
	}
}

// add inserts t; it reports whether t was new.
func (s *tripleSet) add(t Triple, h uint64) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := s.home(h); ; i = (i + 1) & mask {
		switch x := s.slots[i]; {
		case x == t:
			return false
		case x.S == 0:
			s.slots[i] = t
			s.n++
			return true
		}
	}
}

// remove deletes t; it reports whether t was there (backward-shift
// deletion keeps probe sequences intact).
func (s *tripleSet) remove(t Triple, h uint64) bool {
	mask := uint64(len(s.slots) - 1)
	i := s.home(h)
	for {
		x := s.slots[i]
		if x.S == 0 {
			return false
		}
		if x == t {
			break
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		x := s.slots[j]
		if x.S == 0 {
			break
		}
		k := s.home(hashTriple(x))
		// x may move to i if its home is not in (i, j] cyclically.
		if (i <= j && (k <= i || k > j)) || (i > j && k <= i && k > j) {
			s.slots[i] = x
			i = j
		}
	}
	s.slots[i] = Triple{}
	s.n--
	return true
}

func (s *tripleSet) grow() {
	old := s.slots
	s.slots = make([]Triple, 2*len(old))
	s.shift--
	mask := uint64(len(s.slots) - 1)
	for _, x := range old {
		if x.S == 0 {
			continue
		}
		for i := s.home(hashTriple(x)); ; i = (i + 1) & mask {
			if s.slots[i].S == 0 {
				s.slots[i] = x
				break
			}
		}
	}
}

func (s *tripleSet) each(fn func(Triple)) {
	for _, x := range s.slots {
		if x.S != 0 {
			fn(x)
		}
	}
}
