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
	shards := shardCounts(t)
	known, err := ReadList(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	runs := make([][]Outcome, len(shards))
	for i, n := range shards {
		for _, tc := range tests {
			if !isHTTPID(tc.ID) {
				t.Fatalf("%s is not an HTTP test ID", tc.ID)
			}
			if !selected(t, tc.ID) {
				continue
			}
			runs[i] = append(runs[i], RunHTTPTest(context.Background(), tc, n, *timeoutFlag))
		}
		report(t, "W3C SPARQL 1.1 Protocol and Graph Store Protocol", n, runs[i], known)
	}
	ratchet(t, shards, runs, isHTTPID)
	record("SPARQL 1.1 Protocol and Graph Store HTTP Protocol", runs...)
}
