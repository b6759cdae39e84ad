package storetest

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
)

// The kit must be able to fail: every check runs here against stores broken
// on purpose, and must report the break. A mutant lists the checks that
// must fail on it; every other check may pass or fail.

// heavy checks (values of store.MaxValue, batches of store.MaxBatch) run on a mutant
// only when it must fail them.
var heavy = []string{"limits", "refusals", "value-size"}

// concurrentChecks are the checks that start goroutines (kitrun.Parallel);
// every other check runs on one goroutine, and so do the stores here.
var concurrentChecks = []string{"concurrent", "isolation"}

// runChecks runs checks on fresh stores from mk and returns the error of
// each by name; with mustFail not nil, heavy checks not in it are skipped.
// In the race pass (-short) it runs concurrentChecks alone: the full pass
// runs the others without -race. A check it skips has no entry.
func runChecks[S any](t *testing.T, checks []check[S], mk func() S, mustFail ...string) map[string]error {
	t.Helper()
	out := map[string]error{}
	for _, c := range checks {
		if mustFail != nil && slices.Contains(heavy, c.name) && !slices.Contains(mustFail, c.name) {
			continue
		}
		if testing.Short() && !slices.Contains(concurrentChecks, c.name) {
			continue
		}
		e := &env[S]{fresh: mk, seed: 1, cases: defaultCases, replay: "seed 1", logf: func(string, ...any) {}}
		out[c.name] = runSafely(func() error { return c.fn(context.Background(), e) })
	}
	return out
}

// skipSequentialMutant skips, in the race pass (-short), a mutant that
// must fail no check of concurrentChecks: the checks that catch it run on
// one goroutine, and the full pass runs them without -race.
func skipSequentialMutant(t *testing.T, mustFail []string) {
	if testing.Short() && !slices.ContainsFunc(mustFail, func(n string) bool { return slices.Contains(concurrentChecks, n) }) {
		t.Skip(testsize.SequentialReason)
	}
}

// runSafely turns a panic of a broken store into an error.
func runSafely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

func names[S any](checks []check[S]) []string {
	var n []string
	for _, c := range checks {
		n = append(n, c.name)
	}
	return n
}

func TestCheckNamesAreUnique(t *testing.T) {
	for _, n := range [][]string{names(siblingChecks), names(partitionChecks)} {
		if s := slices.Compact(slices.Sorted(slices.Values(n))); len(s) != len(n) {
			t.Fatalf("duplicate check names in %v", n)
		}
	}
}

// The correct stores pass every check, so the failures below are the
// mutations' doing.
//
// In the race pass (-short) both run concurrentChecks alone (runChecks).
func TestReferenceStoresPass(t *testing.T) {
	for name, err := range runChecks(t, siblingChecks, func() store.Siblings { return memory.NewSiblings() }) {
		if err != nil {
			t.Errorf("memory.Siblings fails %s: %v", name, err)
		}
	}
	for name, err := range runChecks(t, partitionChecks, func() store.Partitions { return &modelStore{} }) {
		if err != nil {
			t.Errorf("the model store fails %s: %v", name, err)
		}
	}
}

// ---- Siblings mutants ----

type sibWrap struct {
	store.Siblings
	fetch func(ctx context.Context, key string) ([][]byte, store.Token, error)
	put   func(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error
	del   func(ctx context.Context, key string, token store.Token) error
}

func (w *sibWrap) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if w.fetch != nil {
		return w.fetch(ctx, key)
	}
	return w.Siblings.Fetch(ctx, key)
}

func (w *sibWrap) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if w.put != nil {
		return w.put(ctx, key, actor, value, token)
	}
	return w.Siblings.Put(ctx, key, actor, value, token)
}

func (w *sibWrap) Delete(ctx context.Context, key string, token store.Token) error {
	if w.del != nil {
		return w.del(ctx, key, token)
	}
	return w.Siblings.(store.SiblingDeleter).Delete(ctx, key, token)
}

// batchWrap is a sibWrap that deletes in batches by batch.
type batchWrap struct {
	*sibWrap
	batch func(ctx context.Context, keys []string, tokens []store.Token) error
}

func (w batchWrap) DeleteBatch(ctx context.Context, keys []string, tokens []store.Token) error {
	return w.batch(ctx, keys, tokens)
}

var siblingMutants = []struct {
	name     string
	mustFail []string
	make     func() store.Siblings
}{
	{"DeleteBatch deletes what a new Fetch finds", []string{"delete-batch"}, func() store.Siblings {
		in := memory.NewSiblings()
		return batchWrap{&sibWrap{Siblings: in}, func(ctx context.Context, keys []string, tokens []store.Token) error {
			if len(keys) != len(tokens) {
				return in.DeleteBatch(ctx, keys, tokens)
			}
			fresh := make([]store.Token, len(keys))
			for i, k := range keys {
				if _, err := decodeCheck(in, ctx, k, tokens[i]); err != nil {
					return err
				}
				_, fresh[i], _ = in.Fetch(ctx, k)
			}
			return in.DeleteBatch(ctx, keys, fresh)
		}}
	}},
	{"DeleteBatch deletes the keys before a bad one", []string{"delete-batch"}, func() store.Siblings {
		in := memory.NewSiblings()
		return batchWrap{&sibWrap{Siblings: in}, func(ctx context.Context, keys []string, tokens []store.Token) error {
			for i, k := range keys {
				if i < len(tokens) {
					if err := in.Delete(ctx, k, tokens[i]); err != nil {
						return err
					}
				}
			}
			return in.DeleteBatch(ctx, keys, tokens)
		}}
	}},
	{"Put ignores the token", []string{"supersede", "stale-token", "malformed-token"}, func() store.Siblings {
		in := memory.NewSiblings()
		return &sibWrap{Siblings: in, put: func(ctx context.Context, k string, a crdt.ActorID, v []byte, _ store.Token) error {
			return in.Put(ctx, k, a, v, nil)
		}}
	}},
	{"Put supersedes every sibling, read or not", []string{"stale-token", "nil-token", "concurrent"}, func() store.Siblings {
		in := memory.NewSiblings()
		var mu sync.Mutex
		return &sibWrap{Siblings: in, put: func(ctx context.Context, k string, a crdt.ActorID, v []byte, tok store.Token) error {
			if _, err := decodeCheck(in, ctx, k, tok); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			_, latest, err := in.Fetch(ctx, k)
			if err != nil {
				return err
			}
			return in.Put(ctx, k, a, v, latest)
		}}
	}},
	{"Put reuses the buffer of the value it supersedes", []string{"read-only"}, func() store.Siblings {
		in := memory.NewSiblings()
		var mu sync.Mutex
		kept := map[string][]byte{}
		return &sibWrap{Siblings: in,
			fetch: func(ctx context.Context, k string) ([][]byte, store.Token, error) {
				vals, tok, err := in.Fetch(ctx, k)
				mu.Lock()
				defer mu.Unlock()
				if len(vals) == 1 {
					kept[k] = vals[0]
				}
				return vals, tok, err
			},
			put: func(ctx context.Context, k string, a crdt.ActorID, v []byte, tok store.Token) error {
				mu.Lock()
				// Only the value the read-only check uses: the concurrent
				// check's goroutines would race on any other.
				if old := kept[k]; len(old) == len(v) && string(old) == "value" {
					copy(old, v) // writes into a value the store returned
					v = old
				}
				mu.Unlock()
				return in.Put(ctx, k, a, v, tok)
			},
		}
	}},
	{"invalid keys and actors accepted", []string{"keys-and-actors"}, func() store.Siblings {
		in := memory.NewSiblings()
		mapKey := func(k string) string {
			if crdt.ValidateKey("key", k) != nil {
				return fmt.Sprintf("bad-%d-%08x", len(k), crc32.ChecksumIEEE([]byte(k)))
			}
			return k
		}
		return &sibWrap{Siblings: in,
			fetch: func(ctx context.Context, k string) ([][]byte, store.Token, error) { return in.Fetch(ctx, mapKey(k)) },
			put: func(ctx context.Context, k string, a crdt.ActorID, v []byte, tok store.Token) error {
				if a.Validate() != nil {
					a = "fixed"
				}
				return in.Put(ctx, mapKey(k), a, v, tok)
			},
			del: func(ctx context.Context, k string, tok store.Token) error { return in.Delete(ctx, mapKey(k), tok) },
		}
	}},
	{"a malformed token read as nil", []string{"malformed-token"}, func() store.Siblings {
		in := memory.NewSiblings()
		return &sibWrap{Siblings: in,
			put: func(ctx context.Context, k string, a crdt.ActorID, v []byte, tok store.Token) error {
				err := in.Put(ctx, k, a, v, tok)
				if errors.Is(err, crdt.ErrCorruptEncoding) {
					return in.Put(ctx, k, a, v, nil)
				}
				return err
			},
		}
	}},
	{"an absent key fetched with a phantom sibling", []string{"absent"}, func() store.Siblings {
		in := memory.NewSiblings()
		return &sibWrap{Siblings: in, fetch: func(ctx context.Context, k string) ([][]byte, store.Token, error) {
			vals, tok, err := in.Fetch(ctx, k)
			if err == nil && len(vals) == 0 {
				vals = [][]byte{[]byte("phantom")}
			}
			return vals, tok, err
		}}
	}},
	{"context ignored", []string{"cancelled"}, func() store.Siblings {
		in := memory.NewSiblings()
		return &sibWrap{Siblings: in,
			fetch: func(_ context.Context, k string) ([][]byte, store.Token, error) {
				return in.Fetch(context.Background(), k)
			},
			put: func(_ context.Context, k string, a crdt.ActorID, v []byte, tok store.Token) error {
				return in.Put(context.Background(), k, a, v, tok)
			},
			del: func(_ context.Context, k string, tok store.Token) error {
				return in.Delete(context.Background(), k, tok)
			},
		}
	}},
	{"the largest values refused", []string{"value-size"}, func() store.Siblings {
		in := memory.NewSiblings()
		return &sibWrap{Siblings: in, put: func(ctx context.Context, k string, a crdt.ActorID, v []byte, tok store.Token) error {
			if len(v) > 1<<20 {
				return fmt.Errorf("over 1 MiB: %w", crdt.ErrTooLarge)
			}
			return in.Put(ctx, k, a, v, tok)
		}}
	}},
	{"oversized values cut to size", []string{"value-size"}, func() store.Siblings {
		in := memory.NewSiblings()
		return &sibWrap{Siblings: in, put: func(ctx context.Context, k string, a crdt.ActorID, v []byte, tok store.Token) error {
			return in.Put(ctx, k, a, v[:min(len(v), store.MaxValue)], tok)
		}}
	}},
	{"Delete removes every sibling", []string{"delete"}, func() store.Siblings {
		in := memory.NewSiblings()
		return &sibWrap{Siblings: in,
			del: func(ctx context.Context, k string, tok store.Token) error {
				if _, err := decodeCheck(in, ctx, k, tok); err != nil {
					return err
				}
				_, latest, err := in.Fetch(ctx, k)
				if err != nil {
					return err
				}
				return in.Delete(ctx, k, latest)
			},
		}
	}},
}

// decodeCheck lets a mutant refuse what the real store refuses.
func decodeCheck(in *memory.Siblings, ctx context.Context, k string, tok store.Token) (bool, error) {
	if err := crdt.ValidateKey("key", k); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if len(tok) > 0 && tok[0] != 'm' {
		return false, fmt.Errorf("bad token: %w", crdt.ErrCorruptEncoding)
	}
	return true, nil
}

// TestSiblingMutantsAreCaught: each mutant fails the checks it lists. In
// the race pass (-short) only concurrentChecks run (runChecks): a mutant
// that must fail none of them skips, and the others are held to those.
func TestSiblingMutantsAreCaught(t *testing.T) {
	for _, m := range siblingMutants {
		t.Run(m.name, func(t *testing.T) {
			skipSequentialMutant(t, m.mustFail)
			res := runChecks(t, siblingChecks, m.make, m.mustFail...)
			var caught []string
			for _, n := range names(siblingChecks) {
				if res[n] != nil {
					caught = append(caught, n)
				}
			}
			for _, n := range m.mustFail {
				if err, ran := res[n]; ran && err == nil {
					t.Errorf("check %s passed on a store where %s", n, m.name)
				}
			}
			if len(caught) == 0 {
				t.Fatalf("no check caught a store where %s", m.name)
			}
			t.Logf("caught by %v; first: %v", caught, res[caught[0]])
		})
	}
}
