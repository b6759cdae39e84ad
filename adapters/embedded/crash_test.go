package embedded_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

// The crash test: the test binary re-executes itself (TestCrashChild with
// envCrashDir set) as a child process that runs every crashWorkload from
// several goroutines against a DB in one directory, writing a "try" line
// to stdout before each write and an "ack" line once it returned success.
// The parent SIGKILLs the child at a random moment, reopens the directory,
// verifies every page and checksum, and asks each workload to check the
// store against its model of the log: every acknowledged write present
// exactly as the model says, every unacknowledged one wholly there or
// wholly absent. Kill delays and the children's choices come from the
// printed seed; thread scheduling does not replay.

const (
	envCrashDir  = "COUNTERKIT_EMBEDDED_CRASH_DIR"
	envCrashSeed = "COUNTERKIT_EMBEDDED_CRASH_SEED"
	envCrashBase = "COUNTERKIT_EMBEDDED_CRASH_BASE"
	envCrashTag  = "COUNTERKIT_EMBEDDED_CRASH_TAG"
	envCrashSkew = "COUNTERKIT_EMBEDDED_CRASH_SKEW"

	// crashRoundSkew is how far ahead of the last child's clock each new
	// child's clock runs, for the workloads that take a clock, so that
	// windows and graces of minutes pass between kills.
	crashRoundSkew = 11 * time.Minute

	crashWorkers = 4
)

// A crashWorkload is one kind of traffic in the crash test. To add one
// (a driver of a counter type, once it runs on the shapes), implement it
// and append it to crashWorkloads.
type crashWorkload interface {
	// name prefixes the workload's log lines.
	name() string
	// step runs one operation in the child. It calls try with the
	// operation's record before writing and ack with the same record
	// once the write returned success. Records are single-line, without
	// spaces, and short (< 1 KiB).
	step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(record string)) error
	// check runs in the parent after a kill: tries and acks are the
	// records logged by the round that was just killed. It updates the
	// model (deciding which unacknowledged writes landed, all or nothing)
	// and compares the reopened store with it.
	check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error
}

// childEnv is what a workload's step can use.
type childEnv struct {
	db   *embedded.DB
	tag  string // unique per child process: ids it makes are unique
	base int64  // timestamps, µs: base + small offsets
	// clock is the child's clock for drivers that take one: the wall
	// clock plus crashRoundSkew per round.
	clock func() time.Time
	// note logs a fact for the parent's summary (a single word).
	note func(string)
	seq  func() int64
}

func crashWorkloads() []crashWorkload {
	return []crashWorkload{newSiblingsWorkload(), newPartitionsWorkload(), newLedgerWorkload(), newDeltalogWorkload(), newBalanceWorkload(), newTallyWorkload(), newTransactionsWorkload()}
}

// payload is the value written for id: its id, then filler derived from
// it, so that a torn or mixed-up value is recognised.
func payload(id string) []byte {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	n := 16 + int(x%3000)
	b := make([]byte, 0, len(id)+1+n)
	b = append(b, id...)
	b = append(b, ':')
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b = append(b, 'a'+byte(x%26))
	}
	return b
}

// idOf returns the id of an intact payload.
func idOf(v []byte) (string, error) {
	i := bytes.IndexByte(v, ':')
	if i <= 0 || !bytes.Equal(v, payload(string(v[:i]))) {
		return "", fmt.Errorf("value %.40q... is not an intact payload", v)
	}
	return string(v[:i]), nil
}

// TestCrashChild is the child side of TestCrash; it runs only when
// re-executed by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("runs only as TestCrash's child process")
	}
	seed, _ := strconv.ParseInt(os.Getenv(envCrashSeed), 10, 64)
	base, _ := strconv.ParseInt(os.Getenv(envCrashBase), 10, 64)
	os.Stdout.WriteString("opening - -\n")
	db, err := embedded.Open(dir, embedded.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		fmt.Printf("error open: %v\n", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	emit := func(kind, wl, rec string) {
		mu.Lock()
		defer mu.Unlock()
		// One write(2) per line: a line is in the pipe or not at all.
		os.Stdout.WriteString(kind + " " + wl + " " + rec + "\n")
	}
	var n int64
	var nmu sync.Mutex
	skew, _ := time.ParseDuration(os.Getenv(envCrashSkew))
	env := &childEnv{db: db, tag: os.Getenv(envCrashTag), base: base, clock: func() time.Time { return time.Now().Add(skew) }, seq: func() int64 {
		nmu.Lock()
		defer nmu.Unlock()
		n++
		return n
	}}
	env.note = func(n string) { emit("note", "-", n) }
	emit("ready", "-", "-")
	wls := crashWorkloads()
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
			for {
				wl := wls[rng.IntN(len(wls))]
				err := wl.step(context.Background(), env, rng,
					func(r string) { emit("try", wl.name(), r) },
					func(r string) { emit("ack", wl.name(), r) })
				if err != nil {
					emit("error", wl.name(), strings.ReplaceAll(err.Error(), " ", "_"))
					os.Exit(4)
				}
			}
		}()
	}
	wg.Wait()
}

// TestCrash kills the child COUNTERKIT_CASES × 10 times (200 for
// COUNTERKIT_CASES=20) and checks the directory after each kill.
func TestCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() && !raceEnabled {
		t.Skip("crash test skipped in -short mode (the race pass runs it)")
	}
	rng, seed := seeded(t)
	kills := proptest.Scale(10)
	dir := t.TempDir()
	base := time.Now().UnixMicro()
	wls := crashWorkloads()
	ctx := context.Background()
	totalAcks, totalTries := 0, 0
	notes := map[string]int{}
	for round := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(),
			envCrashDir+"="+dir,
			envCrashSeed+"="+strconv.FormatInt(seed+int64(round)*7919, 10),
			envCrashBase+"="+strconv.FormatInt(base, 10),
			envCrashTag+"="+"r"+strconv.Itoa(round),
			envCrashSkew+"="+(time.Duration(round)*crashRoundSkew).String(),
		)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		delay := time.Duration(rng.IntN(120_000)) * time.Microsecond
		var all []string
		ready := false
		timer := time.NewTimer(10 * time.Second)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				all = append(all, l)
				if !ready && strings.HasPrefix(l, "ready ") {
					ready = true
					timer.Reset(delay)
				}
			case <-timer.C:
				cmd.Process.Signal(syscall.SIGKILL)
				timer.Reset(time.Hour)
			}
		}
		werr := cmd.Wait()
		if !ready {
			t.Fatalf("round %d: child never opened the directory (%v): %q", round, werr, all)
		}
		var ws *syscall.WaitStatus
		if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			ws = &st
		}
		if ws == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended on its own (%v); last lines %q", round, werr, all[max(0, len(all)-3):])
		}
		tries, acks := map[string][]string{}, map[string][]string{}
		for _, l := range all {
			f := strings.SplitN(l, " ", 3)
			if len(f) != 3 {
				t.Fatalf("round %d: bad log line %q", round, l)
			}
			switch f[0] {
			case "try":
				tries[f[1]] = append(tries[f[1]], f[2])
			case "ack":
				acks[f[1]] = append(acks[f[1]], f[2])
			case "note":
				notes[f[2]]++
			}
		}
		db, err := embedded.Open(dir, embedded.Options{})
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		if err := db.Verify(); err != nil {
			db.Close()
			t.Fatalf("round %d: %v", round, err)
		}
		for _, wl := range wls {
			if err := wl.check(ctx, db, round, tries[wl.name()], acks[wl.name()]); err != nil {
				db.Close()
				t.Fatalf("round %d (killed after %v), workload %s: %v", round, delay, wl.name(), err)
			}
			totalAcks += len(acks[wl.name()])
			totalTries += len(tries[wl.name()])
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills, %d writes tried, %d acknowledged, all checked; %v", kills, totalTries, totalAcks, notes)
	for _, wl := range wls {
		if s, ok := wl.(interface{ summary() string }); ok {
			t.Log(s.summary())
		}
	}
	if totalAcks == 0 {
		t.Fatal("no write was acknowledged: the crash test checked nothing")
	}
}

// siblingsWorkload: fetch a key, put a fresh payload with the token; now
// and then delete what was fetched. A record is
// put|key|id|read-ids or del|key|-|read-ids.
type siblingsWorkload struct {
	// landed maps a key to its landed puts and deletes: what each wrote
	// and read.
	landed map[string][]sibOp
}

type sibOp struct {
	put  string // "" for a delete
	read []string
}

var sibKeys = []string{"s0", "s1", "s2"}

func newSiblingsWorkload() *siblingsWorkload {
	return &siblingsWorkload{landed: map[string][]sibOp{}}
}

func (*siblingsWorkload) name() string { return "siblings" }

func (w *siblingsWorkload) step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(string)) error {
	key := sibKeys[rng.IntN(len(sibKeys))]
	s := env.db.Siblings()
	vals, tok, err := s.Fetch(ctx, key)
	if err != nil {
		return err
	}
	read := make([]string, len(vals))
	for i, v := range vals {
		if read[i], err = idOf(v); err != nil {
			return err
		}
	}
	if rng.IntN(8) == 0 && len(vals) > 0 {
		rec := fmt.Sprintf("del|%s|-|%s", key, strings.Join(read, ","))
		try(rec)
		if err := s.Delete(ctx, key, tok); err != nil {
			return err
		}
		ack(rec)
		return nil
	}
	id := fmt.Sprintf("%s-s%d", env.tag, env.seq())
	rec := fmt.Sprintf("put|%s|%s|%s", key, id, strings.Join(read, ","))
	try(rec)
	if err := s.Put(ctx, key, "crash-child", payload(id), tok); err != nil {
		return err
	}
	ack(rec)
	return nil
}

func parseSib(rec string) (key string, op sibOp, err error) {
	f := strings.Split(rec, "|")
	if len(f) != 4 {
		return "", op, fmt.Errorf("bad record %q", rec)
	}
	if f[0] == "put" {
		op.put = f[2]
	}
	if f[3] != "" {
		op.read = strings.Split(f[3], ",")
	}
	return f[1], op, nil
}

func (w *siblingsWorkload) check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error {
	acked := map[string]bool{}
	for _, a := range acks {
		acked[a] = true
	}
	stored := map[string]map[string]bool{}
	for _, key := range sibKeys {
		vals, _, err := db.Siblings().Fetch(ctx, key)
		if err != nil {
			return err
		}
		stored[key] = map[string]bool{}
		for _, v := range vals {
			id, err := idOf(v)
			if err != nil {
				return fmt.Errorf("key %s: %v", key, err)
			}
			stored[key][id] = true
		}
	}
	// Decide which tried operations landed: acknowledged ones did; an
	// unacknowledged put landed if its value is stored or was read by a
	// landed operation; an unacknowledged delete landed if it must have
	// (checked below against what is stored).
	type tried struct {
		key string
		op  sibOp
		rec string
	}
	var ops []tried
	for _, r := range tries {
		k, op, err := parseSib(r)
		if err != nil {
			return err
		}
		ops = append(ops, tried{k, op, r})
	}
	landed := make([]bool, len(ops))
	for changed := true; changed; {
		changed = false
		for i, o := range ops {
			if landed[i] {
				continue
			}
			if acked[o.rec] || (o.op.put != "" && stored[o.key][o.op.put]) {
				landed[i], changed = true, true
				continue
			}
			for j, p := range ops {
				if landed[j] && p.key == o.key && o.op.put != "" && slices.Contains(p.op.read, o.op.put) {
					landed[i], changed = true, true
					break
				}
			}
		}
	}
	for i, o := range ops {
		if landed[i] || o.op.put != "" {
			continue
		}
		// An unacknowledged delete: all of its siblings gone, or (if it
		// did not land) the ones nothing else removed still there.
		gone := 0
		for _, id := range o.op.read {
			if !stored[o.key][id] {
				gone++
			}
		}
		if gone == len(o.op.read) && gone > 0 {
			landed[i] = true
		}
	}
	for i, o := range ops {
		if landed[i] {
			w.landed[o.key] = append(w.landed[o.key], o.op)
		}
	}
	// The model: every value a landed put wrote, minus every value a
	// landed operation read (and so superseded or deleted).
	for _, key := range sibKeys {
		want := map[string]bool{}
		for _, op := range w.landed[key] {
			if op.put != "" {
				want[op.put] = true
			}
		}
		for _, op := range w.landed[key] {
			for _, r := range op.read {
				delete(want, r)
			}
		}
		for id := range stored[key] {
			if !want[id] {
				return fmt.Errorf("key %s holds %s, which the model says is superseded, deleted or never written (landed ops %v)", key, id, w.landed[key])
			}
		}
		for id := range want {
			if !stored[key][id] {
				return fmt.Errorf("key %s lost %s (written by a landed put, superseded by none)", key, id)
			}
		}
	}
	return nil
}

// partitionsWorkload: batches of puts, deletes and range deletes with
// timestamps near the clock (ties and late writes under deletes occur),
// each batch also writing a marker row batches/<id>, which no batch
// deletes, so that whether an unacknowledged batch landed is known. A
// record is the batch id; the batch is regenerated from it.
type partitionsWorkload struct {
	model *memory.Partitions
	known map[string]bool // batches applied to the model
}

var crashParts = []string{"q0", "q1"}

const markerPartition = "batches"

func newPartitionsWorkload() *partitionsWorkload {
	return &partitionsWorkload{model: memory.NewPartitions(), known: map[string]bool{}}
}

func (*partitionsWorkload) name() string { return "partitions" }

// crashBatch derives a batch from its id and the timestamp base.
func crashBatch(id string, base int64) []store.Mutation {
	h := fnv.New64a()
	h.Write([]byte(id))
	rng := rand.New(rand.NewPCG(h.Sum64(), 1))
	n := 1 + rng.IntN(6)
	muts := []store.Mutation{{Partition: markerPartition, Op: store.OpPut, Key: []byte(id), Value: []byte("1"), Timestamp: base}}
	for i := range n {
		m := store.Mutation{
			Partition: crashParts[rng.IntN(len(crashParts))],
			Key:       fmt.Appendf(nil, "k%02d", rng.IntN(20)),
			Timestamp: base + 1 + rng.Int64N(5000),
		}
		switch r := rng.IntN(10); {
		case r < 7:
			m.Op = store.OpPut
			m.Value = payload(fmt.Sprintf("%s.%d", id, i))
		case r < 9:
			m.Op = store.OpDelete
		default:
			m.Op = store.OpDeleteRange
			m.End = fmt.Appendf(nil, "k%02d", 1+rng.IntN(20))
			if string(m.End) <= string(m.Key) {
				m.End = nil
			}
		}
		muts = append(muts, m)
	}
	return muts
}

func (w *partitionsWorkload) step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(string)) error {
	id := fmt.Sprintf("%s-b%d", env.tag, env.seq())
	try(id + "|" + strconv.FormatInt(env.base, 10))
	if err := env.db.Partitions().Apply(ctx, crashBatch(id, env.base)); err != nil {
		return err
	}
	ack(id + "|" + strconv.FormatInt(env.base, 10))
	return nil
}

func (w *partitionsWorkload) check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error {
	markers, err := db.Partitions().Snapshot(ctx, markerPartition, 1<<20, store.ReadComplete)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, r := range markers {
		have[string(r.Key)] = true
	}
	acked := map[string]bool{}
	for _, a := range acks {
		acked[a] = true
	}
	for _, rec := range tries {
		id, b, _ := strings.Cut(rec, "|")
		base, _ := strconv.ParseInt(b, 10, 64)
		if acked[rec] && !have[id] {
			return fmt.Errorf("acknowledged batch %s is missing", id)
		}
		if have[id] {
			if err := w.model.Apply(ctx, crashBatch(id, base)); err != nil {
				return err
			}
			w.known[id] = true
		}
	}
	for id := range have {
		if !w.known[id] {
			return fmt.Errorf("batch %s is stored but was never tried", id)
		}
	}
	for _, p := range crashParts {
		want, err := w.model.Snapshot(ctx, p, 1<<20, store.ReadComplete)
		if err != nil {
			return err
		}
		got, err := db.Partitions().Snapshot(ctx, p, 1<<20, store.ReadComplete)
		if err != nil {
			return err
		}
		for _, r := range got {
			if _, err := idOf(r.Value); err != nil {
				return fmt.Errorf("partition %s row %s: %v", p, r.Key, err)
			}
		}
		if !sameRows(want, got) {
			return fmt.Errorf("partition %s: model %s\nstored %s", p, showRows(want), showRows(got))
		}
	}
	return nil
}

// TestCrashWhileCreating kills the child at random moments from its start,
// so also while Open creates the data file: a directory left behind opens
// (empty, or with what was acknowledged) and verifies; it is never refused.
func TestCrashWhileCreating(t *testing.T) {
	t.Parallel()
	if testing.Short() && !raceEnabled {
		t.Skip("crash test skipped in -short mode (the race pass runs it)")
	}
	rng, seed := seeded(t)
	states := map[string]int{}
	defer func() { t.Logf("directories left by the kills: %v", states) }()
	for round := range proptest.Scale(10) {
		dir := filepath.Join(t.TempDir(), "data")
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(),
			envCrashDir+"="+dir,
			envCrashSeed+"="+strconv.FormatInt(seed+int64(round), 10),
			envCrashBase+"="+strconv.FormatInt(time.Now().UnixMicro(), 10),
			envCrashTag+"="+"c"+strconv.Itoa(round),
		)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill within a few milliseconds of the child starting Open
		// (creating the file takes two commits and a link).
		sc := bufio.NewScanner(out)
		for sc.Scan() && sc.Text() != "opening - -" {
		}
		time.Sleep(time.Duration(rng.IntN(25_000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		io.Copy(io.Discard, out)
		cmd.Wait()
		state := "no directory"
		if _, err := os.Stat(filepath.Join(dir, embedded.FileName)); err == nil {
			state = "data file"
		} else if _, err := os.Stat(filepath.Join(dir, embedded.FileName+".new")); err == nil {
			state = "half-made file"
		} else if _, err := os.Stat(dir); err == nil {
			state = "empty directory"
		}
		states[state]++
		db, err := embedded.Open(dir, embedded.Options{})
		if err != nil {
			t.Fatalf("round %d: a directory left by a crash is refused: %v", round, err)
		}
		if err := db.Verify(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		db.Close()
	}
}
