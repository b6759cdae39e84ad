package ledger_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// stampOf reads a transaction's time from an id "t<unix seconds>-…";
// other ids carry no time.
func stampOf(x crdt.TxnID) (time.Time, bool) {
	s, ok := strings.CutPrefix(string(x), "t")
	if !ok {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(strings.SplitN(s, "-", 2)[0], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// TestShardedTxnTimeRefusalWritesNothing: with TxnTime, an id that carries
// no time, or one more than FutureSkew ahead, is refused before anything
// is read or written (SPEC.md 6.11 step 1), through a Sharded on a new
// account as through a plain Ledger: no layout marker is written.
func TestShardedTxnTimeRefusalWritesNothing(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	future := crdt.TxnID("t" + strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + "-a")
	for _, x := range []crdt.TxnID{"untimed", future} {
		st := memory.NewSiblings()
		s, err := ledger.NewSharded(st, "hot", 4, ledger.Options{Actor: "A", Clock: func() time.Time { return now },
			Counter: tpncounter.Options{TxnTime: stampOf}})
		require.NoError(t, err)
		_, err = s.Credit(ctx, x, 5)
		require.Error(t, err, "%s refused", x)
		require.Zero(t, st.Count("hot"), "%s: refused, yet the marker was written (%v)", x, err)

		// The plain ledger refuses the same call with nothing written.
		pst := memory.NewSiblings()
		l, err := ledger.New(pst, "plain", ledger.Options{Actor: "A", Clock: func() time.Time { return now },
			Counter: tpncounter.Options{TxnTime: stampOf}})
		require.NoError(t, err)
		_, err = l.Credit(ctx, x, 5)
		require.Error(t, err)
		require.Zero(t, pst.Count("plain"))
	}
}
