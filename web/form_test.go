package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readForm gives what Request.ParseForm gives: Form, PostForm and
// whether it fails, for bodies and URL queries of every kind.
func TestReadFormAsParseForm(t *testing.T) {
	long := "query=" + strings.Repeat("SELECT+%3Fs+%7B+%3Fs+%3Fp+%3Fo+%7D+", 4000) // past the pooled buffer's first size
	cases := []struct{ url, body string }{
		{"/sparql", "query=SELECT+*+%7B%3Fs+%3Fp+%3Fo%7D"},
		{"/sparql", ""},
		{"/sparql", "query=a&timeout=1&query=b"},
		{"/sparql", "default-graph-uri=http%3A%2F%2Fx%2Fg1&default-graph-uri=http%3A%2F%2Fx%2Fg2&query=q"},
		{"/sparql?timeout=2&query=u", "query=b&timeout=1"},
		{"/sparql?a=1&a=2", "a=3&b"},
		{"/sparql?x=%zz", "query=q"},
		{"/sparql", "query=%zz&timeout=1"},
		{"/sparql", "a=1;b=2&query=q"},
		{"/sparql", "&&=&query=&=v&k="},
		{"/sparql", "q%20x=1&q+x=2"},
		{"/sparql", long},
		{"/sparql", "query=%E2%82%AC+%e2%82%ac%2B+%2b&x=%"},
		{"/sparql", "query=" + strings.Repeat("a&", 9999)},    // 10,000 parameters: net/url's limit
		{"/sparql", "query=" + strings.Repeat("&", 10000)},    // 10,001: refused whole
		{"/sparql?" + strings.Repeat("b&", 10000), "query=q"}, // the URL's count on its own
	}
	for _, c := range cases {
		want := httptest.NewRequest(http.MethodPost, c.url, strings.NewReader(c.body))
		want.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		wantErr := want.ParseForm()
		for _, oneByte := range []bool{false, true} {
			got := httptest.NewRequest(http.MethodPost, c.url, strings.NewReader(c.body))
			if oneByte {
				got.Body = readCloser{iotest.OneByteReader(strings.NewReader(c.body))}
			}
			form, err := readForm(got)
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%s %.40q: error %v, ParseForm's %v", c.url, c.body, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(form, want.Form) {
				t.Errorf("%s %.40q: Form %v, ParseForm's %v", c.url, c.body, form, want.Form)
			}
			if !reflect.DeepEqual(got.Form, want.Form) || !reflect.DeepEqual(got.PostForm, want.PostForm) {
				t.Errorf("%s %.40q: Form %v PostForm %v, ParseForm's %v %v", c.url, c.body, got.Form, got.PostForm, want.Form, want.PostForm)
			}
		}
	}
	// The body's values and the URL's stay apart: an append to one
	// parameter's values in Form does not show in PostForm.
	r := httptest.NewRequest(http.MethodPost, "/sparql?b=2", strings.NewReader("a=1&b=1"))
	form, err := readForm(r)
	if err != nil {
		t.Fatal(err)
	}
	form["a"] = append(form["a"], "x")
	if got := r.PostForm["b"]; !reflect.DeepEqual(got, []string{"1"}) || !reflect.DeepEqual(form["b"], []string{"1", "2"}) {
		t.Fatalf("PostForm b %v, Form b %v", got, form["b"])
	}
	if got := r.PostForm["a"]; !reflect.DeepEqual(got, []string{"1"}) {
		t.Fatalf("PostForm a %v after an append to Form's", got)
	}
}

// FuzzReadForm: for any body and URL query, readForm gives ParseForm's
// Form and PostForm and fails when it fails.
func FuzzReadForm(f *testing.F) {
	for _, s := range [][2]string{
		{"query=SELECT+*+%7B%3Fs+%3Fp+%3Fo%7D", ""},
		{"query=a&timeout=1&query=b", "timeout=2&query=u"},
		{"a=1;b=2&%zz=1&&=&k", "x=%zz;y"},
		{"q%20x=1&q+x=2&%E2%82%AC=%2B", "a&a=&=a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, body, rawQuery string) {
		mk := func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/sparql", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.URL.RawQuery = rawQuery
			return r
		}
		want, got := mk(), mk()
		wantErr := want.ParseForm()
		form, err := readForm(got)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, ParseForm's %v", err, wantErr)
		}
		if !reflect.DeepEqual(form, got.Form) || !reflect.DeepEqual(got.Form, want.Form) || !reflect.DeepEqual(got.PostForm, want.PostForm) {
			t.Fatalf("Form %v PostForm %v, ParseForm's %v %v", got.Form, got.PostForm, want.Form, want.PostForm)
		}
	})
}

// A body past the request's MaxBytesReader fails with its
// *http.MaxBytesError (the 413 of bodyError) and reads no further.
func TestReadFormBodyLimit(t *testing.T) {
	body := "query=" + strings.Repeat("x", 1<<20)
	r := httptest.NewRequest(http.MethodPost, "/sparql", strings.NewReader(body))
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 4096)
	_, err := readForm(r)
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) || mbe.Limit != 4096 {
		t.Fatalf("error %v, want a MaxBytesError of 4096", err)
	}
}

type readCloser struct {
	r interface{ Read([]byte) (int, error) }
}

func (rc readCloser) Read(p []byte) (int, error) { return rc.r.Read(p) }
func (rc readCloser) Close() error               { return nil }

// BenchmarkReadForm: a light query's form POST decoded by readForm and by
// Request.ParseForm (allocs/op).
func BenchmarkReadForm(b *testing.B) {
	body := "query=PREFIX+ub%3A+%3Chttp%3A%2F%2Fswat.cse.lehigh.edu%2Fonto%2Funiv-bench.owl%23%3E+SELECT+%3FX+WHERE+%7B+%3FX+ub%3AworksFor+%3Chttp%3A%2F%2Fwww.Department0.University0.edu%3E+.+%7D"
	for _, c := range []struct {
		name  string
		parse func(*http.Request) error
	}{
		{"readForm", func(r *http.Request) error { _, err := readForm(r); return err }},
		{"ParseForm", func(r *http.Request) error { return r.ParseForm() }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			rd := strings.NewReader(body)
			r := httptest.NewRequest(http.MethodPost, "/sparql", rd)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for i := 0; i < b.N; i++ {
				rd.Reset(body)
				r.Body, r.Form, r.PostForm = readCloser{rd}, nil, nil
				if err := c.parse(r); err != nil || len(r.Form["query"]) != 1 {
					b.Fatal(err)
				}
			}
		})
	}
}
