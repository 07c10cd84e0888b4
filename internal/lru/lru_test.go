package lru

import "testing"

func TestLRUEvictsByEntriesAndBytes(t *testing.T) {
	c := New[string, int](3, 100)
	c.Add("a", 1, 10)
	c.Add("b", 2, 10)
	c.Add("c", 3, 10)
	if _, ok := c.Get("a"); !ok { // a is now the most recent: b goes next
		t.Fatal("a missing")
	}
	c.Add("d", 4, 10)
	if _, ok := c.Get("b"); ok || c.Len() != 3 {
		t.Fatalf("b kept past the entry bound (len %d)", c.Len())
	}
	c.Add("e", 5, 85) // 10+10+10+85 > 100: c, then a go (least recent first)
	for _, k := range []string{"c", "a"} {
		if _, ok := c.Get(k); ok {
			t.Fatalf("%s kept past the byte bound", k)
		}
	}
	if _, ok := c.Get("d"); !ok {
		t.Fatal("d evicted although the cache fit without it")
	}
	if c.Bytes() != 95 || c.Len() != 2 {
		t.Fatalf("bytes %d, len %d; want 95, 2", c.Bytes(), c.Len())
	}
	c.Add("e", 6, 5) // replacing charges the new cost
	if v, _ := c.Get("e"); v != 6 || c.Bytes() != 15 {
		t.Fatalf("e = %d, bytes %d; want 6, 15", v, c.Bytes())
	}
	c.Add("huge", 7, 1000) // alone over the budget: kept, the rest goes
	if _, ok := c.Get("huge"); !ok || c.Len() != 1 || c.Bytes() != 1000 {
		t.Fatalf("huge: len %d, bytes %d", c.Len(), c.Bytes())
	}
}
