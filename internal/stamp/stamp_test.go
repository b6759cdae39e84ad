package stamp

import (
	"testing"
	"time"
)

func TestReserveIsStrictlyIncreasing(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Reserve(now, 3)
	if a < now.UnixMicro() {
		t.Fatalf("Reserve(now) = %d, below now %d", a, now.UnixMicro())
	}
	b := Reserve(now, 1)
	if b != a+3 {
		t.Fatalf("after a reservation of 3 at %d, got %d, want %d", a, b, a+3)
	}
	if c := Reserve(now.Add(-time.Hour), 1); c != b+1 {
		t.Fatalf("a clock stepping back got %d, want %d", c, b+1)
	}
	later := now.Add(time.Hour)
	if d := Reserve(later, 1); d != later.UnixMicro() {
		t.Fatalf("a clock ahead got %d, want its reading %d", d, later.UnixMicro())
	}
	if e := Reserve(time.Unix(0, 0), 1); e <= 0 {
		t.Fatalf("timestamps are positive, got %d", e)
	}
}
