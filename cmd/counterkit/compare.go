package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

const compareUsage = `usage: counterkit compare -hosts HOST[,HOST] -keyspace KEYSPACE [flags]

compare runs one increment workload, each type in turn for -duration with
-workers goroutines, on a Cassandra keyspace:

  native          Cassandra's native counter: UPDATE t SET c = c + 1 WHERE k = ?
                  (table counterkit_compare_native, created in the keyspace)
  ledger          ledger.Ledger credits on one account, one ledger per worker
                  (or per actor with -actors)
  ledger-sharded  ledger.Sharded credits on one account of -shards sub-keys
  tally           tally mutator updates, one mutator per worker, one flush
                  every -flush-every updates
  deltalog        deltalog.Counters adds on one counter
  balance         balance.Accounts adds on one account

Every write is sent with the client timeout -timeout; a small one makes
writes time out while they still land. Like a real caller, a worker resends
an increment after a timeout, up to -retries times: the native counter
resends the same c = c + 1 (which counts again if the first one landed);
the counterkit types resend the same transaction or update id (ledger,
deltalog, balance) or the same shard state (tally: Mutator.Retry). After the
run, a counterkit increment that never got an acknowledgement is resent
with -read-timeout (up to -retries + 1 times; a tally write still unknown
then is abandoned and its updates applied again); a native increment that
timed out every time cannot be resolved and is reported as unresolved.
Every statement runs at QUORUM, the adapter's default.

Then every counter is read back with -read-timeout and compared:
  acked       distinct increments acknowledged (after retries and resolution)
  unresolved  increments whose outcome stayed unknown (each may have landed)
  sent        writes sent, retries included (tally: flushes and retries)
  final       the value read back
  drift       final - acked: 0 is exact; above 0 counts increments twice
              (or unresolved ones that landed, at most unresolved); below 0
              lost acknowledged increments
  per_s       acknowledged increments per second of the run
  p50, p99    latency of one acknowledged write, retries included (tally:
              one flush)
The tables are created if missing (cassandra.CreateSchema for the counterkit
types); every run writes fresh keys named compare-RUN-TYPE.

Exit status: 0 when every counterkit type ended with final - acked in
[0, unresolved] (the native counter may drift either way: that is what is
measured), 1 when one did not or the store failed, 2 for a usage error
(no hosts, no keyspace).

Flags of compare:
`

// compareConfig is one comparison run.
type compareConfig struct {
	workers     int
	duration    time.Duration
	count       int // increments per worker; 0: until duration
	retries     int
	timeout     time.Duration
	readTimeout time.Duration
	shards      int
	flushEvery  int
	actors      int // ledger types: actors the workers share; 0: one per worker
	history     int // ledger types: tpncounter HistoryLength; 0: the default
	runID       string
	// now is the clock every latency, rate and id time is taken from.
	now func() time.Time
}

// compareTarget is one counter type under comparison: it gives each worker
// its own writer and reads the counter back.
type compareTarget interface {
	name() string
	// counterkit reports whether the type is one of the library's (which
	// must not drift) rather than the native counter.
	counterkit() bool
	newWorker(w int) (compareWorker, error)
	value(ctx context.Context) (int64, error)
}

// compareWorker is one worker's writer for a target. It is used by one
// goroutine.
type compareWorker interface {
	// send sends increment seq of this worker: its first write, or with
	// resend the caller's resend of the same increment after an error.
	// sent reports whether a write went out (a tally update only stages
	// until its flush); acked is the number of increments the write's
	// acknowledgement covers.
	send(ctx context.Context, seq int, resend bool) (sent, acked int, err error)
	// retryable reports whether a caller resends after err.
	retryable(err error) bool
	// giveUp is told that increment seq still failed with err after the
	// last resend.
	giveUp(seq int, err error)
	// resolve settles what the worker left unknown, with a generous ctx:
	// acked increments are now acknowledged, unresolved still unknown,
	// sent the writes it took.
	resolve(ctx context.Context) (sent, acked, unresolved int)
}

// compareRow is one type's line of the report.
type compareRow struct {
	Type         string  `json:"type"`
	Acknowledged int64   `json:"acknowledged"`
	Unresolved   int64   `json:"unresolved"`
	Sent         int64   `json:"sent"`
	Final        int64   `json:"final"`
	Drift        int64   `json:"drift"`
	PerSecond    float64 `json:"per_second"`
	P50ms        float64 `json:"p50_ms"`
	P99ms        float64 `json:"p99_ms"`
	Error        string  `json:"error,omitempty"`
	counterkit   bool
}

// exact reports whether a counterkit row stayed within what its
// acknowledgements allow: final - acked in [0, unresolved].
func (r compareRow) exact() bool {
	return r.Error == "" && r.Drift >= 0 && r.Drift <= r.Unresolved
}

// compareReport is the whole output.
type compareReport struct {
	Store      string       `json:"store"`
	Workers    int          `json:"workers"`
	Duration   string       `json:"duration"`
	Count      int          `json:"count_per_worker,omitempty"`
	Timeout    string       `json:"timeout"`
	Retries    int          `json:"retries"`
	Shards     int          `json:"shards"`
	FlushEvery int          `json:"flush_every"`
	Actors     int          `json:"ledger_actors,omitempty"`
	History    int          `json:"ledger_history,omitempty"`
	Run        string       `json:"run"`
	Rows       []compareRow `json:"types"`
}

// compareTypes are the types compare runs, in order.
var compareTypes = []string{"native", "ledger", "ledger-sharded", "tally", "deltalog", "balance"}

func runCompare(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hosts := fs.String("hosts", "", "Cassandra contact points, comma-separated (default: $CASSANDRA_HOSTS)")
	keyspace := fs.String("keyspace", "", "an existing keyspace to create the tables in and write to")
	duration := fs.Duration("duration", 10*time.Second, "how long each type runs (at most 4m, inside the logs' write windows)")
	count := fs.Int("count", 0, "increments per worker and type (0: as many as -duration allows)")
	workers := fs.Int("workers", 32, "concurrent writers per type")
	timeout := fs.Duration("timeout", 200*time.Millisecond, "client timeout of every write: small values make writes time out while still landing")
	readTimeout := fs.Duration("read-timeout", 30*time.Second, "timeout of the final reads, of resolving unknown outcomes, and of connecting")
	retries := fs.Int("retries", 3, "how many times a worker resends an increment after a timeout")
	shards := fs.Int("shards", 8, "ledger-sharded: the number of sub-keys of the account")
	flushEvery := fs.Int("flush-every", 1, "tally: updates staged per flush")
	actors := fs.Int("actors", 0, "ledger types: distinct ledger actors, shared round robin by the workers (0: one per worker)")
	history := fs.Int("history", 0, "ledger types: transactions each actor's entry remembers (tpncounter HistoryLength; 0: its default)")
	types := fs.String("types", strings.Join(compareTypes, ","), "the types to run, comma-separated")
	format := fs.String("format", "table", "output format: table or json")
	prefix := fs.String("prefix", "", "the counterkit tables' prefix (empty: the adapter's default, counterkit_)")
	fs.Usage = func() { fmt.Fprint(stderr, compareUsage); fs.PrintDefaults() }
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if *hosts == "" {
		*hosts = os.Getenv("CASSANDRA_HOSTS")
	}
	cfg := compareConfig{
		workers: *workers, duration: *duration, count: *count, retries: *retries,
		timeout: *timeout, readTimeout: *readTimeout, shards: *shards, flushEvery: *flushEvery,
		actors: *actors, history: *history, runID: newRunID(), now: time.Now,
	}
	names, err := checkCompareFlags(cfg, splitList(*hosts), *keyspace, *types, *format)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.readTimeout)
	cs, err := openCompareCassandra(ctx, splitList(*hosts), *keyspace, *prefix, cfg.readTimeout)
	cancel()
	if err != nil {
		return fail(stderr, "compare", err)
	}
	defer cs.close()
	targets, err := compareTargets(names, cfg, cs.native, cs.siblings, cs.partitions)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	rep := compareReportFor(cfg, "cassandra:"+strings.Join(splitList(*hosts), ",")+"/"+*keyspace)
	fmt.Fprintf(stderr, "counterkit compare: run %s, %d workers, %s per type\n", cfg.runID, cfg.workers, cfg.duration)
	rep.Rows = runComparison(context.Background(), cfg, targets, func(r compareRow) {
		fmt.Fprintf(stderr, "counterkit compare: %s: %d acked, final %d, drift %+d\n", r.Type, r.Acknowledged, r.Final, r.Drift)
	})
	if err := writeCompareReport(stdout, *format, rep); err != nil {
		return fail(stderr, "compare", err)
	}
	return compareStatus(stderr, rep)
}

// checkCompareFlags validates the flags and returns the types to run.
// Errors are usage errors wrapping crdt.ErrInvalidConfig.
func checkCompareFlags(cfg compareConfig, hosts []string, keyspace, types, format string) ([]string, error) {
	switch {
	case len(hosts) == 0:
		return nil, usagef("%w: no Cassandra hosts: give -hosts HOST[,HOST] or set CASSANDRA_HOSTS (the comparison runs against a real Cassandra)", crdt.ErrInvalidConfig)
	case keyspace == "":
		return nil, usagef("%w: no keyspace: give -keyspace (an existing keyspace; the tables are created in it)", crdt.ErrInvalidConfig)
	case format != "table" && format != "json":
		return nil, usagef("%w: -format must be table or json, not %q", crdt.ErrInvalidConfig, format)
	case cfg.workers < 1:
		return nil, usagef("%w: -workers must be at least 1", crdt.ErrInvalidConfig)
	case cfg.duration <= 0 || cfg.duration > 4*time.Minute:
		return nil, usagef("%w: -duration must be in (0, 4m], not %s", crdt.ErrInvalidConfig, cfg.duration)
	case cfg.count < 0:
		return nil, usagef("%w: -count must not be negative", crdt.ErrInvalidConfig)
	case cfg.retries < 0:
		return nil, usagef("%w: -retries must not be negative", crdt.ErrInvalidConfig)
	case cfg.timeout <= 0 || cfg.readTimeout <= 0:
		return nil, usagef("%w: -timeout and -read-timeout must be positive", crdt.ErrInvalidConfig)
	case cfg.shards < 1:
		return nil, usagef("%w: -shards must be at least 1", crdt.ErrInvalidConfig)
	case cfg.flushEvery < 1:
		return nil, usagef("%w: -flush-every must be at least 1", crdt.ErrInvalidConfig)
	case cfg.actors < 0 || cfg.actors > cfg.workers:
		return nil, usagef("%w: -actors must be in [0, -workers], not %d", crdt.ErrInvalidConfig, cfg.actors)
	case cfg.history < 0 || cfg.history > tpncounter.MaxHistoryLength:
		return nil, usagef("%w: -history must be in [0, %d], not %d", crdt.ErrInvalidConfig, tpncounter.MaxHistoryLength, cfg.history)
	}
	names := splitList(types)
	if len(names) == 0 {
		return nil, usagef("%w: -types names no type", crdt.ErrInvalidConfig)
	}
	for _, n := range names {
		if !slices.Contains(compareTypes, n) {
			return nil, usagef("%w: -types: unknown type %q (want %s)", crdt.ErrInvalidConfig, n, strings.Join(compareTypes, ", "))
		}
	}
	return names, nil
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func compareReportFor(cfg compareConfig, store string) compareReport {
	return compareReport{
		Store: store, Workers: cfg.workers, Duration: cfg.duration.String(), Count: cfg.count,
		Timeout: cfg.timeout.String(), Retries: cfg.retries, Shards: cfg.shards,
		FlushEvery: cfg.flushEvery, Actors: cfg.actors, History: cfg.history, Run: cfg.runID,
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
	return rows
}

// workerStats is what one worker measured.
type workerStats struct {
	sent, acked, unresolved int64
	latencies               []time.Duration
}

func runTarget(ctx context.Context, cfg compareConfig, t compareTarget) compareRow {
	row := compareRow{Type: t.name(), counterkit: t.counterkit()}
	ws := make([]compareWorker, cfg.workers)
	for i := range ws {
		w, err := t.newWorker(i)
		if err != nil {
			row.Error = err.Error()
			return row
		}
		ws[i] = w
	}
	start := cfg.now()
	deadline := start.Add(cfg.duration)
	stats := make([]workerStats, cfg.workers)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i] = runWorker(ctx, cfg, w, deadline)
		}()
	}
	wg.Wait()
	elapsed := cfg.now().Sub(start)
	// Resolve what stayed unknown, with the generous timeout, worker by
	// worker (after the run, so it does not count in the rate).
	for i, w := range ws {
		rctx, cancel := context.WithTimeout(ctx, cfg.readTimeout)
		sent, acked, unresolved := w.resolve(rctx)
		cancel()
		stats[i].sent += int64(sent)
		stats[i].acked += int64(acked)
		stats[i].unresolved = int64(unresolved)
	}
	var lat []time.Duration
	for _, s := range stats {
		row.Sent += s.sent
		row.Acknowledged += s.acked
		row.Unresolved += s.unresolved
		lat = append(lat, s.latencies...)
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.readTimeout)
	defer cancel()
	final, err := t.value(rctx)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	row.Final = final
	row.Drift = final - row.Acknowledged
	if elapsed > 0 {
		row.PerSecond = float64(row.Acknowledged) / elapsed.Seconds()
	}
	slices.Sort(lat)
	row.P50ms, row.P99ms = percentileMS(lat, 50), percentileMS(lat, 99)
	return row
}

// percentileMS returns the p-th percentile (nearest rank) of sorted, in
// milliseconds; 0 for none.
func percentileMS(sorted []time.Duration, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return float64(sorted[i-1]) / float64(time.Millisecond)
}

// runWorker sends increments until the deadline (or cfg.count), resending
// each after a retryable error up to cfg.retries times.
func runWorker(ctx context.Context, cfg compareConfig, w compareWorker, deadline time.Time) workerStats {
	var s workerStats
	// A tally update staged before its flush has no write of its own; its
	// latency is counted from the first staged update to the flush's
	// acknowledgement.
	var staged time.Time
	for seq := 0; ; seq++ {
		if cfg.count > 0 && seq >= cfg.count {
			break
		}
		if cfg.count == 0 && !cfg.now().Before(deadline) {
			break
		}
		if ctx.Err() != nil {
			break
		}
		begin := cfg.now()
		if staged.IsZero() {
			staged = begin
		}
		sent, acked, err := sendOnce(ctx, cfg, w, seq, false)
		s.sent += int64(sent)
		for try := 0; err != nil && try < cfg.retries && w.retryable(err); try++ {
			sent, acked, err = sendOnce(ctx, cfg, w, seq, true)
			s.sent += int64(sent)
		}
		switch {
		case err != nil:
			w.giveUp(seq, err)
			staged = time.Time{}
		case acked > 0:
			s.acked += int64(acked)
			s.latencies = append(s.latencies, cfg.now().Sub(staged))
			staged = time.Time{}
		case sent > 0:
			staged = time.Time{}
		}
	}
	return s
}

// sendOnce sends with the client timeout.
func sendOnce(ctx context.Context, cfg compareConfig, w compareWorker, seq int, resend bool) (int, int, error) {
	sctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	return w.send(sctx, seq, resend)
}

func writeCompareReport(w io.Writer, format string, rep compareReport) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "store %s, run %s\n", rep.Store, rep.Run)
	per := fmt.Sprintf("%s per type", rep.Duration)
	if rep.Count > 0 {
		per = fmt.Sprintf("%d increments per worker", rep.Count)
	}
	ledgerOpts := ""
	if rep.Actors > 0 {
		ledgerOpts += fmt.Sprintf(", ledger actors %d", rep.Actors)
	}
	if rep.History > 0 {
		ledgerOpts += fmt.Sprintf(", ledger history %d", rep.History)
	}
	fmt.Fprintf(w, "workers %d, %s, client timeout %s, retries %d, shards %d, tally flush every %d%s\n\n",
		rep.Workers, per, rep.Timeout, rep.Retries, rep.Shards, rep.FlushEvery, ledgerOpts)
	// Numbers align right; the type names, padded to one width, left.
	width := len("type")
	for _, r := range rep.Rows {
		width = max(width, len(r.Type))
	}
	name := func(s string) string { return fmt.Sprintf("%-*s", width, s) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, name("type")+"\tacked\tunresolved\tsent\tfinal\tdrift\tdrift %\tper_s\tp50 ms\tp99 ms\t")
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\t\t\n", name(r.Type))
			continue
		}
		pct := "-"
		if r.Acknowledged > 0 {
			pct = fmt.Sprintf("%+.2f", 100*float64(r.Drift)/float64(r.Acknowledged))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%+d\t%s\t%.0f\t%.2f\t%.2f\t\n",
			name(r.Type), r.Acknowledged, r.Unresolved, r.Sent, r.Final, r.Drift, pct, r.PerSecond, r.P50ms, r.P99ms)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Type, r.Error)
		}
	}
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "%s: %s\n", r.Type, driftVerdict(r))
	}
	return nil
}

// driftVerdict says in words what a row's drift means.
func driftVerdict(r compareRow) string {
	switch {
	case r.Error != "":
		return "failed"
	case r.Drift > r.Unresolved:
		return fmt.Sprintf("over-counted by at least %d (final %d > acked %d + unresolved %d)", r.Drift-r.Unresolved, r.Final, r.Acknowledged, r.Unresolved)
	case r.Drift < 0:
		return fmt.Sprintf("under-counted: lost %d acknowledged increments", -r.Drift)
	case r.Unresolved > 0:
		return fmt.Sprintf("exact within the unresolved: %d of %d unresolved increments landed", r.Drift, r.Unresolved)
	default:
		return "exact"
	}
}

// compareStatus is the exit status: 1 when a counterkit type drifted or
// failed.
func compareStatus(stderr io.Writer, rep compareReport) int {
	code := 0
	for _, r := range rep.Rows {
		if r.counterkit && !r.exact() {
			fmt.Fprintf(stderr, "counterkit compare: %s: %s\n", r.Type, driftVerdict(r))
			code = 1
		}
		if !r.counterkit && r.Error != "" {
			code = 1
		}
	}
	return code
}
