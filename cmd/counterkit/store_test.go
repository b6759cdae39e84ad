package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
)

// epoch is when the fixtures were written: long enough ago that every
// window, lifetime and grace has passed when the tests run.
var epoch = time.Date(2020, 3, 1, 12, 0, 0, 0, time.UTC)

// fixedClock returns a clock that reads at and moves one microsecond a call.
func fixedClock(at time.Time) func() time.Time {
	t := at
	return func() time.Time { t = t.Add(time.Microsecond); return t }
}

// fixture builds, through the public APIs, one key of every type in a
// fresh embedded data directory, closes it and returns its path:
//
//	acct-1       ledger: two siblings (actors a and b, written concurrently)
//	views        gcounter: one value, two actors
//	temp         pncounter
//	pageviews    tally Sum: two expired shards (web-1: 5, web-2: 7)
//	latency      tally Stats: one shard (12, 30, 18)
//	visitors     tally Distinct: one shard (ann, bob, cy, ann)
//	dl-1         deltalog: three regular cells (5, 7, -2)
//	dl-2         deltalog: three cells (1, 2, 3), a merge cell over them written
//	             an hour later, and a newer cell (100)
//	seller-1     balance: two N rows (25, -5)
//	bad          a sibling that is not a counterkit encoding
//	bad-tally    a tally row that is not a counterkit encoding
func fixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	populate(t, db.Siblings(), db.Partitions())
	return dir
}

// populate writes the fixture's keys (see fixture) to sib and, unless it
// is nil, parts.
func populate(t *testing.T, sib store.Siblings, parts store.Partitions) {
	t.Helper()
	ctx := context.Background()
	var err error

	// Two ledger states written without seeing each other: two siblings.
	putLedgerSiblings(t, sib.Put)
	for _, a := range []crdt.ActorID{"eu-1", "us-1"} {
		_, err := statestore.Update[gcounter.Counter](ctx, sib, "views", a, func(c *gcounter.Counter) error { return c.Increment(a, 3) })
		require.NoError(t, err)
	}
	_, err = statestore.Update[pncounter.Counter](ctx, sib, "temp", "eu-1", func(c *pncounter.Counter) error { return c.Apply("eu-1", -6) })
	require.NoError(t, err)
	require.NoError(t, sib.Put(ctx, "bad", "x", []byte{0xc1, 0x00}, nil))
	if parts == nil {
		return
	}

	ids := []crdt.ActorID{"web-1", "web-2"}
	tc, err := tally.New[*tally.Sum](parts, "pageviews", tally.Options{Clock: fixedClock(epoch),
		NewID: func() crdt.ActorID { id := ids[0]; ids = ids[1:]; return id }})
	require.NoError(t, err)
	for _, n := range []int64{5, 7} {
		m, err := tc.NewMutator()
		require.NoError(t, err)
		require.NoError(t, m.Update(ctx, func(s *tally.Sum) error { return s.Add(n) }))
	}
	st, err := tally.New[*tally.Stats](parts, "latency", tally.Options{Clock: fixedClock(epoch), NewID: func() crdt.ActorID { return "api-1" }})
	require.NoError(t, err)
	m, err := st.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Update(ctx, func(s *tally.Stats) error {
		for _, x := range []int64{12, 30, 18} {
			if err := s.Add(x); err != nil {
				return err
			}
		}
		return nil
	}))
	dt, err := tally.New[*tally.Distinct](parts, "visitors", tally.Options{Clock: fixedClock(epoch), NewID: func() crdt.ActorID { return "web-1" }})
	require.NoError(t, err)
	dm, err := dt.NewMutator()
	require.NoError(t, err)
	require.NoError(t, dm.Update(ctx, func(d *tally.Distinct) error {
		for _, v := range []string{"ann", "bob", "cy", "ann"} {
			d.AddString(v)
		}
		return nil
	}))
	require.NoError(t, parts.Apply(ctx, []store.Mutation{{Partition: "bad-tally", Op: store.OpPut,
		Key: tally.ShardRowKey("web-1"), Value: []byte{0xc1}, Timestamp: 1}}))

	dl, err := deltalog.New(parts, deltalog.Options{Clock: fixedClock(epoch)})
	require.NoError(t, err)
	for i, d := range []int64{5, 7, -2} {
		require.NoError(t, dl.Add(ctx, "dl-1", timeid.FromParts(epoch.Add(-time.Duration(3-i)*time.Second), uint16(i), 1), d))
	}

	for i, d := range []int64{1, 2, 3} {
		require.NoError(t, dl.Add(ctx, "dl-2", timeid.FromParts(epoch.Add(-time.Duration(3-i)*time.Second), uint16(i), 3), d))
	}
	later := epoch.Add(time.Hour)
	dl2, err := deltalog.New(parts, deltalog.Options{Clock: fixedClock(later)})
	require.NoError(t, err)
	_, ok, err := dl2.Merge(ctx, "dl-2")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, dl2.Add(ctx, "dl-2", timeid.FromParts(later.Add(-time.Second), 9, 3), 100))

	ac, err := balance.New(parts, balance.Options{Clock: fixedClock(epoch)})
	require.NoError(t, err)
	for i, a := range []int64{25, -5} {
		require.NoError(t, ac.Add(ctx, "seller-1", timeid.FromParts(epoch.Add(-time.Duration(2-i)*time.Second), uint16(i), 2), a))
	}
}

// runCmd runs the command line and returns its exit status, stdout and
// stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// normalize replaces what differs between runs (the temp directory,
// ledger incarnations) with fixed text.
func normalize(s, dir string) string {
	if dir != "" {
		s = strings.ReplaceAll(s, dir, "DIR")
	}
	return incarnation.ReplaceAllString(s, "~XXXXXXXX")
}

var incarnation = regexp.MustCompile(`~[0-9A-Za-z]{8}`)

func TestGetGolden(t *testing.T) {
	dir := fixture(t)
	for _, tc := range []struct{ typ, key string }{
		{"ledger", "acct-1"}, {"gcounter", "views"}, {"pncounter", "temp"},
		{"tally", "pageviews"}, {"deltalog", "dl-1"}, {"balance", "seller-1"},
		{"tally", "latency"}, {"tally", "visitors"},
	} {
		for _, format := range []string{"json", "table"} {
			t.Run(tc.key+"/"+format, func(t *testing.T) {
				code, out, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", tc.typ, "-o", format, tc.key)
				require.Equal(t, 0, code, errOut)
				require.Empty(t, errOut)
				golden(t, "get-"+tc.key+"."+format, normalize(out, dir))
				// A complete read prints the same on the embedded store.
				_, complete, _ := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", tc.typ, "-o", format, "-complete", tc.key)
				require.Equal(t, out, complete)
			})
		}
	}
}

func TestGetErrors(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing key", []string{"-store", emb, "-type", "ledger", "nobody"}, 1, "crdt.ErrNotFound"},
		{"missing partition", []string{"-store", emb, "-type", "tally", "nobody"}, 1, "crdt.ErrNotFound"},
		{"corrupt sibling", []string{"-store", emb, "-type", "ledger", "bad"}, 1, "crdt.ErrCorruptEncoding"},
		{"corrupt row", []string{"-store", emb, "-type", "tally", "bad-tally"}, 1, "crdt.ErrCorruptEncoding"},
		{"wrong type", []string{"-store", emb, "-type", "gcounter", "acct-1"}, 1, "crdt.ErrTypeMismatch"},
		{"no data file", []string{"-store", "embedded:" + t.TempDir(), "-type", "ledger", "acct-1"}, 1, "crdt.ErrNotFound"},
		{"bad store kind", []string{"-store", "mysql:x", "-type", "ledger", "k"}, 2, "crdt.ErrInvalidConfig"},
		{"no store", []string{"-type", "ledger", "k"}, 2, "crdt.ErrInvalidConfig"},
		{"cassandra without keyspace", []string{"-store", "cassandra:h1,h2", "-type", "ledger", "k"}, 2, "no keyspace"},
		{"riak without bucket", []string{"-store", "riak:h:8087/t", "-type", "ledger", "k"}, 2, "ADDR/BUCKET_TYPE/BUCKET"},
		{"riak partition type", []string{"-store", "riak:h:8087/t/b", "-type", "tally", "k"}, 2, "sibling keys only"},
		{"bad type", []string{"-store", emb, "-type", "hll", "k"}, 2, "-type must be one of"},
		{"no key", []string{"-store", emb, "-type", "ledger"}, 2, "exactly one KEY"},
		{"invalid key", []string{"-store", emb, "-type", "ledger", "a\x00b"}, 2, "crdt.ErrInvalidKey"},
		{"bad flag", []string{"-nope"}, 2, "unknown flag: --nope"},
		{"max-rows 0", []string{"-store", emb, "-type", "tally", "-max-rows", "0", "pageviews"}, 2, "-max-rows must be at least 1, not 0"},
		{"transactions max-rows below BacklogRows", []string{"-store", emb, "-type", "transactions", "-max-rows", "99999", "acct"}, 2, "-max-rows is -type transactions' BacklogRows, at least 100000, not 99999"},
		{"bad output", []string{"-store", emb, "-type", "tally", "-o", "xml", "pageviews"}, 2, "-o must be table or json"},
		{"two keys", []string{"-store", emb, "-type", "tally", "pageviews", "latency"}, 2, "give exactly one KEY (got 2 arguments)"},
		{"bad window", []string{"-store", emb, "-type", "bounded", "-window", "-1", "b"}, 2, "-window must be in [0, "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, "", append([]string{"get"}, tc.args...)...)
			require.Equal(t, tc.code, code, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, tc.want)
		})
	}
	// get never creates a data directory.
	missing := filepath.Join(t.TempDir(), "none")
	code, _, _ := runCmd(t, "", "get", "-store", "embedded:"+missing, "-type", "ledger", "k")
	require.Equal(t, 1, code)
	_, err := os.Stat(missing)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A running service holding the directory makes get fail with
// embedded.ErrLocked, promptly.
func TestGetLocked(t *testing.T) {
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	code, out, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "ledger", "acct-1")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "embedded.ErrLocked, crdt.ErrUnavailable")
	require.Contains(t, errOut, "a running service holds")
}
