package balance_test

import (
	"bytes"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/timeid"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func rowCases() map[string]balance.Row {
	at := time.Date(2015, 1, 2, 3, 4, 5, 0, time.UTC)
	u := timeid.FromParts(at, 0x0101, 0x0A0B0C0D0E0F)
	v := timeid.FromParts(at.Add(time.Minute), 0x0202, 0x010203040506)
	return map[string]balance.Row{
		"normal_keyed":  balance.NormalRow(u, -5),
		"normal":        {UpdateID: u, Kind: balance.KindNormal, Amount: 5},
		"normal_min":    {UpdateID: u, Kind: balance.KindNormal, Amount: math.MinInt64},
		"sum":           {UpdateID: v, Kind: balance.KindSum, Version: v, Amount: 6, Covers: 2},
		"sum_settled":   {UpdateID: v, Kind: balance.KindSum, Version: v, Amount: 0, Covers: 3, Settled: true},
		"tombstone_n":   {UpdateID: u, Kind: balance.KindTombstone, Version: v, Amount: 5, Target: balance.KindNormal},
		"tombstone_sum": {UpdateID: u, Kind: balance.KindTombstone, Version: v, Amount: -7, Target: balance.KindSum},
	}
}

// TestRowGolden locks the encoding (format version 2). Regenerate with
//
//	go test ./balance -run TestRowGolden -update
func TestRowGolden(t *testing.T) {
	for name, r := range rowCases() {
		t.Run(name, func(t *testing.T) {
			b, err := r.MarshalBinary()
			require.NoError(t, err)
			b2, err := r.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, b, b2, "deterministic")
			path := filepath.Join("testdata", "row_v2_"+name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, strings.TrimSpace(string(want)), hex.EncodeToString(b))
			var got balance.Row
			require.NoError(t, got.UnmarshalBinary(b))
			require.Equal(t, r, got)
		})
	}
}

// TestRowGoldenV1 decodes the rows written in format version 1 (where N
// rows have no version) to the same values, and refuses an N row with a
// version in that format.
func TestRowGoldenV1(t *testing.T) {
	for name, r := range rowCases() {
		if name == "normal_keyed" {
			continue // not representable in version 1
		}
		t.Run(name, func(t *testing.T) {
			h, err := os.ReadFile(filepath.Join("testdata", "row_"+name+".golden"))
			require.NoError(t, err)
			b, err := hex.DecodeString(strings.TrimSpace(string(h)))
			require.NoError(t, err)
			var got balance.Row
			require.NoError(t, got.UnmarshalBinary(b))
			require.Equal(t, r, got)
		})
	}
	// A keyed N row in a version 1 envelope: the v2 body with the version
	// byte set back to 1 (the envelope is [tag, version, body]).
	b, err := rowCases()["normal_keyed"].MarshalBinary()
	require.NoError(t, err)
	i := bytes.Index(b, []byte("balance.row")) + len("balance.row")
	require.Equal(t, byte(2), b[i])
	b[i] = 1
	var r balance.Row
	require.ErrorIs(t, r.UnmarshalBinary(b), crdt.ErrCorruptEncoding)
	b[i] = 3
	require.ErrorIs(t, r.UnmarshalBinary(b), crdt.ErrUnsupportedVersion)
}

func TestRowValidation(t *testing.T) {
	c := rowCases()
	bad := []balance.Row{
		{UpdateID: c["normal"].UpdateID, Kind: balance.KindNormal},                                       // zero amount
		{UpdateID: c["normal"].UpdateID, Kind: balance.KindNormal, Amount: 1, Covers: 1},                 // merge field
		{UpdateID: c["normal"].UpdateID, Kind: balance.KindNormal, Amount: 1, Version: c["sum"].Version}, // version is not the amount key
		func() balance.Row { r := balance.NormalRow(c["normal"].UpdateID, 1); r.Amount = 2; return r }(), // key of another amount
		{UpdateID: c["sum"].UpdateID, Kind: balance.KindSum, Version: c["normal"].UpdateID, Covers: 1},   // updateid != version
		{UpdateID: c["sum"].UpdateID, Kind: balance.KindSum, Version: c["sum"].UpdateID},                 // covers nothing
		{UpdateID: c["normal"].UpdateID, Kind: balance.KindTombstone, Version: c["sum"].Version},         // no target
		{UpdateID: c["normal"].UpdateID, Kind: 'X', Amount: 1},
		{Kind: balance.KindNormal, Amount: 1}, // zero id
	}
	for i, r := range bad {
		require.Error(t, r.Validate(), "case %d", i)
		_, err := r.MarshalBinary()
		require.Error(t, err)
	}
	good, _ := c["tombstone_n"].MarshalBinary()
	var r balance.Row
	for i := 0; i < len(good); i++ {
		require.Error(t, r.UnmarshalBinary(good[:i]))
	}
	require.ErrorIs(t, r.UnmarshalBinary(append(append([]byte(nil), good...), 1)), crdt.ErrCorruptEncoding)
	require.ErrorIs(t, r.UnmarshalBinary(make([]byte, balance.MaxRowSize+1)), crdt.ErrTooLarge)
	require.Equal(t, balance.Row{}, r, "unchanged on error")
}

// FuzzRowDecode: decoding never panics; what decodes is canonical and
// round-trips.
//
//	go test ./balance -run '^$' -fuzz FuzzRowDecode -fuzztime 60s
func FuzzRowDecode(f *testing.F) {
	for _, r := range rowCases() {
		b, err := r.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r balance.Row
		if err := r.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded row does not encode: %v", err)
		}
		// A format version 1 row re-encodes as version 2 with the same body
		// (its N rows keep their zero version): canonical means exactly
		// that. The version is the byte after the tag ["balance.row", v, …].
		want := data
		if tag := len("\x93\xabbalance.row"); len(data) > tag && data[tag] == 1 {
			want = bytes.Clone(data)
			want[tag] = balance.FormatVersion
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("non-canonical input accepted:\n in %x\nout %x", data, b)
		}
		var d balance.Row
		if err := d.UnmarshalBinary(b); err != nil || d != r {
			t.Fatalf("round trip: %v %+v != %+v", err, d, r)
		}
		b2, _ := d.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatal("encoding twice differs")
		}
	})
}

// FuzzTxnRowKeyDecode: decoding a row partition's key never panics, and
// what decodes re-encodes to the same bytes; a key of the plain layout
// (EncodeKey) is refused.
//
//	go test ./balance -run '^$' -fuzz FuzzTxnRowKeyDecode -fuzztime 60s
func FuzzTxnRowKeyDecode(f *testing.F) {
	at := int64(1_700_000_000_000_000)
	for _, r := range rowCases() {
		at += 1_000_003
		f.Add(balance.EncodeTxnRowKey(at, r.Key()))
		f.Add(balance.EncodeKey(r.Key()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		at, k, err := balance.DecodeTxnRowKey(data)
		if err != nil {
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			return
		}
		require.GreaterOrEqual(t, at, int64(0))
		require.Equal(t, data, balance.EncodeTxnRowKey(at, k), "non-canonical key accepted")
	})
}
