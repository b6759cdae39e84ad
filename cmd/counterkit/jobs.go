package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/tpncounter"
)

const jobsUsage = `usage: counterkit gc tally           -store STORE [flags] [KEY...]
       counterkit compact deltalog   -store STORE [flags] [KEY...]
       counterkit merge balance      -store STORE [flags] [KEY...]
       counterkit merge transactions -store STORE [flags] [ACCOUNT...]
       counterkit find ledger        -store STORE [flags] [KEY...]

Maintenance jobs. Each runs the counter's own driver on every key given as
an argument, or, with no KEY, on each line of standard input (blank lines
skipped), prints one line per key done on standard output and one per key
failed, with its error and sentinel, on standard error (-o json: every key
in one document on standard output), and reports progress on standard error
every -progress and a summary at the end.

gc tally         tally's Counter.GC: folds every shard expired for longer
                 than -grace into the tally, in one idempotent batch. It
                 reads completely (Cassandra: ALL). The aggregate kind is
                 read from the stored rows unless -kind names it.
compact deltalog deltalog's Counters.Merge, then Counters.Compact: writes a
                 merge cell for the cells older than the write window and
                 the safety margin, and deletes the cells covered by a merge
                 cell older than -compact-grace.
merge balance    balance's Accounts.Merge: tombstones and a sum row for the
                 rows outside the write window, settles older sum rows and
                 collects invalid rows. It refuses a partition holding
                 rows of balance.Transactions (crdt.ErrTypeMismatch).
merge transactions
                 balance's Transactions.Merge: merges each of the account's
                 row partitions (-partitions) as merge balance does, first
                 recording the transactions it sums, so that a retry is
                 answered Duplicate; the account's first merge in a retry
                 window deletes its expired records. The line sums the
                 partitions' reports.
find ledger      ledger's Ledger.Find: merges every sibling of the key and
                 writes the result back, collapsing them (any store, Riak
                 included). A sibling that is not a well-formed state
                 (crdt.ErrCorruptEncoding) stops it; with -drop-corrupt
                 such siblings are reported (size, SHA-256, error) and
                 left out of the merge, whose write replaces them: what
                 they held is lost, so back the store up first. It drops
                 nothing a newer release wrote (crdt.ErrUnsupportedVersion)
                 or another type's encoding (crdt.ErrTypeMismatch).

The window and grace flags, and merge transactions' -retry-window,
-deadline, -partitions and -record-shards, must be the ones the counters'
writers use: a shorter write window than the writers' lets a merge run
before every write has landed, and a retry window other than the writers'
records transactions where their retries do not look. Zero means the
package's default.

-dry-run reads each key, runs the same driver on an in-memory copy of what it
read (for gc tally, PlanGC), prints what the job would write, and writes
nothing. For merge transactions the copy is of each partition the merge
reads (the account's row partitions), taken as it first reads it; its
record writes and deletes go to the copy without reading the records
stored, and the line adds the rows and partitions it would write and
delete, records included (a delete-range counts the rows of the copy it
removes). A key with nothing stored (for merge transactions, no row in any
row partition) is an error (crdt.ErrNotFound). The exit status is 1 when
any key failed; every failure names its sentinel.

` + storeSpecHelp

// jobRunner runs a job on one key and returns its line of output.
type jobRunner func(ctx context.Context, key string) (string, error)

// jobDef is one maintenance job: its flags, and how to run it on an open
// store.
type jobDef struct {
	noun string // the command's second word, after the verb
	// partitions: the job works on partition keys (not on Riak).
	partitions bool
	// flags registers the job's own flags and returns the function that
	// makes its runner once the store is open; check validates the flags
	// before the store is opened.
	flags func(fs *pflag.FlagSet, dry *bool) (check func() error, mk func(b *backend) jobRunner)
}

// jobs are the maintenance jobs by verb, one per noun.
var jobs = map[string][]jobDef{
	"gc":      {{noun: "tally", partitions: true, flags: gcTallyFlags}},
	"compact": {{noun: "deltalog", partitions: true, flags: compactDeltalogFlags}},
	"merge": {{noun: "balance", partitions: true, flags: mergeBalanceFlags},
		{noun: "transactions", partitions: true, flags: mergeTransactionsFlags}},
	"find": {{noun: "ledger", flags: findLedgerFlags}},
}

// jobReport is what a job prints: one result per key.
type jobReport struct {
	Job     string      `json:"job"`
	Store   string      `json:"store"`
	DryRun  bool        `json:"dry_run"`
	Keys    int         `json:"keys"`
	Failed  int         `json:"failed"`
	Results []jobResult `json:"results"`
}

// jobResult is one key's outcome: what the job did, or the error.
type jobResult struct {
	Key      string `json:"key"`
	Result   string `json:"result,omitempty"`
	Error    string `json:"error,omitempty"`
	Sentinel string `json:"sentinel,omitempty"`
}

// writeTable prints nothing: in table mode each key's line is printed as
// the job runs.
func (r *jobReport) writeTable(io.Writer) {}

func runJob(verb string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	whole := map[string]string{"compact": "embedded", "gc": "records"} // the nouns of whole-store commands
	if len(args) > 0 && whole[verb] == args[0] {
		return cli.Either(verb == "gc", runGCRecords, runCompactEmbedded)(args[1:], stdout, stderr)
	}
	i := slices.IndexFunc(jobs[verb], func(d jobDef) bool { return len(args) > 0 && args[0] == d.noun })
	if i < 0 {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stderr, jobsUsage)
			return 0
		}
		var nouns []string
		if n := whole[verb]; n != "" {
			nouns = append(nouns, n)
		}
		for _, d := range jobs[verb] {
			nouns = append(nouns, d.noun)
		}
		return fail(stderr, verb, cli.Usagef("%w: name what to %s: counterkit %s %s -store STORE [flags] [KEY...]", crdt.ErrInvalidConfig, verb, verb, strings.Join(nouns, "|")))
	}
	def := jobs[verb][i]
	name := verb + " " + def.noun
	c := newCommand(name, jobsUsage, stderr)
	fs := c.fs
	cf := addCommonFlags(fs)
	dry := fs.Bool("dry-run", false, "read and report what the job would write; write nothing")
	progress := fs.Duration("progress", 5*time.Second, "report progress on standard error this often (0: only the summary)")
	keyTimeout := fs.Duration("key-timeout", time.Minute, "the most time spent on one key")
	check, mk := def.flags(fs, dry)
	if code := c.parse(args[1:]); code >= 0 {
		return code
	}
	spec, err := parseStore(*cf.store)
	if err := cmp.Or(invalidIf(*progress < 0 || *keyTimeout <= 0, "-progress must not be negative and -key-timeout must be positive"),
		checkTimeout(*cf.timeout), check(), err,
		invalidIf(def.partitions && spec.kind == "riak", "riak holds sibling keys only; %s needs embedded or cassandra", name)); err != nil {
		return fail(stderr, name, err)
	}
	keys, err := readKeys(fs.Args(), stdin)
	if err != nil {
		return fail(stderr, name, err)
	}
	ctx := context.Background()
	openCtx, cancel := context.WithTimeout(ctx, *cf.timeout+30*time.Second)
	b, err := openStore(openCtx, spec, storeOpts{prefix: *cf.prefix, timeout: *cf.timeout, write: !*dry})
	cancel()
	if err != nil {
		return fail(stderr, name, err)
	}
	defer b.close()
	runner := mk(b)
	mode := cli.Either(*dry, " (dry run: nothing written)", "")
	rep := &jobReport{Job: name, Store: spec.String(), DryRun: *dry, Keys: len(keys), Results: []jobResult{}}
	start := time.Now()
	last := start
	for i, key := range keys {
		kctx, cancel := context.WithTimeout(ctx, *keyTimeout)
		line, err := "", crdt.ValidateKey("key", key)
		if err == nil {
			line, err = runner(kctx, key)
		}
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && !errors.Is(err, crdt.ErrUnavailable) {
			// The key's own time ran out: a failure to try again, as any other.
			err = fmt.Errorf("%w: not done within -key-timeout %s, stopped: %w", crdt.ErrUnavailable, *keyTimeout, err)
		}
		if err != nil {
			rep.Failed++
			rep.Results = append(rep.Results, jobResult{Key: key, Error: redact(err), Sentinel: sentinelName(err)})
			fail(stderr, name+": "+key, err)
		} else {
			rep.Results = append(rep.Results, jobResult{Key: key, Result: line})
			if !c.json() {
				fmt.Fprintf(stdout, "%s: %s\n", key, line)
			}
		}
		if *progress > 0 && time.Since(last) >= *progress && i+1 < len(keys) {
			last = time.Now()
			per := last.Sub(start) / time.Duration(i+1)
			left := (per * time.Duration(len(keys)-i-1)).Round(time.Second)
			fmt.Fprintf(stderr, "counterkit %s: %d/%d keys, %d failed, about %s left%s\n", name, i+1, len(keys), rep.Failed, left, mode)
		}
	}
	fmt.Fprintf(stderr, "counterkit %s: done: %s, %d failed%s\n", name, plural(len(keys), "key"), rep.Failed, mode)
	return cmp.Or(c.emit(stdout, rep), cli.Either(rep.Failed > 0, 1, 0))
}

// maxKeyLine is the longest line of standard input readKeys accepts.
const maxKeyLine = 1 << 20

// readKeys returns the keys given as arguments, or else one per line of
// stdin. A line longer than maxKeyLine is crdt.ErrTooLarge.
func readKeys(args []string, stdin io.Reader) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	var keys []string
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), maxKeyLine)
	for sc.Scan() {
		if k := strings.TrimRight(sc.Text(), "\r"); strings.TrimSpace(k) != "" {
			keys = append(keys, k)
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("%w: standard input: line %d is longer than %d bytes (one key per line)", crdt.ErrTooLarge, len(keys)+1, maxKeyLine)
	case err != nil:
		return nil, fmt.Errorf("%w: standard input: %v", crdt.ErrUnavailable, err)
	}
	if len(keys) == 0 {
		return nil, cli.Usagef("%w: no keys: give them as arguments or one per line on standard input", crdt.ErrInvalidConfig)
	}
	return keys, nil
}

// firstRow reads the first row of a partition, or fails with
// crdt.ErrNotFound.
func firstRow(ctx context.Context, st store.Partitions, key string) (store.Row, error) {
	var first *store.Row
	err := st.Scan(ctx, key, nil, store.ReadAny, func(r store.Row) bool { first = &r; return false })
	if err != nil {
		return store.Row{}, err
	}
	if first == nil {
		return store.Row{}, fmt.Errorf("%w: key %q has no stored rows", crdt.ErrNotFound, key)
	}
	return *first, nil
}

// nonNegative returns a usage error naming the first of the duration
// flags names that is negative.
func nonNegative(fs *pflag.FlagSet, names ...string) error {
	for _, n := range names {
		if d, _ := fs.GetDuration(n); d < 0 {
			return invalidIf(true, "-%s must not be negative, not %s", n, d)
		}
	}
	return nil
}

// partitionJob is a job on partition keys, run by the driver open makes,
// with partitionFlags' flags and check. run gets the driver on the store,
// or for a dry run on cp, an in-memory copy of the key's partition (nil
// otherwise).
func partitionJob[D any](fs *pflag.FlagSet, dry *bool, open func(store.Partitions) (D, error),
	run func(ctx context.Context, d D, key string, cp *partitionCopy) (string, error), durations ...string) (func() error, func(*backend) jobRunner) {
	maxRows, check := partitionFlags(fs, open, durations...)
	return check, func(b *backend) jobRunner {
		return func(ctx context.Context, key string) (string, error) {
			var cp *partitionCopy
			_, err := firstRow(ctx, b.partitions, key)
			if err == nil && *dry {
				_, cp, err = readPartition(ctx, b.partitions, key, *maxRows, store.ReadComplete)
			}
			if err != nil {
				return "", err
			}
			d, err := open(cli.Either[store.Partitions](cp != nil, cp, b.partitions))
			if err != nil {
				return "", err
			}
			return run(ctx, d, key, cp)
		}
	}
}

// partitionFlags adds -max-rows, the most rows a dry run copies of a
// partition, and returns the check of a partition job's flags: the duration
// flags named not negative, -max-rows at least 1, and the driver's
// acceptance of the options (open on an empty memory store).
func partitionFlags[D any](fs *pflag.FlagSet, open func(store.Partitions) (D, error), durations ...string) (maxRows *int, check func() error) {
	maxRows = fs.Int("max-rows", balance.MaxBacklogRows, "dry run: the most rows copied of a partition (at least 1)")
	return maxRows, func() error {
		_, err := open(memory.NewPartitions())
		return cmp.Or(nonNegative(fs, durations...), invalidIf(*maxRows < 1, "-max-rows must be at least 1, not %d", *maxRows), configError(err))
	}
}

// configError turns a driver's refusal of the flags' options into a usage
// error with the driver's reason.
func configError(err error) error {
	if err == nil {
		return nil
	}
	return cli.Usagef("%w: the flags do not make a valid configuration: %s", crdt.ErrInvalidConfig,
		strings.TrimPrefix(strings.TrimPrefix(err.Error(), crdt.ErrInvalidConfig.Error()+": "), "tally: "))
}

func gcTallyFlags(fs *pflag.FlagSet, dry *bool) (func() error, func(*backend) jobRunner) {
	kind := fs.String("kind", "", "the aggregate: sum, min, max, stats or distinct (empty: read it from the stored rows)")
	grace := fs.Duration("grace", 0, "tally Config.Grace: how long after expiry a shard is folded (0: 24h)")
	maxSkew := fs.Duration("max-skew", 0, "tally Config.MaxSkew (0: 1h); grace must be at least 3 times it")
	maxRows := fs.Int("max-rows", 0, "tally Config.MaxRows (0: the default)")
	cfg := func() tally.Options { return tally.Options{Grace: *grace, MaxSkew: *maxSkew, MaxRows: *maxRows} }
	check := func() error {
		_, kerr := tallyKindNamed(tally.Kind(*kind))
		_, err := tally.New[*tally.Sum](memory.NewPartitions(), "config-check", cfg())
		return cmp.Or(nonNegative(fs, "grace", "max-skew"), invalidIf(*maxRows < 0, "-max-rows must not be negative, not %d", *maxRows),
			invalidIf(*kind != "" && kerr != nil, "-kind must be sum, min, max, stats or distinct, not %q", *kind), configError(err))
	}
	return check, func(b *backend) jobRunner {
		cfg := cfg()
		return func(ctx context.Context, key string) (string, error) {
			storedKind := func() (tally.Kind, error) {
				r, err := firstRow(ctx, b.partitions, key)
				if err != nil {
					return "", err
				}
				d, err := Describe(r.Value, decodeOpts{})
				if err != nil {
					return "", err
				}
				s, _ := d.Fields["kind"].(string)
				return tally.Kind(s), nil
			}
			k := tally.Kind(*kind)
			if k == "" {
				var err error
				if k, err = storedKind(); err != nil {
					return "", err
				}
			}
			t, err := tallyKindNamed(k)
			if err != nil {
				return "", err
			}
			plan, err := t.gc(ctx, b.partitions, key, cfg, *dry)
			if *kind != "" && errors.Is(err, crdt.ErrTypeMismatch) {
				// The tally reports a row of another kind as damaged; when
				// every row reads as the stored kind, only -kind is wrong.
				if sk, serr := storedKind(); serr == nil && sk != k {
					if st, serr := tallyKindNamed(sk); serr == nil {
						if _, serr := st.gc(ctx, b.partitions, key, cfg, true); serr == nil {
							return "", fmt.Errorf("%w: tally %q holds aggregate kind %q, not %q (-kind); without -kind the job reads the kind from the stored rows",
								crdt.ErrTypeMismatch, key, sk, k)
						}
					}
				}
				return "", fmt.Errorf("%w; without -kind the job reads the kind from the stored rows", err)
			}
			if err != nil {
				return "", err
			}
			if plan.Empty() {
				return fmt.Sprintf("nothing to fold (%s)", plural(plan.Live, "live shard")), nil
			}
			return fmt.Sprintf("%s %s (%s) into the tally, through %s; %s",
				cli.Either(*dry, "would fold", "folded"), plural(plan.Folded, "shard"), joinActors(plan.Batch.Delete),
				time.UnixMicro(plan.Batch.WriteTS).UTC().Format(time.RFC3339Nano), plural(plan.Live, "live shard")), nil
		}
	}
}

// joinActors lists ids, the first maxListed of them and how many more,
// so that a line stays short whatever the number of shards.
func joinActors(ids []crdt.ActorID) string {
	s := make([]string, 0, min(len(ids), maxListed)+1)
	for _, id := range ids[:min(len(ids), maxListed)] {
		s = append(s, string(id))
	}
	if more := len(ids) - maxListed; more > 0 {
		s = append(s, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(s, ", ")
}

// maxListed is the most shards a job's line names.
const maxListed = 10

func tallyGC[A tally.Aggregate[A]](ctx context.Context, st store.Partitions, key string, cfg tally.Options, dry bool) (tally.GCPlan, error) {
	c, err := tally.New[A](st, key, cfg)
	if err != nil {
		return tally.GCPlan{}, err
	}
	if dry {
		return c.PlanGC(ctx)
	}
	return c.GC(ctx)
}

func compactDeltalogFlags(fs *pflag.FlagSet, dry *bool) (func() error, func(*backend) jobRunner) {
	var o deltalog.Options
	fs.DurationVar(&o.Window, "window", 0, "deltalog Options.Window: the writers' write window (0: 10m)")
	fs.DurationVar(&o.FutureSkew, "future-skew", 0, "deltalog Options.FutureSkew (0: 5s)")
	fs.DurationVar(&o.SafetyMargin, "safety-margin", 0, "deltalog Options.SafetyMargin (0: 1m)")
	fs.DurationVar(&o.MaxScan, "max-scan", 0, "deltalog Options.MaxScan (0: 10s)")
	fs.DurationVar(&o.CompactGrace, "compact-grace", 0, "deltalog Options.CompactGrace: how old a merge cell must be before what it covers is deleted (0: 2m)")
	fs.IntVar(&o.MaxMergeCells, "max-merge-cells", 0, "deltalog Options.MaxMergeCells: the most cells a merge scan reads; past it a merge folds a backlog oldest first (0: 100,000)")
	return partitionJob(fs, dry, func(st store.Partitions) (*deltalog.Counters, error) { return deltalog.New(st, o) },
		func(ctx context.Context, c *deltalog.Counters, key string, cp *partitionCopy) (string, error) {
			cell, merged, mergeErr := c.Merge(ctx, key)
			// Compact also after a failed merge: what it deletes may be
			// what the merge failed on (SPEC.md 8.5, "Drain").
			compacted, err := c.Compact(ctx, key)
			if err := errors.Join(mergeErr, err); err != nil {
				return "", err
			}
			merge, compact := "nothing to merge", "nothing to compact"
			if merged {
				merge = fmt.Sprintf("%smerge through %s (merge cell %d, %s)", cli.Either(*dry, "would ", ""), cell.ID, cell.Delta, plural(int(cell.Stats.Count), "update"))
			}
			switch {
			case compacted && cp != nil:
				compact = fmt.Sprintf("would compact (%s)", plural(int(cp.rangeDeletes.Load()), "range delete"))
			case compacted:
				compact = "compacted"
			}
			return merge + "; " + compact, nil
		}, "window", "future-skew", "safety-margin", "max-scan", "compact-grace")
}

// balanceFlags adds the flags of balance Options, which merge balance and
// merge transactions share, and returns their names.
func balanceFlags(fs *pflag.FlagSet, o *balance.Options) []string {
	fs.DurationVar(&o.Window, "window", 0, "balance Options.Window: the writers' write window (0: 5m)")
	fs.DurationVar(&o.FutureSkew, "future-skew", 0, "balance Options.FutureSkew (0: 5s)")
	fs.DurationVar(&o.SafetyMargin, "safety-margin", 0, "balance Options.SafetyMargin (0: 30s)")
	fs.DurationVar(&o.MaxMerge, "max-merge", 0, "balance Options.MaxMerge (0: 10s)")
	fs.DurationVar(&o.SettleGrace, "settle-grace", 0, "balance Options.SettleGrace (0: 1m)")
	fs.DurationVar(&o.GCGrace, "gc-grace", 0, "balance Options.GCGrace (0: 10m)")
	return []string{"window", "future-skew", "safety-margin", "max-merge", "settle-grace", "gc-grace"}
}

func mergeBalanceFlags(fs *pflag.FlagSet, dry *bool) (func() error, func(*backend) jobRunner) {
	var o balance.Options
	durations := balanceFlags(fs, &o)
	return partitionJob(fs, dry, func(st store.Partitions) (*balance.Accounts, error) { return balance.New(st, o) },
		func(ctx context.Context, a *balance.Accounts, key string, _ *partitionCopy) (string, error) {
			r, err := a.Merge(ctx, key)
			if err != nil {
				return "", err
			}
			sum := "nothing to merge"
			if r.Sum != nil {
				sum = fmt.Sprintf("sum row %d covering %s, %s", r.Sum.Amount, plural(int(r.Sum.Covers), "row"), plural(len(r.Tombstones), "tombstone"))
			}
			line := fmt.Sprintf("%s: %s; settled %s, deleted %s, collected %s (%d too young)", cli.Either(*dry, "would merge", "merged"), sum,
				plural(len(r.Settled), "sum row"), plural(len(r.Deleted), "row"), plural(len(r.Collected), "invalid row"), len(r.TooYoung))
			if len(r.Conflicts) > 0 {
				line += "; " + plural(len(r.Conflicts), "conflicting update id")
			}
			return line, nil
		}, durations...)
}

// mergeTransactionsFlags is merge transactions: Transactions.Merge of each
// account, summed over its row partitions. A dry run runs it on a
// copyOnRead of the store.
func mergeTransactionsFlags(fs *pflag.FlagSet, dry *bool) (func() error, func(*backend) jobRunner) {
	var o balance.TxnOptions
	durations := balanceFlags(fs, &o.Options)
	fs.DurationVar(&o.RetryWindow, "retry-window", 0, "balance TxnOptions.RetryWindow: how long a retry is recognised after a merge recorded the transaction (0: 24h)")
	fs.DurationVar(&o.Deadline, "deadline", 0, "balance TxnOptions.Deadline (0: 5s); settle-grace must be at least deadline + safety-margin")
	fs.IntVar(&o.Partitions, "partitions", 0, "balance TxnOptions.Partitions: the row partitions of an account, 1..64 (0: 16)")
	fs.IntVar(&o.RecordShards, "record-shards", 0, "balance TxnOptions.RecordShards: the record partitions of a retry window, 1..256 (0: 16)")
	fs.IntVar(&o.BacklogRows, "backlog-rows", 0, "balance TxnOptions.BacklogRows: the most rows a read of a row partition takes past 100,000 (0: 200,000); raise it to drain a partition past that")
	open := func(st store.Partitions) (*balance.Transactions, error) { return balance.NewTransactions(st, o) }
	maxRows, check := partitionFlags(fs, open, append(durations, "retry-window", "deadline")...)
	return check, func(b *backend) jobRunner {
		return func(ctx context.Context, account string) (string, error) {
			var cp *copyOnRead
			st := b.partitions
			if *dry {
				cp = newCopyOnRead(b.partitions, max(*maxRows, o.BacklogRows))
				st = cp
			}
			tx, err := open(st)
			if err != nil {
				return "", err
			}
			reps, err := tx.Merge(ctx, account)
			if err != nil {
				return "", err
			}
			var sums, covers, tombstones, settled, deleted, collected, young, conflicts int
			for _, r := range reps {
				if r.Sum != nil {
					sums++
					covers += int(r.Sum.Covers)
				}
				tombstones += len(r.Tombstones)
				settled += len(r.Settled)
				deleted += len(r.Deleted)
				collected += len(r.Collected)
				young += len(r.TooYoung)
				conflicts += len(r.Conflicts)
			}
			if sums+settled+deleted+collected+young+conflicts == 0 {
				if err := anyRows(ctx, st, account, tx.RowPartitions(account)); err != nil {
					return "", err
				}
			}
			sum := "nothing to merge"
			if sums > 0 {
				sum = fmt.Sprintf("%s covering %s, %s", plural(sums, "sum row"), plural(covers, "row"), plural(tombstones, "tombstone"))
			}
			line := fmt.Sprintf("%s %s: %s; settled %s, deleted %s, collected %s (%d too young)", cli.Either(*dry, "would merge", "merged"),
				plural(len(reps), "partition"), sum, plural(settled, "sum row"), plural(deleted, "row"), plural(collected, "invalid row"), young)
			if conflicts > 0 {
				line += "; " + plural(conflicts, "conflicting update id")
			}
			if cp != nil {
				line += fmt.Sprintf("; would write %s (records included), delete %s and %s", plural(cp.ops[store.OpPut], "row"),
					plural(cp.ops[store.OpDelete]+cp.rangeRows, "row"), plural(cp.ops[store.OpDeletePartition], "partition"))
			}
			return line, nil
		}
	}
}

// anyRows fails with crdt.ErrNotFound unless one of the account's
// partitions holds a row.
func anyRows(ctx context.Context, st store.Partitions, account string, partitions []string) error {
	for _, p := range partitions {
		if _, err := firstRow(ctx, st, p); !errors.Is(err, crdt.ErrNotFound) {
			return err
		}
	}
	return fmt.Errorf("%w: account %q has no stored rows in its %s", crdt.ErrNotFound, account, plural(len(partitions), "row partition"))
}

func findLedgerFlags(fs *pflag.FlagSet, dry *bool) (func() error, func(*backend) jobRunner) {
	actor := fs.String("actor", "counterkit-cli", "ledger Options.Actor the write is made as")
	history := fs.Int("history", 0, "tpncounter Options.HistoryLength the ledger's writers use (0: the default)")
	folded := fs.Int("folded", 0, "tpncounter Options.FoldedLength the ledger's writers use (0: same as -history)")
	retries := fs.Int("retries", 0, "ledger Options.RetryCount (0: the default)")
	dropCorrupt := fs.Bool("drop-corrupt", false, "leave the siblings that are not well-formed states (crdt.ErrCorruptEncoding) out of the merge, so that its write replaces them; what they held is lost")
	options := func() ledger.Options {
		return ledger.Options{Actor: crdt.ActorID(*actor), RetryCount: *retries,
			Counter: tpncounter.Options{HistoryLength: *history, FoldedLength: *folded}}
	}
	check := func() error {
		_, err := ledger.New(memory.NewSiblings(), "config-check", options())
		return cli.Usage(err)
	}
	return check, func(b *backend) jobRunner {
		opts := options()
		return func(ctx context.Context, key string) (string, error) {
			values, err := fetchSiblings(ctx, b.siblings, key)
			if err != nil {
				return "", err
			}
			for _, v := range values {
				if n, ok := ledger.LayoutMarker(v); ok {
					return "", fmt.Errorf("%w: %q holds the layout marker of a Sharded ledger of %d sub-keys, which no plain ledger writes: run find ledger on its sub-keys, %s/0 to %s/%d (nothing written)",
						crdt.ErrInvalidConfig, key, n, key, key, n-1)
				}
			}
			drop := &corruptSiblings{Siblings: b.siblings, key: key, counter: opts.Counter}
			var st store.Siblings = b.siblings
			if *dropCorrupt {
				st = drop
				if values = drop.keep(values); len(values) == 0 {
					return "", fmt.Errorf("%w: every sibling of %q is corrupt (%s): nothing to keep; restore the key from a backup", crdt.ErrCorruptEncoding, key, strings.Join(drop.last(), "; "))
				}
			}
			frozen := &frozenSiblings{key: key, values: values, base: b.siblings}
			l, err := ledger.New(cli.Either[store.Siblings](*dry, frozen, st), key, opts)
			if err != nil {
				return "", err
			}
			c, err := l.Find(ctx)
			if err != nil {
				return "", err
			}
			s := c.Stats()
			what := cli.Either(*dry, fmt.Sprintf("would collapse %s into one value of %d bytes", plural(len(values), "sibling"), len(frozen.written())),
				"collapsed "+plural(len(values), "sibling"))
			if d := drop.last(); len(d) > 0 {
				what = cli.Either(*dry, "would drop ", "dropped ") + plural(len(d), "corrupt sibling") + " (" + strings.Join(d, "; ") + "); " + what
			}
			return fmt.Sprintf("%s (value %s, %s, %s in history, %d folded)", what, c.BigValue(), plural(s.Actors, "actor"), plural(s.History, "transaction"), s.Folded), nil
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
