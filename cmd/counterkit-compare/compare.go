package main

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/tpncounter"
)

const compareUsage = `usage: counterkit-compare -hosts HOST[,HOST] -keyspace KEYSPACE [flags]

Runs one increment workload, each type in turn for -duration with -workers
goroutines, on a Cassandra keyspace:

  native          Cassandra's native counter: UPDATE t SET c = c + 1 WHERE k = ?
                  (table counterkit_compare_native, created in the keyspace)
  ledger          ledger.Ledger credits on one account, one ledger per worker
                  (or per actor with -actors)
  ledger-sharded  ledger.Sharded credits on one account of -shards sub-keys
  tally           tally mutator updates, one mutator per worker, one flush
                  every -flush-every updates
  deltalog        deltalog.Counters adds on one counter, one Counters per worker
  transactions    balance.Transactions credits by transaction id on one account,
                  one Transactions per worker; worker 0 merges the account
                  every -merge-every (at its first send after it), each
                  merge with -read-timeout; below the table, the merges
                  run and failed
  balance         balance.Accounts adds on one account, one Accounts per
                  worker, merged as transactions is; only with -types: one
                  account holds about 150 adds a second (SPEC.md 9.3,
                  "Capacity"), above which its rows pile up until its
                  reads and merges fail too_large: not a hot-account type

Every write is sent with the client timeout -timeout; a small one makes
writes time out while they still land. Each transaction is sent once by
the worker that made it. A transaction whose write failed (timed out, ended
ambiguous, or was refused) is resent the way callers resend: after a delay
drawn between -resend-min and -resend-max, by another worker, so through a
different writer (another ledger, Counters or Accounts instance; with
-actors, the ledger of that worker's actor, which may be the same) than
the one that last sent it, and again after each failure until it is
acknowledged. The native counter resends the same c = c + 1 (which counts
again if the first one landed); the counterkit types resend the same
transaction or update id (ledger, deltalog, balance, transactions) or, for
tally, retry the write on the mutator that holds it (Mutator.Retry: a shard belongs to
its mutator). Resends go on after the run for at most -resolve-for; what is
still unacknowledged then is unresolved. Every statement runs at QUORUM,
the adapter's default.

Then every counter is read back with -read-timeout and compared:
  distinct      distinct transactions made (tally: updates flushed), each
                of 1: the value a user expects
  acked         of them, acknowledged (at the first send or a resend)
  resent        resends sent
  unresolved    transactions never acknowledged (each may have landed)
  writes        store writes: native increments, Puts, and Applies (a batch
                of rows each), resends and merges included
  final         the value read back
  drift         final - distinct: 0 is exact; above 0 counts transactions
                twice; below 0 lost some (at most unresolved of them may
                legitimately be missing)
  per_s         transactions acknowledged per second of the run, until
                the last worker stopped making new ones (resends after
                it are not counted)
  p50, p99      latency of one acknowledged write
  client µs     this process's CPU time (user + system) over the type's
                run and resends, per acknowledged transaction (of the
                maintenance jobs only the merges of transactions and
                balance run)
  server µs     with -server-pid, the same for that one server process (a
                Cassandra node on this host); work a type leaves to the
                server, such as flushes and compaction, may fall in the
                next type's run
Below the table each counterkit type is compared with the native counter
of the same run, per acknowledged transaction: per_s, and client plus
server CPU (client alone without -server-pid), as ratios (1.00× is the
same as native). For CPU, run one type against native (-types
native,TYPE) on a one-node cluster.
The tables are created if missing (cassandra.CreateSchema for the counterkit
types); every run writes fresh keys named compare-RUN-TYPE.

Exit status: 0 when every counterkit type ended with drift in
[-unresolved, 0] (the native counter may drift either way: that is what is
measured), 1 when one did not or the store failed, 2 for a usage error.
With transactions left unresolved, drift cannot tell one counted twice
from one that did not land: only a run with none unresolved shows a type
exact.

Flags:
`

type compareConfig struct {
	workers     int
	duration    time.Duration
	count       int // transactions per worker; 0: until duration
	timeout     time.Duration
	readTimeout time.Duration
	// resendMin and resendMax bound the delay before a failed transaction
	// is resent; resolveFor is how long after its last new transaction a
	// worker goes on resending.
	resendMin, resendMax time.Duration
	resolveFor           time.Duration
	shards               int
	flushEvery           int
	mergeEvery           time.Duration // transactions: between two merges
	actors               int           // ledger types: actors the workers share; 0: one per worker
	history              int           // ledger types: tpncounter HistoryLength; 0: the default
	runID                string
	seed                 uint64 // draws the resend delays
	// cpu measures the CPU each type's run uses (nil: not measured).
	cpu cpuMeter
	// now is the clock every latency, rate, delay and id time is taken
	// from; sleep waits (tests give a stepping clock and a yield).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration)
}

// txn is one transaction: amount increments under one identity, made by
// worker origin as its transaction seq.
type txn struct {
	seq, origin int
	amount      int64
	sends       int       // times sent so far
	last        int       // the worker that last sent it
	due         time.Time // when it may be resent
	// state is what a writer keeps for a resend (tally: the mutator that
	// holds the unresolved write).
	state any
}

// compareWriter is one worker's writer for a target, used by one goroutine
// at a time.
type compareWriter struct {
	// next makes the worker's transaction seq, or returns nil when the
	// increment was only staged (tally, until -flush-every updates).
	next func(seq int) *txn
	// finish returns the transaction of what is still staged, or nil.
	finish func() *txn
	// send sends t through this writer: its first send (t.sends == 1,
	// this send counted) or a resend of a transaction another writer sent
	// before.
	send func(ctx context.Context, t *txn) error
	// retryable reports whether a caller resends after err; false means
	// the transaction definitely failed and is given up.
	retryable func(err error) bool
	// maintain, if set, runs after each send, outside its latency: the
	// maintenance a service runs on a timer (transactions: worker 0's
	// merges). merges reports what it ran, once the run is over.
	maintain func(ctx context.Context)
	merges   func() maintenance
}

// maintenance counts the maintenance jobs a writer ran and how many failed.
type maintenance struct {
	runs, failed int64
	first        error // the first failure
}

// compareRow is one type's line of the report.
type compareRow struct {
	Type         string  `json:"type"`
	Distinct     int64   `json:"distinct"`
	Acknowledged int64   `json:"acknowledged"`
	Resent       int64   `json:"resent"`
	Unresolved   int64   `json:"unresolved"`
	Writes       int64   `json:"writes"`
	Final        int64   `json:"final"`
	Drift        int64   `json:"drift"`
	PerSecond    float64 `json:"per_second"`
	P50ms        float64 `json:"p50_ms"`
	P99ms        float64 `json:"p99_ms"`
	// ResentElsewhere counts resends sent by a worker other than the one
	// that sent the transaction before.
	ResentElsewhere int64 `json:"resent_elsewhere"`
	// GaveUp counts transactions given up after a definite failure (they
	// are also unresolved); FirstFailure is the first such error.
	GaveUp       int64  `json:"gave_up,omitempty"`
	FirstFailure string `json:"first_failure,omitempty"`
	// ClientCPUus and ServerCPUus are the CPU time in µs that the
	// client process and the server process used over the run and the
	// resends, per acknowledged transaction (nil: not measured).
	ClientCPUus *float64 `json:"client_cpu_us,omitempty"`
	ServerCPUus *float64 `json:"server_cpu_us,omitempty"`
	// CPUError is why the CPU was not measured, if it failed.
	CPUError string `json:"cpu_error,omitempty"`
	// Merges counts the maintenance jobs run during the run
	// (transactions: merges), MergesFailed those that failed, and
	// FirstMergeFailure is the first failure.
	Merges            int64  `json:"merges,omitempty"`
	MergesFailed      int64  `json:"merges_failed,omitempty"`
	FirstMergeFailure string `json:"first_merge_failure,omitempty"`
	// VsNative is this row against the native counter's, in the same run.
	VsNative   *vsNative `json:"vs_native,omitempty"`
	Error      string    `json:"error,omitempty"`
	counterkit bool
}

// vsNative is a counterkit row's ratios to the native counter's row: per
// acknowledged transaction, so above 1 is more transactions a second and
// more CPU per transaction than the native counter.
type vsNative struct {
	PerSecond float64 `json:"per_second"`
	// CPU is client plus server CPU per transaction (client alone when
	// the server's is not measured).
	CPU       *float64 `json:"cpu,omitempty"`
	ClientCPU *float64 `json:"client_cpu,omitempty"`
	ServerCPU *float64 `json:"server_cpu,omitempty"`
}

// againstNative sets VsNative on every counterkit row that ran, when rows
// hold a native row that ran and acknowledged writes.
func againstNative(rows []compareRow) {
	i := slices.IndexFunc(rows, func(r compareRow) bool { return !r.counterkit && r.Error == "" && r.PerSecond > 0 })
	if i < 0 {
		return
	}
	n := rows[i]
	ratio := func(a, b *float64) *float64 {
		if a == nil || b == nil || *b <= 0 {
			return nil
		}
		v := *a / *b
		return &v
	}
	sum := func(r compareRow) *float64 {
		if r.ClientCPUus == nil {
			return nil
		}
		v := *r.ClientCPUus
		if r.ServerCPUus != nil {
			v += *r.ServerCPUus
		}
		return &v
	}
	for j := range rows {
		r := &rows[j]
		if !r.counterkit || r.Error != "" {
			continue
		}
		r.VsNative = &vsNative{PerSecond: r.PerSecond / n.PerSecond,
			ClientCPU: ratio(r.ClientCPUus, n.ClientCPUus), ServerCPU: ratio(r.ServerCPUus, n.ServerCPUus)}
		if (r.ServerCPUus == nil) == (n.ServerCPUus == nil) {
			r.VsNative.CPU = ratio(sum(*r), sum(n))
		}
	}
}

// exact reports whether a row stayed within what its transactions allow:
// no transaction counted twice, none lost but unresolved ones.
func (r compareRow) exact() bool {
	return r.Error == "" && r.Drift <= 0 && r.Drift >= -r.Unresolved
}

type compareReport struct {
	Store      string       `json:"store"`
	Workers    int          `json:"workers"`
	Duration   string       `json:"duration"`
	Count      int          `json:"count_per_worker,omitempty"`
	Timeout    string       `json:"timeout"`
	ResendMin  string       `json:"resend_min"`
	ResendMax  string       `json:"resend_max"`
	ResolveFor string       `json:"resolve_for"`
	Shards     int          `json:"shards"`
	FlushEvery int          `json:"flush_every"`
	MergeEvery string       `json:"merge_every"`
	Actors     int          `json:"ledger_actors,omitempty"`
	History    int          `json:"ledger_history,omitempty"`
	Run        string       `json:"run"`
	Seed       uint64       `json:"seed"`
	Rows       []compareRow `json:"types"`
}

// compareTypes are the types compare can run, in order; defaultTypes
// those it runs without -types: all but balance, whose one account holds
// about 150 adds a second (SPEC.md 9.3, "Capacity"), far below this
// workload's rate.
var (
	compareTypes = []string{"native", "ledger", "ledger-sharded", "tally", "deltalog", "balance", "transactions"}
	defaultTypes = slices.DeleteFunc(slices.Clone(compareTypes), func(t string) bool { return t == "balance" })
)

// run is the whole program, testable: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("counterkit-compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hosts := fs.String("hosts", "", "Cassandra contact points, comma-separated, without credentials (default: $CASSANDRA_HOSTS)")
	keyspace := fs.String("keyspace", "", "an existing keyspace to create the tables in and write to")
	cfg := compareConfig{runID: newRunID(), now: time.Now, sleep: sleepCtx}
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long each type makes new transactions (at most 4m)")
	fs.IntVar(&cfg.count, "count", 0, "transactions per worker and type (0: as many as -duration allows)")
	fs.IntVar(&cfg.workers, "workers", 32, "concurrent writers per type")
	fs.DurationVar(&cfg.timeout, "timeout", 200*time.Millisecond, "client timeout of every write: small values make writes time out while still landing")
	fs.DurationVar(&cfg.readTimeout, "read-timeout", 30*time.Second, "timeout of the final reads, of connecting and of each transactions merge")
	fs.DurationVar(&cfg.resendMin, "resend-min", 2*time.Second, "the shortest delay before a failed transaction is resent")
	fs.DurationVar(&cfg.resendMax, "resend-max", time.Minute, "the longest delay before a failed transaction is resent (inside the deltalog and balance write windows: 10m and 5m)")
	fs.DurationVar(&cfg.resolveFor, "resolve-for", 5*time.Minute, "how long resends go on after the run; what is unacknowledged then is unresolved")
	fs.IntVar(&cfg.shards, "shards", 8, "ledger-sharded: the number of sub-keys of the account")
	fs.IntVar(&cfg.flushEvery, "flush-every", 1, "tally: updates staged per flush")
	fs.DurationVar(&cfg.mergeEvery, "merge-every", 5*time.Second, "transactions and balance: how often worker 0 merges the account")
	fs.IntVar(&cfg.actors, "actors", 0, "ledger types: distinct ledger actors, shared round robin by the workers (0: one per worker)")
	fs.IntVar(&cfg.history, "history", 0, "ledger types: transactions each actor's entry remembers (tpncounter HistoryLength; 0: its default)")
	types := fs.String("types", strings.Join(defaultTypes, ","), "the types to run, comma-separated, each once (also: balance)")
	fs.Uint64Var(&cfg.seed, "seed", 0, "seed of the resend delays (0: random; the report prints it)")
	var output string
	fs.StringVar(&output, "o", "table", "output format: table or json")
	fs.StringVar(&output, "output", "table", "output format: table or json")
	prefix := fs.String("prefix", "", "the counterkit tables' prefix (empty: the adapter's default, counterkit_)")
	serverPID := fs.Int("server-pid", 0, "the Cassandra server's process id on this host (Linux): its CPU per transaction is measured too")
	fs.Usage = func() { fmt.Fprint(stderr, compareUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		return fail(stderr, cli.Usagef("%w: unexpected argument %q (counterkit-compare takes flags only)", crdt.ErrInvalidConfig, fs.Arg(0)))
	}
	*hosts = cmp.Or(*hosts, os.Getenv("CASSANDRA_HOSTS"))
	cfg.seed = cmp.Or(cfg.seed, randomSeed())
	names, err := checkCompareFlags(cfg, cli.SplitList(*hosts), *keyspace, *types, output)
	if err != nil {
		return fail(stderr, err)
	}
	if cfg.cpu, err = newCPUMeter(*serverPID); err != nil {
		return fail(stderr, cli.Usagef("%w: -server-pid %d: %w", crdt.ErrInvalidConfig, *serverPID, err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.readTimeout)
	cs, err := openCompareCassandra(ctx, cli.SplitList(*hosts), *keyspace, *prefix, cfg.readTimeout)
	cancel()
	if err != nil {
		return fail(stderr, err)
	}
	defer cs.close()
	targets, err := compareTargets(names, cfg, cs.native, cs.siblings, cs.partitions)
	if err != nil {
		return fail(stderr, err)
	}
	rep := compareReportFor(cfg, "cassandra:"+strings.Join(cli.SplitList(*hosts), ",")+"/"+*keyspace)
	fmt.Fprintf(stderr, "counterkit-compare: run %s, %d workers, %s per type, resends after %s to %s (-seed %d)\n",
		cfg.runID, cfg.workers, cfg.duration, cfg.resendMin, cfg.resendMax, cfg.seed)
	rep.Rows = runComparison(context.Background(), cfg, targets, func(r compareRow) {
		fmt.Fprintf(stderr, "counterkit-compare: %s: %d distinct, %d acked, %d resent, final %d, drift %+d\n",
			r.Type, r.Distinct, r.Acknowledged, r.Resent, r.Final, r.Drift)
	})
	if err := writeCompareReport(stdout, output, rep); err != nil {
		return fail(stderr, err)
	}
	return compareStatus(stderr, rep)
}

// checkCompareFlags validates the flags and returns the types to run.
// Errors are usage errors wrapping crdt.ErrInvalidConfig.
func checkCompareFlags(cfg compareConfig, hosts []string, keyspace, types, format string) ([]string, error) {
	invalid := func(bad bool, format string, args ...any) error {
		if !bad {
			return nil
		}
		return cli.Usagef("%w: "+format, append([]any{crdt.ErrInvalidConfig}, args...)...)
	}
	bad := ""
	for _, h := range hosts {
		bad = cmp.Or(bad, cli.AddressProblem(h))
	}
	if err := cmp.Or(
		invalid(len(hosts) == 0, "no Cassandra hosts: give -hosts HOST[,HOST] or set CASSANDRA_HOSTS (the comparison runs against a real Cassandra)"),
		invalid(slices.ContainsFunc(hosts, func(h string) bool { return strings.Contains(h, "@") }),
			"a host holds credentials (USER:PASSWORD@HOST, not printed): counterkit-compare connects without authentication"),
		invalid(bad != "", "-hosts: %s", bad),
		invalid(keyspace == "", "no keyspace: give -keyspace (an existing keyspace; the tables are created in it)"),
		invalid(format != "table" && format != "json", "-o must be table or json, not %q", format),
		invalid(cfg.workers < 1 || cfg.workers > 1<<14, "-workers must be in [1, 16384], not %d", cfg.workers),
		invalid(cfg.duration <= 0 || cfg.duration > 4*time.Minute, "-duration must be in (0, 4m], not %s", cfg.duration),
		invalid(cfg.count < 0, "-count must not be negative"),
		invalid(cfg.timeout <= 0 || cfg.readTimeout <= 0, "-timeout and -read-timeout must be positive"),
		invalid(cfg.resendMin < 0 || cfg.resendMax < cfg.resendMin || cfg.resendMax > 24*time.Hour, "want 0 <= -resend-min <= -resend-max <= 24h, not %s and %s", cfg.resendMin, cfg.resendMax),
		invalid(cfg.resolveFor <= 0, "-resolve-for must be positive"),
		invalid(cfg.shards < 1, "-shards must be at least 1"),
		invalid(cfg.flushEvery < 1, "-flush-every must be at least 1"),
		invalid(cfg.mergeEvery <= 0, "-merge-every must be positive"),
		invalid(cfg.actors < 0 || cfg.actors > cfg.workers, "-actors must be in [0, -workers], not %d", cfg.actors),
		invalid(cfg.history < 0 || cfg.history > tpncounter.MaxHistoryLength, "-history must be in [0, %d], not %d", tpncounter.MaxHistoryLength, cfg.history)); err != nil {
		return nil, err
	}
	names := cli.SplitList(types)
	if len(names) == 0 {
		return nil, cli.Usagef("%w: -types names no type", crdt.ErrInvalidConfig)
	}
	for i, n := range names {
		if !slices.Contains(compareTypes, n) {
			return nil, cli.Usagef("%w: -types: unknown type %q (want %s)", crdt.ErrInvalidConfig, n, strings.Join(compareTypes, ", "))
		}
		if slices.Contains(names[:i], n) { // a second run would write the first's keys
			return nil, cli.Usagef("%w: -types names %q twice", crdt.ErrInvalidConfig, n)
		}
		// A first resend must reach the store inside the type's write
		// window, or it is refused and the transaction given up.
		if w, ok := writeWindows[n]; ok && cfg.resendMax+cfg.timeout >= w {
			return nil, cli.Usagef("%w: -resend-max %s plus -timeout %s reaches %s's write window (%s): its resends would be refused", crdt.ErrInvalidConfig, cfg.resendMax, cfg.timeout, n, w)
		}
	}
	return names, nil
}

// writeWindows are the write windows (Options.Window, by default) of the
// types whose updates are dated: an update older is refused.
var writeWindows = map[string]time.Duration{"deltalog": 10 * time.Minute, "balance": 5 * time.Minute}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) | 1
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func compareReportFor(cfg compareConfig, store string) compareReport {
	return compareReport{
		Store: store, Workers: cfg.workers, Duration: cfg.duration.String(), Count: cfg.count,
		Timeout: cfg.timeout.String(), ResendMin: cfg.resendMin.String(), ResendMax: cfg.resendMax.String(),
		ResolveFor: cfg.resolveFor.String(), Shards: cfg.shards,
		FlushEvery: cfg.flushEvery, MergeEvery: cfg.mergeEvery.String(), Actors: cfg.actors, History: cfg.history, Run: cfg.runID, Seed: cfg.seed,
	}
}

// runComparison runs the workload on every target in turn and reads each
// back. done, if not nil, is called after each row.
func runComparison(ctx context.Context, cfg compareConfig, targets []compareTarget, done func(compareRow)) []compareRow {
	rows := make([]compareRow, 0, len(targets))
	for _, t := range targets {
		r := runTarget(ctx, cfg, t)
		if done != nil {
			done(r)
		}
		rows = append(rows, r)
	}
	againstNative(rows)
	return rows
}

// resendQueue holds the transactions waiting to be resent, shared by a
// target's workers.
type resendQueue struct {
	cfg     compareConfig
	mu      sync.Mutex
	rng     *rand.Rand
	waiting []*txn
	taken   int // transactions taken and being resent
	making  int // workers still making new transactions
	// acked counts acknowledged transactions; ran is when the last worker
	// stopped making new ones (the run's end, resends aside), and ranAcked
	// acked then.
	acked    atomic.Int64
	ran      time.Time
	ranAcked int64
}

// locked runs f (which updates q) under q's lock.
func (q *resendQueue) locked(f func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f()
}

// put queues t to be resent after a delay drawn in [resendMin, resendMax];
// it is no longer taken.
func (q *resendQueue) put(t *txn, taken bool) {
	q.locked(func() {
		t.due = q.cfg.now().Add(q.cfg.resendMin + time.Duration(q.rng.Int64N(int64(q.cfg.resendMax-q.cfg.resendMin)+1)))
		q.waiting = append(q.waiting, t)
		q.taken -= cli.Either(taken, 1, 0)
	})
}

// take returns the transaction due first that worker w may resend (one
// another worker sent last, unless there is one worker), or nil; wait is
// how long until one is due (0: none waiting), and busy whether a
// transaction may still come to the queue (one is being resent, or a
// worker is still making new ones).
func (q *resendQueue) take(w int) (t *txn, wait time.Duration, busy bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.cfg.now()
	best := -1
	for i, c := range q.waiting {
		if c.last == w && q.cfg.workers > 1 {
			continue
		}
		if best < 0 || c.due.Before(q.waiting[best].due) {
			best = i
		}
	}
	if best >= 0 && !q.waiting[best].due.After(now) {
		t = q.waiting[best]
		q.waiting = slices.Delete(q.waiting, best, best+1)
		q.taken++
		return t, 0, true
	}
	if best >= 0 {
		wait = q.waiting[best].due.Sub(now)
	} else if len(q.waiting) > 0 {
		wait = time.Millisecond // only w's own sends wait: another worker takes them
	}
	return nil, wait, q.taken > 0 || q.making > 0
}

type workerStats struct {
	distinct, acked, resent, elsewhere, failed int64
	latencies                                  []time.Duration
	err                                        error
}

func runTarget(ctx context.Context, cfg compareConfig, t compareTarget) compareRow {
	row := compareRow{Type: t.name, counterkit: t.counterkit}
	ws := make([]compareWriter, cfg.workers)
	for i := range ws {
		w, err := t.newWriter(i)
		if err != nil {
			row.Error = err.Error()
			return row
		}
		ws[i] = w
	}
	q := &resendQueue{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.seed, 1)), making: cfg.workers}
	cpu := startCPU(cfg.cpu)
	start := cfg.now()
	deadline := start.Add(cfg.duration)
	stats := make([]workerStats, cfg.workers)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() {
			stats[i] = runWorker(ctx, cfg, q, i, w, deadline)
		})
	}
	wg.Wait()
	cpu.stop()
	var lat []time.Duration
	for _, s := range stats {
		row.Distinct += s.distinct
		row.Acknowledged += s.acked
		row.Resent += s.resent
		row.ResentElsewhere += s.elsewhere
		row.Unresolved += s.failed
		row.GaveUp += s.failed
		lat = append(lat, s.latencies...)
		if s.err != nil && row.FirstFailure == "" {
			row.FirstFailure = s.err.Error()
		}
	}
	for _, left := range q.waiting {
		row.Unresolved += left.amount
	}
	if t.writes != nil {
		row.Writes = t.writes.Load()
	}
	for _, w := range ws {
		if w.merges != nil {
			m := w.merges()
			row.Merges += m.runs
			row.MergesFailed += m.failed
			if m.first != nil && row.FirstMergeFailure == "" {
				row.FirstMergeFailure = m.first.Error()
			}
		}
	}
	cpu.set(&row)
	rctx, cancel := context.WithTimeout(ctx, cfg.readTimeout)
	defer cancel()
	// The final read is retried, within -read-timeout, while the store
	// refuses it.
	final, err := t.value(rctx)
	for err != nil && rctx.Err() == nil && counterkitRetryable(err) {
		cfg.sleep(rctx, 10*time.Millisecond)
		final, err = t.value(rctx)
	}
	if err != nil {
		row.Error = err.Error()
		return row
	}
	row.Final = final
	row.Drift = final - row.Distinct
	if ran := q.ran.Sub(start); ran > 0 {
		row.PerSecond = float64(q.ranAcked) / ran.Seconds()
	}
	slices.Sort(lat)
	row.P50ms, row.P99ms = percentileMS(lat, 50), percentileMS(lat, 99)
	return row
}

// cpuSpan is the CPU a run used, from startCPU to stop.
type cpuSpan struct {
	meter cpuMeter
	start cpuTimes
	used  cpuTimes
	err   error
}

func startCPU(m cpuMeter) *cpuSpan {
	c := &cpuSpan{meter: m}
	if m != nil {
		c.start, c.err = m()
	}
	return c
}

func (c *cpuSpan) stop() {
	if c.meter == nil || c.err != nil {
		return
	}
	end, err := c.meter()
	c.used = cpuTimes{client: end.client - c.start.client, server: end.server - c.start.server, hasServer: end.hasServer}
	c.err = err
}

// set sets row's CPU per acknowledged transaction, or row.CPUError.
func (c *cpuSpan) set(row *compareRow) {
	switch {
	case c.meter == nil:
		return
	case c.err != nil:
		row.CPUError = c.err.Error()
		return
	}
	per := func(d time.Duration) *float64 {
		v := float64(d) / float64(time.Microsecond) / float64(max(row.Acknowledged, 1))
		return &v
	}
	row.ClientCPUus = per(c.used.client)
	if c.used.hasServer {
		row.ServerCPUus = per(c.used.server)
	}
}

// percentileMS returns the p-th percentile (nearest rank) of sorted, in
// milliseconds; 0 for none.
func percentileMS(sorted []time.Duration, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := max((len(sorted)*p+99)/100, 1)
	return float64(sorted[i-1]) / float64(time.Millisecond)
}

// runWorker makes transactions until the deadline (or cfg.count), sends
// each once, and resends the transactions other workers failed to get
// acknowledged, first those due; after its last new transaction it goes
// on resending for cfg.resolveFor, until nothing is left to resend.
func runWorker(ctx context.Context, cfg compareConfig, q *resendQueue, id int, w compareWriter, deadline time.Time) workerStats {
	var s workerStats
	send := func(t *txn) {
		resend := t.sends > 0
		if resend {
			s.resent++
			if t.last != id {
				s.elsewhere++
			}
		} else {
			s.distinct += t.amount
		}
		t.sends++
		t.last = id
		begin := cfg.now()
		sctx, cancel := context.WithTimeout(ctx, cfg.timeout)
		err := w.send(sctx, t)
		cancel()
		if w.maintain != nil {
			defer w.maintain(ctx)
		}
		switch {
		case err != nil && w.retryable(err):
			q.put(t, resend)
			return
		case err == nil:
			s.acked += t.amount
			q.acked.Add(t.amount)
			s.latencies = append(s.latencies, cfg.now().Sub(begin))
		default:
			// A definite failure: given up, unresolved (it may have
			// landed in an earlier attempt).
			s.failed += t.amount
			if s.err == nil {
				s.err = fmt.Errorf("transaction %d of worker %d: %w", t.seq, t.origin, err)
			}
		}
		if resend { // the taken transaction is settled
			q.locked(func() { q.taken-- })
		}
	}
	seq := 0
	making := true
	var resolveBy time.Time
	made := func() bool { // the worker's share of new transactions is made
		return cfg.count > 0 && seq >= cfg.count || cfg.count == 0 && !cfg.now().Before(deadline)
	}
	for ctx.Err() == nil {
		if making && made() {
			making = false
			resolveBy = cfg.now().Add(cfg.resolveFor)
			if t := w.finish(); t != nil {
				t.seq, t.origin = seq, id
				send(t)
			}
			q.locked(func() {
				if q.making--; q.making == 0 {
					q.ran, q.ranAcked = cfg.now(), q.acked.Load()
				}
			})
		}
		if !making && !cfg.now().Before(resolveBy) {
			break // -resolve-for is over, even while resends keep failing
		}
		// While making, a worker sends a new transaction after each resend,
		// so that resends that keep failing do not hold the run up.
		t, wait, busy := q.take(id)
		if t != nil {
			send(t)
		}
		if making {
			if t == nil || !made() {
				if t := w.next(seq); t != nil {
					t.seq, t.origin = seq, id
					send(t)
				}
				seq++
			}
			continue
		}
		if t != nil {
			continue
		}
		if wait == 0 && !busy {
			break // nothing waits and nothing can come
		}
		if wait <= 0 || wait > 10*time.Millisecond {
			wait = 10 * time.Millisecond // a resend in flight may fail and come back
		}
		cfg.sleep(ctx, wait)
	}
	return s
}

func writeCompareReport(w io.Writer, format string, rep compareReport) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "store %s, run %s, seed %d\n", rep.Store, rep.Run, rep.Seed)
	fmt.Fprintf(w, "workers %d, %s, client timeout %s, resends after %s to %s for up to %s, shards %d, tally flush every %d, merges every %s%s%s\n\n",
		rep.Workers, cli.Either(rep.Count > 0, fmt.Sprintf("%d transactions per worker", rep.Count), rep.Duration+" per type"),
		rep.Timeout, rep.ResendMin, rep.ResendMax, rep.ResolveFor, rep.Shards, rep.FlushEvery, rep.MergeEvery,
		cli.Either(rep.Actors > 0, fmt.Sprintf(", ledger actors %d", rep.Actors), ""), cli.Either(rep.History > 0, fmt.Sprintf(", ledger history %d", rep.History), ""))
	// Numbers align right; the type names, padded to one width, left.
	width := len("type")
	for _, r := range rep.Rows {
		width = max(width, len(r.Type))
	}
	name := func(s string) string { return fmt.Sprintf("%-*s", width, s) }
	// The CPU columns are shown when a row measured them.
	client := slices.ContainsFunc(rep.Rows, func(r compareRow) bool { return r.ClientCPUus != nil })
	server := slices.ContainsFunc(rep.Rows, func(r compareRow) bool { return r.ServerCPUus != nil })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, name("type")+"\tdistinct\tacked\tresent\tunresolved\twrites\tfinal\tdrift\tdrift %\tper_s\tp50 ms\tp99 ms\t"+
		cli.Either(client, "client µs\t", "")+cli.Either(server, "server µs\t", ""))
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\t\t\t\t%s%s\n", name(r.Type), cli.Either(client, "\t", ""), cli.Either(server, "\t", ""))
			continue
		}
		pct := "-"
		if r.Distinct > 0 {
			pct = fmt.Sprintf("%+.2f", 100*float64(r.Drift)/float64(r.Distinct))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%+d\t%s\t%.0f\t%.2f\t%.2f\t%s%s\n",
			name(r.Type), r.Distinct, r.Acknowledged, r.Resent, r.Unresolved, r.Writes, r.Final, r.Drift, pct, r.PerSecond, r.P50ms, r.P99ms,
			cli.Either(client, optional(r.ClientCPUus, "%.1f")+"\t", ""), cli.Either(server, optional(r.ServerCPUus, "%.1f")+"\t", ""))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Type, r.Error)
		}
		if r.GaveUp > 0 {
			fmt.Fprintf(w, "%s: gave up %d transactions after a definite failure, first: %s\n", r.Type, r.GaveUp, r.FirstFailure)
		}
		if r.CPUError != "" {
			fmt.Fprintf(w, "%s: CPU not measured: %s\n", r.Type, r.CPUError)
		}
		if r.Merges > 0 {
			fmt.Fprintf(w, "%s: %d merges, %d failed", r.Type, r.Merges, r.MergesFailed)
			if r.FirstMergeFailure != "" {
				fmt.Fprintf(w, ", first: %s", r.FirstMergeFailure)
			}
			fmt.Fprintln(w)
		}
	}
	if slices.ContainsFunc(rep.Rows, func(r compareRow) bool { return r.VsNative != nil }) {
		fmt.Fprintln(w, "\nagainst native, per acknowledged transaction:")
		for _, r := range rep.Rows {
			if v := r.VsNative; v != nil {
				fmt.Fprintf(w, "%s: per_s %.2f×", r.Type, v.PerSecond)
				if v.CPU != nil {
					fmt.Fprintf(w, ", CPU %.2f×", *v.CPU)
				}
				if v.ServerCPU != nil {
					fmt.Fprintf(w, " (client %s, server %.2f×)", optional(v.ClientCPU, "%.2f×"), *v.ServerCPU)
				} else if v.ClientCPU != nil {
					fmt.Fprint(w, " (client only)")
				}
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "%s: %s\n", r.Type, driftVerdict(r))
	}
	return nil
}

// optional formats *v, or "-" when v is nil.
func optional(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

func driftVerdict(r compareRow) string {
	switch {
	case r.Error != "":
		return "failed"
	case r.Drift > 0:
		return fmt.Sprintf("over-counted by %d (final %d > %d distinct transactions)", r.Drift, r.Final, r.Distinct)
	case r.Drift < -r.Unresolved:
		return fmt.Sprintf("under-counted: lost %d acknowledged transactions", -r.Drift-r.Unresolved)
	case r.Unresolved > 0:
		// A transaction counted twice and one unresolved that did not
		// land cancel out: the value alone cannot tell them apart.
		return fmt.Sprintf("within the unresolved: final %d is exact if %d of the %d unresolved transactions landed, but a transaction counted twice would hide behind one that did not (a run with none unresolved tells; raise -resolve-for)", r.Final, r.Unresolved+r.Drift, r.Unresolved)
	default:
		return "exact"
	}
}

// compareStatus is the exit status: 1 when a counterkit type drifted or
// any type failed.
func compareStatus(stderr io.Writer, rep compareReport) int {
	code := 0
	for _, r := range rep.Rows {
		if r.counterkit && !r.exact() {
			fmt.Fprintf(stderr, "counterkit-compare: %s: %s\n", r.Type, driftVerdict(r))
			code = 1
		}
		if !r.counterkit && r.Error != "" {
			code = 1
		}
	}
	return code
}
