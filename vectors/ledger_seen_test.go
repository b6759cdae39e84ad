package vectors

// ledger.json's stored sightings (SPEC.md 6.9): their encoding, their key
// and the encodings a decoder refuses. Checked both ways, as the records
// are: the real codec (ledger.Sightings, ledger.SeenKey) against every
// case, and an independent encoder, decoder and key (dvEncSightings,
// dvDecodeSightings, dvSeenKey) against the valid ones.

import (
	"encoding"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

type ledgerSeenVec struct {
	Name      string   `json:"name"`
	Sightings []dvSeen `json:"sightings"`
	Hex       string   `json:"hex"`
}

type ledgerSeenKeyVec struct {
	Key     string `json:"key"`
	SeenKey string `json:"seen_key"`
}

type ledgerSeenRefusalVec struct {
	Name      string   `json:"name"`
	Sightings []dvSeen `json:"sightings"`
	Error     string   `json:"error"`
}

// ledgerSeenCases are valid sightings, in the order given (an encoder
// sorts them).
var ledgerSeenCases = []struct {
	name string
	s    ledger.Sightings
}{
	{"none", ledger.Sightings{}},
	{"one writer", ledger.Sightings{{Writer: "svc~abcdefgh", Version: 1, At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	{"two writers, given out of order", ledger.Sightings{
		{Writer: "svc~bbbbbbbb", Version: 3, At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Writer: "svc~aaaaaaaa", Version: 7, At: time.Date(2030, 1, 1, 1, 0, 0, 1, time.UTC)}}},
	{"one writer at two versions", ledger.Sightings{
		{Writer: "w", Version: 300, At: time.Unix(0, 65535).UTC()},
		{Writer: "w", Version: 2, At: time.Unix(0, 1).UTC()}}},
	{"the largest version and time, the longest writer", ledger.Sightings{
		{Writer: crdt.ActorID(strings.Repeat("w", crdt.MaxIDLen)), Version: 1<<64 - 2, At: time.Unix(0, math.MaxInt64).UTC()}}},
}

var ledgerSeenKeyCases = []string{"acct", "acct/0", "", "wallet-7", "a\x00b"}

// dvSightings converts sightings to the vectors' form, sorted as encoded.
func dvSightings(s ledger.Sightings) []dvSeen {
	out := []dvSeen{}
	for _, x := range s {
		out = append(out, dvSeen{Writer: string(x.Writer), Version: strconv.FormatUint(x.Version, 10), At: x.At.UTC().Format(time.RFC3339Nano)})
	}
	return out
}

// genLedgerSeenVectors fills v's sightings sections.
func genLedgerSeenVectors(t *testing.T, v *ledgerVectors) {
	for _, c := range ledgerSeenCases {
		b, err := c.s.MarshalBinary()
		require.NoError(t, err, c.name)
		v.Sightings = append(v.Sightings, ledgerSeenVec{Name: c.name, Sightings: dvDecodeSightings(b), Hex: hex.EncodeToString(b)})
	}
	for _, k := range ledgerSeenKeyCases {
		v.SeenKeys = append(v.SeenKeys, ledgerSeenKeyVec{Key: k, SeenKey: ledger.SeenKey(k)})
	}
	at := dvT0.UnixNano()
	enc := func(tag string, version uint64, body func(dvMP) dvMP) string {
		return hex.EncodeToString(body(dvEnvelope(tag, version)))
	}
	one := func(w string, version uint64, at int64) func(dvMP) dvMP {
		return func(m dvMP) dvMP { return m.arr(1).arr(3).str(w).uint(version).int(at) }
	}
	two := func(w1 string, v1 uint64, w2 string, v2 uint64) func(dvMP) dvMP {
		return func(m dvMP) dvMP { return m.arr(2).arr(3).str(w1).uint(v1).int(at).arr(3).str(w2).uint(v2).int(at) }
	}
	bad := []struct{ name, hex string }{
		{"version 0", enc("ledger.seen", 1, one("w", 0, at))},
		{"version 2^64-1, above the largest a writer reaches (2^64-2)", enc("ledger.seen", 1, one("w", 1<<64-1, at))},
		{"a time of 0", enc("ledger.seen", 1, one("w", 1, 0))},
		{"a time before 1970", enc("ledger.seen", 1, one("w", 1, -1))},
		{"an empty writer", enc("ledger.seen", 1, one("", 1, at))},
		{"a control character in the writer", enc("ledger.seen", 1, one("w\x01", 1, at))},
		{"writers out of order", enc("ledger.seen", 1, two("b", 1, "a", 1))},
		{"one writer's versions out of order", enc("ledger.seen", 1, two("a", 2, "a", 1))},
		{"one writer and version twice", enc("ledger.seen", 1, two("a", 1, "a", 1))},
		{"a sighting of two fields", enc("ledger.seen", 1, func(m dvMP) dvMP { return m.arr(1).arr(2).str("w").uint(1) })},
		{"a sighting of four fields", enc("ledger.seen", 1, func(m dvMP) dvMP { return m.arr(1).arr(4).str("w").uint(1).int(at).uint(1) })},
		{"a body that is not an array", enc("ledger.seen", 1, func(m dvMP) dvMP { return m.str("w") })},
		{"a version not in its smallest form", enc("ledger.seen", 1, func(m dvMP) dvMP { return m.arr(1).arr(3).str("w").raw(0xcd, 0x00, 0x07).int(at) })},
		{"a trailing byte", enc("ledger.seen", 1, func(m dvMP) dvMP { return one("w", 1, at)(m).raw(0xc0) })},
		{"65,537 sightings (the header alone)", enc("ledger.seen", 1, func(m dvMP) dvMP { return m.raw(0xdd, 0x00, 0x01, 0x00, 0x01) })},
		{"format version 2", enc("ledger.seen", 2, one("w", 1, at))},
		{"another type's tag", enc("ledger.txn", 1, one("w", 1, at))},
	}
	for _, c := range bad {
		var s ledger.Sightings
		err := s.UnmarshalBinary(dvUnhex(c.hex))
		require.Error(t, err, c.name)
		v.SeenInvalid = append(v.SeenInvalid, ledgerBadVec{Name: c.name, Hex: c.hex, Error: dvKind(err)})
	}
	ok := ledger.Sighting{Writer: "w", Version: 1, At: dvT0}
	refuse := []struct {
		name string
		s    ledger.Sightings
	}{
		{"version 0", ledger.Sightings{{Writer: "w", At: dvT0}}},
		{"version 2^64-1", ledger.Sightings{{Writer: "w", Version: 1<<64 - 1, At: dvT0}}},
		{"a time of 0", ledger.Sightings{{Writer: "w", Version: 1, At: time.Unix(0, 0).UTC()}}},
		{"a time in 1600, whose Unix nanoseconds wrap to 2184", ledger.Sightings{{Writer: "w", Version: 1, At: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		{"a time in 2300, past int64 nanoseconds", ledger.Sightings{{Writer: "w", Version: 1, At: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		{"an empty writer", ledger.Sightings{{Version: 1, At: dvT0}}},
		{"a writer of 256 bytes", ledger.Sightings{{Writer: crdt.ActorID(strings.Repeat("w", crdt.MaxIDLen+1)), Version: 1, At: dvT0}}},
		{"one writer and version twice", ledger.Sightings{ok, {Writer: "w", Version: 1, At: dvT0.Add(time.Second)}}},
	}
	for _, c := range refuse {
		b, err := c.s.MarshalBinary()
		require.Error(t, err, c.name)
		require.Nil(t, b, c.name)
		v.SeenRefusals = append(v.SeenRefusals, ledgerSeenRefusalVec{Name: c.name, Sightings: dvSightings(c.s), Error: dvKind(err)})
	}
}

// checkLedgerSeenVectors checks v's sightings sections.
func checkLedgerSeenVectors(t *testing.T, v ledgerVectors) {
	require.NotEmpty(t, v.Sightings)
	require.NotEmpty(t, v.SeenKeys)
	require.NotEmpty(t, v.SeenInvalid)
	require.NotEmpty(t, v.SeenRefusals)
	for _, c := range v.Sightings {
		t.Run("sightings/"+c.Name, func(t *testing.T) {
			b := dvUnhex(c.Hex)
			var s ledger.Sightings
			require.NoError(t, s.UnmarshalBinary(b), c.Name)
			require.Equal(t, c.Sightings, dvSightings(s), "%s: decoded", c.Name)
			require.Equal(t, c.Sightings, dvDecodeSightings(b), "%s: the independent decoder", c.Name)
			again, err := s.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, c.Hex, hex.EncodeToString(again), "%s: re-encoded", c.Name)
			require.Equal(t, c.Hex, hex.EncodeToString(dvEncSightings(c.Sightings)), "%s: the independent encoder", c.Name)
		})
	}
	for _, k := range v.SeenKeys {
		require.Equal(t, k.SeenKey, ledger.SeenKey(k.Key), "%q", k.Key)
		require.Equal(t, k.SeenKey, dvSeenKey(k.Key), "%q: the independent key", k.Key)
		require.True(t, ledger.IsSeenKey(k.SeenKey), "%q", k.Key)
	}
	for _, c := range v.SeenRefusals {
		t.Run("sightings refused/"+c.Name, func(t *testing.T) {
			var s ledger.Sightings
			for _, x := range c.Sightings {
				version, err := strconv.ParseUint(x.Version, 10, 64)
				require.NoError(t, err)
				at, err := time.Parse(time.RFC3339Nano, x.At)
				require.NoError(t, err)
				s = append(s, ledger.Sighting{Writer: crdt.ActorID(x.Writer), Version: version, At: at})
			}
			requireRefused(t, c.Name, c.Error, s)
		})
	}
	requireInvalid(t, "sightings invalid/", v.SeenInvalid, func() encoding.BinaryUnmarshaler { return new(ledger.Sightings) })
}
