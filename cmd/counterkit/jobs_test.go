package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// script runs command lines one after the other and returns a transcript
// of each: the line, its exit status, standard output and standard error.
func script(t *testing.T, dir string, lines [][]string, stdin ...string) string {
	t.Helper()
	var b strings.Builder
	for i, args := range lines {
		in := ""
		if i < len(stdin) {
			in = stdin[i]
		}
		code, out, errOut := runCmd(t, in, args...)
		fmt.Fprintf(&b, "$ counterkit %s\n", strings.Join(args, " "))
		if in != "" {
			fmt.Fprintf(&b, "(stdin: %q)\n", in)
		}
		b.WriteString(out)
		for _, l := range strings.SplitAfter(errOut, "\n") {
			if l != "" {
				b.WriteString("stderr: " + l)
			}
		}
		fmt.Fprintf(&b, "exit %d\n\n", code)
	}
	return normalize(b.String(), dir)
}

// value reads a key with get and returns its value and how many siblings
// or rows it holds, as printed in the table.
func value(t *testing.T, spec, typ, key string) string {
	t.Helper()
	code, out, errOut := runCmd(t, "", "get", "-store", spec, "-type", typ, "-o", "table", key)
	require.Equal(t, 0, code, errOut)
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (f[0] == "value" || f[0] == "siblings" || f[0] == "rows") {
			keep = append(keep, f[0]+" "+f[1])
		}
		if l == "" {
			break
		}
	}
	return strings.Join(keep, ", ")
}

func TestJobsGolden(t *testing.T) {
	dir := fixture(t)
	golden(t, "jobs.txt", jobsTranscript(t, "embedded:"+dir, dir))
}

// jobsTranscript runs every job on the fixture's keys in store spec,
// first as dry runs, and returns the transcript, with the values before
// and after; dir (if not empty) is replaced by DIR.
func jobsTranscript(t *testing.T, emb, dir string) string {
	before := map[string]string{}
	keys := []struct{ typ, key string }{{"tally", "pageviews"}, {"deltalog", "dl-1"}, {"deltalog", "dl-2"}, {"balance", "seller-1"}, {"ledger", "acct-1"}}
	for _, k := range keys {
		before[k.key] = value(t, emb, k.typ, k.key)
	}
	// Dry runs write nothing.
	dry := script(t, dir, [][]string{
		{"gc", "tally", "-store", emb, "-dry-run", "-progress", "0", "pageviews"},
		{"compact", "deltalog", "-store", emb, "-dry-run", "-progress", "0", "dl-1", "dl-2"},
		{"merge", "balance", "-store", emb, "-dry-run", "-progress", "0", "seller-1"},
		{"find", "ledger", "-store", emb, "-dry-run", "-progress", "0", "acct-1"},
	})
	for _, k := range keys {
		require.Equal(t, before[k.key], value(t, emb, k.typ, k.key), "dry run changed %s", k.key)
	}
	real := script(t, dir, [][]string{
		{"gc", "tally", "-store", emb, "-progress", "0", "pageviews"},
		{"gc", "tally", "-store", emb, "-progress", "0", "pageviews"},
		{"compact", "deltalog", "-store", emb, "-progress", "0"},
		{"merge", "balance", "-store", emb, "-progress", "0", "seller-1"},
		{"merge", "balance", "-store", emb, "-progress", "0", "seller-1"},
		{"find", "ledger", "-store", emb, "-progress", "0", "acct-1"},
	}, "", "", "dl-1\n\ndl-2\n")
	var after strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&after, "%s %s: before %s; after %s\n", k.typ, k.key, before[k.key], value(t, emb, k.typ, k.key))
	}
	return dry + real + after.String()
}

func TestJobsErrors(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	out := script(t, dir, [][]string{
		// One key fails, the others run; exit 1.
		{"find", "ledger", "-store", emb, "-progress", "0", "nobody", "bad", "", "acct-1"},
		{"gc", "tally", "-store", emb, "-progress", "0", "bad-tally", "nobody"},
		{"gc", "tally", "-store", emb, "-progress", "0", "-kind", "max", "pageviews"},
		{"merge", "balance", "-store", emb, "-progress", "0", "dl-1"},
		// Usage errors: exit 2.
		{"gc", "-store", emb, "pageviews"},
		{"gc", "tally", "-store", "riak:127.0.0.1:1/t/b", "pageviews"},
		{"gc", "tally", "-store", emb, "-grace", "1h", "-max-skew", "1h", "pageviews"},
		{"compact", "deltalog", "-store", emb, "-compact-grace", "1s", "dl-1"},
		{"find", "ledger", "-store", emb},
		{"find", "ledger", "-store", emb, "-actor", "", "acct-1"},
	})
	golden(t, "jobs-errors.txt", out)
}

func TestJobsProgress(t *testing.T) {
	dir := fixture(t)
	code, out, errOut := runCmd(t, "acct-1\nacct-1\nacct-1\n", "find", "ledger", "-store", "embedded:"+dir, "-dry-run", "-progress", "1ns")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 3, strings.Count(out, "acct-1: would collapse 2 siblings"))
	require.Regexp(t, `(?m)^counterkit find ledger: 1/3 keys, 0 failed, about \S+ left \(dry run: nothing written\)$`, errOut)
	require.Regexp(t, `(?m)^counterkit find ledger: 2/3 keys, 0 failed, about \S+ left \(dry run: nothing written\)$`, errOut)
	require.Equal(t, 3, strings.Count(errOut, "\n"), errOut)
	require.True(t, strings.HasSuffix(errOut, "counterkit find ledger: done: 3 keys, 0 failed (dry run: nothing written)\n"), errOut)
}

// get and find ledger on Riak, through the real client against the Riak
// test double: the same siblings print the same as on the embedded store.
func TestRiakFake(t *testing.T) {
	srv := riaktest.Start(t)
	require.NoError(t, srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true}))
	ctx := context.Background()
	cl, err := riak.NewCluster(ctx, 0, srv.Addr())
	require.NoError(t, err)
	defer cl.Stop()
	sib, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: "counterkit", Bucket: "ledgers"})
	require.NoError(t, err)
	putLedgerSiblings(t, sib.Put)

	spec := "riak:" + srv.Addr() + "/counterkit/ledgers"
	code, out, errOut := runCmd(t, "", "get", "-store", spec, "-type", "ledger", "-o", "table", "acct-1")
	require.Equal(t, 0, code, errOut)
	dir := fixture(t)
	_, want, _ := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "ledger", "-o", "table", "acct-1")
	require.Equal(t, strings.Replace(want, "embedded:"+dir, spec, 1), out)

	code, out, errOut = runCmd(t, "", "find", "ledger", "-store", spec, "acct-1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "acct-1: collapsed 2 siblings (value 26, 2 actors, 3 transactions in history, 0 folded)\n", out)
	n, _ := srv.Siblings("counterkit", "ledgers", "acct-1")
	require.Equal(t, 1, n)
	// A torn sibling beside it: -drop-corrupt writes over it on Riak too.
	vals, _, err := sib.Fetch(ctx, "acct-1")
	require.NoError(t, err)
	require.NoError(t, sib.Put(ctx, "acct-1", "vandal", vals[0][:40], nil))
	code, out, errOut = runCmd(t, "", "find", "ledger", "-store", spec, "-drop-corrupt", "acct-1")
	require.Equal(t, 0, code, errOut)
	// Riak lists siblings by value: the torn prefix of the other first.
	require.Contains(t, out, "acct-1: dropped 1 corrupt sibling (sibling 1 of 2, 40 bytes")
	n, _ = srv.Siblings("counterkit", "ledgers", "acct-1")
	require.Equal(t, 1, n)

	// A default-type bucket: get reads it, find refuses to write there.
	def := "riak:" + srv.Addr() + "/default/ledgers"
	code, _, errOut = runCmd(t, "", "find", "ledger", "-store", def, "acct-1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "crdt.ErrMisconfiguredStore")
	code, _, errOut = runCmd(t, "", "get", "-store", "riak:127.0.0.1:1/counterkit/ledgers", "-timeout", "1s", "-type", "ledger", "acct-1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "crdt.ErrUnavailable")
}

// putLedgerSiblings writes the fixture's two concurrent ledger states of
// acct-1 with put.
func putLedgerSiblings(t *testing.T, put func(context.Context, string, crdt.ActorID, []byte, store.Token) error) {
	t.Helper()
	for _, s := range []struct {
		actor string
		txns  []string
		amts  []int64
	}{{"a", []string{"t1", "t2"}, []int64{10, 20}}, {"b", []string{"t3"}, []int64{-4}}} {
		c, err := tpncounter.New(tpncounter.Options{})
		require.NoError(t, err)
		for i, id := range s.txns {
			_, err := c.Apply(crdt.ActorID(s.actor), crdt.TxnID(id), s.amts[i])
			require.NoError(t, err)
		}
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		require.NoError(t, put(context.Background(), "acct-1", crdt.ActorID(s.actor), b, nil))
	}
}

// withTxns opens the embedded store in dir, runs fn on balance.Transactions
// over its partitions st (default options; clock nil: the real clock) and
// closes it.
func withTxns(t *testing.T, dir string, clock func() time.Time, fn func(ctx context.Context, tx *balance.Transactions, st store.Partitions)) {
	t.Helper()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tx, err := balance.NewTransactions(db.Partitions(), balance.TxnOptions{Options: balance.Options{Clock: clock}})
	require.NoError(t, err)
	fn(context.Background(), tx, db.Partitions())
}

// shopTxns credits shop-1 through balance.Transactions at the fixtures'
// epoch, with transactions t1, t2 and t3 (25, -5, 40: balance 60), and
// returns the row partitions holding their rows (one each).
func shopTxns(t *testing.T, dir string) []string {
	t.Helper()
	var parts []string
	withTxns(t, dir, fixedClock(epoch), func(ctx context.Context, tx *balance.Transactions, st store.Partitions) {
		for i, a := range []int64{25, -5, 40} {
			o, err := tx.Apply(ctx, "shop-1", crdt.TxnID(fmt.Sprintf("t%d", i+1)), a)
			require.NoError(t, err)
			require.Equal(t, balance.Applied, o)
		}
		for _, p := range tx.RowPartitions("shop-1") {
			if _, err := firstRow(ctx, st, p); err == nil {
				parts = append(parts, p)
			}
		}
	})
	require.Len(t, parts, 3)
	return parts
}

// storedRows returns every partition of the embedded store in dir with its
// live rows.
func storedRows(t *testing.T, dir string) map[string][]store.Row {
	t.Helper()
	ctx := context.Background()
	keys, err := embedded.Keys(ctx, dir)
	require.NoError(t, err)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	out := map[string][]store.Row{}
	for _, k := range keys {
		if k.Shape == embedded.ShapePartition {
			out[k.Key], err = db.Partitions().Snapshot(ctx, k.Key, balance.MaxRows, store.ReadComplete)
			require.NoError(t, err)
		}
	}
	return out
}

const shopMerged = "3 sum rows covering 3 rows, 3 tombstones; settled 0 sum rows, deleted 0 rows, collected 0 invalid rows (0 too young)"

// merge transactions merges every row partition of the account and records
// its transactions: the balance is unchanged, a retry is Duplicate.
func TestMergeTransactions(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	shopTxns(t, dir)
	code, out, errOut := runCmd(t, "", "merge", "transactions", "-store", emb, "-progress", "0", "shop-1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "shop-1: merged 16 partitions: "+shopMerged+"\n", out)
	require.Equal(t, "counterkit merge transactions: done: 1 key, 0 failed\n", errOut)

	// The records are in the windows of the merge's clock, the real one.
	withTxns(t, dir, nil, func(ctx context.Context, tx *balance.Transactions, _ store.Partitions) {
		v, err := tx.Balance(ctx, "shop-1")
		require.NoError(t, err)
		require.Equal(t, int64(60), v)
		o, err := tx.Apply(ctx, "shop-1", "t1", 25)
		require.NoError(t, err)
		require.Equal(t, balance.Duplicate, o)
		rec, err := tx.Recorded(ctx, "shop-1", "t2")
		require.NoError(t, err)
		require.Equal(t, []int64{-5}, rec)
	})

	// get reads the account as its layout's Transactions does; an account
	// no Apply wrote is not found.
	code, out, errOut = runCmd(t, "", "get", "-store", emb, "-type", "transactions", "-o", "json", "shop-1")
	require.Equal(t, 0, code, errOut)
	var got GetResult
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.EqualValues(t, 60, got.Value)
	require.EqualValues(t, 16, got.Summary["partitions"])
	require.Equal(t, "24h0m0s", got.Summary["retry_window"])
	require.Empty(t, got.Summary["conflicts"])
	code, _, errOut = runCmd(t, "", "get", "-store", emb, "-type", "transactions", "nobody")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `account "nobody" has no layout marker`)
	require.Contains(t, errOut, "(crdt.ErrNotFound)")
	code, _, errOut = runCmd(t, "", "get", "-store", emb, "-type", "transactions", "a#b")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "(crdt.ErrInvalidKey)", "an account key Transactions refuses is not 'not found'")

	// Merged again: nothing to do. An account with no rows, or an invalid
	// one, fails on its own (exit 1).
	code, out, errOut = runCmd(t, "", "merge", "transactions", "-store", emb, "-progress", "0", "shop-1", "nobody", "a#b")
	require.Equal(t, 1, code)
	require.Equal(t, "shop-1: merged 16 partitions: nothing to merge; settled 0 sum rows, deleted 0 rows, collected 0 invalid rows (0 too young)\n", out)
	require.Contains(t, errOut, `counterkit merge transactions: nobody: counterkit: not found: account "nobody" has no stored rows in its 16 row partitions (crdt.ErrNotFound)`)
	require.Contains(t, errOut, "counterkit merge transactions: a#b: ")
	require.Contains(t, errOut, "(crdt.ErrInvalidKey)")
	require.Contains(t, errOut, "done: 3 keys, 2 failed")
}

// Invalid options are usage errors, found before the store is opened:
// the store named does not exist, and is not created.
func TestMergeTransactionsInvalidFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	emb := "embedded:" + missing
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-partitions", "65"}, "Partitions 65 is outside 1..64"},
		{[]string{"-record-shards", "257"}, "RecordShards 257 is outside 1..256"},
		{[]string{"-deadline", "31s"}, "SettleGrace 1m0s must be at least Deadline 31s + SafetyMargin"},
		{[]string{"-settle-grace", "40s", "-safety-margin", "36s", "-max-merge", "1s"}, "SettleGrace 40s must be at least Deadline 5s + SafetyMargin"},
		{[]string{"-retry-window", "30s"}, "RetryWindow 30s must be whole microseconds, at least SettleGrace"},
		{[]string{"-deadline", "-1s"}, "-deadline must not be negative, not -1s"},
		{[]string{"-window", "-1s"}, "-window must not be negative, not -1s"},
		{[]string{"-max-rows", "0"}, "-max-rows must be at least 1, not 0"},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			code, out, errOut := runCmd(t, "", append([]string{"merge", "transactions", "-store", emb, "shop-1"}, tc.flags...)...)
			require.Equal(t, 2, code, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, "counterkit merge transactions: counterkit: invalid configuration: ")
			require.Contains(t, errOut, tc.want)
			require.Contains(t, errOut, "(crdt.ErrInvalidConfig)")
		})
	}
	// Valid flags get as far as the store, which is missing.
	code, _, errOut := runCmd(t, "", "merge", "transactions", "-store", emb, "-partitions", "64", "-deadline", "30s", "shop-1")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "crdt.ErrNotFound")
	_, err := os.Stat(missing)
	require.ErrorIs(t, err, os.ErrNotExist)
	// merge names its nouns.
	code, _, errOut = runCmd(t, "", "merge", "ledger", "-store", emb, "shop-1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "name what to merge: counterkit merge balance|transactions -store STORE")
}

// A dry run prints what the merge would write and writes nothing: no row
// changes, no transaction is recorded. The real merge then does what it
// said.
func TestMergeTransactionsDryRun(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	shopTxns(t, dir)
	before := storedRows(t, dir)
	code, out, errOut := runCmd(t, "", "merge", "transactions", "-store", emb, "-dry-run", "-progress", "0", "shop-1")
	require.Equal(t, 0, code, errOut)
	// 3 tombstones, 3 sum rows and a record of each transaction in each
	// of the 2 or 3 retry windows its record is written in.
	m := regexp.MustCompile(`^shop-1: would merge 16 partitions: (.*); would write (\d+) rows \(records included\), delete 0 rows and 0 partitions\n$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.Equal(t, shopMerged, m[1])
	require.Contains(t, []string{"12", "15"}, m[2])
	require.Equal(t, "counterkit merge transactions: done: 1 key, 0 failed (dry run: nothing written)\n", errOut)
	require.Equal(t, before, storedRows(t, dir))
	withTxns(t, dir, nil, func(ctx context.Context, tx *balance.Transactions, _ store.Partitions) {
		rec, err := tx.Recorded(ctx, "shop-1", "t1")
		require.NoError(t, err)
		require.Empty(t, rec)
	})

	code, out, errOut = runCmd(t, "", "merge", "transactions", "-store", emb, "-progress", "0", "shop-1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "shop-1: merged 16 partitions: "+m[1]+"\n", out)
	require.NotEqual(t, before, storedRows(t, dir))
}

// A dry run counts each row a delete-range would remove: here the merge
// past SettleGrace removes, in each of 3 row partitions, an N row and its
// tombstone with one delete-range (6 rows), and the account's first
// expiry deletes the expiry mark it wrote first (7 rows in all).
func TestMergeTransactionsDryRunCountsRangeRows(t *testing.T) {
	dir := fixture(t)
	parts := shopTxns(t, dir)
	withTxns(t, dir, fixedClock(epoch.Add(time.Second)), func(ctx context.Context, tx *balance.Transactions, _ store.Partitions) {
		_, err := tx.Merge(ctx, "shop-1")
		require.NoError(t, err)
	})
	count := func() int {
		n, rows := 0, storedRows(t, dir)
		for _, p := range parts {
			n += len(rows[p])
		}
		return n
	}
	require.Equal(t, 9, count(), "3 N rows, 3 tombstones, 3 sum rows")
	code, out, errOut := runCmd(t, "", "merge", "transactions", "-store", "embedded:"+dir, "-progress", "0", "-dry-run", "shop-1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "; settled 3 sum rows, deleted 3 rows, collected 3 invalid rows (0 too young); ")
	require.Contains(t, out, ", delete 7 rows and ")
	code, out, errOut = runCmd(t, "", "merge", "transactions", "-store", "embedded:"+dir, "-progress", "0", "shop-1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "; settled 3 sum rows, deleted 3 rows, collected 3 invalid rows (0 too young)")
	require.Equal(t, 3, count(), "the merge leaves the 3 settled sum rows")
}

// merge balance refuses a row partition of balance.Transactions, which it
// would sum without recording its transactions; nothing is written.
func TestMergeBalanceRefusesTransactions(t *testing.T) {
	dir := fixture(t)
	parts := shopTxns(t, dir)
	before := storedRows(t, dir)
	code, out, errOut := runCmd(t, "", append([]string{"merge", "balance", "-store", "embedded:" + dir, "-progress", "0"}, parts...)...)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	for _, p := range parts {
		require.Contains(t, errOut, fmt.Sprintf("counterkit merge balance: %s: ", p))
	}
	require.Equal(t, len(parts), strings.Count(errOut, "merge it with Transactions.Merge (crdt.ErrTypeMismatch)"), errOut)
	require.Equal(t, before, storedRows(t, dir))
}

// get names a row of a Transactions row partition by its key, place
// included.
func TestGetNamesTransactionRows(t *testing.T) {
	dir := fixture(t)
	parts := shopTxns(t, dir)
	code, out, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "balance", parts[0])
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, " N 00000000-0000-0000-")
	require.Contains(t, out, " at "+epoch.UTC().Format("2006-01-02T15:04:05"))
}

// damagePlaced rewrites the one row of the Transactions row partition part
// of shop-1 with the mutations fn returns and returns the error of the
// library's Balance of the account afterwards.
func damagePlaced(t *testing.T, dir, part string, fn func(r store.Row, row balance.Row) []store.Mutation) error {
	t.Helper()
	var berr error
	withTxns(t, dir, fixedClock(epoch), func(ctx context.Context, tx *balance.Transactions, st store.Partitions) {
		r, err := firstRow(ctx, st, part)
		require.NoError(t, err)
		var row balance.Row
		require.NoError(t, row.UnmarshalBinary(r.Value))
		require.NoError(t, st.Apply(ctx, fn(r, row)))
		_, berr = tx.Balance(ctx, "shop-1")
	})
	return berr
}

// getRefuses runs get on part and requires it to fail with
// crdt.ErrCorruptEncoding.
func getRefuses(t *testing.T, dir, part string) {
	t.Helper()
	code, out, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "balance", part)
	require.Equal(t, 1, code, "get must fail as the library does; it printed:\n%s%s", out, errOut)
	require.Contains(t, errOut, "crdt.ErrCorruptEncoding")
}

// get reads a Transactions row partition as the library does: a row key
// that disagrees with its value is corrupt, as Transactions.Balance says.
func TestGetPlacedKeyValueMismatch(t *testing.T) {
	dir := fixture(t)
	parts := shopTxns(t, dir)
	berr := damagePlaced(t, dir, parts[0], func(r store.Row, row balance.Row) []store.Mutation {
		other := balance.NormalRow(row.UpdateID, 1_000_000) // the same id, another amount: another key
		b, err := other.MarshalBinary()
		require.NoError(t, err)
		return []store.Mutation{{Partition: parts[0], Op: store.OpPut, Key: r.Key, Value: b, Timestamp: time.Now().UnixMicro()}}
	})
	require.ErrorIs(t, berr, crdt.ErrCorruptEncoding, "the library reads the partition as damaged")
	getRefuses(t, dir, parts[0])
}

// A plain balance row key among the placed ones of a Transactions row
// partition is corrupt, whether it sorts after them or first.
func TestGetPlacedMixedKeys(t *testing.T) {
	for name, at := range map[string]time.Time{
		"last":  time.Date(1582, time.October, 15, 0, 0, 1, 0, time.UTC), // sorts after every placed key
		"first": epoch,
	} {
		t.Run(name, func(t *testing.T) {
			dir := fixture(t)
			parts := shopTxns(t, dir)
			extra := balance.NormalRow(timeid.FromParts(at, 1, 1), 500)
			berr := damagePlaced(t, dir, parts[0], func(store.Row, balance.Row) []store.Mutation {
				b, err := extra.MarshalBinary()
				require.NoError(t, err)
				return []store.Mutation{{Partition: parts[0], Op: store.OpPut, Key: balance.EncodeKey(extra.Key()), Value: b, Timestamp: time.Now().UnixMicro()}}
			})
			require.ErrorIs(t, berr, crdt.ErrCorruptEncoding, "the library reads the partition as damaged")
			rows := storedRows(t, dir)[parts[0]]
			require.Len(t, rows, 2)
			require.Equal(t, name == "first", len(rows[0].Key) == balance.RowKeyLen, "the plain key sorts %s", name)
			getRefuses(t, dir, parts[0])
		})
	}
}

// A row of a Transactions row partition stored at two places is one row,
// as the library reads it.
func TestGetPlacedRowAtTwoPlaces(t *testing.T) {
	dir := fixture(t)
	parts := shopTxns(t, dir)
	require.NoError(t, damagePlaced(t, dir, parts[0], func(r store.Row, row balance.Row) []store.Mutation {
		again := balance.EncodeTxnRowKey(epoch.Add(time.Second).UnixMicro(), row.Key())
		return []store.Mutation{{Partition: parts[0], Op: store.OpPut, Key: again, Value: r.Value, Timestamp: time.Now().UnixMicro()}}
	}))
	require.Len(t, storedRows(t, dir)[parts[0]], 2)
	code, out, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "balance", "-o", "json", parts[0])
	require.Equal(t, 0, code, errOut)
	var res GetResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Rows, 2)
	require.Equal(t, float64(1), res.Summary["live_rows"])
	var row balance.Row
	withTxns(t, dir, fixedClock(epoch), func(ctx context.Context, _ *balance.Transactions, st store.Partitions) {
		r, err := firstRow(ctx, st, parts[0])
		require.NoError(t, err)
		require.NoError(t, row.UnmarshalBinary(r.Value))
	})
	require.Equal(t, float64(row.Amount), res.Value)
}

// TestCompactDeltalogAfterAFailedMerge: compact deltalog runs Compact on a
// key even when its Merge failed (SPEC.md 8.5, "Drain": what Compact
// deletes may be what a merge fails on), and reports the merge's error. A
// row that does not decode lies where the merge scans, above an old merge
// cell with two cells under it that Compact deletes.
func TestCompactDeltalogAfterAFailedMerge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	now := time.Now()
	put := func(c deltalog.Cell) {
		v, err := c.MarshalBinary()
		require.NoError(t, err)
		require.NoError(t, db.Partitions().Apply(ctx, []store.Mutation{{Partition: "dl", Op: store.OpPut,
			Key: deltalog.EncodeKey(c.ID, c.Kind), Value: v, Timestamp: 1}}))
	}
	var l deltalog.Log
	for i, at := range []time.Duration{-40 * time.Minute, -35 * time.Minute} {
		c := deltalog.Cell{ID: timeid.FromParts(now.Add(at), uint16(i), 1), Kind: deltalog.KindRegular, Delta: 1}
		require.NoError(t, l.Insert(c))
		put(c)
	}
	m, ok, err := l.MergeBefore(now.Add(-30*time.Minute), now.Add(-20*time.Minute))
	require.NoError(t, err)
	require.True(t, ok)
	put(m)
	bad := timeid.FromParts(now.Add(-12*time.Minute), 9, 9) // below the merge cutoff (-11m), above Compact's (-13m)
	require.NoError(t, db.Partitions().Apply(ctx, []store.Mutation{{Partition: "dl", Op: store.OpPut,
		Key: deltalog.EncodeKey(bad, deltalog.KindRegular), Value: []byte{0xc1}, Timestamp: 1}}))
	require.NoError(t, db.Close())

	code, out, errOut := runCmd(t, "", "compact", "deltalog", "-store", "embedded:"+dir, "-progress", "0", "dl")
	require.Equal(t, 1, code, out)
	require.Contains(t, errOut, "corrupt", "the merge's error is reported")
	db, err = embedded.Open(dir, embedded.Options{ReadOnly: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	rows, err := db.Partitions().Snapshot(ctx, "dl", 100, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, 2, "Compact deleted the two cells under the merge cell: the damaged row and the merge cell stay")
}
