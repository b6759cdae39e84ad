package main

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

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

// samples are one encoding of every type, built through the public APIs,
// so the golden output follows the real encoders.
func samples(t *testing.T) map[string][]byte {
	g := gcounter.New()
	require.NoError(t, g.Increment("eu-1", 3))
	require.NoError(t, g.Increment("us-1", 5))
	p := pncounter.New()
	require.NoError(t, p.Apply("eu-1", 10))
	require.NoError(t, p.Apply("us-1", -4))
	c, err := tpncounter.New(tpncounter.Options{HistoryLength: 2})
	require.NoError(t, err)
	for i, x := range []struct {
		actor string
		txn   string
		amt   int64
	}{{"a", "t1", 10}, {"a", "t2", 20}, {"a", "t3", 30}, {"b", "t4", -5}} {
		_, err := c.Apply(crdt.ActorID(x.actor), crdt.TxnID(x.txn), x.amt)
		require.NoError(t, err, i)
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	// Two incarnations that each credited 2^62 and debited 2^62−10, retired
	// and folded: the credits' base passes int64; c keeps writing.
	folded, err := tpncounter.New(tpncounter.Options{HistoryLength: 2})
	require.NoError(t, err)
	for _, actor := range []crdt.ActorID{"old-1", "old-2"} {
		_, err := folded.Apply(actor, crdt.TxnID(actor+"-in"), 1<<62)
		require.NoError(t, err)
		_, err = folded.Apply(actor, crdt.TxnID(actor+"-out"), -(1<<62 - 10))
		require.NoError(t, err)
	}
	_, err = folded.RetireAllAt(at, "old-1", "old-2")
	require.NoError(t, err)
	require.Equal(t, 4, folded.Fold(at.Add(time.Hour)))
	_, err = folded.Apply("c", "t5", 7)
	require.NoError(t, err)
	id := timeid.FromParts(at, 1, 2)
	cell := deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 7}
	merge := deltalog.Cell{ID: id, Kind: deltalog.KindMerge, Delta: 12, Written: at.UnixMicro(),
		Stats: deltalog.Stats{Count: 2, Sum: 12, Min: 5, Max: 7, SumSqLo: 74}}
	var sum tally.Sum
	require.NoError(t, sum.Add(42))
	shard := tally.Shard[*tally.Sum]{Mutator: "web-1", ExpiresAt: at.UnixMicro(), State: &sum}
	must := func(b []byte, err error) []byte {
		require.NoError(t, err)
		return b
	}
	return map[string][]byte{
		"gcounter":          must(g.MarshalBinary()),
		"pncounter":         must(p.MarshalBinary()),
		"tgcounter":         must(c.Positive().MarshalBinary()),
		"tpncounter":        must(c.MarshalBinary()),
		"tpncounter.folded": must(folded.MarshalBinary()),
		"deltalog.cell":     must(cell.MarshalBinary()),
		"deltalog.merge":    must(merge.MarshalBinary()),
		"balance.row":       must(balance.NormalRow(id, 25).MarshalBinary()),
		"tally.shard":       must(shard.MarshalBinary()),
		"ledger.txn":        must(ledger.Record{Txn: "pay-0", Amount: -40, Writer: "svc~abcdefgh", At: at, Version: 3}.MarshalBinary()),
		"ledger.txn.key":    must(ledger.Record{Txn: "pay-1", Amount: 7, Writer: "svc~abcdefgh", At: at, Version: 4, Key: "wallet/3"}.MarshalBinary()),
		"ledger.seen": must(ledger.Sightings{{Writer: "svc~abcdefgh", Version: 3, At: at},
			{Writer: "svc~bcdefghi", Version: 1, At: at.Add(time.Minute)}}.MarshalBinary()),
	}
}

func TestInspectGolden(t *testing.T) {
	for name, data := range samples(t) {
		for _, format := range []string{"json", "table"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				var out, errOut bytes.Buffer
				code := run([]string{"inspect", "-o", format, "-history", "2", "-hex", hex.EncodeToString(data)}, nil, &out, &errOut)
				require.Equal(t, 0, code, errOut.String())
				golden(t, "inspect-"+name+"."+format, out.String())

				// The same bytes from a file and from stdin print the same.
				f := filepath.Join(t.TempDir(), "v")
				require.NoError(t, os.WriteFile(f, data, 0o600))
				var fromFile, fromStdin bytes.Buffer
				require.Equal(t, 0, run([]string{"inspect", "-o", format, "-history", "2", f}, nil, &fromFile, &errOut))
				require.Equal(t, 0, run([]string{"inspect", "-o", format, "-history", "2"}, bytes.NewReader(data), &fromStdin, &errOut))
				require.Equal(t, out.String(), fromFile.String())
				require.Equal(t, out.String(), fromStdin.String())
			})
		}
	}
}

func TestInspectRefusesBadBytes(t *testing.T) {
	good := samples(t)["tpncounter"]
	for _, tc := range []struct {
		name, hex, want string
	}{
		{"not msgpack", "c1", "crdt.ErrCorruptEncoding"},
		{"truncated", hex.EncodeToString(good[:len(good)-1]), "crdt.ErrCorruptEncoding"},
		{"trailing byte", hex.EncodeToString(append(append([]byte{}, good...), 0)), "crdt.ErrCorruptEncoding"},
		{"unknown tag", "93a3666f6f0190", "crdt.ErrTypeMismatch"},
		{"newer version", "93a867636f756e746572" + "7f90", "crdt.ErrUnsupportedVersion"},
		{"not hex", "zz", "-hex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"inspect", "-hex", tc.hex}, nil, &out, &errOut)
			want := 1
			if tc.name == "not hex" {
				want = 2 // a usage error
			}
			require.Equal(t, want, code)
			require.Empty(t, out.String())
			require.Contains(t, errOut.String(), tc.want)
		})
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 2, run(nil, nil, &out, &errOut))
	require.Contains(t, errOut.String(), "inspect")
	out.Reset()
	require.Equal(t, 0, run([]string{"help"}, nil, &out, &errOut))
	golden(t, "help.txt", out.String())
	out.Reset()
	require.Equal(t, 0, run([]string{"help", "inspect"}, nil, &out, &errOut))
	golden(t, "help-inspect.txt", out.String())
	for _, cmd := range [][]string{{"get"}, {"check"}, {"gc", "tally"}, {"compact", "deltalog"}, {"merge", "balance"}, {"merge", "transactions"}, {"find", "ledger"},
		{"list"}, {"stats"}, {"backup"}, {"version"}, {"compact", "embedded"}} {
		out.Reset()
		require.Equal(t, 0, run(append([]string{"help"}, cmd...), nil, &out, &errOut), cmd)
		golden(t, "help-"+strings.Join(cmd, "-")+".txt", out.String())
		// -h prints the same on standard error.
		var hOut, hErr bytes.Buffer
		require.Equal(t, 0, run(append(cmd, "-h"), nil, &hOut, &hErr), cmd)
		require.Empty(t, hOut.String())
		require.Equal(t, out.String(), hErr.String())
	}
	errOut.Reset()
	require.Equal(t, 2, run([]string{"frobnicate"}, nil, &out, &errOut))
	require.True(t, strings.HasPrefix(errOut.String(), `counterkit: unknown command "frobnicate"`))
	require.Equal(t, 2, run([]string{"inspect", "-o", "xml", "-hex", "00"}, nil, &out, &errOut))
}
