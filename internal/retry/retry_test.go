package retry

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

func TestLimit(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		initial, max time.Duration
		attempt      int
		want         time.Duration
	}{
		{10 * ms, time.Second, 1, 10 * ms},
		{10 * ms, time.Second, 2, 20 * ms},
		{10 * ms, time.Second, 4, 80 * ms},
		{10 * ms, 50 * ms, 4, 50 * ms},
		{10 * ms, time.Second, 100, time.Second},
		{-1, time.Second, 3, 0},
	} {
		if got := Limit(tc.initial, tc.max, tc.attempt); got != tc.want {
			t.Errorf("Limit(%v, %v, %d) = %v, want %v", tc.initial, tc.max, tc.attempt, got, tc.want)
		}
	}
}

func TestWait(t *testing.T) {
	if err := Wait(context.Background(), -1, time.Hour, 1); err != nil {
		t.Fatal(err)
	}
	if err := Wait(context.Background(), time.Microsecond, time.Microsecond, 3); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, time.Hour, time.Hour, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := Wait(ctx, time.Hour, time.Hour, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v, want the deadline (a wait ends with its context)", err)
	}
}

func TestNewWriter(t *testing.T) {
	a, b := NewWriter("svc"), NewWriter("svc")
	re := regexp.MustCompile(`^svc~[a-z2-7]{8}$`)
	if !re.MatchString(string(a)) || !re.MatchString(string(b)) {
		t.Fatalf("%q, %q: want svc~ and %d base32 characters", a, b, IncarnationLen)
	}
	if a == b {
		t.Fatalf("two incarnations share the id %q", a)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestNextWriter(t *testing.T) {
	for _, tc := range []struct{ prev, want string }{
		{"svc~aaaaaaaa", "svc~aaaaaaab"},
		{"svc~aaaaaaa7", "svc~aaaaaaaa"},
		{"svc~aaaaaaaz", "svc~aaaaaab2"},
		{"svc~2zzzzzzz", "svc~32222222"},
		{"svc~7zzzzzzz", "svc~a2222222"},
	} {
		got := NextWriter("svc", crdt.ActorID(tc.prev))
		if string(got) != tc.want || got <= crdt.ActorID(tc.prev) {
			t.Errorf("NextWriter(%q) = %q, want %q, after it", tc.prev, got, tc.want)
		}
	}
	re := regexp.MustCompile(`^svc~[a-z2-7]{8}$`)
	for _, prev := range []crdt.ActorID{"svc~zzzzzzzz", "other~aaaaaaaa", "svc~aaaa", "svc~aaaaaa1a", NewWriter("svc")} {
		if got := NextWriter("svc", prev); !re.MatchString(string(got)) || got == prev {
			t.Errorf("NextWriter(%q) = %q, want a new incarnation of svc", prev, got)
		}
	}
}

func TestAgain(t *testing.T) {
	ctx := context.Background()
	failed := errors.New("refused")
	if err := Again(ctx, "w", failed, 1, 1, -1, 0); err != nil {
		t.Fatalf("attempt 1 of 1 + 1: %v, want another attempt", err)
	}
	err := Again(ctx, `ledger "k": put`, failed, 2, 1, -1, 0)
	if !errors.Is(err, failed) || err.Error() != `ledger "k": put failed after 2 attempts: refused` {
		t.Fatalf("past the budget: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	err = Again(done, "w", failed, 1, 3, time.Hour, time.Hour)
	if !errors.Is(err, failed) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a context ending in the wait: %v, want both errors", err)
	}
}
