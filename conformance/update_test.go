package conformance

import (
	"context"
	"strings"
	"testing"
)

// updateDirs are the directories of the Update suite's manifests: their
// tests' IDs belong to TestW3CUpdate's ratchet.
var updateDirs = []string{"add", "basic-update", "clear", "copy", "delete-data", "delete-insert",
	"delete-where", "delete", "drop", "move", "update-silent"}

func isUpdateID(id string) bool {
	for _, d := range updateDirs {
		if strings.HasPrefix(id, d+"/") {
			return true
		}
	}
	return false
}

// TestW3CUpdate runs the W3C SPARQL 1.1 Update evaluation tests on the
// service with every shard count, under the ratchet.
func TestW3CUpdate(t *testing.T) {
	_, root := loadSuite(t)
	tests, err := LoadUpdates(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 90 {
		t.Fatalf("only %d update-evaluation tests found under %s", len(tests), root)
	}
	runShards(t, "W3C SPARQL 1.1 update evaluation", "SPARQL 1.1 Update (evaluation)", isUpdateID, func(n int) (run []Outcome) {
		for _, tc := range tests {
			if !isUpdateID(tc.ID) {
				t.Fatalf("%s is not in a directory of updateDirs", tc.ID)
			}
			if !selected(t, tc.ID) {
				continue
			}
			run = append(run, RunUpdate(context.Background(), tc, n, *timeoutFlag))
		}
		return run
	})
}
