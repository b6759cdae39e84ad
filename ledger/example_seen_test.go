package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// Sightings are what the ledgers of a key store under its SeenKey: here a
// writer credits once and its record is deleted (as a records store's TTL
// would), so no record dates it; a new process a minute later finds its
// entry and stores when it first saw it, which a tool reads back.
func ExampleSightings() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	opts := ledger.Options{Actor: "svc", Clock: func() time.Time { return now }}
	st := memory.NewSiblings()
	first, _ := ledger.New(st, "acct", opts)
	_, _ = first.Credit(ctx, "pay-1", 10)
	rec := ledger.RecordKey("acct", "pay-1")
	_, token, _ := st.Fetch(ctx, rec)
	_ = st.Delete(ctx, rec, token)

	now = now.Add(time.Minute)
	next, _ := ledger.New(st, "acct", opts)
	_, _ = next.Credit(ctx, "pay-2", 5)

	values, _, err := st.Fetch(ctx, ledger.SeenKey("acct"))
	var seen ledger.Sightings
	if err == nil && len(values) == 1 {
		err = seen.UnmarshalBinary(values[0])
	}
	for _, s := range seen {
		fmt.Printf("first writer: %v, version %d, seen at %s\n", s.Writer == first.Writer(), s.Version, s.At.Format(time.TimeOnly))
	}
	fmt.Println(err)
	// Output:
	// first writer: true, version 1, seen at 12:01:00
	// <nil>
}

// A Sighting says a ledger saw Writer's entry at Version, which no record
// dated, at At; encoded, sightings are sorted by writer, then version, and
// one no ledger makes (here version 0) is refused.
func ExampleSighting() {
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	b, err := ledger.Sightings{
		{Writer: "svc~bbbbbbbb", Version: 2, At: at},
		{Writer: "svc~aaaaaaaa", Version: 7, At: at.Add(time.Hour)},
	}.MarshalBinary()
	var back ledger.Sightings
	if err == nil {
		err = back.UnmarshalBinary(b)
	}
	for _, s := range back {
		fmt.Println(s.Writer, s.Version, s.At.Format(time.TimeOnly))
	}
	_, err = ledger.Sightings{{Writer: "svc~cccccccc", At: at}}.MarshalBinary()
	fmt.Println(errors.Is(err, crdt.ErrInvalidAmount))
	// Output:
	// svc~aaaaaaaa 7 13:00:00
	// svc~bbbbbbbb 2 12:00:00
	// true
}
