package cassandra

// A model of how Cassandra stores a table with one partition key column,
// one clustering column and one value column, driven by the CQL text the
// adapter sends, its tables made from the CREATE TABLE statements
// CreateSchema sends (createTablesFrom). It lets the stores run in CI, with their real statement
// building, validation, tokens, paging and clock, against the rules they
// rely on:
//
//   - every write carries an explicit timestamp (USING TIMESTAMP);
//   - a value with a greater timestamp wins; equal timestamps: the greater
//     value, as unsigned bytes, wins;
//   - a delete (row, range or partition) at timestamp t shadows values
//     written at t or below, forever, and not values written above t;
//   - clustering order is unsigned byte order (blob, and text as UTF-8);
//   - a batch is applied whole, and fails whole when one partition's part
//     of it is above max_mutation_size (16 MiB, half of 4.0's default 32
//     MiB commit log segment): 4.0's coordinator does not check it, the
//     replica's commit log refuses the mutation (CommitLog.add) and the
//     coordinator answers a write failure, not an invalid request;
//   - a read of one page returns at most pageSize rows and a paging state
//     when the page is full, and fails as the driver does
//     (gocql.ErrFrameTooBig) when its rows pass the driver's 256 MiB frame;
//   - a batch over more than one partition above
//     batch_size_fail_threshold_in_kb (50 KiB) is refused whole ("Batch too
//     large");
//   - a table that does not exist is refused ("unconfigured table");
//   - a write or read is refused, in Cassandra 4.0's words, when it binds
//     an empty partition key ("Key may not be empty"), a partition key or
//     the clustering value of a row write above 65535 bytes ("Key length
//     of N is longer than maximum of 65535"), a text value that is not
//     UTF-8 ("String didn't validate."), or null to a key column compared
//     by = ("Invalid null value in condition for column c");
//   - a read at ANY, and a write that is not a batch at SERIAL or
//     LOCAL_SERIAL, are refused ("ANY ConsistencyLevel is only supported
//     for writes", "You must use conditional updates for serializable
//     writes": ConsistencyLevel.validateForRead and validateForWrite);
//   - the cluster is one node: system_schema.keyspaces gives every
//     keyspace SimpleStrategy at RF 1 (a test may raise it), a request
//     waits for the replicas its level asks of that factor (blockFor) and
//     one is alive, so at RF 1 TWO and THREE are unavailable, and at RF 3
//     QUORUM, LOCAL_QUORUM and ALL too;
//   - requests go through the driver's retry loop (drive), and, when the
//     context has a deadline, take time both ways, so a deadline can pass
//     before a write lands or after;
//   - an INSERT ... USING TIMESTAMP ? AND TTL ? with a TTL above 0 writes
//     a cell that expires at the node's second of the write plus the TTL
//     (localExpirationTime = nowInSeconds + ttl) and is not live from
//     that second on (AbstractCell.isLive: nowInSec < localDeletionTime):
//     a read no longer returns it, and scans it as one tombstone. The
//     node's clock, in whole seconds (truncated), is its own: the clock
//     (Options.Now) of the DB the model was made with, whatever the clock
//     of the DB whose request it serves, so a test moves the server's
//     time with that clock, and a client whose clock is skewed does not
//     change what the server decides. An expired cell keeps its timestamp and shadows a
//     write below it; of two cells with equal timestamps an expiring one
//     beats one that does not expire, the later expiry beats the earlier
//     (Cells.reconcile, CASSANDRA-14592), and then the greater value.
//     A TTL of 0 is none; a negative TTL, one above 630720000 seconds,
//     and one taking the cell past 2038-01-19 (4.0's expiration date
//     overflow policy, REJECT by default) are refused in 4.0's words
//     (Attributes.getTimeToLive).
//
// The model interprets the statements (column lists, placeholders, WHERE
// restrictions) rather than matching them against the adapter's own text,
// so a statement that binds its values in the wrong order, or that
// Cassandra would refuse (a range restriction on a partition key, a
// restriction on a non-key column), fails here.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
)

type modelCell struct {
	value []byte
	ts    int64
	// expires is the cell's localExpirationTime in Unix seconds: it is
	// live before that second; 0 when it does not expire.
	expires int64
}

// live reports whether the cell is live at the node's second now.
func (c modelCell) live(now int64) bool { return c.expires == 0 || now < c.expires }

// wins reports whether c is kept over o, a cell of the same row and
// column written later, as Cassandra reconciles them (Cells.reconcile):
// the greater timestamp; at equal timestamps an expiring cell over one
// that does not expire, the later expiry, then the greater value.
func (c modelCell) wins(o modelCell) bool {
	switch {
	case c.ts != o.ts:
		return c.ts > o.ts
	case (c.expires != 0) != (o.expires != 0):
		return c.expires != 0
	case c.expires != o.expires:
		return c.expires > o.expires
	}
	return bytes.Compare(c.value, o.value) >= 0
}

type modelRange struct {
	lo, hi []byte // nil: unbounded
	ts     int64
}

type modelPartition struct {
	cells  map[string]modelCell
	sorted []string // cells' keys in order; nil after a change
	points map[string]int64
	ranges []modelRange // none inside another at least as new
	drop   int64
}

// tombstonesIn counts the tombstones a read from from to last (inclusive;
// "": to the end) scans, as Cassandra 4.0 counts them: after merging, one
// per row tombstone and one per range tombstone marker (ReadCommand counts
// each marker it returns). So nothing the partition deletion supersedes is
// seen; a row tombstone that a range tombstone at least as new covers is
// not seen; a row tombstone under a cell written above it is not counted
// (the row has live data, or its expired cell is the one tombstone
// counted: applyToRow counts a row's deletion only when neither is so,
// and readAt counts expired cells); and the ranges are seen as the
// markers of their merged deletion: one where a deletion opens, closes or
// changes (an open and a close bound for a range alone, one shared bound
// where two touch, none for a range inside one at least as new).
func (p *modelPartition) tombstonesIn(from, last string) int {
	in := func(k string) bool { return k >= from && (last == "" || k <= last) }
	var ranges []modelRange
	bounds := []string{from}
	for _, r := range p.ranges {
		if r.ts > p.drop && (r.hi == nil || string(r.hi) > from) && (last == "" || r.lo == nil || string(r.lo) <= last) {
			ranges = append(ranges, r)
			for _, b := range [][]byte{r.lo, r.hi} {
				if b != nil && in(string(b)) {
					bounds = append(bounds, string(b))
				}
			}
		}
	}
	deletedAt := func(k string) (ts int64) { // the newest range holding k, 0 for none
		for _, r := range ranges {
			if r.holds(k) {
				ts = max(ts, r.ts)
			}
		}
		return ts
	}
	n := 0
	for k, ts := range p.points {
		if _, rewritten := p.cells[k]; ts > p.drop && in(k) && deletedAt(k) < ts && !rewritten {
			n++
		}
	}
	// A marker at each bound where the deletion in force changes: the
	// read's start opens what is in force there, its end closes it.
	slices.Sort(bounds)
	prev := int64(0)
	for _, b := range slices.Compact(bounds) {
		if d := deletedAt(b); d != prev {
			n, prev = n+1, d
		}
	}
	if prev != 0 {
		n++ // the close at the read's end
	}
	return n
}

// holds reports whether the range deletes the row key k.
func (r modelRange) holds(k string) bool {
	return (r.lo == nil || k >= string(r.lo)) && (r.hi == nil || k < string(r.hi))
}

// contains reports whether the range deletes every key o does.
func (r modelRange) contains(o modelRange) bool {
	return (r.lo == nil || o.lo != nil && string(o.lo) >= string(r.lo)) && (r.hi == nil || o.hi != nil && string(o.hi) <= string(r.hi))
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

// modelTable is one table: columns pk (partition key, text), ck
// (clustering column: text when ckText, else blob) and val (value, blob),
// named as in the adapter's schema.
type modelTable struct {
	name        string // quoted "ks"."table"
	pk, ck, val string
	ckText      bool
	parts       map[string]*modelPartition
}

type cqlModel struct {
	mu     sync.Mutex
	tables map[string]*modelTable
	// keyspaces holds the replication column of system_schema.keyspaces:
	// every keyspace of the model is SimpleStrategy at modelNodes.
	keyspaces map[string]map[string]string
	reads     int
	writes    int // statements or batches sent
	batches   []int
	// fail, when set, is returned by the next write instead of applying it.
	fail error
	// scanned is how many tombstones the last page read of a table
	// scanned.
	scanned int
	// now is the node's clock: it dates a TTL'd cell's expiry, decides
	// whether a cell is live, and checks a TTL against 2038.
	now func() time.Time
	// maxFrame is the largest page a read answers (0: driverMaxFrame);
	// a test lowers it to reach the refusal with small values.
	maxFrame int
}

// driverMaxFrame is the driver's largest frame (gocql v2 frame.go,
// maxFrameSize: 256 MiB): a page whose rows are larger is a frame the
// driver refuses to read (gocql.ErrFrameTooBig), whatever the server.
const driverMaxFrame = 256 << 20

// frameBytes is the size of a page's cells: the bytes of each blob and
// text, 8 for any other value (a frame's headers and metadata are not
// counted: a page refused here is refused by the driver too).
func frameBytes(rows [][]any) int {
	n := 0
	for _, r := range rows {
		for _, v := range r {
			switch v := v.(type) {
			case []byte:
				n += len(v)
			case string:
				n += len(v)
			default:
				n += 8
			}
		}
	}
	return n
}

// newCQLModel returns a model with db's tables; the node's clock is db's
// (Options.Now).
func newCQLModel(db *DB) *cqlModel {
	m := emptyModel(db)
	m.createTables(db)
	return m
}

// tombstones returns how many tombstones a read of partition pk scans, in
// every table.
func (m *cqlModel) tombstones(pk string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, t := range m.tables {
		if p := t.parts[pk]; p != nil {
			n += p.tombstonesIn("", "")
		}
	}
	return n
}

// emptyModel returns a model with no table; the node's clock is db's.
func emptyModel(db *DB) *cqlModel {
	return &cqlModel{tables: map[string]*modelTable{}, keyspaces: map[string]map[string]string{}, now: db.now}
}

// attach routes db's I/O (and so every store db hands out from now on) to
// the model.
func (m *cqlModel) attach(db *DB) {
	db.send = func(ctx context.Context, op Op, stmts []stmt) error { return m.driverSend(ctx, db, op, stmts) }
	db.openPage = func(ctx context.Context, op Op, cql string, args []any, pageSize int, state []byte) rowIter {
		return m.driverPage(ctx, db, op, cql, args, pageSize, state)
	}
}

// createTables adds db's two tables to the model from the statements
// CreateSchema sends (ddl), as CreateSchema does on a cluster; db's
// keyspace is created first if it is missing.
func (m *cqlModel) createTables(db *DB) {
	if err := m.createTablesFrom(db, ddl(db.tables)); err != nil {
		panic(err) // schema.go's statements are not a table the model plays
	}
}

// createTableRE matches the CREATE TABLE statements of schema.go: three
// columns, a partition key and a clustering column.
var createTableRE = regexp.MustCompile(`^CREATE TABLE IF NOT EXISTS ("[a-z0-9_]+"\."[a-z0-9_]+") \(\n` +
	`\t([a-z_]+) +([a-z]+),\n\t([a-z_]+) +([a-z]+),\n\t([a-z_]+) +([a-z]+),\n` +
	`\tPRIMARY KEY \(\(([a-z_]+)\), ([a-z_]+)\)\n\)$`)

// modelMaxName is the longest keyspace or table name Cassandra 4.0
// accepts (SchemaConstants.NAME_LENGTH).
const modelMaxName = 48

// createTablesFrom runs stmts, CREATE TABLE IF NOT EXISTS statements, in
// db's keyspace (created at RF 1 if missing). The model plays a table of
// three columns: a text partition key, a text or blob clustering column
// and a blob value; another statement is an error.
func (m *cqlModel) createTablesFrom(db *DB, stmts []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keyspaces[db.keyspace] == nil {
		m.keyspaces[db.keyspace] = map[string]string{
			"class":              "org.apache.cassandra.locator.SimpleStrategy",
			"replication_factor": fmt.Sprint(modelNodes),
		}
	}
	for _, s := range stmts {
		mm := createTableRE.FindStringSubmatch(s)
		if mm == nil {
			return fmt.Errorf("model: a table it does not play: %q", s)
		}
		// Cassandra refuses a name above SchemaConstants.NAME_LENGTH
		// (48) characters when the statement is validated.
		name := strings.Trim(mm[1][strings.Index(mm[1], `"."`)+2:], `"`)
		if len(name) > modelMaxName {
			return invalidRequest(fmt.Sprintf("Table name must not be empty, more than %d characters long, "+
				"or contain non-alphanumeric-underscore characters (got %q)", modelMaxName, name))
		}
		types := map[string]string{mm[2]: mm[3], mm[4]: mm[5], mm[6]: mm[7]}
		pk, ck := mm[8], mm[9]
		var val string
		for c := range types {
			if c != pk && c != ck {
				val = c
			}
		}
		if len(types) != 3 || pk == ck || types[pk] != "text" || types[val] != "blob" || types[ck] != "text" && types[ck] != "blob" {
			return fmt.Errorf("model: a table it does not play (a text partition key, a text or blob clustering column, a blob value): %q", s)
		}
		if m.tables[mm[1]] == nil {
			m.tables[mm[1]] = &modelTable{name: mm[1], pk: pk, ck: ck, val: val, ckText: types[ck] == "text", parts: map[string]*modelPartition{}}
		}
	}
	return nil
}

// modelSiblings returns db.Siblings() with its reads and writes on m.
func (m *cqlModel) siblings(db *DB) *Siblings {
	m.attach(db)
	return db.Siblings()
}

var (
	insertRE = regexp.MustCompile(`^INSERT INTO (\S+) \(([a-z, ]+)\) VALUES \(([?, ]+)\) USING TIMESTAMP \?( AND TTL \?)?$`)
	deleteRE = regexp.MustCompile(`^DELETE FROM (\S+) USING TIMESTAMP \? WHERE (.+)$`)
	selectRE = regexp.MustCompile(`^SELECT (.+) FROM (\S+) WHERE (.+)$`)
	condRE   = regexp.MustCompile(`^([a-z_]+) (=|>=|<|>|<=) \?$`)
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

// modelMaxKey is the longest partition key, and the longest clustering
// value of a row write, Cassandra 4.0 accepts: FBUtilities.MAX_UNSIGNED_SHORT.
const modelMaxKey = 65535

// boundBytes returns the bytes gocql sends for a value bound to a text or
// blob column, and whether it is sent as null (nil, or a nil []byte).
func boundBytes(v any) ([]byte, bool, error) {
	switch x := v.(type) {
	case nil:
		return nil, true, nil
	case string:
		return []byte(x), false, nil
	case []byte:
		return x, x == nil, nil
	}
	return nil, false, fmt.Errorf("model: value of type %T", v)
}

// bindKey checks a value bound to primary key column col (text or blob) by
// "=", or an INSERT's value for it, as Cassandra 4.0 does on binding: a text
// value must be UTF-8 (the bind marker's validation: "String didn't
// validate."), and the value may not be null (EQRestriction.appendTo).
func bindKey(col string, text bool, v any) (string, error) {
	b, null, err := boundBytes(v)
	switch {
	case err != nil:
		return "", err
	case text && !utf8.Valid(b):
		return "", invalidRequest("String didn't validate.")
	case null:
		return "", invalidRequest("Invalid null value in condition for column " + col)
	}
	return string(b), nil
}

// checkKeyLength refuses a key above modelMaxKey bytes: a partition key
// (QueryProcessor.validateKey, on writes and reads) or the clustering value
// of a row written or deleted (ModificationStatement.validateClustering).
func checkKeyLength(k string) error {
	if len(k) > modelMaxKey {
		return invalidRequest(fmt.Sprintf("Key length of %d is longer than maximum of %d", len(k), modelMaxKey))
	}
	return nil
}

// partitionKey binds the value of the table's partition key (text) and
// checks it as QueryProcessor.validateKey does: not empty, not above
// modelMaxKey bytes.
func (t *modelTable) partitionKey(v any) (string, error) {
	pk, err := bindKey(t.pk, true, v)
	if err != nil {
		return "", err
	}
	if pk == "" {
		return "", invalidRequest("Key may not be empty")
	}
	return pk, checkKeyLength(pk)
}

// clusteringKey binds a value of the table's clustering column by "=" (or
// an INSERT's): an empty value is a valid row key.
func (t *modelTable) clusteringKey(v any) (string, error) {
	ck, err := bindKey(t.ck, t.ckText, v)
	if err != nil {
		return "", err
	}
	return ck, checkKeyLength(ck)
}

// clusteringBound binds a slice bound (>=, <) on the clustering column:
// Cassandra 4.0 checks neither its length nor (the adapter never sends
// one) null, which the model leaves to be a fault.
func (t *modelTable) clusteringBound(v any) (string, error) {
	b, null, err := boundBytes(v)
	switch {
	case err != nil:
		return "", err
	case t.ckText && !utf8.Valid(b):
		return "", invalidRequest("String didn't validate.")
	case null:
		return "", fmt.Errorf("model: null bound on %s", t.ck)
	}
	return string(b), nil
}

// op is one parsed write, checked before a batch applies anything.
type modelOp func()

// modelMaxTTL is Cassandra's maximum TTL in seconds (Attributes.MAX_TTL,
// 20 years).
const modelMaxTTL = 630720000

// modelMaxExpiration is the last localExpirationTime Cassandra 4.0 can
// store (Integer.MAX_VALUE seconds, 2038-01-19T03:14:07Z): a TTL taking a
// cell past it is refused (ExpirationDateOverflowHandling, policy REJECT).
const modelMaxExpiration = math.MaxInt32

// checkTTL refuses a TTL bound at the node's second now as Cassandra 4.0
// does (Attributes.getTimeToLive, then
// ExpirationDateOverflowHandling.maybeApplyExpirationDateOverflowPolicy
// with the default policy) for a write to table t.
func (t *modelTable) checkTTL(ttl int, now int64) error {
	switch {
	case ttl < 0:
		return invalidRequest(fmt.Sprintf("A TTL must be greater or equal to 0, but was %d", ttl))
	case ttl > modelMaxTTL:
		return invalidRequest(fmt.Sprintf("ttl is too large. requested (%d) maximum (%d)", ttl, modelMaxTTL))
	case ttl > 0 && now+int64(ttl) > modelMaxExpiration:
		return invalidRequest(fmt.Sprintf("Request on table %s with ttl of %d seconds exceeds maximum supported expiration "+
			"date of 2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the expiration date overflow "+
			"policy or upgrade to a version where this limitation is fixed. See CASSANDRA-14092 for more details.",
			strings.ReplaceAll(t.name, `"`, ""), ttl))
	}
	return nil
}

// parseWrite parses and checks one write statement at the node's second
// now (Unix seconds), which dates the expiry of a cell written with a TTL.
// size is what Cassandra 4.0 counts for it in its partition's mutation
// (modelRowOverhead).
func (m *cqlModel) parseWrite(s stmt, now int64) (op modelOp, pk string, size int, err error) {
	if mm := insertRE.FindStringSubmatch(s.cql); mm != nil {
		t := m.tables[mm[1]]
		cols := strings.Split(mm[2], ", ")
		nargs := 4
		if mm[4] != "" {
			nargs = 5
		}
		if t == nil || len(cols) != 3 || strings.Count(mm[3], "?") != 3 || len(s.args) != nargs {
			return nil, "", 0, fmt.Errorf("model: bad insert %q with %d values", s.cql, len(s.args))
		}
		vals := map[string]any{}
		for i, c := range cols {
			if c != t.pk && c != t.ck && c != t.val {
				return nil, "", 0, invalidRequest("Undefined column name " + c)
			}
			vals[c] = s.args[i]
		}
		// Checked in Cassandra's order: the partition key, then the
		// clustering value.
		pk, err = t.partitionKey(vals[t.pk])
		if err != nil {
			return nil, "", 0, err
		}
		ck, err := t.clusteringKey(vals[t.ck])
		if err != nil {
			return nil, "", 0, err
		}
		v, ok := vals[t.val].([]byte)
		ts, ok2 := s.args[3].(int64)
		if !ok || !ok2 || len(vals) != 3 {
			return nil, "", 0, fmt.Errorf("model: insert values %v", s.args)
		}
		cell := modelCell{value: bytes.Clone(v), ts: ts}
		size = modelLen(vals[t.ck]) + len(v) + modelRowOverhead
		if nargs == 5 {
			ttl, ok := s.args[4].(int)
			if !ok {
				return nil, "", 0, fmt.Errorf("model: TTL of type %T", s.args[4])
			}
			if err := t.checkTTL(ttl, now); err != nil {
				return nil, "", 0, err
			}
			if ttl > 0 {
				cell.expires = now + int64(ttl)
				size += modelExpiringOverhead
			}
		}
		return func() {
			p := t.part(pk)
			if p.shadowed(ck, ts) {
				return
			}
			if old, ok := p.cells[ck]; ok && old.wins(cell) {
				return
			}
			if _, ok := p.cells[ck]; !ok {
				p.sorted = nil
			}
			p.cells[ck] = cell
		}, pk, size, nil
	}
	if mm := deleteRE.FindStringSubmatch(s.cql); mm != nil {
		t := m.tables[mm[1]]
		if t == nil || len(s.args) < 2 {
			return nil, "", 0, fmt.Errorf("model: bad delete %q", s.cql)
		}
		ts, ok := s.args[0].(int64)
		if !ok {
			return nil, "", 0, fmt.Errorf("model: delete timestamp %T", s.args[0])
		}
		cs, err := conds(mm[2], s.args[1:])
		if err != nil {
			return nil, "", 0, err
		}
		if cs[0].col != t.pk || cs[0].op != "=" {
			return nil, "", 0, fmt.Errorf("model: delete must restrict %s by =, got %q", t.pk, mm[2])
		}
		pk, err = t.partitionKey(cs[0].val)
		if err != nil {
			return nil, "", 0, err
		}
		r := modelRange{ts: ts}
		point, bounded := "", false
		for _, c := range cs[1:] {
			if c.col != t.ck {
				return nil, "", 0, fmt.Errorf("model: restriction on %s", c.col)
			}
			bind := t.clusteringBound
			if c.op == "=" {
				bind = t.clusteringKey
			}
			v, err := bind(c.val)
			if err != nil {
				return nil, "", 0, err
			}
			size += modelLen(c.val)
			switch c.op {
			case "=":
				size += modelRowDeleteOverhead
				if len(cs) != 2 {
					return nil, "", 0, fmt.Errorf("model: = and a range on %s", t.ck)
				}
				point, bounded = v, true
			case ">=":
				r.lo = []byte(v)
			case "<":
				r.hi = []byte(v)
			default:
				return nil, "", 0, fmt.Errorf("model: operator %s not used by the adapter", c.op)
			}
		}
		if !bounded && len(cs) > 1 {
			size += modelRangeOverhead
		}
		return func() {
			p := t.part(pk)
			switch {
			case bounded:
				p.points[point] = max(p.points[point], ts)
				if c, ok := p.cells[point]; ok && p.shadowed(point, c.ts) {
					delete(p.cells, point)
					p.sorted = nil
				}
				return // it shadows no other cell
			case len(cs) == 1:
				p.drop = max(p.drop, ts)
			default:
				// A range inside one at least as new is gone after
				// merging, as in Cassandra's reads and compactions.
				if !slices.ContainsFunc(p.ranges, func(o modelRange) bool { return o.ts >= r.ts && o.contains(r) }) {
					p.ranges = slices.DeleteFunc(p.ranges, func(o modelRange) bool { return r.ts >= o.ts && r.contains(o) })
					p.ranges = append(p.ranges, r)
				}
			}
			for ck, c := range p.cells {
				if p.shadowed(ck, c.ts) {
					delete(p.cells, ck)
					p.sorted = nil
				}
			}
		}, pk, size, nil
	}
	return nil, "", 0, fmt.Errorf("model: unexpected write %q", s.cql)
}

func (t *modelTable) part(pk string) *modelPartition {
	p := t.parts[pk]
	if p == nil {
		p = &modelPartition{cells: map[string]modelCell{}, points: map[string]int64{}}
		t.parts[pk] = p
	}
	return p
}

// modelMaxMutation is Cassandra 4.0's default max_mutation_size, which
// 4.0 checks only where a replica writes its commit log.
const modelMaxMutation = 16 << 20

// modelBatchFail is Cassandra 4.0's default batch_size_fail_threshold_in_kb
// (50 KiB): a batch over more than one partition whose mutations add up to
// more is refused with "Batch too large" (BatchStatement.verifyBatchSize).
const modelBatchFail = 50 << 10

// modelTombstoneFail is Cassandra 4.0's default tombstone_failure_threshold:
// a read that scans more tombstones is aborted (TombstoneOverwhelmingException,
// a read failure to the client).
const modelTombstoneFail = 100_000

// What a write adds to its partition's mutation besides its clustering
// and value bytes, as Cassandra 4.0 sizes a batch (IMutation.dataSize, the
// sum of PartitionUpdate.dataSize): a written row counts its liveness
// timestamp (8, 16 with a TTL), its row deletion time (12, even when live)
// and its cell's timestamp, TTL and local deletion time (16); a deleted
// row its liveness (8) and deletion time (12); a range tombstone its
// deletion time (12); and every partition of the batch its partition
// deletion (12). Cassandra 3.x counted only the cells (16 a row), which
// let the model take batches 4.0 refuses. Partitions.Apply keeps a batch
// over several partitions under store.MaxSpanningBatchBytes, counting
// store.SpanningOverhead a mutation, which stays under 4.0's count
// (TestIntegrationSpanningBatchWorstCase).
const (
	modelRowOverhead       = 36
	modelExpiringOverhead  = 8
	modelRowDeleteOverhead = 20
	modelRangeOverhead     = 12
	modelPartitionOverhead = 12
)

// modelLen is the length of a bound key value: blob or text.
func modelLen(v any) int {
	switch v := v.(type) {
	case []byte:
		return len(v)
	case string:
		return len(v)
	}
	return 0
}

// modelNodes is the model cluster's size and replication factor: one node,
// as the integration keyspace (SimpleStrategy, RF 1) on one server.
const modelNodes = 1

// modelLatency is how long a request takes to reach the node, and its
// answer to come back, when the caller's context has a deadline; without
// one the model answers at once. A deadline that passes before the request
// arrives leaves it unapplied, one that passes on the way back leaves it
// applied: the driver reports the context's error either way.
const modelLatency = 100 * time.Microsecond

// sessionRetry is the retry policy of the integration harness's session
// (harness_test.go), which the model applies to DBs without their own.
var sessionRetry gocql.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}

// modelFault is a statement the model cannot interpret: a bug in the
// adapter or the model, reported as it is rather than as a driver error.
type modelFault struct{ err error }

func (f *modelFault) Error() string { return f.err.Error() }
func (f *modelFault) Unwrap() error { return f.err }

// blockFor returns how many replicas a request at c waits for in a
// SimpleStrategy keyspace at replication factor rf
// (ConsistencyLevel.blockFor: quorums are rf/2+1, LOCAL_QUORUM and
// EACH_QUORUM included, ALL is rf).
func blockFor(c gocql.Consistency, rf int) int {
	switch c {
	case gocql.Two:
		return 2
	case gocql.Three:
		return 3
	case gocql.Quorum, gocql.LocalQuorum, gocql.EachQuorum, gocql.Serial, gocql.LocalSerial:
		return rf/2 + 1
	case gocql.All:
		return rf
	}
	return 1 // ANY, ONE, LOCAL_ONE
}

// modelQuery is the gocql.RetryableQuery the model hands a retry policy.
type modelQuery struct {
	ctx      context.Context
	attempts int
	cons     gocql.Consistency
}

func (q *modelQuery) Attempts() int                      { return q.attempts }
func (q *modelQuery) SetConsistency(c gocql.Consistency) { q.cons = c }
func (q *modelQuery) GetConsistency() gocql.Consistency  { return q.cons }
func (q *modelQuery) Context() context.Context           { return q.ctx }

// drive runs attempt as gocql's query executor does on a one-node cluster
// (queryExecutor.do): a context error ends at once; otherwise the retry
// policy (db's, or the session's) decides: Retry resends to the same node,
// RetryNextHost ends (there is no other node), Ignore reports success,
// Rethrow ends. It returns the last error and the number of attempts.
func (m *cqlModel) drive(ctx context.Context, db *DB, op Op, attempt func(gocql.Consistency) error) (int, error) {
	policy := db.retry
	if policy == nil {
		policy = sessionRetry
	}
	q := &modelQuery{ctx: ctx, cons: db.cons[op]}
	for {
		q.attempts++
		err := attempt(q.cons)
		var fault *modelFault
		if err == nil || errors.As(err, &fault) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return q.attempts, err
		}
		reached := !policy.Attempt(q)
		switch policy.GetRetryType(err) {
		case gocql.Retry:
		case gocql.Ignore:
			return q.attempts, nil
		default: // RetryNextHost: no other node; Rethrow
			return q.attempts, err
		}
		if reached {
			return q.attempts, err
		}
	}
}

// travel waits modelLatency when ctx has a deadline, and returns ctx's
// error if it is done by then.
func travel(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		return ctx.Err()
	}
	t := time.NewTimer(modelLatency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var tableRE = regexp.MustCompile(`(?:INTO|FROM) ("[a-z0-9_]+"\."([a-z0-9_]+)")`)

// checkTable refuses cql when the table it names does not exist: the
// prepare fails. system_schema.keyspaces exists.
func (m *cqlModel) checkTable(cql string) error {
	mm := tableRE.FindStringSubmatch(cql)
	if mm == nil {
		return &modelFault{fmt.Errorf("model: no table in %q", cql)}
	}
	if mm[1] == modelKeyspacesTable {
		return nil
	}
	m.mu.Lock()
	t := m.tables[mm[1]]
	m.mu.Unlock()
	if t == nil {
		return invalidRequest("unconfigured table " + mm[2])
	}
	return nil
}

// checkReadLevel refuses a read at ANY, as Cassandra 4.0 does before
// building the read (SelectStatement.execute calls
// ConsistencyLevel.validateForRead: "ANY ConsistencyLevel is only
// supported for writes").
func checkReadLevel(cons gocql.Consistency) error {
	if cons == gocql.Any {
		return invalidRequest("ANY ConsistencyLevel is only supported for writes")
	}
	return nil
}

// checkWriteLevel refuses a statement that is not conditional at SERIAL
// or LOCAL_SERIAL, as Cassandra 4.0 does before building its mutations
// (ModificationStatement.executeWithoutCondition calls
// ConsistencyLevel.validateForWrite: "You must use conditional updates for
// serializable writes"). A batch is not checked: BatchStatement.execute
// does not call validateForWrite.
func checkWriteLevel(stmts []stmt, cons gocql.Consistency) error {
	if len(stmts) == 1 && (cons == gocql.Serial || cons == gocql.LocalSerial) {
		return invalidRequest("You must use conditional updates for serializable writes")
	}
	return nil
}

// checkReplicas refuses a request at cons on a keyspace at replication
// factor rf needing more replicas than are alive: the node's one replica
// (a keyspace at RF 3 on one node still has one replica of each
// partition). Cassandra checks it after building the request's mutations
// or read commands, so after the checks of its bound values.
func checkReplicas(cons gocql.Consistency, rf int) error {
	alive := min(rf, modelNodes)
	if n := blockFor(cons, rf); n > alive {
		return &gocql.RequestErrUnavailable{Consistency: cons, Required: n, Alive: alive}
	}
	return nil
}

// replicationFactorOf returns the replication factor of the keyspace of
// table (a quoted "ks"."table") as system_schema.keyspaces gives it; the
// caller holds m.mu. system_schema is local to the node (RF 1).
func (m *cqlModel) replicationFactorOf(table string) (int, error) {
	ks, _, _ := strings.Cut(strings.TrimPrefix(table, `"`), `"`)
	if ks == "system_schema" {
		return 1, nil
	}
	rep, ok := m.keyspaces[ks]
	if !ok {
		return 0, fmt.Errorf("model: no keyspace %q", ks)
	}
	rf := replicationFactor(rep)
	if rf < 1 {
		return 0, fmt.Errorf("model: keyspace %q with replication %v", ks, rep)
	}
	return rf, nil
}

// asFault returns err as the node's refusal when it is one (an
// InvalidRequest of the value checks), and as a modelFault otherwise.
func asFault(err error) error {
	var inv *gocql.RequestErrInvalid
	if err == nil || errors.As(err, &inv) {
		return err
	}
	var fault *modelFault
	if errors.As(err, &fault) {
		return err
	}
	return &modelFault{err}
}

// driverSend is db.send on the model: the driver's attempts (drive), each
// counted in ctx (counting) as the session's observer counts it, and the
// outcome mapped as sessionSend maps the driver's.
func (m *cqlModel) driverSend(ctx context.Context, db *DB, op Op, stmts []stmt) error {
	if !op.isWrite() {
		return fmt.Errorf("model: write under read op %v", op)
	}
	attempts, err := m.drive(ctx, db, op, func(cons gocql.Consistency) error {
		if c, _ := ctx.Value(callsKey{}).(*calls); c != nil {
			if len(stmts) == 1 {
				c.query(stmts[0].cql, stmts[0].args)
			} else {
				all := make([]string, len(stmts))
				for i, s := range stmts {
					all[i] = s.cql
				}
				c.batch(all)
			}
		}
		if err := travel(ctx); err != nil {
			return err
		}
		if err := m.sendAt(stmts, cons, m.now()); err != nil {
			return err
		}
		return travel(ctx)
	})
	var fault *modelFault
	if errors.As(err, &fault) {
		return fault.err
	}
	return wrapWrite(op.String(), err, attempts, batchlogged(stmts))
}

// send is one attempt of a write at the node: checks, then the statements
// applied as one batch, or refused whole. The checks run in Cassandra
// 4.0's order: the tables (at prepare), the level of a single statement
// (checkWriteLevel), each statement's bound values (as its mutations are
// built), the batch size (BatchStatement.verifyBatchSize), the replicas
// (StorageProxy), the mutation size.
func (m *cqlModel) send(stmts []stmt, cons gocql.Consistency) error {
	return m.sendAt(stmts, cons, m.now())
}

// sendAt is send with the node's clock at now.
func (m *cqlModel) sendAt(stmts []stmt, cons gocql.Consistency, now time.Time) error {
	for _, s := range stmts {
		if err := m.checkTable(s.cql); err != nil {
			return err
		}
	}
	if err := checkWriteLevel(stmts, cons); err != nil {
		return err
	}
	ops := make([]modelOp, len(stmts))
	size, total := map[string]int{}, 0 // by partition key: one mutation each
	for i, s := range stmts {
		o, pk, n, err := m.parseWrite(s, now.Unix())
		if err != nil {
			return asFault(err)
		}
		if pk != s.key {
			return &modelFault{fmt.Errorf("model: statement names partition %q, writes %q", s.key, pk)}
		}
		ops[i] = o
		if _, ok := size[pk]; !ok {
			size[pk] = modelPartitionOverhead
			total += modelPartitionOverhead
		}
		size[pk] += n
		total += n
	}
	if batchlogged(stmts) && total > modelBatchFail {
		return invalidRequest("Batch too large")
	}
	m.mu.Lock()
	rf, err := m.replicationFactorOf(tableRE.FindStringSubmatch(stmts[0].cql)[1])
	m.mu.Unlock()
	if err != nil {
		return &modelFault{err}
	}
	if err := checkReplicas(cons, rf); err != nil {
		return err
	}
	for _, n := range size {
		if n > modelMaxMutation {
			// The replica fails the write (StorageProxy.performLocally
			// reports the commit log's exception to the response
			// handler): a write failure with no replica's answer.
			wt := "SIMPLE"
			if len(size) > 1 {
				wt = "BATCH"
			}
			return &gocql.RequestErrWriteFailure{Consistency: cons, BlockFor: blockFor(cons, rf), NumFailures: 1, WriteType: wt}
		}
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
		case *map[string]string:
			*d = maps.Clone(v.(map[string]string))
		default:
			it.err = fmt.Errorf("model: scan into %T", dest[i])
			return false
		}
	}
	return true
}

func (it *modelIter) PageState() []byte { return it.state }
func (it *modelIter) Close() error      { return it.err }

// driverPage is db.openPage on the model: one page read through the
// driver's attempts (drive), each counted in ctx as the session's
// observer counts it.
func (m *cqlModel) driverPage(ctx context.Context, db *DB, op Op, cql string, args []any, pageSize int, state []byte) rowIter {
	var it *modelIter
	_, err := m.drive(ctx, db, op, func(cons gocql.Consistency) error {
		if c, _ := ctx.Value(callsKey{}).(*calls); c != nil {
			c.query(cql, args)
		}
		if err := travel(ctx); err != nil {
			return err
		}
		if err := m.checkTable(cql); err != nil {
			return err
		}
		rows, next, err := m.readAt(op, cql, args, pageSize, state, cons, m.now())
		if err != nil {
			return asFault(err)
		}
		if limit := cmp.Or(m.maxFrame, driverMaxFrame); frameBytes(rows) > limit {
			return gocql.ErrFrameTooBig // the driver's, reading the answer
		}
		it = &modelIter{rows: rows, state: next}
		return travel(ctx)
	})
	var fault *modelFault
	if errors.As(err, &fault) {
		return &modelIter{err: fault.err}
	}
	if err != nil {
		return &modelIter{err: err}
	}
	return it
}

// read is one page of a SELECT at cons, checked in Cassandra 4.0's order
// (SelectStatement.execute, then getSliceCommands): the level
// (checkReadLevel), the bound values, the partition key
// (QueryProcessor.validateKey), the replicas.
func (m *cqlModel) read(op Op, cql string, args []any, pageSize int, state []byte, cons gocql.Consistency) ([][]any, []byte, error) {
	return m.readAt(op, cql, args, pageSize, state, cons, m.now())
}

// readAt is read with the node's clock at now: a cell expired by then is
// not returned, and is scanned as a tombstone.
func (m *cqlModel) readAt(op Op, cql string, args []any, pageSize int, state []byte, cons gocql.Consistency, now time.Time) ([][]any, []byte, error) {
	if op.isWrite() {
		return nil, nil, fmt.Errorf("model: read under write op %v", op)
	}
	mm := selectRE.FindStringSubmatch(cql)
	if mm == nil {
		return nil, nil, fmt.Errorf("model: unexpected read %q", cql)
	}
	if err := checkReadLevel(cons); err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if mm[2] == modelKeyspacesTable {
		return m.readKeyspaces(mm[1], mm[3], args, cons)
	}
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
	pk, err := bindKey(t.pk, true, cs[0].val)
	if err != nil {
		return nil, nil, err
	}
	from := ""
	for _, c := range cs[1:] {
		if c.col != t.ck || c.op != ">=" {
			return nil, nil, fmt.Errorf("model: read restriction %s %s", c.col, c.op)
		}
		if from, err = t.clusteringBound(c.val); err != nil {
			return nil, nil, err
		}
	}
	if pk, err = t.partitionKey(pk); err != nil {
		return nil, nil, err
	}
	rf, err := m.replicationFactorOf(t.name)
	if err != nil {
		return nil, nil, err
	}
	if err := checkReplicas(cons, rf); err != nil {
		return nil, nil, err
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
	if p.sorted == nil {
		p.sorted = slices.Sorted(maps.Keys(p.cells))
	}
	sec := now.Unix()
	scanned := p.sorted[sort.SearchStrings(p.sorted, from):]
	keys := make([]string, 0, min(len(scanned), pageSize))
	expired := 0 // expired cells the page scans, each a tombstone
	var next []byte
	last := "" // the last key the page scans to ("": the partition's end)
	for _, k := range scanned {
		if !p.cells[k].live(sec) {
			expired++
			continue
		}
		keys = append(keys, k)
		if len(keys) == pageSize {
			last = k
			next = binary.BigEndian.AppendUint32(nil, uint32(len(last)))
			next = append(next, last...)
			break
		}
	}
	n := p.tombstonesIn(from, last) + expired
	m.scanned = n
	if n > modelTombstoneFail {
		return nil, nil, &gocql.RequestErrReadFailure{Consistency: gocql.Quorum, NumFailures: 1}
	}
	out := make([][]any, len(keys))
	for i, k := range keys {
		c := p.cells[k]
		for _, col := range cols {
			switch col {
			case t.ck:
				if t.ckText {
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

// modelKeyspacesTable is system_schema.keyspaces as a statement names it.
const modelKeyspacesTable = `"system_schema"."keyspaces"`

// readKeyspaces reads the replication of one keyspace from
// system_schema.keyspaces ("SELECT replication ... WHERE keyspace_name =
// ?"): one row, or none when the keyspace does not exist.
func (m *cqlModel) readKeyspaces(cols, where string, args []any, cons gocql.Consistency) ([][]any, []byte, error) {
	cs, err := conds(where, args)
	if err != nil {
		return nil, nil, err
	}
	if cols != "replication" || len(cs) != 1 || cs[0].col != "keyspace_name" || cs[0].op != "=" {
		return nil, nil, fmt.Errorf("model: read of system_schema.keyspaces: SELECT %s WHERE %s", cols, where)
	}
	ks, err := bindKey("keyspace_name", true, cs[0].val)
	if err != nil {
		return nil, nil, err
	}
	if err := checkReplicas(cons, 1); err != nil { // system_schema: LocalStrategy
		return nil, nil, err
	}
	m.reads++
	rep, ok := m.keyspaces[ks]
	if !ok {
		return nil, nil, nil
	}
	return [][]any{{maps.Clone(rep)}}, nil, nil
}

// counts returns the statements (or batches) written and the pages read.
func (m *cqlModel) counts() (reads, writes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.writes
}

// siblingRows returns the live rows of key in the siblings table, by
// actor, as the model holds them at the node's clock.
func (m *cqlModel) siblingRows(db *DB, key string) map[crdt.ActorID]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().Unix()
	out := map[crdt.ActorID]string{}
	if p := m.tables[db.tables[tableSiblings]].parts[key]; p != nil {
		for a, c := range p.cells {
			if c.live(now) {
				out[crdt.ActorID(a)] = string(c.value)
			}
		}
	}
	return out
}
