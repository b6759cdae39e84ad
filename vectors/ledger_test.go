package vectors

// ledger.json: the transaction record of SPEC.md 6.11, its encoding, its
// key, and the encodings a decoder refuses. Checked both ways: the real
// codec (package ledger) against every case, and an independent encoder
// (dvEncRecord, dvRecordKey) against the valid ones.

import (
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

func init() {
	vectorFiles["ledger.json"] = struct {
		gen   func(t *testing.T) any
		check func(t *testing.T, raw []byte)
	}{genLedgerVectors, checkLedgerVectors}
}

type ledgerVectors struct {
	Comment string            `json:"comment"`
	Records []ledgerRecordVec `json:"records"`
	Keys    []ledgerKeyVec    `json:"keys"`
	Invalid []ledgerBadVec    `json:"invalid"`
	// Refusals are records an encoder refuses (SPEC.md 2.3): no ledger
	// writes them, and no decoder accepts them.
	Refusals []ledgerRefusalVec `json:"encoder_refusals"`
	// The stored sightings of SPEC.md 6.9 (ledger_seen_test.go): valid
	// encodings, keys, encodings a decoder refuses and sightings an
	// encoder refuses.
	Sightings    []ledgerSeenVec        `json:"sightings"`
	SeenKeys     []ledgerSeenKeyVec     `json:"seen_keys"`
	SeenInvalid  []ledgerBadVec         `json:"sightings_invalid"`
	SeenRefusals []ledgerSeenRefusalVec `json:"sightings_encoder_refusals"`
}

type ledgerRefusalVec struct {
	Name   string   `json:"name"`
	Record dvRecord `json:"record"`
	Error  string   `json:"error"`
}

type ledgerRecordVec struct {
	Name   string   `json:"name"`
	Record dvRecord `json:"record"`
	Hex    string   `json:"hex"`
}

type ledgerKeyVec struct {
	Account string `json:"account"`
	Txn     string `json:"txn"`
	Key     string `json:"key"`
}

type ledgerBadVec struct {
	Name  string `json:"name"`
	Hex   string `json:"hex"`
	Error string `json:"error"`
}

// ledgerRecordCases are the valid records: amounts of every integer size
// and both signs, long ids, times before and after 2262's edge.
var ledgerRecordCases = []struct {
	name string
	r    ledger.Record
}{
	{"a credit", ledger.Record{Txn: "pay-0", Amount: 100, Writer: "svc~abcdefgh", At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Version: 1}},
	{"a debit", ledger.Record{Txn: "refund-9", Amount: -40, Writer: "svc~abcdefgh", At: time.Date(2030, 1, 1, 0, 0, 0, 1, time.UTC), Version: 2}},
	{"the largest amount", ledger.Record{Txn: "t", Amount: math.MaxInt64, Writer: "w", At: time.Unix(0, 1).UTC(), Version: 300}},
	{"the smallest debit", ledger.Record{Txn: "t", Amount: -math.MaxInt64, Writer: "w", At: time.Unix(0, math.MaxInt64).UTC(), Version: 70000}},
	{"a one-byte amount at a uint16 time", ledger.Record{Txn: "x", Amount: 1, Writer: "w", At: time.Unix(0, 65535).UTC(), Version: 1 << 33}},
	{"a UUID id, not shortened", ledger.Record{Txn: "3c8f2e10-cd7e-11f0-8de9-0242ac120002", Amount: 7, Writer: "app-1~qrstuvwx", At: time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC), Version: 1<<64 - 2}},
	{"the largest record without a key (555 bytes)", ledgerLargestV1},
	{"a Sharded sub-key's record (version 2)", ledger.Record{Txn: "pay-0", Amount: 100, Writer: "svc~abcdefgh", At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Version: 1, Key: "wallet-7/3"}},
	{"the largest record (812 bytes)", ledgerLargest},
}

// ledgerLargestV1 is the longest record without a key: two ids of 255
// bytes and three integers of 9 bytes, 555 bytes in all. ledgerLargest,
// the longest an encoder writes, adds a key of 255 bytes: 812 bytes, below
// the decoder's cap of 829 (SPEC.md 3.4).
var (
	ledgerLargestV1 = ledger.Record{Txn: crdt.TxnID(strings.Repeat("t", crdt.MaxIDLen)), Amount: -math.MaxInt64, Writer: crdt.ActorID(strings.Repeat("w", crdt.MaxIDLen)), At: time.Unix(0, math.MaxInt64).UTC(), Version: 1<<64 - 2}
	ledgerLargest   = ledger.Record{Txn: ledgerLargestV1.Txn, Amount: ledgerLargestV1.Amount, Writer: ledgerLargestV1.Writer, At: ledgerLargestV1.At, Version: ledgerLargestV1.Version, Key: strings.Repeat("k", crdt.MaxKeyLen)}
)

var ledgerKeyCases = [][2]string{{"acct", "t1"}, {"acct", "t2"}, {"acct/0", "t1"}, {"", "t1"}, {"wallet-7", "order-1"}, {"a\x00b", "c"}, {"a", "b\x00c"}}

func genLedgerVectors(t *testing.T) any {
	v := ledgerVectors{Comment: "SPEC.md 6.11: the ledger's transaction record, its key, and the encodings a decoder refuses (error kinds of SPEC.md 2.3); SPEC.md 6.9: the same for a ledger key's stored sightings."}
	for _, c := range ledgerRecordCases {
		b, err := c.r.MarshalBinary()
		require.NoError(t, err)
		v.Records = append(v.Records, ledgerRecordVec{Name: c.name, Record: *dvDecodeRecord(b), Hex: hex.EncodeToString(b)})
	}
	for _, k := range ledgerKeyCases {
		v.Keys = append(v.Keys, ledgerKeyVec{Account: k[0], Txn: k[1], Key: ledger.RecordKey(k[0], crdt.TxnID(k[1]))})
	}
	at := dvT0.UnixNano()
	enc := func(tag string, version uint64, body func(dvMP) dvMP) string {
		return hex.EncodeToString(body(dvEnvelope(tag, version)))
	}
	rec := func(txn string, amount int64, writer string, at int64) func(dvMP) dvMP {
		return func(m dvMP) dvMP { return m.arr(5).str(txn).int(amount).str(writer).int(at).uint(1) }
	}
	bad := []struct{ name, hex string }{
		{"a zero amount", enc("ledger.txn", 1, rec("t", 0, "w", at))},
		{"the amount -2^63, whose magnitude does not fit", enc("ledger.txn", 1, rec("t", math.MinInt64, "w", at))},
		{"a time of 0", enc("ledger.txn", 1, rec("t", 1, "w", 0))},
		{"a time before 1970", enc("ledger.txn", 1, rec("t", 1, "w", -1))},
		{"an empty transaction id", enc("ledger.txn", 1, rec("", 1, "w", at))},
		{"an empty writer", enc("ledger.txn", 1, rec("t", 1, "", at))},
		{"a control character in the id", enc("ledger.txn", 1, rec("t\x01", 1, "w", at))},
		{"version 0", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(5).str("t").int(1).str("w").int(at).uint(0) })},
		{"version 2^64-1, above the largest a writer reaches (2^64-2)", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(5).str("t").int(1).str("w").int(at).uint(1<<64 - 1) })},
		{"four fields (no version)", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(4).str("t").int(1).str("w").int(at) })},
		{"an array header of 4 before five fields", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(4).str("t").int(1).str("w").int(at).uint(1) })},
		{"an array header of 6 before five fields", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(6).str("t").int(1).str("w").int(at).uint(1) })},
		{"six fields", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(6).str("t").int(1).str("w").int(at).uint(1).int(0) })},
		{"an amount not in its smallest form", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(5).str("t").raw(0xd0, 0x05).str("w").int(at).uint(1) })},
		{"a version not in its smallest form", enc("ledger.txn", 1, func(m dvMP) dvMP { return m.arr(5).str("t").int(1).str("w").int(at).raw(0xcd, 0x00, 0x07) })},
		{"a trailing byte", enc("ledger.txn", 1, func(m dvMP) dvMP { return rec("t", 1, "w", at)(m).raw(0xc0) })},
		{"format version 2 with five fields", enc("ledger.txn", 2, rec("t", 1, "w", at))},
		{"format version 2 with an empty key", enc("ledger.txn", 2, func(m dvMP) dvMP { return m.arr(6).str("t").int(1).str("w").int(at).uint(1).str("") })},
		{"format version 2 with a control character in the key", enc("ledger.txn", 2, func(m dvMP) dvMP { return m.arr(6).str("t").int(1).str("w").int(at).uint(1).str("k\x00") })},
		{"format version 2 with a key of 256 bytes", enc("ledger.txn", 2, func(m dvMP) dvMP {
			return m.arr(6).str("t").int(1).str("w").int(at).uint(1).str(strings.Repeat("k", crdt.MaxKeyLen+1))
		})},
		{"format version 2 with seven fields", enc("ledger.txn", 2, func(m dvMP) dvMP { return m.arr(7).str("t").int(1).str("w").int(at).uint(1).str("k").uint(1) })},
		{"format version 3", enc("ledger.txn", 3, func(m dvMP) dvMP { return m.arr(6).str("t").int(1).str("w").int(at).uint(1).str("k") })},
		{"another type's tag", enc("tpncounter", 1, rec("t", 1, "w", at))},
		{"829 bytes: the largest record and 17 trailing bytes", hex.EncodeToString(ledgerPadded(t, 829))},
		{"830 bytes: the largest record and 18 trailing bytes", hex.EncodeToString(ledgerPadded(t, 830))},
	}
	for _, c := range bad {
		var r ledger.Record
		err := r.UnmarshalBinary(dvUnhex(c.hex))
		require.Error(t, err, c.name)
		v.Invalid = append(v.Invalid, ledgerBadVec{Name: c.name, Hex: c.hex, Error: dvKind(err)})
	}
	ok := ledger.Record{Txn: "t", Amount: 1, Writer: "w", At: dvT0, Version: 1}
	refuse := []struct {
		name string
		edit func(*ledger.Record)
	}{
		{"an empty transaction id", func(r *ledger.Record) { r.Txn = "" }},
		{"a control character in the id", func(r *ledger.Record) { r.Txn = "t\x01" }},
		{"an empty writer", func(r *ledger.Record) { r.Writer = "" }},
		{"a writer of 256 bytes", func(r *ledger.Record) { r.Writer = crdt.ActorID(strings.Repeat("w", crdt.MaxIDLen+1)) }},
		{"a zero amount", func(r *ledger.Record) { r.Amount = 0 }},
		{"the amount -2^63", func(r *ledger.Record) { r.Amount = math.MinInt64 }},
		{"a time of 0", func(r *ledger.Record) { r.At = time.Unix(0, 0).UTC() }},
		{"a time in 1600, whose Unix nanoseconds wrap to 2184", func(r *ledger.Record) { r.At = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"a time in 2300, past int64 nanoseconds", func(r *ledger.Record) { r.At = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"version 0", func(r *ledger.Record) { r.Version = 0 }},
		{"version 2^64-1", func(r *ledger.Record) { r.Version = 1<<64 - 1 }},
		{"a control character in the key", func(r *ledger.Record) { r.Key = "k\x00" }},
		{"a key of 256 bytes", func(r *ledger.Record) { r.Key = strings.Repeat("k", crdt.MaxKeyLen+1) }},
	}
	for _, c := range refuse {
		r := ok
		c.edit(&r)
		_, err := r.MarshalBinary()
		require.Error(t, err, c.name)
		v.Refusals = append(v.Refusals, ledgerRefusalVec{Name: c.name, Record: dvRecord{Txn: string(r.Txn), Amount: dvInt(r.Amount), Writer: string(r.Writer),
			At: r.At.Format(time.RFC3339Nano), Version: strconv.FormatUint(r.Version, 10), Key: r.Key}, Error: dvKind(err)})
	}
	genLedgerSeenVectors(t, &v)
	return v
}

// ledgerPadded is the largest record followed by nil bytes (0xc0), n bytes
// in all: at the cap (829) a decoder refuses it for the trailing bytes
// (corrupt), beyond it for its size (too_large).
func ledgerPadded(t *testing.T, n int) []byte {
	b, err := ledgerLargest.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, b, 812)
	for len(b) < n {
		b = append(b, 0xc0)
	}
	return b
}

func checkLedgerVectors(t *testing.T, raw []byte) {
	var v ledgerVectors
	require.NoError(t, json.Unmarshal(raw, &v))
	require.NotEmpty(t, v.Records)
	require.NotEmpty(t, v.Keys)
	require.NotEmpty(t, v.Invalid)
	for _, c := range v.Records {
		t.Run("record/"+c.Name, func(t *testing.T) {
			b := dvUnhex(c.Hex)
			var r ledger.Record
			require.NoError(t, r.UnmarshalBinary(b), c.Name)
			got := *dvDecodeRecord(b)
			require.Equal(t, c.Record, got, "%s: decoded", c.Name)
			again, err := r.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, c.Hex, hex.EncodeToString(again), "%s: re-encoded", c.Name)
			indep, err := dvEncRecord(&c.Record)
			require.NoError(t, err)
			require.Equal(t, c.Hex, hex.EncodeToString(indep), "%s: the independent encoder", c.Name)
		})
	}
	for _, k := range v.Keys {
		t.Run(fmt.Sprintf("key/%q %q", k.Account, k.Txn), func(t *testing.T) {
			require.Equal(t, k.Key, ledger.RecordKey(k.Account, crdt.TxnID(k.Txn)), "%q %q", k.Account, k.Txn)
			require.Equal(t, k.Key, dvRecordKey(k.Account, k.Txn), "%q %q: the independent key", k.Account, k.Txn)
			require.True(t, ledger.IsRecordKey(k.Key))
		})
	}
	require.NotEmpty(t, v.Refusals)
	for _, c := range v.Refusals {
		t.Run("refused/"+c.Name, func(t *testing.T) {
			at, err := time.Parse(time.RFC3339Nano, c.Record.At)
			require.NoError(t, err)
			version, err := strconv.ParseUint(c.Record.Version, 10, 64)
			require.NoError(t, err)
			r := ledger.Record{Txn: crdt.TxnID(c.Record.Txn), Amount: int64(c.Record.Amount), Writer: crdt.ActorID(c.Record.Writer), At: at, Version: version, Key: c.Record.Key}
			requireRefused(t, c.Name, c.Error, r)
		})
	}
	requireInvalid(t, "invalid/", v.Invalid, func() encoding.BinaryUnmarshaler { return new(ledger.Record) })
	checkLedgerSeenVectors(t, v)
}

// requireRefused requires v's encoder to refuse it with the error kind
// want, returning no bytes.
func requireRefused(t *testing.T, name, want string, v encoding.BinaryMarshaler) {
	t.Helper()
	b, err := v.MarshalBinary()
	require.Error(t, err, name)
	require.Nil(t, b, name)
	require.Equal(t, want, dvKind(err), "%s: %v", name, err)
}

// requireInvalid requires a decoder made by mk to refuse each case with
// its error kind, each in a subtest named prefix and the case's name.
func requireInvalid(t *testing.T, prefix string, cases []ledgerBadVec, mk func() encoding.BinaryUnmarshaler) {
	for _, c := range cases {
		t.Run(prefix+c.Name, func(t *testing.T) {
			err := mk().UnmarshalBinary(dvUnhex(c.Hex))
			require.Error(t, err, c.Name)
			require.Equal(t, c.Error, dvKind(err), "%s: %v", c.Name, err)
		})
	}
}
