package modelcheck

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Scope is one small system to check exhaustively: the drivers and scripts
// Build sets up, and the bounds of the search.
type Scope struct {
	Name string
	// Fates are the faults the explorer may give a call, besides Deliver.
	Fates Fates
	// KeyFates, when set, gives instead the faults allowed on the calls
	// of each key (to spare a scope's budget the faults of some keys).
	KeyFates func(key string) Fates
	// MaxFaults bounds the calls of one schedule given a fate other than
	// Deliver.
	MaxFaults int
	// MaxPreemptions bounds the times one schedule picks a call of
	// another script while the script that ran last has a call waiting.
	MaxPreemptions int
	// MaxStaleAge bounds how old a Stale fetch may be: it is served
	// any of the key's last MaxStaleAge states before the current one,
	// each a separate option. Zero or one: only the state just before.
	MaxStaleAge int
	// MaxSchedules stops the search after that many schedules (the
	// report says it was cut short); zero means no limit.
	MaxSchedules int
	// Build sets up one execution: drivers on w.Store, scripts (w.Go),
	// invariants (w.Check, w.CheckEnd).
	Build func(w *World)
}

// Violation is a schedule that breaks an invariant.
type Violation struct {
	Check   string
	Err     error
	Choices []int
	Trace   []string
}

// Schedule renders the choices for Replay.
func (v *Violation) Schedule() string { return FormatChoices(v.Choices) }

func (v *Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invariant %q broken: %v\nschedule %s:\n", v.Check, v.Err, v.Schedule())
	for _, l := range v.Trace {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Report is what a search found.
type Report struct {
	Scope string
	// Schedules is the number of complete schedules run; States the
	// number of distinct choice points (nodes of the search tree).
	Schedules, States int
	// Reruns counts schedules run again because an execution did not
	// replay its prefix or stalled (see Explore).
	Reruns int
	// Truncated: MaxSchedules stopped the search.
	Truncated bool
	// Violation is the first schedule that broke an invariant, if any.
	Violation *Violation
	CPU       time.Duration
}

// FormatChoices renders choices as dot-separated indices.
func FormatChoices(cs []int) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ".")
}

// ParseChoices reads FormatChoices' output.
func ParseChoices(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, p := range strings.Split(s, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("mc: bad schedule element %q", p)
		}
		out = append(out, n)
	}
	return out, nil
}

// Explore runs every schedule of s within its bounds, depth first, and
// stops at the first violation.
func Explore(s Scope) Report {
	start := time.Now()
	settle(runtime.NumGoroutine())
	rep := Report{Scope: s.Name}
	var prefix []int
	for {
		choices, widths, v, _ := execute(s, prefix)
		for try := 0; try < 3 && v != nil && (v.Check == "replay" || v.Check == "progress"); try++ {
			// The explorer's wait for quiescence can be fooled by a
			// goroutine caught between two states; run the schedule
			// again before reporting it.
			rep.Reruns++
			if DebugReruns {
				println("rerun:", v.Check, v.Err.Error(), FormatChoices(prefix))
			}
			choices, widths, v, _ = execute(s, prefix)
		}
		rep.Schedules++
		rep.States += len(choices) - len(prefix) + 1
		if v != nil {
			rep.Violation = v
			break
		}
		// Backtrack: the last choice point with an alternative left.
		i := len(choices) - 1
		for i >= 0 && choices[i]+1 >= widths[i] {
			i--
		}
		if i < 0 {
			break
		}
		prefix = append(choices[:i:i], choices[i]+1)
		if s.MaxSchedules > 0 && rep.Schedules >= s.MaxSchedules {
			rep.Truncated = true
			break
		}
	}
	rep.CPU = time.Since(start)
	return rep
}

// Replay runs the schedule choices (then the first option at every later
// choice point) and returns its violation, if any, and its trace.
func Replay(s Scope, choices []int) (*Violation, []string) {
	_, _, v, trace := execute(s, choices)
	return v, trace
}

type option struct {
	call    *call
	fate    Fate
	age     int // a Stale fetch's age: 1 is the state before the current
	held    int // index of a held put to deliver, when call is nil
	fault   bool
	preempt bool
}

func (o option) describe(w *World) string {
	if o.call == nil {
		return fmt.Sprintf("deliver held %s", w.Store.heldPuts()[o.held].id)
	}
	who := ""
	if o.call.actor != "" {
		who = " as " + string(o.call.actor)
	}
	if o.fate == Stale && o.age > 1 {
		return fmt.Sprintf("%s%s → %s by %d", o.call.id, who, o.fate, o.age)
	}
	return fmt.Sprintf("%s%s → %s", o.call.id, who, o.fate)
}

// execute runs one schedule: choices first, then the first option at every
// choice point. It returns the choices made and the number of options at
// each.
func execute(s Scope, prefix []int) (choices, widths []int, v *Violation, trace []string) {
	base := runtime.NumGoroutine()
	defer settle(base)
	w := newWorld()
	w.base = base
	s.Build(w)
	done := make(chan struct{}, len(w.scripts))
	defer func() {
		// Let every script finish, so that no goroutine outlives the
		// execution: deliver every call still waiting.
		for w.runningCount() > 0 {
			calls := w.Store.pendingCalls()
			if len(calls) == 0 {
				break // blocked for good (reported as a violation)
			}
			for _, c := range calls {
				w.Store.decide(c, Deliver, 0)
			}
			w.waitQuiet()
		}
	}()
	for _, sc := range w.scripts {
		w.mu.Lock()
		w.running++
		w.live[sc.name] = true
		w.mu.Unlock()
		r := &Runner{w: w, name: sc.name}
		go func() {
			defer func() {
				w.mu.Lock()
				w.running--
				delete(w.live, sc.name)
				w.mu.Unlock()
				done <- struct{}{}
			}()
			sc.fn(r)
		}()
		w.waitQuiet()
	}
	fail := func(check string, err error) *Violation {
		w.mu.Lock()
		defer w.mu.Unlock()
		return &Violation{Check: check, Err: err, Choices: append([]int(nil), choices...), Trace: append([]string(nil), w.log...)}
	}
	check := func(list []namedCheck) *Violation {
		for _, c := range list {
			if err := c.fn(); err != nil {
				return fail(c.name, err)
			}
		}
		return nil
	}
	faults, preempts := 0, 0
	last := ""
	for step := 0; ; step++ {
		if v := check(w.checks); v != nil {
			return choices, widths, v, v.Trace
		}
		opts := options(w, s, faults, preempts, last)
		if len(opts) == 0 {
			if w.runningCount() > 0 && w.settleSlowly() {
				step--
				continue
			}
			if w.runningCount() > 0 {
				return choices, widths, fail("progress", fmt.Errorf("%d scripts wait, with no store call pending", w.runningCount())), nil
			}
			break
		}
		k := 0
		if step < len(prefix) {
			k = prefix[step]
			if k >= len(opts) {
				var now []string
				for _, o := range opts {
					now = append(now, o.describe(w))
				}
				return choices, widths, fail("replay", fmt.Errorf("step %d: choice %d of %d: the schedule does not replay (nondeterminism?); the options now: %s", step, k, len(opts), strings.Join(now, "; "))), nil
			}
		}
		o := opts[k]
		choices, widths = append(choices, k), append(widths, len(opts))
		w.Logf("step %d: %s", step, o.describe(w))
		if o.fault {
			faults++
		}
		if o.preempt {
			preempts++
		}
		if o.call != nil {
			last = o.call.script
			w.Store.decide(o.call, o.fate, o.age)
		} else if err := w.Store.deliverHeld(o.held); err != nil {
			return choices, widths, fail("store", err), nil
		}
		w.waitQuiet()
	}
	// The end: every script has returned; land what is still held.
	for len(w.Store.heldPuts()) > 0 {
		w.Logf("end: deliver held %s", w.Store.heldPuts()[0].id)
		if err := w.Store.deliverHeld(0); err != nil {
			return choices, widths, fail("store", err), nil
		}
		if v := check(w.checks); v != nil {
			return choices, widths, v, v.Trace
		}
	}
	if len(w.settles) > 0 {
		w.Store.mu.Lock()
		w.Store.direct = true
		w.Store.mu.Unlock()
		w.Logf("end: settle")
		for _, fn := range w.settles {
			fn()
		}
		if v := check(w.checks); v != nil {
			return choices, widths, v, v.Trace
		}
	}
	if v := check(w.ends); v != nil {
		return choices, widths, v, v.Trace
	}
	w.mu.Lock()
	trace = append([]string(nil), w.log...)
	w.mu.Unlock()
	return choices, widths, nil, trace
}

func (w *World) runningCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

// options lists the choices at this point: every waiting call under every
// fate the bounds allow (a Stale fetch once per age, youngest first), then
// every held put's delivery.
func options(w *World, s Scope, faults, preempts int, last string) []option {
	calls := w.Store.pendingCalls()
	lastWaits := false
	for _, c := range calls {
		if c.script == last {
			lastWaits = true
		}
	}
	var out []option
	for _, c := range calls {
		pre := lastWaits && c.script != last
		if pre && preempts >= s.MaxPreemptions {
			continue
		}
		out = append(out, option{call: c, fate: Deliver, preempt: pre})
		if faults >= s.MaxFaults {
			continue
		}
		fates := s.Fates
		if s.KeyFates != nil {
			fates = s.KeyFates(c.key)
		}
		for f := Refuse; f < numFates; f++ {
			if !fates.Has(f) || !applies(w, c, f) {
				continue
			}
			if f == Stale {
				for age := 1; age <= max(s.MaxStaleAge, 1) && age <= w.Store.older(c.key); age++ {
					out = append(out, option{call: c, fate: f, age: age, fault: true, preempt: pre})
				}
				continue
			}
			out = append(out, option{call: c, fate: f, fault: true, preempt: pre})
		}
	}
	for i := range w.Store.heldPuts() {
		out = append(out, option{held: i})
	}
	return out
}

// applies reports whether fate f makes sense for call c.
func applies(w *World, c *call, f Fate) bool {
	switch f {
	case Stale:
		return c.method == "Fetch" && w.Store.hasOlder(c.key)
	case LoseAck, Hold, Unclassified:
		return c.method == "Put"
	case CancelBefore, CancelAfter:
		return c.op != nil
	}
	return true
}

// waitQuiet returns once no goroutine but the caller can run: every other
// one waits for the store, a lock held by a waiting goroutine, a channel or
// the end of a script. The drivers run without timers (no backoff), so
// nothing but the explorer can wake them then.
func (w *World) waitQuiet() {
	var buf []byte
	for i := 0; ; i++ {
		if w.quietFast() {
			return
		}
		runtime.Gosched()
		if i < 20 || i%8 != 0 {
			continue
		}
		if buf == nil {
			buf = make([]byte, 64<<10)
		}
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if quiet(buf[:n]) {
			return
		}
		if i > 50 {
			time.Sleep(time.Duration(min(i, 500)) * time.Microsecond)
		}
	}
}

// quietFast reports whether no goroutine but the scripts' exists and
// every script that has not finished waits in the store or in
// Runner.Wait.
func (w *World) quietFast() bool {
	w.mu.Lock()
	n, live := w.base+w.running, len(w.live)
	blocked := map[string]bool{}
	for sc := range w.waiting {
		blocked[sc] = true
	}
	w.mu.Unlock()
	if runtime.NumGoroutine() != n {
		return false
	}
	for _, c := range w.Store.pendingCalls() {
		blocked[c.script] = true
	}
	return len(blocked) >= live
}

// settle waits until at most n goroutines exist (those of the last
// execution have finished), for a while.
func settle(n int) {
	for i := 0; i < 10000 && runtime.NumGoroutine() > n; i++ {
		runtime.Gosched()
		if i > 100 {
			time.Sleep(10 * time.Microsecond)
		}
	}
}

// blocking lists the states of goroutines that wait for another goroutine;
// any other (running, runnable, copystack, preempted, GC assist wait, and
// plain semacquire, which is the runtime's own, as when a goroutine waits
// for a garbage collection to start) will move on by itself.
var blocking = map[string]bool{
	"chan receive": true, "chan send": true, "select": true, "select (no cases)": true,
	"chan receive (nil chan)": true, "chan send (nil chan)": true,
	"sync.Mutex.Lock": true, "sync.RWMutex.Lock": true, "sync.RWMutex.RLock": true,
	"sync.WaitGroup.Wait": true, "sync.Cond.Wait": true,
}

// quiet reports whether every goroutine in the dump but the first (the
// caller) waits.
func quiet(dump []byte) bool {
	first := true
	for _, line := range bytes.Split(dump, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("goroutine ")) {
			continue
		}
		if first {
			first = false
			continue
		}
		i := bytes.IndexByte(line, '[')
		j := bytes.IndexByte(line, ']')
		if i < 0 || j < i {
			continue
		}
		state := string(line[i+1 : j])
		if k := strings.IndexByte(state, ','); k >= 0 {
			state = state[:k]
		}
		if !blocking[state] {
			return false
		}
	}
	return true
}

// settleSlowly waits up to 50ms for a store call or a script's end, when
// scripts run and no call waits: it reports whether one came.
func (w *World) settleSlowly() bool {
	n := w.runningCount()
	for i := 0; i < 50; i++ {
		time.Sleep(time.Millisecond)
		if len(w.Store.pendingCalls()) > 0 || w.runningCount() != n {
			w.waitQuiet()
			return true
		}
	}
	return false
}

// DebugReruns prints why schedules are run again.
var DebugReruns = false
