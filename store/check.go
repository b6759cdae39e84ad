package store

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// Limits every backend accepts; CheckMutations refuses anything beyond them
// (crdt.ErrTooLarge), so that a batch one backend takes every backend takes.
// They are what Cassandra 4.0 accepts with its default settings: a mutation
// (one partition's part of a batch) under 16 MiB with its overhead, a batch
// spanning partitions under 50 KiB (batch_size_fail_threshold_in_kb, which
// counts each row's timestamps besides its bytes: SpanningOverhead), at most
// 65,535 statements.
const (
	// MaxRowKey is the longest row key, in bytes.
	MaxRowKey = 1024
	// MaxValue is the longest sibling value or row value, in bytes.
	MaxValue = 8 << 20
	// MaxBatch is the most mutations one Apply takes.
	MaxBatch = 10_000
	// MaxBatchBytes bounds the keys and values of one Apply, summed.
	MaxBatchBytes = 12 << 20
	// MaxSpanningBatchBytes bounds an Apply that addresses more than one
	// partition: its keys and values summed, with SpanningOverhead bytes
	// per mutation.
	MaxSpanningBatchBytes = 32 << 10
	// SpanningOverhead is what each mutation counts against
	// MaxSpanningBatchBytes besides its keys and value: Cassandra 4.0
	// counts a row's timestamps and deletion times (36 bytes) and each
	// partition's deletion (12) towards its batch limit, so many small
	// mutations pass it long before their bytes do. The batch this lets
	// through that 4.0 sizes largest, 992 puts of an empty key and a
	// one-byte value in partitions of their own, counts about 48,600 of
	// its 51,200 bytes.
	SpanningOverhead = 32
)

// CheckMutations reports whether muts is a batch every backend must accept,
// so that backends refuse bad batches alike and before writing anything. A
// mutation carries only its op's fields (Mutation): a Key on a partition
// delete, an End on anything but a range delete or a Value on a delete is
// refused. Errors wrap crdt.ErrInvalidKey, crdt.ErrInvalidAmount or
// crdt.ErrTooLarge and name the mutation.
func CheckMutations(muts []Mutation) error {
	if len(muts) > MaxBatch {
		return fmt.Errorf("store: batch of %d mutations (max %d): %w", len(muts), MaxBatch, crdt.ErrTooLarge)
	}
	size, spanning := 0, false
	for i, m := range muts {
		if err := m.check(); err != nil {
			return fmt.Errorf("store: mutation %d of %d (%s): %w", i+1, len(muts), m.Op, err)
		}
		size += len(m.Key) + len(m.End) + len(m.Value)
		spanning = spanning || m.Partition != muts[0].Partition
	}
	switch {
	case size > MaxBatchBytes:
		return fmt.Errorf("store: batch of %d bytes (max %d): %w", size, MaxBatchBytes, crdt.ErrTooLarge)
	case spanning && size+SpanningOverhead*len(muts) > MaxSpanningBatchBytes:
		return fmt.Errorf("store: batch of %d mutations and %d bytes across partitions (max %d, counting %d per mutation): %w",
			len(muts), size, MaxSpanningBatchBytes, SpanningOverhead, crdt.ErrTooLarge)
	}
	return nil
}

// TTL returns how long st keeps a value after its Put: its TTL when it is
// Expiring, else zero (for good).
func TTL(st Siblings) time.Duration {
	if e, ok := st.(Expiring); ok {
		return max(e.TTL(), 0)
	}
	return 0
}

// CheckKeeps refuses (crdt.ErrInvalidConfig) a store whose values expire
// as the store of what, a counter's state, which would vanish from an
// idle key; only transaction records belong in one (Expiring).
func CheckKeeps(st Siblings, what string) error {
	if ttl := TTL(st); ttl > 0 {
		return fmt.Errorf("%w: %s: the store expires its values %v after they are written (store.Expiring), so an idle key would vanish; only transaction records belong in such a store (ledger.Options.Records)", crdt.ErrInvalidConfig, what, ttl)
	}
	return nil
}

// CheckPut reports whether a Siblings.Put of value under key by actor is a
// write every backend must accept, so that backends refuse bad puts alike
// and before writing anything. Errors wrap crdt.ErrInvalidKey,
// crdt.ErrInvalidActor, crdt.ErrInvalidAmount (an empty value) or
// crdt.ErrTooLarge.
func CheckPut(key string, actor crdt.ActorID, value []byte) error {
	if err := crdt.ValidateKey("key", key); err != nil {
		return err
	}
	if err := actor.Validate(); err != nil {
		return err
	}
	if err := checkValue(value); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// checkValue refuses an empty value and one over MaxValue bytes.
func checkValue(v []byte) error {
	if len(v) == 0 {
		return fmt.Errorf("empty value: %w", crdt.ErrInvalidAmount)
	}
	if len(v) > MaxValue {
		return fmt.Errorf("value of %d bytes (max %d): %w", len(v), MaxValue, crdt.ErrTooLarge)
	}
	return nil
}

func (m Mutation) check() error {
	if err := crdt.ValidateKey("partition key", m.Partition); err != nil {
		return err
	}
	if m.Timestamp <= 0 {
		return fmt.Errorf("timestamp %d is not positive: %w", m.Timestamp, crdt.ErrInvalidAmount)
	}
	if len(m.Key) > MaxRowKey || len(m.End) > MaxRowKey {
		return fmt.Errorf("row key over %d bytes: %w", MaxRowKey, crdt.ErrTooLarge)
	}
	switch {
	case m.Op < OpPut || m.Op > OpDeletePartition:
		return fmt.Errorf("unknown op %d: %w", m.Op, crdt.ErrInvalidAmount)
	case m.Op == OpDeletePartition && m.Key != nil:
		return fmt.Errorf("a %s carries a row key: %w", m.Op, crdt.ErrInvalidKey)
	case m.Op != OpDeleteRange && m.End != nil:
		return fmt.Errorf("a %s carries an end key (OpDeleteRange only): %w", m.Op, crdt.ErrInvalidKey)
	case m.Op == OpPut:
		return checkValue(m.Value)
	case m.Op == OpDeleteRange && m.End != nil && string(m.End) <= string(m.Key):
		return fmt.Errorf("empty range: %w", crdt.ErrInvalidAmount)
	case m.Value != nil:
		return fmt.Errorf("a %s carries a value: %w", m.Op, crdt.ErrInvalidAmount)
	}
	return nil
}

// Shadows reports whether a deletion (op OpDelete, OpDeleteRange or
// OpDeletePartition, with key, end and timestamp as in m) hides a value
// written at ts under row key k: it covers k and its timestamp is ≥ ts.
// Backends that resolve writes themselves use it to share one rule.
func (m Mutation) Shadows(k []byte, ts int64) bool {
	if m.Timestamp < ts {
		return false
	}
	switch m.Op {
	case OpDelete:
		return string(m.Key) == string(k)
	case OpDeleteRange:
		return string(k) >= string(m.Key) && (m.End == nil || string(k) < string(m.End))
	case OpDeletePartition:
		return true
	}
	return false
}

// Wins reports whether a value a written at timestamp ta replaces a value b
// written at tb under the same row key: the greater timestamp wins, and on
// equal timestamps the greater value as unsigned bytes.
func Wins(a []byte, ta int64, b []byte, tb int64) bool {
	if ta != tb {
		return ta > tb
	}
	return string(a) > string(b)
}

// DotTokens is an optional helper for Siblings backends that give every
// stored value a unique number (a dot) and name the siblings a Fetch
// returned by their dots. Its value is the first byte of every token it
// makes, which tells one backend's tokens from another's; the dots follow
// in ascending order as uvarints. The in-memory store uses DotTokens('m'),
// the embedded store DotTokens('e').
//
// A DotTokens is a plain value, safe for concurrent use.
type DotTokens byte

// Encode returns the token naming dots: the prefix byte, then the dots in
// ascending order. It sorts dots in place.
func (p DotTokens) Encode(dots []uint64) Token {
	slices.Sort(dots)
	b := []byte{byte(p)}
	for _, d := range dots {
		b = binary.AppendUvarint(b, d)
	}
	return b
}

// Decode returns the dots t names, in the order t lists them; an empty
// token names none. A token that does not start with the prefix byte, or
// whose dots do not parse, is an error wrapping crdt.ErrCorruptEncoding.
func (p DotTokens) Decode(t Token) ([]uint64, error) {
	if len(t) == 0 {
		return nil, nil
	}
	if t[0] != byte(p) {
		return nil, fmt.Errorf("store: token starts with %q, not %q: %w", t[0], byte(p), crdt.ErrCorruptEncoding)
	}
	var dots []uint64
	for rest := t[1:]; len(rest) > 0; {
		d, n := binary.Uvarint(rest)
		if n <= 0 {
			return nil, fmt.Errorf("store: malformed dot %d of a token: %w", len(dots)+1, crdt.ErrCorruptEncoding)
		}
		dots = append(dots, d)
		rest = rest[n:]
	}
	return dots, nil
}
