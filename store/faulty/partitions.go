package faulty

import (
	"bytes"
	"context"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
)

// Partitions wraps a store.Partitions with injected faults. It is safe for
// concurrent use.
type Partitions struct {
	inner  store.Partitions
	record bool
	page   int
	core
	hist history[partState]
}

// partState is a recorded read of a whole partition; isolated when it came
// from a Snapshot.
type partState struct {
	rows     []store.Row
	isolated bool
}

// merge keeps one entry for equal rows, isolated if either read was.
func (a *partState) merge(b partState) { a.isolated = a.isolated || b.isolated }

func (a partState) equal(b partState) bool { return storekit.SameRows(a.rows, b.rows) }

var _ store.Partitions = (*Partitions)(nil)

// recordLimit bounds the partitions RecordWrites reads back.
const recordLimit = 10_000

// NewPartitions wraps inner.
func NewPartitions(inner store.Partitions, o Options) *Partitions {
	return &Partitions{inner: inner, record: o.RecordWrites, page: o.ScanPage, core: newCore(o),
		hist: newHistory(o, partState.equal, (*partState).merge)}
}

// stale records fresh, a read of partition, and returns a copy of the
// state age states older; an isolated read is answered from isolated
// states only.
func (p *Partitions) stale(partition string, fresh partState, age int) ([]store.Row, bool) {
	st, found := p.hist.older(partition, &fresh, age, func(s partState) bool { return s.isolated || !fresh.isolated })
	return storekit.CloneRows(st.rows), found
}

// Snapshot is the wrapped store's Snapshot, with faults.
func (p *Partitions) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	call, f, err := p.beforeRead(ctx, Call{Method: MethodSnapshot, Key: partition, Level: level})
	if err != nil {
		return nil, err
	}
	rows, err := p.inner.Snapshot(ctx, partition, limit, level)
	if err != nil {
		return nil, err
	}
	served := Pass
	if f.Kind() == Stale && level != store.ReadComplete {
		if old, ok := p.stale(partition, partState{storekit.CloneRows(rows), true}, f.Age()); ok {
			if len(old) > limit {
				return nil, fmt.Errorf("faulty: %v: stale partition has more than %d rows: %w", call, limit, crdt.ErrTooLarge)
			}
			rows, served = old, Stale
		}
	} else if p.hist.depth > 0 {
		p.hist.add(partition, partState{storekit.CloneRows(rows), true})
	}
	p.count(served)
	if err := p.runHook(ctx, call, true); err != nil {
		return nil, err
	}
	return rows, nil
}

// Scan is the wrapped store's Scan, with faults; with Options.ScanPage,
// each page after the first is a call of its own.
func (p *Partitions) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	call, f, err := p.beforeRead(ctx, Call{Method: MethodScan, Key: partition, Level: level})
	if err != nil {
		return err
	}
	if f.Kind() == Stale && level != store.ReadComplete && p.hist.depth > 0 {
		var fresh []store.Row
		if err := p.inner.Scan(ctx, partition, nil, level, func(r store.Row) bool {
			fresh = append(fresh, storekit.CloneRow(r))
			return true
		}); err != nil {
			return err
		}
		if old, ok := p.stale(partition, partState{rows: fresh}, f.Age()); ok {
			p.count(Stale)
			for _, r := range old {
				if bytes.Compare(r.Key, from) >= 0 && !fn(r) {
					break
				}
			}
			return p.runHook(ctx, call, true)
		}
	}
	// Record the rows of a scan from the start that runs to the end.
	var seen []store.Row
	keep, ended := from == nil && p.hist.depth > 0, true
	visit := func(r store.Row) bool {
		if keep {
			seen = append(seen, storekit.CloneRow(r))
		}
		ended = fn(r)
		return ended
	}
	if p.page > 0 {
		err = p.scanPaged(ctx, partition, from, level, visit)
	} else {
		err = p.inner.Scan(ctx, partition, from, level, visit)
	}
	if err != nil {
		return err
	}
	if keep && ended {
		p.hist.add(partition, partState{rows: seen})
	}
	p.count(Pass)
	return p.runHook(ctx, call, true)
}

// scanPaged reads p.page rows at a time from the wrapped store; every page
// after the first is a call with its own fault and hooks.
func (p *Partitions) scanPaged(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	first := true
	return storekit.ScanPages(from, storekit.FirstPage, p.page, func(from []byte, n int) ([]store.Row, error) {
		var call Call
		if !first {
			var err error
			if call, _, err = p.beforeRead(ctx, Call{Method: MethodScanPage, Key: partition, Level: level}); err != nil {
				return nil, err
			}
		}
		page := make([]store.Row, 0, n)
		err := p.inner.Scan(ctx, partition, from, level, func(r store.Row) bool {
			page = append(page, r)
			return len(page) < n
		})
		if err != nil {
			return nil, err
		}
		if !first {
			p.count(Pass)
			if err := p.runHook(ctx, call, true); err != nil {
				return nil, err
			}
		}
		first = false
		return page, nil
	}, fn)
}

// Apply is the wrapped store's Apply, with faults.
func (p *Partitions) Apply(ctx context.Context, muts []store.Mutation) error {
	key := ""
	if len(muts) > 0 {
		key = muts[0].Partition
	}
	call, f, err := p.before(ctx, Call{Method: MethodApply, Key: key, Batch: muts})
	if err != nil {
		return err
	}
	if f.Kind() == Hold {
		muts = storekit.CloneBatch(muts)
		call.Batch = muts
	}
	var record func(context.Context)
	if p.record && p.hist.depth > 0 {
		parts := storekit.PartitionsOf(muts)
		record = func(ctx context.Context) {
			for _, part := range parts {
				if rows, err := p.inner.Snapshot(ctx, part, recordLimit, store.ReadComplete); err == nil {
					p.hist.add(part, partState{storekit.CloneRows(rows), true})
				}
			}
		}
	}
	return p.write(ctx, call, f, func(ctx context.Context) error {
		return p.inner.Apply(ctx, muts)
	}, record)
}
