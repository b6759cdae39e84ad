package embedded

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	bolt "go.etcd.io/bbolt"
)

// wtx is a write transaction that keeps the data buckets' digests: every
// write of an entry goes through its buckets, and finish stores the new
// digests in the meta bucket.
type wtx struct {
	tx    *bolt.Tx
	delta [6]bucketSum // n and sum changes, per data bucket
	off   bool         // no digests (Options without checks)
}

// tb is a data bucket inside a wtx: its Put and Delete keep the digest.
type tb struct {
	*bolt.Bucket
	s *bucketSum // nil: no digest kept
}

func (w *wtx) bucket(name []byte) tb {
	b := tb{Bucket: w.tx.Bucket(name)}
	if i := slices.IndexFunc(dataBuckets, func(n []byte) bool { return bytes.Equal(n, name) }); i >= 0 && !w.off {
		b.s = &w.delta[i]
	}
	return b
}

// lookup returns k's value and whether k is there (even with an empty value).
func (b tb) lookup(k []byte) ([]byte, bool) {
	got, v := b.Cursor().Seek(k)
	return v, got != nil && bytes.Equal(got, k)
}

func (b tb) Put(k, v []byte) error {
	if b.s != nil {
		if old, ok := b.lookup(k); ok {
			b.s.sub(k, old)
		}
		b.s.add(k, v)
	}
	return b.Bucket.Put(k, v)
}

// putNew stores v under k, which must be absent: errTaken if it is not.
func (b tb) putNew(k, v []byte) error {
	if _, ok := b.lookup(k); ok {
		return errTaken
	}
	return b.Put(k, v)
}

var errTaken = fmt.Errorf("embedded: a fresh key is taken (the bucket's sequence went back): %w", crdt.ErrCorruptEncoding)

func (b tb) Delete(k []byte) error {
	if b.s != nil {
		old, ok := b.lookup(k)
		if !ok {
			return nil
		}
		b.s.sub(k, old)
	}
	return b.Bucket.Delete(k)
}

// finish adds the changes (every op writes a data bucket) to the digests.
func (w *wtx) finish() error {
	if w.off {
		return nil
	}
	meta := w.tx.Bucket(bucketMeta)
	sums, _, err := decodeDigests(meta.Get(keyDigest))
	if err != nil {
		return err
	}
	for i, name := range dataBuckets {
		sums[i].n += w.delta[i].n
		sums[i].sum += w.delta[i].sum
		sums[i].seq = w.tx.Bucket(name).Sequence()
		if int64(sums[i].n) < 0 {
			return fmt.Errorf("embedded: bucket %q would hold %d entries: %w", name, int64(sums[i].n), crdt.ErrCorruptEncoding)
		}
	}
	return meta.Put(keyDigest, encodeDigests(sums, uint64(w.tx.ID())))
}

// restampDigests writes the digest record again in tx, naming tx: for a
// file whose records were copied from another (Compact). A record of
// format 1 (none) or 2 (naming no transaction) is left as it is, so that
// the copy stays what its format marker says.
func restampDigests(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return fmt.Errorf("embedded: the meta bucket is missing: %w", crdt.ErrCorruptEncoding)
	}
	b := meta.Get(keyDigest)
	if b == nil {
		return nil // a format 1 file: no digests
	}
	sums, txid, err := decodeDigests(b)
	if err != nil || txid == 0 {
		return err // a format 2 record names no transaction: kept as it is
	}
	return meta.Put(keyDigest, encodeDigests(sums, uint64(tx.ID())))
}
