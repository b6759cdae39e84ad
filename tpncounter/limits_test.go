package tpncounter

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
)

// Apply and Merge refuse a state that could not be encoded: every state the
// counter holds encodes within crdt.DefaultMaxEncodedSize, and the refusal
// changes nothing.
func TestSizeCapHoldsOnApplyAndMerge(t *testing.T) {
	testsize.SkipSequential(t)
	o := Options{HistoryLength: MaxHistoryLength, FoldedLength: MaxHistoryLength, MaxActors: 64}
	pad := strings.Repeat("x", 230)
	id := func(a, i int) string { return fmt.Sprintf("%s-%02d-%05d", pad, a, i) }
	// near encodes, without Apply (which would be slow under the race
	// detector), a state of about size bytes: actors from first on, each
	// holding a full history and folded record.
	near := func(first, size int) (*Counter, int64) {
		per := 2*MaxHistoryLength + 1
		actors := size / (per * (len(id(0, 0)) + 6))
		e := wire.NewEncoder(crdt.TagTPNCounter, 2)
		e.ArrayLen(2)
		e.ArrayLen(actors)
		for a := first; a < first+actors; a++ {
			e.ArrayLen(6)
			e.String(fmt.Sprintf("a%02d", a))
			e.Uint(uint64(per))
			e.Int(MaxHistoryLength)
			e.Int(0)
			for _, part := range [][2]int{{MaxHistoryLength, per}, {0, MaxHistoryLength}} {
				e.ArrayLen(part[1] - part[0])
				for i := part[0]; i < part[1]; i++ {
					e.ArrayLen(2)
					e.String(id(a, i))
					e.Int(1)
				}
			}
		}
		e.ArrayLen(0)
		c := newT(t, o)
		require.NoError(t, c.UnmarshalBinary(must(e.Bytes())))
		return c, int64(actors * per)
	}

	c, applied := near(0, crdt.DefaultMaxEncodedSize-200_000)
	var err error
	for i := 0; err == nil && i < 100_000; i++ {
		_, err = c.Apply("z", crdt.TxnID(id(99, i)), 1)
		if err == nil {
			applied++
		}
	}
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	b := must(c.MarshalBinary())
	require.LessOrEqual(t, len(b), crdt.DefaultMaxEncodedSize)
	require.Greater(t, len(b), crdt.DefaultMaxEncodedSize-2000, "the cap is reached, not a bound far below it")
	require.EqualValues(t, applied, c.Value(), "the refused Apply changed nothing")
	require.Equal(t, b, must(c.MarshalBinary()))
	t.Logf("%d transactions, %d bytes encoded, %d bytes of cap left", applied, len(b), crdt.DefaultMaxEncodedSize-len(b))

	// Merge: two states of 60% of the cap each, of different actors.
	x, _ := near(0, crdt.DefaultMaxEncodedSize*6/10)
	y, _ := near(40, crdt.DefaultMaxEncodedSize*6/10)
	before := must(x.MarshalBinary())
	require.ErrorIs(t, x.Merge(y), crdt.ErrTooLarge)
	require.True(t, bytes.Equal(before, must(x.MarshalBinary())), "the refused Merge changed nothing")
	require.ErrorIs(t, x.MergeBinary(must(y.MarshalBinary())), crdt.ErrTooLarge)
	require.True(t, bytes.Equal(before, must(x.MarshalBinary())), "the refused MergeBinary changed nothing")

	// Options.MaxEncodedSize caps Apply at a store's limit, not Merge.
	const limit = 1 << 20
	o.MaxEncodedSize = limit
	c, _ = near(0, limit/2)
	err = nil
	for i := 0; err == nil && i < 100_000; i++ {
		_, err = c.Apply(crdt.ActorID(fmt.Sprint("z", i%32)), crdt.TxnID(id(99, i)), 1)
	}
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.ErrorContains(t, err, fmt.Sprint(limit))
	b = must(c.MarshalBinary())
	require.LessOrEqual(t, len(b), limit)
	require.Greater(t, len(b), limit-500, "the cap is reached, not a bound far below it")
	y, _ = near(40, limit/2)
	require.NoError(t, c.Merge(y), "states that each fit are read together")
	require.Greater(t, len(must(c.MarshalBinary())), limit)
	for _, bad := range []int{-1, crdt.DefaultMaxEncodedSize + 1} {
		require.ErrorIs(t, Options{MaxEncodedSize: bad}.Validate(), crdt.ErrInvalidConfig)
	}
}

// Apply's cap is SPEC.md 6.3 step 3's rule exactly: with B the length of
// the state's bodies as they stand (also after a base, or a Compact or a
// retirement since the last encoding), Apply of txn by actor is refused
// iff B + len(actor) + len(txn) + 59 > MaxEncodedSize − 64.
func TestSizeCapIsExact(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	o := Options{HistoryLength: 1, FoldedLength: 1}
	apply := func(c *Counter, a crdt.ActorID, x crdt.TxnID, n int64) {
		_, err := c.Apply(a, x, n)
		require.NoError(t, err)
	}
	builds := map[string]func(c *Counter){
		"plain": func(c *Counter) { apply(c, "a", "t1", 1); apply(c, "b", "t2", -1) },
		"bases": func(c *Counter) {
			apply(c, "a", "t1", 1)
			apply(c, "a", "t2", -1)
			_, err := c.RetireAllAt(at, "a")
			require.NoError(t, err)
			c.Fold(at.Add(time.Second))
			apply(c, "b", "t3", 1)
		},
		"15 entries": func(c *Counter) {
			for i := range 15 {
				apply(c, crdt.ActorID(fmt.Sprint("d", i)), crdt.TxnID(fmt.Sprint("t", i)), 1)
			}
		},
		"compacted after encoding": func(c *Counter) {
			apply(c, "a", "t1", 1<<40)
			apply(c, "a", "t2", 1)
			must(c.MarshalBinary())
			_, err := c.Compact("a")
			require.NoError(t, err)
		},
		"retired after encoding": func(c *Counter) {
			other := newT(t, o)
			var actors []crdt.ActorID
			for i := range 20 {
				a, x := crdt.ActorID(fmt.Sprint("b", i)), crdt.TxnID(fmt.Sprint("t", i))
				actors = append(actors, a)
				apply(c, a, x, 1)
				apply(other, "a", x, 1)
			}
			require.NoError(t, c.Merge(other))
			for _, a := range actors {
				_, err := c.Compact(a)
				require.NoError(t, err)
			}
			must(c.MarshalBinary())
			_, err := c.RetireAllAt(at, actors...)
			require.NoError(t, err)
		},
	}
	header := len(must((&Counter{}).MarshalBinary())) - 2
	for name, build := range builds {
		ref := newT(t, o)
		build(ref)
		b := len(must(ref.MarshalBinary())) - header
		for _, d := range []int{-9, -1, 0, 1, 16, 32} {
			c := newT(t, o)
			build(c)
			limit := b + len("c") + len("zz") + 59 + 64 + d
			c.p.o.MaxEncodedSize, c.n.o.MaxEncodedSize = limit, limit
			_, err := c.Apply("c", "zz", 1)
			require.Equal(t, d >= 0, err == nil, "%s: B %d, MaxEncodedSize B+125%+d: %v", name, b, d, err)
			if err == nil {
				require.LessOrEqual(t, len(must(c.MarshalBinary())), limit)
			}
		}
	}
}
