package cassandra

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// unitDB is a DB without a session, for tests whose I/O goes to a model.
func unitDB(t testing.TB) *DB {
	t.Helper()
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	return db
}

// modelSiblings returns a Siblings store on a fresh DB whose I/O goes to
// a fresh model.
func modelSiblings(t testing.TB) (*Siblings, *cqlModel) {
	db := unitDB(t)
	m := newCQLModel(db)
	return m.siblings(db), m
}

func TestSiblingsPutStatements(t *testing.T) {
	db, err := newDB(nil, "shop", Options{TablePrefix: "ck_"})
	require.NoError(t, err)
	s := db.Siblings()
	require.Equal(t, `INSERT INTO "shop"."ck_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, s.cql(siblingsInsert))
	require.Equal(t, `DELETE FROM "shop"."ck_siblings" USING TIMESTAMP ? WHERE key = ? AND actor = ?`, s.cql(siblingsDelete))
	require.Equal(t, `SELECT actor, value, WRITETIME(value) FROM "shop"."ck_siblings" WHERE key = ?`, s.cql(siblingsSelect))
	v := []byte("v")

	key := `k'); DROP TABLE x; --`
	st, err := s.putStmts(key, "b", v, nil)
	require.NoError(t, err)
	require.Len(t, st, 1, "a nil token supersedes nothing: one INSERT")
	require.Equal(t, s.cql(siblingsInsert), st[0].cql)
	require.Equal(t, []any{key, "b", v}, st[0].args[:3], "keys are bound, never formatted")
	ts1 := st[0].args[3].(int64)

	far := maxWriteTime // a row written by a clock far ahead
	tok, err := encodeToken([]tokenEntry{{"c", far}, {"a", 5}, {"b", 7}})
	require.NoError(t, err)
	tok = seal(tok, db.tables[tableSiblings], "k")
	st, err = s.putStmts("k", "b", v, tok)
	require.NoError(t, err)
	require.Len(t, st, 3, "the insert and one delete per other actor in the token")
	require.Equal(t, []any{"k", "b", v}, st[0].args[:3])
	require.Greater(t, st[0].args[3].(int64), far, "written above every timestamp in the token")
	require.Greater(t, st[0].args[3].(int64), ts1)
	require.Equal(t, stmt{cql: s.cql(siblingsDelete), args: []any{int64(5), "k", "a"}, key: "k"}, st[1], "a's row as of the version read")
	require.Equal(t, stmt{cql: s.cql(siblingsDelete), args: []any{far, "k", "c"}, key: "k"}, st[2])
	require.False(t, batchlogged(st), "a put is single-partition")

	top, err := encodeToken([]tokenEntry{{"a", math.MaxInt64}})
	require.NoError(t, err)
	top = seal(top, db.tables[tableSiblings], "k")
	other, err := newDB(nil, "shop", Options{TablePrefix: "other_"})
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		key   string
		actor crdt.ActorID
		value []byte
		token store.Token
		want  error
	}{
		{"bad key", "", "a", v, nil, crdt.ErrInvalidKey},
		{"control key", "a\x00", "a", v, nil, crdt.ErrInvalidKey},
		{"bad actor", "k", "a\x00", v, nil, crdt.ErrInvalidActor},
		{"empty actor", "k", "", v, nil, crdt.ErrInvalidActor},
		{"empty value", "k", "a", nil, nil, crdt.ErrInvalidAmount},
		{"oversized value", "k", "a", make([]byte, MaxValueSize+1), nil, crdt.ErrTooLarge},
		{"bad token", "k", "a", v, store.Token{1, 2, 3}, crdt.ErrCorruptEncoding},
		{"token at the last timestamp", "k", "b", v, top, crdt.ErrCorruptEncoding},
		// A token names rows by (actor, write time) only: one of another
		// key or table would delete rows there that no Fetch returned.
		{"token of another key", "k2", "b", v, tok, crdt.ErrCorruptEncoding},
		{"token of another table", "k", "b", v, seal(tok[:len(tok)-bindingLen], other.tables[tableSiblings], "k"), crdt.ErrCorruptEncoding},
		{"token without its binding", "k", "b", v, tok[:len(tok)-bindingLen], crdt.ErrCorruptEncoding},
		{"binding alone", "k", "b", v, tok[len(tok)-bindingLen:], crdt.ErrCorruptEncoding},
	} {
		_, err := s.putStmts(c.key, c.actor, c.value, c.token)
		require.ErrorIs(t, err, c.want, c.name)
	}
	// Values are opaque: any non-empty bytes are stored.
	_, err = s.putStmts("k", "a", []byte{0}, nil)
	require.NoError(t, err)
}

// TestSiblingsCosts: Fetch is one read, Put one write (one statement or
// one single-partition batch), whatever the number of siblings; nothing is
// sent for refused input or a done context.
func TestSiblingsCosts(t *testing.T) {
	ctx := context.Background()
	s, m := modelSiblings(t)
	for _, a := range []crdt.ActorID{"c", "a", "b"} {
		require.NoError(t, s.Put(ctx, "k", a, []byte("from-"+a), nil))
	}
	r0, w0 := m.counts()
	sibs, tok, err := s.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("from-a"), []byte("from-b"), []byte("from-c")}, sibs, "one row per actor, in actor order")
	require.NoError(t, s.Put(ctx, "k", "a", []byte("merged"), tok))
	r1, w1 := m.counts()
	require.Equal(t, 1, r1-r0, "fetch: one read")
	require.Equal(t, 1, w1-w0, "put: one write")
	require.Equal(t, 3, m.batches[len(m.batches)-1], "the insert and two deletes in one batch")
	sibs, _, err = s.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("merged")}, sibs, "a put whose token covers every row collapses them")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = s.Put(cctx, "k", "a", []byte("x"), nil)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "checked before sending: certainly not applied")
	_, _, err = s.Fetch(cctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Put(ctx, "k", "a", nil, nil), crdt.ErrInvalidAmount)
	_, _, err = s.Fetch(ctx, "")
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	r2, w2 := m.counts()
	require.Equal(t, r1+1, r2)
	require.Equal(t, w1, w2, "nothing sent")

	sibs, tok, err = s.Fetch(ctx, "absent")
	require.NoError(t, err)
	require.Empty(t, sibs)
	require.Nil(t, tok, "an absent key has a nil token")
}

// TestSiblingsTimestampsSurviveClockSteps: a restarted process whose clock
// is an hour behind still supersedes its own row after a Fetch, and loses
// without one (why clients read before they write).
func TestSiblingsTimestampsSurviveClockSteps(t *testing.T) {
	ctx := context.Background()
	wall := time.Unix(1_700_000_000, 0)
	opts := Options{Now: func() time.Time { return wall }}
	first, err := newDB(nil, "ks", opts)
	require.NoError(t, err)
	m := newCQLModel(first)
	require.NoError(t, m.siblings(first).Put(ctx, "k", "a", []byte("v1"), nil))

	wall = wall.Add(-time.Hour)
	second, err := newDB(nil, "ks", opts)
	require.NoError(t, err)
	s2 := m.siblings(second)
	_, tok, err := s2.Fetch(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, s2.Put(ctx, "k", "a", []byte("v2"), tok))
	require.Equal(t, map[crdt.ActorID]string{"a": "v2"}, m.siblingRows(second, "k"))

	third, err := newDB(nil, "ks", opts)
	require.NoError(t, err)
	require.NoError(t, m.siblings(third).Put(ctx, "k", "a", []byte("v3"), nil))
	require.Equal(t, map[crdt.ActorID]string{"a": "v2"}, m.siblingRows(third, "k"), "a blind write from a clock behind loses")
}

// refSiblings is the plain model of the siblings semantics: a set of
// siblings, each with a unique dot. A Put removes the siblings its token
// names and the writer's own sibling (one row per actor), then adds the new
// value. Nothing else ever disappears.
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
	store   *Siblings
	token   store.Token
	ref     map[int]bool // the reference token matching token
	fetched bool         // fetched since the last restart
}

// TestSiblingsSimulation interleaves Fetch and Put from several actors,
// each a process with its own DB and a wall clock skewed by up to ±2 s that
// also steps backwards, with restarts (a new DB whose clock may be behind
// every timestamp it wrote before), against the plain sibling model. Puts
// use each actor's latest (possibly stale) token, as racing writers do.
// After every step the rows Cassandra's rules keep visible must equal the
// model's siblings. This is what checks the timestamp argument in
// Siblings' documentation: a Put never removes a row version it did not
// see, and always supersedes what it saw.
//
// Replay: COUNTERKIT_SEED=<seed> go test -run TestSiblingsSimulation .
// Longer: COUNTERKIT_CASES=20 go test -run TestSiblingsSimulation .
func TestSiblingsSimulation(t *testing.T) {
	seed := testSeed(t)
	cases := testCases(t, 300)
	for c := 0; c < cases; c++ {
		wall := time.Unix(1_700_000_000, 0)
		var m *cqlModel
		env := simEnv{
			key: "k",
			newDB: func(now func() time.Time) *DB {
				db, err := newDB(nil, "ks", Options{Now: now})
				require.NoError(t, err)
				if m == nil {
					m = newCQLModel(db)
				}
				m.attach(db)
				return db
			},
			wall:    func() time.Time { return wall },
			advance: func(d time.Duration) { wall = wall.Add(d) },
			rows:    func(db *DB) map[crdt.ActorID]string { return m.siblingRows(db, "k") },
		}
		runSiblingsSim(t, rand.New(rand.NewSource(seed+int64(c))), fmt.Sprintf("seed %d case %d", seed, c), env)
	}
}

// simEnv is where a simulation runs: the model, or a real cluster.
type simEnv struct {
	key     string
	newDB   func(now func() time.Time) *DB // a new process with the given clock
	wall    func() time.Time               // real time
	advance func(time.Duration)            // lets real time pass (model only)
	rows    func(db *DB) map[crdt.ActorID]string
}

func runSiblingsSim(t *testing.T, rng *rand.Rand, name string, env simEnv) {
	ctx := context.Background()
	ref := &refSiblings{live: map[int]refSibling{}}
	newProcess := func(a *simActor) {
		skew := a.skew
		a.db = env.newDB(func() time.Time { return env.wall().Add(skew) })
		a.store = a.db.Siblings()
		a.token, a.ref, a.fetched = nil, nil, false
	}
	skew := func() time.Duration { return time.Duration(rng.Int63n(int64(4*time.Second))) - 2*time.Second }
	actors := make([]*simActor, 2+rng.Intn(3))
	for i := range actors {
		actors[i] = &simActor{id: crdt.ActorID(fmt.Sprintf("actor-%d", i)), skew: skew()}
		newProcess(actors[i])
	}
	steps := 40 + rng.Intn(40)
	for step := 0; step < steps; step++ {
		// Real time moves forward by 0..2 ms; each actor's clock may step.
		env.advance(time.Duration(rng.Intn(2000)) * time.Microsecond)
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
			skew := a.skew
			a.db.clock.now = func() time.Time { return env.wall().Add(skew) }
		case op < 5 || !a.fetched:
			what = "fetch"
			_, tok, err := a.store.Fetch(ctx, env.key)
			require.NoError(t, err, name)
			a.token, a.ref, a.fetched = tok, ref.fetch(), true
		default:
			v := fmt.Sprintf("value-%d", rng.Intn(64))
			what = "put " + v
			require.NoError(t, a.store.Put(ctx, env.key, a.id, []byte(v), a.token), name)
			ref.put(a.id, v, a.ref)
		}
		require.Equal(t, ref.byActor(), env.rows(a.db), "%s: step %d (%s by %s)", name, step, what, a.id)
	}
}

// TestSiblingsFetchIsOnePage: Fetch is one request of MaxSiblings+1 rows;
// a key with more rows, or whose page the server had to cut, is refused
// rather than read in pieces; driver errors map as reads.
func TestSiblingsFetchIsOnePage(t *testing.T) {
	ctx := context.Background()
	row := func(a string) []any { return []any{a, []byte{1}, int64(10)} }
	db := unitDB(t)
	it := &fakeIter{rows: [][]any{row("b"), row("a")}}
	calls := fakePages(db, it)
	sibs, tok, err := db.Siblings().Fetch(ctx, "k")
	require.NoError(t, err)
	require.Len(t, sibs, 2)
	require.NotNil(t, tok)
	require.Equal(t, []pageCall{{OpSiblingsFetch, MaxSiblings + 1, nil}}, *calls)
	require.True(t, it.closed)

	fakePages(db, &fakeIter{rows: [][]any{row("a")}, pageState: []byte{1}})
	_, _, err = db.Siblings().Fetch(ctx, "k")
	require.ErrorIs(t, err, crdt.ErrTooLarge, "a second page would be a second read")

	many := make([][]any, MaxSiblings+1)
	for i := range many {
		many[i] = row(fmt.Sprintf("a%05d", i))
	}
	it = &fakeIter{rows: many}
	fakePages(db, it)
	_, _, err = db.Siblings().Fetch(ctx, "k")
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.True(t, it.closed)

	fakePages(db, &fakeIter{err: readTimeout()})
	_, _, err = db.Siblings().Fetch(ctx, "k")
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.NotErrorIs(t, err, crdt.ErrTooLarge)

	// A Fetch raises the clock above every WRITETIME it read.
	fakePages(db, &fakeIter{rows: [][]any{{"z", []byte{1}, maxWriteTime}}})
	_, _, err = db.Siblings().Fetch(ctx, "k")
	require.NoError(t, err)
	require.Greater(t, db.clock.next(0), maxWriteTime)

	// A row no writer makes is corrupt, and lifts no clock: a WRITETIME
	// past the year 9999 (at the end of the range, it would make two
	// writes of the DB tie), or an invalid actor.
	fresh, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	for _, r := range [][]any{{"z", []byte{1}, maxWriteTime + 1}, {"z", []byte{1}, int64(math.MaxInt64)}, {"", []byte{1}, int64(5)}, {"a\x00", []byte{1}, int64(5)}, {"z", []byte{1}, int64(0)}} {
		fakePages(fresh, &fakeIter{rows: [][]any{{"a", []byte{1}, int64(7)}, r}})
		_, _, err = fresh.Siblings().Fetch(ctx, "k")
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "%v", r)
		require.Less(t, fresh.clock.next(0), maxWriteTime, "%v", r)
	}

	require.True(t, strings.HasPrefix(db.Siblings().cql(siblingsSelect), "SELECT actor, value, WRITETIME(value)"))
}
