package memory

import (
	"context"
	"sync/atomic"
)

// hookSlot holds a store's optional fault-injection hook (BalanceHook,
// DeltaLogHook), installed and called concurrently.
type hookSlot[H ~func(ctx context.Context, op string, after bool) error] struct {
	p atomic.Pointer[H]
}

// set installs h; nil removes the hook.
func (s *hookSlot[H]) set(h H) {
	if h == nil {
		s.p.Store(nil)
		return
	}
	s.p.Store(&h)
}

// call runs before (after false) and after (after true) the operation op.
// Before it, a finished context is the operation's error; then the hook, if
// any, may fail the operation.
func (s *hookSlot[H]) call(ctx context.Context, op string, after bool) error {
	if !after {
		if err := errIfDone(ctx); err != nil {
			return err
		}
	}
	if h := s.p.Load(); h != nil {
		return (*h)(ctx, op, after)
	}
	return nil
}
