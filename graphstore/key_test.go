package graphstore

import "testing"

func TestKeyRoundTripAtFieldBoundaries(t *testing.T) {
	vertices := []ID{0, 1, 2, MaxPredicate, FirstVertexID, FirstVertexID + 1, 1<<32 - 1, 1 << 32, MaxID - 1, MaxID}
	preds := []ID{AllPredicates, TypeID, 2, 1<<17 - 1, 1 << 17, MaxPredicate - 1, MaxPredicate}
	for _, v := range vertices {
		for _, p := range preds {
			for _, d := range []Dir{In, Out} {
				k := MakeKey(v, p, d)
				if k.Vertex() != v || k.Pred() != p || k.Dir() != d {
					t.Fatalf("MakeKey(%d,%d,%d) = %#x decodes to %v", v, p, d, uint64(k), k)
				}
				b := AppendKey([]byte{9}, k)
				k2, err := DecodeKey(b[1:])
				if err != nil || k2 != k {
					t.Fatalf("AppendKey/DecodeKey(%v) = %v, %v", k, k2, err)
				}
			}
		}
	}
	if MakeKey(MaxID, MaxPredicate, Out) != ^Key(0) {
		t.Fatal("the fields do not cover all 64 bits")
	}
	if MakeKey(0, 0, In) != 0 {
		t.Fatal("zero fields do not give key 0")
	}
	// Key order is (vertex, predicate, dir).
	if !(MakeKey(1, MaxPredicate, Out) < MakeKey(2, 0, In) && MakeKey(5, 3, Out) < MakeKey(5, 4, In)) {
		t.Fatal("keys do not sort by vertex, then predicate, then dir")
	}
	if _, err := DecodeKey([]byte{1, 2}); err == nil {
		t.Fatal("short key decoded")
	}
}

func TestMakeKeyOutOfRangePanics(t *testing.T) {
	for _, c := range []struct{ v, p ID }{{MaxID + 1, 1}, {1, MaxPredicate + 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MakeKey(%d,%d) did not panic", c.v, c.p)
				}
			}()
			MakeKey(c.v, c.p, Out)
		}()
	}
}
