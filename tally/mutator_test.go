package tally_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/crdt/crdttest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// ids returns a NewID that yields m1, m2, ...
func ids() func() crdt.ActorID {
	var mu sync.Mutex
	n := 0
	return func() crdt.ActorID {
		mu.Lock()
		defer mu.Unlock()
		n++
		return crdt.ActorID(fmt.Sprintf("m%d", n))
	}
}

type fixture struct {
	store *recorder
	clock *fakeClock
	c     *tally.Counter[*tally.Sum]
	cfg   tally.Options
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{store: newRecorder(memory.NewPartitions(), faulty.Options{}), clock: newClock()}
	f.cfg = tally.Options{Lifetime: 24 * time.Hour, Margin: time.Hour, MaxSkew: time.Hour, Grace: 3 * time.Hour,
		Clock: f.clock.Now, NewID: ids()}
	var err error
	f.c, err = tally.New[*tally.Sum](f.store, "views", f.cfg)
	require.NoError(t, err)
	return f
}

func (f *fixture) mutator(t *testing.T) *tally.Mutator[*tally.Sum] {
	m, err := f.c.NewMutator()
	require.NoError(t, err)
	return m
}

func (f *fixture) value(t *testing.T) int64 {
	v, err := f.c.ReadComplete(context.Background())
	require.NoError(t, err)
	return v.Value()
}

func add(n int64) func(*tally.Sum) error { return func(s *tally.Sum) error { return s.Add(n) } }

func TestUpdateCostsOneWriteNoRead(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, add(1)))
	// calls() is {snapshots, applies}.
	require.Equal(t, [2]int64{0, 1}, f.store.calls())

	f.store.resetCalls()
	for range 100 {
		require.NoError(t, m.Stage(add(1)))
	}
	require.NoError(t, m.Flush(ctx))
	require.Equal(t, [2]int64{0, 1}, f.store.calls(), "100 staged increments, one write")

	f.store.resetCalls()
	require.NoError(t, m.Flush(ctx))
	require.Equal(t, [2]int64{}, f.store.calls(), "nothing staged, nothing written")

	require.Equal(t, int64(101), f.value(t))
	require.Equal(t, [2]int64{1, 0}, f.store.calls(), "a read is one store read")

	f.store.resetCalls()
	f.clock.Advance(f.cfg.Lifetime + f.cfg.Grace + time.Second)
	var batches [][]store.Mutation
	f.store.SetPolicy(func(c faulty.Call) faulty.Fault {
		if muts, _ := f.store.current(); c.Method == faulty.MethodApply {
			batches = append(batches, muts)
		}
		return faulty.Pass
	})
	plan, err := f.c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, plan.Folded)
	require.Equal(t, [2]int64{1, 1}, f.store.calls(), "GC is one complete read and one batch")
	require.Equal(t, [][]store.Mutation{plan.Batch.Mutations("views")}, batches, "the batch: the tally put and the shard delete")
	require.Len(t, batches[0], 2)
}

func TestAmbiguousLandedThenRetryCountsOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, add(10)))

	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts, faulty.LoseAck, faulty.LoseAck, faulty.LoseAck))
	err := m.Update(ctx, add(5))
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, m.Unresolved())
	require.Len(t, ts, 3, "one attempt and two resends")
	require.Equal(t, ts[0], ts[1], "a resend reuses the write timestamp")
	require.Equal(t, ts[0], ts[2])

	// The caller's natural retry, Update again, is refused.
	require.ErrorIs(t, m.Update(ctx, add(5)), tally.ErrUnresolved)
	require.ErrorIs(t, m.Stage(add(5)), crdt.ErrAmbiguousWrite)

	require.NoError(t, m.Retry(ctx))
	require.False(t, m.Unresolved())
	require.Equal(t, ts[0], ts[3], "Retry resends at the same timestamp")
	require.Equal(t, int64(15), f.value(t), "landed three times, retried once: counted once")
	require.NoError(t, m.Update(ctx, add(1)))
	require.Equal(t, int64(16), f.value(t))
	require.Greater(t, ts[4], ts[3])
}

func TestLibraryResendSucceeds(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts, faulty.LoseAck))
	require.NoError(t, m.Update(ctx, add(7)), "the resend succeeds, so the caller sees success")
	require.Equal(t, []int64{ts[0], ts[0]}, ts)
	require.Equal(t, int64(7), f.value(t))
}

func TestAbandonUncountsEvenWhenTheWriteLandsLate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, add(3)))
	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts, faulty.LoseAck, faulty.Hold, faulty.Hold))
	require.ErrorIs(t, m.Update(ctx, add(100)), crdt.ErrAmbiguousWrite)
	require.Equal(t, int64(103), f.value(t), "the first attempt landed")

	require.NoError(t, m.Abandon(ctx))
	require.Greater(t, ts[3], ts[0], "Abandon writes above the abandoned timestamp")
	require.Equal(t, int64(3), f.value(t))
	require.Equal(t, 2, f.store.Held())
	require.NoError(t, f.store.DeliverAll())
	require.Equal(t, int64(3), f.value(t), "late copies of the abandoned write lose under LWW")

	require.NoError(t, m.Update(ctx, add(1)), "the mutator accepts updates again, from the committed state")
	require.Equal(t, int64(4), f.value(t))
}

func TestAbandonWithoutCommittedStateWritesIdentity(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts, faulty.LoseAck, faulty.LoseAck, faulty.LoseAck))
	require.ErrorIs(t, m.Update(ctx, add(9)), crdt.ErrAmbiguousWrite)
	require.Equal(t, int64(9), f.value(t))
	require.NoError(t, m.Abandon(ctx))
	require.Equal(t, int64(0), f.value(t))
}

func TestFailedAbandonThenRetry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	var ts []int64
	lost := []faulty.Fault{faulty.Lose, faulty.Lose, faulty.Lose}
	f.store.SetPolicy(f.store.shardFaults(&ts, append(append([]faulty.Fault{}, lost...), faulty.LoseAck, faulty.LoseAck, faulty.LoseAck)...))
	require.ErrorIs(t, m.Update(ctx, add(4)), crdt.ErrAmbiguousWrite) // lost ×3
	require.ErrorIs(t, m.Abandon(ctx), crdt.ErrAmbiguousWrite)        // landed ×3, unacknowledged
	require.True(t, m.Unresolved())
	require.NoError(t, m.Retry(ctx))
	require.Greater(t, ts[6], ts[3], "after an Abandon attempt, Retry must write above it")
	require.Equal(t, int64(4), f.value(t))
}

func TestDefiniteFailureDiscardsStaged(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, add(1)))
	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts, faulty.Refuse, faulty.Refuse, faulty.Refuse))
	require.NoError(t, m.Stage(add(5)))
	err := m.Update(ctx, add(5))
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.False(t, m.Unresolved())
	// The caller re-applies both updates.
	require.NoError(t, m.Update(ctx, add(10)))
	require.Equal(t, int64(11), f.value(t))
}

// TestRefusedForWhatItIsIsDefinite: a write the store refuses for what it
// is (crdt.ErrTooLarge) is sent once and is not in doubt: the flush's
// updates are discarded, as for a refusal, and nothing stays unresolved.
func TestRefusedForWhatItIsIsDefinite(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, add(1)))
	before := f.store.calls()[1]
	f.store.SetHook(func(_ context.Context, c faulty.Call, after bool) error {
		if !after && c.Method == faulty.MethodApply {
			return fmt.Errorf("%w: refused by the store", crdt.ErrTooLarge)
		}
		return nil
	})
	err := m.Update(ctx, add(5))
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.False(t, m.Unresolved())
	require.Equal(t, before+1, f.store.calls()[1], "not sent again")
	f.store.SetHook(nil)
	require.NoError(t, m.Update(ctx, add(10)))
	require.Equal(t, int64(11), f.value(t))
}

func TestMixedFailuresAreAmbiguous(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts, faulty.LoseAck, faulty.Refuse, faulty.Refuse))
	require.ErrorIs(t, m.Update(ctx, add(2)), crdt.ErrAmbiguousWrite, "one attempt may have landed")
	require.NoError(t, m.Retry(ctx))
	require.Equal(t, int64(2), f.value(t))
}

func TestRejectedUpdateLeavesStateUnchanged(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, add(math.MaxInt64-1)))
	require.ErrorIs(t, m.Update(ctx, add(2)), crdt.ErrOverflow)
	require.NoError(t, m.Update(ctx, add(1)))
	require.Equal(t, int64(math.MaxInt64), f.value(t))
}

func TestExpiry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.True(t, f.clock.Now().Add(24*time.Hour).Equal(m.ExpiresAt()))
	require.NoError(t, m.Update(ctx, add(1)))
	require.NoError(t, m.Stage(add(1)))
	f.clock.Advance(23*time.Hour - time.Microsecond)
	require.NoError(t, m.Stage(add(1)), "just before the margin")
	f.clock.Advance(time.Microsecond)
	require.ErrorIs(t, m.Flush(ctx), crdt.ErrExpired, "at the margin")
	require.ErrorIs(t, m.Update(ctx, add(1)), crdt.ErrExpired, "dead for good")
	require.Equal(t, int64(1), f.value(t), "the staged updates were discarded")

	m2 := f.mutator(t)
	require.NotEqual(t, m.ID(), m2.ID())
	require.NoError(t, m2.Update(ctx, add(2)))
	require.Equal(t, int64(3), f.value(t))
}

func TestUnresolvedPastExpiryStaysUnknown(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts, faulty.Lose, faulty.Lose, faulty.Lose))
	require.ErrorIs(t, m.Update(ctx, add(1)), crdt.ErrAmbiguousWrite)
	f.clock.Advance(24 * time.Hour)
	for _, err := range []error{m.Retry(ctx), m.Abandon(ctx)} {
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		require.ErrorIs(t, err, crdt.ErrExpired)
	}
	require.Len(t, ts, 3, "nothing is sent after expires_at")
}

func TestWriteTimestampsMonotonicBelowExpiry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var ts []int64
	f.store.SetPolicy(f.store.shardFaults(&ts))
	m := f.mutator(t)
	for i := range 50 {
		require.NoError(t, m.Update(ctx, add(1)))
		if i%10 == 0 {
			f.clock.Advance(-time.Hour) // the clock steps back
		} else {
			f.clock.Advance(time.Minute)
		}
	}
	for i := 1; i < len(ts); i++ {
		require.Greater(t, ts[i], ts[i-1])
	}
	require.Less(t, ts[len(ts)-1], m.ExpiresAt().UnixMicro())
}

func TestConfigAndKeyValidation(t *testing.T) {
	s := memory.NewPartitions()
	bad := []tally.Options{
		{MaxSkew: 2 * time.Hour, Grace: 5 * time.Hour},
		{Lifetime: time.Hour, Margin: time.Hour},
		{Lifetime: -time.Hour},
		{Lifetime: time.Hour + time.Nanosecond},
		{MaxRows: -1},
	}
	for _, cfg := range bad {
		_, err := tally.New[*tally.Sum](s, "k", cfg)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%+v", cfg)
	}
	_, err := tally.New[*tally.Sum](nil, "k", tally.Options{})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	c, err := tally.New[*tally.Sum](s, "k", tally.Options{NewID: func() crdt.ActorID { return "" }})
	require.NoError(t, err)
	_, err = c.NewMutator()
	require.ErrorIs(t, err, crdt.ErrInvalidActor)

	c, err = tally.New[*tally.Sum](s, "k", tally.Options{})
	require.NoError(t, err)
	m1, err := c.NewMutator()
	require.NoError(t, err)
	m2, err := c.NewMutator()
	require.NoError(t, err)
	require.NotEqual(t, m1.ID(), m2.ID(), "default ids are random UUIDs")
}

// TestNewMutatorRefusesAClockNoShardCarries: a clock whose now + Lifetime
// is not after 1970, or past int64 microseconds, gives an expires_at no
// shard encodes; NewMutator refuses it with crdt.ErrInvalidConfig (a
// flush failed with crdt.ErrCorruptEncoding, or the mutator was expired
// at birth after its expires_at wrapped around). A clock before 1970
// whose expires_at is after it writes and reads.
func TestNewMutatorRefusesAClockNoShardCarries(t *testing.T) {
	ctx := context.Background()
	const life = 24 * time.Hour
	epoch := time.UnixMicro(0)
	for name, tc := range map[string]struct {
		at time.Time
		ok bool
	}{
		"year 1":                    {time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), false},
		"expires at 1970":           {epoch.Add(-life), false},
		"1969":                      {epoch.Add(-time.Hour), true},
		"expires at the last µs":    {time.UnixMicro(math.MaxInt64).Add(-life), true},
		"expires after the last µs": {time.UnixMicro(math.MaxInt64).Add(-life + time.Microsecond), false},
		"year 300000":               {time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := tally.New[*tally.Sum](memory.NewPartitions(), "k", tally.Options{Lifetime: life, Margin: time.Microsecond,
				Clock: func() time.Time { return tc.at }})
			require.NoError(t, err)
			m, err := c.NewMutator()
			if !tc.ok {
				require.ErrorIs(t, err, crdt.ErrInvalidConfig)
				return
			}
			require.NoError(t, err)
			require.NoError(t, m.Update(ctx, add(5)))
			v, err := c.Read(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(5), v.Value())
		})
	}
}

// TestNewRefusesInvalidKeys: New refuses a key that breaks
// crdt.ValidateKey with ErrInvalidKey (crdt.ErrInvalidKey), and accepts one
// of MaxKeyLen bytes.
func TestNewRefusesInvalidKeys(t *testing.T) {
	s := memory.NewPartitions()
	require.Equal(t, crdt.MaxKeyLen, tally.MaxKeyLen)
	for name, key := range crdttest.InvalidKeys() {
		c, err := tally.New[*tally.Sum](s, key, tally.Options{})
		require.Nil(t, c, name)
		require.ErrorIs(t, err, tally.ErrInvalidKey, name)
		require.ErrorIs(t, err, crdt.ErrInvalidKey, name)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, name)
		require.ErrorContains(t, err, crdt.CheckID(key), "%s: the error gives the reason", name)
	}
	c, err := tally.New[*tally.Sum](s, strings.Repeat("k", tally.MaxKeyLen), tally.Options{})
	require.NoError(t, err)
	_, err = c.ReadComplete(context.Background())
	require.NoError(t, err)
}

// putRow writes one raw row into counter key's partition.
func putRow(t *testing.T, s store.Partitions, key string, row []byte, value []byte, ts int64) {
	t.Helper()
	require.NoError(t, s.Apply(context.Background(), []store.Mutation{{Partition: key, Op: store.OpPut, Key: row, Value: value, Timestamp: ts}}))
}

func TestReadRejectsCorruptRows(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	putRow(t, f.store, "views", tally.ShardRowKey("x"), []byte{1, 2, 3}, 1)
	_, err := f.c.ReadComplete(ctx)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, err = f.c.GC(ctx)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "GC never deletes what it cannot read")

	g := newFixture(t)
	b, err := tally.Shard[*tally.Sum]{Mutator: "a", ExpiresAt: exp0, State: sumOf(t, 1)}.MarshalBinary()
	require.NoError(t, err)
	putRow(t, g.store, "views", tally.ShardRowKey("b"), b, 1)
	_, err = g.c.ReadComplete(ctx)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "a row holding another mutator's shard")

	h := newFixture(t)
	mx, err := tally.Shard[*tally.Max]{Mutator: "a", ExpiresAt: exp0, State: new(tally.Max)}.MarshalBinary()
	require.NoError(t, err)
	putRow(t, h.store, "views", tally.ShardRowKey("a"), mx, 1)
	_, err = h.c.ReadComplete(ctx)
	require.ErrorIs(t, err, crdt.ErrTypeMismatch, "a shard of another aggregate kind")

	// Row keys outside the layout, and a tally row that does not decode.
	good, err := tally.Tally[*tally.Sum]{State: sumOf(t, 1)}.MarshalBinary()
	require.NoError(t, err)
	for name, row := range map[string]struct {
		key, value []byte
		want       error
	}{
		"unknown prefix":        {[]byte("xm"), b, crdt.ErrCorruptEncoding},
		"shard key without id":  {[]byte("s"), b, crdt.ErrCorruptEncoding},
		"shard key, invalid id": {[]byte("s\x00"), b, crdt.ErrCorruptEncoding},
		"tally key with suffix": {[]byte("tt"), good, crdt.ErrCorruptEncoding},
		"empty key":             {[]byte{}, b, crdt.ErrCorruptEncoding},
		"tally does not decode": {[]byte(tally.TallyRowKey), []byte{1, 2, 3}, crdt.ErrCorruptEncoding},
		"tally row of a shard":  {[]byte(tally.TallyRowKey), b, crdt.ErrTypeMismatch},
	} {
		k := newFixture(t)
		putRow(t, k.store, "views", row.key, row.value, 1)
		_, err := k.c.ReadComplete(ctx)
		require.ErrorIs(t, err, row.want, name)
		_, err = k.c.Read(ctx)
		require.ErrorIs(t, err, row.want, name)
		_, err = k.c.GC(ctx)
		require.ErrorIs(t, err, row.want, name)
	}
}

// TestReadRefusesTooManyRows: a partition over Options.MaxRows is refused
// with crdt.ErrTooLarge, by reads and GC alike.
func TestReadRefusesTooManyRows(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	cfg := f.cfg
	cfg.MaxRows = 3
	c, err := tally.New[*tally.Sum](f.store, "views", cfg)
	require.NoError(t, err)
	for range 3 {
		m, err := c.NewMutator()
		require.NoError(t, err)
		require.NoError(t, m.Update(ctx, add(1)))
	}
	v, err := c.ReadComplete(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), v.Value())
	m, err := c.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Update(ctx, add(1)), "writes never read, so they still work")
	_, err = c.Read(ctx)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	_, err = c.GC(ctx)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.Equal(t, int64(4), f.value(t), "the default limit reads them")
}

// staleView is a store whose snapshots return a fixed set of rows, to show
// a reader that sees the new tally next to an old copy of a folded shard.
type staleView struct {
	store.Partitions
	rows []store.Row
}

func (s staleView) Snapshot(context.Context, string, int, store.Read) ([]store.Row, error) {
	return s.rows, nil
}

func TestGCFoldsFinalShardsOnly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	old := f.mutator(t)
	require.NoError(t, old.Update(ctx, add(5)))
	f.clock.Advance(10 * time.Hour)
	young := f.mutator(t)
	require.NoError(t, young.Update(ctx, add(7)))

	// old expires at +24h; GC may fold it only after +24h+grace.
	f.clock.Advance(14*time.Hour + 3*time.Hour) // now = +27h = old's expiry + grace
	plan, err := f.c.GC(ctx)
	require.NoError(t, err)
	require.True(t, plan.Empty(), "expires_at must be strictly before now − grace")
	f.clock.Advance(time.Microsecond)
	plan, err = f.c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, plan.Folded)
	require.Equal(t, 1, plan.Live)
	require.Equal(t, old.ExpiresAt().UnixMicro(), plan.Batch.WriteTS, "the batch timestamp is the largest expires_at folded")
	require.Equal(t, []crdt.ActorID{old.ID()}, plan.Batch.Delete)
	require.Equal(t, 1, liveShards(t, f.store, "views"))
	require.Equal(t, int64(12), f.value(t))

	// A late copy of the folded shard's write never resurrects it.
	late, err := tally.Shard[*tally.Sum]{Mutator: old.ID(), ExpiresAt: old.ExpiresAt().UnixMicro(), State: sumOf(t, 5)}.MarshalBinary()
	require.NoError(t, err)
	putRow(t, f.store, "views", tally.ShardRowKey(old.ID()), late, old.ExpiresAt().UnixMicro()-1)
	require.Equal(t, 1, liveShards(t, f.store, "views"))
	require.Equal(t, int64(12), f.value(t))

	// A stale reader seeing the new tally and the old shard counts it once.
	rows, err := f.store.Snapshot(ctx, "views", 100, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, 2, "the young shard and the tally")
	mixed := staleView{rows: []store.Row{{Key: tally.ShardRowKey(old.ID()), Value: late}, rows[0], rows[1]}}
	c2, err := tally.New[*tally.Sum](mixed, "views", f.cfg)
	require.NoError(t, err)
	v, err := c2.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(12), v.Value())
}

func TestGCIdempotentAndRacing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var want int64
	for i := range 6 {
		m := f.mutator(t)
		require.NoError(t, m.Update(ctx, add(int64(i+1))))
		want += int64(i + 1)
		f.clock.Advance(2 * time.Hour)
	}
	// Mutators expire at +24h, +26h, ... +34h; now = +12h.
	f.clock.Advance(17*time.Hour + time.Minute) // now = +29h01: two are final
	planA, err := f.c.PlanGC(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, planA.Folded)
	planA2, err := f.c.PlanGC(ctx)
	require.NoError(t, err)
	require.Equal(t, planA, planA2, "two GCs on the same view plan byte-identical batches")

	f.clock.Advance(4 * time.Hour) // four are final
	planB, err := f.c.PlanGC(ctx)
	require.NoError(t, err)
	require.Equal(t, 4, planB.Folded)
	require.Greater(t, planB.Batch.WriteTS, planA.Batch.WriteTS)

	// B lands first, then A's delayed batch, then both again.
	for _, b := range []tally.GCBatch{planB.Batch, planA.Batch, planB.Batch, planA.Batch} {
		require.NoError(t, f.store.Apply(ctx, b.Mutations("views")))
		require.Equal(t, want, f.value(t))
	}
	require.Equal(t, 2, liveShards(t, f.store, "views"))

	// A GC from the state after A alone reaches B's tally byte for byte.
	g := newFixture(t)
	for i := range 6 {
		m := g.mutator(t)
		require.NoError(t, m.Update(ctx, add(int64(i+1))))
		g.clock.Advance(2 * time.Hour)
	}
	g.clock.Advance(17*time.Hour + time.Minute)
	_, err = g.c.GC(ctx)
	require.NoError(t, err)
	g.clock.Advance(4 * time.Hour)
	planB2, err := g.c.PlanGC(ctx)
	require.NoError(t, err)
	require.Equal(t, planB.Batch.WriteTS, planB2.Batch.WriteTS)
	require.Equal(t, planB.Batch.Tally, planB2.Batch.Tally, "the tally folded through T depends on T only")
}

func TestGCErrors(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, add(1)))
	f.clock.Advance(30 * time.Hour)
	var sent [][]store.Mutation
	f.store.SetPolicy(func(c faulty.Call) faulty.Fault {
		if muts, _ := f.store.current(); isGC(c, muts) {
			sent = append(sent, muts)
			return faulty.Lose
		}
		return faulty.Pass
	})
	_, err := f.c.GC(ctx)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.Len(t, sent, 3, "the batch is resent Retries times")
	require.Equal(t, sent[0], sent[1], "the same batch")
	require.Equal(t, sent[0], sent[2])
	f.store.SetPolicy(func(faulty.Call) faulty.Fault { return faulty.Refuse })
	_, err = f.c.GC(ctx)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "no complete read, no GC")
	f.store.SetPolicy(nil)
	_, err = f.c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), f.value(t))
	require.Equal(t, 0, liveShards(t, f.store, "views"))
}

func TestCanceledContext(t *testing.T) {
	f := newFixture(t)
	m := f.mutator(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := m.Update(ctx, add(1))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "nothing is sent once the context is done: certainly not applied")
	require.False(t, m.Unresolved())
	require.Equal(t, [2]int64{}, f.store.calls())
	_, err = f.c.Read(ctx)
	require.ErrorIs(t, err, context.Canceled)
}
