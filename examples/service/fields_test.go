package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
)

// README: a body that "has an unknown field" is answered 400, and "a key
// given twice in a body takes its last value". encoding/json matches
// field names case-insensitively, so "TXN" or "Txn" is taken as txn: a
// body {"txn": "a", "Txn": "b"} has two distinct keys, and a proxy or
// client log reading "txn" sees transaction a while the service credits
// b. Keys that are not exactly "txn" or "amount" should be refused, and
// nothing stored.
func TestFieldNamesAreExact(t *testing.T) {
	mem := memory.NewSiblings()
	srv := httptest.NewServer(newDefaultService(t, mem))
	defer srv.Close()
	for _, body := range []string{
		`{"TXN": "case-1", "amount": 5}`,
		`{"txn": "case-2", "Amount": 5}`,
		`{"txn": "case-3", "Txn": "case-4", "amount": 5}`,
	} {
		status, b := call(t, srv.URL, "POST", "/accounts/alice/credit", body)
		if status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 (an unknown field); body %s", body, status, b)
		}
	}
	if got := stored(t, mem, "alice"); got != 0 {
		t.Errorf("stored %d after bodies with unknown fields, want 0", got)
	}
}
