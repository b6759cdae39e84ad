// Package mc is a stateless model checker for the drivers built on
// store.Siblings: a store whose every call waits until the explorer
// decides its fate, scripts of operations run as goroutines, and a
// depth-first search over every sequence of decisions, re-executing each
// schedule from scratch.
package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Fate is what the explorer does with one store call.
type Fate uint8

// The fates.
const (
	// Deliver runs the call on the store now.
	Deliver Fate = iota
	// Refuse fails the call with crdt.ErrUnavailable; nothing is written.
	Refuse
	// LoseAck writes and answers crdt.ErrAmbiguousWrite.
	LoseAck
	// Hold answers crdt.ErrAmbiguousWrite now; the write lands when the
	// explorer delivers it, at a later step or at the end.
	Hold
	// Stale serves a Fetch from a version of the key before the
	// current one, with that version's token: the one just before, or
	// up to Scope.MaxStaleAge versions back (its age).
	Stale
	// Unclassified writes and answers an error wrapping ErrUnclassified,
	// neither crdt.ErrAmbiguousWrite nor crdt.ErrUnavailable.
	Unclassified
	// CancelBefore ends the caller's context; the call then does nothing
	// and answers the context's error.
	CancelBefore
	// CancelAfter runs the call, then ends the caller's context; a write
	// then answers crdt.ErrAmbiguousWrite with the context's error.
	CancelAfter
	numFates
)

var fateNames = [...]string{"deliver", "refuse", "lose-ack", "hold", "stale", "unclassified", "cancel-before", "cancel-after"}

func (f Fate) String() string {
	if int(f) < len(fateNames) {
		return fateNames[f]
	}
	return fmt.Sprintf("Fate(%d)", uint8(f))
}

// Fates is a set of fates.
type Fates uint16

// Of returns the set of fs.
func Of(fs ...Fate) Fates {
	var s Fates
	for _, f := range fs {
		s |= 1 << f
	}
	return s
}

// AllFates holds every fate.
const AllFates = Fates(1<<numFates - 1)

// Has reports whether f is in s.
func (s Fates) Has(f Fate) bool { return s&(1<<f) != 0 }

// ErrUnclassified is the error of the Unclassified fate.
var ErrUnclassified = errors.New("mc: unclassified store error")

// call is one store call waiting for its fate.
type call struct {
	id     string
	script string
	op     *Op
	method string
	key    string
	actor  crdt.ActorID
	value  []byte
	token  store.Token
	ctx    context.Context
	answer chan answer
}

type answer struct {
	vals [][]byte
	tok  store.Token
	err  error
}

type heldPut struct {
	id    string
	op    *Op
	key   string
	actor crdt.ActorID
	value []byte
	token store.Token
}

type version struct {
	vals [][]byte
	tok  store.Token
}

// Store is the scheduler store: a store.Siblings whose calls wait for the
// explorer. Hand it to the drivers under test.
type Store struct {
	w     *World
	inner *memory.Siblings

	mu      sync.Mutex
	pending map[string]*call
	arrived map[string]int // calls per op, method and key, to name them
	held    []heldPut
	// versions lists every state of each key that a landed write left,
	// the first being the key's state before the run's first write.
	versions map[string][]version
	// writes counts the landed writes of each key by each actor.
	writes map[string]map[crdt.ActorID]int
	// direct makes every call run at once (the end's settling calls).
	direct bool
	// landings lists the landed writes of each key, with the fake time.
	landings map[string][]Landing
	// names are the names of keys in traces (Name).
	names map[string]string
}

// Landing is one write that landed: its actor, the fake time, and the
// operation that made it (nil for a write outside any operation).
type Landing struct {
	Actor crdt.ActorID
	At    time.Time
	Op    *Op
}

// Name makes traces show key as name (a transaction record's key, say,
// as record(<txn>)). Call it from Scope.Build.
func (s *Store) Name(key, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string]string{}
	}
	s.names[key] = name
}

// keyName is key's name in traces; s.mu is held.
func (s *Store) keyName(key string) string {
	if n, ok := s.names[key]; ok {
		return n
	}
	return key
}

// Landings returns the writes of key that landed, in order.
func (s *Store) Landings(key string) []Landing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Landing(nil), s.landings[key]...)
}

var _ store.Siblings = (*Store)(nil)

func newStore(w *World, inner *memory.Siblings) *Store {
	return &Store{w: w, inner: inner, pending: map[string]*call{}, arrived: map[string]int{},
		versions: map[string][]version{}, writes: map[string]map[crdt.ActorID]int{}, landings: map[string][]Landing{}}
}

// Held returns how many writes are held in flight.
func (s *Store) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// Writes returns how many writes of actor on key have landed.
func (s *Store) Writes(key string, actor crdt.ActorID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[key][actor]
}

// Fetch waits for its fate.
func (s *Store) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	a := s.wait(ctx, "Fetch", key, "", nil, nil)
	return a.vals, a.tok, a.err
}

// Put waits for its fate.
func (s *Store) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	return s.wait(ctx, "Put", key, actor, value, token).err
}

func (s *Store) wait(ctx context.Context, method, key string, actor crdt.ActorID, value []byte, token store.Token) answer {
	op, _ := ctx.Value(opKey{}).(*Op)
	label, script := "?", "?"
	if op != nil {
		label, script = op.Label, op.script
	}
	c := &call{script: script, op: op, method: method, key: key, actor: actor,
		value: append([]byte(nil), value...), token: append(store.Token(nil), token...),
		ctx: ctx, answer: make(chan answer, 1)}
	s.mu.Lock()
	if s.direct {
		s.mu.Unlock()
		return s.run(c)
	}
	base := label + " " + method + " " + s.keyName(key)
	s.arrived[base]++
	c.id = fmt.Sprintf("%s #%d", base, s.arrived[base])
	s.pending[c.id] = c
	s.mu.Unlock()
	return <-c.answer
}

// pendingCalls returns the waiting calls ordered by id.
func (s *Store) pendingCalls() []*call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*call, 0, len(s.pending))
	for _, c := range s.pending {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (s *Store) heldPuts() []heldPut {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]heldPut(nil), s.held...)
}

// hasOlder reports whether key has a version before its current one.
func (s *Store) hasOlder(key string) bool { return s.older(key) > 0 }

// older returns how many versions of key precede its current one.
func (s *Store) older(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(len(s.versions[key])-1, 0)
}

// land writes a put of op to the inner store and records the key's new
// version.
func (s *Store) land(op *Op, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	ctx := context.Background()
	s.mu.Lock()
	if _, ok := s.versions[key]; !ok {
		vs, tok, err := s.inner.Fetch(ctx, key)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		s.versions[key] = []version{{vs, tok}}
	}
	s.mu.Unlock()
	if err := s.inner.Put(ctx, key, actor, value, token); err != nil {
		return err
	}
	vs, tok, err := s.inner.Fetch(ctx, key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.versions[key] = append(s.versions[key], version{vs, tok})
	if s.writes[key] == nil {
		s.writes[key] = map[crdt.ActorID]int{}
	}
	s.writes[key][actor]++
	s.landings[key] = append(s.landings[key], Landing{actor, s.w.Clock.Now(), op})
	s.mu.Unlock()
	return nil
}

// decide runs c under fate f and answers it; a Stale fetch is served the
// version age steps before the current one (1 when age is 0).
func (s *Store) decide(c *call, f Fate, age int) {
	s.mu.Lock()
	delete(s.pending, c.id)
	if f != Deliver && c.op != nil {
		c.op.Faults++
	}
	s.mu.Unlock()
	var a answer
	cancel := func() {
		if c.op != nil {
			c.op.cancel()
		}
	}
	switch f {
	case CancelBefore:
		cancel()
		if err := c.ctx.Err(); err != nil {
			a.err = fmt.Errorf("mc: %s: %w", c.id, err)
			break
		}
		a = s.run(c) // a group's context outlives one member's
	case Refuse:
		a.err = fmt.Errorf("mc: %s: refused: %w", c.id, crdt.ErrUnavailable)
	case LoseAck:
		if a = s.run(c); a.err == nil {
			a.err = fmt.Errorf("mc: %s: acknowledgement lost: %w", c.id, crdt.ErrAmbiguousWrite)
		}
	case Hold:
		s.mu.Lock()
		s.held = append(s.held, heldPut{id: c.id, op: c.op, key: c.key, actor: c.actor, value: c.value, token: c.token})
		s.mu.Unlock()
		a.err = fmt.Errorf("mc: %s: timed out, held in flight: %w", c.id, crdt.ErrAmbiguousWrite)
	case Stale:
		s.mu.Lock()
		vs := s.versions[c.key]
		old := vs[len(vs)-1-max(age, 1)]
		s.mu.Unlock()
		a = answer{vals: old.vals, tok: old.tok}
	case Unclassified:
		if a = s.run(c); a.err == nil {
			a.err = fmt.Errorf("mc: %s: %w", c.id, ErrUnclassified)
		}
	case CancelAfter:
		a = s.run(c)
		cancel()
		if err := c.ctx.Err(); err != nil && a.err == nil && c.method == "Put" {
			a.err = fmt.Errorf("mc: %s: %w: %w", c.id, crdt.ErrAmbiguousWrite, err)
		}
	default:
		a = s.run(c)
	}
	c.answer <- a
}

// run performs c on the inner store.
func (s *Store) run(c *call) answer {
	if c.method == "Fetch" {
		vs, tok, err := s.inner.Fetch(context.Background(), c.key)
		return answer{vals: vs, tok: tok, err: err}
	}
	return answer{err: s.land(c.op, c.key, c.actor, c.value, c.token)}
}

// deliverHeld lands the i-th held put.
func (s *Store) deliverHeld(i int) error {
	s.mu.Lock()
	h := s.held[i]
	s.held = append(s.held[:i:i], s.held[i+1:]...)
	s.mu.Unlock()
	return s.land(h.op, h.key, h.actor, h.value, h.token)
}
