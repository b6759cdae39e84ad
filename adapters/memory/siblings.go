package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
)

// Siblings is an in-memory store.Siblings with real sibling semantics.
//
// Every stored value carries a unique dot. Fetch returns all live siblings
// of a key and a token naming their dots; Put removes exactly the siblings
// whose dots the token names and adds the new value with a fresh dot. So two
// writers that fetched the same siblings both survive as siblings, as in
// Riak with allow_mult=true. Fetch returns siblings in an unspecified order.
//
// The zero value is ready to use; a Siblings is safe for concurrent use.
type Siblings struct {
	mu      sync.Mutex
	keys    map[string][]dotted
	nextDot uint64
}

type dotted struct {
	dot   uint64
	value []byte
}

var (
	_ store.Siblings            = (*Siblings)(nil)
	_ store.SiblingDeleter      = (*Siblings)(nil)
	_ store.SiblingBatchDeleter = (*Siblings)(nil)
)

// NewSiblings returns an empty store.
func NewSiblings() *Siblings { return &Siblings{} }

// Fetch returns the live siblings of key (copies) and a token naming them.
func (s *Siblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if err := storekit.CheckKey(ctx, "key", key); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sibs := s.keys[key]
	if len(sibs) == 0 {
		return nil, nil, nil
	}
	out := make([][]byte, len(sibs))
	dots := make([]uint64, len(sibs))
	for i, sb := range sibs {
		out[i] = sb.value // read-only (see store.Siblings.Fetch)
		dots[i] = sb.dot
	}
	return out, dotTokens.Encode(dots), nil
}

// Put stores value under key, superseding exactly the siblings the token
// names (concurrent siblings survive).
func (s *Siblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckPut(key, actor, value); err != nil {
		return err
	}
	return s.replace(key, value, token)
}

// Delete removes the siblings the token names.
func (s *Siblings) Delete(ctx context.Context, key string, token store.Token) error {
	if err := storekit.CheckKey(ctx, "key", key); err != nil {
		return err
	}
	return s.replace(key, nil, token)
}

// replace drops the siblings the token names and adds value (if non-nil)
// under a fresh dot. A malformed token changes nothing.
func (s *Siblings) replace(key string, value []byte, token store.Token) error {
	dots, err := dotTokens.Decode(token)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(key, dots, value)
	return nil
}

// drop drops the siblings of key whose dots are listed and adds value (if
// non-nil) under a fresh dot; s.mu is held.
func (s *Siblings) drop(key string, dots []uint64, value []byte) {
	if s.keys == nil {
		s.keys = map[string][]dotted{}
	}
	next := s.keys[key] // never shared outside s.mu: Fetch copies it out
	if len(dots) > 0 {
		next = slices.DeleteFunc(next, func(sb dotted) bool { return slices.Contains(dots, sb.dot) })
	}
	if value != nil {
		s.nextDot++
		next = append(next, dotted{dot: s.nextDot, value: value}) // kept as given (see store.Siblings.Put)
	}
	if len(next) == 0 {
		delete(s.keys, key)
	} else {
		s.keys[key] = next
	}
}

// DeleteBatch removes, for each i, the siblings tokens[i] names under
// keys[i], all at once. Bad input (an invalid key, a malformed token,
// lengths that differ) is refused before anything is deleted.
func (s *Siblings) DeleteBatch(ctx context.Context, keys []string, tokens []store.Token) error {
	if len(keys) != len(tokens) {
		return fmt.Errorf("%w: memory: DeleteBatch of %d keys and %d tokens", crdt.ErrInvalidConfig, len(keys), len(tokens))
	}
	dots := make([][]uint64, len(keys))
	for i, key := range keys {
		if err := storekit.CheckKey(ctx, "key", key); err != nil {
			return err
		}
		d, err := dotTokens.Decode(tokens[i])
		if err != nil {
			return err
		}
		dots[i] = d
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, key := range keys {
		s.drop(key, dots[i], nil)
	}
	return nil
}

// Keys returns up to limit keys with siblings that start with prefix and
// come after the key after ("": from the first), in the embedded store's
// order: shorter keys first, keys of one length bytewise. Passing the last
// key returned as after reads the next page (ledger.ExpireAllRecords). Each
// call sorts the store's matching keys: fine for tests, not for millions
// of keys. A limit below 1 is refused with crdt.ErrInvalidConfig.
func (s *Siblings) Keys(ctx context.Context, prefix, after string, limit int) ([]string, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: memory: Keys limit %d, want at least 1", crdt.ErrInvalidConfig, limit)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	var keys []string
	for k := range s.keys {
		if strings.HasPrefix(k, prefix) && keyOrder(k, after) > 0 {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(keys, keyOrder)
	return keys[:min(len(keys), limit)], nil
}

// keyOrder compares keys shorter first, then bytewise.
func keyOrder(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// Count returns the number of live siblings of key.
func (s *Siblings) Count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys[key])
}

// dotTokens makes the store's tokens: 'm' followed by the dots.
const dotTokens = store.DotTokens('m')
