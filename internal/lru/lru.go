// Package lru is the least-recently-used cache bounded both in entries and
// in bytes that the parse cache (sparql.Cache), the shape cache
// (sparql.Shapes) and the regex cache (exec/expr) share: each entry is
// charged a cost (an estimate of the memory it holds) by its caller, and
// adding an entry evicts the least recently used ones until the cache is
// within both bounds again.
//
// An LRU is not safe for concurrent use: its callers hold their own lock,
// which they also need for what they do around a lookup.
package lru

// LRU maps keys to values, most recently used first.
type LRU[K comparable, V any] struct {
	maxEntries, maxBytes int
	bytes                int
	byKey                map[K]*entry[K, V]
	// head is the sentinel of a circular list: head.next is the most
	// recently used entry, head.prev the least.
	head entry[K, V]
}

type entry[K comparable, V any] struct {
	key        K
	val        V
	cost       int
	prev, next *entry[K, V]
}

// New returns an LRU of at most maxEntries entries (at least 1) and
// maxBytes bytes of cost (at least 1).
func New[K comparable, V any](maxEntries, maxBytes int) *LRU[K, V] {
	c := &LRU[K, V]{maxEntries: max(1, maxEntries), maxBytes: max(1, maxBytes), byKey: map[K]*entry[K, V]{}}
	c.head.next, c.head.prev = &c.head, &c.head
	return c
}

// Get returns the value of k and marks it most recently used.
func (c *LRU[K, V]) Get(k K) (V, bool) {
	e, ok := c.byKey[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.val, true
}

// Add sets k to v, charged cost, as the most recently used entry, then
// evicts the least recently used entries until the LRU is within its
// bounds. The entry just added is never evicted, so one entry over the
// byte budget alone is kept (until the next Add).
func (c *LRU[K, V]) Add(k K, v V, cost int) {
	if e, ok := c.byKey[k]; ok {
		c.bytes += cost - e.cost
		e.val, e.cost = v, cost
		c.unlink(e)
		c.pushFront(e)
	} else {
		e := &entry[K, V]{key: k, val: v, cost: cost}
		c.byKey[k] = e
		c.bytes += cost
		c.pushFront(e)
	}
	for len(c.byKey) > c.maxEntries || c.bytes > c.maxBytes {
		last := c.head.prev
		if last == c.head.next {
			break // only the newest entry is left
		}
		c.unlink(last)
		delete(c.byKey, last.key)
		c.bytes -= last.cost
	}
}

// Len returns the number of entries.
func (c *LRU[K, V]) Len() int { return len(c.byKey) }

// Bytes returns the entries' cost in all.
func (c *LRU[K, V]) Bytes() int { return c.bytes }

func (c *LRU[K, V]) unlink(e *entry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (c *LRU[K, V]) pushFront(e *entry[K, V]) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
}
