package balance_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/internal/stamp"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// calls counts what reached the in-memory store under a spy: calls that
// took effect, whatever the faults around them reported.
type storeCalls struct {
	Applies          int64 // Apply calls (each one write, one batch)
	Puts             int64 // OpPut mutations (rows written)
	Deletes          int64 // OpDelete mutations (rows deleted)
	RangeDeletes     int64 // OpDeleteRange mutations
	PartitionDeletes int64 // OpDeletePartition mutations
	Snapshots        int64 // Snapshot calls (each one read)
	RowsRead         int64 // rows returned by Snapshot
}

// counting is a store.Partitions that counts the calls it passes to mem.
type counting struct {
	mem *memory.Partitions

	applies, puts, deletes, rangeDeletes, partitionDeletes, snapshots, rowsRead atomic.Int64
	// scans, and the bytes (keys and values) of the rows read and written.
	scans, bytesRead, bytesWritten atomic.Int64
}

func (c *counting) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := c.mem.Apply(ctx, muts); err != nil {
		return err
	}
	c.applies.Add(1)
	for _, m := range muts {
		c.bytesWritten.Add(int64(len(m.Key) + len(m.Value)))
		switch m.Op {
		case store.OpPut:
			c.puts.Add(1)
		case store.OpDelete:
			c.deletes.Add(1)
		case store.OpDeleteRange:
			c.rangeDeletes.Add(1)
		case store.OpDeletePartition:
			c.partitionDeletes.Add(1)
		}
	}
	return nil
}

func (c *counting) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	c.scans.Add(1)
	return c.mem.Scan(ctx, partition, from, level, func(r store.Row) bool {
		c.bytesRead.Add(int64(len(r.Key) + len(r.Value)))
		return fn(r)
	})
}

func (c *counting) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	rows, err := c.mem.Snapshot(ctx, partition, limit, level)
	if err == nil {
		c.snapshots.Add(1)
		c.rowsRead.Add(int64(len(rows)))
		for _, r := range rows {
			c.bytesRead.Add(int64(len(r.Key) + len(r.Value)))
		}
	}
	return rows, err
}

// calls returns the store calls made: applies, snapshots and scans.
func (c *counting) calls() int64 { return c.applies.Load() + c.snapshots.Load() + c.scans.Load() }

func (c *counting) reset() {
	for _, n := range []*atomic.Int64{&c.applies, &c.puts, &c.deletes, &c.rangeDeletes, &c.partitionDeletes, &c.snapshots, &c.rowsRead, &c.scans, &c.bytesRead, &c.bytesWritten} {
		n.Store(0)
	}
}

// spy is the store the tests run Accounts on: a memory.Partitions,
// counted, under a faulty.Partitions whose hook and policy the tests set
// (SetHook, SetPolicy); it keeps no history, so it serves no stale reads.
type spy struct {
	*faulty.Partitions
	c *counting
}

func newSpy() *spy {
	c := &counting{mem: memory.NewPartitions()}
	return &spy{Partitions: faulty.NewPartitions(c, faulty.Options{History: -1}), c: c}
}

// Calls returns the counts so far.
func (s *spy) Calls() storeCalls {
	c := s.c
	return storeCalls{
		Applies: c.applies.Load(), Puts: c.puts.Load(), Deletes: c.deletes.Load(), RangeDeletes: c.rangeDeletes.Load(),
		PartitionDeletes: c.partitionDeletes.Load(), Snapshots: c.snapshots.Load(), RowsRead: c.rowsRead.Load(),
	}
}

// ResetCalls sets every count to zero.
func (s *spy) ResetCalls() { s.c.reset() }

// Stored returns account's rows in clustering order, read from the memory
// store without counting or faults.
func (s *spy) Stored(account string) []balance.Row { return storedRows(s.c.mem, account) }

// writeRows stores rows in account's partition of st in one Apply, stamped
// as Accounts stamps its writes (after every write of the process so far).
func writeRows(st store.Partitions, account string, rows ...balance.Row) error {
	return putRows(st, account, false, rows)
}

// writePlaced is writeRows for a placed partition: each row at the time of
// the row it names (an N row's update id, a T row's target, an S row's
// version), as merges place them, and a sum row stamped with its place.
func writePlaced(st store.Partitions, account string, rows ...balance.Row) error {
	return putRows(st, account, true, rows)
}

func putRows(st store.Partitions, account string, placed bool, rows []balance.Row) error {
	ts := stamp.Reserve(time.Time{}, len(rows))
	muts := make([]store.Mutation, len(rows))
	for i, r := range rows {
		v, err := r.MarshalBinary()
		if err != nil {
			return err
		}
		muts[i] = store.Mutation{Partition: account, Op: store.OpPut, Key: balance.EncodeKey(r.Key()), Value: v, Timestamp: ts + int64(i)}
		if at := r.UpdateID.Time().UnixMicro(); placed {
			muts[i].Key = balance.EncodeTxnRowKey(at, r.Key())
			if r.Kind == balance.KindSum {
				muts[i].Timestamp = at // as merges write sum rows (placed.go)
			}
		}
	}
	return st.Apply(context.Background(), muts)
}

// storedRows returns the rows of account in st, decoded from their values.
// It panics on a row that does not decode.
func storedRows(st store.Partitions, account string) []balance.Row {
	rows, err := st.Snapshot(context.Background(), account, balance.MaxRows, store.ReadComplete)
	if err != nil {
		panic(err)
	}
	out := make([]balance.Row, 0, len(rows))
	seen := map[balance.Row]bool{} // a row placed twice is one row (placed.go)
	for _, sr := range rows {
		var r balance.Row
		if err := r.UnmarshalBinary(sr.Value); err != nil {
			panic(fmt.Sprintf("row %x of %q: %v", sr.Key, account, err))
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
