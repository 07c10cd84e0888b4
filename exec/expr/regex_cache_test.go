package expr

import (
	"strings"
	"testing"
)

// TestRegexCacheBounded: the cache keeps no long pattern, no invalid one,
// and stays within its byte budget however many distinct patterns pass.
func TestRegexCacheBounded(t *testing.T) {
	regexCache.Lock()
	regexCache.m, regexCache.bytes = nil, 0
	regexCache.Unlock()
	long := strings.Repeat("a", maxCachedPattern+1)
	if r, err := getRegex(long, ""); err != nil || !r.re.MatchString(long) {
		t.Fatalf("long pattern: %v", err)
	}
	if _, err := getRegex("(", ""); err == nil {
		t.Fatal("invalid pattern accepted")
	}
	regexCache.Lock()
	n := len(regexCache.m)
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
		b, n := regexCache.bytes, len(regexCache.m)
		regexCache.Unlock()
		if b > regexCacheBytes || n > regexCacheSize {
			t.Fatalf("cache at %d bytes, %d entries: over its bounds", b, n)
		}
	}
}
