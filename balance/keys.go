package balance

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
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
	b := timeid.AppendDescending(make([]byte, 0, RowKeyLen), k.UpdateID)
	b = append(b, byte(k.Kind))
	return timeid.AppendAscending(b, k.Version)
}

// DecodeKey inverts EncodeKey. A key of the wrong length or an unknown
// kind, an update id that is not a version 1 UUID, an N row version that
// is neither zero nor an amount key, or an S or T row version that is not
// a version 1 UUID is refused with an error wrapping crdt.ErrCorruptEncoding.
func DecodeKey(b []byte) (Key, error) {
	if len(b) != RowKeyLen {
		return Key{}, fmt.Errorf("%w: row key of %d bytes, want %d", crdt.ErrCorruptEncoding, len(b), RowKeyLen)
	}
	var k Key
	var err error
	if k.UpdateID, err = timeid.DecodeDescending(b[:timeid.KeyLen]); err != nil {
		return Key{}, err
	}
	k.Kind = Kind(b[timeid.KeyLen])
	if k.Version, err = timeid.DecodeAscending(b[timeid.KeyLen+1:]); err != nil {
		return Key{}, err
	}
	if err := k.UpdateID.Validate(); err != nil {
		return Key{}, fmt.Errorf("%w: row key: %v", crdt.ErrCorruptEncoding, err)
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

// putRow is the write of r into account's partition (timestamp set later).
func putRow(account string, r Row) (store.Mutation, error) {
	b, err := r.MarshalBinary() // validates the row
	if err != nil {
		return store.Mutation{}, err
	}
	return store.Mutation{Partition: account, Op: store.OpPut, Key: EncodeKey(r.Key()), Value: b}, nil
}

// deleteRow is the delete of r's key in account's partition.
func deleteRow(account string, r Row) store.Mutation {
	return store.Mutation{Partition: account, Op: store.OpDelete, Key: EncodeKey(r.Key())}
}

// decodeRow returns the row a stored row holds. A row whose value does not
// decode, or whose key names another row than its value, is an error
// wrapping crdt.ErrCorruptEncoding.
func decodeRow(account string, sr store.Row) (Row, error) {
	k, err := DecodeKey(sr.Key)
	if err != nil {
		return Row{}, fmt.Errorf("balance: account %q: %w", account, err)
	}
	var r Row
	if err := r.UnmarshalBinary(sr.Value); err != nil {
		return Row{}, fmt.Errorf("balance: account %q: row (%s, %s, %s): %w", account, k.UpdateID, k.Kind, k.Version, err)
	}
	if r.Key() != k {
		return Row{}, fmt.Errorf("%w: balance: account %q: row key (%s, %s, %s) holds row %s", crdt.ErrCorruptEncoding, account, k.UpdateID, k.Kind, k.Version, r)
	}
	return r, nil
}
