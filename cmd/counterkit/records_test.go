package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// recordsStore writes 7 records made two days ago, 2 made now and a
// damaged record key into a new embedded store, and returns its
// directory.
func recordsStore(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	st := db.Siblings()
	now := time.Now()
	for i, at := range []time.Time{now.Add(-48 * time.Hour), now} {
		l, err := ledger.New(st, "acct", ledger.Options{Actor: crdt.ActorID(fmt.Sprint("w", i)), Clock: func() time.Time { return at }})
		require.NoError(t, err)
		for j := range 7 - 5*i {
			_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("t%d-%d", i, j)), 1)
			require.NoError(t, err)
		}
	}
	require.NoError(t, st.Put(ctx, ledger.RecordKey("other", "x"), "x", []byte("not a record"), nil))
	return dir
}

// recordKeys counts the store's record keys.
func recordKeys(t *testing.T, dir string) int {
	t.Helper()
	db, err := embedded.Open(dir, embedded.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	keys, err := db.Siblings().Keys(context.Background(), ledger.RecordKeyPrefix, "", 100)
	require.NoError(t, err)
	return len(keys)
}

// TestGCRecords: a dry run counts and deletes nothing; the sweep deletes
// the 7 old records (their writer retired by the other's first write),
// keeps the 2 new ones and reports the damaged key (exit 1,
// ErrCorruptEncoding); a second sweep deletes nothing; -after 1ns (with
// -retry-window 1ns) deletes the older new one too, and keeps the newest,
// which dates its live writer; bad flags, an -after shorter than
// -retry-window among them, change nothing.
func TestGCRecords(t *testing.T) {
	dir := recordsStore(t)
	emb := "embedded:" + dir
	sweep := func(args ...string) (int, gcRecordsResult, string) {
		code, out, errOut := runCmd(t, "", append([]string{"gc", "records", "-store", emb, "-o", "json"}, args...)...)
		var res gcRecordsResult
		require.NoError(t, json.Unmarshal([]byte(out), &res), "%s %s", out, errOut)
		return code, res, errOut
	}

	for _, bad := range [][]string{{"-after", "-1s"}, {"key"}, {"-store", "riak:127.0.0.1:1/t/b"},
		{"-after", "25m"}, {"-after", "23h59m59s"}, {"-retry-window", "48h", "-after", "25h"}, {"-retry-window", "-1s"}} {
		code, _, errOut := runCmd(t, "", append([]string{"gc", "records", "-store", emb}, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, errOut)
		require.Contains(t, errOut, "crdt.ErrInvalidConfig", "%v", bad)
	}
	require.Equal(t, 10, recordKeys(t, dir))

	code, res, errOut := sweep("-dry-run")
	require.Equal(t, 1, code, errOut)
	require.Equal(t, gcRecordsResult{Store: emb, DryRun: true, After: "25h0m0s", Deleted: 7, Kept: 2, Damaged: 1, Errors: res.Errors}, res)
	require.Len(t, res.Errors, 1)
	require.Equal(t, "crdt.ErrCorruptEncoding", res.Errors[0].Sentinel, res.Errors[0].Error)
	require.Contains(t, errOut, "crdt.ErrCorruptEncoding")
	require.Equal(t, 10, recordKeys(t, dir), "a dry run deleted")

	code, res, _ = sweep()
	require.Equal(t, 1, code)
	require.Equal(t, [4]int{7, 2, 0, 1}, [4]int{res.Deleted, res.Kept, res.Empty, res.Damaged})
	require.Equal(t, 3, recordKeys(t, dir))

	_, res, _ = sweep()
	require.Equal(t, [4]int{0, 2, 0, 1}, [4]int{res.Deleted, res.Kept, res.Empty, res.Damaged})

	_, res, _ = sweep("-retry-window", "1ns", "-after", "1ns")
	require.Equal(t, [5]int{1, 0, 1, 0, 1}, [5]int{res.Deleted, res.Kept, res.Dating, res.Empty, res.Damaged})
	require.Equal(t, 2, recordKeys(t, dir))

	code, out, _ := runCmd(t, "", "gc", "records", "-store", emb)
	require.Equal(t, 1, code)
	require.Equal(t, "deleted 0 record keys older than 25h0m0s; kept 1 key, 0 dating a live writer, 1 damaged\n", out)
}

// TestGCRecordsStoreErrors: a missing directory, a damaged data file, a
// store a running service holds (with -dry-run or without) and a sweep
// -timeout stops each exit 1 naming a counterkit sentinel, and the held
// store keeps its records.
func TestGCRecordsStoreErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	damaged := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(damaged, embedded.FileName), []byte("not a data file"), 0o600))
	held := recordsStore(t)
	for _, c := range []struct {
		dir, want string
		args      []string
	}{
		{missing, "no counterkit data file counterkit.db in " + missing + " (crdt.ErrNotFound)", nil},
		{damaged, "(crdt.ErrCorruptEncoding)", nil},
		{recordsStore(t), "did not finish within -timeout", []string{"-timeout", "1ns"}},
		{recordsStore(t), "did not finish within -timeout", []string{"-timeout", "1ns", "-dry-run"}},
	} {
		code, out, errOut := runCmd(t, "", append([]string{"gc", "records", "-store", "embedded:" + c.dir}, c.args...)...)
		require.Equal(t, 1, code, "%s %q: %s", c.dir, c.args, errOut)
		require.Contains(t, errOut, c.want, c.args)
		require.NotContains(t, errOut, "no counterkit sentinel", c.args)
		if c.dir != missing && c.dir != damaged {
			require.Contains(t, out, " 0 record keys older than")
			require.Contains(t, errOut, "(crdt.ErrUnavailable)", c.args)
		}
	}

	db, err := embedded.Open(held, embedded.Options{})
	require.NoError(t, err)
	for _, dry := range []string{"-dry-run=false", "-dry-run"} {
		code, out, errOut := runCmd(t, "", "gc", "records", "-store", "embedded:"+held, dry, "-retry-window", "1ns", "-after", "1ns", "-o", "json")
		require.Equal(t, 1, code, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, "a running service holds "+held, dry)
		require.Contains(t, errOut, "(embedded.ErrLocked, crdt.ErrUnavailable)", dry)
	}
	require.NoError(t, db.Close())
	require.Equal(t, 10, recordKeys(t, held))
}

// TestGCRecordsDryRunKeepsBytesAndTimes: a dry run that would delete
// every record (-after 1ns), with a damaged record besides, leaves the
// store's directory, its files' bytes and modification times as they
// were (TestReadOnlyCommandsKeepBytesAndTimes, whose fixture holds no
// records).
func TestGCRecordsDryRunKeepsBytesAndTimes(t *testing.T) {
	dir := recordsStore(t)
	take := func() map[string]string {
		s := map[string]string{}
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range append(ents, nil) {
			p := dir
			if e != nil {
				p = filepath.Join(dir, e.Name())
			}
			st, err := os.Stat(p)
			require.NoError(t, err)
			s[p] = st.ModTime().String()
			if !st.IsDir() {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				s[p] += string(b)
			}
		}
		return s
	}
	before := take()
	time.Sleep(10 * time.Millisecond) // a write now would show in the times
	for _, args := range [][]string{{"-retry-window", "1ns", "-after", "1ns"}, {"-o", "json"}, {"-retry-window", "1ns", "-after", "1ns", "-o", "json", "-timeout", "1ns"}} {
		code, out, errOut := runCmd(t, "", append([]string{"gc", "records", "-store", "embedded:" + dir, "-dry-run"}, args...)...)
		require.Equal(t, 1, code, "%q: %s", args, errOut) // the damaged record
		require.NotEmpty(t, out, args)
		require.True(t, maps.Equal(before, take()), "%q changed the store", args)
	}
	require.Equal(t, 10, recordKeys(t, dir))
}
