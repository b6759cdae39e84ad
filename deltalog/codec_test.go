package deltalog_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/stats"
	"github.com/counterkit/counterkit/timeid"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func codecCases() map[string]deltalog.Cell {
	id := timeid.FromParts(time.Date(2013, 5, 28, 10, 0, 0, 0, time.UTC), 0x1234, 0xA1B2C3D4E5F6)
	return map[string]deltalog.Cell{
		"regular_positive": {ID: id, Kind: deltalog.KindRegular, Delta: 1},
		"regular_negative": {ID: id, Kind: deltalog.KindRegular, Delta: -3},
		"regular_min":      {ID: id, Kind: deltalog.KindRegular, Delta: math.MinInt64},
		"merge": {ID: id, Kind: deltalog.KindMerge, Delta: 4, Written: 1369735200000000000,
			Stats: deltalog.Stats{Count: 3, Sum: 4, Min: 1, Max: 2, SumSqLo: 6}},
		// The deltas −1 and 2^63−1: the sum of squares is 2^126 − 2^64 + 2.
		"merge_big": {ID: id, Kind: deltalog.KindMerge, Delta: math.MaxInt64 - 1, Written: 1,
			Stats: deltalog.Stats{Count: 2, Sum: math.MaxInt64 - 1, Min: -1, Max: math.MaxInt64, SumSqHi: 1<<62 - 1, SumSqLo: 2}},
	}
}

// TestCellGolden locks the encoding. Regenerate with
//
//	go test ./deltalog -run TestCellGolden -update
func TestCellGolden(t *testing.T) {
	for name, c := range codecCases() {
		t.Run(name, func(t *testing.T) {
			b, err := c.MarshalBinary()
			require.NoError(t, err)
			b2, err := c.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, b, b2, "deterministic")
			path := filepath.Join("testdata", "cell_"+name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, strings.TrimSpace(string(want)), hex.EncodeToString(b))
			var got deltalog.Cell
			require.NoError(t, got.UnmarshalBinary(b))
			require.Equal(t, c, got)
		})
	}
}

func TestCellDecodeErrors(t *testing.T) {
	good, err := codecCases()["merge"].MarshalBinary()
	require.NoError(t, err)
	var c deltalog.Cell
	for i := 0; i < len(good); i++ {
		require.Error(t, c.UnmarshalBinary(good[:i]), "truncated at %d", i)
	}
	require.ErrorIs(t, c.UnmarshalBinary(append(append([]byte(nil), good...), 0)), crdt.ErrCorruptEncoding)
	require.ErrorIs(t, c.UnmarshalBinary(make([]byte, deltalog.MaxCellSize+1)), crdt.ErrTooLarge)
	require.Equal(t, deltalog.Cell{}, c, "unchanged on error")
	// A merge cell whose stats disagree with its delta is refused.
	bad := codecCases()["merge"]
	bad.Delta = 5
	_, err = bad.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	// Stats no set of observations has: the same rules as tally's.
	id := codecCases()["merge"].ID
	for name, s := range map[string]deltalog.Stats{
		"sum above max·count":   {Count: 2, Sum: 100, Min: 1, Max: 2, SumSqLo: 5},
		"sum below min·count":   {Count: 2, Sum: -100, Min: -2, Max: -1, SumSqLo: 5},
		"single, wrong sumsq":   {Count: 1, Sum: 3, Min: 3, Max: 3, SumSqLo: 10},
		"single, min differs":   {Count: 1, Sum: 3, Min: 2, Max: 3, SumSqLo: 9},
		"extremes beyond int64": {Count: 3, Sum: math.MaxInt64, Min: 0, Max: math.MaxInt64/3 - 1},
	} {
		_, err := deltalog.Cell{ID: id, Kind: deltalog.KindMerge, Delta: s.Sum, Stats: s}.MarshalBinary()
		require.ErrorIs(t, err, crdt.ErrInvalidAmount, name)
	}
	ok := deltalog.Stats{Count: 3, Sum: math.MaxInt64, Min: 0, Max: math.MaxInt64, SumSqHi: 1<<62 - 1, SumSqLo: 1} // 0, 0, 2^63−1
	_, err = deltalog.Cell{ID: id, Kind: deltalog.KindMerge, Delta: ok.Sum, Stats: ok}.MarshalBinary()
	require.NoError(t, err, "max·count beyond int64 is still compared exactly")
	// Another type's tag.
	var other bytes.Buffer
	other.Write([]byte{0x93, 0xa8})
	other.WriteString("gcounter")
	other.Write([]byte{0x01, 0xc0})
	require.ErrorIs(t, c.UnmarshalBinary(other.Bytes()), crdt.ErrTypeMismatch)
}

// FuzzCellDecode: decoding never panics, and whatever decodes re-encodes to
// the same bytes (the encoding is canonical) and decodes to the same cell.
//
//	go test ./deltalog -run '^$' -fuzz FuzzCellDecode -fuzztime 60s
func FuzzCellDecode(f *testing.F) {
	for _, c := range codecCases() {
		b, err := c.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Merge cells at and just past the bounds of the stats check.
	for _, s := range []deltalog.Stats{
		{Count: 2, Sum: 4, Min: 2, Max: 2, SumSqLo: 6}, // variance −1 without the check
		{Count: 4, Sum: 20, Min: 0, Max: 10, SumSqLo: 150},
		{Count: 4, Sum: 20, Min: 0, Max: 10, SumSqLo: 148},
		{Count: 4, Sum: 20, Min: 0, Max: 10, SumSqLo: 200},
		{Count: 4, Sum: 20, Min: 0, Max: 10, SumSqLo: 202},
		statsOfDeltas(math.MinInt64, math.MaxInt64, 0),
	} {
		f.Add(encodeMergeCell(f, s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c deltalog.Cell
		if err := c.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := c.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded cell does not encode: %v", err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("non-canonical input accepted:\n in %x\nout %x", data, b)
		}
		var d deltalog.Cell
		if err := d.UnmarshalBinary(b); err != nil || d != c {
			t.Fatalf("round trip: %v %+v != %+v", err, d, c)
		}
		b2, _ := d.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatal("encoding twice differs")
		}
		if c.Kind != deltalog.KindMerge {
			return
		}
		// The stats of a decoded merge cell, and whatever Add builds from
		// them, have a variance that is not negative and stay valid.
		acc := c.Stats
		for i := range 3 {
			if v, _ := acc.Variance(); v < 0 || math.IsNaN(v) {
				t.Fatalf("stats %+v (decoded %+v added %d times) have variance %v", acc, c.Stats, i, v)
			}
			if err := (deltalog.Cell{ID: c.ID, Kind: deltalog.KindMerge, Delta: acc.Sum, Stats: acc}).Validate(); err != nil {
				t.Fatalf("Add built %+v from the decoded %+v, which is invalid: %v", acc, c.Stats, err)
			}
			next, err := acc.Add(acc)
			if err != nil {
				if !errors.Is(err, crdt.ErrOverflow) {
					t.Fatalf("add %+v: %v", acc, err)
				}
				return
			}
			acc = next
		}
	})
}

// TestWidestCellSize checks MaxCellSize's "a valid cell encodes to at most
// 109 bytes": a valid merge cell whose every integer (delta, written, and
// the stats' count, sum, min, max and both halves of the sum of squares)
// takes the widest msgpack form, nine bytes, encodes to exactly that.
func TestWidestCellSize(t *testing.T) {
	s := stats.Summary{Count: 1 << 32}.Combine(stats.Of(-1 << 62)).Combine(stats.Of(1 << 62)).Combine(stats.Of(1<<40 + 3))
	require.NoError(t, s.Validate())
	require.Greater(t, s.SumSqHi, uint64(math.MaxUint32))
	require.Greater(t, s.SumSqLo, uint64(math.MaxUint32))
	c := deltalog.Cell{ID: timeid.FromParts(time.Now(), 0x3fff, 1<<48-1), Kind: deltalog.KindMerge,
		Delta: s.Sum, Stats: s, Written: math.MaxInt64}
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, b, 109)
	var back deltalog.Cell
	require.NoError(t, back.UnmarshalBinary(b))
}
