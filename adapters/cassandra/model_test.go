package cassandra

// A model of how Cassandra stores a table with one partition key column,
// one clustering column and one value column, driven by the CQL text the
// adapter sends. It lets the stores run in CI, with their real statement
// building, validation, tokens, paging and clock, against the rules they
// rely on:
//
//   - every write carries an explicit timestamp (USING TIMESTAMP);
//   - a value with a greater timestamp wins; equal timestamps: the greater
//     value, as unsigned bytes, wins;
//   - a delete (row, range or partition) at timestamp t shadows values
//     written at t or below, forever, and not values written above t;
//   - clustering order is unsigned byte order (blob, and text as UTF-8);
//   - a batch is applied whole, and refused whole when one partition's
//     part of it is above max_mutation_size (16 MiB, half of 4.0's default
//     32 MiB commit log segment), as the coordinator does;
//   - a read of one page returns at most pageSize rows and a paging state
//     when the page is full.
//
// The model interprets the statements (column lists, placeholders, WHERE
// restrictions) rather than matching them against the adapter's own text,
// so a statement that binds its values in the wrong order, or that
// Cassandra would refuse (a range restriction on a partition key, a
// restriction on a non-key column), fails here.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/counterkit/counterkit/crdt"
)

type modelCell struct {
	value []byte
	ts    int64
}

type modelRange struct {
	lo, hi []byte // nil: unbounded
	ts     int64
}

type modelPartition struct {
	cells  map[string]modelCell
	points map[string]int64
	ranges []modelRange
	drop   int64
}

func (p *modelPartition) shadowed(ck string, ts int64) bool {
	if p.drop >= ts || p.points[ck] >= ts && p.points[ck] != 0 {
		return true
	}
	for _, r := range p.ranges {
		if r.ts >= ts && (r.lo == nil || ck >= string(r.lo)) && (r.hi == nil || ck < string(r.hi)) {
			return true
		}
	}
	return false
}

// modelTable is one table: columns pk (partition key), ck (clustering
// column) and val (value), named as in the adapter's schema.
type modelTable struct {
	name        string // quoted "ks"."table"
	pk, ck, val string
	parts       map[string]*modelPartition
}

type cqlModel struct {
	mu      sync.Mutex
	tables  map[string]*modelTable
	reads   int
	writes  int // statements or batches sent
	batches []int
	// fail, when set, is returned by the next write instead of applying it.
	fail error
}

func newCQLModel(db *DB) *cqlModel {
	return &cqlModel{tables: map[string]*modelTable{
		db.tables[tableSiblings]:   {name: db.tables[tableSiblings], pk: "key", ck: "actor", val: "value", parts: map[string]*modelPartition{}},
		db.tables[tablePartitions]: {name: db.tables[tablePartitions], pk: "partition", ck: "key", val: "value", parts: map[string]*modelPartition{}},
	}}
}

// attach routes db's I/O (and so every store db hands out from now on) to
// the model.
func (m *cqlModel) attach(db *DB) {
	db.send = m.send
	db.openPage = m.page
}

// modelSiblings returns db.Siblings() with its reads and writes on m.
func (m *cqlModel) siblings(db *DB) *Siblings {
	m.attach(db)
	return db.Siblings()
}

var (
	insertRE = regexp.MustCompile(`^INSERT INTO (\S+) \(([a-z, ]+)\) VALUES \(([?, ]+)\) USING TIMESTAMP \?$`)
	deleteRE = regexp.MustCompile(`^DELETE FROM (\S+) USING TIMESTAMP \? WHERE (.+)$`)
	selectRE = regexp.MustCompile(`^SELECT (.+) FROM (\S+) WHERE (.+)$`)
	condRE   = regexp.MustCompile(`^([a-z]+) (=|>=|<|>|<=) \?$`)
)

type cond struct {
	col, op string
	val     any
}

// conds parses "a = ? AND b >= ?" binding args in order.
func conds(where string, args []any) ([]cond, error) {
	parts := strings.Split(where, " AND ")
	if len(parts) != len(args) {
		return nil, fmt.Errorf("model: %d restrictions, %d values", len(parts), len(args))
	}
	out := make([]cond, len(parts))
	for i, p := range parts {
		mm := condRE.FindStringSubmatch(p)
		if mm == nil {
			return nil, fmt.Errorf("model: restriction %q", p)
		}
		out[i] = cond{col: mm[1], op: mm[2], val: args[i]}
	}
	return out, nil
}

func asString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		if x == nil {
			return "", fmt.Errorf("model: null value")
		}
		return string(x), nil
	}
	return "", fmt.Errorf("model: value of type %T", v)
}

// op is one parsed write, checked before a batch applies anything.
type modelOp func()

func (m *cqlModel) parseWrite(s stmt) (modelOp, string, error) {
	if mm := insertRE.FindStringSubmatch(s.cql); mm != nil {
		t := m.tables[mm[1]]
		cols := strings.Split(mm[2], ", ")
		if t == nil || len(cols) != 3 || strings.Count(mm[3], "?") != 3 || len(s.args) != 4 {
			return nil, "", fmt.Errorf("model: bad insert %q with %d values", s.cql, len(s.args))
		}
		vals := map[string]any{}
		for i, c := range cols {
			vals[c] = s.args[i]
		}
		pk, err := asString(vals[t.pk])
		if err != nil {
			return nil, "", err
		}
		if pk == "" {
			return nil, "", fmt.Errorf("model: empty partition key")
		}
		ck, err := asString(vals[t.ck])
		if err != nil {
			return nil, "", err
		}
		v, ok := vals[t.val].([]byte)
		ts, ok2 := s.args[3].(int64)
		if !ok || !ok2 || len(vals) != 3 {
			return nil, "", fmt.Errorf("model: insert values %v", s.args)
		}
		return func() {
			p := t.part(pk)
			if p.shadowed(ck, ts) {
				return
			}
			if old, ok := p.cells[ck]; ok && (old.ts > ts || old.ts == ts && bytes.Compare(old.value, v) >= 0) {
				return
			}
			p.cells[ck] = modelCell{value: bytes.Clone(v), ts: ts}
		}, pk, nil
	}
	if mm := deleteRE.FindStringSubmatch(s.cql); mm != nil {
		t := m.tables[mm[1]]
		if t == nil || len(s.args) < 2 {
			return nil, "", fmt.Errorf("model: bad delete %q", s.cql)
		}
		ts, ok := s.args[0].(int64)
		if !ok {
			return nil, "", fmt.Errorf("model: delete timestamp %T", s.args[0])
		}
		cs, err := conds(mm[2], s.args[1:])
		if err != nil {
			return nil, "", err
		}
		if cs[0].col != t.pk || cs[0].op != "=" {
			return nil, "", fmt.Errorf("model: delete must restrict %s by =, got %q", t.pk, mm[2])
		}
		pk, err := asString(cs[0].val)
		if err != nil {
			return nil, "", err
		}
		r := modelRange{ts: ts}
		point, bounded := "", false
		for _, c := range cs[1:] {
			if c.col != t.ck {
				return nil, "", fmt.Errorf("model: restriction on %s", c.col)
			}
			v, err := asString(c.val)
			if err != nil {
				return nil, "", err
			}
			switch c.op {
			case "=":
				if len(cs) != 2 {
					return nil, "", fmt.Errorf("model: = and a range on %s", t.ck)
				}
				point, bounded = v, true
			case ">=":
				r.lo = []byte(v)
			case "<":
				r.hi = []byte(v)
			default:
				return nil, "", fmt.Errorf("model: operator %s not used by the adapter", c.op)
			}
		}
		return func() {
			p := t.part(pk)
			switch {
			case bounded:
				p.points[point] = max(p.points[point], ts)
			case len(cs) == 1:
				p.drop = max(p.drop, ts)
			default:
				p.ranges = append(p.ranges, r)
			}
			for ck, c := range p.cells {
				if p.shadowed(ck, c.ts) {
					delete(p.cells, ck)
				}
			}
		}, pk, nil
	}
	return nil, "", fmt.Errorf("model: unexpected write %q", s.cql)
}

func (t *modelTable) part(pk string) *modelPartition {
	p := t.parts[pk]
	if p == nil {
		p = &modelPartition{cells: map[string]modelCell{}, points: map[string]int64{}}
		t.parts[pk] = p
	}
	return p
}

// modelMaxMutation is Cassandra 4.0's default max_mutation_size.
const modelMaxMutation = 16 << 20

// modelRowOverhead approximates what a row adds to a mutation besides its
// key and value bytes (timestamps, flags, lengths).
const modelRowOverhead = 16

func (m *cqlModel) send(ctx context.Context, op Op, stmts []stmt) error {
	if !op.isWrite() {
		return fmt.Errorf("model: write under read op %v", op)
	}
	size := map[string]int{}
	for _, s := range stmts {
		size[s.key] += modelRowOverhead
		for _, a := range s.args {
			if b, ok := a.([]byte); ok {
				size[s.key] += len(b)
			}
		}
		if size[s.key] > modelMaxMutation {
			return wrapWrite(op.String(), invalidRequest(fmt.Sprintf("Rejected an oversized mutation (%d/%d) for keyspace: ks", size[s.key], modelMaxMutation)), 1, batchlogged(stmts))
		}
	}
	ops := make([]modelOp, len(stmts))
	for i, s := range stmts {
		o, pk, err := m.parseWrite(s)
		if err != nil {
			return err
		}
		if pk != s.key {
			return fmt.Errorf("model: statement names partition %q, writes %q", s.key, pk)
		}
		ops[i] = o
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		err := m.fail
		m.fail = nil
		return err
	}
	m.writes++
	m.batches = append(m.batches, len(stmts))
	for _, o := range ops {
		o()
	}
	return nil
}

// modelIter is one page of a read.
type modelIter struct {
	rows  [][]any
	state []byte
	err   error
}

func (it *modelIter) Scan(dest ...any) bool {
	if it.err != nil || len(it.rows) == 0 {
		return false
	}
	row := it.rows[0]
	it.rows = it.rows[1:]
	if len(dest) != len(row) {
		it.err = fmt.Errorf("model: scan into %d values, row has %d", len(dest), len(row))
		return false
	}
	for i, v := range row {
		switch d := dest[i].(type) {
		case *string:
			*d = v.(string)
		case *[]byte:
			*d = bytes.Clone(v.([]byte))
		case *int64:
			*d = v.(int64)
		default:
			it.err = fmt.Errorf("model: scan into %T", dest[i])
			return false
		}
	}
	return true
}

func (it *modelIter) PageState() []byte { return it.state }
func (it *modelIter) Close() error      { return it.err }

func (m *cqlModel) page(ctx context.Context, op Op, cql string, args []any, pageSize int, state []byte) rowIter {
	if err := ctx.Err(); err != nil {
		return &modelIter{err: err}
	}
	rows, next, err := m.read(op, cql, args, pageSize, state)
	return &modelIter{rows: rows, state: next, err: err}
}

func (m *cqlModel) read(op Op, cql string, args []any, pageSize int, state []byte) ([][]any, []byte, error) {
	if op.isWrite() {
		return nil, nil, fmt.Errorf("model: read under write op %v", op)
	}
	mm := selectRE.FindStringSubmatch(cql)
	if mm == nil {
		return nil, nil, fmt.Errorf("model: unexpected read %q", cql)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tables[mm[2]]
	if t == nil {
		return nil, nil, fmt.Errorf("model: unknown table %s", mm[2])
	}
	cs, err := conds(mm[3], args)
	if err != nil {
		return nil, nil, err
	}
	if cs[0].col != t.pk || cs[0].op != "=" {
		return nil, nil, fmt.Errorf("model: read must restrict %s by =", t.pk)
	}
	pk, err := asString(cs[0].val)
	if err != nil {
		return nil, nil, err
	}
	from := ""
	for _, c := range cs[1:] {
		if c.col != t.ck || c.op != ">=" {
			return nil, nil, fmt.Errorf("model: read restriction %s %s", c.col, c.op)
		}
		if from, err = asString(c.val); err != nil {
			return nil, nil, err
		}
	}
	if len(state) > 0 {
		// The paging state is the last key returned, behind a length.
		n := binary.BigEndian.Uint32(state)
		from = string(state[4:4+n]) + "\x00"
	}
	cols := strings.Split(mm[1], ", ")
	m.reads++
	p := t.parts[pk]
	if p == nil {
		return nil, nil, nil
	}
	keys := make([]string, 0, len(p.cells))
	for k := range p.cells {
		if k >= from {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var next []byte
	if len(keys) >= pageSize {
		keys = keys[:pageSize]
		last := keys[len(keys)-1]
		next = binary.BigEndian.AppendUint32(nil, uint32(len(last)))
		next = append(next, last...)
	}
	out := make([][]any, len(keys))
	for i, k := range keys {
		c := p.cells[k]
		for _, col := range cols {
			switch col {
			case t.ck:
				if t.ck == "actor" {
					out[i] = append(out[i], k)
				} else {
					out[i] = append(out[i], []byte(k))
				}
			case t.val:
				out[i] = append(out[i], c.value)
			case "WRITETIME(" + t.val + ")":
				out[i] = append(out[i], c.ts)
			default:
				return nil, nil, fmt.Errorf("model: selected column %q", col)
			}
		}
	}
	return out, next, nil
}

// counts returns the statements (or batches) written and the pages read.
func (m *cqlModel) counts() (reads, writes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.writes
}

// siblingRows returns the live rows of key in the siblings table, by
// actor, as the model holds them.
func (m *cqlModel) siblingRows(db *DB, key string) map[crdt.ActorID]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[crdt.ActorID]string{}
	if p := m.tables[db.tables[tableSiblings]].parts[key]; p != nil {
		for a, c := range p.cells {
			out[crdt.ActorID(a)] = string(c.value)
		}
	}
	return out
}
