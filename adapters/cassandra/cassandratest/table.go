package cassandratest

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// The storage rules, Cassandra 4.0's as the adapter's model states them
// (adapters/cassandra/model_test.go): every cell carries a write
// timestamp; a delete (row, range or partition) at t shadows cells written
// at t or below; of two cells of one row and column, the greater
// timestamp wins, then an expiring one over one that does not expire,
// then the later expiry, then the greater value as unsigned bytes; a cell
// with a TTL is not live from its expiry second on.

// colTypes are the CQL types a table the double creates may use.
var colTypes = map[string]datatype.DataType{
	"text": datatype.Varchar, "varchar": datatype.Varchar, "blob": datatype.Blob, "bigint": datatype.Bigint,
	"int": datatype.Int, "counter": datatype.Counter, "boolean": datatype.Boolean,
}

type column struct {
	name, typ string // typ as system_schema.columns names it
	kind      string // partition_key, clustering or regular
	pos       int    // -1 for a regular column
}

type keyspace struct {
	name        string
	replication map[string]string
	tables      map[string]*table
}

// rf is the keyspace's replication factor: SimpleStrategy's, or the sum
// of NetworkTopologyStrategy's data centers.
func (k *keyspace) rf() int {
	n := 0
	for opt, v := range k.replication {
		if opt == "class" {
			continue
		}
		f := 0
		for _, c := range v {
			if c < '0' || c > '9' {
				f = 0
				break
			}
			f = f*10 + int(c-'0')
		}
		n += f
	}
	return n
}

// table is one table: one partition key column, at most one clustering
// column, regular columns.
type table struct {
	ks, name string
	cols     []*column // declaration order
	byName   map[string]*column
	pk, ck   *column // ck is nil without a clustering column
	counter  bool    // its regular columns are counters
	parts    map[string]*partition
}

// ordered returns the columns in Cassandra's order for SELECT *: the
// partition key, the clustering column, the rest by name.
func (t *table) ordered() []*column {
	out := []*column{t.pk}
	if t.ck != nil {
		out = append(out, t.ck)
	}
	var rest []*column
	for _, c := range t.cols {
		if c.kind == "regular" {
			rest = append(rest, c)
		}
	}
	slices.SortFunc(rest, func(a, b *column) int { return strings.Compare(a.name, b.name) })
	return append(out, rest...)
}

func (t *table) part(pk string) *partition {
	p := t.parts[pk]
	if p == nil {
		p = &partition{rows: map[string]*row{}, points: map[string]int64{}}
		t.parts[pk] = p
	}
	return p
}

// sortKey maps a clustering value to a string whose byte order is the
// column's order: bytes for text and blob, signed order for int and bigint
// (the sign bit flipped).
func sortKey(typ string, v []byte) string {
	if (typ == "int" || typ == "bigint") && len(v) > 0 {
		v = bytes.Clone(v)
		v[0] ^= 0x80
	}
	return string(v)
}

// rawKey inverts sortKey.
func rawKey(typ, k string) []byte {
	return []byte(sortKey(typ, []byte(k)))
}

type cell struct {
	v   []byte // nil: a deleted cell (written as null)
	ts  int64
	exp int64 // expiry, Unix seconds (localExpirationTime); 0: none
}

func (c cell) live(now int64) bool { return c.v != nil && (c.exp == 0 || now < c.exp) }

// wins reports whether c is kept over o (Cells.reconcile, as the model
// states it; at equal timestamps a deletion wins over a value).
func (c cell) wins(o cell) bool {
	switch {
	case c.ts != o.ts:
		return c.ts > o.ts
	case (c.v == nil) != (o.v == nil):
		return c.v == nil
	case (c.exp != 0) != (o.exp != 0):
		return c.exp != 0
	case c.exp != o.exp:
		return c.exp > o.exp
	}
	return bytes.Compare(c.v, o.v) >= 0
}

// row holds a row's cells by column; "" is the row marker an INSERT
// writes (a row with only a live marker is live, its columns null).
type row struct{ cells map[string]cell }

// rng is a range deletion over sort keys; a nil bound is open.
type rng struct {
	lo, hi         []byte
	loIncl, hiIncl bool
	ts             int64
}

func (r rng) holds(k string) bool {
	switch {
	case r.lo != nil && (k < string(r.lo) || k == string(r.lo) && !r.loIncl):
		return false
	case r.hi != nil && (k > string(r.hi) || k == string(r.hi) && !r.hiIncl):
		return false
	}
	return true
}

// partition holds rows by sort key and the deletions that still shadow
// writes below them. Stored cells are never shadowed: a delete drops the
// cells it shadows, a write below a deletion is dropped.
type partition struct {
	rows    map[string]*row
	keys    []string // sorted keys of rows; nil after a change
	points  map[string]int64
	ranges  []rng
	drop    int64
	dropped bool
}

func (p *partition) shadowed(k string, ts int64) bool {
	if p.dropped && p.drop >= ts {
		return true
	}
	if d, ok := p.points[k]; ok && d >= ts {
		return true
	}
	return slices.ContainsFunc(p.ranges, func(r rng) bool { return r.ts >= ts && r.holds(k) })
}

// row returns row k, made empty if absent.
func (p *partition) row(k string) *row {
	r := p.rows[k]
	if r == nil {
		r = &row{cells: map[string]cell{}}
		p.rows[k] = r
		p.keys = nil
	}
	return r
}

// put writes c into column col of row k.
func (p *partition) put(k, col string, c cell) {
	if p.shadowed(k, c.ts) {
		return
	}
	r := p.row(k)
	if old, ok := r.cells[col]; ok && old.wins(c) {
		return
	}
	r.cells[col] = c
}

// add adds delta to counter column col of row k.
func (p *partition) add(k, col string, delta, ts int64) {
	if p.shadowed(k, ts) {
		return
	}
	r := p.row(k)
	old := r.cells[col]
	sum := delta
	if old.v != nil {
		sum += int64(be64(old.v))
	}
	r.cells[col] = cell{v: put64(uint64(sum)), ts: max(old.ts, ts)}
}

// deletePoint, deleteRange and deletePartition record a deletion at ts
// and drop the cells it shadows.
func (p *partition) deletePoint(k string, ts int64) {
	if d, ok := p.points[k]; !ok || d < ts {
		p.points[k] = ts
	}
	p.purge(func(rk string, cts int64) bool { return rk == k && ts >= cts })
}

func (p *partition) deleteRange(r rng) {
	p.ranges = append(p.ranges, r)
	keys := p.sorted()
	i := 0
	if r.lo != nil {
		i, _ = slices.BinarySearch(keys, string(r.lo))
	}
	var gone []string
	for _, k := range keys[i:] {
		if !r.holds(k) {
			if r.lo == nil || k > string(r.lo) {
				break // past hi: the keys are sorted
			}
			continue // lo itself, excluded
		}
		c := p.rows[k].cells
		maps.DeleteFunc(c, func(_ string, c cell) bool { return r.ts >= c.ts })
		if len(c) == 0 {
			gone = append(gone, k)
		}
	}
	for _, k := range gone {
		delete(p.rows, k)
		p.keys = nil
	}
}

func (p *partition) deletePartition(ts int64) {
	if !p.dropped || p.drop < ts {
		p.drop, p.dropped = ts, true
	}
	p.purge(func(_ string, cts int64) bool { return ts >= cts })
}

// purge drops the stored cells that a new deletion shadows: no stored cell
// is shadowed by an earlier one, so only the new one is checked (checking
// every deletion made a batch of n range deletes over n rows take n³
// steps: a minute at 3,000). deleteRange visits only the rows in its range.
func (p *partition) purge(shadows func(k string, ts int64) bool) {
	for k, r := range p.rows {
		maps.DeleteFunc(r.cells, func(_ string, c cell) bool { return shadows(k, c.ts) })
		if len(r.cells) == 0 {
			delete(p.rows, k)
			p.keys = nil
		}
	}
}

func (p *partition) sorted() []string {
	if p.keys == nil {
		p.keys = slices.Sorted(maps.Keys(p.rows))
	}
	return p.keys
}

func be64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func put64(v uint64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

func put32(v uint32) []byte { return put64(uint64(v))[4:] }
