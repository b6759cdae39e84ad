package tpncounter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/stretchr/testify/require"
)

// TestIDArena drives one actor's id arena through many compactions, with
// ids of every length, after a decode (exact ring, decoded arena) and from
// empty, checking the index after every step, and that ids handed out
// (Entry, Conflicts) stay intact when the arena later moves its ids in
// place.
func TestIDArena(t *testing.T) {
	id := func(i int) crdt.TxnID {
		return crdt.TxnID(fmt.Sprintf("%d-%s", i, strings.Repeat("x", (i*37)%(crdt.MaxIDLen-8))))
	}
	for _, decoded := range []bool{false, true} {
		g, err := NewGCounter(Options{HistoryLength: 5, FoldedLength: 3})
		require.NoError(t, err)
		for i := 0; i < 7; i++ {
			_, err := g.Apply("a", id(i), int64(i+1))
			require.NoError(t, err)
		}
		if decoded {
			b, err := g.MarshalBinary()
			require.NoError(t, err)
			require.NoError(t, g.UnmarshalBinary(b))
			e := g.entries["a"]
			require.Equal(t, 7, len(e.ring), "a decoded ring is exact")
			require.Equal(t, uint32(7), e.mask)
		}
		kept, _ := g.Entry("a")
		want := fmt.Sprint(kept)
		for i := 7; i < 400; i++ {
			_, err := g.Apply("a", id(i), int64(i+1))
			require.NoError(t, err)
			require.NoError(t, g.checkIndex(), "step %d", i)
			e := g.entries["a"]
			require.LessOrEqual(t, cap(e.ids), 2*(e.size()+1)*crdt.MaxIDLen)
		}
		require.Equal(t, want, fmt.Sprint(kept), "ids handed out before the arena moved them")
		e, _ := g.Entry("a")
		all := append(e.Folded, e.History...)
		for j, x := range all {
			require.Equal(t, id(400-len(all)+j), x.ID)
			out, err := g.Apply("a", x.ID, x.Amount)
			require.NoError(t, err)
			require.Contains(t, []Outcome{Duplicate, DuplicateFolded}, out)
		}
		// The steady state allocates nothing, arena included.
		ids := make([]crdt.TxnID, 1000)
		for k := range ids {
			ids[k] = id(1000 + k)
		}
		k := 0
		for ; k < 100; k++ {
			g.Apply("a", ids[k], 1)
		}
		require.Zero(t, testing.AllocsPerRun(800, func() {
			g.Apply("a", ids[k], 1)
			k++
		}))
		require.NoError(t, g.checkIndex())
	}
}
