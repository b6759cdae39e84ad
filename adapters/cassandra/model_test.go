package cassandra

// A model of how Cassandra stores one per-actor table ((key), actor) with
// one value column, used to run the shared conformance suites and a
// randomised simulation against the adapter's real statement building,
// validation, tokens and clock, without a cluster. It implements exactly
// the rules the per-actor stores rely on:
//
//   - every write carries an explicit timestamp (USING TIMESTAMP);
//   - a value with a greater timestamp wins; equal timestamps: the greater
//     value, as unsigned bytes, wins;
//   - a row delete at timestamp t shadows values written at t or below,
//     forever, and not values written above t;
//   - a single-partition batch is applied atomically and in isolation.
//
// The model accepts only the adapter's own statement texts, so a change to
// them fails here first.

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/counterkit/counterkit/crdt"
)

type modelCell struct {
	value []byte
	ts    int64
}

type rowModel struct {
	mu     sync.Mutex
	cells  map[string]map[string]modelCell // key -> actor -> newest value
	tombs  map[string]map[string]int64     // key -> actor -> newest row delete
	reads  int
	writes int // statements or batches sent
}

func newRowModel() *rowModel {
	return &rowModel{cells: map[string]map[string]modelCell{}, tombs: map[string]map[string]int64{}}
}

// attach routes r's I/O to the model.
func (m *rowModel) attach(r *actorRows) {
	r.read = m.read
	r.write = func(ctx context.Context, op Op, stmts []stmt) error { return m.write(ctx, r, op, stmts) }
}

func (m *rowModel) read(ctx context.Context, r *actorRows, key string) ([]actorRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	var out []actorRow
	for actor, c := range m.cells[key] {
		if c.ts > m.tombs[key][actor] {
			out = append(out, actorRow{actor: crdt.ActorID(actor), value: bytes.Clone(c.value), ts: c.ts})
		}
	}
	return out, nil
}

func (m *rowModel) write(ctx context.Context, r *actorRows, op Op, stmts []stmt) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	if len(stmts) == 0 {
		return nil
	}
	// Check the whole batch before applying any of it.
	key := ""
	for i, s := range stmts {
		var k string
		switch s.cql {
		case r.insertCQL():
			if len(s.args) != 4 {
				return fmt.Errorf("model: insert with %d args", len(s.args))
			}
			k = s.args[0].(string)
		case r.deleteCQL():
			if len(s.args) != 3 {
				return fmt.Errorf("model: delete with %d args", len(s.args))
			}
			k = s.args[1].(string)
		default:
			return fmt.Errorf("model: unexpected statement %q", s.cql)
		}
		if i > 0 && k != key {
			return fmt.Errorf("model: batch spans partitions %q and %q", key, k)
		}
		key = k
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	for _, s := range stmts {
		if s.cql == r.insertCQL() {
			actor, value, ts := s.args[1].(string), s.args[2].([]byte), s.args[3].(int64)
			if m.cells[key] == nil {
				m.cells[key] = map[string]modelCell{}
			}
			old, ok := m.cells[key][actor]
			if !ok || ts > old.ts || (ts == old.ts && bytes.Compare(value, old.value) > 0) {
				m.cells[key][actor] = modelCell{value: bytes.Clone(value), ts: ts}
			}
			continue
		}
		ts, actor := s.args[0].(int64), s.args[2].(string)
		if m.tombs[key] == nil {
			m.tombs[key] = map[string]int64{}
		}
		m.tombs[key][actor] = max(m.tombs[key][actor], ts)
	}
	return nil
}

// counts returns the statements (or batches) written and the reads made.
func (m *rowModel) counts() (reads, writes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.writes
}
