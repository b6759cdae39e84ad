package memory

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// Ledgers is an in-memory ledger.Store with real sibling semantics, the
// reference backend for tests, examples and simulations. It is not durable
// and is meant for tests.
//
// Every stored value carries a unique dot. Fetch returns all live siblings
// of a key and a token naming their dots; Put removes exactly the siblings
// whose dots the token names and adds the new value with a fresh dot. So two
// writers that fetched the same siblings both survive as siblings, as in
// Riak with allow_mult=true. Fetch returns siblings in an unspecified order.
//
// Ledgers keeps the last HistoryDepth sibling sets of each key so that the
// Faulty wrapper can serve stale reads. The zero value is ready to use; a
// Ledgers is safe for concurrent use.
type Ledgers struct {
	mu      sync.Mutex
	keys    map[string]*ledgerKey
	nextDot uint64
}

// HistoryDepth is how many past sibling sets Ledgers keeps per key for
// stale reads.
const HistoryDepth = 16

type sibling struct {
	dot   uint64
	value []byte
}

type ledgerKey struct {
	live []sibling
	past [][]sibling // older sibling sets, newest last
}

var _ ledger.Store = (*Ledgers)(nil)
var _ ledger.Deleter = (*Ledgers)(nil)

// NewLedgers returns an empty store.
func NewLedgers() *Ledgers { return &Ledgers{} }

// Fetch returns the live siblings of key (copies) and a token naming them.
func (s *Ledgers) Fetch(ctx context.Context, key string) ([][]byte, ledger.Token, error) {
	return s.fetch(ctx, key, 0)
}

// fetch returns the sibling set as it was age writes ago (0: live).
func (s *Ledgers) fetch(ctx context.Context, key string, age int) ([][]byte, ledger.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[key]
	if k == nil {
		return nil, nil, nil
	}
	sibs := k.live
	if age > 0 && len(k.past) > 0 {
		sibs = k.past[max(0, len(k.past)-age)]
	}
	out := make([][]byte, len(sibs))
	dots := make([]uint64, len(sibs))
	for i, sb := range sibs {
		out[i] = slices.Clone(sb.value)
		dots[i] = sb.dot
	}
	return out, encodeToken(dots), nil
}

// Put stores value under key, superseding exactly the siblings the token
// names (concurrent siblings survive). A malformed token is an error
// wrapping crdt.ErrCorruptEncoding.
func (s *Ledgers) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token ledger.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := actor.Validate(); err != nil {
		return err
	}
	dots, err := decodeToken(token)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(key, value, dots)
	return nil
}

func (s *Ledgers) put(key string, value []byte, dots []uint64) {
	if s.keys == nil {
		s.keys = map[string]*ledgerKey{}
	}
	k := s.keys[key]
	if k == nil {
		k = &ledgerKey{}
		s.keys[key] = k
	}
	k.past = append(k.past, k.live)
	if len(k.past) > HistoryDepth {
		k.past = k.past[1:]
	}
	next := make([]sibling, 0, len(k.live)+1)
	for _, sb := range k.live {
		if !slices.Contains(dots, sb.dot) {
			next = append(next, sb)
		}
	}
	s.nextDot++
	if value != nil {
		next = append(next, sibling{dot: s.nextDot, value: slices.Clone(value)})
	}
	k.live = next
}

// Delete removes the siblings the token names.
func (s *Ledgers) Delete(ctx context.Context, key string, token ledger.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dots, err := decodeToken(token)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(key, nil, dots)
	return nil
}

// Siblings returns the number of live siblings of key (a test helper).
func (s *Ledgers) Siblings(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.keys[key]; k != nil {
		return len(k.live)
	}
	return 0
}

const tokenMagic = 'm'

func encodeToken(dots []uint64) ledger.Token {
	slices.Sort(dots)
	b := []byte{tokenMagic}
	for _, d := range dots {
		b = binary.AppendUvarint(b, d)
	}
	return b
}

func decodeToken(t ledger.Token) ([]uint64, error) {
	if len(t) == 0 {
		return nil, nil
	}
	if t[0] != tokenMagic {
		return nil, fmt.Errorf("%w: not a memory store token", crdt.ErrCorruptEncoding)
	}
	var dots []uint64
	for rest := t[1:]; len(rest) > 0; {
		d, n := binary.Uvarint(rest)
		if n <= 0 {
			return nil, fmt.Errorf("%w: malformed memory store token", crdt.ErrCorruptEncoding)
		}
		dots = append(dots, d)
		rest = rest[n:]
	}
	return dots, nil
}

// PutFault is a fault the Faulty wrapper injects into one Put.
type PutFault uint8

// The injectable Put faults.
const (
	// PutOK lets the write land and acknowledges it.
	PutOK PutFault = iota
	// PutRefused fails before landing: nothing is stored and Put returns an
	// error wrapping crdt.ErrUnavailable.
	PutRefused
	// PutAckLost lands the write, then returns an error wrapping
	// crdt.ErrAmbiguousWrite (a timeout after the write took effect).
	PutAckLost
	// PutLost drops the write and returns an error wrapping
	// crdt.ErrAmbiguousWrite (a timeout before it took effect).
	PutLost
)

// Rates are the probabilities of random faults in Faulty.
type Rates struct {
	Refused, AckLost, Lost float64 // per Put
	Stale                  float64 // per Fetch
	MaxStaleness           int     // a stale Fetch is 1..MaxStaleness writes old (at most HistoryDepth)
}

// Faulty wraps a Ledgers with fault injection, for tests and demonstrations
// only: it refuses writes, loses acknowledgements of writes that landed,
// loses writes with an ambiguous error, and serves stale fetches (an old
// sibling set with its old token, so a Put based on it creates siblings as
// with a lagging Riak replica). Faults are either queued explicitly (FailPuts,
// StaleFetches), which take precedence, or drawn at random from Rates with a
// seeded source. A Faulty is safe for concurrent use.
type Faulty struct {
	inner *Ledgers

	mu     sync.Mutex
	rng    *rand.Rand
	rates  Rates
	puts   []PutFault
	stales []int
	counts map[PutFault]int
}

var _ ledger.Store = (*Faulty)(nil)

// NewFaulty wraps inner; seed drives the random faults.
func NewFaulty(inner *Ledgers, seed int64) *Faulty {
	return &Faulty{inner: inner, rng: rand.New(rand.NewSource(seed)), counts: map[PutFault]int{}}
}

// SetRates sets the probabilities of random faults (zero Rates: none).
func (f *Faulty) SetRates(r Rates) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.MaxStaleness = min(max(r.MaxStaleness, 1), HistoryDepth)
	f.rates = r
}

// FailPuts queues faults for the next Puts, in order.
func (f *Faulty) FailPuts(faults ...PutFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts = append(f.puts, faults...)
}

// StaleFetches queues stale reads for the next Fetches: each value is how
// many writes old the returned sibling set is (0: fresh).
func (f *Faulty) StaleFetches(ages ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stales = append(f.stales, ages...)
}

// Injected returns how many Puts received fault pf so far.
func (f *Faulty) Injected(pf PutFault) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[pf]
}

// Fetch is Ledgers.Fetch, sometimes stale.
func (f *Faulty) Fetch(ctx context.Context, key string) ([][]byte, ledger.Token, error) {
	f.mu.Lock()
	age := 0
	switch {
	case len(f.stales) > 0:
		age, f.stales = f.stales[0], f.stales[1:]
	case f.rates.Stale > 0 && f.rng.Float64() < f.rates.Stale:
		age = 1 + f.rng.Intn(f.rates.MaxStaleness)
	}
	f.mu.Unlock()
	return f.inner.fetch(ctx, key, age)
}

// Put is Ledgers.Put with an injected fault.
func (f *Faulty) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token ledger.Token) error {
	f.mu.Lock()
	fault := PutOK
	switch {
	case len(f.puts) > 0:
		fault, f.puts = f.puts[0], f.puts[1:]
	default:
		x := f.rng.Float64()
		switch r := f.rates; {
		case x < r.Refused:
			fault = PutRefused
		case x < r.Refused+r.AckLost:
			fault = PutAckLost
		case x < r.Refused+r.AckLost+r.Lost:
			fault = PutLost
		}
	}
	f.counts[fault]++
	f.mu.Unlock()
	switch fault {
	case PutRefused:
		return fmt.Errorf("memory: injected refusal: %w", crdt.ErrUnavailable)
	case PutLost:
		return fmt.Errorf("memory: injected lost write: %w", crdt.ErrAmbiguousWrite)
	}
	if err := f.inner.Put(ctx, key, actor, value, token); err != nil {
		return err
	}
	if fault == PutAckLost {
		return fmt.Errorf("memory: injected lost acknowledgement: %w", crdt.ErrAmbiguousWrite)
	}
	return nil
}
