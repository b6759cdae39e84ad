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
// writing bytes UnmarshalBinary refuses (found by a review: 16,847,136
// bytes for 65,536 actors of 255 bytes). Both counters.
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
