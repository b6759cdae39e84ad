package balance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// This file runs one account's writer and two mergers as separate
// processes: each stamps its writes from its own clock (store.Mutation
// timestamps, SPEC.md 10.2), which disagree by up to FutureSkew, and a
// retry may stay in flight up to SafetyMargin − 2·FutureSkew, the timing
// assumptions of SPEC.md 9.3. (Accounts in one test process share the
// process's write clock, package internal/stamp, so other tests cannot
// show a merger whose deletes carry a clock behind a writer's.)

type procKey struct{}

// skewStore stamps each process's writes from its own clock, as separate
// processes do, and holds a write when asked.
type skewStore struct {
	*memory.Partitions
	clocks map[string]func() time.Time
	last   map[string]int64
	hold   map[string]bool
	held   [][]store.Mutation
}

func (s *skewStore) Apply(ctx context.Context, muts []store.Mutation) error {
	p, _ := ctx.Value(procKey{}).(string)
	if p == "" {
		return s.Partitions.Apply(ctx, muts)
	}
	ts := max(s.clocks[p]().UnixMicro(), s.last[p]+1)
	s.last[p] = ts + int64(len(muts)) - 1
	out := make([]store.Mutation, len(muts))
	for i, m := range muts {
		m.Timestamp = ts + int64(i)
		out[i] = m
	}
	if s.hold[p] {
		s.hold[p] = false
		s.held = append(s.held, out)
		return fmt.Errorf("held: %w", crdt.ErrAmbiguousWrite)
	}
	return s.Partitions.Apply(ctx, out)
}

// TestRetryUnderClockSkewAndLatency adds x (7) and another update, then
// sends x again (a retry, or x reused with 3) at times across the write
// window (every minute, every 20 s with COUNTERKIT_CASES above 1, and
// around its end), its write landing at once, halfway through or at the
// end of the latency bound, while two mergers whose clocks are FutureSkew apart merge
// every 5 and 7 seconds until the rows are collected (GCGrace). Every
// second the balance must count x once, with one of its amounts. A merge
// may refuse with ErrClockSkew when the other merger's sum row is
// FutureSkew ahead of its clock; nothing else may fail.
func TestRetryUnderClockSkewAndLatency(t *testing.T) {
	testsize.SkipSequential(t)
	o, err := balance.New(memory.NewPartitions(), balance.Options{})
	require.NoError(t, err)
	opts := o.Options()
	fs, lat, w := opts.FutureSkew, opts.SafetyMargin-2*opts.FutureSkew, opts.Window
	sends := []time.Duration{w - time.Second, w, w + fs/2, w + fs}
	step := time.Minute
	if proptest.Scale(1) > 1 {
		step = 20 * time.Second
	}
	for s := time.Duration(0); s < w; s += step {
		sends = append(sends, s)
	}
	runs := 0
	for _, eW := range []time.Duration{-fs / 2, fs / 2} {
		for _, eM := range []time.Duration{-fs / 2, fs / 2} {
			for _, send := range sends {
				for _, l := range []time.Duration{0, lat / 2, lat} {
					for _, reuse := range []bool{false, true} {
						runs++
						if err := runSkew(eW, eM, -eM, send, l, reuse); err != nil {
							t.Fatalf("writer clock %v, merger clocks %v and %v, sent at %v, landing %v later, reused %v: %v", eW, eM, -eM, send, l, reuse, err)
						}
					}
				}
			}
		}
	}
	t.Logf("%d runs", runs)
}

// runSkew runs one schedule of TestRetryUnderClockSkewAndLatency: clock
// offsets eW (writer), eM and eM2 (mergers), the second write sent at
// send and landing lat later.

func runSkew(eW, eM, eM2 time.Duration, send, lat time.Duration, reuse bool) error {
	real := t0
	st := &skewStore{Partitions: memory.NewPartitions(), last: map[string]int64{}, hold: map[string]bool{}}
	st.clocks = map[string]func() time.Time{
		"w":  func() time.Time { return real.Add(eW) },
		"m":  func() time.Time { return real.Add(eM) },
		"m2": func() time.Time { return real.Add(eM2) },
	}
	w, _ := balance.New(st, balance.Options{Clock: st.clocks["w"]})
	m, _ := balance.New(st, balance.Options{Clock: st.clocks["m"]})
	m2, _ := balance.New(st, balance.Options{Clock: st.clocks["m2"]})
	wctx := context.WithValue(context.Background(), procKey{}, "w")
	mctx := context.WithValue(context.Background(), procKey{}, "m")
	m2ctx := context.WithValue(context.Background(), procKey{}, "m2")
	x := timeid.New(st.clocks["w"]())
	other := timeid.New(st.clocks["w"]().Add(-time.Second))
	if err := w.Add(wctx, acct, x, 7); err != nil {
		return err
	}
	if err := w.Add(wctx, acct, other, 100); err != nil {
		return err
	}
	amt := int64(7)
	if reuse {
		amt = 3
	}
	sent, delivered := false, false
	var deliverAt time.Time
	end := t0.Add(12 * time.Minute)
	k := 0
	for real = t0.Add(time.Second); real.Before(end); real = real.Add(time.Second) {
		if !sent && !real.Before(t0.Add(send)) {
			sent = true
			st.hold["w"] = lat > 0
			err := w.Add(wctx, acct, x, amt)
			switch {
			case errors.Is(err, crdt.ErrOutsideWindow):
				st.hold["w"], delivered = false, true // refused: nothing sent
			case err != nil && (lat == 0 || !errors.Is(err, crdt.ErrAmbiguousWrite)):
				return fmt.Errorf("retry: %v", err)
			}
			deliverAt = real.Add(lat)
		}
		if sent && !delivered && len(st.held) > 0 && !real.Before(deliverAt) {
			if err := st.Partitions.Apply(context.Background(), st.held[0]); err != nil {
				return err
			}
			st.held = st.held[:0]
			delivered = true
		}
		k++
		if k%5 == 0 {
			if _, err := m.Merge(mctx, acct); err != nil && !errors.Is(err, balance.ErrClockSkew) {
				return fmt.Errorf("merge at %v: %v", real.Sub(t0), err)
			}
		}
		if k%7 == 3 {
			if _, err := m2.Merge(m2ctx, acct); err != nil && !errors.Is(err, balance.ErrClockSkew) {
				return fmt.Errorf("merge2 at %v: %v", real.Sub(t0), err)
			}
		}
		b, err := m.Balance(mctx, acct)
		if err != nil {
			return err
		}
		if b != 107 && !(reuse && b == 103) {
			rows := storedRows(st.Partitions, acct)
			return fmt.Errorf("at %v: balance %d, rows %v", real.Sub(t0), b, rows)
		}
	}
	b, _ := m.Balance(mctx, acct)
	if b != 107 && !(reuse && b == 103) {
		return fmt.Errorf("final balance %d", b)
	}
	return nil
}
