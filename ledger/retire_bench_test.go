package ledger

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
)

// retireAccount returns a ledger of key "k" over the memory store, on the
// clock *now, whose state holds the entries of others other actors, each of
// which credited one transaction.
func retireAccount(tb testing.TB, others int, now *time.Time) *Ledger {
	tb.Helper()
	ctx := context.Background()
	st := memory.NewSiblings()
	clock := func() time.Time { return *now }
	for i := range others {
		o, err := New(st, "k", Options{Actor: crdt.ActorID(fmt.Sprintf("other-%04d", i)), RetireAfter: -1, Clock: clock})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := o.Credit(ctx, crdt.TxnID(fmt.Sprintf("o-%04d", i)), 1); err != nil {
			tb.Fatal(err)
		}
	}
	l, err := New(st, "k", Options{Actor: "under-test", Clock: clock})
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// retireVisits credits n new transactions on l, the clock *now moving by
// step before each, and returns how many actors retireIdle visited per
// credit. A credit ran a pass when it left lastPass at the clock's time
// (each credit moves the clock), and a pass visits every live actor of the
// state (tpncounter.Stats.Actors), the same before and after the credits:
// none retires in so short a run. With everyWrite (a broken variant, the
// ledger as it was before passes were scheduled) every credit runs a pass.
func retireVisits(tb testing.TB, l *Ledger, now *time.Time, step time.Duration, n int, everyWrite bool) float64 {
	tb.Helper()
	ctx := context.Background()
	live := func() int { return l.cyc.Local.Stats().Actors }
	passes := 0
	for i := range n {
		*now = now.Add(step)
		if everyWrite {
			l.nextPass = time.Time{}
		}
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("v-%s-%06d", now.Format("150405.000"), i)), 1); err != nil {
			tb.Fatal(err)
		}
		if i == 0 {
			defer func(actors int) {
				if live() != actors {
					tb.Errorf("%d live actors after the credits, %d after the first: visits are miscounted", live(), actors)
				}
			}(live())
		}
		if l.lastPass.Equal(*now) {
			passes++
		}
	}
	return float64(passes*live()) / float64(n)
}

// maxVisitsPerWrite is the most actors a ledger writing once a second may
// visit per write, on average, while it looks for idle actors (after its
// first writes, which date every actor it has not seen: MaxRetirePerWrite
// per pass). With RetireAfter 1 hour a pass is due every 7.5 minutes (450
// writes), so 256 actors cost about 0.6 visits per write; a pass on every
// write costs one visit per actor.
const maxVisitsPerWrite = 1

// retireVisitsCheck returns an error unless a ledger among others other
// actors, writing once a second for 2,000 seconds after 100 unmeasured
// writes, visits at most maxVisitsPerWrite actors per write.
func retireVisitsCheck(t *testing.T, others int, everyWrite bool) error {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	l := retireAccount(t, others, &now)
	retireVisits(t, l, &now, time.Second, 100, everyWrite)
	v := retireVisits(t, l, &now, time.Second, 2000, everyWrite)
	t.Logf("%d other actors, a write a second: %.3f actors visited per write", others, v)
	if v > maxVisitsPerWrite {
		return fmt.Errorf("%d other actors: %.3f actors visited per write, more than %d", others, v, maxVisitsPerWrite)
	}
	return nil
}

// TestRetireVisitsPerWrite checks that looking for idle actors costs a
// write the same whatever the number of actors (32 or 256): the passes
// over them are spaced in time, not run on every write; and that the check
// fails for a ledger that runs a pass on every write.
func TestRetireVisitsPerWrite(t *testing.T) {
	testsize.SkipSequential(t)
	for _, n := range []int{32, 256} {
		t.Run(fmt.Sprintf("others=%d", n), func(t *testing.T) {
			if err := retireVisitsCheck(t, n, false); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("catches/pass-every-write", func(t *testing.T) {
		err := retireVisitsCheck(t, 32, true)
		if err == nil {
			t.Fatal("the check passed a ledger that visits every actor on every write")
		}
		t.Logf("caught: %v", err)
	})
}

// BenchmarkRetireIdle measures a credit of a new transaction over the
// memory store on a ledger among 32 or 256 other actors, each of which
// credited once: with the passes over the actors scheduled ("scheduled"),
// with a pass on every write as before they were ("every-write"), and
// with RetireAfter negative ("off", no pass at all), against a credit on
// an account of its own ("fresh"), all in one process. The clock moves a
// millisecond per credit. It reports visits/op, the actors the passes
// visited per credit.
//
// Run: go test -c -o ledger.test ./ledger && taskset -c 1 ./ledger.test
// -test.run '^$' -test.bench 'RetireIdle' -test.count 5
func BenchmarkRetireIdle(b *testing.B) {
	run := func(b *testing.B, others int, retireAfter time.Duration, everyWrite bool) {
		now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		l := retireAccount(b, others, &now)
		l.opts.RetireAfter = retireAfter
		retireVisits(b, l, &now, time.Millisecond, 100, everyWrite) // every actor dated
		b.ReportAllocs()
		b.ResetTimer()
		v := retireVisits(b, l, &now, time.Millisecond, b.N, everyWrite)
		b.StopTimer()
		b.ReportMetric(v, "visits/op")
	}
	b.Run("fresh", func(b *testing.B) { run(b, 0, DefaultRetireAfter, false) })
	for _, n := range []int{32, 256} {
		b.Run(fmt.Sprintf("others=%d/scheduled", n), func(b *testing.B) { run(b, n, DefaultRetireAfter, false) })
		b.Run(fmt.Sprintf("others=%d/every-write", n), func(b *testing.B) { run(b, n, DefaultRetireAfter, true) })
		b.Run(fmt.Sprintf("others=%d/off", n), func(b *testing.B) { run(b, n, -1, false) })
	}
}
