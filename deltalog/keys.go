package deltalog

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// RowKeyLen is the length of a cell's row key (EncodeKey); MaxKeyLen
// bounds the counter key, which names the partition.
const RowKeyLen = timeid.KeyLen + 1

// EncodeKey returns the row key of the cell (id, kind) in a
// store.Partitions: the descending encoding of id (timeid.AppendDescending),
// then the kind byte. Row keys ordered as unsigned bytes are then in
// CompareCells order: newest id first, and a merge cell ('m') before the
// regular cell ('r') with the same id. It is the layout of one Cassandra
// table
//
//	CREATE TABLE counter_log (
//	    counter text,
//	    id      timeuuid,
//	    kind    tinyint,   -- 'm' (109) or 'r' (114)
//	    cell    blob,      -- Cell.MarshalBinary
//	    PRIMARY KEY ((counter), id, kind)
//	) WITH CLUSTERING ORDER BY (id DESC, kind ASC);
//
// flattened into one byte string per row.
func EncodeKey(id ID, kind Kind) []byte {
	return append(timeid.AppendDescending(make([]byte, 0, RowKeyLen), id), byte(kind))
}

// DecodeKey inverts EncodeKey. A key of the wrong length, of an unknown
// kind or of an id that is not a version 1 UUID is refused with an error
// wrapping crdt.ErrCorruptEncoding.
func DecodeKey(key []byte) (ID, Kind, error) {
	k, err := decodeKey(key)
	return k.id, k.kind, err
}

// cellKey is a cell's row key, decoded.
type cellKey struct {
	id   ID
	kind Kind
}

func (k cellKey) String() string { return fmt.Sprintf("(%s, %s)", k.id, k.kind) }

func decodeKey(key []byte) (cellKey, error) {
	id, err := rowlog.DecodeID(key, RowKeyLen, "cell key")
	if err != nil {
		return cellKey{}, err
	}
	k := Kind(key[timeid.KeyLen])
	if k != KindMerge && k != KindRegular {
		return cellKey{}, fmt.Errorf("%w: cell key of kind %d", crdt.ErrCorruptEncoding, byte(k))
	}
	return cellKey{id, k}, nil
}

// cellMutation is the put of c into counter's partition.
func cellMutation(counter string, c Cell) (store.Mutation, error) {
	b, err := c.MarshalBinary() // validates the cell
	if err != nil {
		return store.Mutation{}, err
	}
	return store.Mutation{Partition: counter, Op: store.OpPut, Key: EncodeKey(c.ID, c.Kind), Value: b}, nil
}

// decodeRow returns the cell a stored row holds (rowlog.DecodeRow).
func decodeRow(counter string, r store.Row) (Cell, error) {
	return rowlog.DecodeRow("deltalog", "counter", counter, r, decodeKey, func(b []byte) (Cell, cellKey, error) {
		var c Cell
		err := c.UnmarshalBinary(b)
		return c, cellKey{c.ID, c.Kind}, err
	})
}
