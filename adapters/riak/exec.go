package riak

import (
	"context"
	"math/rand/v2"
	"time"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
)

// maxBackoff caps the pause between two attempts.
const maxBackoff = time.Second

// request describes one logical operation: how to build a fresh command for
// each attempt and whether a failure may leave a write behind.
type request struct {
	op    string
	key   string
	write bool
	build func() (riakc.Command, error)
}

// execute runs req with up to st.retries extra attempts. Every failure is
// retried (the operations are idempotent) except fatal and stale ones and
// those after ctx is done. The final error's Kind is crdt.ErrAmbiguousWrite
// when req is a write and any attempt may have been applied, and
// crdt.ErrUnavailable otherwise.
func execute(ctx context.Context, cl *riakc.Cluster, st settings, req request) (riakc.Command, error) {
	maybe := false
	var last error
	attempts := 0
	for attempt := 0; attempt <= st.retries; attempt++ {
		if err := ctx.Err(); err != nil {
			last = err
			break
		}
		if attempt > 0 && !sleep(ctx, st.backoff, attempt) {
			last = ctx.Err()
			break
		}
		cmd, err := req.build()
		if err != nil {
			return nil, &Error{Op: req.op, Key: req.key, Attempts: attempts, Kind: crdt.ErrInvalidIdentifier, Err: err}
		}
		attempts++
		err = run(ctx, cl, cmd)
		if err == nil {
			return cmd, nil
		}
		last = err
		o, kind := classify(err)
		if o == fatal {
			if req.write && maybe {
				// A refusal says nothing was written; an earlier attempt may
				// have been (package store, "Errors").
				kind = crdt.ErrAmbiguousWrite
			}
			return nil, &Error{Op: req.op, Key: req.key, Attempts: attempts, Kind: kind, Err: err}
		}
		if o == maybeApplied || req.write && (o == refused || o == stale) {
			maybe = true
		}
		if o == stale || ctx.Err() != nil {
			break
		}
	}
	kind := crdt.ErrUnavailable
	if req.write && maybe {
		kind = crdt.ErrAmbiguousWrite
	}
	return nil, &Error{Op: req.op, Key: req.key, Attempts: attempts, Kind: kind, Err: last}
}

// run executes cmd once, giving up (but not cancelling the driver) when ctx
// is done first. A command abandoned that way may still be sent; callers
// treat that as "may have been applied".
func run(ctx context.Context, cl *riakc.Cluster, cmd riakc.Command) error {
	if ctx.Done() == nil {
		return cl.Execute(cmd) // a context that never ends: no goroutine needed
	}
	done := make(chan riakc.Command, 1) // buffered: the driver must never block on it
	a := &riakc.Async{Command: cmd, Done: done}
	if err := cl.ExecuteAsync(a); err != nil {
		return err
	}
	select {
	case <-done:
		if a.Error != nil {
			return a.Error
		}
		return cmd.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sleep waits before attempt number n (n ≥ 1): backoff doubled per attempt,
// capped at maxBackoff, with up to 50% jitter so that competing writers
// spread out. It reports false if ctx ended first.
func sleep(ctx context.Context, backoff time.Duration, n int) bool {
	d := retry.Limit(backoff, maxBackoff, n)
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
