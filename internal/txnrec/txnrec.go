// Package txnrec is the transaction record that the ledger and the bounded
// counter's Account keep beside an account, one per transaction, so that a
// retry is recognised however many transactions came since (SPEC.md 6.11,
// 13.5): its key and its encoding.
package txnrec

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// Record is a transaction record: Txn was applied with Amount (negative
// for a debit) by Writer, first at At, and Writer's entry held it at
// Version in the state that landed it. It is stored under Key of the
// account and the transaction.
type Record struct {
	Txn     crdt.TxnID
	Amount  int64
	Writer  crdt.ActorID
	At      time.Time
	Version uint64
	// Key is the key whose state holds Writer's entry (format version 2:
	// a Sharded ledger's sub-ledger names its sub-key, since its records
	// are the account's, and a ledger whose records store a sweep runs
	// over names its key). "" (version 1) names no key: every reader
	// takes the record as its own key's.
	Key string
}

// Prefix starts every transaction record's key.
const Prefix = "counterkit.txn/"

// newestFormat is the newest format version of a record: 1 without a key, 2
// with one.
const newestFormat = 2

// MaxVersion is the largest version a record carries: a ledger's version
// is the sum of its writer's seqs in P and N, each at most
// tpncounter.MaxSeq (2^63−1), so 2^64−2 (SPEC.md 6.11); an Account's is a
// seq of at most 2^63−1. A record above it would make every read of its
// writer look stale for the transaction.
const MaxVersion uint64 = 1<<64 - 2

// maxEncoded bounds a record's encoding: two ids, a key and three
// integers.
const maxEncoded = 2*crdt.MaxIDLen + crdt.MaxKeyLen + 64

// Key is the store key of txn's record for account: Prefix and a hash of
// both (SPEC.md 6.11), a valid key of 47 bytes whatever their lengths.
func Key(account string, txn crdt.TxnID) string {
	var in [crdt.MaxKeyLen + 1 + crdt.MaxIDLen]byte // no allocation for a valid pair
	sum := sha256.Sum256(append(append(append(in[:0], account...), 0), txn...))
	var key [len(Prefix) + 32]byte // 20 bytes in base32: 32 characters
	keyEncoding.Encode(key[copy(key[:], Prefix):], sum[:20])
	return string(key[:])
}

// keyEncoding is the base32 of Key's hash: the extended hex alphabet, so
// keys sort as their hashes, without padding.
var keyEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// IsKey reports whether key is a record's key (starts with Prefix).
func IsKey(key string) bool { return strings.HasPrefix(key, Prefix) }

// MarshalBinary encodes r (SPEC.md 6.11): the envelope "ledger.txn",
// version 1, and the array [txn, amount, writer, at in Unix nanoseconds,
// version]; with a Key, version 2 and the key after them.
func (r Record) MarshalBinary() ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	format, n := uint64(1), 5
	if r.Key != "" {
		format, n = 2, 6
	}
	e := wire.NewEncoder(crdt.TagLedgerTxn, format)
	e.ArrayLen(n)
	e.String(string(r.Txn))
	e.Int(r.Amount)
	e.String(string(r.Writer))
	e.Int(r.At.UnixNano())
	e.Uint(r.Version)
	if r.Key != "" {
		e.String(r.Key)
	}
	return e.Bytes()
}

// Decode decodes a sibling stored under a record key. Whatever keeps it
// from decoding (bytes that are no encoding, another type's state, a
// record of a newer format, a value above a record's size) is damage to
// that key alone: the error wraps crdt.ErrCorruptEncoding beside
// UnmarshalBinary's own sentinel.
func Decode(b []byte) (Record, error) {
	var r Record
	err := r.UnmarshalBinary(b)
	if err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
		err = fmt.Errorf("%w: %w", crdt.ErrCorruptEncoding, err)
	}
	return r, err
}

// UnmarshalBinary decodes a record, refusing one no writer makes (errors
// wrap crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch,
// crdt.ErrUnsupportedVersion or crdt.ErrTooLarge).
func (r *Record) UnmarshalBinary(b []byte) error {
	d, format, err := wire.NewDecoder(b, crdt.TagLedgerTxn, newestFormat, maxEncoded)
	if err != nil {
		return err
	}
	if err := d.Tuple(4+int(format), "transaction record"); err != nil {
		return err
	}
	var x Record
	var at int64
	if x.Txn, err = d.Txn(); err != nil {
		return err
	}
	if x.Amount, err = d.Int(); err != nil {
		return err
	}
	if x.Writer, err = d.Actor(); err != nil {
		return err
	}
	if at, err = d.Int(); err != nil {
		return err
	}
	if x.Version, err = d.Uint(); err != nil {
		return err
	}
	if format == 2 {
		if x.Key, err = d.String(crdt.MaxKeyLen); err != nil {
			return err
		}
		if x.Key == "" {
			return fmt.Errorf("%w: transaction record with an empty key", crdt.ErrCorruptEncoding)
		}
	}
	if err := d.Finish(); err != nil {
		return err
	}
	x.At = time.Unix(0, at).UTC()
	if err := x.check(); err != nil {
		return fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
	}
	*r = x
	return nil
}

// EncodableTime reports whether t is after 1970 and its Unix nanoseconds,
// what a record or a sighting encodes, give t back (before 2262-04-11: a
// later or a much earlier time wraps around int64 and would decode as
// another).
func EncodableTime(t time.Time) bool {
	n := t.UnixNano()
	return n > 0 && time.Unix(0, n).Equal(t)
}

// check refuses a record no writer makes: an invalid id, a zero amount or
// one whose magnitude does not fit, a time not after 1970 or past
// 2262-04-11 (EncodableTime), version 0 (an
// entry that held a transaction has written at least once) or above
// MaxVersion, an invalid key.
func (r Record) check() error {
	if err := r.Txn.Validate(); err != nil {
		return err
	}
	if err := r.Writer.Validate(); err != nil {
		return err
	}
	if r.Amount == 0 || r.Amount == math.MinInt64 {
		return fmt.Errorf("%w: transaction record with amount %d", crdt.ErrInvalidAmount, r.Amount)
	}
	if !EncodableTime(r.At) {
		return fmt.Errorf("%w: transaction record at %v, not after 1970 and before 2262", crdt.ErrInvalidAmount, r.At)
	}
	if r.Version == 0 {
		return fmt.Errorf("%w: transaction record at version 0", crdt.ErrInvalidAmount)
	}
	if r.Version > MaxVersion {
		return fmt.Errorf("%w: transaction record at version %d, above the largest a writer reaches (%d)", crdt.ErrInvalidAmount, r.Version, MaxVersion)
	}
	if r.Key != "" {
		return crdt.ValidateKey("transaction record's key", r.Key)
	}
	return nil
}
