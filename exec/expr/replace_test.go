package expr

import (
	"strings"
	"testing"
)

// TestReplaceOneMatchAtATime: REPLACE matching one match at a time (a
// pattern with no assertion on what precedes a match) gives what listing
// every match first gives, and patterns with such an assertion (^, \b, \B)
// are listed first.
func TestReplaceOneMatchAtATime(t *testing.T) {
	texts := []string{"", "a", "banana", "abcabc abc", "x\nab\nab", strings.Repeat("ab", 1000), "héllo wörld"}
	cases := []struct {
		pattern, flags, repl string
		local                bool
	}{
		{"a", "", "X", true},
		{"(a)(b)?", "", "[$2$1]", true},
		{"an", "", "$0$0", true},
		{"a$", "", "Z", true},
		{"(?:ab)+", "", "-", true},
		{"ö|é", "", "o", true},
		{"b$", "m", "B", true},
		{"^a", "", "A", false},
		{"^a", "m", "A", false},
		{"\\bab", "", "AB", false},
		{"b\\B", "", "_", false},
	}
	for _, c := range cases {
		src, err := translateRegex(c.pattern, c.flags)
		if err != nil {
			t.Fatal(err)
		}
		rx, err := compileRegex(c.pattern, c.flags)
		if err != nil {
			t.Fatal(err)
		}
		if rx.local != c.local || localPattern(src) != c.local {
			t.Errorf("%q %q: local %v, want %v", c.pattern, c.flags, rx.local, c.local)
		}
		for _, s := range texts {
			one, err := xpathReplace(nil, &regex{re: rx.re, local: true}, s, c.repl)
			if err != nil {
				t.Fatal(err)
			}
			all, err := xpathReplace(nil, &regex{re: rx.re, local: false}, s, c.repl)
			if err != nil {
				t.Fatal(err)
			}
			if c.local && one != all {
				t.Errorf("%q on %.20q: one at a time %.40q, listed %.40q", c.pattern, s, one, all)
			}
			if got, _ := xpathReplace(nil, rx, s, c.repl); got != all {
				t.Errorf("%q on %.20q: %.40q, want %.40q", c.pattern, s, got, all)
			}
		}
	}
	// The one-at-a-time path stops at the size bound like the other.
	rx, _ := compileRegex("a", "")
	env := &Env{MaxValue: 1 << 10}
	if _, err := xpathReplace(env, rx, strings.Repeat("a", 100), strings.Repeat("b", 100)); err == nil {
		t.Error("a REPLACE past the value bound made its string")
	}
}
