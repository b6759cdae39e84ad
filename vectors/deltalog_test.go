package vectors

// Vectors of deltalog.json: generation (generateFile) and checks (checkFile).
// See shared.go for what every file shares, and SPEC.md section 11.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// deltalog.json

// t0 is the base time of every time-based id in the vectors.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// vid is the deterministic id sec seconds after t0 with the given clock
// sequence and node.
func vid(sec float64, seq uint16, node uint64) deltalog.ID {
	return timeid.FromParts(t0.Add(time.Duration(sec*float64(time.Second))), seq, node)
}

type statsJSON struct {
	Count   I64 `json:"count"`
	Sum     I64 `json:"sum"`
	Min     I64 `json:"min"`
	Max     I64 `json:"max"`
	SumSqHi U64 `json:"sumsq_hi"`
	SumSqLo U64 `json:"sumsq_lo"`
}

type cellJSON struct {
	ID      string     `json:"id"`
	Kind    string     `json:"kind"`
	Delta   I64        `json:"delta"`
	Written I64        `json:"written"`
	Stats   *statsJSON `json:"stats,omitempty"`
	Hex     string     `json:"hex,omitempty"`
}

func toCellJSON(c deltalog.Cell, withHex bool) cellJSON {
	j := cellJSON{ID: c.ID.String(), Kind: c.Kind.String(), Delta: I64(c.Delta), Written: I64(c.Written)}
	if c.Kind == deltalog.KindMerge {
		s := c.Stats
		j.Stats = &statsJSON{I64(s.Count), I64(s.Sum), I64(s.Min), I64(s.Max), U64(s.SumSqHi), U64(s.SumSqLo)}
	}
	if withHex {
		j.Hex = hex.EncodeToString(must(c.MarshalBinary()))
	}
	return j
}

func fromCellJSON(t *checker, j cellJSON) deltalog.Cell {
	id, err := timeid.Parse(j.ID)
	require.NoError(t, err)
	c := deltalog.Cell{ID: id, Kind: deltalog.Kind(j.Kind[0]), Delta: int64(j.Delta), Written: int64(j.Written)}
	if j.Stats != nil {
		c.Stats = deltalog.Stats{Count: int64(j.Stats.Count), Sum: int64(j.Stats.Sum), Min: int64(j.Stats.Min), Max: int64(j.Stats.Max), SumSqHi: uint64(j.Stats.SumSqHi), SumSqLo: uint64(j.Stats.SumSqLo)}
	}
	return c
}

// refCell encodes a cell from its JSON form: [id bin16, kind uint, delta,
// written, nil | [count, sum, min, max, sumsq_hi, sumsq_lo]].
func refCell(t *checker, j cellJSON) string {
	id, err := timeid.Parse(j.ID)
	require.NoError(t, err)
	e := env("deltalog.cell", 1).arr(5).bin(id[:]).uint(uint64(j.Kind[0])).int(int64(j.Delta)).int(int64(j.Written))
	if j.Stats == nil {
		e = e.nil()
	} else {
		s := j.Stats
		e = e.arr(6).int(int64(s.Count)).int(int64(s.Sum)).int(int64(s.Min)).int(int64(s.Max)).uint(uint64(s.SumSqHi)).uint(uint64(s.SumSqLo))
	}
	return e.hex()
}

type idVec struct {
	Time     string `json:"time"`
	ClockSeq uint16 `json:"clock_seq"`
	Node     string `json:"node"`
	UUID     string `json:"uuid"`
}

type orderVec struct {
	A       string `json:"a"`
	AKind   string `json:"a_kind,omitempty"`
	B       string `json:"b"`
	BKind   string `json:"b_kind,omitempty"`
	Compare int    `json:"compare"`
}

type windowVec struct {
	Now        string `json:"now"`
	WindowNS   I64    `json:"window_ns"`
	FutureNS   I64    `json:"future_skew_ns"`
	ID         string `json:"id"`
	Delta      I64    `json:"delta"`
	Error      string `json:"error,omitempty"`
	IDTimeNote string `json:"id_time"`
	Note       string `json:"note,omitempty"`
}

// readingJSON is a Read. Past int64 or 2^128 (SPEC.md 8.3) value and stats
// are clamped and the exact_ fields give the count, the sum and the sum of
// squares exactly (decimal).
type readingJSON struct {
	Value      I64       `json:"value"`
	Stats      statsJSON `json:"stats"`
	Cells      int       `json:"cells"`
	ExactCount string    `json:"exact_count,omitempty"`
	ExactSum   string    `json:"exact_sum,omitempty"`
	ExactSumSq string    `json:"exact_sumsq,omitempty"`
}

type dStep struct {
	Replica string    `json:"replica"`
	Op      string    `json:"op"`
	ID      string    `json:"id,omitempty"`
	Delta   *I64      `json:"delta,omitempty"`
	Cell    *cellJSON `json:"cell,omitempty"`
	Cutoff  string    `json:"cutoff,omitempty"`
	Written string    `json:"written,omitempty"`
	From    string    `json:"from,omitempty"`
	// Outputs.
	OK      *bool     `json:"ok,omitempty"`
	Merged  *cellJSON `json:"merge_cell,omitempty"`
	Dropped *int      `json:"dropped,omitempty"`
	Error   string    `json:"error,omitempty"`
}

type dState struct {
	Cells     []cellJSON   `json:"cells"`
	Read      *readingJSON `json:"read,omitempty"`
	ReadError string       `json:"read_error,omitempty"`
}

type dScenario struct {
	Name     string            `json:"name"`
	Note     string            `json:"note,omitempty"`
	Replicas []string          `json:"replicas"`
	Steps    []dStep           `json:"steps"`
	Final    map[string]dState `json:"final"`
}

type dFile struct {
	Comment   string      `json:"comment"`
	IDs       []idVec     `json:"ids"`
	Order     []orderVec  `json:"order"`
	Cells     []cellJSON  `json:"cells"`
	Windows   []windowVec `json:"windows"`
	Moments   []momentVec `json:"moments"`
	Batches   []batchVec  `json:"batches"`
	Scenarios []dScenario `json:"scenarios"`
	Malformed []Malformed `json:"malformed"`
}

func runD(t *checker, sc *dScenario, fill bool) map[string]*deltalog.Log {
	rs := map[string]*deltalog.Log{}
	for _, r := range sc.Replicas {
		rs[r] = &deltalog.Log{}
	}
	parseT := func(s string) time.Time { return must(time.Parse(time.RFC3339Nano, s)) }
	for i := range sc.Steps {
		st := &sc.Steps[i]
		l := rs[st.Replica]
		before := l.Cells()
		var err error
		var ok *bool
		var merged *cellJSON
		var dropped *int
		switch st.Op {
		case "add":
			var id deltalog.ID
			if st.ID != "" {
				u := must(hex.DecodeString(strings.ReplaceAll(st.ID, "-", "")))
				copy(id[:], u)
			}
			err = l.Add(id, int64(*st.Delta))
		case "insert":
			err = l.Insert(fromCellJSON(t, *st.Cell))
		case "merge_before":
			var c deltalog.Cell
			var o bool
			c, o, err = l.MergeBefore(parseT(st.Cutoff), parseT(st.Written))
			if err == nil {
				ok = &o
				if o {
					j := toCellJSON(c, true)
					merged = &j
				}
			}
		case "compact":
			n := l.Compact()
			dropped = &n
		case "merge":
			err = l.Merge(rs[st.From])
		default:
			t.Fatalf("unknown op %q", st.Op)
		}
		if fill {
			st.Error, st.OK, st.Merged, st.Dropped = kindOf(t, err), ok, merged, dropped
		} else {
			requireKind(t, st.Error, err, "%s step %d", sc.Name, i)
			require.Equal(t, st.OK, ok, "%s step %d ok", sc.Name, i)
			require.Equal(t, st.Merged, merged, "%s step %d merge cell", sc.Name, i)
			require.Equal(t, st.Dropped, dropped, "%s step %d dropped", sc.Name, i)
		}
		if err != nil {
			require.Equal(t, before, l.Cells(), "%s step %d: failed op changed the log", sc.Name, i)
		}
	}
	return rs
}

func dStateOf(t *checker, l *deltalog.Log) dState {
	st := dState{Cells: []cellJSON{}}
	for _, c := range l.Cells() {
		st.Cells = append(st.Cells, toCellJSON(c, true))
	}
	r, err := l.Read()
	st.ReadError = kindOf(t, err)
	if err == nil {
		s := r.Stats
		st.Read = &readingJSON{Value: I64(r.Value), Cells: r.Cells, Stats: statsJSON{I64(s.Count), I64(s.Sum), I64(s.Min), I64(s.Max), U64(s.SumSqHi), U64(s.SumSqLo)}}
		if !s.Fits() {
			st.Read.ExactCount, st.Read.ExactSum, st.Read.ExactSumSq = s.BigCount().String(), s.BigSum().String(), s.SumSquares().String()
		}
	}
	return st
}

func genDeltalog(t *checker) any {
	var f dFile
	f.Comment = "Delta log (SPEC.md section 8). Ids are RFC 4122 version 1 UUIDs; times are RFC 3339; written is Unix nanoseconds."
	for _, c := range []struct {
		at   time.Time
		seq  uint16
		node uint64
	}{
		{t0, 0, 0}, {t0, 0x3fff, 0xffffffffffff}, {t0.Add(123456789 * time.Nanosecond), 0x1234, 0x0a0b0c0d0e0f},
		{time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC), 1, 1}, {time.Date(2100, 6, 1, 12, 0, 0, 500, time.UTC), 7, 42},
	} {
		id := timeid.FromParts(c.at, c.seq, c.node)
		f.IDs = append(f.IDs, idVec{Time: c.at.Format(time.RFC3339Nano), ClockSeq: c.seq, Node: fmt.Sprintf("%012x", c.node), UUID: id.String()})
	}
	ord := func(a, b deltalog.ID) {
		f.Order = append(f.Order, orderVec{A: a.String(), B: b.String(), Compare: a.Compare(b)})
	}
	ord(vid(0, 1, 1), vid(1, 1, 1))
	ord(vid(1, 0, 0), vid(0, 0x3fff, 0xffffffffffff))
	ord(vid(0, 1, 1), vid(0, 1, 1))
	ord(vid(0, 1, 0x7f0000000000), vid(0, 1, 0x800000000000))
	ord(vid(0, 0x0001, 0), vid(0, 0x0100, 0))
	ord(vid(0, 0x2000, 0), vid(0, 0x0000, 0))
	ord(vid(0.0000001, 0, 0), vid(0, 0x3fff, 0xffffffffffff))
	cord := func(a deltalog.ID, ak deltalog.Kind, b deltalog.ID, bk deltalog.Kind) {
		f.Order = append(f.Order, orderVec{A: a.String(), AKind: ak.String(), B: b.String(), BKind: bk.String(),
			Compare: deltalog.CompareCells(deltalog.Cell{ID: a, Kind: ak}, deltalog.Cell{ID: b, Kind: bk})})
	}
	cord(vid(0, 1, 1), deltalog.KindRegular, vid(1, 1, 1), deltalog.KindRegular)
	cord(vid(1, 1, 1), deltalog.KindMerge, vid(1, 1, 1), deltalog.KindRegular)
	cord(vid(1, 1, 1), deltalog.KindRegular, vid(1, 1, 1), deltalog.KindMerge)
	cord(vid(1, 1, 0x7f0000000000), deltalog.KindRegular, vid(1, 1, 0x800000000000), deltalog.KindMerge)

	cell := func(c deltalog.Cell) { f.Cells = append(f.Cells, toCellJSON(c, true)) }
	cell(deltalog.Cell{ID: vid(0, 1, 1), Kind: deltalog.KindRegular, Delta: 5})
	cell(deltalog.Cell{ID: vid(0, 1, 2), Kind: deltalog.KindRegular, Delta: -1})
	cell(deltalog.Cell{ID: vid(0, 1, 3), Kind: deltalog.KindRegular, Delta: math.MinInt64})
	cell(deltalog.Cell{ID: vid(0, 1, 4), Kind: deltalog.KindRegular, Delta: math.MaxInt64})
	cell(deltalog.Cell{ID: vid(60, 2, 5), Kind: deltalog.KindMerge, Delta: 4, Written: t0.Add(time.Hour).UnixNano(),
		Stats: deltalog.Stats{Count: 2, Sum: 4, Min: -1, Max: 5, SumSqLo: 26}})
	cell(deltalog.Cell{ID: vid(60, 2, 6), Kind: deltalog.KindMerge, Delta: -1, Written: 0,
		// The deltas -2^63, 2^63-1 and 0: the sum of squares is 2^127 - 2^64 + 1.
		Stats: deltalog.Stats{Count: 3, Sum: -1, Min: math.MinInt64, Max: math.MaxInt64, SumSqHi: 1<<63 - 1, SumSqLo: 1}})

	// Windows, checked by Counters.Add against a fixed clock.
	now := t0.Add(time.Hour)
	win := func(at time.Time, delta int64, note ...string) {
		id := timeid.FromParts(at, 9, 9)
		c := must(deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }}))
		err := c.Add(context.Background(), "counter", id, delta)
		o := c.Options()
		f.Windows = append(f.Windows, windowVec{Now: now.Format(time.RFC3339Nano), WindowNS: I64(o.Window), FutureNS: I64(o.FutureSkew),
			ID: id.String(), Delta: I64(delta), Error: kindOf(t, err), IDTimeNote: at.Format(time.RFC3339Nano), Note: strings.Join(note, " ")})
	}
	win(now, 1)
	win(now.Add(-10*time.Minute), 1)
	win(now.Add(-10*time.Minute-100*time.Nanosecond), 1)
	win(now.Add(5*time.Second), 1)
	win(now.Add(5*time.Second+100*time.Nanosecond), 1)
	win(now, 0)
	win(now.Add(-time.Hour), 0, "zero delta outside the window: the window is checked first (SPEC.md 8.4)")
	win(now.Add(time.Minute), 0, "zero delta too far in the future: outside_window (SPEC.md 8.4)")

	for _, c := range momentCases {
		mv := momentVec{Name: c.name, Values: []I64{}, Note: c.note}
		st := logStats(t, c.vs)
		for _, v := range c.vs {
			mv.Values = append(mv.Values, I64(v))
		}
		if m, ok := st.Mean(); ok {
			mv.Mean = fmtDouble(m)
		}
		if v, ok := st.Variance(); ok {
			mv.Variance = fmtDouble(v)
		}
		f.Moments = append(f.Moments, mv)
	}

	// Batches (SPEC.md 8.4: the delta is judged before a repeated
	// (counter, id)).
	id1, id2, old := timeid.FromParts(now, 1, 1), timeid.FromParts(now.Add(-time.Second), 2, 2), timeid.FromParts(now.Add(-time.Hour), 3, 3)
	batch := func(note string, us ...batchUpdate) {
		bv := batchVec{Note: note, Now: now.Format(time.RFC3339Nano), Updates: us}
		bv.Error = runBatch(t, bv, applyDeltalogBatch)
		bv.Reads = deltalogBatchReads(t, bv)
		f.Batches = append(f.Batches, bv)
	}
	bu := func(key string, id deltalog.ID, d int64) batchUpdate { return batchUpdate{key, id.String(), I64(d)} }
	batch("a transfer: two counters, one id", bu("a", id1, -5), bu("b", id1, 5))
	batch("the same update twice is written once", bu("a", id1, 5), bu("a", id1, 5), bu("a", id2, 1))
	batch("a zero delta is invalid_amount before the repeat is judged: the whole batch fails", bu("a", id1, 5), bu("a", id1, 0))
	batch("a repeated (counter, id) with another delta is conflicting_transaction", bu("a", id1, 5), bu("a", id1, 7))
	batch("a zero delta met first is invalid_amount", bu("a", id1, 0), bu("a", id1, 5))
	batch("an update outside the window fails the whole batch", bu("a", id1, 5), bu("b", old, 1))
	batch("an invalid key fails the whole batch", bu("a", id1, 5), bu("", id2, 1))
	batch("the window before a zero delta", bu("a", old, 0))
	batch("a repeat with the same delta among other updates is dropped", bu("a", id1, 5), bu("b", id2, 2), bu("a", id2, 3), bu("a", id1, 5), bu("b", id2, 2))

	add := func(r string, id deltalog.ID, d int64) dStep {
		return dStep{Replica: r, Op: "add", ID: id.String(), Delta: ip(d)}
	}
	mb := func(r string, cutoffSec, writtenSec float64) dStep {
		return dStep{Replica: r, Op: "merge_before", Cutoff: t0.Add(time.Duration(cutoffSec * float64(time.Second))).Format(time.RFC3339Nano),
			Written: t0.Add(time.Duration(writtenSec * float64(time.Second))).Format(time.RFC3339Nano)}
	}
	cp := func(r string) dStep { return dStep{Replica: r, Op: "compact"} }
	mg := func(r, from string) dStep { return dStep{Replica: r, Op: "merge", From: from} }
	badID := dStep{Replica: "r", Op: "add", ID: "00000000-0000-4000-8000-000000000000", Delta: ip(1)}
	zeroID := dStep{Replica: "r", Op: "add", ID: "00000000-0000-0000-0000-000000000000", Delta: ip(1)}
	conflictMerge := toCellJSON(deltalog.Cell{ID: vid(20, 1, 1), Kind: deltalog.KindMerge, Delta: 999, Written: 1,
		Stats: deltalog.Stats{Count: 1, Sum: 999, Min: 999, Max: 999, SumSqLo: 998001}}, false)
	scs := []dScenario{
		{Name: "adds, retries and rejections", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), 5), add("r", vid(1, 1, 1), -3), add("r", vid(0, 1, 1), 5), add("r", vid(0, 1, 1), 6),
			add("r", vid(2, 1, 1), 0), badID, zeroID}},
		{Name: "merge before a cutoff, then compact", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), 1), add("r", vid(10, 1, 1), 2), add("r", vid(20, 1, 1), 4), add("r", vid(30, 1, 1), 8),
			mb("r", 25, 100), mb("r", 25, 200), mb("r", 0, 100), cp("r"), cp("r")},
			Note: "the merge cell takes the id of the newest cell strictly older than the cutoff; a second merge at the same cutoff finds a merge cell there and does nothing"},
		{Name: "chained merges read down to the first merge cell", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), 1), add("r", vid(10, 1, 1), -2), mb("r", 15, 100), add("r", vid(20, 1, 1), 30), add("r", vid(30, 1, 1), -40),
			mb("r", 25, 200), add("r", vid(40, 1, 1), 500)}},
		{Name: "merge is cell-set union; racing merges at one cutoff agree", Replicas: []string{"r1", "r2"}, Steps: []dStep{
			add("r1", vid(0, 1, 1), 3), add("r1", vid(10, 1, 1), 4), add("r2", vid(10, 1, 1), 4), add("r2", vid(5, 1, 1), 10),
			mg("r1", "r2"), mg("r2", "r1"), mb("r1", 20, 100), mb("r2", 20, 300), mg("r1", "r2"), cp("r2"), mg("r2", "r1"), mg("r1", "r2")}},
		{Name: "conflicting cells are refused", Replicas: []string{"r1", "r2"}, Steps: []dStep{
			add("r1", vid(20, 1, 1), 5), add("r2", vid(20, 1, 1), 6), mg("r1", "r2"), mb("r1", 30, 100),
			{Replica: "r1", Op: "insert", Cell: &conflictMerge}}},
		{Name: "ids with one timestamp order by signed tail bytes", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 0x7f0000000000), 1), add("r", vid(0, 1, 0x800000000000), 2), add("r", vid(0, 0x2000, 0), 4)}},
		{Name: "exact sums past int64: reads clamp, the merge cell goes where it fits", Replicas: []string{"r1", "r2"}, Steps: []dStep{
			add("r1", vid(0, 1, 1), math.MaxInt64), add("r1", vid(1, 1, 1), 1), add("r1", vid(2, 1, 1), -1),
			add("r2", vid(0, 1, 1), math.MaxInt64), add("r2", vid(1, 1, 1), 1), mb("r2", 5, 100), mb("r2", 6, 200)},
			Note: "r1 reads 2^63 - 1 exactly; r2 reads 2^63, clamped to 2^63 - 1 (exact_sum): its merge at cutoff 5 s would hold 2^63, so it goes at the cell at 0 s, the newest whose aggregate fits, and the next merge finds nothing that fits"},
		{Name: "sum past int64 and back: one merge cell covers everything", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), math.MinInt64), add("r", vid(1, 1, 1), -1), mb("r", 5, 100), add("r", vid(2, 1, 1), 2), mb("r", 5, 200)},
			Note: "-2^63 - 1 reads clamped to -2^63; the first merge takes the cell at 0 s alone; 2 brings the sum back and the second merge covers all three"},
		{Name: "sum of squares past 2^128: the merge cell stops below it", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), math.MinInt64), add("r", vid(1, 1, 1), math.MaxInt64), add("r", vid(2, 1, 1), math.MinInt64),
			add("r", vid(3, 1, 1), math.MaxInt64), add("r", vid(4, 1, 1), 1<<33), mb("r", 10, 100), add("r", vid(5, 1, 1), 3)},
			Note: "the first four squares sum to 2^128 - 2^65 + 2; with (2^33)^2 the read's sum of squares passes 2^128 (exact_sumsq, sumsq clamped to 2^128 - 1) and the merge cell goes at 3 s"},
		{Name: "empty log", Replicas: []string{"r"}},
		{Name: "ids of another variant are invalid_txn", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), 1), withVariant(add("r", vid(1, 1, 1), 2), 0x00), withVariant(add("r", vid(2, 1, 1), 4), 0x40),
			withVariant(add("r", vid(3, 1, 1), 8), 0xc0), withVariant(add("r", vid(4, 1, 1), 16), 0xe0), withVariant(add("r", vid(5, 1, 1), 32), 0xbf)},
			Note: "version 1 ids whose byte 8 is 00, 40, c0 or e0 (variant bits 0x, 0x, 110, 111) are invalid_txn; bf (variant 10) is valid"},
		{Name: "merge before a cutoff equal to a cell's time", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(10, 1, 1), 1), add("r", vid(20, 1, 1), 2), add("r", vid(30, 1, 1), 4), mb("r", 20, 100), mb("r", 10, 200)},
			Note: "the cell at exactly the cutoff is not strictly before it: the merge at cutoff 20 s takes the cell at 10 s (value 1); at cutoff 10 s no cell is older and nothing happens"},
	}
	for i := range scs {
		rs := runD(t, &scs[i], true)
		scs[i].Final = map[string]dState{}
		for name, l := range rs {
			scs[i].Final[name] = dStateOf(t, l)
		}
	}
	f.Scenarios = scs

	d := "deltalog.cell"
	id := vid(0, 1, 1)
	c := func(fields func(e refEnc) refEnc) []byte { return fields(env(d, 1).arr(5)).b }
	reg := func(e refEnc) refEnc { return e.bin(id[:]).uint('r') }
	v4 := id
	v4[6] = v4[6]&0x0f | 0x40
	f.Malformed = []Malformed{
		mal("unknown kind", d, c(func(e refEnc) refEnc { return e.bin(id[:]).uint('x').int(1).int(0).nil() }), t),
		mal("kind above 255", d, c(func(e refEnc) refEnc { return e.bin(id[:]).uint(0x172).int(1).int(0).nil() }), t),
		mal("regular cell with stats", d, c(func(e refEnc) refEnc { return reg(e).int(1).int(0).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1) }), t),
		mal("regular cell with zero delta", d, c(func(e refEnc) refEnc { return reg(e).int(0).int(0).nil() }), t),
		mal("regular cell with a write time", d, c(func(e refEnc) refEnc { return reg(e).int(1).int(5).nil() }), t),
		mal("merge cell without stats", d, c(func(e refEnc) refEnc { return e.bin(id[:]).uint('m').int(1).int(0).nil() }), t),
		mal("merge cell sum differs from delta", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(2).int(0).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1)
		}), t),
		mal("merge cell count 0", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(0).int(0).arr(6).int(0).int(0).int(0).int(0).uint(0).uint(0)
		}), t),
		mal("merge cell sum outside [min·count, max·count]", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(100).int(0).arr(6).int(2).int(100).int(1).int(2).uint(0).uint(5)
		}), t),
		mal("merge cell single observation with a wrong sum of squares", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(3).int(0).arr(6).int(1).int(3).int(3).int(3).uint(0).uint(10)
		}), t),
		mal("merge cell negative written", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(1).int(-1).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1)
		}), t),
		mal("id of 15 bytes", d, c(func(e refEnc) refEnc { return e.bin(id[:15]).uint('r').int(1).int(0).nil() }), t),
		mal("id of 17 bytes", d, c(func(e refEnc) refEnc { return e.bin(append(id[:], 0)).uint('r').int(1).int(0).nil() }), t),
		mal("id not version 1", d, c(func(e refEnc) refEnc { return e.bin(v4[:]).uint('r').int(1).int(0).nil() }), t),
		mal("id as str", d, c(func(e refEnc) refEnc { return e.str(string(id[:])).uint('r').int(1).int(0).nil() }), t),
		mal("delta not in smallest form", d, c(func(e refEnc) refEnc { return reg(e).raw(0xd0, 5).int(0).nil() }), t),
		mal("cell of four fields", d, env(d, 1).arr(4).bin(id[:]).uint('r').int(1).int(0).b, t),
		mal("trailing bytes", d, append(c(func(e refEnc) refEnc { return reg(e).int(1).int(0).nil() }), 0), t),
		mal("input above 256 bytes", d, append(c(func(e refEnc) refEnc { return reg(e).int(1).int(0).nil() }), make([]byte, 220)...), t),
		mal("balance row envelope", d, env("balance.row", 1).arr(0).b, t),
		mal("id of 17 bytes as bin16", d, c(func(e refEnc) refEnc {
			return e.raw(0xc5, 0, 17).raw(append(id[:], 0)...).uint('r').int(1).int(0).nil()
		}), t,
			"a bin header is checked for its smallest form before its cap (SPEC.md 3.2): corrupt, where the bin8 form is too_large"),
		mal("cell body header above 65536 fields", d, append(env(d, 1).b, 0xdd, 0, 1, 0, 1, 0xc4), t,
			"above the nominal cap of fixed-shape arrays: too_large (SPEC.md 3.2, section 12 item 7)"),
	}
	// Non-canonical cells: every field is valid but one header or integer is
	// not in its smallest form, so the input differs from the re-encoding of
	// the cell it holds (SPEC.md 8.2: the decoder rejects any input that is
	// not the canonical re-encoding).
	nonCanon := func(name string, body func(e refEnc) refEnc) {
		f.Malformed = append(f.Malformed, mal(name, d, c(body), t, "non-canonical: differs from the re-encoding of the cell it holds"))
	}
	nonCanon("non-canonical id header (bin16)", func(e refEnc) refEnc { return e.raw(0xc5, 0, 16).raw(id[:]...).uint('r').int(1).int(0).nil() })
	nonCanon("non-canonical kind (uint8 r)", func(e refEnc) refEnc { return e.bin(id[:]).raw(0xcc, 'r').int(1).int(0).nil() })
	nonCanon("non-canonical written (uint64 0)", func(e refEnc) refEnc {
		return e.bin(id[:]).uint('m').int(1).raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 0).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1)
	})
	nonCanon("non-canonical stats header (array16)", func(e refEnc) refEnc {
		return e.bin(id[:]).uint('m').int(1).int(0).raw(0xdc, 0, 6).int(1).int(1).int(1).int(1).uint(0).uint(1)
	})
	nonCanon("non-canonical sumsq_lo (uint32 1)", func(e refEnc) refEnc {
		return e.bin(id[:]).uint('m').int(1).int(0).arr(6).int(1).int(1).int(1).int(1).uint(0).raw(0xce, 0, 0, 0, 1)
	})
	nonCanon("non-canonical negative delta (int16 -1)", func(e refEnc) refEnc { return e.bin(id[:]).uint('r').raw(0xd1, 0xff, 0xff).int(0).nil() })
	f.Malformed = append(f.Malformed, mal("non-canonical body header (array16)", d, env(d, 1).raw(0xdc, 0, 5).bin(id[:]).uint('r').int(1).int(0).nil().b, t,
		"non-canonical: differs from the re-encoding of the cell it holds"))
	return f
}

// dModel is a log's regular cells by id.
type dModel map[string]int64

func checkDeltalog(t *checker, raw []byte) {
	var f dFile
	readJSON(t, raw, &f)
	require.NotEmpty(t, f.IDs)
	for _, v := range f.IDs {
		at := must(time.Parse(time.RFC3339Nano, v.Time))
		node := must(strconv.ParseUint(v.Node, 16, 64))
		require.Equal(t, v.UUID, timeid.FromParts(at, v.ClockSeq, node).String())
		// Independently: 60-bit count of 100 ns ticks since 1582-10-15,
		// version 1, RFC 4122 variant, clock sequence, node.
		ticks := new(big.Int).Sub(big.NewInt(at.Unix()), big.NewInt(time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC).Unix()))
		ticks.Mul(ticks, big.NewInt(10_000_000)).Add(ticks, big.NewInt(int64(at.Nanosecond()/100)))
		tk := ticks.Uint64()
		var u [16]byte
		binary.BigEndian.PutUint32(u[0:], uint32(tk))
		binary.BigEndian.PutUint16(u[4:], uint16(tk>>32))
		binary.BigEndian.PutUint16(u[6:], uint16(tk>>48)&0x0fff|0x1000)
		binary.BigEndian.PutUint16(u[8:], v.ClockSeq&0x3fff|0x8000)
		copy(u[10:], binary.BigEndian.AppendUint64(nil, node)[2:])
		id := must(timeid.Parse(v.UUID))
		require.Equal(t, u[:], id[:], "uuid layout of %s", v.UUID)
		require.True(t, id.Time().Equal(at.Truncate(100*time.Nanosecond)))
	}
	require.NotEmpty(t, f.Order)
	for _, o := range f.Order {
		a, b := must(timeid.Parse(o.A)), must(timeid.Parse(o.B))
		if o.AKind == "" {
			require.Equal(t, o.Compare, a.Compare(b), "%s vs %s", o.A, o.B)
			require.Equal(t, o.Compare, refCompareID(a, b), "reference order %s vs %s", o.A, o.B)
		} else {
			ca, cb := deltalog.Cell{ID: a, Kind: deltalog.Kind(o.AKind[0])}, deltalog.Cell{ID: b, Kind: deltalog.Kind(o.BKind[0])}
			require.Equal(t, o.Compare, deltalog.CompareCells(ca, cb))
			ref := -refCompareID(a, b)
			if ref == 0 {
				ref = cmpInt(int(o.AKind[0]), int(o.BKind[0]))
			}
			require.Equal(t, o.Compare, ref, "reference cell order")
		}
	}
	require.NotEmpty(t, f.Cells)
	for _, j := range f.Cells {
		c := fromCellJSON(t, j)
		if s := j.Stats; s != nil && s.Count > 0 {
			// Stats some observations have: x² ≡ x (mod 2), so the sum
			// of squares has the sum's parity.
			require.Equal(t, uint64(s.Sum)&1, uint64(s.SumSqLo)&1, "cell %s: sumsq and sum differ in parity", j.ID)
		}
		require.Equal(t, j.Hex, hex.EncodeToString(must(c.MarshalBinary())))
		require.Equal(t, j.Hex, refCell(t, j))
		var dec deltalog.Cell
		require.NoError(t, dec.UnmarshalBinary(unhex(t, j.Hex)))
		require.Equal(t, c, dec)
	}
	require.NotEmpty(t, f.Moments)
	for _, mv := range f.Moments {
		t.Run("moments/"+mv.Name, func(t *checker) {
			vs := i64s(mv.Values)
			st := logStats(t, vs)
			m, okM := st.Mean()
			v, okV := st.Variance()
			require.Equal(t, mv.Mean != "", okM, "Stats.Mean: present iff the log is not empty")
			require.Equal(t, mv.Variance != "", okV, "Stats.Variance: present iff the log is not empty")
			if okM {
				require.Equal(t, mv.Mean, fmtDouble(m), "Stats.Mean")
				require.Equal(t, mv.Variance, fmtDouble(v), "Stats.Variance")
			}
			// Model (SPEC.md 8.3, which refers to 7.1): the mean and the
			// variance are the exact quotients rounded once, as tally's;
			// both are absent for an empty log.
			wantMean, wantVar := exactMoments(vs)
			require.Equal(t, wantMean, mv.Mean, "mean model")
			require.Equal(t, wantVar, mv.Variance, "variance model")
		})
	}
	require.NotEmpty(t, f.Batches)
	for _, bv := range f.Batches {
		t.Run("batch/"+bv.Note, func(t *checker) {
			require.Equal(t, bv.Error, runBatch(t, bv, applyDeltalogBatch), "Counters.Apply")
			require.Equal(t, bv.Error, batchModel(bv, 10*time.Minute, false), "model of SPEC.md 8.4")
			if bv.Error == "" {
				require.Equal(t, bv.Reads, batchReadsModel(bv), "reads vs model: each (counter, id) counts once")
				require.Equal(t, bv.Reads, deltalogBatchReads(t, bv), "reads after Counters.Apply")
			} else {
				require.Empty(t, bv.Reads)
			}
		})
	}
	require.NotEmpty(t, f.Windows)
	for _, w := range f.Windows {
		now := must(time.Parse(time.RFC3339Nano, w.Now))
		c := must(deltalog.New(memory.NewPartitions(), deltalog.Options{Window: time.Duration(w.WindowNS), FutureSkew: time.Duration(w.FutureNS), Clock: func() time.Time { return now }}))
		id := must(timeid.Parse(w.ID))
		requireKind(t, w.Error, c.Add(context.Background(), "counter", id, int64(w.Delta)), w.ID)
		// Model: accepted iff now-window <= id time <= now+skew, delta != 0.
		at := id.Time()
		want := ""
		switch { // SPEC.md 8.4: the window before the delta
		case at.Before(now.Add(-time.Duration(w.WindowNS))) || at.After(now.Add(time.Duration(w.FutureNS))):
			want = "outside_window"
		case w.Delta == 0:
			want = "invalid_amount"
		}
		require.Equal(t, want, w.Error, "window model for %s", w.IDTimeNote)
	}
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *checker) {
			rs := runD(t, sc, false)
			ms := map[string]dModel{}
			for _, r := range sc.Replicas {
				ms[r] = dModel{}
			}
			for j, st := range sc.Steps {
				m := ms[st.Replica]
				want := ""
				switch st.Op {
				case "add":
					id, err := timeid.Parse(st.ID)
					switch {
					case err != nil:
						want = "invalid_txn"
					case *st.Delta == 0:
						want = "invalid_amount"
					default:
						if old, ok := m[id.String()]; ok && old != int64(*st.Delta) {
							want = "conflicting_transaction"
						} else {
							m[id.String()] = int64(*st.Delta)
						}
					}
				case "merge":
					next := dModel{}
					for k, v := range m {
						next[k] = v
					}
					for k, v := range ms[st.From] {
						if old, ok := next[k]; ok && old != v {
							want = "conflicting_transaction"
						}
						next[k] = v
					}
					if want == "" {
						ms[st.Replica] = next
					}
				case "merge_before":
					if st.Merged != nil {
						// The merge cell holds exactly the regular cells at
						// or below its id.
						mid := must(timeid.Parse(st.Merged.ID))
						var below []int64
						for k, v := range m {
							if must(timeid.Parse(k)).Compare(mid) <= 0 {
								below = append(below, v)
							}
						}
						require.Equal(t, statsModel(below), *st.Merged.Stats, "step %d merge cell vs model", j)
						require.Equal(t, st.Merged.Hex, refCell(t, *st.Merged))
						// It is at the newest cell before the cutoff whose
						// aggregate fits (SPEC.md 8.3).
						require.True(t, statsFit(below), "step %d: the merge cell fits", j)
						cutoff := must(time.Parse(time.RFC3339Nano, st.Cutoff))
						for k := range m {
							if id := must(timeid.Parse(k)); id.Compare(mid) > 0 && id.Time().Before(cutoff) {
								var at []int64
								for k2, v := range m {
									if must(timeid.Parse(k2)).Compare(id) <= 0 {
										at = append(at, v)
									}
								}
								require.False(t, statsFit(at), "step %d: a merge at %s would fit", j, k)
							}
						}
					}
					continue
				default:
					continue
				}
				if st.Error == "conflicting_transaction" && st.Op == "insert" {
					continue
				}
				require.Equal(t, want, st.Error, "model disagrees at step %d", j)
			}
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				got := dStateOf(t, rs[name])
				require.Equal(t, want, got, "%s final state", name)
				for _, cj := range want.Cells {
					require.Equal(t, cj.Hex, refCell(t, cj))
				}
				var vals []int64
				for _, v := range ms[name] {
					vals = append(vals, v)
				}
				sm := statsModel(vals)
				require.NotNil(t, want.Read, "%s read", name)
				require.Empty(t, want.ReadError)
				require.Equal(t, sm, want.Read.Stats, "%s: read stats vs model (sum of every regular cell ever added)", name)
				require.Equal(t, sm.Sum, want.Read.Value)
				n, sum, sq := exactModel(vals)
				if statsFit(vals) {
					n, sum, sq = "", "", ""
				}
				require.Equal(t, [3]string{n, sum, sq}, [3]string{want.Read.ExactCount, want.Read.ExactSum, want.Read.ExactSumSq}, "%s: exact", name)
				// decode(hex) of every cell rebuilds the log.
				var l deltalog.Log
				for _, cj := range want.Cells {
					var c deltalog.Cell
					require.NoError(t, c.UnmarshalBinary(unhex(t, cj.Hex)))
					require.NoError(t, l.Insert(c))
				}
				require.True(t, l.Equal(rs[name]))
			}
		})
	}
	checkMalformed(t, f.Malformed)
}

func fitsInt64(vs []int64) bool {
	s := new(big.Int)
	for _, v := range vs {
		s.Add(s, big.NewInt(v))
	}
	return s.IsInt64()
}

// exactModel returns the count, sum and sum of squares of deltas, exactly.
func exactModel(vs []int64) (n, sum, sumsq string) {
	s, sq := new(big.Int), new(big.Int)
	for _, v := range vs {
		b := big.NewInt(v)
		s.Add(s, b)
		sq.Add(sq, new(big.Int).Mul(b, b))
	}
	return strconv.Itoa(len(vs)), s.String(), sq.String()
}

// statsFit reports whether a cell holds the statistics of deltas: the
// sum in int64, the sum of squares below 2^128.
func statsFit(vs []int64) bool {
	_, sum, sumsq := exactModel(vs)
	s, _ := new(big.Int).SetString(sum, 10)
	sq, _ := new(big.Int).SetString(sumsq, 10)
	return s.IsInt64() && sq.BitLen() <= 128
}

// statsModel computes SPEC.md's statistics of a set of deltas; past int64
// or 2^128 the fields are clamped (SPEC.md 8.3).
func statsModel(vs []int64) statsJSON {
	if len(vs) == 0 {
		return statsJSON{}
	}
	mn, mx := vs[0], vs[0]
	for _, v := range vs {
		mn, mx = min(mn, v), max(mx, v)
	}
	_, sum, sumsq := exactModel(vs)
	s, _ := new(big.Int).SetString(sum, 10)
	sq, _ := new(big.Int).SetString(sumsq, 10)
	if sq.BitLen() > 128 {
		sq.Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
	}
	lo := new(big.Int).And(sq, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(sq, 64).Uint64()
	return statsJSON{I64(len(vs)), *clampBig(s), I64(mn), I64(mx), U64(hi), U64(lo)}
}

// refCompareID is SPEC.md's timeuuid order: the 60-bit timestamp, then
// bytes 0..7 unsigned, then bytes 8..15 as signed bytes.
func refCompareID(a, b deltalog.ID) int {
	ts := func(id deltalog.ID) uint64 {
		return uint64(binary.BigEndian.Uint16(id[6:])&0x0fff)<<48 | uint64(binary.BigEndian.Uint16(id[4:]))<<32 | uint64(binary.BigEndian.Uint32(id[0:]))
	}
	if c := cmpInt64(int64(ts(a)), int64(ts(b))); c != 0 {
		return c
	}
	if c := bytes.Compare(a[:8], b[:8]); c != 0 {
		return c
	}
	for i := 8; i < 16; i++ {
		if c := cmpInt(int(int8(a[i])), int(int8(b[i]))); c != 0 {
			return c
		}
	}
	return 0
}

func cmpInt(a, b int) int { return cmpInt64(int64(a), int64(b)) }
func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// batchVec is one Apply of a batch against a fixed clock (default
// options): the error the whole batch fails with, or none. Used by
// deltalog.json (Counters.Apply, deltas) and balance.json (Accounts.Apply,
// amounts).
type batchVec struct {
	Note    string        `json:"note"`
	Now     string        `json:"now"`
	Updates []batchUpdate `json:"updates"`
	Error   string        `json:"error,omitempty"`
	// Reads are, for a deltalog batch that succeeds, each key's value and
	// cell count read right after it.
	Reads map[string]batchRead `json:"reads,omitempty"`
}

type batchRead struct {
	Value I64 `json:"value"`
	Cells int `json:"cells"`
}

// withVariant sets byte 8 of an add step's id (the variant bits and the
// top of the clock sequence) to b.
func withVariant(st dStep, b byte) dStep {
	id := must(timeid.Parse(st.ID))
	raw := [16]byte(id)
	raw[8] = b
	st.ID = fmt.Sprintf("%x-%x-%x-%x-%x", raw[0:4], raw[4:6], raw[6:8], raw[8:10], raw[10:16])
	return st
}

// deltalogBatchReads applies a batch to an empty store and reads every key
// it names (nil when the batch fails).
func deltalogBatchReads(t *checker, bv batchVec) map[string]batchRead {
	now := must(time.Parse(time.RFC3339Nano, bv.Now))
	c := must(deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }}))
	var b deltalog.Batch
	for _, u := range bv.Updates {
		b.Add(u.Key, must(timeid.Parse(u.ID)), int64(u.Delta))
	}
	if c.Apply(context.Background(), &b) != nil {
		return nil
	}
	out := map[string]batchRead{}
	for _, u := range bv.Updates {
		r := must(c.Read(context.Background(), u.Key))
		out[u.Key] = batchRead{I64(r.Value), r.Cells}
	}
	return out
}

// batchReadsModel: each distinct (key, id) counts once.
func batchReadsModel(bv batchVec) map[string]batchRead {
	out := map[string]batchRead{}
	seen := map[[2]string]bool{}
	for _, u := range bv.Updates {
		r := out[u.Key]
		if k := [2]string{u.Key, u.ID}; !seen[k] {
			seen[k] = true
			r.Value += u.Delta
			r.Cells++
		}
		out[u.Key] = r
	}
	return out
}

type batchUpdate struct {
	Key   string `json:"key"`
	ID    string `json:"id"`
	Delta I64    `json:"delta"`
}

// runBatch applies bv with apply, building one batch of its updates.
func runBatch(t *checker, bv batchVec, apply func(now time.Time, add func(func(key string, id deltalog.ID, d int64))) error) string {
	now := must(time.Parse(time.RFC3339Nano, bv.Now))
	err := apply(now, func(add func(string, deltalog.ID, int64)) {
		for _, u := range bv.Updates {
			add(u.Key, must(timeid.Parse(u.ID)), int64(u.Delta))
		}
	})
	return kindOf(t, err)
}

// batchModel is SPEC.md 8.4's (deltalog) or 9.3's (balance) order of
// checks, for the default window (5 min or 10 min) and FutureSkew 5 s.
func batchModel(bv batchVec, window time.Duration, amountFirst bool) string {
	now := must(time.Parse(time.RFC3339Nano, bv.Now))
	seen := map[[2]string]int64{}
	for _, u := range bv.Updates {
		at := must(timeid.Parse(u.ID)).Time()
		outside := at.Before(now.Add(-window)) || at.After(now.Add(5*time.Second))
		k := [2]string{u.Key, u.ID}
		d, dup := seen[k]
		switch {
		case !validID(u.Key):
			return "invalid_identifier"
		case amountFirst && u.Delta == 0:
			return "invalid_amount"
		case outside:
			return "outside_window"
		case u.Delta == 0:
			return "invalid_amount"
		case dup && d != int64(u.Delta):
			return "conflicting_transaction"
		case dup:
			continue
		}
		seen[k] = int64(u.Delta)
	}
	return ""
}

// logStats reads the stats of a log holding one regular cell per value.
func logStats(t *checker, vs []int64) deltalog.Stats {
	l := &deltalog.Log{}
	for i, v := range vs {
		require.NoError(t, l.Add(vid(float64(i), 1, 1), v))
	}
	r, err := l.Read()
	require.NoError(t, err)
	require.Equal(t, len(vs), r.Cells)
	return r.Stats
}

// applyDeltalogBatch applies a batch with Counters.Apply (default options
// and a fixed clock) on an empty store.
func applyDeltalogBatch(now time.Time, fill func(func(string, deltalog.ID, int64))) error {
	c := must(deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }}))
	var b deltalog.Batch
	fill(b.Add)
	return c.Apply(context.Background(), &b)
}
