package timeid_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/timeid"
)

// Client-chosen time-based ids and their Cassandra order.
func ExampleID() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	a := timeid.FromParts(t, 1, 0xabc)
	b := timeid.FromParts(t.Add(time.Millisecond), 0, 0)
	p, _ := timeid.Parse(a.String())
	fmt.Println(a, a.Time().Format(time.RFC3339), a.Compare(b), p == a)
	// Output: b4cc8000-a838-11ee-8001-000000000abc 2024-01-01T00:00:00Z -1 true
}

// The ascending encoding orders as Compare, the descending one in reverse.
func ExampleAppendAscending() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	a := timeid.FromParts(t, 0x0001, 0) // equal timestamps: 0x01 > 0xff as a signed byte
	b := timeid.FromParts(t, 0x00ff, 0)
	fmt.Println(a.Compare(b),
		bytes.Compare(timeid.AppendAscending(nil, a), timeid.AppendAscending(nil, b)),
		bytes.Compare(timeid.AppendDescending(nil, a), timeid.AppendDescending(nil, b)))
	id, err := timeid.DecodeDescending(timeid.AppendDescending(nil, a))
	fmt.Println(id == a, err)
	// Output:
	// 1 1 -1
	// true <nil>
}
