package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
)

// TestRepeatedKeyEndingInNullIsRefused: a key given twice takes its last
// value, but encoding/json leaves a field as it was when that value is
// null, so the service took the earlier one and credited 7 where a reader
// taking the last value (a proxy, a log) sees no amount or no txn. A
// null value is refused (400) and nothing is stored.
func TestRepeatedKeyEndingInNullIsRefused(t *testing.T) {
	mem := memory.NewSiblings()
	srv := httptest.NewServer(newDefaultService(t, mem))
	defer srv.Close()
	for _, body := range []string{
		`{"txn": "null-1", "amount": 7, "amount": null}`,
		`{"txn": "null-2", "amount": 7, "txn": null}`,
		`{"txn": null, "amount": 7}`,
	} {
		status, b := call(t, srv.URL, "POST", "/accounts/alice/credit", body)
		if status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400; body %s", body, status, b)
		}
	}
	if got := stored(t, mem, "alice"); got != 0 {
		t.Errorf("stored %d, want 0", got)
	}
}
