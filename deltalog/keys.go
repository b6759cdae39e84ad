package deltalog

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
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
	if len(key) != RowKeyLen {
		return ID{}, 0, fmt.Errorf("%w: cell key of %d bytes, want %d", crdt.ErrCorruptEncoding, len(key), RowKeyLen)
	}
	id, err := timeid.DecodeDescending(key[:timeid.KeyLen])
	if err != nil {
		return ID{}, 0, err
	}
	if err := id.Validate(); err != nil {
		return ID{}, 0, fmt.Errorf("%w: cell key: %v", crdt.ErrCorruptEncoding, err)
	}
	k := Kind(key[timeid.KeyLen])
	if k != KindMerge && k != KindRegular {
		return ID{}, 0, fmt.Errorf("%w: cell key of kind %d", crdt.ErrCorruptEncoding, byte(k))
	}
	return id, k, nil
}

// cellMutation is the put of c into counter's partition at timestamp ts.
func cellMutation(counter string, c Cell, ts int64) (store.Mutation, error) {
	b, err := c.MarshalBinary() // validates the cell
	if err != nil {
		return store.Mutation{}, err
	}
	return store.Mutation{Partition: counter, Op: store.OpPut, Key: EncodeKey(c.ID, c.Kind), Value: b, Timestamp: ts}, nil
}

// decodeRow returns the cell a stored row holds. A row whose value does not
// decode, or whose key names another cell than its value, is an error
// wrapping crdt.ErrCorruptEncoding.
func decodeRow(counter string, r store.Row) (Cell, error) {
	id, kind, err := DecodeKey(r.Key)
	if err != nil {
		return Cell{}, fmt.Errorf("deltalog: counter %q: %w", counter, err)
	}
	var c Cell
	if err := c.UnmarshalBinary(r.Value); err != nil {
		return Cell{}, fmt.Errorf("deltalog: counter %q: cell (%s, %s): %w", counter, id, kind, err)
	}
	if c.ID != id || c.Kind != kind {
		return Cell{}, fmt.Errorf("%w: deltalog: counter %q: row (%s, %s) holds cell (%s, %s)", crdt.ErrCorruptEncoding, counter, id, kind, c.ID, c.Kind)
	}
	return c, nil
}
