package tally_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// TestUndecodableShardIsCorrupt checks tally/doc.go, "A row that does
// not decode ... stops Read and GC (crdt.ErrCorruptEncoding)", SPEC.md 10
// ("a value or row that does not decode is corrupt_encoding"), and
// Counter.Read's "Errors wrap crdt.ErrCorruptEncoding, crdt.ErrTooLarge
// (more than Options.MaxRows rows), or come from the store".
//
// A Distinct shard whose registers are too long, and a shard of another
// aggregate, stopped Read and GC with crdt.ErrTooLarge or
// crdt.ErrTypeMismatch alone, which a caller looking for damaged rows with
// errors.Is(err, crdt.ErrCorruptEncoding) missed.
func TestUndecodableShardIsCorrupt(t *testing.T) {
	ctx := context.Background()
	mp := func(v any) []byte {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseCompactInts(true) // the canonical (smallest) integer forms
		require.NoError(t, enc.Encode(v))
		return buf.Bytes()
	}
	shardTag := string(crdt.TagTallyShard)
	t.Run("distinct registers too long", func(t *testing.T) {
		mem := memory.NewPartitions()
		clk := newClock()
		c, err := tally.New[*tally.Distinct](mem, "k", tally.Options{Clock: clk.Now})
		require.NoError(t, err)
		value := mp([]any{shardTag, 1, []any{"distinct", "m1", clk.Now().UnixMicro() + 1, []any{14, make([]byte, 1<<14+4)}}})
		require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: "k", Op: store.OpPut, Key: tally.ShardRowKey("m1"), Value: value, Timestamp: 1}}))
		_, err = c.Read(ctx)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "Read of a row that does not decode")
		_, err = c.ReadComplete(ctx)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "ReadComplete")
		_, err = c.GC(ctx)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "GC")
	})
	t.Run("shard of another kind", func(t *testing.T) {
		mem := memory.NewPartitions()
		clk := newClock()
		c, err := tally.New[*tally.Sum](mem, "k", tally.Options{Clock: clk.Now})
		require.NoError(t, err)
		mx := new(tally.Max)
		mx.Add(3)
		value, err := tally.Shard[*tally.Max]{Mutator: "m1", ExpiresAt: clk.Now().UnixMicro() + 1, State: mx}.MarshalBinary()
		require.NoError(t, err)
		require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: "k", Op: store.OpPut, Key: tally.ShardRowKey("m1"), Value: value, Timestamp: 1}}))
		_, err = c.Read(ctx)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "Read of a row that does not decode as this counter's kind")
		_, err = c.GC(ctx)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "GC")
	})
}
