package ledger_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestCopyWatchCatchesATakeOut shows what the random tests' copy watch
// (copyWatch, over appliedWatch) catches and what it lets go, on states
// built by hand. b answered applied for x, whose copy then counts:
//   - b writing a state without x while no read showed another owner is
//     flagged (a take-out of a counted copy, or a drop);
//   - a read showing a's copy of x owning it (a < b) lets b give its copy
//     up (SPEC.md 6.11 step 6): b's write without x is not flagged, even
//     if a's copy is later dropped too (a limit of the watch: the value
//     checks see that);
//   - a read showing b's entry at or past the version that held x, and x
//     known to no one (retired by another ledger, recorded), lets it go.
func TestCopyWatchCatchesATakeOut(t *testing.T) {
	state := func(steps func(c *tpncounter.Counter)) []byte {
		c, err := tpncounter.New(tpncounter.Options{})
		require.NoError(t, err)
		steps(c)
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	apply := func(c *tpncounter.Counter, actor crdt.ActorID, txn crdt.TxnID) {
		_, err := c.Apply(actor, txn, 5)
		require.NoError(t, err)
	}
	held := state(func(c *tpncounter.Counter) { apply(c, "b", "x") })
	// b's entry, one version on, with x taken out and y applied.
	takenOut := state(func(c *tpncounter.Counter) {
		apply(c, "b", "x")
		_, err := c.Retract("b", "x")
		require.NoError(t, err)
		apply(c, "b", "y")
	})
	watch := func() *copyWatch {
		w := &copyWatch{appliedWatch: appliedWatch{writer: "b", counts: map[crdt.TxnID]bool{}}, since: map[crdt.TxnID]uint64{}}
		w.begin(decodeState(t, held), "x")
		return w
	}

	w := watch()
	w.read(t, [][]byte{held})
	w.wrote(t, takenOut)
	require.Len(t, w.violations, 1, "a counted copy taken out")

	w = watch()
	owned := state(func(c *tpncounter.Counter) { apply(c, "a", "x") })
	w.read(t, [][]byte{held, owned})
	w.wrote(t, takenOut)
	require.Empty(t, w.violations, "given up to a's copy, which owns x")

	w = watch()
	retired := state(func(c *tpncounter.Counter) {
		apply(c, "b", "x")
		apply(c, "c", "z")
		_, err := c.Retire("b")
		require.NoError(t, err)
	})
	w.read(t, [][]byte{retired})
	w.wrote(t, takenOut)
	require.Empty(t, w.violations, "b's entry retired with x by another ledger")
}
