package cassandra

import (
	"context"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

// maxShardsPerKey bounds how many shard rows one Read returns.
const maxShardsPerKey = MaxActorRows

// TallyStore implements tally.Store (seed 001's sharded counter) on the
// tally_shard table: one row per mutator and the tally in a static column
// of the same partition. Every write carries the caller's timestamp (USING
// TIMESTAMP), so Cassandra's last-write-wins rules are exactly the ones
// tally.Store describes.
//
// Cost: PutShard is one write and no read; Read is one partition read (at
// ALL when complete, OpTallyRead's level otherwise); ApplyGC is one
// single-partition batch, which Cassandra applies atomically and in
// isolation.
//
// A TallyStore is safe for concurrent use.
type TallyStore struct {
	db    *DB
	table string
}

var _ tally.Store = (*TallyStore)(nil)

// Tally returns the DB's tally store.
func (db *DB) Tally() *TallyStore { return &TallyStore{db: db, table: db.tables[tableShard]} }

func checkTS(ts int64) error {
	if ts <= 0 {
		return fmt.Errorf("%w: write timestamp %d must be positive", crdt.ErrInvalidConfig, ts)
	}
	return nil
}

func (t *TallyStore) putStmt(key string, s tally.EncodedShard, writeTS int64) (stmt, error) {
	if err := checkKey(key); err != nil {
		return stmt{}, err
	}
	if err := s.Mutator.Validate(); err != nil {
		return stmt{}, err
	}
	if err := checkTS(writeTS); err != nil {
		return stmt{}, err
	}
	if len(s.Data) == 0 {
		return stmt{}, fmt.Errorf("%w: empty shard for mutator %q", crdt.ErrCorruptEncoding, s.Mutator)
	}
	if len(s.Data) > tally.MaxEncodedSize {
		return stmt{}, fmt.Errorf("%w: shard of %d bytes, limit %d", crdt.ErrTooLarge, len(s.Data), tally.MaxEncodedSize)
	}
	cql := fmt.Sprintf("INSERT INTO %s (key, mutator, state) VALUES (?, ?, ?) USING TIMESTAMP ?", t.table)
	return stmt{cql: cql, args: []any{key, string(s.Mutator), s.Data, writeTS}, key: key}, nil
}

// PutShard overwrites mutator s.Mutator's row with s.Data at writeTS. It
// never reads.
func (t *TallyStore) PutShard(ctx context.Context, key string, s tally.EncodedShard, writeTS int64) error {
	st, err := t.putStmt(key, s, writeTS)
	if err != nil {
		return err
	}
	return t.db.exec(ctx, OpShardWrite, st.cql, st.args...)
}

// Read returns key's live shard rows (in mutator order) and its tally (nil
// when none). complete reads at OpTallyGCRead's level, which is ALL.
//
// The partition is read as one page of maxShardsPerKey+1 rows with
// automatic paging off, so that a GC batch landing during the read is seen
// entirely or not at all (a second page would be a second read). A key
// with more than maxShardsPerKey shard rows is refused with an error
// wrapping crdt.ErrTooLarge.
func (t *TallyStore) Read(ctx context.Context, key string, complete bool) ([]tally.EncodedShard, []byte, error) {
	if err := checkKey(key); err != nil {
		return nil, nil, err
	}
	op := OpTallyRead
	if complete {
		op = OpTallyGCRead
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, &Error{Op: op.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	cql := fmt.Sprintf("SELECT mutator, state, tally FROM %s WHERE key = ?", t.table)
	iter := t.db.openPage(ctx, op, maxShardsPerKey, cql, []any{key})
	var (
		shards  []tally.EncodedShard
		tallyV  []byte
		mutator string
		state   []byte
		tv      []byte
	)
	for iter.Scan(&mutator, &state, &tv) {
		if tallyV == nil && len(tv) > 0 {
			tallyV = append([]byte(nil), tv...)
		}
		// A partition holding only the static tally comes back as one row
		// with a null mutator.
		if mutator == "" || len(state) == 0 {
			continue
		}
		if len(shards) >= maxShardsPerKey {
			_ = iter.Close()
			return nil, nil, fmt.Errorf("%w: key %q has more than %d shards", crdt.ErrTooLarge, truncateKey(key), maxShardsPerKey)
		}
		shards = append(shards, tally.EncodedShard{Mutator: crdt.ActorID(mutator), Data: state})
		state = nil
	}
	if err := closePage(iter, op, func() error {
		return fmt.Errorf("%w: key %q did not fit in one page of %d rows", crdt.ErrTooLarge, truncateKey(key), maxShardsPerKey+1)
	}); err != nil {
		return nil, nil, err
	}
	return shards, tallyV, nil
}

// ApplyGC writes b.Tally and deletes every row in b.Delete, all at
// b.WriteTS, in one single-partition batch. Re-applying the same batch
// changes nothing, so the statement is idempotent.
func (t *TallyStore) ApplyGC(ctx context.Context, key string, b tally.GCBatch) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := checkTS(b.WriteTS); err != nil {
		return err
	}
	if len(b.Tally) == 0 {
		return fmt.Errorf("%w: GC batch without a tally", crdt.ErrCorruptEncoding)
	}
	if len(b.Tally) > tally.MaxEncodedSize {
		return fmt.Errorf("%w: tally of %d bytes, limit %d", crdt.ErrTooLarge, len(b.Tally), tally.MaxEncodedSize)
	}
	if len(b.Delete) > maxShardsPerKey {
		return fmt.Errorf("%w: GC deletes %d shards, limit %d", crdt.ErrTooLarge, len(b.Delete), maxShardsPerKey)
	}
	stmts := make([]stmt, 0, 1+len(b.Delete))
	stmts = append(stmts, stmt{
		cql:  fmt.Sprintf("UPDATE %s USING TIMESTAMP ? SET tally = ? WHERE key = ?", t.table),
		args: []any{b.WriteTS, b.Tally, key},
		key:  key,
	})
	del := fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE key = ? AND mutator = ?", t.table)
	for _, m := range b.Delete {
		if err := m.Validate(); err != nil {
			return err
		}
		stmts = append(stmts, stmt{cql: del, args: []any{b.WriteTS, key, string(m)}, key: key})
	}
	return t.db.batch(ctx, OpTallyGCWrite, stmts)
}

// PutShard adds TallyStore.PutShard's statement to the Tx. Invalid input is
// reported here and leaves the Tx unchanged.
func (tx *Tx) PutShard(key string, s tally.EncodedShard, writeTS int64) error {
	return tx.add(tx.db.Tally().putStmt(key, s, writeTS))
}
