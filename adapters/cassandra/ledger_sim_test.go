package cassandra

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// refSiblings is the plain model of ledger.Store that the Cassandra
// LedgerStore must match: a set of siblings, each with a unique dot. A Put
// removes the siblings its token names and the writer's own sibling (one
// row per actor), then adds the new value. Nothing else ever disappears.
type refSiblings struct {
	next int
	live map[int]refSibling // dot -> sibling
}

type refSibling struct {
	actor crdt.ActorID
	value string
}

func (r *refSiblings) fetch() map[int]bool {
	dots := map[int]bool{}
	for d := range r.live {
		dots[d] = true
	}
	return dots
}

func (r *refSiblings) put(actor crdt.ActorID, value string, token map[int]bool) {
	for d, s := range r.live {
		if token[d] || s.actor == actor {
			delete(r.live, d)
		}
	}
	r.next++
	r.live[r.next] = refSibling{actor: actor, value: value}
}

func (r *refSiblings) byActor() map[crdt.ActorID]string {
	out := map[crdt.ActorID]string{}
	for _, s := range r.live {
		out[s.actor] = s.value
	}
	return out
}

// simActor is one process writing as one actor, with its own DB (so its own
// write clock) and its own skewed wall clock.
type simActor struct {
	id      crdt.ActorID
	skew    time.Duration
	db      *DB
	store   *LedgerStore
	token   ledger.Token
	ref     map[int]bool // the reference token matching token
	fetched bool         // fetched since the last restart
}

// TestLedgerSimulation interleaves Fetch and Put from several actors, each
// a process with its own DB and a wall clock skewed by up to ±2 s that
// also steps backwards, with restarts (a new DB whose clock may be behind
// every timestamp it wrote before), against the plain sibling model. Puts
// use each actor's latest (possibly stale) token, as racing writers do.
// After every step the rows Cassandra's rules keep visible must equal the
// model's siblings. This is what checks the timestamp argument in
// LedgerStore's documentation: a Put never removes a row version it did not
// see, and always supersedes what it saw.
//
// Replay: COUNTERKIT_SEED=<seed> go test -run TestLedgerSimulation .
// Longer: COUNTERKIT_CASES=20 go test -run TestLedgerSimulation .
func TestLedgerSimulation(t *testing.T) {
	seed := testSeed(t)
	cases := testCases(t, 300)
	for c := 0; c < cases; c++ {
		runLedgerSim(t, rand.New(rand.NewSource(seed+int64(c))), fmt.Sprintf("seed %d case %d", seed, c))
	}
}

func runLedgerSim(t *testing.T, rng *rand.Rand, name string) {
	ctx := context.Background()
	m := newRowModel()
	ref := &refSiblings{live: map[int]refSibling{}}
	wall := time.Unix(1_700_000_000, 0)
	newProcess := func(a *simActor) {
		db, err := newDB(nil, "ks", Options{Now: func() time.Time { return wall.Add(a.skew) }})
		require.NoError(t, err)
		a.db, a.store = db, modelLedger(db, m)
		a.token, a.ref, a.fetched = nil, nil, false
	}
	skew := func() time.Duration { return time.Duration(rng.Int63n(int64(4*time.Second))) - 2*time.Second }
	actors := make([]*simActor, 2+rng.Intn(3))
	for i := range actors {
		actors[i] = &simActor{id: crdt.ActorID(fmt.Sprintf("actor-%d", i)), skew: skew()}
		newProcess(actors[i])
	}
	// A pool of distinct valid encodings to write.
	values := make([][]byte, 0, 64)
	for i := 0; i < cap(values); i++ {
		values = append(values, ledgerEnc(t, "v", crdt.TxnID(fmt.Sprintf("txn-%d", i))))
	}
	steps := 40 + rng.Intn(40)
	for step := 0; step < steps; step++ {
		// Real time moves forward by 0..2 ms; each actor's clock may step.
		wall = wall.Add(time.Duration(rng.Intn(2000)) * time.Microsecond)
		a := actors[rng.Intn(len(actors))]
		what := ""
		switch op := rng.Intn(10); {
		case op == 0:
			what = "restart"
			a.skew = skew() // the new process's clock may be far behind
			newProcess(a)
		case op == 1:
			what = "clock step back"
			a.skew -= time.Duration(rng.Intn(1500)) * time.Millisecond
		case op < 5 || !a.fetched:
			what = "fetch"
			_, tok, err := a.store.Fetch(ctx, "k")
			require.NoError(t, err, name)
			a.token, a.ref, a.fetched = tok, ref.fetch(), true
		default:
			v := values[rng.Intn(len(values))]
			what = fmt.Sprintf("put %x", v[len(v)-4:])
			require.NoError(t, a.store.Put(ctx, "k", a.id, v, a.token), name)
			ref.put(a.id, string(v), a.ref)
		}
		rows, err := m.read(ctx, &a.store.rows, "k")
		require.NoError(t, err)
		got := map[crdt.ActorID]string{}
		for _, r := range rows {
			got[r.actor] = string(r.value)
		}
		require.Equal(t, ref.byActor(), got, "%s: step %d (%s by %s)", name, step, what, a.id)
	}
}
