package expr

import (
	"strconv"
	"strings"
	"testing"
)

// TestRegexCacheBounded: the cache keeps no long pattern, no invalid one,
// stays within its byte budget however many distinct patterns pass, and
// keeps a pattern in use while others come and go (LRU, not cleared when
// full).
func TestRegexCacheBounded(t *testing.T) {
	regexCache.Lock()
	regexCache.lru = nil
	regexCache.Unlock()
	long := strings.Repeat("a", maxCachedPattern+1)
	if r, err := getRegex(long, ""); err != nil || !r.re.MatchString(long) {
		t.Fatalf("long pattern: %v", err)
	}
	if _, err := getRegex("(", ""); err == nil {
		t.Fatal("invalid pattern accepted")
	}
	regexCache.Lock()
	n := 0
	if regexCache.lru != nil {
		n = regexCache.lru.Len()
	}
	regexCache.Unlock()
	if n != 0 {
		t.Fatalf("cache holds %d entries after a long and an invalid pattern, want 0", n)
	}
	p := strings.Repeat("b", maxCachedPattern-8)
	for i := 0; i < 2000; i++ {
		pat := p + strings.Repeat("c", i%7) + string(rune('a'+i%26)) + strings.Repeat("d", i/26)
		if _, err := getRegex(pat, ""); err != nil {
			t.Fatal(err)
		}
		regexCache.Lock()
		b, n := regexCache.lru.Bytes(), regexCache.lru.Len()
		regexCache.Unlock()
		if b > regexCacheBytes || n > regexCacheSize {
			t.Fatalf("cache at %d bytes, %d entries: over its bounds", b, n)
		}
	}
	// A pattern used between every new one stays cached.
	hot := "hot+"
	first, err := getRegex(hot, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2*regexCacheSize; i++ {
		if _, err := getRegex("x"+strconv.Itoa(i)+"y", ""); err != nil {
			t.Fatal(err)
		}
		if r, _ := getRegex(hot, ""); r != first {
			t.Fatalf("the pattern in use was evicted after %d others", i+1)
		}
	}
}
