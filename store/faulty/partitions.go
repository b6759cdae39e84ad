package faulty

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Partitions wraps a store.Partitions with injected faults. It is safe for
// concurrent use.
type Partitions struct {
	inner  store.Partitions
	record bool
	page   int
	core

	hmu  sync.Mutex
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

func (a partState) equal(b partState) bool {
	return slices.EqualFunc(a.rows, b.rows, func(x, y store.Row) bool {
		return bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value)
	})
}

func cloneRows(rows []store.Row) []store.Row {
	out := make([]store.Row, len(rows))
	for i, r := range rows {
		out[i] = store.Row{Key: slices.Clone(r.Key), Value: slices.Clone(r.Value)}
	}
	return out
}

var _ store.Partitions = (*Partitions)(nil)

// recordLimit bounds the partitions RecordWrites reads back.
const recordLimit = 10_000

// NewPartitions wraps inner.
func NewPartitions(inner store.Partitions, o Options) *Partitions {
	p := &Partitions{inner: inner, record: o.RecordWrites, page: o.ScanPage, core: newCore(o)}
	p.hist.depth = p.core.hist
	return p
}

func (p *Partitions) remember(partition string, st partState) {
	p.hmu.Lock()
	p.hist.add(partition, st, partState.equal, (*partState).merge)
	p.hmu.Unlock()
}

// stale returns an older recorded state of partition, age states back
// (isolated ones only if isolated), after recording fresh if it is not nil.
func (p *Partitions) stale(partition string, fresh *partState, age int, isolated bool) ([]store.Row, bool) {
	p.hmu.Lock()
	defer p.hmu.Unlock()
	if fresh != nil {
		p.hist.add(partition, *fresh, partState.equal, (*partState).merge)
	}
	var ok func(partState) bool
	if isolated {
		ok = func(s partState) bool { return s.isolated }
	}
	st, found := p.hist.older(partition, age, ok)
	if !found {
		return nil, false
	}
	return cloneRows(st.rows), true
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
		if old, ok := p.stale(partition, &partState{cloneRows(rows), true}, f.Age(), true); ok {
			if len(old) > limit {
				return nil, fmt.Errorf("faulty: %v: stale partition has more than %d rows: %w", call, limit, crdt.ErrTooLarge)
			}
			rows, served = old, Stale
		}
	} else if p.hist.depth > 0 {
		p.remember(partition, partState{cloneRows(rows), true})
	}
	p.count(served)
	if err := p.after(ctx, call); err != nil {
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
			fresh = append(fresh, store.Row{Key: slices.Clone(r.Key), Value: slices.Clone(r.Value)})
			return true
		}); err != nil {
			return err
		}
		if old, ok := p.stale(partition, &partState{rows: fresh}, f.Age(), false); ok {
			p.count(Stale)
			for _, r := range old {
				if bytes.Compare(r.Key, from) >= 0 && !fn(r) {
					break
				}
			}
			return p.after(ctx, call)
		}
	}
	// Record the rows of a scan from the start that runs to the end.
	var seen []store.Row
	keep := from == nil && p.hist.depth > 0
	stopped := false
	visit := func(r store.Row) bool {
		if keep {
			seen = append(seen, store.Row{Key: slices.Clone(r.Key), Value: slices.Clone(r.Value)})
		}
		if !fn(r) {
			stopped = true
			return false
		}
		return true
	}
	if p.page > 0 {
		err = p.scanPaged(ctx, partition, from, level, visit)
	} else {
		err = p.inner.Scan(ctx, partition, from, level, visit)
	}
	if err != nil {
		return err
	}
	if keep && !stopped {
		p.remember(partition, partState{rows: seen})
	}
	p.count(Pass)
	return p.after(ctx, call)
}

// scanPaged reads p.page rows at a time from the wrapped store; every page
// after the first is a call with its own fault and hooks.
func (p *Partitions) scanPaged(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	next := slices.Clone(from)
	for first := true; ; first = false {
		var call Call
		if !first {
			var err error
			call, _, err = p.beforeRead(ctx, Call{Method: MethodScanPage, Key: partition, Level: level})
			if err != nil {
				return err
			}
		}
		page := make([]store.Row, 0, p.page)
		err := p.inner.Scan(ctx, partition, next, level, func(r store.Row) bool {
			page = append(page, r)
			return len(page) < p.page
		})
		if err != nil {
			return err
		}
		if !first {
			p.count(Pass)
			if err := p.after(ctx, call); err != nil {
				return err
			}
		}
		if len(page) == 0 {
			return nil
		}
		// fn owns the rows it is given and may change them.
		last := slices.Clone(page[len(page)-1].Key)
		for _, r := range page {
			if !fn(r) {
				return nil
			}
		}
		if len(page) < p.page {
			return nil
		}
		next = append(last, 0)
	}
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
		muts = cloneMutations(muts)
		call.Batch = muts
	}
	var record func(context.Context)
	if p.record && p.hist.depth > 0 {
		parts := partitionsOf(muts)
		record = func(ctx context.Context) {
			for _, part := range parts {
				if rows, err := p.inner.Snapshot(ctx, part, recordLimit, store.ReadComplete); err == nil {
					p.remember(part, partState{cloneRows(rows), true})
				}
			}
		}
	}
	return p.write(ctx, call, f, func(ctx context.Context) error {
		return p.inner.Apply(ctx, muts)
	}, record)
}

func cloneMutations(muts []store.Mutation) []store.Mutation {
	out := slices.Clone(muts)
	for i := range out {
		out[i].Key = slices.Clone(out[i].Key)
		out[i].End = slices.Clone(out[i].End)
		out[i].Value = slices.Clone(out[i].Value)
	}
	return out
}

func partitionsOf(muts []store.Mutation) []string {
	var parts []string
	for _, m := range muts {
		if !slices.Contains(parts, m.Partition) {
			parts = append(parts, m.Partition)
		}
	}
	return parts
}
