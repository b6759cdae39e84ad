package cassandra

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// cassandra40Accepts models what Cassandra 4.0 accepts as a quoted keyspace
// or table name (SchemaConstants.isValidName: \w{1,48}, ASCII; CREATE
// KEYSPACE refuses the system keyspaces).
func cassandra40Accepts(name string) bool {
	return regexp.MustCompile(`^[A-Za-z0-9_]{1,48}$`).MatchString(name) && !slices.Contains(systemKeyspaces, name)
}

// TestIdentifiersAgainstCassandra40: every name of up to 3
// characters over an alphabet of the classes that matter, and lengths
// around 48. The adapter never accepts a name Cassandra refuses; what it
// refuses that Cassandra takes (quoted) is only upper case or a leading
// digit or underscore, as CheckIdentifier documents. Every refusal, through
// New, Schema (keyspace and prefix) and CreateKeyspaceStatement, wraps
// crdt.ErrInvalidIdentifier and sends nothing (nil session).
func TestIdentifiersAgainstCassandra40(t *testing.T) {
	alphabet := []string{"a", "z", "A", "0", "9", "_", "-", ".", `"`, "'", " ", ";", "\x00", "é", "\xff"}
	names := []string{""}
	for l := 1; l <= 3; l++ {
		var next []string
		for _, p := range names {
			if len(p) == l-1 || l == 1 {
				for _, c := range alphabet {
					next = append(next, p+c)
				}
			}
		}
		names = append(names, next...)
	}
	for _, n := range []int{47, 48, 49, 64} {
		names = append(names, "k"+strings.Repeat("a", n-1), "K"+strings.Repeat("a", n-1))
	}
	names = append(names, systemKeyspaces...)
	names = append(names, "select", "from", "token", "ks_1")
	var refusedButCassandraTakes []string
	for _, name := range names {
		err := CheckIdentifier(name)
		if err == nil {
			require.True(t, cassandra40Accepts(name), "%q accepted, Cassandra 4.0 refuses it", name)
			_, err := newDB(nil, name, Options{})
			require.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", name)
		_, err = newDB(nil, name, Options{})
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", name)
		_, err = Schema(name, "")
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", name)
		_, err = CreateKeyspaceStatement(name, 3)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", name)
		if cassandra40Accepts(name) {
			refusedButCassandraTakes = append(refusedButCassandraTakes, name)
			require.True(t, strings.ContainsAny(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") || name[0] == '_' || name[0] >= '0' && name[0] <= '9', "%q", name)
		}
	}
	// Prefixes: a valid prefix gives two valid names up to 48 characters.
	for _, prefix := range names {
		_, err := newDB(nil, "ks", Options{TablePrefix: prefix})
		want := prefix == "" || CheckIdentifier(prefix+"siblings") == nil && CheckIdentifier(prefix+"partitions") == nil
		require.Equal(t, want, err == nil, "prefix %q: %v", prefix, err)
		if err != nil {
			require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "prefix %q", prefix)
		}
	}
	t.Logf("%d names: %d refused that Cassandra 4.0 takes quoted (upper case, leading digit or _), none accepted that it refuses", len(names), len(refusedButCassandraTakes))
}

// TestConsistencyMultiDC checks every accepted level pair against
// replica arithmetic on several multi-DC topologies, read and write
// coordinated in the same DC (the adapter's stated LOCAL_QUORUM
// assumption): an accepted pair must always overlap. Every configuration
// of the five operations over the eleven levels is tried through newDB.
func TestConsistencyMultiDC(t *testing.T) {
	levels := []gocql.Consistency{gocql.Any, gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All, gocql.LocalQuorum, gocql.EachQuorum, gocql.Serial, gocql.LocalSerial, gocql.LocalOne}
	topologies := [][]int{{1}, {3}, {5}, {2, 2}, {3, 3}, {3, 1}, {1, 1, 1}, {1, 3}}
	// may reports whether replica set s (bit i: replica i) satisfies c
	// with coordinator DC d.
	may := func(c gocql.Consistency, dcs []int, d int, s int) (bool, bool) {
		total, in := 0, make([]int, len(dcs))
		idx := 0
		for i, rf := range dcs {
			for range rf {
				if s&(1<<idx) != 0 {
					in[i]++
					total++
				}
				idx++
			}
		}
		n := 0
		for _, rf := range dcs {
			n += rf
		}
		switch c {
		case gocql.One:
			return total >= 1, true
		case gocql.Two:
			return total >= 2, n >= 2
		case gocql.Three:
			return total >= 3, n >= 3
		case gocql.LocalOne:
			return in[d] >= 1, true
		case gocql.Quorum:
			return total >= n/2+1, true
		case gocql.LocalQuorum:
			return in[d] >= dcs[d]/2+1, true
		case gocql.EachQuorum:
			for i, rf := range dcs {
				if in[i] < rf/2+1 {
					return false, true
				}
			}
			return true, true
		case gocql.All:
			return total == n, true
		}
		return false, false
	}
	alwaysOverlap := func(r, w gocql.Consistency) (bool, string) {
		for _, dcs := range topologies {
			n := 0
			for _, rf := range dcs {
				n += rf
			}
			for d := range dcs {
				for rs := 0; rs < 1<<n; rs++ {
					okR, possible := may(r, dcs, d, rs)
					if !possible || !okR {
						continue
					}
					for ws := 0; ws < 1<<n; ws++ {
						if okW, _ := may(w, dcs, d, ws); okW && rs&ws == 0 {
							return false, fmt.Sprintf("DCs %v, coordinator DC %d: read %b, write %b", dcs, d, rs, ws)
						}
					}
				}
			}
		}
		return true, ""
	}
	accepted := 0
	for _, fr := range levels {
		for _, pw := range levels {
			for _, rd := range levels {
				for _, ap := range levels {
					for _, rc := range levels {
						l := map[Op]gocql.Consistency{OpSiblingsFetch: fr, OpSiblingsPut: pw, OpPartitionRead: rd, OpPartitionApply: ap, OpPartitionReadComplete: rc}
						_, err := newDB(nil, "ks", Options{Consistency: l})
						require.Equal(t, CheckConsistency(l) == nil, err == nil)
						if err != nil {
							require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%v", l)
							continue
						}
						accepted++
					}
				}
			}
		}
	}
	for _, r := range levels {
		for _, w := range levels {
			if r == gocql.Any || w == gocql.Any || !overlaps(r, w) {
				continue
			}
			ok, why := alwaysOverlap(r, w)
			require.True(t, ok, "overlaps(%v, %v) but %s", r, w, why)
		}
	}
	t.Logf("%d of %d configurations accepted", accepted, len(levels)*len(levels)*len(levels)*len(levels)*len(levels))
}
