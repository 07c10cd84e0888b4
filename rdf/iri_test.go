package rdf

import "testing"

// The examples of RFC 3986 section 5.4.
func TestResolveIRI(t *testing.T) {
	base := "http://a/b/c/d;p?q"
	cases := map[string]string{
		"g:h": "g:h", "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/",
		"/g": "http://a/g", "//g": "http://g", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y",
		"#s": "http://a/b/c/d;p?q#s", "g#s": "http://a/b/c/g#s", "g?y#s": "http://a/b/c/g?y#s",
		";x": "http://a/b/c/;x", "g;x": "http://a/b/c/g;x", "g;x?y#s": "http://a/b/c/g;x?y#s",
		"": "http://a/b/c/d;p?q", ".": "http://a/b/c/", "./": "http://a/b/c/", "..": "http://a/b/",
		"../": "http://a/b/", "../g": "http://a/b/g", "../..": "http://a/", "../../": "http://a/",
		"../../g": "http://a/g", "../../../g": "http://a/g", "../../../../g": "http://a/g",
		"/./g": "http://a/g", "/../g": "http://a/g", "g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g",
		"g..": "http://a/b/c/g..", "..g": "http://a/b/c/..g", "./../g": "http://a/b/g",
		"./g/.": "http://a/b/c/g/", "g/./h": "http://a/b/c/g/h", "g/../h": "http://a/b/c/h",
		"g;x=1/./y": "http://a/b/c/g;x=1/y", "g;x=1/../y": "http://a/b/c/y",
		"g?y/./x": "http://a/b/c/g?y/./x", "g?y/../x": "http://a/b/c/g?y/../x",
		"g#s/./x": "http://a/b/c/g#s/./x", "g#s/../x": "http://a/b/c/g#s/../x",
	}
	for ref, want := range cases {
		if got := ResolveIRI(base, ref); got != want {
			t.Errorf("resolve(%q) = %q, want %q", ref, got, want)
		}
	}
	if got := ResolveIRI("http://a", "b"); got != "http://a/b" {
		t.Errorf("empty base path: %q", got)
	}
}

// An absolute reference loses its dot segments; an empty base leaves a
// relative reference as it is.
func TestResolveIRIAbsoluteAndEmptyBase(t *testing.T) {
	for _, c := range [][3]string{
		{"http://a/b", "http://x/./y/../z", "http://x/z"},
		{"http://a/b", "http://x/y", "http://x/y"},
		{"", "g/../h", "g/../h"},
	} {
		if got := ResolveIRI(c[0], c[1]); got != c[2] {
			t.Errorf("ResolveIRI(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
