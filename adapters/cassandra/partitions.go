package cassandra

import (
	"context"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
)

// MaxApplyMutations is the most mutations one BATCH message can hold: its
// statement count is a 16-bit number (gocql.BatchSizeMaximum). store.MaxBatch
// is below it, so store.CheckMutations refuses a longer batch first; Apply
// checks this bound too, writing nothing.
const MaxApplyMutations = gocql.BatchSizeMaximum

// Partitions implements store.Partitions on the partitions table: one
// Cassandra partition per store partition, rows clustered by a blob key
// (unsigned byte order), every mutation USING TIMESTAMP the caller's
// timestamp (README.md, "Statements"). Reads at store.ReadComplete run at
// OpPartitionReadComplete's level (ALL). Apply refuses what
// store.CheckMutations refuses and more than MaxApplyMutations mutations
// (crdt.ErrTooLarge, nothing sent). A Partitions is safe for concurrent
// use.
type Partitions struct {
	db *DB
}

var _ store.Partitions = (*Partitions)(nil)

// Partitions returns the DB's store.Partitions.
func (db *DB) Partitions() *Partitions { return &Partitions{db: db} }

func (p *Partitions) table() string { return p.db.tables[tablePartitions] }

// selectCQL reads a partition from its first row, or (from) from the
// first key ≥ a bound.
func (p *Partitions) selectCQL(from bool) string {
	if from {
		return fmt.Sprintf("SELECT key, value FROM %s WHERE partition = ? AND key >= ?", p.table())
	}
	return fmt.Sprintf("SELECT key, value FROM %s WHERE partition = ?", p.table())
}

// readStart validates a read and returns its operation (and so its
// consistency level).
func (p *Partitions) readStart(ctx context.Context, partition string, level store.Read) (Op, error) {
	if err := crdt.ValidateKey("partition key", partition); err != nil {
		return 0, err
	}
	op := OpPartitionRead
	switch level {
	case store.ReadAny:
	case store.ReadComplete:
		op = OpPartitionReadComplete
	default:
		return 0, fmt.Errorf("%w: unknown read level %d", crdt.ErrInvalidConfig, level)
	}
	if err := ctx.Err(); err != nil {
		return 0, &Error{Op: op.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	return op, nil
}

// scanRow reads the next row of iter into a fresh Row (the driver would
// reuse a non-nil buffer). Rows without a value are skipped.
func scanRow(iter rowIter) (store.Row, bool) {
	for {
		var key, value []byte
		if !iter.Scan(&key, &value) {
			return store.Row{}, false
		}
		if len(value) == 0 {
			continue
		}
		if key == nil {
			key = []byte{}
		}
		return store.Row{Key: key, Value: value}, true
	}
}

// Scan calls fn with the live rows of partition in key order, from the
// first key ≥ from, a page at a time (the first of at most
// storekit.FirstPage rows, as most scans stop early), until fn returns
// false or the rows run out.
func (p *Partitions) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	op, err := p.readStart(ctx, partition, level)
	if err != nil {
		return err
	}
	cql, args := p.selectCQL(false), []any{partition}
	if len(from) > 0 {
		cql, args = p.selectCQL(true), []any{partition, from}
	}
	var state []byte
	for page := min(p.db.pageSize, storekit.FirstPage); ; page = p.db.pageSize {
		iter := p.db.openPage(ctx, op, cql, args, page, state)
		for row, ok := scanRow(iter); ok; row, ok = scanRow(iter) {
			if !fn(row) {
				return wrapErr(op.String(), false, iter.Close())
			}
		}
		state = append([]byte(nil), iter.PageState()...)
		if err := iter.Close(); err != nil {
			return wrapErr(op.String(), false, err)
		}
		if len(state) == 0 {
			return nil
		}
	}
}

// Snapshot returns every live row of partition in key order, read as one
// page of limit+1 rows, or an error wrapping crdt.ErrTooLarge when the
// partition has more than limit rows (or more than fit in one page: at
// most math.MaxInt32-1). A negative limit wraps crdt.ErrInvalidConfig.
func (p *Partitions) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	if limit < 0 {
		return nil, fmt.Errorf("%w: snapshot limit %d", crdt.ErrInvalidConfig, limit)
	}
	op, err := p.readStart(ctx, partition, level)
	if err != nil {
		return nil, err
	}
	limit = min(limit, maxPageRows-1)
	iter := p.db.openPage(ctx, op, p.selectCQL(false), []any{partition}, limit+1, nil)
	return readPage(iter, op, fmt.Sprintf("partition %q", truncate(partition, 40)), limit, scanRow)
}

// readPage reads the rows of a one-page read of limit+1 rows with scan; more
// than limit rows, or rows that did not fit in the page, are refused with an
// error wrapping crdt.ErrTooLarge (what names the key).
func readPage[T any](iter rowIter, op Op, what string, limit int, scan func(rowIter) (T, bool)) ([]T, error) {
	var out []T
	for row, ok := scan(iter); ok; row, ok = scan(iter) {
		if len(out) >= limit {
			_ = iter.Close()
			return nil, fmt.Errorf("%w: %s has more than %d rows", crdt.ErrTooLarge, what, limit)
		}
		out = append(out, row)
	}
	more := len(iter.PageState()) > 0
	if err := iter.Close(); err != nil {
		return nil, wrapErr(op.String(), false, err)
	}
	if more {
		return nil, fmt.Errorf("%w: %s did not fit in one page of %d rows", crdt.ErrTooLarge, what, limit+1)
	}
	return out, nil
}

// mutationStmt builds the statement of one validated mutation. Keys are
// bound as non-nil slices: gocql sends a nil []byte as null, which no
// clustering column accepts, while an empty key is a valid row key.
func (p *Partitions) mutationStmt(m store.Mutation) stmt {
	key := m.Key
	if key == nil {
		key = []byte{}
	}
	t := p.table()
	s := stmt{key: m.Partition}
	switch m.Op {
	case store.OpPut:
		s.cql = fmt.Sprintf("INSERT INTO %s (partition, key, value) VALUES (?, ?, ?) USING TIMESTAMP ?", t)
		s.args = []any{m.Partition, key, m.Value, m.Timestamp}
	case store.OpDelete:
		s.cql = fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE partition = ? AND key = ?", t)
		s.args = []any{m.Timestamp, m.Partition, key}
	case store.OpDeleteRange, store.OpDeletePartition:
		// Each bound of a range is omitted when absent; a range with
		// neither is a partition delete.
		where, args := "", []any{m.Timestamp, m.Partition}
		if m.Op == store.OpDeleteRange && len(m.Key) > 0 {
			where, args = where+" AND key >= ?", append(args, key)
		}
		if m.Op == store.OpDeleteRange && m.End != nil {
			where, args = where+" AND key < ?", append(args, m.End)
		}
		s.cql = fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE partition = ?%s", t, where)
		s.args = args
	}
	return s
}

// applyStmts validates muts and builds their statements, in order.
func (p *Partitions) applyStmts(muts []store.Mutation) ([]stmt, error) {
	if err := store.CheckMutations(muts); err != nil {
		return nil, fmt.Errorf("cassandra: apply: %w", err)
	}
	if len(muts) > MaxApplyMutations {
		return nil, fmt.Errorf("cassandra: apply: %w: batch of %d mutations, limit %d", crdt.ErrTooLarge, len(muts), MaxApplyMutations)
	}
	out := make([]stmt, len(muts))
	for i, m := range muts {
		out[i] = p.mutationStmt(m)
	}
	return out, nil
}

// Apply applies muts atomically: one statement, or one LOGGED batch. It
// never reads. An empty batch sends nothing.
func (p *Partitions) Apply(ctx context.Context, muts []store.Mutation) error {
	stmts, err := p.applyStmts(muts)
	if err != nil {
		return err
	}
	return p.db.write(ctx, OpPartitionApply, stmts)
}
