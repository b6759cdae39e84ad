package balance

import (
	"context"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// RowKeyLen is the length of a row key (EncodeKey).
const RowKeyLen = 2*timeid.KeyLen + 1

// EncodeKey returns the row key of k in a store.Partitions: the descending
// encoding of the update id (timeid.AppendDescending), the kind byte, then
// the ascending encoding of the version (timeid.AppendAscending). Row keys
// ordered as unsigned bytes are then in CompareRows order. It is the layout
// of one Cassandra table
//
//	CREATE TABLE balance (
//	    account  text,
//	    updateid timeuuid,
//	    type     tinyint,   -- 'N' (78), 'S' (83), 'T' (84)
//	    version  timeuuid,  -- an N row's amount key, or zero
//	    row      blob,      -- Row.MarshalBinary
//	    PRIMARY KEY ((account), updateid, type, version)
//	) WITH CLUSTERING ORDER BY (updateid DESC, type ASC, version ASC);
//
// flattened into one byte string per row.
func EncodeKey(k Key) []byte {
	return appendKey(make([]byte, 0, RowKeyLen), k)
}

// appendKey appends EncodeKey(k) to dst.
func appendKey(dst []byte, k Key) []byte {
	dst = timeid.AppendDescending(dst, k.UpdateID)
	dst = append(dst, byte(k.Kind))
	return timeid.AppendAscending(dst, k.Version)
}

// DecodeKey inverts EncodeKey. A key of the wrong length or an unknown
// kind, an update id that is not a version 1 UUID, an N row version that
// is neither zero nor an amount key, or an S or T row version that is not
// a version 1 UUID is refused with an error wrapping crdt.ErrCorruptEncoding.
func DecodeKey(b []byte) (Key, error) {
	var k Key
	var err error
	if k.UpdateID, err = rowlog.DecodeID(b, RowKeyLen, "row key"); err != nil {
		return Key{}, err
	}
	k.Kind = Kind(b[timeid.KeyLen])
	if k.Version, err = timeid.DecodeAscending(b[timeid.KeyLen+1:]); err != nil {
		return Key{}, err
	}
	switch k.Kind {
	case KindNormal:
		if k.Version != (ID{}) && [8]byte(k.Version[:8]) != [8]byte{} {
			return Key{}, fmt.Errorf("%w: N row key with version %s", crdt.ErrCorruptEncoding, k.Version)
		}
	case KindSum, KindTombstone:
		if err := k.Version.Validate(); err != nil {
			return Key{}, fmt.Errorf("%w: %s row key: %v", crdt.ErrCorruptEncoding, k.Kind, err)
		}
	default:
		return Key{}, fmt.Errorf("%w: row key of kind %d", crdt.ErrCorruptEncoding, byte(k.Kind))
	}
	return k, nil
}

// writeRows writes in one batch the deletes of the rows del, then the puts
// of the rows put, into account's partition; the puts' keys and values
// share one buffer (appendPut).
func (ac *Accounts) writeRows(ctx context.Context, account string, del, put []Row) error {
	muts := make([]store.Mutation, 0, len(del)+len(put))
	buf := make([]byte, 0, len(put)*(RowKeyLen+maxRowLen))
	for _, r := range del {
		muts = append(muts, store.Mutation{Partition: account, Op: store.OpDelete, Key: EncodeKey(r.Key())})
	}
	for _, r := range put {
		if err := r.Validate(); err != nil {
			return err
		}
		muts = append(muts, appendPut(&buf, account, r))
	}
	return ac.t.Write(ctx, muts)
}

// appendPut appends the key and the encoding (Row.MarshalBinary) of the
// valid row r to *buf and returns their write into account's partition.
// The mutation's key and value are full slices of *buf, so later appends
// never change them.
func appendPut(buf *[]byte, account string, r Row) store.Mutation {
	b := *buf
	k := len(b)
	b = appendKey(b, r.Key())
	v := len(b)
	b = r.appendEncoding(b, FormatVersion)
	*buf = b
	return store.Mutation{Partition: account, Op: store.OpPut, Key: b[k:v:v], Value: b[v:len(b):len(b)]}
}

// oneWrite is the write of a single row in one allocation: its batch and
// the bytes of its key and value.
type oneWrite struct {
	muts [1]store.Mutation
	buf  [TxnRowKeyLen + maxRowLen]byte
}

// newWrite returns room for a batch of n row writes: the mutations and
// the bytes of their keys and values (appendPut), in one allocation for one
// row.
func newWrite(n int) ([]store.Mutation, []byte) {
	if n == 1 {
		w := new(oneWrite)
		return w.muts[:0], w.buf[:0]
	}
	return make([]store.Mutation, 0, n), make([]byte, 0, n*(RowKeyLen+maxRowLen))
}

// rowKey is a Key as row errors print it.
type rowKey Key

func (k rowKey) String() string { return fmt.Sprintf("(%s, %s, %s)", k.UpdateID, k.Kind, k.Version) }

// decodeRow returns the row a stored row holds (rowlog.DecodeRow). A row
// of a Transactions row partition is crdt.ErrTypeMismatch.
func decodeRow(account string, sr store.Row) (Row, error) {
	if len(sr.Key) == TxnRowKeyLen {
		if _, _, err := DecodeTxnRowKey(sr.Key); err == nil {
			return Row{}, fmt.Errorf("%w: balance: account %q holds rows of balance.Transactions: merge it with Transactions.Merge", crdt.ErrTypeMismatch, account)
		}
	}
	return rowlog.DecodeRow("balance", "account", account, sr, func(b []byte) (rowKey, error) {
		k, err := DecodeKey(b)
		return rowKey(k), err
	}, func(b []byte) (Row, rowKey, error) {
		var r Row
		err := r.UnmarshalBinary(b)
		return r, rowKey(r.Key()), err
	})
}
