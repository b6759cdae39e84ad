package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

// Siblings is the DB's store.Siblings, with the semantics of
// memory.Siblings: every value carries a dot never reused in the file, and
// a Put removes the siblings its token names and adds its value in one
// durable transaction. A value that fails its CRC-32C is reported with
// crdt.ErrCorruptEncoding, never returned.
type Siblings struct {
	db *DB
}

var (
	_ store.Siblings            = (*Siblings)(nil)
	_ store.SiblingDeleter      = (*Siblings)(nil)
	_ store.SiblingBatchDeleter = (*Siblings)(nil)
)

// Fetch returns the siblings of key, read in one read transaction, and a
// token naming them. An absent key has no siblings and a nil token.
func (s *Siblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if err := storekit.CheckKey(ctx, "key", key); err != nil {
		return nil, nil, err
	}
	prefix := appendPrefix(nil, key)
	var values [][]byte
	var dots []uint64
	err := s.db.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSiblings).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+dotBytes {
				// Only this key's siblings start with its length prefix.
				return fmt.Errorf("embedded: sibling %q: a stored key of %d bytes after the key, not a dot: %w",
					k, len(k)-len(prefix), crdt.ErrCorruptEncoding)
			}
			val, err := openRecord(k, v)
			if err != nil {
				return err
			}
			values = append(values, val)
			dots = append(dots, binary.BigEndian.Uint64(k[len(prefix):]))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(values) == 0 {
		return nil, nil, nil
	}
	return values, dotTokens.Encode(dots), nil
}

// Put stores value under key, superseding exactly the siblings the token
// names; it returns once the write is durable.
func (s *Siblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckPut(key, actor, value); err != nil {
		return err
	}
	dots, err := dotTokens.Decode(token)
	if err != nil {
		return err
	}
	prefix := appendPrefix(nil, key)
	value = slices.Clone(value) // bbolt keeps it until the commit
	return s.db.update(func(w *wtx) error {
		b := w.bucket(bucketSiblings)
		if err := deleteDots(b, prefix, dots); err != nil {
			return err
		}
		dot, err := b.NextSequence()
		if err != nil {
			return err
		}
		k := binary.BigEndian.AppendUint64(slices.Clip(prefix), dot)
		// Dots are never reused: a taken one means damage.
		return b.putNew(k, sealRecord(k, value))
	}, len(prefix)+len(value)+16)
}

// Delete removes the siblings the token names; siblings written since
// survive. It returns once the delete is durable.
func (s *Siblings) Delete(ctx context.Context, key string, token store.Token) error {
	if err := storekit.CheckKey(ctx, "key", key); err != nil {
		return err
	}
	dots, err := dotTokens.Decode(token)
	if err != nil {
		return err
	}
	if len(dots) == 0 {
		return nil
	}
	prefix := appendPrefix(nil, key)
	return s.db.update(func(w *wtx) error {
		return deleteDots(w.bucket(bucketSiblings), prefix, dots)
	}, len(prefix)+8*len(dots))
}

// DeleteBatch removes, for each i, the siblings tokens[i] names under
// keys[i], in one write transaction, and returns once it is durable: one
// fsync for the batch where Delete takes one per key (ledger.ExpireRecords
// uses it). Bad input (an invalid key, a malformed token, lengths that
// differ) is refused before anything is deleted.
func (s *Siblings) DeleteBatch(ctx context.Context, keys []string, tokens []store.Token) error {
	if len(keys) != len(tokens) {
		return fmt.Errorf("%w: embedded: DeleteBatch of %d keys and %d tokens", crdt.ErrInvalidConfig, len(keys), len(tokens))
	}
	prefixes := make([][]byte, len(keys))
	dots := make([][]uint64, len(keys))
	size := 0
	for i, key := range keys {
		if err := storekit.CheckKey(ctx, "key", key); err != nil {
			return err
		}
		d, err := dotTokens.Decode(tokens[i])
		if err != nil {
			return err
		}
		prefixes[i], dots[i] = appendPrefix(nil, key), d
		size += len(prefixes[i]) + 8*len(d)
	}
	return s.db.update(func(w *wtx) error {
		for i := range keys {
			if err := deleteDots(w.bucket(bucketSiblings), prefixes[i], dots[i]); err != nil {
				return err
			}
		}
		return nil
	}, size)
}

// Keys returns up to limit keys of siblings that start with prefix and
// come after the key after ("": from the first), in the store's order:
// shorter keys first, keys of one length bytewise. Passing the last key
// returned as after reads the next page; each page is read in one read
// transaction, so writes go on between pages. It is how a program lists
// what the store holds while it is open, for example the transaction
// records that ledger.ExpireRecords deletes once no retry can need them
// (prefix ledger.RecordKeyPrefix; those keys are all of one length). A
// limit below 1 is refused with crdt.ErrInvalidConfig.
func (s *Siblings) Keys(ctx context.Context, prefix, after string, limit int) ([]string, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: embedded: Keys limit %d, want at least 1", crdt.ErrInvalidConfig, limit)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var keys []string
	err := s.db.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSiblings).Cursor()
		for n := max(len(prefix), len(after), 1); n <= crdt.MaxKeyLen; n++ {
			head := append(binary.AppendUvarint(nil, uint64(n)), prefix...)
			seek := head
			if n == len(after) {
				// after, when it comes after head: one that sorts before
				// the prefix must not seek ahead of the prefix's keys
				if a := appendPrefix(nil, after); bytes.Compare(a, head) > 0 {
					seek = a
				}
			}
			for k, _ := c.Seek(seek); k != nil && bytes.HasPrefix(k, head); k, _ = c.Next() {
				key, _, err := cutPrefix(k)
				if err != nil {
					return err
				}
				if (n == len(after) && string(key) <= after) || len(keys) > 0 && keys[len(keys)-1] == string(key) {
					continue // after itself, or another sibling of the key just listed
				}
				if len(keys) == limit {
					return nil
				}
				if len(keys)%4096 == 4095 && ctx.Err() != nil {
					return ctx.Err()
				}
				keys = append(keys, string(key))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

func deleteDots(b tb, prefix []byte, dots []uint64) error {
	for _, d := range dots {
		if err := b.Delete(binary.BigEndian.AppendUint64(slices.Clip(prefix), d)); err != nil {
			return err
		}
	}
	return nil
}

// A sibling record is CRC-32C(key, value) || value.

func sealRecord(key, value []byte) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(value)), checksum(key, value)), value...)
}

func openRecord(key, rec []byte) ([]byte, error) {
	if len(rec) < 5 || binary.BigEndian.Uint32(rec) != checksum(key, rec[4:]) {
		return nil, corrupt("sibling", key)
	}
	return slices.Clone(rec[4:]), nil
}

// dotTokens makes the store's tokens: 'e' followed by the dots.
const dotTokens = store.DotTokens('e')
