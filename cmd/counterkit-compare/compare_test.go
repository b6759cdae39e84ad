package main

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// nativeDouble is a test double of a native counter, not a database: an
// in-memory int64 per key whose Add, when its seeded draw says so, applies
// the increment and then reports a timeout, as a Cassandra counter update
// does when the client's timeout expires after the replicas applied it.
// It counts every Add it received and every increment it applied.
type nativeDouble struct {
	mu       sync.Mutex
	rng      *rand.Rand
	rate     float64 // share of Adds that apply and then time out
	vals     map[string]int64
	calls    int64
	timeouts int64
}

var errDoubleTimeout = errors.New("native double: timed out after applying the increment")

func newNativeDouble(seed uint64, rate float64) *nativeDouble {
	return &nativeDouble{rng: rand.New(rand.NewPCG(seed, 0)), rate: rate, vals: map[string]int64{}}
}

func (d *nativeDouble) Add(_ context.Context, key string, delta int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	d.vals[key] += delta
	if d.rng.Float64() < d.rate {
		d.timeouts++
		return errDoubleTimeout
	}
	return nil
}

func (d *nativeDouble) Value(_ context.Context, key string) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.vals[key], nil
}

// stepClock is a fake clock that moves on by step at every reading, so
// latencies, rates and resend times are fixed by the sequence of calls.
func stepClock(step time.Duration) func() time.Time {
	var n atomic.Int64
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return start.Add(time.Duration(n.Add(1)) * step) }
}

// yield is the sleep of a run on a stepping clock: the clock moves as it
// is read.
func yield(context.Context, time.Duration) { runtime.Gosched() }

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	require.Equal(t, string(want), got)
}

// stalls is a store/faulty policy of stalls: at rate rate a write starts a
// stall in which it and the next burst-1 calls fail: writes land and lose
// their acknowledgement (crdt.ErrAmbiguousWrite), reads are refused
// (crdt.ErrUnavailable), as calls do while a node
// stalls past the client's timeout. A stall outlasts the drivers' own
// immediate retries (ledger.DefaultRetryCount), so the caller sees the
// failure and resends later. Seeded: the same calls get the same faults.
func stalls(seed int64, rate float64, burst int) faulty.Policy {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	left := 0
	return func(c faulty.Call) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		read := faulty.IsRead(c.Method)
		switch {
		case left > 0:
			left--
		case !read && rng.Float64() < rate:
			left = burst - 1
		default:
			return faulty.Pass
		}
		if read {
			return faulty.Refuse
		}
		return faulty.LoseAck
	}
}

// memoryComparison runs every type on the in-memory stores, whose writes
// stall (see stalls) at rate lossRate, and on the native double, whose
// increments land and then time out at the same rate.
func memoryComparison(t *testing.T, cfg compareConfig, seed int64, lossRate float64) (compareReport, *nativeDouble) {
	t.Helper()
	t.Logf("fault seed %d, resend seed %d (fixed in the test)", seed, cfg.seed)
	lose := func(s int64) faulty.Options {
		return faulty.Options{Policy: stalls(s, lossRate/4, ledger.DefaultRetryCount+2)}
	}
	sib := faulty.NewSiblings(memory.NewSiblings(), lose(seed))
	part := faulty.NewPartitions(memory.NewPartitions(), lose(seed+1))
	native := newNativeDouble(uint64(seed), lossRate)
	targets, err := compareTargets(compareTypes, cfg, native, sib, part)
	require.NoError(t, err)
	rep := compareReportFor(cfg, "memory (test)")
	rep.Rows = runComparison(context.Background(), cfg, targets, nil)
	return rep, native
}

func goldenConfig() compareConfig {
	return compareConfig{
		workers: 1, duration: time.Minute, count: 60,
		timeout: time.Second, readTimeout: 10 * time.Second,
		resendMin: 5 * time.Millisecond, resendMax: 20 * time.Millisecond, resolveFor: time.Hour,
		shards: 4, flushEvery: 1, mergeEvery: 200 * time.Millisecond, runID: "golden", seed: 1, now: stepClock(time.Millisecond), sleep: yield,
	}
}

// The drift column is final - distinct. The native double applies every
// Add it receives, so its final value is the number of Adds and its drift
// is exactly the number of resends; the counterkit types, resent the same
// way, end exact. The table and JSON are golden (fixed seeds, one worker,
// stepping clock).
func TestCompareDriftColumn(t *testing.T) {
	rep, native := memoryComparison(t, goldenConfig(), 7, 0.25)
	require.Len(t, rep.Rows, len(compareTypes))
	for _, r := range rep.Rows {
		require.Empty(t, r.Error, r.Type)
		require.Equal(t, int64(60), r.Distinct, r.Type)
		require.Equal(t, int64(60), r.Acknowledged, r.Type)
		require.Zero(t, r.Unresolved, r.Type)
		require.Positive(t, r.Resent, "%s: some transactions were resent", r.Type)
		require.Equal(t, r.Final-r.Distinct, r.Drift, r.Type)
		if r.Type == "native" {
			require.Equal(t, native.calls, r.Writes)
			require.Equal(t, native.calls, r.Final)
			require.Equal(t, native.timeouts, r.Resent, "each timed-out Add was resent once it was due")
			require.Equal(t, r.Resent, r.Drift, "every resend of a landed increment counts again")
			require.Contains(t, driftVerdict(r), "over-counted")
			continue
		}
		require.Equal(t, int64(60), r.Final, r.Type)
		require.Zero(t, r.Drift, r.Type)
		require.Equal(t, "exact", driftVerdict(r))
	}
	var errOut bytes.Buffer
	require.Equal(t, 0, compareStatus(&errOut, rep), errOut.String())

	var table, js bytes.Buffer
	require.NoError(t, writeCompareReport(&table, "table", rep))
	golden(t, "compare.table", table.String())
	require.NoError(t, writeCompareReport(&js, "json", rep))
	golden(t, "compare.json", js.String())
	var back compareReport
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, rep.Rows[0].Drift, back.Rows[0].Drift)
	// One JSON style: snake_case keys.
	for _, k := range regexp.MustCompile(`"([^"]+)":`).FindAllStringSubmatch(js.String(), -1) {
		require.Regexp(t, `^[a-z][a-z0-9_]*$`, k[1])
	}
}

// With concurrent workers (real clock, race detector) every resend goes
// through another worker, so another ledger, Counters or Accounts than the
// one that sent the transaction before; the counterkit types stay exact and
// the native counter's drift is its resends.
func TestCompareConcurrentWorkers(t *testing.T) {
	cfg := goldenConfig()
	// history: each ledger writer remembers more transactions than it
	// makes, so a resend arriving after any number of its later writes is
	// still recognised.
	cfg.workers, cfg.count, cfg.runID, cfg.flushEvery, cfg.history = 4, 25, "conc", 3, 32
	cfg.now, cfg.sleep = time.Now, sleepCtx
	cfg.resendMin, cfg.resendMax, cfg.resolveFor = time.Millisecond, 5*time.Millisecond, time.Minute
	rep, _ := memoryComparison(t, cfg, 11, 0.3)
	for _, r := range rep.Rows {
		require.Empty(t, r.Error, r.Type)
		require.Equal(t, int64(100), r.Distinct, r.Type)
		require.Positive(t, r.Resent, r.Type)
		require.Equal(t, r.Resent, r.ResentElsewhere, "%s: a resend goes to another writer", r.Type)
		require.Zero(t, r.Unresolved, r.Type)
		if r.Type == "native" {
			require.Equal(t, r.Resent, r.Drift)
			continue
		}
		require.True(t, r.exact(), "%s: %s", r.Type, driftVerdict(r))
		require.Zero(t, r.Drift, r.Type)
		require.Positive(t, r.PerSecond, r.Type)
	}
	require.Equal(t, 0, compareStatus(&bytes.Buffer{}, rep))
}

// Worker 0 merges the transactions account with -read-timeout, not the
// writes' -timeout: a merge reads every row partition, which on a real
// server takes longer than a write's timeout of a few milliseconds. With
// the write timeout every merge failed and the run measured no merge.
// Each row partition's snapshot here takes 3 ms, longer than the 2 ms
// write timeout; the merges all succeed and are counted, one after each
// send.
func TestCompareMergesOutliveTheWriteTimeout(t *testing.T) {
	cfg := goldenConfig()
	cfg.count, cfg.runID, cfg.mergeEvery = 10, "slowmerge", time.Nanosecond
	cfg.now, cfg.sleep, cfg.timeout = time.Now, sleepCtx, 2*time.Millisecond
	part := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	rowPartition := regexp.MustCompile(`#[0-9]+$`)
	part.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
		if !after && call.Method == faulty.MethodSnapshot && rowPartition.MatchString(call.Key) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(3 * time.Millisecond):
			}
		}
		return nil
	})
	targets, err := compareTargets([]string{"transactions"}, cfg, nil, nil, part)
	require.NoError(t, err)
	rows := runComparison(context.Background(), cfg, targets, nil)
	require.Len(t, rows, 1)
	r := rows[0]
	require.Empty(t, r.Error)
	// A send the 2 ms write timeout cuts short (a loaded machine) is
	// resent, and worker 0 merges after each send, resends included.
	require.Equal(t, 10+r.Resent, r.Merges, "a merge after each of the 10 sends and %d resends", r.Resent)
	require.Zero(t, r.MergesFailed, r.FirstMergeFailure)
	require.True(t, r.exact(), driftVerdict(r))
}

// A counterkit row outside [distinct - unresolved, distinct] fails the run;
// the native counter's drift does not.
func TestCompareStatus(t *testing.T) {
	var errOut bytes.Buffer
	rep := compareReport{Rows: []compareRow{
		{Type: "native", Distinct: 10, Acknowledged: 10, Final: 14, Drift: 4},
		{Type: "ledger", Distinct: 10, Acknowledged: 10, Final: 10, counterkit: true},
		{Type: "tally", Distinct: 10, Acknowledged: 8, Unresolved: 2, Final: 9, Drift: -1, counterkit: true},
	}}
	require.Equal(t, 0, compareStatus(&errOut, rep))
	for _, bad := range []compareRow{
		{Type: "ledger", Distinct: 10, Acknowledged: 10, Final: 11, Drift: 1, counterkit: true},
		{Type: "balance", Distinct: 10, Acknowledged: 10, Final: 9, Drift: -1, counterkit: true},
		{Type: "deltalog", Distinct: 10, Acknowledged: 9, Unresolved: 1, Final: 8, Drift: -2, counterkit: true},
		{Type: "tally", Error: "unavailable", counterkit: true},
	} {
		errOut.Reset()
		require.Equal(t, 1, compareStatus(&errOut, compareReport{Rows: []compareRow{bad}}), bad.Type)
		require.Contains(t, errOut.String(), bad.Type)
	}
}

// The broken variant: a target that double-counts is reported with drift
// equal to its landed resends, its verdict says so, and the run fails.
func TestCompareReportsCounterkitDrift(t *testing.T) {
	cfg := goldenConfig()
	native := newNativeDouble(3, 0.3)
	// broken is a counterkit type that counts a resend twice: the native
	// double's non-idempotent increment, claimed as a counterkit type.
	broken := nativeTarget(native, "k", new(atomic.Int64))
	broken.counterkit = true
	rep := compareReport{Rows: runComparison(context.Background(), cfg, []compareTarget{broken}, nil)}
	r := rep.Rows[0]
	require.Positive(t, r.Drift)
	require.Equal(t, native.timeouts, r.Drift)
	require.False(t, r.exact())
	var errOut bytes.Buffer
	require.Equal(t, 1, compareStatus(&errOut, rep))
	require.Contains(t, errOut.String(), "over-counted by")
}

// finalTarget is a counterkit target whose every write fails definitely
// (outside the window): nothing lands, nothing is resent. sent counts the
// writes.
func finalTarget(sent *atomic.Int64) compareTarget {
	return compareTarget{name: "refused", counterkit: true, writes: sent,
		value: func(context.Context) (int64, error) { return 0, nil },
		newWriter: func(int) (compareWriter, error) {
			return oneWriter(func(context.Context, *txn) error {
				sent.Add(1)
				return fmt.Errorf("update too old: %w", crdt.ErrOutsideWindow)
			}, counterkitRetryable)
		}}
}

// A definite failure is not resent: the transaction is given up and
// unresolved, and the report names the error.
func TestCompareGivesUpDefiniteFailures(t *testing.T) {
	cfg := goldenConfig()
	cfg.count = 5
	var sent atomic.Int64
	rep := compareReport{Rows: runComparison(context.Background(), cfg, []compareTarget{finalTarget(&sent)}, nil)}
	r := rep.Rows[0]
	require.Equal(t, int64(5), sent.Load())
	require.Equal(t, compareRow{Type: "refused", Distinct: 5, Unresolved: 5, Writes: 5, Drift: -5, GaveUp: 5,
		FirstFailure: "transaction 0 of worker 0: update too old: " + crdt.ErrOutsideWindow.Error(), counterkit: true}, r)
	require.True(t, r.exact())
	var out bytes.Buffer
	require.NoError(t, writeCompareReport(&out, "table", rep))
	require.Contains(t, out.String(), "refused: gave up 5 transactions after a definite failure")
	require.Contains(t, out.String(), "refused: within the unresolved: final 0 is exact if 0 of the 5 unresolved transactions landed")
}

// TestUnresolvedVerdictClaimsNoExactness: a type that counts resends twice
// while as many unresolved transactions never land ends with drift 0 (5
// counted twice, 5 unresolved not landed: final 10 for 10 distinct). The
// verdict must say that the value cannot tell this from exact, not that
// the unresolved transactions landed (it said "exact within the
// unresolved: 5 of 5 unresolved transactions landed").
func TestUnresolvedVerdictClaimsNoExactness(t *testing.T) {
	r := compareRow{Type: "doubles", Distinct: 10, Acknowledged: 5, Unresolved: 5, Final: 10, Drift: 0, counterkit: true}
	v := driftVerdict(r)
	require.NotContains(t, v, "exact within")
	require.Contains(t, v, "counted twice would hide behind one that did not")
	r.Unresolved = 0
	require.Equal(t, "exact", driftVerdict(r))
}

// A transaction still failing when -resolve-for has passed is unresolved.
func TestCompareResolveForBoundsResends(t *testing.T) {
	cfg := goldenConfig()
	cfg.count, cfg.resolveFor = 3, 50*time.Millisecond
	native := newNativeDouble(1, 1) // every Add times out
	rep := compareReport{Rows: runComparison(context.Background(), cfg, []compareTarget{nativeTarget(native, "k", new(atomic.Int64))}, nil)}
	r := rep.Rows[0]
	require.Equal(t, int64(3), r.Distinct)
	require.Zero(t, r.Acknowledged)
	require.Equal(t, int64(3), r.Unresolved)
	require.Positive(t, r.Resent)
	require.Equal(t, native.calls, r.Final)
	require.Equal(t, r.Final-3, r.Drift)
}

// With -actors and -history, the ledger types write as that many actors,
// shared by the workers, each remembering that many transactions, and the
// report says what was run. A short history lets a resend arrive after
// its transaction left every writer's memory, so the ledger rows may
// drift here: the test checks that the drift column tells the truth, the
// final value being read independently from the stored siblings.
func TestCompareSharedActorsAndHistory(t *testing.T) {
	cfg := goldenConfig()
	cfg.workers, cfg.count, cfg.actors, cfg.history = 6, 20, 2, 8
	cfg.now, cfg.sleep = time.Now, sleepCtx
	cfg.resendMin, cfg.resendMax, cfg.resolveFor = time.Millisecond, 5*time.Millisecond, time.Minute
	sib := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: stalls(11, 0.05, ledger.DefaultRetryCount+2)})
	targets, err := compareTargets([]string{"ledger", "ledger-sharded"}, cfg, nil, sib, nil)
	require.NoError(t, err)
	rep := compareReportFor(cfg, "memory (test)")
	rep.Rows = runComparison(context.Background(), cfg, targets, nil)
	for _, r := range rep.Rows {
		require.Empty(t, r.Error, r.Type)
		require.Equal(t, int64(cfg.workers*cfg.count), r.Distinct, "%+v", r)
		require.Equal(t, r.Distinct, r.Acknowledged, "%+v", r)
		require.Equal(t, r.Final-r.Distinct, r.Drift, "%+v", r)
		require.Equal(t, r.exact(), r.Drift == 0, "%+v", r)
		t.Logf("%s: %s", r.Type, driftVerdict(r))
	}
	vals, _, err := sib.Store().Fetch(context.Background(), "compare-golden-ledger")
	require.NoError(t, err)
	state, err := tpncounter.New(tpncounter.Options{HistoryLength: cfg.history})
	require.NoError(t, err)
	for _, v := range vals {
		require.NoError(t, state.MergeBinary(v))
	}
	require.Equal(t, state.Value(), rep.Rows[0].Final, "the final value is what the store holds")
	prefixes := map[string]bool{}
	pos := state.Positive()
	for _, a := range pos.Actors() {
		prefixes[strings.SplitN(string(a), "~", 2)[0]] = true
		e, _ := pos.Entry(a)
		require.NotEmpty(t, e.History, a)
		require.LessOrEqual(t, len(e.History), cfg.history+1, a)
	}
	require.Equal(t, map[string]bool{"compare-a0": true, "compare-a1": true}, prefixes)

	var out bytes.Buffer
	require.NoError(t, writeCompareReport(&out, "table", rep))
	require.Contains(t, out.String(), ", ledger actors 2, ledger history 8\n")
	out.Reset()
	require.NoError(t, writeCompareReport(&out, "json", rep))
	require.Contains(t, out.String(), `"ledger_actors": 2`)
	require.Contains(t, out.String(), `"ledger_history": 8`)
}

func TestCompareUsage(t *testing.T) {
	t.Setenv("CASSANDRA_HOSTS", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-keyspace", "ks"}, "no Cassandra hosts: give -hosts HOST[,HOST] or set CASSANDRA_HOSTS"},
		{[]string{"-hosts", "h1"}, "no keyspace"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-o", "xml"}, "-o must be table or json"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-types", "native,hll"}, `unknown type "hll"`},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-duration", "1h"}, "-duration must be in (0, 4m]"},
		{[]string{"-hosts", "h1", "-keyspace", "bad-name"}, "crdt.Err"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-workers", "4", "-actors", "5"}, "-actors must be in [0, -workers]"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-actors", "-1"}, "-actors must be in [0, -workers]"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-history", "-1"}, "-history must be in [0, "},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-resend-min", "2s", "-resend-max", "1s"}, "-resend-min <= -resend-max"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-resolve-for", "0s"}, "-resolve-for must be positive"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "extra"}, `unexpected argument "extra"`},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-server-pid", "-3"}, "-server-pid -3: a process id is positive"},
		{[]string{"-hosts", "h1", "-keyspace", "ks", "-server-pid", "2147483646"}, "-server-pid 2147483646: server CPU: "},
	} {
		var out, errOut bytes.Buffer
		require.Equal(t, 2, run(tc.args, &out, &errOut), tc.args)
		require.Empty(t, out.String())
		require.Contains(t, errOut.String(), tc.want, tc.args)
		require.True(t, strings.HasPrefix(errOut.String(), "counterkit-compare: "), errOut.String())
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 2, run([]string{"-nope"}, &out, &errOut))
	errOut.Reset()
	require.Equal(t, 0, run([]string{"-h"}, &out, &errOut))
	require.Empty(t, out.String())
	golden(t, "help.txt", errOut.String())
}

// The configured keyspace name is checked before connecting.
func TestCompareBadKeyspaceNeedsNoServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := openCompareCassandra(ctx, []string{"127.0.0.1"}, "Bad-Name", "", time.Second)
	require.ErrorIs(t, err, crdt.ErrInvalidIdentifier)
}

// Against a Cassandra, compare runs end to end in a fresh keyspace with a
// client timeout small enough to make writes time out while landing: every
// counterkit type must end exact (exit 0); the native counter's drift is
// printed, not asserted. It runs on the Cassandra test double (where requests
// can outlast the 3 ms timeout too) and on the cluster named by
// CASSANDRA_HOSTS when it is set.
func TestCompareCassandraServer(t *testing.T) { cassandratest.Each(t, compareCassandraServer) }

func compareCassandraServer(t *testing.T, hosts string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := gocql.NewCluster(cli.SplitList(hosts)...)
	cl.Timeout, cl.ConnectTimeout = 20*time.Second, 20*time.Second
	sess, err := cl.CreateSession()
	require.NoError(t, err)
	defer sess.Close()
	b := make([]byte, 6)
	_, _ = crand.Read(b)
	ks := "counterkit_cmp_" + hex.EncodeToString(b)
	stmt, err := cassandra.CreateKeyspaceStatement(ks, 1)
	require.NoError(t, err)
	require.NoError(t, sess.Query(stmt).ExecContext(ctx))
	t.Cleanup(func() { _ = sess.Query(`DROP KEYSPACE IF EXISTS "` + ks + `"`).Exec() })

	// Under -race the ledgers' writes outlast 3 ms so often that resolving
	// them takes minutes of waiting for resends (up to -resolve-for, 5
	// minutes a type by default): the race pass makes half as many and
	// resends for at most 30 s a type; what is left is unresolved, which
	// the checks below allow for.
	args := []string{"-duration", "2s"}
	if testing.Short() {
		args = []string{"-duration", "1s", "-resolve-for", "30s"}
	}
	var out, errOut bytes.Buffer
	code := run(append(args, "-hosts", hosts, "-keyspace", ks, "-workers", "4", "-timeout", "3ms",
		"-resend-min", "100ms", "-resend-max", "1s", "-shards", "4", "-flush-every", "10", "-o", "json"), &out, &errOut)
	t.Log(errOut.String())
	require.Equal(t, 0, code, out.String()+errOut.String())
	var rep compareReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	var types []string
	for _, r := range rep.Rows {
		types = append(types, r.Type)
	}
	require.Equal(t, defaultTypes, types, "a row per type compare runs by default")
	for _, r := range rep.Rows {
		require.Empty(t, r.Error, r.Type)
		require.Positive(t, r.Writes, r.Type)
		require.Positive(t, r.Acknowledged, r.Type)
		if r.Type != "native" {
			require.LessOrEqual(t, r.Drift, int64(0), r.Type)
			require.GreaterOrEqual(t, r.Drift, -r.Unresolved, r.Type)
		}
	}
}
