package memory_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/tally/tallytest"
)

func TestTallyStoreConformance(t *testing.T) {
	tallytest.Run(t, func(*testing.T) tally.Store { return memory.NewTallyStore() })
}

func TestTallyStoreFaults(t *testing.T) {
	ctx := context.Background()
	s := memory.NewTallyStore()
	put := func(data string, ts int64) error {
		return s.PutShard(ctx, "k", tally.EncodedShard{Mutator: "m", Data: []byte(data)}, ts)
	}
	read := func() string {
		shards, _, err := s.Read(ctx, "k", true)
		require.NoError(t, err)
		if len(shards) == 0 {
			return ""
		}
		return string(shards[0].Data)
	}
	var next memory.TallyFault
	var seen []memory.TallyOp
	s.SetFault(func(op memory.TallyOp) memory.TallyFault {
		seen = append(seen, op)
		if op.Kind != memory.TallyOpPut {
			return memory.TallyOK
		}
		return next
	})

	next = memory.TallyUnavailable
	require.ErrorIs(t, put("refused", 1), crdt.ErrUnavailable)
	require.Equal(t, "", read())

	next = memory.TallyLost
	require.ErrorIs(t, put("lost", 2), crdt.ErrAmbiguousWrite)
	require.Equal(t, "", read())

	next = memory.TallyLanded
	require.ErrorIs(t, put("landed", 3), crdt.ErrAmbiguousWrite)
	require.Equal(t, "landed", read())

	next = memory.TallyHeld
	require.ErrorIs(t, put("held-late", 5), crdt.ErrAmbiguousWrite)
	require.ErrorIs(t, put("held-dropped", 6), crdt.ErrAmbiguousWrite)
	require.Equal(t, "landed", read())
	held := s.Held()
	require.Len(t, held, 2)
	require.True(t, s.DeliverHeld(held[0]))
	require.Equal(t, "held-late", read())
	require.True(t, s.DropHeld(held[1]))
	require.False(t, s.DeliverHeld(held[1]))
	require.Equal(t, "held-late", read())

	require.Equal(t, memory.TallyCalls{Reads: 6, ShardWrites: 5}, s.Calls())
	require.Equal(t, memory.TallyOpPut, seen[0].Kind)
	require.Equal(t, int64(1), seen[0].WriteTS)
	require.Less(t, seen[0].Seq, seen[1].Seq)
	s.ResetCalls()
	require.Equal(t, memory.TallyCalls{}, s.Calls())

	s.SetFault(func(memory.TallyOp) memory.TallyFault { return memory.TallyLost })
	_, _, err := s.Read(ctx, "k", true)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "a faulted read is refused")
}

// TestTallyStoreStaleReads: non-complete reads show, per cell, only values
// the cell really held; complete reads are always current.
func TestTallyStoreStaleReads(t *testing.T) {
	ctx := context.Background()
	s := memory.NewTallyStore()
	s.SetStaleReads(rand.New(rand.NewPCG(1, 2)))
	for ts := int64(1); ts <= 5; ts++ {
		require.NoError(t, s.PutShard(ctx, "k", tally.EncodedShard{Mutator: "m", Data: []byte{byte(ts)}}, ts))
	}
	require.NoError(t, s.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: 9, Tally: []byte("T"), Delete: []crdt.ActorID{"m"}}))
	seen := map[int]bool{}
	for range 200 {
		shards, tb, err := s.Read(ctx, "k", false)
		require.NoError(t, err)
		if len(shards) == 1 {
			seen[int(shards[0].Data[0])] = true
		} else {
			seen[0] = true // deleted, or not yet written
		}
		require.True(t, tb == nil || string(tb) == "T")
		shards, tb, err = s.Read(ctx, "k", true)
		require.NoError(t, err)
		require.Empty(t, shards)
		require.Equal(t, []byte("T"), tb)
	}
	require.Len(t, seen, 6, "every past version, and absence, shows up in stale reads")
	s.SetStaleReads(nil)
	shards, _, err := s.Read(ctx, "k", false)
	require.NoError(t, err)
	require.Empty(t, shards)
}

func TestTallyStoreLiveShards(t *testing.T) {
	ctx := context.Background()
	s := memory.NewTallyStore()
	require.Equal(t, 0, s.LiveShards("k"))
	for _, id := range []crdt.ActorID{"a", "b", "c"} {
		require.NoError(t, s.PutShard(ctx, "k", tally.EncodedShard{Mutator: id, Data: []byte(id)}, 10))
	}
	require.NoError(t, s.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: 10, Tally: []byte("t"), Delete: []crdt.ActorID{"a"}}))
	require.Equal(t, 2, s.LiveShards("k"))
}

// The memory store applies Cassandra's last-write-wins rules, counts its
// calls and injects faults.
func ExampleTallyStore() {
	ctx := context.Background()
	s := memory.NewTallyStore()
	_ = s.PutShard(ctx, "k", tally.EncodedShard{Mutator: "m", Data: []byte("new")}, 20)
	_ = s.PutShard(ctx, "k", tally.EncodedShard{Mutator: "m", Data: []byte("late")}, 10) // loses: older timestamp
	s.SetFault(func(op memory.TallyOp) memory.TallyFault { return memory.TallyLanded })
	err := s.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: 20, Tally: []byte("tally"), Delete: []crdt.ActorID{"m"}})
	fmt.Println("gc:", errors.Is(err, crdt.ErrAmbiguousWrite))
	s.SetFault(nil)
	shards, tb, _ := s.Read(ctx, "k", true)
	fmt.Println(len(shards), string(tb), s.Calls())
	// Output:
	// gc: true
	// 0 tally {1 2 1}
}
