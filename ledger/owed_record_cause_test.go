package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// misconfiguredRecords refuses every Put as a store refuses a write it
// can never take (a Cassandra TTL past 2038-01-19 on a 4.x server).
type misconfiguredRecords struct{ *memory.Siblings }

func (misconfiguredRecords) Put(context.Context, string, crdt.ActorID, []byte, store.Token) error {
	return fmt.Errorf("%w: ttl exceeds maximum supported expiration date", crdt.ErrMisconfiguredStore)
}

// TestOwedRecordErrorNamesTheCause: a records store that refuses every
// Put lets a credit land in the counter (its record owed, the call
// ambiguous) and then stops the ledger's writes (crdt.ErrUnavailable)
// until the record is written; each of those errors says why the record
// is not written, so that a store that can never take it is told apart
// from one that is briefly down.
func TestOwedRecordErrorNamesTheCause(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.New(memory.NewSiblings(), "acct", ledger.Options{Actor: "svc", Records: misconfiguredRecords{memory.NewSiblings()}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Credit(ctx, "t1", 5)
	if !errors.Is(err, crdt.ErrAmbiguousWrite) || r.Outcome != tpncounter.Applied || !strings.Contains(err.Error(), "maximum supported expiration date") {
		t.Fatalf("first credit: %+v, %v", r, err)
	}
	for range 2 {
		_, err = l.Credit(ctx, "t2", 5)
		if !errors.Is(err, crdt.ErrUnavailable) || !strings.Contains(err.Error(), "maximum supported expiration date") {
			t.Fatalf("credit after an owed record: %v", err)
		}
	}
	v, err := l.Value(ctx)
	if err != nil || v != 5 {
		t.Fatalf("value %d, %v; want 5", v, err)
	}
}
