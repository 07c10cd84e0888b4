package graphstore

import "math/bits"

// Term hashing for the dictionary. The hash is fixed (no per-process seed)
// because the dictionary's hash table is written into snapshots and used
// as mapped. It is a multiply-mix over 8-byte words (wyhash style).
const (
	hashK1 = 0xa0761d6478bd642f
	hashK2 = 0xe7037ed1a0b428db
	hashK3 = 0x8ebc6af09c88c6e3
)

func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hashTerm hashes a term given its kind, annotation code and value.
func hashTerm(kind byte, code uint32, s string) uint64 {
	h := mum(uint64(len(s))^hashK1, uint64(kind)<<32|uint64(code)^hashK2)
	for len(s) >= 8 {
		h = mum(h^le64(s), hashK2)
		s = s[8:]
	}
	if len(s) > 0 {
		var t uint64
		for i := 0; i < len(s); i++ {
			t |= uint64(s[i]) << (8 * i)
		}
		h = mum(h^t, hashK3)
	}
	return mum(h^hashK3, hashK1)
}

// mixID spreads a vertex ID for shard placement.
func mixID(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func mulHi(a, b uint64) (uint64, uint64) { return bits.Mul64(a, b) }
