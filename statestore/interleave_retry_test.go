package statestore_test

// Every interleaving of two or three actors' statestore calls over
// adapters/memory or a store of one row per actor, each store call
// possibly refused, lost, landed but answered ambiguously (or with an
// unclassified error), or held and delivered later (or never).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/schedtest"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
)

type sibFault int

const (
	sfPass sibFault = iota
	sfRefuse
	sfLose
	sfLandAck
	sfUnclassified
	sfHold
)

var sibFaultNames = [...]string{"pass", "refuse", "lose", "landack", "unclassified", "hold"}

var errUnclassified = errors.New("injected: unclassified store error")

type sibReq struct {
	actor int
	read  bool
	done  bool
	desc  string
}

type sibHeld struct {
	key   string
	actor crdt.ActorID
	value []byte
	token store.Token
	desc  string
	ctx   context.Context // the call's context, with its write time
}

// sibWorld runs one schedule of actors over one memory store.
type sibWorld struct {
	sched     *schedtest.Sched
	inner     store.Siblings
	msgs      chan sibReq
	grants    []chan sibFault
	held      []sibHeld
	log       []string
	maxFaults int // faults injected per schedule at most
	// stamp, when set, gives each Put its write time as the call is made
	// (rowSiblings), so that a held Put lands with its original time.
	stamp  func(context.Context) context.Context
	faults int
}

type sibGate struct {
	w     *sibWorld
	actor int
}

func (g *sibGate) ask(read bool, desc string) sibFault {
	g.w.msgs <- sibReq{actor: g.actor, read: read, desc: desc}
	return <-g.w.grants[g.actor]
}

func (g *sibGate) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	switch g.ask(true, "fetch "+key) {
	case sfPass:
		return g.w.inner.Fetch(ctx, key)
	case sfUnclassified:
		return nil, nil, errUnclassified
	default:
		return nil, nil, fmt.Errorf("injected: refused: %w", crdt.ErrUnavailable)
	}
}

func (g *sibGate) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	desc := fmt.Sprintf("put %s as %s token=%v", key, actor, token != nil)
	fault := g.ask(false, desc)
	if g.w.stamp != nil {
		ctx = g.w.stamp(ctx)
	}
	switch fault {
	case sfRefuse:
		return fmt.Errorf("injected: refused: %w", crdt.ErrUnavailable)
	case sfLose:
		return fmt.Errorf("injected: lost: %w", crdt.ErrAmbiguousWrite)
	case sfHold:
		g.w.held = append(g.w.held, sibHeld{key, actor, slices.Clone(value), slices.Clone(token), desc, ctx})
		return fmt.Errorf("injected: held: %w", crdt.ErrAmbiguousWrite)
	case sfLandAck:
		if err := g.w.inner.Put(ctx, key, actor, value, token); err != nil {
			return err
		}
		return fmt.Errorf("injected: ack lost: %w", crdt.ErrAmbiguousWrite)
	case sfUnclassified:
		if err := g.w.inner.Put(ctx, key, actor, value, token); err != nil {
			return err
		}
		return errUnclassified
	}
	return g.w.inner.Put(ctx, key, actor, value, token)
}

func (w *sibWorld) run(actors []func(ctx context.Context, s store.Siblings)) {
	ctx := context.Background()
	w.msgs = make(chan sibReq)
	w.grants = make([]chan sibFault, len(actors))
	pending := make([]*sibReq, len(actors))
	for i, a := range actors {
		w.grants[i] = make(chan sibFault)
		go func() {
			a(ctx, &sibGate{w: w, actor: i})
			w.msgs <- sibReq{actor: i, done: true}
		}()
		if m := <-w.msgs; !m.done {
			pending[i] = &m
		}
	}
	type opt struct {
		actor int
		fault sibFault
		held  int
	}
	for {
		var opts []opt
		for i, p := range pending {
			if p == nil {
				continue
			}
			opts = append(opts, opt{i, sfPass, -1})
			if w.faults >= w.maxFaults {
				continue
			}
			if p.read {
				opts = append(opts, opt{i, sfRefuse, -1})
			} else {
				for f := sfRefuse; f <= sfHold; f++ {
					opts = append(opts, opt{i, f, -1})
				}
			}
		}
		for h := range w.held {
			opts = append(opts, opt{-1, 0, h})
		}
		if !slices.ContainsFunc(pending, func(p *sibReq) bool { return p != nil }) {
			opts = append(opts, opt{-1, 0, -2}) // stop: what is held stays in flight
		}
		o := opts[w.sched.Pick(len(opts))]
		if o.held == -2 {
			break
		}
		if o.held >= 0 {
			h := w.held[o.held]
			w.held = slices.Delete(w.held, o.held, o.held+1)
			w.log = append(w.log, "deliver "+h.desc)
			if err := w.inner.Put(h.ctx, h.key, h.actor, h.value, h.token); err != nil {
				panic(err)
			}
			continue
		}
		if o.fault != sfPass {
			w.faults++
		}
		p := pending[o.actor]
		pending[o.actor] = nil
		w.log = append(w.log, fmt.Sprintf("actor %d %s: %s", o.actor, sibFaultNames[o.fault], p.desc))
		w.grants[o.actor] <- o.fault
		if m := <-w.msgs; !m.done {
			pending[o.actor] = &m
		}
	}
}

// incrementAsDocumented applies delta as actor the way package statestore
// says: Update; after a refusal (crdt.ErrUnavailable, nothing landed) call
// Update again; after any other error of the write, re-send the state
// Update returned with Save until it is acknowledged (never Update again).
// It returns whether the increment was acknowledged.
func incrementAsDocumented(ctx context.Context, s store.Siblings, key string, actor crdt.ActorID, delta int64, attempts int) (bool, error) {
	for range attempts {
		c, err := statestore.Update(ctx, s, key, actor, func(c *pncounter.Counter) error { return c.Apply(actor, delta) })
		if err == nil {
			return true, nil
		}
		if c == nil || errors.Is(err, crdt.ErrUnavailable) {
			continue // the load failed, or the write certainly did not land
		}
		for range attempts {
			if err := statestore.Save(ctx, s, key, actor, c); err == nil {
				return true, nil
			}
		}
		return false, fmt.Errorf("gave up re-sending %d as %s", delta, actor)
	}
	return false, nil // never written: refused every time
}

func TestEveryInterleavingUpdateSaveRetry(t *testing.T) {
	exploreUpdateSaveRetry(t, [][]int64{{1, -2}, {4, 8}}, func() (store.Siblings, func(context.Context) context.Context) {
		return memory.NewSiblings(), nil
	})
}

// TestEveryInterleavingUpdateSaveRetryPerActorStore runs the same
// schedules over a store keeping one row per actor (rowSiblings, shaped as
// the Cassandra adapter's table), whose Puts carry the write time of their
// call: a held Put that lands late loses to its actor's newer row. Every
// acknowledged increment counts once, none twice, as over siblings.
func TestEveryInterleavingUpdateSaveRetryPerActorStore(t *testing.T) {
	rows := func() (store.Siblings, func(context.Context) context.Context) {
		s := newRowSiblings()
		return s, s.stamp
	}
	exploreUpdateSaveRetry(t, [][]int64{{1, -2}, {4, 8}}, rows)
	exploreUpdateSaveRetry(t, [][]int64{{1}, {4}, {-16}}, rows)
}

// TestEveryInterleavingUpdateSaveRetryThreeWriters: three actors, one
// increment each, over siblings.
func TestEveryInterleavingUpdateSaveRetryThreeWriters(t *testing.T) {
	exploreUpdateSaveRetry(t, [][]int64{{1}, {4}, {-16}}, func() (store.Siblings, func(context.Context) context.Context) {
		return memory.NewSiblings(), nil
	})
}

// exploreUpdateSaveRetry runs, under every schedule, one actor per element
// of ops applying its deltas with incrementAsDocumented over a store made
// by newStore (with the function that stamps a Put's write time, or nil),
// and checks each actor's part of the value read back.
func exploreUpdateSaveRetry(t *testing.T, ops [][]int64, newStore func() (store.Siblings, func(context.Context) context.Context)) {
	t.Helper()
	actorIDs := []crdt.ActorID{"a", "b", "c"}[:len(ops)]
	const key = "k"
	// Every schedule with at most one fault runs in full (5,950 for two
	// actors of two deltas); COUNTERKIT_FAULTS=2 COUNTERKIT_EXHAUSTIVE=1
	// runs all 339,916 with two.
	maxFaults, budget := 1, 0
	if v := os.Getenv("COUNTERKIT_FAULTS"); v != "" {
		maxFaults, _ = strconv.Atoi(v)
		budget = 20_000
	}
	if testing.Short() {
		maxFaults, budget = 2, 2000
	}
	var held, delivered int
	n := schedtest.Explore(t, budget, func(sc *schedtest.Sched) string {
		inner, stamp := newStore()
		w := &sibWorld{sched: sc, inner: inner, maxFaults: maxFaults, stamp: stamp}
		acked := make([][]bool, len(ops))
		var problems []string
		actors := make([]func(context.Context, store.Siblings), len(ops))
		for i := range ops {
			acked[i] = make([]bool, len(ops[i]))
			actors[i] = func(ctx context.Context, s store.Siblings) {
				for j, d := range ops[i] {
					ok, err := incrementAsDocumented(ctx, s, key, actorIDs[i], d, 4)
					if err != nil {
						problems = append(problems, err.Error())
						return
					}
					acked[i][j] = ok
				}
			}
		}
		w.run(actors)
		if len(problems) > 0 {
			return strings.Join(problems, "; ") + "\n" + strings.Join(w.log, "\n")
		}
		if len(w.held) > 0 {
			held++
		}
		// A state held in flight may still land: check the value with it
		// dropped, then with every held write delivered.
		check := func(when string) string {
			c, err := statestore.Load[pncounter.Counter](context.Background(), w.inner, key)
			if err != nil {
				return fmt.Sprintf("%s: load: %v", when, err)
			}
			// Each actor's ops are serial and each write holds all its
			// earlier ones: an actor's part is a prefix sum of its ops,
			// covering every acknowledged op. Acknowledged ops that
			// follow an unacknowledged one make that one count too.
			for i, id := range actorIDs {
				p, n := c.P().Get(id), c.N().Get(id)
				last := -1
				for j := range ops[i] {
					if acked[i][j] {
						last = j
					}
				}
				var wantP, wantN int64
				for j := 0; j <= last; j++ {
					if ops[i][j] >= 0 {
						wantP += ops[i][j]
					} else {
						wantN -= ops[i][j]
					}
				}
				ok := p == wantP && n == wantN
				// an unacknowledged tail op may have landed
				var tp, tn int64 = wantP, wantN
				for j := last + 1; j < len(ops[i]) && !ok; j++ {
					if ops[i][j] >= 0 {
						tp += ops[i][j]
					} else {
						tn -= ops[i][j]
					}
					ok = p == tp && n == tn
				}
				if !ok {
					return fmt.Sprintf("%s: actor %s has p=%d n=%d, ops %v acked %v\n%s", when, id, p, n, ops[i], acked[i], strings.Join(w.log, "\n"))
				}
			}
			return ""
		}
		if msg := check("held dropped"); msg != "" {
			return msg
		}
		for len(w.held) > 0 {
			h := w.held[0]
			w.held = w.held[1:]
			delivered++
			if err := w.inner.Put(h.ctx, h.key, h.actor, h.value, h.token); err != nil {
				return err.Error()
			}
		}
		return check("held delivered")
	})
	t.Logf("%d schedules (%d ended with writes in flight), faults ≤ %d per schedule", n, held, maxFaults)
}
