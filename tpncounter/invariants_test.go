package tpncounter

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// tEntry is one entry of a hand-made encoding.
type tEntry struct {
	actor         string
	seq           uint64
	total, forgot int64
	retired       bool
	history       []Txn
	folded        []Txn
}

// encodeEntries returns a tgcounter or tpncounter (credit half es, debit
// half empty) encoding holding es, of version 3 when one is retired and 2
// otherwise, as MarshalBinary writes.
func encodeEntries(t testing.TB, tag crdt.TypeTag, es ...tEntry) []byte {
	t.Helper()
	version := uint64(2)
	for _, en := range es {
		if en.retired {
			version = 3
		}
	}
	e := wire.NewEncoder(tag, version)
	body := func() {
		e.ArrayLen(len(es))
		for _, en := range es {
			if en.retired {
				e.ArrayLen(4)
			} else {
				e.ArrayLen(6)
			}
			e.String(en.actor)
			e.Uint(en.seq)
			e.Int(en.total)
			e.Int(en.forgot)
			if en.retired {
				continue
			}
			for _, list := range [][]Txn{en.history, en.folded} {
				e.ArrayLen(len(list))
				for _, x := range list {
					e.ArrayLen(2)
					e.String(string(x.ID))
					e.Int(x.Amount)
				}
			}
		}
	}
	if tag == crdt.TagTPNCounter {
		e.ArrayLen(2)
		body()
		e.ArrayLen(0)
	} else {
		body()
	}
	b, err := e.Bytes()
	require.NoError(t, err)
	return b
}

func txns(prefix string, n int, amount int64) []Txn {
	out := make([]Txn, n)
	for i := range out {
		out[i] = Txn{ID: crdt.TxnID(fmt.Sprintf("%s%d", prefix, i)), Amount: amount}
	}
	return out
}

// TestDecodeRefusesInvariants: for each invariant, an entry that breaks it
// is refused by UnmarshalBinary of both types and by MergeBinary, with an
// *InvariantError naming it (wrapping crdt.ErrCorruptEncoding), the
// receiver unchanged; the nearest entry that keeps it decodes.
func TestDecodeRefusesInvariants(t *testing.T) {
	maxForgot := MaxForgot.UnixNano()
	for _, tc := range []struct {
		invariant string
		bad, good tEntry
	}{
		{InvForgotWithinTxnTimes,
			tEntry{actor: "ghost", seq: 1, total: 1, forgot: math.MaxInt64, retired: true},
			tEntry{actor: "ghost", seq: 1, total: 1, forgot: maxForgot, retired: true}},
		{InvForgotWithinTxnTimes,
			tEntry{actor: "a", seq: 1, total: 0, forgot: maxForgot + 1, history: txns("x", 1, 2)},
			tEntry{actor: "a", seq: 1, total: 0, forgot: maxForgot, history: txns("x", 1, 2)}},
		{InvSeqCountsItems,
			tEntry{actor: "a", seq: 2, total: 4, history: txns("h", 2, 1), folded: txns("f", 1, 4)},
			tEntry{actor: "a", seq: 3, total: 4, history: txns("h", 2, 1), folded: txns("f", 1, 4)}},
		{InvTotalCoversFolded,
			tEntry{actor: "a", seq: 5, total: 7, folded: txns("f", 2, 4)},
			tEntry{actor: "a", seq: 5, total: 8, folded: txns("f", 2, 4)}},
		{InvTotalCoversFolded, // a sum past int64 is still compared exactly
			tEntry{actor: "a", seq: 5, total: math.MaxInt64, folded: txns("f", 3, math.MaxInt64/2)},
			tEntry{actor: "a", seq: 5, total: math.MaxInt64, folded: txns("f", 2, math.MaxInt64/2)}},
		{InvSumFits,
			tEntry{actor: "a", seq: 3, total: math.MaxInt64 - 9, history: txns("h", 2, 5), folded: txns("f", 1, 1)},
			tEntry{actor: "a", seq: 3, total: math.MaxInt64 - 10, history: txns("h", 2, 5), folded: txns("f", 1, 1)}},
		{InvHistoryWithinCap,
			tEntry{actor: "a", seq: MaxHistoryLength + 2, history: txns("h", MaxHistoryLength+2, 1)},
			tEntry{actor: "a", seq: MaxHistoryLength + 2, total: 1, history: txns("h", MaxHistoryLength+1, 1), folded: txns("f", 1, 1)}},
	} {
		t.Run(tc.invariant, func(t *testing.T) {
			for _, tag := range []crdt.TypeTag{crdt.TagTGCounter, crdt.TagTPNCounter} {
				good := encodeEntries(t, tag, tc.good)
				bad := encodeEntries(t, tag, tc.bad)
				var g GCounter
				var c Counter
				dec := func(b []byte) error {
					if tag == crdt.TagTGCounter {
						return g.UnmarshalBinary(b)
					}
					return c.UnmarshalBinary(b)
				}
				require.NoError(t, dec(good), "%s: the entry keeping %s", tag, tc.invariant)

				err := dec(bad)
				var ie *InvariantError
				require.True(t, errors.As(err, &ie), "%s: %v", tag, err)
				require.Equal(t, tc.invariant, ie.Invariant, "%v", err)
				require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
				require.Contains(t, err.Error(), tc.invariant)
				if tag == crdt.TagTPNCounter {
					again, err := c.MarshalBinary()
					require.NoError(t, err)
					require.True(t, bytes.Equal(good, again), "a refused decode changes nothing")
					// MergeBinary decodes the entries that differ: refused too.
					var other Counter
					err = other.MergeBinary(bad)
					require.True(t, errors.As(err, &ie) && ie.Invariant == tc.invariant, "MergeBinary: %v", err)
				}
			}
		})
	}
}

// TestDecodeRefusesHorizonOfYear2262: a tpncounter holding a retired entry
// with forgot = 2^63−1 (a horizon in April 2262, after every time
// Options.TxnTime may give) is refused, so that it cannot make a counter
// refuse every timed transaction; the latest accepted forgot is MaxForgot,
// and the decoded counter's Horizon reports it.
func TestDecodeRefusesHorizonOfYear2262(t *testing.T) {
	b, err := hex.DecodeString("93aa74706e636f756e746572039291" + "94a567686f7374" + "0101cf7fffffffffffffff" + "90")
	require.NoError(t, err)
	var c Counter
	err = c.UnmarshalBinary(b)
	var ie *InvariantError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, InvForgotWithinTxnTimes, ie.Invariant)

	ok := encodeEntries(t, crdt.TagTPNCounter, tEntry{actor: "ghost", seq: 1, total: 1, forgot: MaxForgot.UnixNano(), retired: true})
	require.NoError(t, c.UnmarshalBinary(ok))
	require.True(t, c.Horizon().Equal(MaxForgot), "horizon %v", c.Horizon())
	h, err := EncodedHorizon(ok)
	require.NoError(t, err)
	require.True(t, h.Equal(MaxForgot), "EncodedHorizon %v", h)
}

// TestMaxForgotCoversTxnTime: the latest time TxnTime may give in any real
// time zone (UTC−12 to UTC+14) is at most MaxForgot, and an honest timed
// counter whose transactions carry such times decodes.
func TestMaxForgotCoversTxnTime(t *testing.T) {
	for _, off := range []int{-12 * 3600, 0, 14 * 3600} {
		zone := time.FixedZone("z", off)
		last := time.Date(2261, 12, 31, 23, 59, 59, 999999999, zone)
		at := last
		c, err := New(Options{HistoryLength: 1, FoldedLength: 1, TxnTime: func(crdt.TxnID) (time.Time, bool) {
			return at, true
		}})
		require.NoError(t, err)
		for i := range 5 {
			at = last.Add(time.Duration(i-4) * time.Nanosecond)
			_, err := c.Apply("a", crdt.TxnID(fmt.Sprintf("t%d", i)), 1)
			require.NoError(t, err)
		}
		require.False(t, c.Horizon().IsZero(), "nothing was forgotten")
		require.False(t, c.Horizon().After(MaxForgot), "zone %d: horizon %v", off, c.Horizon())
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		var d Counter
		require.NoError(t, d.UnmarshalBinary(b), "zone %d", off)
	}
}

// TestHistoryAtItsCapDecodes: an actor writing with the largest
// HistoryLength holds MaxHistoryLength + 1 transactions in its history
// after an Apply, which decodes.
func TestHistoryAtItsCapDecodes(t *testing.T) {
	g, err := NewGCounter(Options{HistoryLength: MaxHistoryLength, FoldedLength: 1})
	require.NoError(t, err)
	for i := range MaxHistoryLength + 5 {
		_, err := g.Apply("a", crdt.TxnID(fmt.Sprintf("t%d", i)), 1)
		require.NoError(t, err)
	}
	e, _ := g.Entry("a")
	require.Len(t, e.History, MaxHistoryLength+1)
	b, err := g.MarshalBinary()
	require.NoError(t, err)
	var d GCounter
	require.NoError(t, d.UnmarshalBinary(b))
	require.True(t, d.Equal(g))
}

// vectorEncodings returns every encoding of testdata/vectors/tpncounter.json
// (its "hex" and "reencoded" fields) of at most 4 KiB, in a fixed order.
func vectorEncodings(tb testing.TB) [][]byte {
	raw, err := os.ReadFile("../testdata/vectors/tpncounter.json")
	require.NoError(tb, err)
	var v any
	require.NoError(tb, json.Unmarshal(raw, &v))
	var out [][]byte
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				x := v[k]
				if s, ok := x.(string); ok && (k == "hex" || k == "reencoded") {
					if b, err := hex.DecodeString(s); err == nil && len(b) <= 1<<12 {
						out = append(out, b)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	require.Greater(tb, len(out), 50)
	return out
}

// FuzzDecodeVectors is seeded with every encoding of
// testdata/vectors/tpncounter.json (scenarios' states, version 1 inputs,
// decoded and malformed ones). Decoding never panics; an error wraps a
// decoder sentinel; an accepted state of version 2 or 3 re-encodes to the
// same bytes (version 1 to a decodable equal state); no accepted entry has a
// horizon after MaxForgot.
func FuzzDecodeVectors(f *testing.F) {
	for _, b := range vectorEncodings(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tag := range []crdt.TypeTag{crdt.TagTGCounter, crdt.TagTPNCounter} {
			var g GCounter
			var c Counter
			var s interface {
				MarshalBinary() ([]byte, error)
				UnmarshalBinary([]byte) error
			} = &g
			if tag == crdt.TagTPNCounter {
				s = &c
			}
			if err := s.UnmarshalBinary(data); err != nil {
				if !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) &&
					!errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
					t.Fatalf("%s: error wraps no decoder sentinel: %v", tag, err)
				}
				continue
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatalf("%s: re-encode: %v", tag, err)
			}
			// Version 2 and 3 inputs are canonical but for the version: a
			// version 3 state that needs nothing of version 3 re-encodes as
			// version 2.
			vpos := 1 + len(tag) + 1
			if version := data[vpos]; version >= 2 {
				want := bytes.Clone(data)
				want[vpos] = b[vpos]
				if b[vpos] > version || !bytes.Equal(b, want) {
					t.Fatalf("%s: version %d input %x re-encodes as %x", tag, version, data, b)
				}
			}
			horizon := g.Horizon()
			if tag == crdt.TagTPNCounter {
				horizon = c.Horizon()
				h, err := EncodedHorizon(data)
				if err != nil || !h.Equal(horizon) {
					t.Fatalf("EncodedHorizon %v, %v; decoded horizon %v", h, err, horizon)
				}
			}
			if horizon.After(MaxForgot) {
				t.Fatalf("%s: accepted horizon %v", tag, horizon)
			}
		}
	})
}
