package observe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/storetest"
)

// recorder keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []observe.Event
}

func (r *recorder) Observe(_ context.Context, e observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) take() []observe.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// The wrappers add no behaviour: a wrapped store passes its shape's
// conformance suite (in the race pass, -short, but sequentialKitChecks).
func TestWrappedStoresPassTheKit(t *testing.T) {
	storetest.RunSiblings(t, func(t *testing.T) store.Siblings {
		skipSequentialKitCheck(t)
		return observe.Siblings(memory.NewSiblings(), &recorder{})
	})
	storetest.RunPartitions(t, func(t *testing.T) store.Partitions {
		skipSequentialKitCheck(t)
		return observe.Partitions(memory.NewPartitions(), &recorder{})
	})
}

// sequentialKitChecks are the store kit's checks (store/storetest) of
// values of store.MaxValue and batches of store.MaxBatch: they run on one
// goroutine (so do the wrappers and the memory stores) and cost most of
// the kit's time under the race detector.
var sequentialKitChecks = []string{"limits", "value-size"}

// skipSequentialKitCheck skips, in the race pass (-short), the check t
// runs when it is one of sequentialKitChecks: the full pass runs it
// without -race. A check makes its store on its goroutine, first thing.
func skipSequentialKitCheck(t *testing.T) {
	if testing.Short() && slices.Contains(sequentialKitChecks, path.Base(t.Name())) {
		t.Skip(testsize.SequentialReason)
	}
}

// Every call is reported once, with its operation, outcome, rows and bytes.
func TestWrappedStoresReport(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	sib := observe.Siblings(memory.NewSiblings(), rec)
	_, tok, err := sib.Fetch(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, sib.Put(ctx, "k", "a", []byte("hello"), tok))
	vals, tok, err := sib.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Len(t, vals, 1)
	del, ok := sib.(store.SiblingDeleter)
	require.True(t, ok, "the memory store deletes, so the wrapper does")
	require.NoError(t, del.Delete(ctx, "k", tok))
	_, _, err = sib.Fetch(ctx, "")
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	type row struct {
		op, outcome string
		rows, bytes int
	}
	var got []row
	for _, e := range rec.take() {
		require.Equal(t, "store.siblings", e.Component)
		require.False(t, e.Start.IsZero())
		require.GreaterOrEqual(t, e.Duration, int64(0))
		require.Equal(t, e.Outcome == observe.OK, e.Err == nil)
		got = append(got, row{e.Op, e.Outcome, e.Rows, e.Bytes})
	}
	require.Equal(t, []row{
		{"fetch", observe.OK, 0, 0}, {"put", observe.OK, 1, 5}, {"fetch", observe.OK, 1, 5},
		{"delete", observe.OK, 0, 0}, {"fetch", observe.Invalid, 0, 0},
	}, got)

	part := observe.Partitions(memory.NewPartitions(), rec)
	muts := []store.Mutation{
		{Partition: "p", Op: store.OpPut, Key: []byte("a"), Value: []byte("12"), Timestamp: 1},
		{Partition: "p", Op: store.OpPut, Key: []byte("b"), Value: []byte("345"), Timestamp: 1},
	}
	require.NoError(t, part.Apply(ctx, muts))
	n := 0
	require.NoError(t, part.Scan(ctx, "p", nil, store.ReadAny, func(store.Row) bool { n++; return false }))
	require.Equal(t, 1, n)
	rows, err := part.Snapshot(ctx, "p", 10, store.ReadAny)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.ErrorIs(t, part.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("c")}}), crdt.ErrInvalidAmount)
	got = nil
	for _, e := range rec.take() {
		require.Equal(t, "store.partitions", e.Component)
		got = append(got, row{e.Op, e.Outcome, e.Rows, e.Bytes})
	}
	require.Equal(t, []row{
		{"apply", observe.OK, 2, 7}, {"scan", observe.OK, 1, 3}, {"snapshot", observe.OK, 2, 7}, {"apply", observe.Invalid, 1, 1},
	}, got)
}

func TestMultiAndLogger(t *testing.T) {
	a, b := &recorder{}, &recorder{}
	var buf bytes.Buffer
	log := observe.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	m := observe.Multi(a, nil, b, log)
	ctx := context.Background()
	m.Observe(ctx, observe.Event{Component: "ledger", Op: "update", Outcome: observe.Applied})
	m.Observe(ctx, observe.Event{Component: "ledger", Op: "update", Outcome: observe.Invalid, Err: crdt.ErrInvalidAmount})
	m.Observe(ctx, observe.Event{Component: "ledger", Op: "update", Outcome: observe.Ambiguous, Err: crdt.ErrAmbiguousWrite, Attempts: 2})
	require.Len(t, a.take(), 3)
	require.Len(t, b.take(), 3)
	out := buf.String()
	require.Equal(t, 1, strings.Count(out, "\n"), "only the failure is a warning: %s", out)
	require.Contains(t, out, "counterkit ledger update")
	require.Contains(t, out, "outcome=ambiguous")
}

func TestOutcomeOf(t *testing.T) {
	for err, want := range map[error]string{
		nil:                      observe.OK,
		crdt.ErrOutsideWindow:    observe.OutsideWindow,
		crdt.ErrExpired:          observe.Expired,
		crdt.ErrAmbiguousWrite:   observe.Ambiguous,
		crdt.ErrUnavailable:      observe.Unavailable,
		context.Canceled:         observe.Canceled,
		context.DeadlineExceeded: observe.Timeout,
		fmt.Errorf("%w: %w", crdt.ErrUnavailable, context.Canceled):    observe.Canceled,
		fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, context.Canceled): observe.Ambiguous,
		// In ErrorType's order, so that outcome and error.type agree: a
		// context that ended is not a window refusal (it was, while
		// error.type said canceled or timeout).
		fmt.Errorf("%w: %w", crdt.ErrOutsideWindow, context.Canceled):    observe.Canceled,
		fmt.Errorf("%w: %w", crdt.ErrExpired, context.DeadlineExceeded):  observe.Timeout,
		fmt.Errorf("%w: %w", crdt.ErrOutsideWindow, crdt.ErrUnavailable): observe.Unavailable,
		// A tally flush whose outcome stays unknown for good: a failure,
		// not a window refusal, named as ErrorType names it.
		fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, crdt.ErrExpired): observe.Ambiguous,
		fmt.Errorf("%w: %w", crdt.ErrExpired, crdt.ErrAmbiguousWrite): observe.Ambiguous,
		crdt.ErrConflictingTransaction:                                observe.Invalid,
		crdt.ErrInvalidConfig:                                         observe.Invalid,
		crdt.ErrInvalidKey:                                            observe.Invalid,
		crdt.ErrCorruptEncoding:                                       observe.Error,
		errors.New("something else"):                                  observe.Error,
	} {
		require.Equal(t, want, observe.OutcomeOf(err), "%v", err)
	}
}

// Each outcome falls in the classes the Logger and the OpenTelemetry
// bridge read: a duplicate, a window refusal, a failure to warn of (any
// error but a refusal or the caller's cancellation).
func TestOutcomeClasses(t *testing.T) {
	type class struct{ duplicate, window, failed bool }
	for outcome, want := range map[string]class{
		observe.OK: {failed: true}, observe.Applied: {failed: true}, observe.Superseded: {failed: true},
		observe.Duplicate: {duplicate: true, failed: true}, observe.DuplicateFolded: {duplicate: true, failed: true},
		observe.OutsideWindow: {window: true}, observe.Expired: {window: true},
		observe.Invalid: {}, observe.Canceled: {},
		observe.Ambiguous: {failed: true}, observe.Unavailable: {failed: true},
		observe.Timeout: {failed: true}, observe.Error: {failed: true},
	} {
		e := observe.Event{Outcome: outcome, Err: errors.New("x")}
		require.Equal(t, want, class{observe.IsDuplicate(outcome), observe.IsWindowRefusal(outcome), e.Failed()}, outcome)
		e.Err = nil
		require.False(t, e.Failed(), "%s without an error", outcome)
	}
}

// Counts names every count that is not zero, once, in its fixed order.
func TestEventCounts(t *testing.T) {
	var got []string
	observe.Event{Attempts: 1, Ambiguous: 2, Refused: 3, Siblings: 4, Conflicts: 5, Folded: 6, Retired: 10, Bytes: 7, Actors: 8, Rows: 9}.
		Counts(func(k string, n int) { got = append(got, fmt.Sprint(k, "=", n)) })
	require.Equal(t, []string{"attempts=1", "ambiguous=2", "refused=3", "siblings=4", "conflicts=5", "folded=6",
		"retired=10", "bytes=7", "actors=8", "rows=9"}, got)
	observe.Event{Lag: time.Second, Component: "store.siblings"}.Counts(func(k string, _ int) { t.Errorf("zero count %s named", k) })
	require.True(t, observe.Event{Component: "store.partitions"}.StoreCall())
	require.False(t, observe.Event{Component: "ledger"}.StoreCall())
}
