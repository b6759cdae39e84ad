package vectors

// Vectors of balance.json: generation (generateFile) and checks (checkFile).
// See shared.go for what every file shares, and SPEC.md section 11.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// balance.json

type rowJSON struct {
	UpdateID string `json:"update_id"`
	Kind     string `json:"kind"`
	Version  string `json:"version,omitempty"`
	Amount   I64    `json:"amount"`
	Covers   I64    `json:"covers,omitempty"`
	Settled  bool   `json:"settled,omitempty"`
	Target   string `json:"target,omitempty"`
	Hex      string `json:"hex,omitempty"`
}

func toRowJSON(r balance.Row, withHex bool) rowJSON {
	j := rowJSON{UpdateID: r.UpdateID.String(), Kind: r.Kind.String(), Amount: I64(r.Amount), Covers: I64(r.Covers), Settled: r.Settled}
	if r.Kind != balance.KindNormal || !r.Version.IsZero() {
		j.Version = r.Version.String()
	}
	if r.Target != 0 {
		j.Target = r.Target.String()
	}
	if withHex {
		j.Hex = hex.EncodeToString(must(r.MarshalBinary()))
	}
	return j
}

func fromRowJSON(t *checker, j rowJSON) balance.Row {
	r := balance.Row{UpdateID: must(timeid.Parse(j.UpdateID)), Kind: balance.Kind(j.Kind[0]), Amount: int64(j.Amount), Covers: int64(j.Covers), Settled: j.Settled}
	if j.Version != "" {
		r.Version = rowVersion(t, j)
	}
	if j.Target != "" {
		r.Target = balance.Kind(j.Target[0])
	}
	return r
}

// rowVersion is a row's version column. An S or T row's is a version 1
// UUID; an N row's (format version 2) is its amount's key, 8 zero bytes and
// the amount as a big-endian two's-complement int64, written in UUID form.
func rowVersion(t *checker, j rowJSON) deltalog.ID {
	if j.Kind != "N" {
		return must(timeid.Parse(j.Version))
	}
	b := unhex(t, strings.ReplaceAll(j.Version, "-", ""))
	require.Len(t, b, 16)
	var k deltalog.ID
	binary.BigEndian.PutUint64(k[8:], uint64(j.Amount))
	require.Equal(t, k[:], b, "an N row's version is its amount's key")
	return deltalog.ID(b)
}

// refRow is j's encoding in row format version v.
func refRow(t *checker, j rowJSON) string { return refRowV(t, j, 2) }

func refRowV(t *checker, j rowJSON, v uint64) string {
	uid := must(timeid.Parse(j.UpdateID))
	e := env("balance.row", v).arr(7).bin(uid[:]).uint(uint64(j.Kind[0]))
	if j.Version == "" {
		e = e.nil()
	} else {
		ver := rowVersion(t, j)
		e = e.bin(ver[:])
	}
	var target uint64
	if j.Target != "" {
		target = uint64(j.Target[0])
	}
	return e.int(int64(j.Amount)).int(int64(j.Covers)).bool(j.Settled).uint(target).hex()
}

type keyJSON struct {
	UpdateID string `json:"update_id"`
	Kind     string `json:"kind"`
	Version  string `json:"version,omitempty"`
}

func keyOf(r balance.Row) keyJSON {
	k := keyJSON{UpdateID: r.UpdateID.String(), Kind: r.Kind.String()}
	if r.Kind != balance.KindNormal || !r.Version.IsZero() {
		k.Version = r.Version.String()
	}
	return k
}

type evalVec struct {
	Name  string    `json:"name"`
	Note  string    `json:"note,omitempty"`
	Rows  []rowJSON `json:"rows"`
	Added []I64     `json:"added"`
	// Outputs.
	Value             *I64            `json:"value,omitempty"`
	Error             string          `json:"error,omitempty"`
	Live              []keyJSON       `json:"live,omitempty"`
	Valid             []string        `json:"valid_sums,omitempty"`
	InvalidSums       []string        `json:"invalid_sums,omitempty"`
	InvalidTombstones []keyJSON       `json:"invalid_tombstones,omitempty"`
	Conflicts         []bConflictJSON `json:"conflicts,omitempty"`
}

// bConflictJSON is an update id whose N rows carry more than one amount, or
// an amount other than the one a merge counted: the amount that counts and
// the others (ascending).
type bConflictJSON struct {
	UpdateID string `json:"update_id"`
	Counted  I64    `json:"counted"`
	Refused  []I64  `json:"refused"`
}

// rowV1 is a row in format version 1 (N rows carry no version), which
// decoders still read, and its version 2 re-encoding.
type rowV1 struct {
	Row       rowJSON `json:"row"`
	Hex       string  `json:"hex"`
	Reencoded string  `json:"reencoded"`
}

type bFile struct {
	Comment     string      `json:"comment"`
	Rows        []rowJSON   `json:"rows"`
	Version1    []rowV1     `json:"version1"`
	Evaluations []evalVec   `json:"evaluations"`
	Windows     []windowVec `json:"windows"`
	Batches     []batchVec  `json:"batches"`
	Malformed   []Malformed `json:"malformed"`
	TxnRows     []txnRowVec `json:"txn_rows"`
}

// txnRowVec is a transaction id's row id (SPEC.md 9.4) and where its row
// and records go for account "acct" with Partitions 4 and RecordShards 16.
type txnRowVec struct {
	Txn          string `json:"txn"`
	RowID        string `json:"row_id"`
	RowPartition string `json:"row_partition"`
	RecordShard  int    `json:"record_shard"`
	Note         string `json:"note,omitempty"`
}

// txnRow computes a txnRowVec with balance.Transactions.
func txnRow(txn, note string) txnRowVec {
	id := balance.TxnRowID(crdt.TxnID(txn))
	tx := must(balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{Partitions: 4}))
	return txnRowVec{Txn: txn, RowID: id.String(), RowPartition: tx.RowPartitions("acct")[int(id[14])%4], RecordShard: int(id[15]) % 16, Note: note}
}

// refTxnRowID is SPEC.md 9.4's row id, written out apart from the code.
func refTxnRowID(txn string) string {
	h := sha256.Sum256(append([]byte("counterkit.balance.txn\x00"), txn...))
	const ticksBelow1900 = 100_103_040_000_000_000
	ticks := binary.BigEndian.Uint64(h[:8]) % ticksBelow1900
	var u [16]byte
	binary.BigEndian.PutUint32(u[0:], uint32(ticks))
	binary.BigEndian.PutUint16(u[4:], uint16(ticks>>32))
	binary.BigEndian.PutUint16(u[6:], uint16(ticks>>48)&0x0fff|0x1000)
	binary.BigEndian.PutUint16(u[8:], binary.BigEndian.Uint16(h[8:10])&0x3fff|0x8000)
	copy(u[10:], h[10:16])
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func evaluate(t *checker, ev evalVec) evalVec {
	rows := make([]balance.Row, len(ev.Rows))
	for i, j := range ev.Rows {
		rows[i] = fromRowJSON(t, j)
	}
	v, err := balance.Evaluate(rows)
	out := evalVec{Name: ev.Name, Note: ev.Note, Rows: ev.Rows, Added: ev.Added, Error: kindOf(t, err)}
	if err == nil {
		out.Value = ip(v.Value)
		for _, r := range v.Live {
			out.Live = append(out.Live, keyOf(r))
		}
		for _, r := range v.Valid {
			out.Valid = append(out.Valid, r.Version.String())
		}
		for _, r := range v.InvalidSums {
			out.InvalidSums = append(out.InvalidSums, r.Version.String())
		}
		for _, r := range v.InvalidTombstones {
			out.InvalidTombstones = append(out.InvalidTombstones, keyOf(r))
		}
		for _, c := range v.Conflicts {
			j := bConflictJSON{UpdateID: c.UpdateID.String(), Counted: I64(c.Counted), Refused: []I64{}}
			for _, a := range c.Refused {
				j.Refused = append(j.Refused, I64(a))
			}
			out.Conflicts = append(out.Conflicts, j)
		}
	}
	return out
}

func genBalance(t *checker) any {
	var f bFile
	f.Comment = "Balance rows (SPEC.md section 9): N/S/T rows (row format version 2: an N row's version is its amount's key; version1 lists version 1 rows decoders still read) and the validity rules of Evaluate, including update ids reused with another amount; txn_rows: transaction ids' row ids, row partitions and record shards (SPEC.md 9.4)."
	N := func(sec float64, amt int64) balance.Row {
		return balance.Row{UpdateID: vid(sec, 1, 1), Kind: balance.KindNormal, Amount: amt}
	}
	S := func(ver deltalog.ID, amt, covers int64, settled bool) balance.Row {
		return balance.Row{UpdateID: ver, Kind: balance.KindSum, Version: ver, Amount: amt, Covers: covers, Settled: settled}
	}
	T := func(target balance.Row, ver deltalog.ID) balance.Row {
		return balance.Row{UpdateID: target.UpdateID, Kind: balance.KindTombstone, Version: ver, Amount: target.Amount, Target: target.Kind}
	}
	for _, r := range []balance.Row{balance.NormalRow(vid(0, 1, 1), 100), balance.NormalRow(vid(1, 1, 1), -30), balance.NormalRow(vid(2, 1, 1), math.MinInt64),
		N(0, 100), N(1, -30), N(2, math.MinInt64), S(vid(100, 2, 2), 70, 2, false), S(vid(100, 2, 2), 70, 2, true), T(N(0, 100), vid(100, 2, 2)), T(S(vid(100, 2, 2), 70, 2, false), vid(200, 3, 3))} {
		f.Rows = append(f.Rows, toRowJSON(r, true))
	}
	for _, r := range []balance.Row{N(0, 100), S(vid(100, 2, 2), 70, 2, false), T(N(0, 100), vid(100, 2, 2))} {
		j := toRowJSON(r, false)
		v1 := refRowV(t, j, 1)
		var dec balance.Row
		require.NoError(t, dec.UnmarshalBinary(unhex(t, v1)))
		f.Version1 = append(f.Version1, rowV1{Row: j, Hex: v1, Reencoded: hex.EncodeToString(must(dec.MarshalBinary()))})
	}
	a, b, c, d := N(0, 100), N(1, 50), N(2, -30), N(3, 7)
	v1, v2, v3 := vid(10, 2, 2), vid(20, 3, 3), vid(30, 4, 4)
	s1 := S(v1, 150, 2, false)
	ev := func(name, note string, added []int64, rows ...balance.Row) {
		e := evalVec{Name: name, Note: note, Added: []I64{}}
		for _, x := range added {
			e.Added = append(e.Added, I64(x))
		}
		for _, r := range rows {
			e.Rows = append(e.Rows, toRowJSON(r, false))
		}
		f.Evaluations = append(f.Evaluations, evaluate(t, e))
	}
	ev("normal rows only", "", []int64{100, 50, -30}, a, b, c)
	ev("empty partition", "", nil)
	ev("one valid merge", "tombstones of version v1 name live rows and add up to the S row", []int64{100, 50, -30}, a, b, c, T(a, v1), T(b, v1), s1)
	ev("crash after tombstones", "no S row: the tombstones are invalid and cancel nothing", []int64{100, 50}, a, b, T(a, v1), T(b, v1))
	ev("sum row without all its tombstones", "covers 2 but one tombstone is present: invalid", []int64{100, 50}, a, b, T(a, v1), s1)
	ev("racing merges", "v1 is validated first and takes a and b; v2's tombstones then name rows no longer live, so v2 is invalid", []int64{100, 50, -30},
		a, b, c, T(a, v1), T(b, v1), s1, T(a, v2), T(b, v2), T(c, v2), S(v2, 120, 3, false))
	ev("racing merges, later one only", "the earlier merge crashed before its S row; the later one is valid", []int64{100, 50, -30},
		a, b, c, T(a, v1), T(b, v1), T(a, v2), T(b, v2), T(c, v2), S(v2, 120, 3, false))
	ev("chain of merges", "v2 covers v1's S row and a new row", []int64{100, 50, 7},
		a, b, T(a, v1), T(b, v1), s1, d, T(s1, v2), T(d, v2), S(v2, 157, 2, false))
	ev("settled merge cancels a retried row", "v1 is settled, its covered rows were deleted; a retry of a came back and is cancelled", []int64{100, 50},
		a, T(a, v1), T(b, v1), S(v1, 150, 2, true))
	ev("settled merge alone", "", []int64{100, 50}, S(v1, 150, 2, true))
	ev("settled chain keeps the inner S row", "step 7 keeps a covered S row that still has tombstones", []int64{100, 50, 7},
		T(a, v1), T(b, v1), S(v1, 150, 2, true), T(s1, v2), T(d, v2), S(v2, 157, 2, true))
	ev("tombstone amount differs from the row", "a tombstone only cancels the row it read", []int64{100},
		a, balance.Row{UpdateID: a.UpdateID, Kind: balance.KindTombstone, Version: v1, Amount: 101, Target: balance.KindNormal}, S(v1, 101, 1, false))
	ev("sum amount differs from its tombstones", "", []int64{100, 50}, a, b, T(a, v1), T(b, v1), S(v1, 151, 2, false))
	ev("three-level chain", "", []int64{100, 50, -30, 7},
		a, b, T(a, v1), T(b, v1), s1, c, T(s1, v2), T(c, v2), S(v2, 120, 2, false), d, T(S(v2, 120, 2, false), v3), T(d, v3), S(v3, 127, 2, false))
	ev("partial sums leave int64 but the total fits", "", []int64{math.MaxInt64, 1, -1}, N(0, math.MaxInt64), N(1, 1), N(2, -1))
	ev("balance overflow", "", []int64{math.MaxInt64, 1}, N(0, math.MaxInt64), N(1, 1))
	ev("two rows with one key", "", []int64{100}, a, a)
	ev("invalid row", "", []int64{0}, balance.Row{UpdateID: vid(0, 1, 1), Kind: balance.KindNormal})
	// Format version 2: an N row's version is its amount's key, so an
	// update id reused with another amount is a second row.
	u100, u70 := balance.NormalRow(vid(5, 1, 1), 100), balance.NormalRow(vid(5, 1, 1), 70)
	ev("version 2 rows", "N rows keyed by amount; the balance is unchanged", []int64{100, 50, -30},
		balance.NormalRow(vid(0, 1, 1), 100), balance.NormalRow(vid(1, 1, 1), 50), balance.NormalRow(vid(2, 1, 1), -30))
	ev("a version 1 and a version 2 row of one update", "a retry written by a newer writer: two keys, one amount, counted once", []int64{100}, a, balance.NormalRow(a.UpdateID, 100))
	ev("an update id reused with another amount counts once", "no merge has counted it: the smallest amount counts, the other is a conflict", []int64{70}, u100, u70)
	// The smallest amount, not the first row in any key order: in the
	// clustering order (8.1: the low 8 bytes compare as signed bytes) 200's
	// key sorts before 100's; in plain byte order 50's key sorts before
	// -30's; and a version 1 row's zero key sorts before 70's.
	ev("a reused id's amounts 200 and 100", "in the clustering order 200's key (00..c8) sorts before 100's (00..64), the low bytes comparing as signed; 100, the smallest amount, counts and 200 is the conflict", []int64{100},
		balance.NormalRow(vid(7, 1, 1), 200), balance.NormalRow(vid(7, 1, 1), 100))
	ev("a reused id's negative amount counts over a positive one", "in byte order 50's key (00..32) sorts before -30's (ff..e2); -30, the smallest amount, counts and 50 is the conflict", []int64{-30},
		balance.NormalRow(vid(6, 1, 1), 50), balance.NormalRow(vid(6, 1, 1), -30))
	ev("a reused id's version 2 row counts over a larger version 1 row", "the version 1 row (zero key) sorts first; 70, the smallest amount, counts and 100 is the conflict", []int64{70},
		N(5, 100), u70)
	ev("a reused id's smaller amount voids an unsettled merge", "the merge read 100; 70 arrived after it, counts, and the merge is invalid", []int64{70, 50},
		u100, b, T(u100, v1), T(b, v1), S(v1, 150, 2, false), u70)
	ev("a settled merge fixes a reused id's amount", "the settled merge counted 100 (its rows are deleted); 70 arriving later counts nothing", []int64{100, 50},
		T(u100, v1), T(b, v1), S(v1, 150, 2, true), u70)

	// Settled merges (SPEC.md 9.2 step 3): a tombstone naming an S row
	// cancels it only with the S row's amount, and a tombstone whose target
	// is present but not live, or of another amount, stays valid.
	tS := func(target balance.Row, ver deltalog.ID, amt int64) balance.Row {
		r := T(target, ver)
		r.Amount = amt
		return r
	}
	ev("settled merge ignores an S row of another amount", "v2 is settled; its tombstone names v1's S row with amount 149 but the row holds 150, so the row stays live and the tombstone, whose target is present, is valid; d was deleted when v2 settled",
		[]int64{100, 50, 7}, a, b, T(a, v1), T(b, v1), s1, tS(s1, v2, 149), T(d, v2), S(v2, 7, 2, true))
	ev("settled merge's tombstone names a row that is not live", "v1 took a and b; v2 (settled) names a too: a is present but not live, so the tombstone cancels nothing and is valid",
		[]int64{100, 50}, a, b, T(a, v1), T(b, v1), s1, T(a, v2), S(v2, 0, 1, true))

	now := t0.Add(time.Hour)
	win := func(at time.Time, amt int64, note ...string) {
		id := timeid.FromParts(at, 9, 9)
		l := must(balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return now }}))
		err := l.Add(context.Background(), "acct", id, amt)
		o := l.Options()
		f.Windows = append(f.Windows, windowVec{Now: now.Format(time.RFC3339Nano), WindowNS: I64(o.Window), FutureNS: I64(o.FutureSkew),
			ID: id.String(), Delta: I64(amt), Error: kindOf(t, err), IDTimeNote: at.Format(time.RFC3339Nano), Note: strings.Join(note, " ")})
	}
	win(now, 5)
	win(now.Add(-5*time.Minute), -5)
	win(now.Add(-5*time.Minute-100*time.Nanosecond), 5)
	win(now.Add(5*time.Second), 5)
	win(now.Add(5*time.Second+100*time.Nanosecond), 5)
	win(now, 0)
	win(now.Add(-time.Hour), 0, "zero amount outside the window: the amount is checked first (SPEC.md 9.3)")
	win(now.Add(time.Minute), 0, "zero amount too far in the future: invalid_amount (SPEC.md 9.3)")

	// Batches (SPEC.md 9.3: the amount is judged before the window and
	// before a repeated (account, id)).
	{
		id1, id2, old := timeid.FromParts(now, 1, 1), timeid.FromParts(now.Add(-time.Second), 2, 2), timeid.FromParts(now.Add(-time.Hour), 3, 3)
		batch := func(note string, us ...batchUpdate) {
			bv := batchVec{Note: note, Now: now.Format(time.RFC3339Nano), Updates: us}
			bv.Error = runBatch(t, bv, applyBalanceBatch)
			f.Batches = append(f.Batches, bv)
		}
		bu := func(key string, id deltalog.ID, d int64) batchUpdate { return batchUpdate{key, id.String(), I64(d)} }
		batch("a transfer: two accounts, one id", bu("a", id1, -5), bu("b", id1, 5))
		batch("the same update twice is written once", bu("a", id1, 5), bu("a", id1, 5), bu("a", id2, 1))
		batch("a repeated (account, id) with another amount is conflicting_transaction", bu("a", id1, 5), bu("a", id1, 7))
		batch("a zero amount is invalid_amount before the repeat is judged", bu("a", id1, 5), bu("a", id1, 0))
		batch("a zero amount outside the window is invalid_amount", bu("a", old, 0))
		batch("an invalid key fails the whole batch", bu("a", id1, 5), bu("", id2, 1))
	}

	r := "balance.row"
	id := vid(0, 1, 1)
	row := func(fn func(e refEnc) refEnc) []byte { return fn(env(r, 1).arr(7)).b }
	nrow := func(e refEnc) refEnc { return e.bin(id[:]).uint('N').nil() }
	f.Malformed = []Malformed{
		mal("N row with a version", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('N').bin(id[:]).int(1).int(0).bool(false).uint(0) }), t),
		mal("N row with zero amount", r, row(func(e refEnc) refEnc { return nrow(e).int(0).int(0).bool(false).uint(0) }), t),
		mal("N row with covers", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(1).bool(false).uint(0) }), t),
		mal("N row settled", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(true).uint(0) }), t),
		mal("S row without a version", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('S').nil().int(1).int(1).bool(false).uint(0) }), t),
		mal("S row whose update id differs from its version", r, row(func(e refEnc) refEnc {
			v := vid(5, 1, 1)
			return e.bin(id[:]).uint('S').bin(v[:]).int(1).int(1).bool(false).uint(0)
		}), t),
		mal("S row covering nothing", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('S').bin(id[:]).int(1).int(0).bool(false).uint(0) }), t),
		mal("T row without target", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('T').bin(id[:]).int(1).int(0).bool(false).uint(0) }), t),
		mal("T row targeting T", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('T').bin(id[:]).int(1).int(0).bool(false).uint('T') }), t),
		mal("unknown kind", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('X').nil().int(1).int(0).bool(false).uint(0) }), t),
		mal("settled as int", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).int(0).uint(0) }), t),
		mal("target above 255", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(false).uint(256) }), t),
		mal("amount not in smallest form", r, row(func(e refEnc) refEnc { return nrow(e).raw(0xd1, 0, 1).int(0).bool(false).uint(0) }), t),
		mal("row of six fields", r, env(r, 1).arr(6).bin(id[:]).uint('N').nil().int(1).int(0).bool(false).b, t),
		mal("trailing bytes", r, append(row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(false).uint(0) }), 0), t),
		mal("input above 256 bytes", r, append(row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(false).uint(0) }), make([]byte, 220)...), t),
		mal("version 3", r, env(r, 3).arr(0).b, t),
		mal("N row whose version is another amount's key", r, func() []byte {
			k := [16]byte{15: 2}
			return env(r, 2).arr(7).bin(id[:]).uint('N').bin(k[:]).int(1).int(0).bool(false).uint(0).b
		}(), t, "format version 2: amount 1 under the key of amount 2"),
	}
	for _, v := range []struct{ txn, note string }{
		{"pay-0", "SPEC.md 9.4's example"},
		{"x", ""},
		{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", "a UUID is hashed like any id"},
		{"ключ-✓", "UTF-8"},
		{strings.Repeat("z", crdt.MaxIDLen), "the longest id"},
	} {
		f.TxnRows = append(f.TxnRows, txnRow(v.txn, v.note))
	}
	return f
}

func checkBalance(t *checker, raw []byte) {
	var f bFile
	readJSON(t, raw, &f)
	require.NotEmpty(t, f.Rows)
	for _, j := range f.Rows {
		r := fromRowJSON(t, j)
		require.Equal(t, j.Hex, hex.EncodeToString(must(r.MarshalBinary())))
		require.Equal(t, j.Hex, refRow(t, j))
		var dec balance.Row
		require.NoError(t, dec.UnmarshalBinary(unhex(t, j.Hex)))
		require.Equal(t, r, dec)
	}
	require.NotEmpty(t, f.Version1)
	for _, v := range f.Version1 {
		require.Equal(t, v.Hex, refRowV(t, v.Row, 1), "reference version 1 encoding")
		require.Equal(t, v.Reencoded, refRow(t, v.Row), "reference version 2 encoding")
		var dec balance.Row
		require.NoError(t, dec.UnmarshalBinary(unhex(t, v.Hex)))
		require.Equal(t, fromRowJSON(t, v.Row), dec)
		require.Equal(t, v.Reencoded, hex.EncodeToString(must(dec.MarshalBinary())))
	}
	require.NotEmpty(t, f.Evaluations)
	for _, ev := range f.Evaluations {
		t.Run(ev.Name, func(t *checker) {
			require.Equal(t, ev, evaluate(t, ev), "reference implementation vs vector")
			// Order does not matter.
			rev := ev
			rev.Rows = slices.Clone(ev.Rows)
			slices.Reverse(rev.Rows)
			got := evaluate(t, rev)
			got.Rows = ev.Rows
			require.Equal(t, ev, got, "Evaluate depends on row order")
			// Model: the balance is the sum of every N row ever added,
			// whatever merges ran, crashed, raced or settled.
			if ev.Error != "" {
				if ev.Error == "overflow" {
					require.False(t, fitsInt64(i64s(ev.Added)))
				}
				return
			}
			s := new(big.Int)
			for _, x := range ev.Added {
				s.Add(s, big.NewInt(int64(x)))
			}
			require.True(t, s.IsInt64())
			require.EqualValues(t, s.Int64(), *ev.Value, "balance vs the sum of the added rows")
			// Conflicts: every update id whose N rows carry two amounts
			// is listed, and what it lists are those amounts.
			amounts := map[string]map[int64]bool{}
			for _, r := range ev.Rows {
				if r.Kind == "N" {
					if amounts[r.UpdateID] == nil {
						amounts[r.UpdateID] = map[int64]bool{}
					}
					amounts[r.UpdateID][int64(r.Amount)] = true
				}
			}
			listed := map[string]bool{}
			for _, c := range ev.Conflicts {
				listed[c.UpdateID] = true
				require.NotEmpty(t, c.Refused)
				for _, a := range c.Refused {
					require.True(t, amounts[c.UpdateID][int64(a)], "refused amount %d of %s is no N row's", a, c.UpdateID)
					require.NotEqual(t, c.Counted, a)
				}
				require.Len(t, c.Refused, len(amounts[c.UpdateID])-map[bool]int{true: 1}[amounts[c.UpdateID][int64(c.Counted)]])
			}
			for u, as := range amounts {
				if len(as) > 1 {
					require.True(t, listed[u], "update id %s has %d amounts but is not a conflict", u, len(as))
				}
			}
		})
	}
	require.NotEmpty(t, f.Windows)
	for _, w := range f.Windows {
		now := must(time.Parse(time.RFC3339Nano, w.Now))
		l := must(balance.New(memory.NewPartitions(), balance.Options{Window: time.Duration(w.WindowNS), FutureSkew: time.Duration(w.FutureNS), Clock: func() time.Time { return now }}))
		id := must(timeid.Parse(w.ID))
		requireKind(t, w.Error, l.Add(context.Background(), "acct", id, int64(w.Delta)), w.ID)
		at := id.Time()
		want := ""
		switch {
		case w.Delta == 0:
			want = "invalid_amount"
		case at.Before(now.Add(-time.Duration(w.WindowNS))) || at.After(now.Add(time.Duration(w.FutureNS))):
			want = "outside_window"
		}
		require.Equal(t, want, w.Error, "window model for %s", w.IDTimeNote)
	}
	require.NotEmpty(t, f.Batches)
	for _, bv := range f.Batches {
		t.Run("batch/"+bv.Note, func(t *checker) {
			require.Equal(t, bv.Error, runBatch(t, bv, applyBalanceBatch), "Accounts.Apply")
			require.Equal(t, bv.Error, batchModel(bv, 5*time.Minute, true), "model of SPEC.md 9.3")
		})
	}
	checkMalformed(t, f.Malformed)
	require.NotEmpty(t, f.TxnRows)
	for _, v := range f.TxnRows {
		require.Equal(t, v, txnRow(v.Txn, v.Note), "Transactions")
		require.Equal(t, v.RowID, refTxnRowID(v.Txn), "reference row id")
		id := must(timeid.Parse(v.RowID))
		require.True(t, balance.IsTxnRowID(id))
		require.Equal(t, fmt.Sprintf("acct#%d", id[14]%4), v.RowPartition)
	}
}

// applyBalanceBatch applies a batch with Accounts.Apply (default options
// and a fixed clock) on an empty store.
func applyBalanceBatch(now time.Time, fill func(func(string, deltalog.ID, int64))) error {
	l := must(balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return now }}))
	var b balance.Batch
	fill(b.Add)
	return l.Apply(context.Background(), &b)
}

func i64s(vs []I64) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = int64(v)
	}
	return out
}
