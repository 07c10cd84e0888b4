package sparql

import (
	"container/list"
	"sync"
)

// Cache is a bounded cache of parse results keyed by the exact text (LRU
// eviction), safe for concurrent use. Errors are cached too, so a client
// repeating a bad query does not pay for the LL stage again.
//
// The *Query and *Update values it returns are shared between all callers
// that parse the same text: treat them, and everything reachable from
// them, as immutable.
type Cache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used; values are *cacheEntry
	byKey map[cacheKey]*list.Element
}

type cacheKey struct {
	update bool
	text   string
}

type cacheEntry struct {
	key cacheKey
	q   *Query
	u   *Update
	err error
}

// NewCache returns a cache holding at most capacity parse results
// (capacity < 1 is taken as 1).
func NewCache(capacity int) *Cache {
	if capacity < 1 {
		capacity = 1
	}
	return &Cache{max: capacity, order: list.New(), byKey: make(map[cacheKey]*list.Element, capacity)}
}

// ParseQuery is ParseQuery through the cache.
func (c *Cache) ParseQuery(text string) (*Query, error) {
	e := c.get(cacheKey{text: text}, func(e *cacheEntry) { e.q, e.err = ParseQuery(text) })
	return e.q, e.err
}

// ParseUpdate is ParseUpdate through the cache.
func (c *Cache) ParseUpdate(text string) (*Update, error) {
	e := c.get(cacheKey{update: true, text: text}, func(e *cacheEntry) { e.u, e.err = ParseUpdate(text) })
	return e.u, e.err
}

// Len returns the number of cached results.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *Cache) get(k cacheKey, parse func(*cacheEntry)) *cacheEntry {
	c.mu.Lock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		return e
	}
	c.mu.Unlock()
	// Parse outside the lock; two goroutines may parse the same new text at
	// once, and the first result stored wins.
	e := &cacheEntry{key: k}
	parse(e)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cacheEntry)
	}
	c.byKey[k] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cacheEntry).key)
	}
	return e
}
