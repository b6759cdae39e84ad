package deltalog_test

import (
	"math"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/timeid"
)

// logUpdate is one generated logUpdate: ids come from a small pool so retries
// (the same id, the same delta) happen often.
type logUpdate struct {
	ID    deltalog.ID
	Delta int64
}

func poolUpdate(i int) logUpdate {
	d := int64(i + 1)
	if i%2 == 1 {
		d = -d
	}
	return logUpdate{ID: timeid.FromParts(base.Add(time.Duration(i)*time.Second), uint16(i), uint64(i)), Delta: d}
}

func logModel() proptest.Model[*deltalog.Log, logUpdate] {
	return proptest.Model[*deltalog.Log, logUpdate]{
		Name:  "deltalog.Log",
		New:   func() *deltalog.Log { return &deltalog.Log{} },
		GenOp: gen.IntRange(0, 23).Map(poolUpdate),
		Apply: func(s *deltalog.Log, _ crdt.ActorID, op logUpdate) error { return s.Add(op.ID, op.Delta) },
		Merge: func(dst, src *deltalog.Log) error { return dst.Merge(src) },
		Clone: func(s *deltalog.Log) *deltalog.Log { return s.Clone() },
		Equal: func(a, b *deltalog.Log) bool { return a.Equal(b) },
		Value: func(s *deltalog.Log) any { return s.Value() },
		Expect: func(applied []logUpdate) any {
			seen := map[deltalog.ID]int64{}
			for _, u := range applied {
				seen[u.ID] = u.Delta
			}
			var sum int64
			for _, d := range seen {
				sum += d
			}
			return sum
		},
		Leq: func(a, b *deltalog.Log) bool {
			in := map[deltalog.Cell]bool{}
			for _, c := range b.Cells() {
				in[c] = true
			}
			for _, c := range a.Cells() {
				if !in[c] {
					return false
				}
			}
			return true
		},
	}
}

// TestLogLaws: cell-set union is commutative, associative and idempotent,
// Add is inflationary, and the value is the sum over distinct logUpdate ids.
// Replay: COUNTERKIT_SEED=<seed> go test ./deltalog -run TestLogLaws
func TestLogLaws(t *testing.T) {
	cfg := proptest.DefaultOptions()
	cfg.Cases = max(50, cfg.Cases/5)
	proptest.CheckLaws(t, logModel(), cfg)
}

// TestLogConvergence: replicas gossiping with duplication and reordering
// converge to the model's value.
func TestLogConvergence(t *testing.T) {
	cfg := proptest.DefaultOptions()
	cfg.Cases = max(50, cfg.Cases/5)
	proptest.CheckConvergence(t, logModel(), cfg)
}

// step of the equivalence property.
type step struct {
	Kind    int   // 0..5 add, 6 advance, 7 merge
	Age     int   // add: seconds before now (within the window)
	Delta   int64 // add
	Advance int   // advance: seconds
}

func genStep() gopter.Gen {
	return gopter.CombineGens(gen.IntRange(0, 7), gen.IntRange(0, 59), gen.Int64Range(-50, 50), gen.IntRange(1, 90)).
		Map(func(v []interface{}) step {
			d := v[2].(int64)
			if d == 0 {
				d = 1
			}
			if v[3].(int)%8 == 0 { // an add near ±2^63: sums pass int64 (SPEC.md 8.3)
				d = d/max(d, -d)*math.MaxInt64 - d
			}
			return step{Kind: v[0].(int), Age: v[1].(int), Delta: d, Advance: v[3].(int)}
		})
}

// TestCompactedEqualsUncompacted is the equivalence property: the same
// updates and merges applied to a log that compacts after every merge and
// to one that never compacts always read the same value, and both equal the
// plain sum of the distinct updates, exactly, also past int64. Updates arrive late (anywhere in the
// one-minute window); merges cut off at now − window − margin.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./deltalog -run TestCompactedEqualsUncompacted
func TestCompactedEqualsUncompacted(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = proptest.Scale(200)
	props := gopter.NewProperties(params)
	const window, margin = time.Minute, 10 * time.Second
	props.Property("compaction never changes the value", prop.ForAll(func(steps []step) string {
		var full, compact deltalog.Log
		now := base
		model := map[deltalog.ID]int64{}
		n := uint64(0)
		for i, s := range steps {
			switch {
			case s.Kind < 6:
				n++
				id := timeid.FromParts(now.Add(-time.Duration(s.Age)*time.Second), 1, n)
				if full.Add(id, s.Delta) != nil || compact.Add(id, s.Delta) != nil {
					return "add failed"
				}
				model[id] = s.Delta
			case s.Kind == 6:
				now = now.Add(time.Duration(s.Advance) * time.Second)
			default:
				cutoff := now.Add(-window - margin)
				a, okA, errA := full.MergeBefore(cutoff, now)
				b, okB, errB := compact.MergeBefore(cutoff, now)
				if errA != nil || errB != nil || okA != okB || a != b {
					return "merges differ"
				}
				compact.Compact()
			}
			want := new(big.Int)
			for _, d := range model {
				want.Add(want, big.NewInt(d))
			}
			rf, _ := full.Read()
			rc, _ := compact.Read()
			if rf.Stats.BigSum().Cmp(want) != 0 || rc.Stats.BigSum().Cmp(want) != 0 || rf.Value != rc.Value {
				return "step " + strconv.Itoa(i) + ": values differ from the model"
			}
		}
		if compact.Len() > full.Len() {
			return "compacted log is larger"
		}
		return ""
	}, gen.SliceOfN(60, genStep())))
	props.TestingRun(t)
}
