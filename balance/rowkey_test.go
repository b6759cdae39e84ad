package balance_test

import (
	"bytes"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/timeid"
)

// TestRowKeyOrderIsRowOrder: row keys in byte order are rows in
// CompareRows order, and DecodeKey reads them back.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./balance -run TestRowKeyOrderIsRowOrder
func TestRowKeyOrderIsRowOrder(t *testing.T) {
	seed := proptest.Seed()
	n := proptest.Scale(5000)
	t.Logf("seed %d, %d pairs; replay: %s", seed, n, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	id := func() balance.ID {
		// Few timestamps and tails, so that ties are common.
		return timeid.FromParts(t0.Add(time.Duration(rng.Intn(3))*100*time.Nanosecond), uint16(rng.Intn(3))*0x7f, uint64(rng.Intn(3))<<40)
	}
	row := func() balance.Row {
		switch rng.Intn(4) {
		case 0:
			return balance.Row{UpdateID: id(), Kind: balance.KindNormal, Amount: 1} // format 1: zero version
		case 1:
			return balance.NormalRow(id(), rng.Int63n(200)-100|1)
		case 2:
			v := id()
			return balance.Row{UpdateID: v, Kind: balance.KindSum, Version: v, Amount: 1, Covers: 1}
		}
		return balance.Row{UpdateID: id(), Kind: balance.KindTombstone, Version: id(), Amount: 1, Target: balance.KindNormal}
	}
	for range n {
		a, b := row(), row()
		require.NoError(t, a.Validate())
		ka, kb := balance.EncodeKey(a.Key()), balance.EncodeKey(b.Key())
		require.Len(t, ka, balance.RowKeyLen)
		require.Equal(t, balance.CompareRows(a, b), bytes.Compare(ka, kb), "%s vs %s", a, b)
		k, err := balance.DecodeKey(ka)
		require.NoError(t, err)
		require.Equal(t, a.Key(), k)
	}
}

func TestDecodeKeyRefusesMalformedKeys(t *testing.T) {
	u := timeid.FromParts(t0, 1, 1)
	good := balance.EncodeKey(balance.NormalRow(u, 5).Key())
	badKind := append([]byte(nil), good...)
	badKind[timeid.KeyLen] = 'X'
	for name, k := range map[string][]byte{
		"empty": nil, "short": good[:len(good)-1], "long": append(append([]byte(nil), good...), 0),
		"unknown kind":                    badKind,
		"invalid update id":               balance.EncodeKey(balance.Key{Kind: balance.KindNormal}),
		"N version not zero or an amount": balance.EncodeKey(balance.Key{UpdateID: u, Kind: balance.KindNormal, Version: u}),
		"S version invalid":               balance.EncodeKey(balance.Key{UpdateID: u, Kind: balance.KindSum}),
		"T version invalid":               balance.EncodeKey(balance.Key{UpdateID: u, Kind: balance.KindTombstone}),
	} {
		_, err := balance.DecodeKey(k)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, name)
	}
}
