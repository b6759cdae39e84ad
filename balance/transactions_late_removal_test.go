package balance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// txnIn returns a transaction id (prefix-i) whose row is in row
// partition k of 2.
func txnIn(prefix string, k int) crdt.TxnID { return txnInOf(prefix, k, 2) }

// txnInOf returns a transaction id (prefix-i) whose row is in row
// partition k of partitions.
func txnInOf(prefix string, k, partitions int) crdt.TxnID {
	for i := 0; ; i++ {
		id := crdt.TxnID(fmt.Sprintf("%s-%d", prefix, i))
		if int(balance.TxnRowID(id)[14])%partitions == k {
			return id
		}
	}
}

// A settled sum row in the oldest run is not moved, so it cannot come back
// after a racing merge removed it (SPEC.md 9.4, movable), within SPEC.md
// 9.3's timing assumptions: every
// write lands within SafetyMargin − 2·FutureSkew (20 s) of being sent and
// is acknowledged when it lands, M1's records and its step-5 tombstones are
// acknowledged within MaxMerge, clocks agree within FutureSkew. M1 merges
// two row partitions; X (settled, alone, with a GCGrace-old invalid sum row
// placed after it) is in the second, so M1 reads it at R and sends its
// removal batch (moving X to R) only after partition 0's steps 5–8:
// records 9.9 s, tombstones 9.9 s, sum row 19.9 s, settle 19.9 s, i.e. at
// R + 59.6 s, landing within 20 s. Meanwhile (M1 read before any of it)
// a credit z lands in partition 1, M4 covers X and z, and M2 at R + 62 s
// settles M4's sum row and removes X and M4's tombstone naming it. M1's
// batch then lands: X comes back at place R, stamped R + 59.6 s, outside
// M2's delete-range; it counted again besides M4's settled sum row when
// settled sum rows were moved.
func TestTransactionsLateRemovalBringsNothingBack(t *testing.T) {
	ctx := context.Background()
	c := rsClock()
	mem := memory.NewPartitions()
	st := faulty.NewPartitions(mem, faulty.Options{})
	m1 := rsWriter(t, st, c, 0, 2)  // M1: its store calls are hooked
	tx := rsWriter(t, mem, c, 0, 2) // every other call
	o := tx.Options()
	ahead := rsWriter(t, mem, c, o.FutureSkew, 2)
	y, w0, w1, z := txnIn("y", 1), txnIn("w0", 0), txnIn("w1", 0), txnIn("z", 1)

	// Partition 1: X settled, then a GCGrace-old invalid sum row after it.
	mustApply(t, tx, y, 1, balance.Applied)
	c.Add(time.Second)
	nested := false
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if !after && call.Method == faulty.MethodApply && !nested {
			nested = true
			c.Add(time.Second)
			mustMerge(t, tx) // C2: valid (earlier version)
			c.Add(time.Second)
		}
		return nil
	})
	mustMerge(t, m1) // C1: its sum row is invalid, placed after C2's
	st.SetHook(nil)
	c.Add(o.SettleGrace + time.Second)
	mustMerge(t, tx) // settles C2 = X
	// Partition 0: an unsettled sum row for M1 to settle.
	mustApply(t, tx, w0, 10, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, tx)
	c.Add(o.GCGrace)
	mustApply(t, tx, w1, 1000, balance.Applied) // for M1 to record and cover
	c.Add(time.Second)
	t.Log("before M1:")
	rsDump(t, rsRows(t, mem, tx))

	r := c.Now()
	calls, p0 := 0, 0
	var sent []time.Duration
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after || call.Method != faulty.MethodApply {
			return nil
		}
		calls++
		sent = append(sent, c.Now().Sub(r))
		switch {
		case calls == 1: // M1's first record batch
			c.Add(time.Second)
			mustApply(t, ahead, z, 100, balance.Applied) // placed R+6s
			c.Add(time.Second)
			mustMerge(t, tx) // M4 (version R+2s): covers X and z
			c.Add(9900*time.Millisecond - 2*time.Second)
		case call.Key == tx.RowPartitions(acct)[0]: // partition 0's batches
			if p0++; p0 == 1 { // tombstones: acknowledged within MaxMerge
				c.Add(9900 * time.Millisecond)
			} else {
				c.Add(19900 * time.Millisecond)
			}
		case call.Key == tx.RowPartitions(acct)[1]: // M1's removal of partition 1: moves X
			c.Add(2500 * time.Millisecond) // R+62.1s
			mustMerge(t, tx)               // M2: settles M4, removes X
			bal, err := tx.Balance(ctx, acct)
			require.NoError(t, err)
			require.EqualValues(t, 1111, bal, "before M1's removal lands")
			c.Add(10 * time.Second) // lands 12.5 s after it was sent
		}
		return nil
	})
	reps, err := m1.Merge(ctx, acct)
	st.SetHook(nil)
	t.Logf("M1: err %v, its writes sent at %v after its read", err, sent)
	for _, rp := range reps {
		t.Logf("M1 report: %+v", rp)
	}
	require.NoError(t, err)
	t.Log("after M1:")
	rsDump(t, rsRows(t, mem, tx))
	bal, err := tx.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 1111, bal, "y counted twice")
}
