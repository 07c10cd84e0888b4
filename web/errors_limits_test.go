package web

import (
	"fmt"
	"net/http"
	"testing"
)

// TestLimitStatuses: the engine's limits have their own documented
// statuses (README, "Limits").
func TestLimitStatuses(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		kind   string
	}{
		{fmt.Errorf("%w: the query needs more than its 768 MiB", ErrQueryMemory), http.StatusInsufficientStorage, "query_memory"},
		{fmt.Errorf("%w: REPLACE would make 20000000 bytes", ErrValueTooLarge), http.StatusInsufficientStorage, "value_too_large"},
		{fmt.Errorf("%w: try again later", ErrServerMemory), http.StatusServiceUnavailable, "server_memory"},
	} {
		ae := statusOf(c.err)
		if ae.Status != c.status || ae.Error != c.kind {
			t.Errorf("%v: %d %s, want %d %s", c.err, ae.Status, ae.Error, c.status, c.kind)
		}
	}
}
