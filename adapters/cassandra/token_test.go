package cassandra

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// tokenCases are the table cases of the golden file and the fuzz corpus.
var tokenCases = []struct {
	name    string
	entries []tokenEntry
}{
	{"one row", []tokenEntry{{"a", 1}}},
	{"unsorted input", []tokenEntry{{"zoë", 1_700_000_000_123_456}, {"actor-1", 42}, {"Z", maxWriteTime}}},
	{"unicode and long ids", []tokenEntry{{"日本-🦀", 7}, {crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen)), 1 << 40}}},
}

// TestTokenGolden locks the token format. Regenerate with:
//
//	go test -run TestTokenGolden -update
func TestTokenGolden(t *testing.T) {
	var buf bytes.Buffer
	for _, tc := range tokenCases {
		b, err := encodeToken(tc.entries)
		require.NoError(t, err, tc.name)
		buf.WriteString(tc.name + ": " + hex.EncodeToString(b) + "\n")
	}
	path := filepath.Join("testdata", "siblings_token.golden")
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
	many := make([]tokenEntry, MaxSiblings+1)
	_, err = encodeToken(many)
	require.ErrorIs(t, err, crdt.ErrTooLarge)

	raw := func(version uint64, body func(b []byte) []byte) []byte {
		return body(appendEnvelope(nil, tokenTag, version))
	}
	pair := func(b []byte, a string, ts uint64) []byte {
		return appendUint(appendStr(appendArrayLen(b, 2), a), ts)
	}
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
		{"version 2", raw(2, func(b []byte) []byte { return pair(appendArrayLen(b, 1), "a", 1) }), crdt.ErrUnsupportedVersion},
		{"version 0", raw(0, func(b []byte) []byte { return pair(appendArrayLen(b, 1), "a", 1) }), crdt.ErrUnsupportedVersion},
		{"empty list", raw(1, func(b []byte) []byte { return appendArrayLen(b, 0) }), crdt.ErrCorruptEncoding},
		{"unsorted", raw(1, func(b []byte) []byte { return pair(pair(appendArrayLen(b, 2), "b", 1), "a", 1) }), crdt.ErrCorruptEncoding},
		{"duplicate", raw(1, func(b []byte) []byte { return pair(pair(appendArrayLen(b, 2), "a", 1), "a", 2) }), crdt.ErrCorruptEncoding},
		{"zero ts", raw(1, func(b []byte) []byte { return pair(appendArrayLen(b, 1), "a", 0) }), crdt.ErrCorruptEncoding},
		{"ts above int64", raw(1, func(b []byte) []byte { return pair(appendArrayLen(b, 1), "a", math.MaxUint64) }), crdt.ErrCorruptEncoding},
		{"negative ts", raw(1, func(b []byte) []byte { return append(appendStr(appendArrayLen(appendArrayLen(b, 1), 2), "a"), 0xff) }), crdt.ErrCorruptEncoding},
		{"triple", raw(1, func(b []byte) []byte { return appendUint(pair(appendArrayLen(appendArrayLen(b, 1), 3), "a", 1), 1) }), crdt.ErrCorruptEncoding},
		{"single", raw(1, func(b []byte) []byte { return appendStr(appendArrayLen(appendArrayLen(b, 1), 1), "a") }), crdt.ErrCorruptEncoding},
		{"bad actor", raw(1, func(b []byte) []byte { return pair(appendArrayLen(b, 1), "a\x00", 1) }), crdt.ErrCorruptEncoding},
		{"empty actor", raw(1, func(b []byte) []byte { return pair(appendArrayLen(b, 1), "", 1) }), crdt.ErrCorruptEncoding},
		{"long actor", raw(1, func(b []byte) []byte { return pair(appendArrayLen(b, 1), strings.Repeat("a", crdt.MaxIDLen+1), 1) }), crdt.ErrCorruptEncoding},
		{"non-minimal uint", raw(1, func(b []byte) []byte {
			return append(appendStr(appendArrayLen(appendArrayLen(b, 1), 2), "a"), mpUint8, 5)
		}), crdt.ErrCorruptEncoding},
		{"non-minimal str", raw(1, func(b []byte) []byte { return append(appendArrayLen(appendArrayLen(b, 1), 2), mpStr8, 1, 'a', 1) }), crdt.ErrCorruptEncoding},
		{"non-minimal array", raw(1, func(b []byte) []byte { return pair(append(b, mpArray16, 0, 1), "a", 1) }), crdt.ErrCorruptEncoding},
		{"too many", raw(1, func(b []byte) []byte {
			b = appendArrayLen(b, MaxSiblings+1)
			for i := 0; i <= MaxSiblings; i++ {
				b = pair(b, "a", 1)
			}
			return b
		}), crdt.ErrTooLarge},
		{"other type", appendArrayLen(appendEnvelope(nil, "gcounter", 1), 0), crdt.ErrTypeMismatch},
		{"memory store token", []byte{'m', 1, 2}, crdt.ErrCorruptEncoding},
		{"oversized", make([]byte, MaxTokenSize+1), crdt.ErrTooLarge},
	} {
		_, err := decodeToken(c.b)
		require.ErrorIs(t, err, c.want, c.name)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "%s: every refused token is malformed", c.name)
	}
}

// isDecodeSentinel reports whether err wraps one of the decoding
// sentinels.
func isDecodeSentinel(err error) bool {
	for _, s := range []error{crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch, crdt.ErrUnsupportedVersion, crdt.ErrTooLarge} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// TestTokenIsMsgpack decodes tokens with an independent msgpack decoder:
// the envelope and entries are the documented layout.
func TestTokenIsMsgpack(t *testing.T) {
	for _, tc := range tokenCases {
		b, err := encodeToken(tc.entries)
		require.NoError(t, err)
		var v []any
		require.NoError(t, msgpack.Unmarshal(b, &v), tc.name)
		require.Len(t, v, 3)
		require.Equal(t, tokenTag, v[0])
		require.EqualValues(t, TokenFormatVersion, v[1])
		body := v[2].([]any)
		require.Len(t, body, len(tc.entries))
		for i, e := range body {
			pair := e.([]any)
			got, err := decodeToken(b)
			require.NoError(t, err)
			require.Equal(t, string(got[i].actor), pair[0])
			require.EqualValues(t, got[i].ts, pair[1])
		}
	}
	// Every header size the encoder has: a 16-entry body (array16), a
	// 40-byte actor (str8) and each integer width.
	var entries []tokenEntry
	for i, ts := range []int64{1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffffff, 0x100000000, maxWriteTime, 2, 3, 4, 5, 6, 7} {
		entries = append(entries, tokenEntry{crdt.ActorID(fmt.Sprintf("%02d-%s", i, strings.Repeat("x", 38))), ts})
	}
	b, err := encodeToken(entries)
	require.NoError(t, err)
	var v []any
	require.NoError(t, msgpack.Unmarshal(b, &v))
	var again bytes.Buffer
	enc := msgpack.NewEncoder(&again)
	enc.UseCompactInts(true)
	require.NoError(t, enc.Encode(v))
	require.Equal(t, b, again.Bytes(), "the smallest forms, as a msgpack encoder writes them")
	back, err := decodeToken(b)
	require.NoError(t, err)
	require.Equal(t, entries, back)
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

// The msgpack forms the token cases are built from, written by the msgpack
// library rather than by the encoder under test.
const (
	mpUint8   = 0xcc
	mpStr8    = 0xd9
	mpArray16 = 0xdc
)

func appendMsgpack(b []byte, write func(*msgpack.Encoder) error) []byte {
	var buf bytes.Buffer
	if err := write(msgpack.NewEncoder(&buf)); err != nil {
		panic(err)
	}
	return append(b, buf.Bytes()...)
}

func appendArrayLen(b []byte, n int) []byte {
	return appendMsgpack(b, func(e *msgpack.Encoder) error { return e.EncodeArrayLen(n) })
}

func appendStr(b []byte, s string) []byte {
	return appendMsgpack(b, func(e *msgpack.Encoder) error { return e.EncodeString(s) })
}

func appendUint(b []byte, v uint64) []byte {
	return appendMsgpack(b, func(e *msgpack.Encoder) error { return e.EncodeUint(v) })
}

func appendEnvelope(b []byte, tag string, version uint64) []byte {
	return appendUint(appendStr(appendArrayLen(b, crdt.EnvelopeLen), tag), version)
}
