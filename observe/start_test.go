package observe_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
)

// scopes is a Starter that records each operation as it begins and ends,
// with the operation it was begun inside (found in the context).
type scopes struct {
	mu   sync.Mutex
	ops  []scope
	seen []observe.Event // events that reached Observe
}

type scope struct {
	id, parent        int
	component, op     string
	system            string
	ended             bool
	outcome, errType  string
	started, finished time.Time
}

type scopeKey struct{}

func (s *scopes) Observe(_ context.Context, e observe.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, e)
}

func (s *scopes) Start(ctx context.Context, e observe.Event) (context.Context, func(observe.Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, _ := ctx.Value(scopeKey{}).(int)
	id := len(s.ops) + 1
	s.ops = append(s.ops, scope{id: id, parent: parent, component: e.Component, op: e.Op, system: e.System, started: e.Start})
	return context.WithValue(ctx, scopeKey{}, id), func(e observe.Event) {
		s.mu.Lock()
		defer s.mu.Unlock()
		sc := &s.ops[id-1]
		sc.ended, sc.outcome, sc.errType = true, e.Outcome, observe.ErrorType(e.Err)
		sc.finished = e.Start.Add(e.Duration)
	}
}

// With no Observer, Start hands back its context and End does nothing,
// without allocating.
func TestStartWithoutObserverIsFree(t *testing.T) {
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, op := observe.Start(ctx, nil, "ledger", "update")
		if c != ctx || op.Observed() {
			t.Fatal("Start changed the context or observes without an Observer")
		}
		op.End(observe.Event{Err: crdt.ErrUnavailable})
	})
	require.Zero(t, allocs)
}

// An Observer that is not a Starter gets one complete Event from End.
func TestEndCompletesTheEvent(t *testing.T) {
	rec := &recorder{}
	before := time.Now()
	ctx, op := observe.Start(context.Background(), rec, "tally", "flush")
	require.Equal(t, context.Background(), ctx)
	require.True(t, op.Observed())
	op.End(observe.Event{Err: fmt.Errorf("lost: %w", crdt.ErrAmbiguousWrite), Attempts: 3, Component: "ignored"})
	op.End(observe.Event{}) // only the first End reports
	got := rec.take()
	require.Len(t, got, 1)
	e := got[0]
	require.Equal(t, "tally", e.Component)
	require.Equal(t, "flush", e.Op)
	require.Equal(t, observe.Ambiguous, e.Outcome)
	require.Equal(t, 3, e.Attempts)
	require.False(t, e.Start.Before(before))
	require.GreaterOrEqual(t, e.Duration, time.Duration(0))

	_, op = observe.Start(context.Background(), rec, "ledger", "update")
	op.End(observe.Event{Outcome: observe.Duplicate}) // a driver's own outcome stands
	require.Equal(t, observe.Duplicate, rec.take()[0].Outcome)
}

// A Starter sees each operation begin, and the store calls made in the
// context Start returned begin inside it; Observe is not called for them.
func TestStarterNestsStoreCalls(t *testing.T) {
	s := &scopes{}
	sib := observe.Siblings(memory.NewSiblings(), s)
	part := observe.Partitions(memory.NewPartitions(), s)
	ctx, op := observe.Start(context.Background(), s, "ledger", "update")
	_, tok, err := sib.Fetch(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, sib.Put(ctx, "k", "a", []byte("v"), tok))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, part.Apply(canceled, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("a"), Value: []byte("1"), Timestamp: 1}}), context.Canceled)
	op.End(observe.Event{Outcome: observe.Applied})
	_, _, err = sib.Fetch(context.Background(), "k") // outside any operation
	require.NoError(t, err)

	require.Empty(t, s.seen)
	type row struct {
		id, parent                           int
		component, op, system, outcome, errT string
	}
	var got []row
	for _, sc := range s.ops {
		require.True(t, sc.ended, "scope %d not ended", sc.id)
		require.False(t, sc.finished.Before(sc.started))
		got = append(got, row{sc.id, sc.parent, sc.component, sc.op, sc.system, sc.outcome, sc.errType})
	}
	require.Equal(t, []row{
		{1, 0, "ledger", "update", "", observe.Applied, ""},
		{2, 1, "store.siblings", "fetch", "memory", observe.OK, ""},
		{3, 1, "store.siblings", "put", "memory", observe.OK, ""},
		{4, 1, "store.partitions", "apply", "memory", observe.Canceled, "canceled"},
		{5, 0, "store.siblings", "fetch", "memory", observe.OK, ""},
	}, got)
}

// Multi starts every Starter it holds, each inside the previous one's
// context, and ends them all; the others get Observe.
func TestMultiStarts(t *testing.T) {
	a, b, plain := &scopes{}, &scopes{}, &recorder{}
	m := observe.Multi(a, nil, plain, b)
	_, isStarter := m.(observe.Starter)
	require.True(t, isStarter)
	ctx, op := observe.Start(context.Background(), m, "deltalog", "add")
	require.Equal(t, 1, ctx.Value(scopeKey{}))
	op.End(observe.Event{})
	for _, s := range []*scopes{a, b} {
		require.Len(t, s.ops, 1)
		require.True(t, s.ops[0].ended)
		require.Equal(t, observe.OK, s.ops[0].outcome)
	}
	require.Equal(t, 0, a.ops[0].parent)
	require.Equal(t, 1, b.ops[0].parent, "b's scope begins inside a's")
	got := plain.take()
	require.Len(t, got, 1)
	require.Equal(t, "deltalog", got[0].Component)
	require.Equal(t, "add", got[0].Op)
}

type typedErr struct{}

func (typedErr) Error() string     { return "typed" }
func (typedErr) ErrorType() string { return "throttled" }

func TestErrorType(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                      "",
		crdt.ErrAmbiguousWrite:                   "ambiguous_write",
		fmt.Errorf("w: %w", crdt.ErrUnavailable): "unavailable",
		context.Canceled:                         "canceled",
		context.DeadlineExceeded:                 "timeout",
		fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, context.DeadlineExceeded): "ambiguous_write",
		fmt.Errorf("%w: %w", crdt.ErrUnavailable, context.Canceled):            "canceled",
		crdt.ErrInvalidKey:                                    "invalid_key",
		crdt.ErrInvalidIdentifier:                             "invalid_identifier",
		crdt.ErrInvalidAmount:                                 "invalid_amount",
		crdt.ErrOutsideWindow:                                 "outside_window",
		crdt.ErrCorruptEncoding:                               "corrupt_encoding",
		crdt.ErrInsufficientRights:                            "insufficient_rights",
		fmt.Errorf("x: %w", typedErr{}):                       "throttled",
		fmt.Errorf("%w: %w", crdt.ErrUnavailable, typedErr{}): "unavailable",
		errors.New("something else"):                          observe.OtherError,
	} {
		require.Equal(t, want, observe.ErrorType(err), "%v", err)
	}
}

// ErrorSummary keeps the sentinel's text and drops what the error says
// of the call (its key, id, amount).
func TestErrorSummary(t *testing.T) {
	require.Equal(t, "", observe.ErrorSummary(nil))
	require.Equal(t, crdt.ErrOutsideWindow.Error(), observe.ErrorSummary(fmt.Errorf("deltalog %q: id 42: %w", "jane@example.com", crdt.ErrOutsideWindow)))
	require.Equal(t, crdt.ErrAmbiguousWrite.Error(), observe.ErrorSummary(fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, context.DeadlineExceeded)))
	require.Equal(t, "throttled", observe.ErrorSummary(fmt.Errorf("key k: %w", typedErr{})))
	require.Equal(t, observe.OtherError, observe.ErrorSummary(errors.New("key k: something else")))
}

type namedStore struct{ store.Siblings }

func (namedStore) System() string { return "acme" }

func TestSystemOf(t *testing.T) {
	require.Equal(t, "memory", observe.SystemOf(memory.NewSiblings()))
	require.Equal(t, "memory", observe.SystemOf(memory.NewPartitions()))
	require.Equal(t, "acme", observe.SystemOf(namedStore{memory.NewSiblings()}))
	require.Equal(t, "", observe.SystemOf(&recorder{}))
	require.Equal(t, "", observe.SystemOf(nil))
}
