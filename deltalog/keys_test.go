package deltalog_test

import (
	"bytes"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/timeid"
)

// TestRowKeyOrderIsCellOrder: row keys in byte order are cells in
// CompareCells order, and DecodeKey reads them back.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./deltalog -run TestRowKeyOrderIsCellOrder
func TestRowKeyOrderIsCellOrder(t *testing.T) {
	seed := proptest.Seed()
	n := proptest.Scale(5000)
	t.Logf("seed %d, %d pairs; replay: %s", seed, n, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	cell := func() deltalog.Cell {
		// Few timestamps and tails, so that ties are common.
		id := timeid.FromParts(base.Add(time.Duration(rng.Intn(3))*100*time.Nanosecond), uint16(rng.Intn(3))*0x7f, uint64(rng.Intn(3))<<40)
		k := deltalog.KindRegular
		if rng.Intn(2) == 0 {
			k = deltalog.KindMerge
		}
		return deltalog.Cell{ID: id, Kind: k}
	}
	for range n {
		a, b := cell(), cell()
		ka, kb := deltalog.EncodeKey(a.ID, a.Kind), deltalog.EncodeKey(b.ID, b.Kind)
		require.Len(t, ka, deltalog.RowKeyLen)
		require.Equal(t, deltalog.CompareCells(a, b), bytes.Compare(ka, kb), "%s/%s vs %s/%s", a.ID, a.Kind, b.ID, b.Kind)
		id, kind, err := deltalog.DecodeKey(ka)
		require.NoError(t, err)
		require.Equal(t, a.ID, id)
		require.Equal(t, a.Kind, kind)
	}
}

func TestDecodeKeyRefusesMalformedKeys(t *testing.T) {
	good := deltalog.EncodeKey(timeid.FromParts(base, 1, 1), deltalog.KindRegular)
	badKind := append([]byte(nil), good...)
	badKind[len(badKind)-1] = 'x'
	v4 := deltalog.EncodeKey(deltalog.ID{}, deltalog.KindMerge) // the zero id is not version 1
	for name, k := range map[string][]byte{
		"empty": nil, "short": good[:len(good)-1], "long": append(append([]byte(nil), good...), 0),
		"unknown kind": badKind, "invalid id": v4,
	} {
		_, _, err := deltalog.DecodeKey(k)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, name)
	}
}
