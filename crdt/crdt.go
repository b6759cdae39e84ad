// Package crdt is counterkit's shared vocabulary: actor and transaction ids,
// the sentinel errors every package wraps, the contracts the counter types
// share, and the versioned envelope every encoding starts with.
//
// It has no I/O and depends on nothing but the standard library.
package crdt

// State is the contract every state-based counter type implements. T is the
// concrete pointer type itself (for example *gcounter.Counter).
//
// Merge folds other into the receiver so that the receiver becomes the join
// (least upper bound) of the two states. Merge is commutative, associative and
// idempotent on the value it produces; it never modifies other. When the join
// cannot be represented (an exact sum would overflow, a size limit would be
// exceeded) Merge returns an error wrapping a sentinel and leaves the
// receiver unchanged. Where a stored state can hold copies of one
// transaction written concurrently with different amounts (tpncounter's
// entries, balance's rows), that is not such a case: the type resolves
// them deterministically as part of the join and reports them, so that no
// stored state is left that no one can read.
//
// Clone returns a deep copy that shares no memory with the receiver. Equal
// reports whether two states are observably the same (same value, same
// per-actor entries, same encoding).
//
// Nil values, alike in every type: Merge(nil), and merging a state with
// itself, change nothing and return nil; read-only methods on a nil pointer
// (Value, Len, Equal, Stats, lookups) answer as the empty state does;
// methods that change the receiver panic on a nil pointer, as any nil
// pointer use does.
type State[T any] interface {
	Merge(other T) error
	Clone() T
	Equal(other T) bool
}

// Valuer is implemented by counters whose value is an exact int64.
type Valuer interface {
	Value() int64
}

// Codec is implemented by every type that has a wire encoding. MarshalBinary
// is deterministic: equal states give identical bytes. UnmarshalBinary
// replaces the receiver only on success; on error the receiver is unchanged
// and the error wraps ErrCorruptEncoding, ErrUnsupportedVersion,
// ErrTypeMismatch or ErrTooLarge.
type Codec interface {
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}
