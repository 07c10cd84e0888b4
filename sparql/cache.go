package sparql

import (
	"context"
	"sync"

	"github.com/wukongd/wukongd/internal/lru"
)

// MaxCachedText is the longest text a Cache keeps: a longer query or
// update is parsed on every call (its parse costs far more than a lookup
// saves, and keeping it would pin its text and algebra).
const MaxCachedText = 64 << 10

// DefaultCacheBytes is the default byte budget of a Cache.
const DefaultCacheBytes = 64 << 20

// Cache is a bounded cache of parse results keyed by the exact text (LRU
// eviction), safe for concurrent use. It is bounded both in entries and
// in bytes (an entry is charged its text and an estimate of its algebra,
// entryCost); texts over MaxCachedText and failed parses are not kept.
//
// The *Query and *Update values it returns are shared between all callers
// that parse the same text: treat them, and everything reachable from
// them, as immutable.
type Cache struct {
	mu      sync.Mutex
	entries *lru.LRU[cacheKey, *cacheEntry]
}

type cacheKey struct {
	update bool
	base   string
	text   string
}

type cacheEntry struct {
	key cacheKey
	q   *Query
	u   *Update
	err error
}

// entryCost is what an entry is charged: its text (as the key) and an
// estimate of the algebra parsed from it (measured at 4–8 bytes per byte
// of text on the LUBM queries) plus the fixed part of an entry.
func entryCost(text string) int { return 9*len(text) + 512 }

// NewCache returns a cache holding at most capacity parse results
// (capacity < 1 is taken as 1) and DefaultCacheBytes.
func NewCache(capacity int) *Cache { return NewCacheBytes(capacity, DefaultCacheBytes) }

// NewCacheBytes is NewCache with a byte budget (maxBytes < 1: the default).
func NewCacheBytes(capacity, maxBytes int) *Cache {
	if capacity < 1 {
		capacity = 1
	}
	if maxBytes < 1 {
		maxBytes = DefaultCacheBytes
	}
	return &Cache{entries: lru.New[cacheKey, *cacheEntry](capacity, maxBytes)}
}

// ParseQuery is ParseQuery through the cache.
func (c *Cache) ParseQuery(text string) (*Query, error) {
	return c.ParseQueryContext(context.Background(), text)
}

// ParseQueryContext is ParseQueryContext through the cache.
func (c *Cache) ParseQueryContext(ctx context.Context, text string) (*Query, error) {
	e := c.get(cacheKey{text: text}, func(e *cacheEntry) { e.q, e.err = ParseQueryContext(ctx, text) })
	return e.q, e.err
}

// ParseQueryBase is ParseQueryBase through the cache.
func (c *Cache) ParseQueryBase(ctx context.Context, text, base string) (*Query, error) {
	e := c.get(cacheKey{base: base, text: text}, func(e *cacheEntry) { e.q, e.err = ParseQueryBase(ctx, text, base) })
	return e.q, e.err
}

// ParseUpdateBase is ParseUpdateBase through the cache.
func (c *Cache) ParseUpdateBase(ctx context.Context, text, base string) (*Update, error) {
	e := c.get(cacheKey{update: true, base: base, text: text}, func(e *cacheEntry) { e.u, e.err = ParseUpdateBase(ctx, text, base) })
	return e.u, e.err
}

// ParseUpdate is ParseUpdate through the cache.
func (c *Cache) ParseUpdate(text string) (*Update, error) {
	return c.ParseUpdateContext(context.Background(), text)
}

// ParseUpdateContext is ParseUpdateContext through the cache.
func (c *Cache) ParseUpdateContext(ctx context.Context, text string) (*Update, error) {
	e := c.get(cacheKey{update: true, text: text}, func(e *cacheEntry) { e.u, e.err = ParseUpdateContext(ctx, text) })
	return e.u, e.err
}

// Len returns the number of cached results.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// Bytes returns what the cached results are charged in all.
func (c *Cache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Bytes()
}

func (c *Cache) get(k cacheKey, parse func(*cacheEntry)) *cacheEntry {
	if len(k.text) > MaxCachedText {
		e := &cacheEntry{key: k}
		parse(e)
		return e
	}
	c.mu.Lock()
	if e, ok := c.entries.Get(k); ok {
		c.mu.Unlock()
		return e
	}
	c.mu.Unlock()
	// Parse outside the lock; two goroutines may parse the same new text at
	// once, and the first result stored wins.
	e := &cacheEntry{key: k}
	parse(e)
	if e.err != nil {
		return e // errors are not kept: each costs at most one parse
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries.Get(k); ok {
		return old
	}
	c.entries.Add(k, e, entryCost(k.text))
	return e
}

// Weight estimates the bytes the algebra of q holds (and so a plan built
// from it), for caches that keep parsed queries or their plans: a walk
// charging each pattern node, triple pattern, expression and VALUES cell.
func (q *Query) Weight() int {
	n := 512 + 64*len(q.Template)
	Walk(q.Pattern, func(p Pattern) bool {
		n += 64
		switch x := p.(type) {
		case *BGP:
			n += 96 * len(x.Triples)
		case *Values:
			n += 48 * len(x.Vars) * (len(x.Rows) + 1)
		}
		return true
	})
	return n
}
