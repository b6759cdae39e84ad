package cassandra

import (
	"bytes"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// tokenCases are the table cases of the golden file and the fuzz corpus.
var tokenCases = []struct {
	name    string
	entries []tokenEntry
}{
	{"one row", []tokenEntry{{"a", 1}}},
	{"unsorted input", []tokenEntry{{"zoë", 1_700_000_000_123_456}, {"actor-1", 42}, {"Z", math.MaxInt64}}},
	{"unicode and long ids", []tokenEntry{{"日本-🦀", 7}, {crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen)), 1 << 40}}},
}

// TestTokenGolden locks the ledger token format. Regenerate with:
//
//	go test -run TestTokenGolden -update
func TestTokenGolden(t *testing.T) {
	var buf bytes.Buffer
	for _, tc := range tokenCases {
		b, err := encodeToken(tc.entries)
		require.NoError(t, err, tc.name)
		buf.WriteString(tc.name + ": " + hex.EncodeToString(b) + "\n")
	}
	path := filepath.Join("testdata", "ledger_token.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), buf.String())
}

func TestTokenRoundTripSorted(t *testing.T) {
	for _, tc := range tokenCases {
		b, err := encodeToken(tc.entries)
		require.NoError(t, err)
		got, err := decodeToken(b)
		require.NoError(t, err)
		require.ElementsMatch(t, tc.entries, got, tc.name)
		for i := 1; i < len(got); i++ {
			require.Less(t, got[i-1].actor, got[i].actor, "sorted by actor")
		}
	}
	b, err := encodeToken(nil)
	require.NoError(t, err)
	require.Nil(t, b, "no rows: nil token")
	got, err := decodeToken(nil)
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestTokenErrors(t *testing.T) {
	for _, bad := range [][]tokenEntry{
		{{"a", 0}},
		{{"a", -5}},
		{{"a", 1}, {"a", 2}},
	} {
		_, err := encodeToken(bad)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "%v", bad)
	}
	_, err := encodeToken([]tokenEntry{{"", 1}})
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	many := make([]tokenEntry, MaxActorRows+1)
	_, err = encodeToken(many)
	require.ErrorIs(t, err, crdt.ErrTooLarge)

	raw := func(version uint64, body func(e *wire.Encoder)) []byte {
		e := wire.NewEncoder(tokenTag, version)
		body(e)
		b, err := e.Bytes()
		require.NoError(t, err)
		return b
	}
	pair := func(e *wire.Encoder, a string, ts int64) { e.ArrayLen(2); e.String(a); e.Int(ts) }
	valid, err := encodeToken([]tokenEntry{{"a", 1}})
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"garbage", []byte("not a token"), crdt.ErrCorruptEncoding},
		{"old 8-byte format", []byte{0, 0, 0, 0, 0, 0, 0, 1}, crdt.ErrCorruptEncoding},
		{"truncated", valid[:len(valid)-1], crdt.ErrCorruptEncoding},
		{"trailing", append(bytes.Clone(valid), 0), crdt.ErrCorruptEncoding},
		{"version 2", raw(2, func(e *wire.Encoder) { e.ArrayLen(1); pair(e, "a", 1) }), crdt.ErrUnsupportedVersion},
		{"empty list", raw(1, func(e *wire.Encoder) { e.ArrayLen(0) }), crdt.ErrCorruptEncoding},
		{"unsorted", raw(1, func(e *wire.Encoder) { e.ArrayLen(2); pair(e, "b", 1); pair(e, "a", 1) }), crdt.ErrCorruptEncoding},
		{"duplicate", raw(1, func(e *wire.Encoder) { e.ArrayLen(2); pair(e, "a", 1); pair(e, "a", 2) }), crdt.ErrCorruptEncoding},
		{"zero ts", raw(1, func(e *wire.Encoder) { e.ArrayLen(1); pair(e, "a", 0) }), crdt.ErrCorruptEncoding},
		{"negative ts", raw(1, func(e *wire.Encoder) { e.ArrayLen(1); pair(e, "a", -1) }), crdt.ErrCorruptEncoding},
		{"triple", raw(1, func(e *wire.Encoder) { e.ArrayLen(1); e.ArrayLen(3); e.String("a"); e.Int(1); e.Int(1) }), crdt.ErrTooLarge},
		{"single", raw(1, func(e *wire.Encoder) { e.ArrayLen(1); e.ArrayLen(1); e.String("a") }), crdt.ErrCorruptEncoding},
		{"bad actor", raw(1, func(e *wire.Encoder) { e.ArrayLen(1); pair(e, "a\x00", 1) }), crdt.ErrCorruptEncoding},
		{"too many", raw(1, func(e *wire.Encoder) {
			e.ArrayLen(MaxActorRows + 1)
			for i := 0; i <= MaxActorRows; i++ {
				pair(e, "a", 1)
			}
		}), crdt.ErrTooLarge},
		{"other type", func() []byte {
			e := wire.NewEncoder(crdt.TagGCounter, 1)
			e.ArrayLen(0)
			b, _ := e.Bytes()
			return b
		}(), crdt.ErrTypeMismatch},
		{"oversized", make([]byte, MaxTokenSize+1), crdt.ErrTooLarge},
	} {
		_, err := decodeToken(c.b)
		require.ErrorIs(t, err, c.want, c.name)
	}
}

// FuzzToken: decoding never panics; whatever decodes re-encodes to the same
// bytes (the format is canonical); encoding is deterministic. Run:
//
//	go test -run '^$' -fuzz FuzzToken
func FuzzToken(f *testing.F) {
	for _, tc := range tokenCases {
		b, err := encodeToken(tc.entries)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := decodeToken(b)
		if err != nil {
			require.True(t, isDecodeSentinel(err), "unexpected error class: %v", err)
			return
		}
		enc, err := encodeToken(entries)
		require.NoError(t, err)
		if len(b) == 0 {
			require.Nil(t, enc)
			return
		}
		require.Equal(t, b, enc, "decode then encode gives the input back")
		again, err := encodeToken(entries)
		require.NoError(t, err)
		require.Equal(t, enc, again)
		back, err := decodeToken(enc)
		require.NoError(t, err)
		require.Equal(t, entries, back)
	})
}
