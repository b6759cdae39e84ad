package deltalog_test

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// calls counts what reached the in-memory store under a spy: calls that
// took effect, whatever the faults around them reported.
type calls struct {
	Applies          int64 // Apply calls (each one write)
	Puts             int64 // OpPut mutations
	RangeDeletes     int64 // OpDeleteRange mutations
	PartitionDeletes int64 // OpDeletePartition mutations
	Scans            int64 // Scan calls (one per page when paged)
	RowsRead         int64 // rows scans passed on
	Snapshots        int64 // Snapshot calls
}

// counting is a store.Partitions that counts the calls it passes to mem.
type counting struct {
	mem *memory.Partitions

	applies, puts, rangeDeletes, partitionDeletes, scans, rowsRead, snapshots atomic.Int64
}

func (c *counting) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := c.mem.Apply(ctx, muts); err != nil {
		return err
	}
	c.applies.Add(1)
	for _, m := range muts {
		switch m.Op {
		case store.OpPut:
			c.puts.Add(1)
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
		c.rowsRead.Add(1)
		return fn(r)
	})
}

func (c *counting) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	c.snapshots.Add(1)
	return c.mem.Snapshot(ctx, partition, limit, level)
}

// spy is the store the tests run Counters on: a memory.Partitions, counted,
// under a faulty.Partitions whose hook and policy the tests set (SetHook,
// SetPolicy); it keeps no history, so it serves no stale reads. With
// page > 0 a scan reads page rows at a time, each page after the first a
// call of its own (faulty.MethodScanPage).
type spy struct {
	*faulty.Partitions
	c *counting
}

func newSpy(page int) *spy {
	c := &counting{mem: memory.NewPartitions()}
	return &spy{Partitions: faulty.NewPartitions(c, faulty.Options{ScanPage: page, History: -1}), c: c}
}

// Calls returns the counts so far.
func (s *spy) Calls() calls {
	c := s.c
	return calls{
		Applies: c.applies.Load(), Puts: c.puts.Load(), RangeDeletes: c.rangeDeletes.Load(),
		PartitionDeletes: c.partitionDeletes.Load(), Scans: c.scans.Load(),
		RowsRead: c.rowsRead.Load(), Snapshots: c.snapshots.Load(),
	}
}

// Cells returns counter's cells in clustering order, read from the memory
// store without counting or faults.
func (s *spy) Cells(counter string) []deltalog.Cell { return storedCells(s.c.mem, counter) }

// Len returns the number of cells stored for counter.
func (s *spy) Len(counter string) int { return len(s.Cells(counter)) }

// storedCells returns the cells of counter in st, decoded from their values.
// It panics on a row that does not decode.
func storedCells(st store.Partitions, counter string) []deltalog.Cell {
	rows, err := st.Snapshot(context.Background(), counter, math.MaxInt32, store.ReadComplete)
	if err != nil {
		panic(err)
	}
	out := make([]deltalog.Cell, len(rows))
	for i, r := range rows {
		if err := out[i].UnmarshalBinary(r.Value); err != nil {
			panic(fmt.Sprintf("row %x of %q: %v", r.Key, counter, err))
		}
	}
	return out
}
