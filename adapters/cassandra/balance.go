package cassandra

import (
	"context"
	"fmt"
	"sort"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
)

// maxBalanceMutations bounds one Write. A merge writes one tombstone per row
// it covers plus a sum row, and later deletes as many, so twice
// balance.MaxRows (plus slack) is the most a well-behaved caller sends.
const maxBalanceMutations = 2*balance.MaxRows + 2

// BalanceStore implements balance.Store (seed 000's N/T/S tombstone log) on
// the balance table.
//
// Rows reads the whole partition as one page of a single-partition SELECT
// (automatic paging off): Cassandra applies a single-partition batch
// atomically and in isolation, and merging replica responses cell by cell
// keeps a batch whole, so the result is the consistent snapshot
// balance.Store requires. A partition that does not fit in one page is
// refused, never read in pieces. Rows are returned in balance.CompareRows
// order (sorted here: the version column is a uuid, whose order among
// versions with equal timestamps differs from timeuuid's), and the DB's
// clock is raised to the largest WRITETIME seen.
//
// Write stamps its statements, in order, with consecutive timestamps from
// that clock, so a merge's deletes always shadow the rows it read (even
// when writers' clocks run ahead), a rewrite replaces a row, and within one
// Write a later mutation of the same row wins, as if applied one by one.
// Write is one statement or one logged batch; a Write of N rows only (an
// increment) runs at OpBalanceIncrement's level, anything else at
// OpBalanceMergeWrite's.
//
// A BalanceStore is safe for concurrent use.
type BalanceStore struct {
	db    *DB
	table string
}

var _ balance.Store = (*BalanceStore)(nil)

// Balance returns the DB's tombstone-merge balance store.
func (db *DB) Balance() *BalanceStore { return &BalanceStore{db: db, table: db.tables[tableBalance]} }

// Rows returns every row of account in clustering order, or an error
// wrapping crdt.ErrTooLarge when there are more than balance.MaxRows.
func (b *BalanceStore) Rows(ctx context.Context, account string) ([]balance.Row, error) {
	if err := checkKey(account); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: OpBalanceRead.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	cql := fmt.Sprintf("SELECT updateid, type, version, row, WRITETIME(row) FROM %s WHERE id = ?", b.table)
	// One page, automatic paging off (see singlePage): a second page would
	// not belong to the same snapshot.
	iter := b.db.openPage(ctx, OpBalanceRead, balance.MaxRows, cql, []any{account})
	var (
		rows     []balance.Row
		updateID gocql.UUID
		kind     int8
		version  gocql.UUID
		blob     []byte
		ts       int64
		maxTS    int64
	)
	for iter.Scan(&updateID, &kind, &version, &blob, &ts) {
		if len(rows) >= balance.MaxRows {
			_ = iter.Close()
			return nil, fmt.Errorf("%w: account %q has more than %d rows", crdt.ErrTooLarge, truncateKey(account), balance.MaxRows)
		}
		var r balance.Row
		if err := r.UnmarshalBinary(blob); err != nil {
			_ = iter.Close()
			return nil, fmt.Errorf("cassandra: balance row (%s, %d, %s) of %q: %w", updateID, kind, version, truncateKey(account), err)
		}
		if r.UpdateID != balance.ID(updateID) || r.Kind != balance.Kind(kind) || r.Version != balance.ID(version) {
			_ = iter.Close()
			return nil, fmt.Errorf("%w: balance row key (%s, %d, %s) holds row %s", crdt.ErrCorruptEncoding, updateID, kind, version, r)
		}
		rows = append(rows, r)
		if ts > maxTS {
			maxTS = ts
		}
	}
	if err := closePage(iter, OpBalanceRead, func() error {
		return fmt.Errorf("%w: account %q did not fit in one page of %d rows", crdt.ErrTooLarge, truncateKey(account), balance.MaxRows+1)
	}); err != nil {
		return nil, err
	}
	b.db.clock.observe(maxTS)
	sort.SliceStable(rows, func(i, j int) bool { return balance.CompareRows(rows[i], rows[j]) < 0 })
	return rows, nil
}

// writeStmts validates every mutation and builds its statement; it reports
// whether they are all inserts of N rows.
func (b *BalanceStore) writeStmts(muts []balance.Mutation) ([]stmt, bool, error) {
	if len(muts) > maxBalanceMutations {
		return nil, false, fmt.Errorf("%w: %d balance mutations in one write, limit %d", crdt.ErrTooLarge, len(muts), maxBalanceMutations)
	}
	ins := fmt.Sprintf("INSERT INTO %s (id, updateid, type, version, row) VALUES (?, ?, ?, ?, ?) USING TIMESTAMP ?", b.table)
	del := fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE id = ? AND updateid = ? AND type = ? AND version = ?", b.table)
	out := make([]stmt, 0, len(muts))
	onlyN := true
	for _, m := range muts {
		if err := checkKey(m.Account); err != nil {
			return nil, false, err
		}
		r := m.Row
		if m.Delete {
			onlyN = false
			if err := r.UpdateID.Validate(); err != nil {
				return nil, false, err
			}
			switch r.Kind {
			case balance.KindNormal, balance.KindSum, balance.KindTombstone:
			default:
				return nil, false, fmt.Errorf("%w: delete of unknown row kind %d", crdt.ErrCorruptEncoding, byte(r.Kind))
			}
			out = append(out, stmt{cql: del, args: []any{int64(0), m.Account, gocql.UUID(r.UpdateID), int8(r.Kind), gocql.UUID(r.Version)}, key: m.Account})
			continue
		}
		blob, err := r.MarshalBinary() // validates the row
		if err != nil {
			return nil, false, err
		}
		if r.Kind != balance.KindNormal {
			onlyN = false
		}
		out = append(out, stmt{cql: ins, args: []any{m.Account, gocql.UUID(r.UpdateID), int8(r.Kind), gocql.UUID(r.Version), blob, int64(0)}, key: m.Account})
	}
	// Stamp only once everything is valid: consecutive timestamps in
	// mutation order (the DELETE binds it first, the INSERT last).
	if len(out) > 0 {
		ts := b.db.clock.reserve(0, len(out))
		for i, m := range muts {
			if m.Delete {
				out[i].args[0] = ts + int64(i)
			} else {
				out[i].args[len(out[i].args)-1] = ts + int64(i)
			}
		}
	}
	return out, onlyN, nil
}

// Write applies every mutation atomically (one statement, or one logged
// batch). It never reads.
func (b *BalanceStore) Write(ctx context.Context, muts []balance.Mutation) error {
	stmts, onlyN, err := b.writeStmts(muts)
	if err != nil {
		return err
	}
	op := OpBalanceMergeWrite
	if onlyN {
		op = OpBalanceIncrement
	}
	return b.db.batch(ctx, op, stmts)
}

// DeleteAccount removes account's partition.
func (b *BalanceStore) DeleteAccount(ctx context.Context, account string) error {
	if err := checkKey(account); err != nil {
		return err
	}
	ts := b.db.clock.next(0)
	return b.db.exec(ctx, OpBalanceMergeWrite, fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE id = ?", b.table), ts, account)
}

// WriteBalance adds BalanceStore.Write's statements to the Tx. Invalid
// mutations are reported here and leave the Tx unchanged.
func (tx *Tx) WriteBalance(muts ...balance.Mutation) error {
	stmts, _, err := tx.db.Balance().writeStmts(muts)
	return tx.addAll(stmts, err)
}
