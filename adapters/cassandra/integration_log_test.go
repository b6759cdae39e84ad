package cassandra

import (
	"context"
	"errors"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/tally"
)

func scanAll(t testing.TB, l *LogStore, key string) []deltalog.Cell {
	t.Helper()
	var out []deltalog.Cell
	require.NoError(t, l.Scan(context.Background(), key, func(c deltalog.Cell) bool {
		out = append(out, c)
		return true
	}))
	return out
}

// TestIntegrationLogOrderAndDelete checks that Cassandra's clustering order
// (timeuuid DESC, kind ASC) is exactly deltalog.CompareCells, including ids
// that share a timestamp and differ only in the signed-byte tail, and that
// DeleteCovered removes exactly what the merge cell covers.
func TestIntegrationLogOrderAndDelete(t *testing.T) {
	db := newTestDB(t, Options{LogPageSize: 3}) // small pages: Scan crosses pages
	l := db.Log()
	ctx := context.Background()
	key := uniqueKey(t, "order")
	rng := rand.New(rand.NewSource(testSeed(t)))
	base := time.Now().Add(-time.Hour)
	var cells []deltalog.Cell
	for i := 0; i < 20; i++ {
		at := base.Add(time.Duration(rng.Intn(5)) * time.Second)
		id := deltalog.IDFromParts(at, uint16(rng.Intn(1<<14)), rng.Uint64())
		cells = append(cells, deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: int64(rng.Intn(9) + 1)})
	}
	// A merge cell sharing the id of one regular cell.
	mid := cells[7]
	merged := deltalog.Cell{ID: mid.ID, Kind: deltalog.KindMerge, Delta: 4,
		Stats: deltalog.Stats{Count: 2, Sum: 4, Min: 1, Max: 3, SumSqLo: 10}, Written: time.Now().UnixNano()}
	all := append(append([]deltalog.Cell(nil), cells...), merged)
	for _, c := range all {
		require.NoError(t, l.Insert(ctx, []deltalog.Entry{{Counter: key, Cell: c}}))
	}
	want := append([]deltalog.Cell(nil), all...)
	sort.Slice(want, func(i, j int) bool { return deltalog.CompareCells(want[i], want[j]) < 0 })
	require.Equal(t, want, scanAll(t, l, key))

	// Early stop after k cells.
	n := 0
	require.NoError(t, l.Scan(ctx, key, func(deltalog.Cell) bool { n++; return n < 4 }))
	require.Equal(t, 4, n)

	require.NoError(t, l.DeleteCovered(ctx, key, mid.ID))
	var kept []deltalog.Cell
	for _, c := range want {
		if c.ID.Compare(mid.ID) > 0 || (c.ID == mid.ID && c.Kind == deltalog.KindMerge) {
			kept = append(kept, c)
		}
	}
	require.Equal(t, kept, scanAll(t, l, key))
	require.NoError(t, l.DeleteCounter(ctx, key))
	require.Empty(t, scanAll(t, l, key))
}

func TestIntegrationLogAccounting(t *testing.T) {
	db := newTestDB(t, Options{})
	c, err := deltalog.New(db.Log(), deltalog.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	a, b := uniqueKey(t, "a"), uniqueKey(t, "b")

	cctx, calls := counting(ctx)
	require.NoError(t, c.Add(cctx, a, deltalog.NewIDAt(time.Now()), 5))
	requireCalls(t, calls, 0, 1, 0, "log increment")

	var batch deltalog.Batch
	id := deltalog.NewIDAt(time.Now())
	batch.Add(a, id, -2)
	batch.Add(b, id, 2)
	cctx, calls = counting(ctx)
	require.NoError(t, c.Apply(cctx, &batch))
	requireCalls(t, calls, 0, 1, 0, "log transfer (one logged batch)")

	r, err := c.Read(ctx, a)
	require.NoError(t, err)
	require.Equal(t, int64(3), r.Value)
}

// TestIntegrationLogConcurrent runs writers (each retrying after forced
// timeouts with the same id) and concurrent merges and compactions over one
// counter whose clock runs fast, then compares the value with the model: the
// sum of every delta whose Add eventually succeeded.
func TestIntegrationLogConcurrent(t *testing.T) {
	db := newTestDB(t, Options{LogPageSize: 7})
	seed := testSeed(t)
	ctx := context.Background()
	key := uniqueKey(t, "conc")
	// The write window is short and the cells' ids are spread over the
	// past, so merges and compactions really happen during the run.
	opts := deltalog.Options{Window: 2 * time.Second, FutureSkew: 100 * time.Millisecond,
		SafetyMargin: time.Second, MaxScan: 5 * time.Second, CompactGrace: 7 * time.Second}
	c, err := deltalog.New(db.Log(), opts)
	require.NoError(t, err)

	const writers = 4
	perWriter := testCases(t, 60)
	var (
		mu    sync.Mutex
		model int64
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		errs  = make(chan error, writers+2)
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(w)))
			for i := 0; i < perWriter; i++ {
				id := deltalog.NewIDAt(time.Now())
				delta := int64(rng.Intn(19) - 9)
				if delta == 0 {
					delta = 1
				}
				for attempt := 0; ; attempt++ {
					actx, cancel := ctx, context.CancelFunc(func() {})
					if attempt < 2 && rng.Intn(3) == 0 {
						actx, cancel = context.WithTimeout(ctx, time.Duration(rng.Intn(300))*time.Microsecond)
					}
					err := c.Add(actx, key, id, delta)
					cancel()
					if err == nil {
						mu.Lock()
						model += delta
						mu.Unlock()
						break
					}
					if errors.Is(err, crdt.ErrOutsideWindow) {
						// The retry came too late: the outcome of the first
						// attempt is unknown, which the test cannot model.
						errs <- err
						return
					}
					if !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						errs <- err
						return
					}
				}
				time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
			}
		}(w)
	}
	for m := 0; m < 2; m++ {
		go func() {
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if _, _, err := c.Merge(ctx, key); err != nil {
					errs <- err
					return
				}
				if _, err := c.Compact(ctx, key); err != nil {
					errs <- err
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(stop)
	for i := 0; i < 2; i++ {
		require.NoError(t, <-errs)
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	r, err := c.Read(ctx, key)
	require.NoError(t, err)
	require.Equal(t, model, r.Value)
	// Wait out the window, merge once more, and read again: same value.
	time.Sleep(opts.Window + opts.SafetyMargin + 500*time.Millisecond)
	_, merged, err := c.Merge(ctx, key)
	require.NoError(t, err)
	require.True(t, merged)
	r2, err := c.Read(ctx, key)
	require.NoError(t, err)
	require.Equal(t, model, r2.Value)
	require.LessOrEqual(t, r2.Cells, 1, "after the final merge a read costs one cell")
}

// TestIntegrationTallyLWW checks the timestamp rules tally.Store states,
// against the real server: greater timestamp wins, a delete shadows values
// at or below its timestamp forever, a later value reappears, GC batches are
// idempotent and the newer of two GCs wins.
func TestIntegrationTallyLWW(t *testing.T) {
	db := newTestDB(t, Options{})
	ts := db.Tally()
	ctx := context.Background()
	key := uniqueKey(t, "lww")
	put := func(m string, data string, at int64) {
		t.Helper()
		cctx, calls := counting(ctx)
		require.NoError(t, ts.PutShard(cctx, key, tally.EncodedShard{Mutator: crdt.ActorID(m), Data: []byte(data)}, at))
		requireCalls(t, calls, 0, 1, 0, "shard write")
	}
	read := func(complete bool) (map[string]string, string) {
		t.Helper()
		shards, tv, err := ts.Read(ctx, key, complete)
		require.NoError(t, err)
		out := map[string]string{}
		for _, s := range shards {
			out[string(s.Mutator)] = string(s.Data)
		}
		return out, string(tv)
	}
	shards, tv := read(true)
	require.Empty(t, shards)
	require.Empty(t, tv)

	put("m1", "a", 100)
	put("m1", "b", 50) // older timestamp loses
	put("m2", "x", 100)
	put("m3", "y", 300)
	shards, _ = read(false)
	require.Equal(t, map[string]string{"m1": "a", "m2": "x", "m3": "y"}, shards)

	gc := tally.GCBatch{WriteTS: 200, Tally: []byte("T1"), Delete: []crdt.ActorID{"m1", "m2"}}
	cctx, calls := counting(ctx)
	require.NoError(t, ts.ApplyGC(cctx, key, gc))
	requireCalls(t, calls, 0, 1, 0, "gc batch")
	require.NoError(t, ts.ApplyGC(ctx, key, gc), "re-applying a GC batch is harmless")
	shards, tv = read(true)
	require.Equal(t, map[string]string{"m3": "y"}, shards)
	require.Equal(t, "T1", tv)

	put("m1", "late", 150) // below the delete: stays invisible
	put("m2", "again", 201)
	older := tally.GCBatch{WriteTS: 120, Tally: []byte("T0")} // a slower GC's older fold loses
	require.NoError(t, ts.ApplyGC(ctx, key, older))
	shards, tv = read(true)
	require.Equal(t, map[string]string{"m2": "again", "m3": "y"}, shards)
	require.Equal(t, "T1", tv)
}
