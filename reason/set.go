package reason

import (
	"fmt"
	"math/bits"

	"github.com/wukongd/wukongd/graphstore"
)

// packed is a triple in 16 bytes: the subject (40 bits, graphstore's
// vertex field) and predicate (24 bits) in hi, the object in lo. A third
// less memory than Triple, and so fewer cache misses in the sets, whose
// probes are random reads.
type packed struct{ hi, lo uint64 }

const (
	predBits  = 24
	groupBits = 4
)

func pack(t Triple) packed { return packed{uint64(t.S)<<predBits | uint64(t.P), uint64(t.O)} }

func (k packed) triple() Triple {
	return Triple{ID(k.hi >> predBits), ID(k.hi & (1<<predBits - 1)), ID(k.lo)}
}

// checkFits panics unless t's subject and predicate fit a packed triple.
// IDs come from a dictionary, which never hands out larger ones.
func checkFits(t Triple) {
	if t.S > graphstore.MaxID || t.P > graphstore.MaxPredicate {
		panic(fmt.Sprintf("BUG: triple (%d, %d, %d) out of the ID range", t.S, t.P, t.O))
	}
}

// hashPacked hashes the subject, the predicate and the object's ID
// without its low groupBits bits: the facts (s p o) whose objects have
// nearby IDs share a home slot and lie side by side in the probe
// sequence (linear probing). All the types of a subject (classes have
// nearby low IDs) then sit in one or two cache lines, and the burst of
// type conclusions a subject's edges emit (domains, ranges, superclasses)
// probes memory already loaded instead of a cache miss each. A group is
// at most 1<<groupBits facts, so a hub's many objects cannot make one
// long cluster.
func hashPacked(k packed) uint64 {
	h := k.hi*0x9e3779b97f4a7c15 ^ (k.lo>>groupBits)*0xc2b2ae3d27d4eb4f
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	return h
}

func hashTriple(t Triple) uint64 { return hashPacked(pack(t)) }

// tripleSet is an open-addressing hash set of triples (linear probing;
// the zero key marks an empty slot, so S is never 0). It is not safe for
// concurrent writes; concurrent reads are fine while nobody writes.
type tripleSet struct {
	slots []packed
	n     int
	shift uint // 64 - log2(len(slots))
}

func newTripleSet(capacity int) *tripleSet {
	n := 16
	for n < 2*capacity {
		n <<= 1
	}
	return &tripleSet{slots: make([]packed, n), shift: uint(64 - bits.TrailingZeros(uint(n)))}
}

// home is the home slot of hash h: the hash's low bits after the
// partition's top bits (rotated so the two never coincide).
func (s *tripleSet) home(h uint64) uint64 { return bits.RotateLeft64(h, 16) >> s.shift }

func (s *tripleSet) has(t Triple, h uint64) bool { return s.hasKey(pack(t), h) }

func (s *tripleSet) hasKey(k packed, h uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := s.home(h); ; i = (i + 1) & mask {
		switch x := s.slots[i]; {
		case x == k:
			return true
		case x.hi == 0:
			return false
		}
	}
}

// add inserts t; it reports whether t was new.
func (s *tripleSet) add(t Triple, h uint64) bool { return s.addKey(pack(t), h) }

func (s *tripleSet) addKey(k packed, h uint64) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := s.home(h); ; i = (i + 1) & mask {
		switch x := s.slots[i]; {
		case x == k:
			return false
		case x.hi == 0:
			s.slots[i] = k
			s.n++
			return true
		}
	}
}

// remove deletes t; it reports whether t was there (backward-shift
// deletion keeps probe sequences intact).
func (s *tripleSet) remove(t Triple, h uint64) bool {
	k := pack(t)
	mask := uint64(len(s.slots) - 1)
	i := s.home(h)
	for {
		x := s.slots[i]
		if x.hi == 0 {
			return false
		}
		if x == k {
			break
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		x := s.slots[j]
		if x.hi == 0 {
			break
		}
		k := s.home(hashPacked(x))
		// x may move to i if its home is not in (i, j] cyclically.
		if (i <= j && (k <= i || k > j)) || (i > j && k <= i && k > j) {
			s.slots[i] = x
			i = j
		}
	}
	s.slots[i] = packed{}
	s.n--
	return true
}

func (s *tripleSet) grow() {
	old := s.slots
	s.slots = make([]packed, 2*len(old))
	s.shift--
	mask := uint64(len(s.slots) - 1)
	for _, x := range old {
		if x.hi == 0 {
			continue
		}
		for i := s.home(hashPacked(x)); ; i = (i + 1) & mask {
			if s.slots[i].hi == 0 {
				s.slots[i] = x
				break
			}
		}
	}
}

func (s *tripleSet) each(fn func(Triple)) {
	for _, x := range s.slots {
		if x.hi != 0 {
			fn(x.triple())
		}
	}
}
