package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
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
