package observe

import (
	"context"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Siblings wraps a store.Siblings so that every call is reported to o as an
// Event of Component "store.siblings". The wrapper adds no behaviour; it
// implements store.SiblingDeleter exactly when inner does.
func Siblings(inner store.Siblings, o Observer) store.Siblings {
	s := &siblings{inner: inner, o: o}
	if d, ok := inner.(store.SiblingDeleter); ok {
		return &siblingsDeleter{s, d}
	}
	return s
}

type siblingsDeleter struct {
	*siblings
	d store.SiblingDeleter
}

func (s *siblingsDeleter) Delete(ctx context.Context, key string, token store.Token) error {
	start := time.Now()
	err := s.d.Delete(ctx, key, token)
	s.report(ctx, "delete", start, 0, 0, err)
	return err
}

type siblings struct {
	inner store.Siblings
	o     Observer
}

func (s *siblings) report(ctx context.Context, op string, start time.Time, rows, bytes int, err error) {
	s.o.Observe(ctx, Event{Component: "store.siblings", Op: op, Outcome: OutcomeOf(err), Err: err,
		Start: start, Duration: time.Since(start), Rows: rows, Bytes: bytes})
}

func (s *siblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	start := time.Now()
	vals, tok, err := s.inner.Fetch(ctx, key)
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	s.report(ctx, "fetch", start, len(vals), n, err)
	return vals, tok, err
}

func (s *siblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	start := time.Now()
	err := s.inner.Put(ctx, key, actor, value, token)
	s.report(ctx, "put", start, 1, len(value), err)
	return err
}

// Partitions wraps a store.Partitions so that every call is reported to o
// as an Event of Component "store.partitions".
func Partitions(inner store.Partitions, o Observer) store.Partitions {
	return &partitions{inner: inner, o: o}
}

type partitions struct {
	inner store.Partitions
	o     Observer
}

func (p *partitions) report(ctx context.Context, op string, start time.Time, rows, bytes int, err error) {
	p.o.Observe(ctx, Event{Component: "store.partitions", Op: op, Outcome: OutcomeOf(err), Err: err,
		Start: start, Duration: time.Since(start), Rows: rows, Bytes: bytes})
}

func (p *partitions) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	start := time.Now()
	rows, bytes := 0, 0
	err := p.inner.Scan(ctx, partition, from, level, func(r store.Row) bool {
		rows++
		bytes += len(r.Key) + len(r.Value)
		return fn(r)
	})
	p.report(ctx, "scan", start, rows, bytes, err)
	return err
}

func (p *partitions) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	start := time.Now()
	rows, err := p.inner.Snapshot(ctx, partition, limit, level)
	bytes := 0
	for _, r := range rows {
		bytes += len(r.Key) + len(r.Value)
	}
	p.report(ctx, "snapshot", start, len(rows), bytes, err)
	return rows, err
}

func (p *partitions) Apply(ctx context.Context, muts []store.Mutation) error {
	start := time.Now()
	err := p.inner.Apply(ctx, muts)
	bytes := 0
	for _, m := range muts {
		bytes += len(m.Key) + len(m.End) + len(m.Value)
	}
	p.report(ctx, "apply", start, len(muts), bytes, err)
	return err
}
