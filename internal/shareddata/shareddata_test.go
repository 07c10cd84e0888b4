package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindPrefersEnv(t *testing.T) {
	d := t.TempDir()
	t.Setenv(Env, d)
	if got := find(); got != d {
		t.Fatalf("find() = %q, want %q", got, d)
	}
}

func TestFindBesideRepository(t *testing.T) {
	t.Setenv(Env, "")
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	pkg := filepath.Join(repo, "pkg")
	shared := filepath.Join(root, "shared")
	for _, d := range []string{pkg, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	if got := find(); got != shared {
		t.Fatalf("find() = %q, want %q", got, shared)
	}
}
