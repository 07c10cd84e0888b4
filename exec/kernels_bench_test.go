package exec

import (
	"testing"

	"github.com/wukongd/wukongd/graphstore"
)

// The key deduplication of a step with rows like LUBM-40 L1's check
// ?X memberOf ?Z: 103,683 rows, 5,194 distinct keys repeating with a
// period (each alumnus once per department of the university), not in
// runs. Go map against keySet.
func dedupKeys() []Key {
	keys := make([]Key, 0, 103683)
	for len(keys) < cap(keys) {
		for x := 0; x < 5194 && len(keys) < cap(keys); x += 1 + x%3 {
			keys = append(keys, graphstore.MakeKey(ID(1000+7*x), 12, graphstore.Out))
		}
	}
	return keys
}

func BenchmarkKeyDedupMap(b *testing.B) {
	keys := dedupKeys()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m := make(map[Key]int32, 2048)
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				m[k] = int32(len(m))
			}
		}
	}
}

func BenchmarkKeyDedupKeySet(b *testing.B) {
	keys := dedupKeys()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s := newKeySet(1024)
		for _, k := range keys {
			if _, ok := s.get(k); !ok {
				s.put(k, int32(s.n))
			}
		}
	}
}
