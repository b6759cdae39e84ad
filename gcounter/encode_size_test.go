package gcounter_test

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
)

// longIDs returns n distinct actor ids of crdt.MaxIDLen bytes from k on,
// hashes, so that sorted neighbours share few leading bytes (the encoding
// writes only what differs from the previous id).
func longIDs(k, n int) []crdt.ActorID {
	ids := make([]crdt.ActorID, n)
	for i := range ids {
		h := fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%d", k+i)))
		ids[i] = crdt.ActorID(strings.Repeat(h, 4)[:crdt.MaxIDLen])
	}
	return ids
}

// A union of states each within MaxActors, with the longest ids, passes
// MaxEncodedSize; MarshalBinary refuses it (crdt.ErrTooLarge) instead of
// writing bytes UnmarshalBinary refuses (16,847,136 bytes for 65,536
// actors of 255 bytes). Both counters.
func TestEncodingPastMaxEncodedSizeRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 16 MiB states; the first pass runs it")
	}
	const per = gcounter.MaxMergedActors / 4
	g := gcounter.New()
	p := pncounter.New()
	for part := range 4 {
		one, pn := gcounter.New(), pncounter.New()
		for _, a := range longIDs(part*per, per) {
			require.NoError(t, one.Increment(a, 1))
			require.NoError(t, pn.Apply(a, -1))
		}
		require.NoError(t, g.Merge(one))
		require.NoError(t, p.Merge(pn))
	}
	_, err := g.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	_, err = p.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrTooLarge)
}

// TestEncodingAtMaxEncodedSize: a union of 65,536 actors whose encoding is
// exactly MaxEncodedSize bytes encodes and decodes again; one byte more
// (a count of 200 in place of 1) and MarshalBinary refuses it with
// crdt.ErrTooLarge, as Stats foretells.
func TestEncodingAtMaxEncodedSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 16 MiB states; the first pass runs it")
	}
	const n = gcounter.MaxMergedActors
	id := func(i int) crdt.ActorID {
		s := fmt.Sprintf("%08x", i)
		return crdt.ActorID(s + strings.Repeat("x", crdt.MaxIDLen-len(s)))
	}
	counts := make([]int64, n)
	for i := range counts {
		counts[i] = 1
	}
	build := func() *gcounter.Counter {
		g := gcounter.New()
		for lo := 0; lo < n; lo += gcounter.MaxActors {
			part := gcounter.New()
			for i := lo; i < min(lo+gcounter.MaxActors, n); i++ {
				require.NoError(t, part.Increment(id(i), counts[i]))
			}
			require.NoError(t, g.Merge(part))
		}
		return g
	}
	// Widen counts (1 → 9, 5, 3 or 2 bytes) until the encoding is exact.
	missing := gcounter.MaxEncodedSize - build().Stats().EncodedSize
	require.Positive(t, missing)
	for i := 0; missing > 0; i++ {
		switch {
		case missing >= 8:
			counts[i], missing = 1<<40, missing-8
		case missing >= 4:
			counts[i], missing = 1<<20, missing-4
		case missing >= 2:
			counts[i], missing = 1<<10, missing-2
		default:
			counts[i], missing = 200, missing-1
		}
	}
	g := build()
	require.Equal(t, gcounter.MaxEncodedSize, g.Stats().EncodedSize)
	b, err := g.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, b, gcounter.MaxEncodedSize)
	d := gcounter.New()
	require.NoError(t, d.UnmarshalBinary(b))
	require.True(t, d.Equal(g))

	require.NoError(t, g.Increment(id(n-1), 199))
	require.Equal(t, gcounter.MaxEncodedSize+1, g.Stats().EncodedSize)
	_, err = g.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrTooLarge)
}
