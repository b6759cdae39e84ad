package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/crdt/crdttest"
	"github.com/counterkit/counterkit/internal/kitrun"
	"github.com/counterkit/counterkit/store"
)

// RunSiblings checks that the stores newStore returns keep the
// store.Siblings contract, each check on a fresh, empty store:
//
//   - absent: an absent key has no values and no error;
//   - supersede: a Put with a Fetch's token replaces exactly what that
//     Fetch returned, and keys are independent;
//   - stale-token: two writers with the same token leave two siblings;
//   - nil-token: a Put with a nil token supersedes nothing another actor
//     wrote (a store may keep one value per actor: an actor's Put may
//     supersede that actor's earlier value, token or not);
//   - delete: Delete removes what its token covers and nothing written
//     since (stores that are a store.SiblingDeleter);
//   - delete-batch: DeleteBatch removes what each token covers under its
//     key and nothing written since, and refuses bad input (lengths that
//     differ, an invalid key, a malformed token, a done context) before
//     deleting anything (stores that are a store.SiblingBatchDeleter);
//   - keys-and-actors: every crdttest.ValidKeys key works; invalid keys,
//     invalid actors and empty values are refused (crdt.ErrInvalidKey,
//     crdt.ErrInvalidActor) and change nothing;
//   - value-size: a value of store.MaxValue bytes is kept intact, one
//     byte more is refused (crdt.ErrTooLarge) and changes nothing;
//   - malformed-token: a token the store never made is refused with
//     crdt.ErrCorruptEncoding and changes nothing;
//   - read-only: a store never changes a value it was given or returned
//     (it may keep them rather than copies, see store.Siblings);
//   - cancelled: a done context is honoured and the write does not happen;
//   - concurrent: goroutines fetching and putting one key never lose a
//     sibling they did not read, nor keep one they superseded.
func RunSiblings(t *testing.T, newStore func(t *testing.T) store.Siblings) {
	t.Helper()
	run(t, siblingChecks, newStore)
}

var siblingChecks = []check[store.Siblings]{
	{"absent", sibAbsent},
	{"supersede", sibSupersede},
	{"stale-token", sibStaleToken},
	{"nil-token", sibNilToken},
	{"delete", sibDelete},
	{"delete-batch", sibDeleteBatch},
	{"keys-and-actors", sibKeysAndActors},
	{"value-size", sibValueSize},
	{"malformed-token", sibMalformedToken},
	{"read-only", sibReadOnly},
	{"cancelled", sibCancelled},
	{"concurrent", sibConcurrent},
}

// bag renders values as a sorted list, the order of siblings being
// unspecified.
func bag[T string | []byte](values []T) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = strconv.Quote(string(v))
	}
	sort.Strings(s)
	return "[" + strings.Join(s, " ") + "]"
}

func (s *steps) put(key string, actor crdt.ActorID, value string, tok store.Token) {
	s.do(func() error {
		return wrap(fmt.Sprintf("put %q by %s", key, actor), s.sib.Put(s.ctx, key, actor, []byte(value), tok))
	})
}

// token returns the token of a Fetch of key.
func (s *steps) token(key string) (tok store.Token) {
	s.do(func() (err error) { _, tok, err = s.sib.Fetch(s.ctx, key); return err })
	return tok
}

// holds checks that key holds the siblings vals, or one of the sets, and
// returns the token of the Fetch.
func (s *steps) holds(key, what string, vals ...string) store.Token {
	return s.holdsEither(key, what, vals)
}

func (s *steps) holdsEither(key, what string, sets ...[]string) store.Token {
	if s.err != nil {
		return nil
	}
	got, tok, err := s.sib.Fetch(s.ctx, key)
	if err != nil {
		s.err = fmt.Errorf("%s: Fetch(%q): %w", what, key, err)
		return nil
	}
	wants := make([]string, len(sets))
	for i, set := range sets {
		wants[i] = bag(set)
	}
	if !slices.Contains(wants, bag(got)) {
		s.err = fmt.Errorf("%s: Fetch(%q) = %s, want %s", what, key, bag(got), strings.Join(wants, " or "))
	}
	return tok
}

// del deletes what tok covers of key; what names the call in an error.
func (s *steps) del(key string, tok store.Token, what string) {
	s.do(func() error { return wrap(what, s.sib.(store.SiblingDeleter).Delete(s.ctx, key, tok)) })
}

func sibAbsent(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	tok := s.holds("absent", "fetch of an absent key")
	// Its token is good for a Put.
	s.put("absent", "a", "v", tok)
	s.holds("absent", "after a Put with the token of an absent key", "v")
	return s.err
}

func sibSupersede(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	s.put("k", "a", "v1", nil)
	s.put("other", "a", "o1", nil)
	tok := s.holds("k", "after one Put", "v1")
	s.put("k", "a", "v2", tok)
	tok = s.holds("k", "a Put with the token of a Fetch supersedes what it returned", "v2")
	// A writer with the latest token, by another actor, supersedes too.
	s.put("k", "b", "v3", tok)
	s.holds("k", "a Put by another actor with the latest token", "v3")
	s.holds("other", "another key is independent", "o1")
	return s.err
}

func sibStaleToken(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	s.put("k", "a", "v0", nil)
	tok := s.token("k")
	s.put("k", "a", "from a", tok)
	s.put("k", "b", "from b", tok)
	tok = s.holds("k", "two writers with the same token", "from a", "from b")
	// The same actor twice with the same token leaves two siblings, or
	// only its later value in a store that keeps one value per actor.
	s.put("k", "a", "m1", tok)
	s.put("k", "a", "m2", tok)
	tok = s.holdsEither("k", "one actor writing twice with the same token", []string{"m1", "m2"}, []string{"m2"})
	s.put("k", "c", "merged", tok)
	s.holds("k", "a Put with the token of both siblings", "merged")
	return s.err
}

func sibNilToken(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	for _, w := range []struct{ actor, value string }{{"a", "v1"}, {"b", "v2"}, {"c", "v2"}} {
		s.put("k", crdt.ActorID(w.actor), w.value, nil)
	}
	s.holds("k", "three actors' Puts with a nil token, two of equal values", "v1", "v2", "v2")
	// An actor writing again: its earlier value may go (one value per
	// actor), the others' stay.
	s.put("k", "a", "v3", nil)
	s.holdsEither("k", "an actor's second Put with a nil token", []string{"v1", "v2", "v2", "v3"}, []string{"v2", "v2", "v3"})
	return s.err
}

func sibDelete(ctx context.Context, e *env[store.Siblings]) error {
	sib := e.fresh()
	if _, ok := sib.(store.SiblingDeleter); !ok {
		e.logf("%T is not a store.SiblingDeleter; nothing to check", sib)
		return nil
	}
	s := &steps{ctx: ctx, sib: sib}
	s.put("k", "a", "v1", nil)
	tok := s.token("k")
	s.put("k", "b", "since", nil)
	s.del("k", tok, "delete with the token of a Fetch")
	tok = s.holds("k", "Delete keeps siblings written since its Fetch", "since")
	s.del("k", nil, "delete with a nil token")
	s.holds("k", "Delete with a nil token removes nothing", "since")
	s.del("k", tok, "delete with the latest token")
	s.holds("k", "Delete with the latest token")
	s.del("never", s.token("never"), "delete of an absent key")
	// A deleted key can be written again.
	s.put("k", "a", "again", nil)
	s.holds("k", "a Put after Delete", "again")
	return s.err
}

func sibDeleteBatch(ctx context.Context, e *env[store.Siblings]) error {
	sib := e.fresh()
	d, ok := sib.(store.SiblingBatchDeleter)
	if !ok {
		e.logf("%T is not a store.SiblingBatchDeleter; nothing to check", sib)
		return nil
	}
	s := &steps{ctx: ctx, sib: sib}
	s.put("a", "x", "a1", nil)
	s.put("b", "x", "b1", nil)
	s.put("c", "x", "c1", nil)
	ta, tb := s.token("a"), s.token("b")
	s.put("b", "y", "since", nil)
	done, cancel := context.WithCancel(ctx)
	cancel()
	s.refused(d.DeleteBatch(ctx, []string{"a", "b"}, []store.Token{ta}), crdt.ErrInvalidConfig, "a batch of 2 keys and 1 token")
	for name, bad := range crdttest.InvalidKeys() {
		s.refused(d.DeleteBatch(ctx, []string{"a", bad}, []store.Token{ta, nil}), crdt.ErrInvalidKey, "a batch with an invalid key (%s)", name)
	}
	for _, b := range malformedTokens {
		s.refused(d.DeleteBatch(ctx, []string{"a", "b"}, []store.Token{ta, b}), crdt.ErrCorruptEncoding, "a batch with malformed token %q", b)
	}
	s.refused(d.DeleteBatch(done, []string{"a"}, []store.Token{ta}), context.Canceled, "a batch with a cancelled context")
	s.holds("a", "refused batches delete nothing", "a1")
	s.holds("b", "refused batches delete nothing", "b1", "since")
	s.do(func() error { return wrap("an empty batch", d.DeleteBatch(ctx, nil, nil)) })
	s.do(func() error {
		return wrap("a batch with the tokens of Fetches", d.DeleteBatch(ctx, []string{"a", "b", "never"}, []store.Token{ta, tb, nil}))
	})
	s.holds("a", "a batch removes what its token covers")
	s.holds("b", "a batch keeps siblings written since its Fetch", "since")
	s.holds("c", "a batch leaves other keys", "c1")
	return s.err
}

func sibKeysAndActors(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	for name, k := range crdttest.ValidKeys() {
		s.put(k, "a", name, nil)
		s.holds(k, "a valid key ("+name+")", name)
	}
	const k = "refusals"
	s.put(k, "a", "v", nil)
	tok := s.token(k)
	d, deletes := s.sib.(store.SiblingDeleter)
	for name, bad := range crdttest.InvalidKeys() {
		_, _, err := s.sib.Fetch(ctx, bad)
		s.refused(err, crdt.ErrInvalidKey, "fetch with an invalid key (%s)", name)
		s.refused(s.sib.Put(ctx, bad, "a", []byte("x"), nil), crdt.ErrInvalidKey, "put with an invalid key (%s)", name)
		if deletes {
			s.refused(d.Delete(ctx, bad, nil), crdt.ErrInvalidKey, "delete with an invalid key (%s)", name)
		}
	}
	for name, a := range crdttest.InvalidKeys() {
		s.refused(s.sib.Put(ctx, k, crdt.ActorID(a), []byte("x"), tok), crdt.ErrInvalidActor, "put with an invalid actor (%s)", name)
	}
	for _, v := range [][]byte{nil, {}} {
		if err := s.sib.Put(ctx, k, "a", v, tok); err == nil && s.err == nil {
			s.err = fmt.Errorf("put of an empty value (%#v) succeeded", v)
		}
	}
	s.holds(k, "refused Puts change nothing", "v")
	return s.err
}

func sibValueSize(ctx context.Context, e *env[store.Siblings]) error {
	s := e.fresh()
	largest := bytes.Repeat([]byte{'v'}, store.MaxValue)
	if err := s.Put(ctx, "k", "a", largest, nil); err != nil {
		return fmt.Errorf("a value of store.MaxValue bytes: %w", err)
	}
	// intact fails with what unless k holds largest alone.
	intact := func(what string) (store.Token, error) {
		got, tok, err := s.Fetch(ctx, "k")
		if err == nil && (len(got) != 1 || !bytes.Equal(got[0], largest)) {
			err = errors.New(what)
		}
		return tok, err
	}
	tok, err := intact("a value of store.MaxValue bytes did not read back intact")
	if err != nil {
		return err
	}
	if err := wantErr(s.Put(ctx, "k", "b", append(largest, 'v'), tok), crdt.ErrTooLarge, "a value of store.MaxValue+1 bytes"); err != nil {
		return err
	}
	_, err = intact("a refused oversized Put changed the store")
	return err
}

// malformedTokens are tokens no backend makes.
var malformedTokens = []store.Token{
	{0xff, 0xfe, 0xfd, 0xfc},
	store.Token("\x00\x01not a token\xff\xff\xff"),
}

func sibMalformedToken(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	s.put("k", "a", "v", nil)
	tok := s.token("k")
	d, deletes := s.sib.(store.SiblingDeleter)
	for _, b := range append(slices.Clone(malformedTokens), append(slices.Clone(tok), 0xff, 0xff, 0xff, 0xff)) {
		s.refused(s.sib.Put(ctx, "k", "a", []byte("w"), b), crdt.ErrCorruptEncoding, "put with malformed token %q", b)
		if deletes {
			s.refused(d.Delete(ctx, "k", b), crdt.ErrCorruptEncoding, "delete with malformed token %q", b)
		}
	}
	s.holds("k", "refused Puts and Deletes change nothing", "v")
	return s.err
}

func sibReadOnly(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	v := []byte("value")
	if err := s.sib.Put(ctx, "k", "a", v, nil); err != nil {
		return err
	}
	got, tok, err := s.sib.Fetch(ctx, "k")
	if err != nil {
		return err
	}
	// Supersede it, with a value of the same size, then remove the key.
	s.put("k", "a", "other", tok)
	tok = s.holds("k", "after a Put superseding it", "other")
	if _, ok := s.sib.(store.SiblingDeleter); ok {
		s.del("k", tok, "delete")
	}
	if s.err == nil && (string(v) != "value" || bag(got) != bag([]string{"value"})) {
		return fmt.Errorf("the store changed a value it was given (%q) or returned (%s)", v, bag(got))
	}
	return s.err
}

func sibCancelled(ctx context.Context, e *env[store.Siblings]) error {
	s := &steps{ctx: ctx, sib: e.fresh()}
	s.put("k", "a", "v", nil)
	tok := s.token("k")
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err := s.sib.Fetch(done, "k")
	s.refused(err, context.Canceled, "fetch with a cancelled context")
	s.refused(s.sib.Put(done, "k", "a", []byte("w"), tok), context.Canceled, "put with a cancelled context")
	if d, ok := s.sib.(store.SiblingDeleter); ok {
		s.refused(d.Delete(done, "k", tok), context.Canceled, "delete with a cancelled context")
	}
	s.holds("k", "calls with a cancelled context change nothing", "v")
	return s.err
}

// sibConcurrent runs writers that each fetch a key and put a unique value
// with the token. Every value must end up present unless a Put's Fetch
// returned it (then it must be gone).
func sibConcurrent(ctx context.Context, e *env[store.Siblings]) error {
	e.logSeed()
	s := e.fresh()
	const writers, rounds = 4, 25
	var mu sync.Mutex
	written := map[string]bool{}
	superseded := map[string]bool{}
	err := kitrun.Parallel(writers, func(w int) error {
		rng := rand.New(rand.NewSource(e.seed + int64(w)))
		for r := range rounds {
			// An actor per Put: a store may keep one value per actor.
			actor := crdt.ActorID(fmt.Sprintf("w%d-%d", w, r))
			vals, tok, err := s.Fetch(ctx, "k")
			if err != nil {
				return err
			}
			if rng.Intn(4) == 0 {
				tok, vals = nil, nil // now and then a blind write
			}
			if rng.Intn(2) == 0 {
				runtime.Gosched() // let another writer in between
			}
			v := string(actor)
			if err := s.Put(ctx, "k", actor, []byte(v), tok); err != nil {
				return err
			}
			mu.Lock()
			written[v] = true
			for _, old := range vals {
				superseded[string(old)] = true
			}
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return e.seeded(err)
	}
	got, _, err := s.Fetch(ctx, "k")
	if err != nil {
		return err
	}
	final := map[string]int{}
	for _, v := range got {
		final[string(v)]++
	}
	for v := range written {
		switch {
		case superseded[v] && final[v] > 0:
			return e.seeded(fmt.Errorf("concurrent writers: %q was superseded by a Put whose Fetch returned it, yet survives", v))
		case !superseded[v] && final[v] == 0:
			return e.seeded(fmt.Errorf("concurrent writers: %q was lost, though no Put's Fetch returned it", v))
		}
	}
	for v, n := range final {
		if !written[v] || n > 1 {
			return e.seeded(fmt.Errorf("concurrent writers: %q appears %d times, written %v", v, n, written[v]))
		}
	}
	e.logf("%d writes, %d siblings left", len(written), len(got))
	return nil
}
