package timeid_test

import (
	"bytes"
	"math/rand"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/timeid"
)

var base = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

func TestTimeAndOrder(t *testing.T) {
	at := base.Add(123456789 * time.Nanosecond)
	id := timeid.New(at)
	require.NoError(t, id.Validate())
	require.Equal(t, at.Truncate(100*time.Nanosecond), id.Time())
	require.Equal(t, uuid.UUID(id).Version(), uuid.Version(1))
	// The uuid package agrees on the timestamp.
	sec, nsec := uuid.UUID(id).Time().UnixTime()
	require.Equal(t, id.Time(), time.Unix(sec, nsec).UTC())

	p, err := timeid.Parse(id.String())
	require.NoError(t, err)
	require.Equal(t, id, p)
	_, err = timeid.Parse(uuid.NewString()) // version 4
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = timeid.Parse("nope")
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	require.ErrorIs(t, timeid.ID{}.Validate(), crdt.ErrInvalidTxnID)
	require.True(t, timeid.ID{}.IsZero())
	require.False(t, id.IsZero())

	// Timestamp first, whatever the other bytes say.
	early := timeid.FromParts(base, 0x3fff, 0xffffffffffff)
	late := timeid.FromParts(base.Add(100*time.Nanosecond), 0, 0)
	require.Equal(t, -1, early.Compare(late))
	require.Equal(t, 1, late.Compare(early))
	// Equal timestamps: the tail compares as signed bytes (Cassandra's
	// order). Byte 8 carries the variant bits and is equal here; byte 9
	// decides, and 0xff is -1 as a signed byte.
	a := timeid.FromParts(base, 0x0001, 0) // byte 9 = 0x01
	b := timeid.FromParts(base, 0x00ff, 0) // byte 9 = 0xff (-1 signed)
	require.Equal(t, 1, a.Compare(b), "0x01 > 0xff as signed bytes")
	require.Equal(t, 0, a.Compare(a))
	next, ok := a.NextTick()
	require.True(t, ok)
	require.Equal(t, 1, next.Compare(a))
	require.Equal(t, 100*time.Nanosecond, next.Time().Sub(a.Time()))
}

// TestNextTickAtTheLargestTimestamp: the 60-bit timestamp ends in 5236;
// NextTick there reports none instead of wrapping to 1582.
func TestNextTickAtTheLargestTimestamp(t *testing.T) {
	last := timeid.FromParts(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), 1, 1) // clamped
	require.Equal(t, 5236, last.Time().Year())
	next, ok := last.NextTick()
	require.False(t, ok)
	require.Equal(t, last, next)
	before := last
	before[3]-- // the timestamp's low byte (0xff): one tick earlier
	require.Equal(t, -1, before.Compare(last))
	next, ok = before.NextTick()
	require.True(t, ok)
	require.Equal(t, last, next)
}

// TestParseCanonicalOnly: Parse reads the form String writes, and no other.
func TestParseCanonicalOnly(t *testing.T) {
	const s = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	id, err := timeid.Parse(s)
	require.NoError(t, err)
	require.Equal(t, s, id.String())
	for _, other := range []string{
		"6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
		"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
		"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"6ba7b8109dad11d180b400c04fd430c8",
	} {
		_, err := timeid.Parse(other)
		require.ErrorIs(t, err, crdt.ErrInvalidTxnID, other)
	}
}

// TestFromPartsDropsHighBits: only the low 48 bits of node and 14 of
// clockSeq are kept.
func TestFromPartsDropsHighBits(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, timeid.FromParts(at, 1, 5), timeid.FromParts(at, 1, 0xffff<<48|5))
	require.Equal(t, timeid.FromParts(at, 1, 5), timeid.FromParts(at, 0xc001, 5))
}

// randomID returns 16 bytes drawn to make ties likely: a few timestamps, a
// few values per tail byte, and sometimes arbitrary bytes (an invalid id).
func randomID(rng *rand.Rand) timeid.ID {
	var id timeid.ID
	if rng.Intn(4) == 0 {
		rng.Read(id[:])
		return id
	}
	pick := []byte{0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff}
	var tail [8]byte
	for i := range tail {
		tail[i] = pick[rng.Intn(len(pick))]
	}
	at := base.Add(time.Duration(rng.Intn(3)) * 100 * time.Nanosecond)
	id = timeid.FromParts(at, uint16(tail[0])<<8|uint16(tail[1]), uint64(tail[2])<<40|uint64(tail[7]))
	if rng.Intn(3) == 0 {
		id[6] = id[6]&0x0f | byte(rng.Intn(16))<<4 // another version nibble
	}
	if rng.Intn(3) == 0 {
		id[8] = tail[3] // another variant
	}
	return id
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// TestKeyOrderIsCompareOrder: the ascending encoding orders as Compare, the
// descending one in reverse, and both decode to the id.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./timeid -run TestKeyOrderIsCompareOrder
func TestKeyOrderIsCompareOrder(t *testing.T) {
	seed := proptest.Seed()
	n := proptest.Scale(20_000)
	t.Logf("seed %d, %d pairs; replay: %s", seed, n, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	for range n {
		a, b := randomID(rng), randomID(rng)
		ka, kb := timeid.AppendAscending(nil, a), timeid.AppendAscending(nil, b)
		da, db := timeid.AppendDescending([]byte("p"), a)[1:], timeid.AppendDescending(nil, b)
		require.Len(t, ka, timeid.KeyLen)
		want := a.Compare(b)
		require.Equal(t, want, sign(bytes.Compare(ka, kb)), "ascending %s vs %s", a, b)
		require.Equal(t, -want, sign(bytes.Compare(da, db)), "descending %s vs %s", a, b)
		got, err := timeid.DecodeAscending(ka)
		require.NoError(t, err)
		require.Equal(t, a, got)
		got, err = timeid.DecodeDescending(da)
		require.NoError(t, err)
		require.Equal(t, a, got)
	}
}

func TestDecodeRefusesWrongLength(t *testing.T) {
	for _, b := range [][]byte{nil, make([]byte, 15), make([]byte, 17)} {
		_, err := timeid.DecodeAscending(b)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		_, err = timeid.DecodeDescending(b)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	}
}

// FuzzKey: every 16 bytes decode, and re-encode to themselves.
//
//	go test ./timeid -run '^$' -fuzz FuzzKey -fuzztime 30s
func FuzzKey(f *testing.F) {
	f.Add(timeid.AppendAscending(nil, timeid.FromParts(base, 1, 2)))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := timeid.DecodeAscending(b)
		if len(b) != timeid.KeyLen {
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			return
		}
		require.NoError(t, err)
		require.Equal(t, b, timeid.AppendAscending(nil, id))
		id2, err := timeid.DecodeDescending(b)
		require.NoError(t, err)
		require.Equal(t, b, timeid.AppendDescending(nil, id2))
	})
}
