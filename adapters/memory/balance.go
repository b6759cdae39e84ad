package memory

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/counterkit/counterkit/balance"
)

var _ balance.Store = (*BalanceStore)(nil)

// The operation names BalanceStore passes to its hook.
const (
	BalanceOpRows          = "rows"
	BalanceOpWrite         = "write"
	BalanceOpDeleteAccount = "delete-account"
)

// BalanceHook is called by BalanceStore before (after=false) and after
// (after=true) every operation, without the lock held. A non-nil error
// before an operation aborts it with no effect (a crash or refused write); a
// non-nil error after it is returned although the operation took effect (a
// lost acknowledgement).
type BalanceHook func(ctx context.Context, op string, after bool) error

// BalanceCalls counts the operations a BalanceStore has served.
type BalanceCalls struct {
	Reads          int64 // Rows calls
	RowsRead       int64 // rows returned by Rows
	Writes         int64 // Write calls (each one batch)
	RowsWritten    int64 // rows written (not deleted) by Write
	RowsDeleted    int64 // row deletes sent by Write
	AccountDeletes int64 // DeleteAccount calls
}

// BalanceStore is an in-memory balance.Store, the reference backend for
// tests, examples and benchmarks. Writes are atomic and reads are snapshots,
// as the interface requires. It counts its calls (Calls) and can inject
// faults (SetHook).
//
// The zero value is not usable; call NewBalanceStore. A BalanceStore is safe
// for concurrent use.
type BalanceStore struct {
	mu    sync.Mutex
	parts map[string]map[balance.Key]balance.Row
	hook  hookSlot[BalanceHook]

	reads, rowsRead, writes, rowsWritten, rowsDeleted, accountDeletes atomic.Int64
}

// NewBalanceStore returns an empty store.
func NewBalanceStore() *BalanceStore {
	return &BalanceStore{parts: map[string]map[balance.Key]balance.Row{}}
}

// SetHook installs h (nil removes it).
func (s *BalanceStore) SetHook(h BalanceHook) { s.hook.set(h) }

func (s *BalanceStore) call(ctx context.Context, op string, after bool) error {
	return s.hook.call(ctx, op, after)
}

// Calls returns the operation counts so far.
func (s *BalanceStore) Calls() BalanceCalls {
	return BalanceCalls{
		Reads: s.reads.Load(), RowsRead: s.rowsRead.Load(), Writes: s.writes.Load(),
		RowsWritten: s.rowsWritten.Load(), RowsDeleted: s.rowsDeleted.Load(), AccountDeletes: s.accountDeletes.Load(),
	}
}

// ResetCalls sets every count to zero.
func (s *BalanceStore) ResetCalls() {
	for _, c := range []*atomic.Int64{&s.reads, &s.rowsRead, &s.writes, &s.rowsWritten, &s.rowsDeleted, &s.accountDeletes} {
		c.Store(0)
	}
}

func (s *BalanceStore) snapshot(account string) []balance.Row {
	p := s.parts[account]
	out := make([]balance.Row, 0, len(p))
	for _, r := range p {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return balance.CompareRows(out[i], out[j]) < 0 })
	return out
}

// Snapshot returns account's rows in clustering order without counting a
// read or calling the hook (for test assertions).
func (s *BalanceStore) Snapshot(account string) []balance.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshot(account)
}

// Rows implements balance.Store.
func (s *BalanceStore) Rows(ctx context.Context, account string) ([]balance.Row, error) {
	if err := s.call(ctx, BalanceOpRows, false); err != nil {
		return nil, err
	}
	s.mu.Lock()
	out := s.snapshot(account)
	s.mu.Unlock()
	s.reads.Add(1)
	s.rowsRead.Add(int64(len(out)))
	if err := s.call(ctx, BalanceOpRows, true); err != nil {
		return nil, err
	}
	return out, nil
}

// Write implements balance.Store.
func (s *BalanceStore) Write(ctx context.Context, muts []balance.Mutation) error {
	for _, m := range muts {
		if !m.Delete {
			if err := m.Row.Validate(); err != nil {
				return err
			}
		}
	}
	if err := s.call(ctx, BalanceOpWrite, false); err != nil {
		return err
	}
	s.mu.Lock()
	var w, d int64
	for _, m := range muts {
		p := s.parts[m.Account]
		if m.Delete {
			d++
			delete(p, m.Row.Key())
			continue
		}
		w++
		if p == nil {
			p = map[balance.Key]balance.Row{}
			s.parts[m.Account] = p
		}
		p[m.Row.Key()] = m.Row
	}
	s.mu.Unlock()
	s.writes.Add(1)
	s.rowsWritten.Add(w)
	s.rowsDeleted.Add(d)
	return s.call(ctx, BalanceOpWrite, true)
}

// DeleteAccount implements balance.Store.
func (s *BalanceStore) DeleteAccount(ctx context.Context, account string) error {
	if err := s.call(ctx, BalanceOpDeleteAccount, false); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.parts, account)
	s.mu.Unlock()
	s.accountDeletes.Add(1)
	return s.call(ctx, BalanceOpDeleteAccount, true)
}
