package memory

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

var _ deltalog.Store = (*DeltaLogStore)(nil)

// The operation names DeltaLogStore passes to its hook.
const (
	DeltaLogOpInsert        = "insert"
	DeltaLogOpScanPage      = "scan-page"
	DeltaLogOpDeleteCovered = "delete-covered"
	DeltaLogOpDeleteCounter = "delete-counter"
)

// DeltaLogHook is called by DeltaLogStore around every store operation (and
// before every page of a scan). With after false it runs before the
// operation: a non-nil error aborts the operation, which then has no effect
// (a crash or refused write). With after true it runs once the operation has
// taken effect: a non-nil error is returned to the caller although the write
// landed (a lost acknowledgement). Hooks run without the store's lock held,
// so they may block to interleave callers deterministically.
type DeltaLogHook func(ctx context.Context, op string, after bool) error

// DeltaLogCalls counts the operations a DeltaLogStore has served.
type DeltaLogCalls struct {
	Inserts        int64 // Insert calls (each one write, of any number of cells)
	CellsWritten   int64 // cells written by Insert
	Scans          int64 // Scan calls
	Pages          int64 // pages fetched by scans
	CellsRead      int64 // cells passed to scan callbacks
	RangeDeletes   int64 // DeleteCovered calls
	CounterDeletes int64 // DeleteCounter calls
}

// DeltaLogStore is an in-memory deltalog.Store, the reference backend for
// tests, examples and benchmarks. Scans are paged like a database's (the
// lock is released between pages, so concurrent writes and deletes may
// interleave with a scan exactly as they can with Cassandra). It counts its
// calls (Calls) and can inject faults (SetHook).
//
// The zero value is not usable; call NewDeltaLogStore. A DeltaLogStore is
// safe for concurrent use.
type DeltaLogStore struct {
	mu       sync.Mutex
	parts    map[string][]deltalog.Cell // each in reverse clustering order (oldest first)
	pageSize int
	hook     hookSlot[DeltaLogHook]

	inserts, cellsWritten, scans, pages, cellsRead, rangeDeletes, counterDeletes atomic.Int64
}

// NewDeltaLogStore returns an empty store whose scans fetch pageSize cells
// per page (5000 if pageSize <= 0, Cassandra's default fetch size).
func NewDeltaLogStore(pageSize int) *DeltaLogStore {
	if pageSize <= 0 {
		pageSize = 5000
	}
	return &DeltaLogStore{parts: map[string][]deltalog.Cell{}, pageSize: pageSize}
}

// SetHook installs h (nil removes it).
func (s *DeltaLogStore) SetHook(h DeltaLogHook) { s.hook.set(h) }

func (s *DeltaLogStore) call(ctx context.Context, op string, after bool) error {
	return s.hook.call(ctx, op, after)
}

// Calls returns the operation counts so far.
func (s *DeltaLogStore) Calls() DeltaLogCalls {
	return DeltaLogCalls{
		Inserts: s.inserts.Load(), CellsWritten: s.cellsWritten.Load(), Scans: s.scans.Load(),
		Pages: s.pages.Load(), CellsRead: s.cellsRead.Load(), RangeDeletes: s.rangeDeletes.Load(),
		CounterDeletes: s.counterDeletes.Load(),
	}
}

// ResetCalls sets every count to zero.
func (s *DeltaLogStore) ResetCalls() {
	for _, c := range []*atomic.Int64{&s.inserts, &s.cellsWritten, &s.scans, &s.pages, &s.cellsRead, &s.rangeDeletes, &s.counterDeletes} {
		c.Store(0)
	}
}

// Len returns the number of cells stored for counter.
func (s *DeltaLogStore) Len(counter string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.parts[counter])
}

// Snapshot returns a copy of counter's cells in clustering order.
func (s *DeltaLogStore) Snapshot(counter string) []deltalog.Cell {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[counter]
	out := make([]deltalog.Cell, len(p))
	for i, c := range p {
		out[len(p)-1-i] = c
	}
	return out
}

// deltaLogSearch returns the first index in the reversed partition p whose cell
// comes at or before c in clustering order.
func deltaLogSearch(p []deltalog.Cell, c deltalog.Cell) int {
	return sort.Search(len(p), func(i int) bool { return deltalog.CompareCells(p[i], c) <= 0 })
}

// errIfDone maps a done context to an error wrapping both crdt.ErrUnavailable
// and the context's error: the operation was not attempted.
func errIfDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", crdt.ErrUnavailable, err)
	}
	return nil
}

// Insert implements deltalog.Store.
func (s *DeltaLogStore) Insert(ctx context.Context, entries []deltalog.Entry) error {
	for _, e := range entries {
		if err := e.Cell.Validate(); err != nil {
			return err
		}
	}
	if err := s.call(ctx, DeltaLogOpInsert, false); err != nil {
		return err
	}
	s.mu.Lock()
	for _, e := range entries {
		p := s.parts[e.Counter]
		i := deltaLogSearch(p, e.Cell)
		if i < len(p) && deltalog.CompareCells(p[i], e.Cell) == 0 {
			p[i] = e.Cell
			continue
		}
		p = append(p, deltalog.Cell{})
		copy(p[i+1:], p[i:])
		p[i] = e.Cell
		s.parts[e.Counter] = p
	}
	s.mu.Unlock()
	s.inserts.Add(1)
	s.cellsWritten.Add(int64(len(entries)))
	return s.call(ctx, DeltaLogOpInsert, true)
}

// Scan implements deltalog.Store. Each page is read under the lock; the
// next page resumes after the last cell returned, wherever it now is.
func (s *DeltaLogStore) Scan(ctx context.Context, counter string, fn func(deltalog.Cell) bool) error {
	s.scans.Add(1)
	var last *deltalog.Cell
	page := make([]deltalog.Cell, 0, min(s.pageSize, 1024))
	for {
		if err := s.call(ctx, DeltaLogOpScanPage, false); err != nil {
			return err
		}
		page = page[:0]
		s.mu.Lock()
		p := s.parts[counter]
		end := len(p) // exclusive; cells p[end-1], p[end-2], ... come next
		if last != nil {
			end = deltaLogSearch(p, *last) // cells strictly after last lie below this index
		}
		for i := end - 1; i >= 0 && len(page) < s.pageSize; i-- {
			page = append(page, p[i])
		}
		more := end-len(page) > 0
		s.mu.Unlock()
		s.pages.Add(1)
		for i, c := range page {
			s.cellsRead.Add(1)
			if !fn(c) {
				return nil
			}
			if i == len(page)-1 {
				cc := c
				last = &cc
			}
		}
		if !more || len(page) == 0 {
			return nil
		}
	}
}

// DeleteCovered implements deltalog.Store.
func (s *DeltaLogStore) DeleteCovered(ctx context.Context, counter string, id deltalog.ID) error {
	if err := s.call(ctx, DeltaLogOpDeleteCovered, false); err != nil {
		return err
	}
	s.mu.Lock()
	p := s.parts[counter]
	// Cells covered come after (id, m) in clustering order: in the reversed
	// slice they form the prefix of cells that compare after it.
	mark := deltalog.Cell{ID: id, Kind: deltalog.KindMerge}
	k := deltaLogSearch(p, mark)
	if k > 0 {
		s.parts[counter] = append([]deltalog.Cell(nil), p[k:]...)
	}
	s.mu.Unlock()
	s.rangeDeletes.Add(1)
	return s.call(ctx, DeltaLogOpDeleteCovered, true)
}

// DeleteCounter implements deltalog.Store.
func (s *DeltaLogStore) DeleteCounter(ctx context.Context, counter string) error {
	if err := s.call(ctx, DeltaLogOpDeleteCounter, false); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.parts, counter)
	s.mu.Unlock()
	s.counterDeletes.Add(1)
	return s.call(ctx, DeltaLogOpDeleteCounter, true)
}
