package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// errKind is one error a store may answer a write with; the store
// contract (package store, "Errors") says every error but
// crdt.ErrUnavailable may come from a write that landed.
type errKind struct {
	name string
	err  error
}

var errKinds = []errKind{
	{"too-large", fmt.Errorf("injected batch too large: %w", crdt.ErrTooLarge)},
	{"misconfigured", fmt.Errorf("injected server config refusal: %w", crdt.ErrMisconfiguredStore)},
	{"corrupt", fmt.Errorf("injected bad answer: %w", crdt.ErrCorruptEncoding)},
	{"invalid-key", fmt.Errorf("injected key refusal: %w", crdt.ErrInvalidKey)},
	{"deadline", context.DeadlineExceeded},
	{"canceled", context.Canceled},
	{"boom", errors.New("boom")},
	{"ambiguous", fmt.Errorf("injected: %w", crdt.ErrAmbiguousWrite)},
}

type injection struct {
	apply bool
	err   error
}

// errPartitions numbers Apply calls from 1; the ones in plan are applied
// or not and answered with the plan's error.
type errPartitions struct {
	inner store.Partitions
	mu    sync.Mutex
	n     int
	plan  map[int]injection
	log   []string
}

func newErrPartitions(inner store.Partitions) *errPartitions {
	return &errPartitions{inner: inner, plan: map[int]injection{}}
}

func (p *errPartitions) setPlan(pl map[int]injection) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.plan = pl
}

func (p *errPartitions) writes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *errPartitions) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	return p.inner.Scan(ctx, partition, from, level, fn)
}

func (p *errPartitions) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	return p.inner.Snapshot(ctx, partition, limit, level)
}

func (p *errPartitions) Apply(ctx context.Context, muts []store.Mutation) error {
	p.mu.Lock()
	p.n++
	in, ok := p.plan[p.n]
	desc := fmt.Sprintf("#%d apply %d muts", p.n, len(muts))
	for _, m := range muts {
		desc += fmt.Sprintf(" [%s %s %q ts=%d]", m.Op, m.Partition, m.Key, m.Timestamp)
	}
	if ok {
		desc += fmt.Sprintf(" {apply=%v err=%v}", in.apply, in.err)
	}
	p.log = append(p.log, desc)
	p.mu.Unlock()
	if !ok {
		return p.inner.Apply(ctx, muts)
	}
	if in.apply {
		if err := p.inner.Apply(ctx, muts); err != nil {
			return err
		}
	}
	return in.err
}
