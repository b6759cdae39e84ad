package rowlog

import (
	"errors"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/timeid"
)

func TestCheckTimingBounds(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		window, skew, margin time.Duration
		others               []time.Duration
		want                 error
	}{
		{time.Minute, s, 3 * s, nil, nil},
		{time.Minute, s, 2*s + 1, []time.Duration{0}, nil},
		{time.Minute, s, 2 * s, nil, crdt.ErrInvalidConfig}, // must exceed 2·skew
		{-1, s, 3 * s, nil, crdt.ErrInvalidConfig},
		{time.Minute, s, 3 * s, []time.Duration{time.Hour, -1}, crdt.ErrInvalidConfig},
	} {
		if err := CheckTiming(struct{}{}, c.window, c.skew, c.margin, c.others...); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckTiming(%v, %v, %v, %v) = %v, want %v", c.window, c.skew, c.margin, c.others, err, c.want)
		}
	}
}

func TestInWindowBoundsAreInclusive(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		at   time.Time
		want error
	}{
		{now.Add(-time.Minute), nil},
		{now.Add(time.Second), nil},
		{now.Add(-time.Minute - time.Microsecond), crdt.ErrOutsideWindow},
		{now.Add(time.Second + time.Microsecond), crdt.ErrOutsideWindow},
	} {
		if err := InWindow(timeid.New(c.at), now, time.Minute, time.Second); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("InWindow(%v) = %v, want %v", c.at, err, c.want)
		}
	}
	if err := InWindow(timeid.ID{}, now, time.Minute, time.Second); !errors.Is(err, crdt.ErrInvalidTxnID) {
		t.Errorf("InWindow(zero id) = %v, want crdt.ErrInvalidTxnID", err)
	}
}

func TestSeenRepeats(t *testing.T) {
	id := timeid.New(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	s := Seen{}
	for i, c := range []struct {
		partition string
		amount    int64
		repeat    bool
		err       error
	}{
		{"a", 5, false, nil},
		{"a", 5, true, nil},
		{"b", 7, false, nil}, // another partition, the same id
		{"a", 6, true, crdt.ErrConflictingTransaction},
	} {
		repeat, err := s.Repeat(c.partition, id, c.amount)
		if repeat != c.repeat || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("update %d: Repeat = %v, %v; want %v, %v", i, repeat, err, c.repeat, c.err)
		}
	}
	var none Seen
	for range 2 {
		if repeat, err := none.Repeat("a", id, 1); repeat || err != nil {
			t.Errorf("nil Seen: Repeat = %v, %v; want false, nil", repeat, err)
		}
	}
}
