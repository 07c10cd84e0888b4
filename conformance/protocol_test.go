package conformance

import (
	"context"
	"strings"
	"testing"
)

func isHTTPID(id string) bool {
	return strings.HasPrefix(id, "protocol/") || strings.HasPrefix(id, "graph-store-protocol/") || strings.HasPrefix(id, "http-rdf-update/")
}

// TestW3CProtocol runs the SPARQL 1.1 Protocol and Graph Store Protocol
// tests against our HTTP server with every shard count, under the ratchet.
func TestW3CProtocol(t *testing.T) {
	_, root := loadSuite(t)
	var tests []HTTPTest
	for _, m := range []string{ProtocolManifest, GraphStoreManifest} {
		ts, err := LoadHTTPTests(root, m)
		if err != nil {
			t.Fatal(err)
		}
		tests = append(tests, ts...)
	}
	if len(tests) < 40 {
		t.Fatalf("only %d HTTP tests found under %s", len(tests), root)
	}
	runShards(t, "W3C SPARQL 1.1 Protocol and Graph Store Protocol", "SPARQL 1.1 Protocol and Graph Store HTTP Protocol", isHTTPID, func(n int) (run []Outcome) {
		for _, tc := range tests {
			if !isHTTPID(tc.ID) {
				t.Fatalf("%s is not an HTTP test ID", tc.ID)
			}
			if !selected(t, tc.ID) {
				continue
			}
			run = append(run, RunHTTPTest(context.Background(), tc, n, *timeoutFlag))
		}
		return run
	})
}
