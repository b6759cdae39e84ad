package proptest

import (
	"cmp"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"

	"github.com/leanovate/gopter"

	"github.com/counterkit/counterkit/crdt"
)

// StepKind says what one schedule step does.
type StepKind uint8

// The step kinds. The zero value is StepApply.
const (
	StepApply StepKind = iota // replica Replica applies Op as its own actor
	StepSend                  // a deep copy of replica Replica is put in flight
	// StepDeliver merges the in-flight snapshot Msg into replica Replica.
	// It stays in flight, to be delivered again or after newer ones.
	StepDeliver
	StepDrop // the in-flight snapshot Msg is lost
)

// String returns "apply", "send", "deliver" or "drop".
func (k StepKind) String() string {
	if names := [...]string{"apply", "send", "deliver", "drop"}; int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// Step is one event of a schedule. Msg selects an in-flight snapshot
// modulo the number in flight (none: the step does nothing), so removing
// earlier steps, as shrinking does, never makes a schedule invalid.
type Step[O any] struct {
	Kind    StepKind
	Replica int  // the acting replica (Apply), sender (Send) or receiver (Deliver)
	Msg     int  // picks the in-flight snapshot for Deliver and Drop
	Op      O    // the operation of an Apply step
	Repeat  bool // Op was copied from an earlier Apply (a retry); informational
}

// Schedule is a random run of a replicated system: Replicas replicas,
// replica i acting as Actor(i), and a sequence of steps; Simulate runs it
// against a Model.
type Schedule[O any] struct {
	// Replicas is at least MinReplicas when generated, at least one for
	// Simulate; Replica fields are taken modulo it.
	Replicas int
	Steps    []Step[O]
	// Picks choose two sent snapshots (modulo their number) that CheckLaws
	// uses as extra operands.
	Picks [2]int
}

// Actor returns the actor id of replica i: "r0", "r1", ...
func Actor(i int) crdt.ActorID { return crdt.ActorID(fmt.Sprintf("r%d", i)) }

// String renders the schedule one step per line, resolving each Msg to the
// snapshot it selects ("r2 <- r0@3" is replica 2 merging the snapshot replica
// 0 sent at step 3).
func (s Schedule[O]) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule: %d replicas, %d steps", s.Replicas, len(s.Steps))
	var net network
	for i, st := range s.Steps {
		fmt.Fprintf(&b, "\n  %3d: ", i)
		switch st.Kind {
		case StepApply:
			fmt.Fprintf(&b, "%s apply %+v", Actor(st.Replica), st.Op)
			if st.Repeat {
				b.WriteString(" (repeat)")
			}
		case StepSend:
			net.send(st.Replica, i)
			fmt.Fprintf(&b, "%s send", Actor(st.Replica))
		case StepDeliver, StepDrop:
			if len(net.pool) == 0 {
				fmt.Fprintf(&b, "%s (nothing in flight)", st.Kind)
				continue
			}
			k := pick(st.Msg, len(net.pool))
			m := net.pool[k]
			if st.Kind == StepDeliver {
				fmt.Fprintf(&b, "%s <- %s@%d", Actor(st.Replica), Actor(m.from), m.at)
			} else {
				net.remove(k)
				fmt.Fprintf(&b, "drop %s@%d", Actor(m.from), m.at)
			}
		default:
			fmt.Fprintf(&b, "%s", st.Kind)
		}
	}
	return b.String()
}

func pick(i, n int) int {
	if i < 0 {
		i = -i
	}
	return i % n
}

// GenSchedule returns a generator of Schedule[O] values whose Apply ops
// come from genOp.
//
// It draws a length uniformly from [0, max(size, 8)] (gopter's growing
// size: early cases are short), capped at MaxSteps(cfg.MaxOps). Each step
// is, independently: Apply by a random replica (45%, at most cfg.MaxOps;
// one in five repeats an earlier op, a retry; then Sends), Send (20%),
// Deliver (27%) or Drop of an in-flight snapshot (8%). A Deliver is, with
// probability 1/4 each, a repeat (duplication), a snapshot older than one
// the receiver merged from that sender (reordering), or any snapshot to
// any replica. Values shrink by removing chunks of steps.
func GenSchedule[O any](genOp gopter.Gen, cfg Options) gopter.Gen {
	replicas := max(cfg.Replicas, MinReplicas)
	maxOps := cmp.Or(max(cfg.MaxOps, 0), DefaultMaxOps)
	maxSteps := MaxSteps(maxOps)
	return func(gp *gopter.GenParameters) *gopter.GenResult {
		bound := min(max(gp.MaxSize, 8), maxSteps)
		n := gp.Rng.Intn(bound + 1)
		s := Schedule[O]{Replicas: replicas, Steps: make([]Step[O], 0, n)}
		var ops []O
		var net network
		for len(s.Steps) < n {
			r := gp.Rng.Intn(100)
			var st Step[O]
			switch {
			case r < 45 && len(ops) < maxOps:
				st.Kind = StepApply
				st.Replica = gp.Rng.Intn(replicas)
				if len(ops) > 0 && gp.Rng.Intn(5) == 0 {
					st.Op = ops[gp.Rng.Intn(len(ops))]
					st.Repeat = true
				} else {
					op, ok := genOne[O](genOp, gp)
					if !ok {
						return gopter.NewEmptyResult(reflect.TypeOf(s))
					}
					st.Op = op
				}
				ops = append(ops, st.Op)
			case r < 65:
				st.Kind = StepSend
				st.Replica = gp.Rng.Intn(replicas)
				net.send(st.Replica, len(s.Steps))
			case r < 92:
				st.Kind = StepDeliver
				st.Replica, st.Msg = net.deliver(gp.Rng, replicas)
			default:
				st.Kind = StepDrop
				st.Msg = net.drop(gp.Rng)
			}
			s.Steps = append(s.Steps, st)
		}
		s.Picks = [2]int{gp.Rng.Intn(1 << 30), gp.Rng.Intn(1 << 30)}
		return gopter.NewGenResult(s, shrinkSchedule[O])
	}
}

// genOne draws one op, retrying when genOp's sieve rejects a value.
func genOne[O any](genOp gopter.Gen, gp *gopter.GenParameters) (O, bool) {
	var zero O
	for range 100 {
		v, ok := genOp(gp).Retrieve()
		if !ok {
			continue
		}
		if v == nil {
			return zero, true
		}
		op, ok := v.(O)
		if !ok {
			panic(fmt.Sprintf("proptest: GenOp generated a %T, want %T", v, zero))
		}
		return op, true
	}
	return zero, false
}

// shrinkSchedule removes chunks of n/2, n/4, ..., 1 steps at every offset.
func shrinkSchedule[O any](v interface{}) gopter.Shrink {
	s := v.(Schedule[O])
	n := len(s.Steps)
	chunk, off := min(max(n/2, 1), n), 0
	return func() (interface{}, bool) {
		if chunk == 0 {
			return nil, false
		}
		steps := make([]Step[O], 0, n-chunk)
		steps = append(steps, s.Steps[:off]...)
		steps = append(steps, s.Steps[min(off+chunk, n):]...)
		off += chunk
		if off >= n {
			off = 0
			chunk /= 2
		}
		return Schedule[O]{Replicas: s.Replicas, Steps: steps, Picks: s.Picks}, true
	}
}

// network mirrors the in-flight pool while a schedule is generated, so that
// deliveries can aim at duplicates and stale snapshots on purpose.
type network struct {
	pool   []flight
	newest map[[2]int]int // (receiver, sender) -> newest send step delivered
	seen   [][2]int       // (receiver, send step) pairs already delivered
}

type flight struct{ from, at int }

func (nw *network) send(from, at int) { nw.pool = append(nw.pool, flight{from, at}) }

// deliver picks a receiver and a message: a quarter of the time a
// duplicate of an earlier delivery, a quarter of the time a snapshot older
// than one the receiver already merged from the same sender, otherwise
// uniformly at random.
func (nw *network) deliver(rng *rand.Rand, replicas int) (to, msg int) {
	to = rng.Intn(replicas)
	if len(nw.pool) == 0 {
		return to, rng.Intn(1 << 30)
	}
	k := rng.Intn(len(nw.pool))
	switch rng.Intn(4) {
	case 0:
		if len(nw.seen) > 0 {
			d := nw.seen[rng.Intn(len(nw.seen))]
			if j := slices.IndexFunc(nw.pool, func(f flight) bool { return f.at == d[1] }); j >= 0 {
				to, k = d[0], j
			}
		}
	case 1:
		var stale [][2]int // (receiver, pool index)
		for j, f := range nw.pool {
			for r := range replicas {
				if at, ok := nw.newest[[2]int{r, f.from}]; ok && at > f.at {
					stale = append(stale, [2]int{r, j})
				}
			}
		}
		if len(stale) > 0 {
			c := stale[rng.Intn(len(stale))]
			to, k = c[0], c[1]
		}
	}
	f := nw.pool[k]
	if nw.newest == nil {
		nw.newest = map[[2]int]int{}
	}
	key := [2]int{to, f.from}
	if at, ok := nw.newest[key]; !ok || f.at > at {
		nw.newest[key] = f.at
	}
	nw.seen = append(nw.seen, [2]int{to, f.at})
	return to, k
}

func (nw *network) drop(rng *rand.Rand) int {
	if len(nw.pool) == 0 {
		return rng.Intn(1 << 30)
	}
	k := rng.Intn(len(nw.pool))
	nw.remove(k)
	return k
}

func (nw *network) remove(k int) { nw.pool = append(nw.pool[:k:k], nw.pool[k+1:]...) }
