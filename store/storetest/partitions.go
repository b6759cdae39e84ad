package storetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/crdt/crdttest"
	"github.com/counterkit/counterkit/internal/kitrun"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
)

// RunPartitions checks that the stores newStore returns keep the
// store.Partitions contract, each check on a fresh, empty store:
//
//   - lww: the greater timestamp wins, equal timestamps the greater value
//     as unsigned bytes, in whatever order the writes arrive, and
//     partitions are independent;
//   - delete-shadows: a delete hides values with older and equal
//     timestamps, not newer ones;
//   - late-write: a write arriving after a point, range or partition
//     delete with a greater timestamp stays invisible;
//   - range-bounds: a range delete covers Key inclusive to End exclusive
//     (nil End: no bound), keys compared as unsigned bytes;
//   - scan: key order, from, stopping early, a partition of more than one
//     page (1,500 rows), rows handed out that stay valid;
//   - snapshot: order, the empty partition, the limit (crdt.ErrTooLarge;
//     math.MaxInt reads all; a negative one is crdt.ErrInvalidConfig);
//   - atomic: a batch over several partitions with one invalid mutation
//     writes nothing;
//   - refusals: every refusal of store.CheckMutations, with its sentinel,
//     writing nothing; invalid partition keys on reads;
//   - limits: a row key of store.MaxRowKey bytes, a value of store.MaxValue
//     bytes, a batch of store.MaxBatch mutations, of store.MaxBatchBytes
//     bytes in one partition and of store.MaxSpanningBatchBytes across two
//     are accepted;
//   - copies: keys and values are copied in and out;
//   - cancelled: a done context is honoured and the write does not happen;
//   - isolation: concurrent Snapshots see each batch wholly or not at all;
//   - model: seeded random histories of batches and reads give the same
//     reads as a plain model of the contract (a metamorphic check: one op
//     list, two implementations, histories compared);
//   - idempotence: the batches of each history applied in a shuffled
//     order, some twice, some split into single mutations, leave the
//     model's rows.
func RunPartitions(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	t.Helper()
	run(t, partitionChecks, newStore)
}

var partitionChecks = []check[store.Partitions]{
	{"lww", partLWW},
	{"delete-shadows", partDeleteShadows},
	{"late-write", partLateWrite},
	{"range-bounds", partRangeBounds},
	{"scan", partScan},
	{"snapshot", partSnapshot},
	{"atomic", partAtomic},
	{"refusals", partRefusals},
	{"limits", partLimits},
	{"copies", partCopies},
	{"cancelled", partCancelled},
	{"isolation", partIsolation},
	{"model", partModel},
	{"idempotence", partIdempotence},
}

func put(part, key, value string, ts int64) store.Mutation {
	return store.Mutation{Partition: part, Op: store.OpPut, Key: []byte(key), Value: []byte(value), Timestamp: ts}
}

func del(part, key string, ts int64) store.Mutation {
	return store.Mutation{Partition: part, Op: store.OpDelete, Key: []byte(key), Timestamp: ts}
}

func delRange(part string, key, end []byte, ts int64) store.Mutation {
	return store.Mutation{Partition: part, Op: store.OpDeleteRange, Key: key, End: end, Timestamp: ts}
}

func delPart(part string, ts int64) store.Mutation {
	return store.Mutation{Partition: part, Op: store.OpDeletePartition, Timestamp: ts}
}

// apply applies each mutation as a batch of its own.
func (s *steps) apply(muts ...store.Mutation) {
	for _, m := range muts {
		s.do(func() error { return wrap("apply "+renderMutation(m), s.p.Apply(s.ctx, []store.Mutation{m})) })
	}
}

func (s *steps) batch(muts ...store.Mutation) { s.do(func() error { return s.p.Apply(s.ctx, muts) }) }

// expect checks that partition part holds the rows want, as rendered by
// rowsOf.
func (s *steps) expect(part, what, want string) {
	s.do(func() error {
		got, err := rowsOf(s.ctx, s.p, part)
		if err != nil || got == want {
			return wrap(what, err)
		}
		return fmt.Errorf("%s: partition %s holds %q, want %q", what, part, got, want)
	})
}

// rowsOf renders a partition's rows as "k=v k=v" read by Snapshot, and
// checks that Scan agrees.
func rowsOf(ctx context.Context, p store.Partitions, part string) (string, error) {
	snap, err := p.Snapshot(ctx, part, 1<<20, store.ReadComplete)
	if err != nil {
		return "", fmt.Errorf("Snapshot(%s): %w", part, err)
	}
	scanned, err := scan(ctx, p, part, nil, store.ReadComplete, 0)
	if err != nil {
		return "", fmt.Errorf("Scan(%s): %w", part, err)
	}
	if !storekit.SameRows(snap, scanned) {
		return "", fmt.Errorf("partition %s: Snapshot %s but Scan %s", part, renderRows(snap), renderRows(scanned))
	}
	s := make([]string, len(snap))
	for i, r := range snap {
		s[i] = string(r.Key) + "=" + string(r.Value)
	}
	return strings.Join(s, " "), nil
}

func partLWW(ctx context.Context, e *env[store.Partitions]) error {
	writes := []store.Mutation{
		put("p", "k", "b", 5),
		put("p", "k", "z", 3), // older: loses though greater
		put("p", "k", "a", 7), // newer: wins though smaller
		put("p", "k", "c", 7), // equal: the greater value wins
		put("p", "k", "b", 7),
		put("p", "j", "\x80", 2), // unsigned: 0x80 > 0x7f
		put("p", "j", "\x7f", 2),
		put("p", "i", "ab", 4), // a longer value with the same prefix is greater
		put("p", "i", "a", 4),
	}
	const want = "i=ab j=\x80 k=c"
	s := &steps{ctx: ctx}
	for _, order := range []string{"forward", "reverse"} {
		s.fresh(e)
		w := slices.Clone(writes)
		if order == "reverse" {
			slices.Reverse(w)
		}
		s.apply(w...)
		s.expect("p", "last write wins, "+order+" arrival", want)
		s.expect("q", "another partition is independent", "")
	}
	// In one batch too.
	s.fresh(e)
	s.batch(writes...)
	s.expect("p", "last write wins within one batch", want)
	return s.err
}

func partDeleteShadows(ctx context.Context, e *env[store.Partitions]) error {
	s := &steps{ctx: ctx, p: e.fresh()}
	s.apply(
		put("p", "older", "v", 4), put("p", "equal", "v", 5), put("p", "newer", "v", 6),
		del("p", "older", 5), del("p", "equal", 5), del("p", "newer", 5),
		put("p", "other", "v", 1), put("q", "older", "v", 4),
	)
	s.expect("p", "a delete hides older and equal values, not newer", "newer=v other=v")
	s.expect("q", "a delete touches its own partition only", "older=v")
	// A newer write after the delete is visible again.
	s.apply(put("p", "older", "w", 6))
	s.expect("p", "a write newer than the delete", "newer=v older=w other=v")
	return s.err
}

func partLateWrite(ctx context.Context, e *env[store.Partitions]) error {
	cases := []struct {
		name string
		del  store.Mutation
	}{
		{"point", del("p", "k", 10)},
		{"range", delRange("p", []byte("a"), []byte("z"), 10)},
		{"open range", delRange("p", []byte("j"), nil, 10)},
		{"partition", delPart("p", 10)},
	}
	s := &steps{ctx: ctx}
	for _, c := range cases {
		s.fresh(e)
		s.apply(put("p", "k", "before", 9), c.del, put("p", "k", "late", 9), put("p", "k", "late-equal", 10))
		s.expect("p", "a late write under a "+c.name+" delete", "")
		// Also when the delete is in the batch after the write, and when
		// the delete arrives first and alone.
		s.apply(put("p", "k", "newer", 11))
		s.expect("p", "a write newer than a "+c.name+" delete", "k=newer")
		s.fresh(e)
		s.batch(put("p", "k", "late", 3), c.del)
		s.expect("p", "a write and a newer "+c.name+" delete in one batch", "")
	}
	return s.err
}

func partRangeBounds(ctx context.Context, e *env[store.Partitions]) error {
	keys := []string{"", "\x00", "a", "b", "ba", "c", "d", "\x7f", "\x80", "\xff", "\xff\xff"}
	cases := []struct {
		name     string
		key, end []byte
		left     string // the keys left, as rendered by rowsOf
	}{
		{"[b,c)", []byte("b"), []byte("c"), "=v \x00=v a=v c=v d=v \x7f=v \x80=v \xff=v \xff\xff=v"},
		{"[b,ba)", []byte("b"), []byte("ba"), "=v \x00=v a=v ba=v c=v d=v \x7f=v \x80=v \xff=v \xff\xff=v"},
		{"[c,nil)", []byte("c"), nil, "=v \x00=v a=v b=v ba=v"},
		{"[nil,a)", nil, []byte("a"), "a=v b=v ba=v c=v d=v \x7f=v \x80=v \xff=v \xff\xff=v"},
		{"[\\x7f,\\x80)", []byte{0x7f}, []byte{0x80}, "=v \x00=v a=v b=v ba=v c=v d=v \x80=v \xff=v \xff\xff=v"},
		{"[\\x80,\\xff\\xff)", []byte{0x80}, []byte{0xff, 0xff}, "=v \x00=v a=v b=v ba=v c=v d=v \x7f=v \xff\xff=v"},
		{"[\\x00,\\x00\\x00)", []byte{0}, []byte{0, 0}, "=v a=v b=v ba=v c=v d=v \x7f=v \x80=v \xff=v \xff\xff=v"},
	}
	s := &steps{ctx: ctx}
	for _, c := range cases {
		s.fresh(e)
		muts := make([]store.Mutation, len(keys))
		for i, k := range keys {
			muts[i] = put("p", k, "v", 1)
		}
		s.batch(muts...)
		s.apply(delRange("p", c.key, c.end, 1))
		s.expect("p", "range delete "+c.name, c.left)
	}
	return s.err
}

// big writes n rows to part, in batches of 500, with keys that sort
// differently as signed and unsigned bytes, and returns them in order (nil
// after a failure).
func (s *steps) big(part string, n int) []store.Row {
	rows := make([]store.Row, n)
	muts := make([]store.Mutation, n)
	for i := range n {
		k := []byte{byte(i * 7919 % 256), byte(i / 256), byte(i)}
		rows[i] = store.Row{Key: k, Value: []byte(fmt.Sprint(i))}
		muts[i] = store.Mutation{Partition: part, Op: store.OpPut, Key: k, Value: rows[i].Value, Timestamp: 1}
	}
	for lo := 0; lo < n; lo += 500 {
		s.batch(muts[lo:min(lo+500, n)]...)
	}
	if s.err != nil {
		return nil
	}
	slices.SortFunc(rows, func(a, b store.Row) int { return bytes.Compare(a.Key, b.Key) })
	return rows
}

// scan returns the rows a Scan of part from from hands fn, stopping it
// after stop rows (0: never). It keeps them without copying: rows handed
// out must stay valid.
func scan(ctx context.Context, p store.Partitions, part string, from []byte, level store.Read, stop int) ([]store.Row, error) {
	var got []store.Row
	err := p.Scan(ctx, part, from, level, func(r store.Row) bool {
		got = append(got, r)
		return stop == 0 || len(got) < stop
	})
	return got, err
}

// same records an error unless a read what succeeded with the rows want.
func (s *steps) same(what string, want, got []store.Row, err error) {
	s.do(func() error {
		if err != nil || storekit.SameRows(got, want) {
			return wrap(what, err)
		}
		i := 0
		for i < min(len(got), len(want)) && storekit.SameRows(got[i:i+1], want[i:i+1]) {
			i++
		}
		return fmt.Errorf("%s: %d rows, want %d in unsigned key order (first difference at %d)", what, len(got), len(want), i)
	})
}

func partScan(ctx context.Context, e *env[store.Partitions]) error {
	s := &steps{ctx: ctx, p: e.fresh()}
	const n = 1500
	want := s.big("p", n)
	if s.err != nil {
		return s.err
	}
	got, err := scan(ctx, s.p, "p", nil, store.ReadAny, 0)
	s.same(fmt.Sprintf("scan of %d rows", n), want, got, err)
	// fn owns each row: changing it does not disturb the scan.
	got = got[:0]
	err = s.p.Scan(ctx, "p", nil, store.ReadAny, func(r store.Row) bool {
		got = append(got, storekit.CloneRow(r))
		clear(r.Key)
		clear(r.Value)
		return true
	})
	s.same("scan whose fn changes the rows it is given", want, got, err)
	// From a key present, from between two keys, from past the end.
	for _, i := range []int{0, 1, 700, n - 1} {
		for _, between := range []int{0, 1} {
			from := append(slices.Clone(want[i].Key), make([]byte, between)...)
			got, err := scan(ctx, s.p, "p", from, store.ReadAny, 0)
			s.same(fmt.Sprintf("scan from %q", from), want[i+between:], got, err)
		}
	}
	// Stopping early: fn is not called again.
	for _, stop := range []int{1, 3, 150, 1200} {
		got, err := scan(ctx, s.p, "p", nil, store.ReadAny, stop)
		s.same(fmt.Sprintf("scan told to stop at row %d", stop), want[:stop], got, err)
	}
	got, err = scan(ctx, s.p, "absent", nil, store.ReadAny, 0)
	s.same("scan of an absent partition", nil, got, err)
	return s.err
}

func partSnapshot(ctx context.Context, e *env[store.Partitions]) error {
	s := &steps{ctx: ctx, p: e.fresh()}
	got, err := s.p.Snapshot(ctx, "absent", 10, store.ReadAny)
	s.same("snapshot of an absent partition", nil, got, err)
	want := s.big("p", 1500)
	if s.err != nil {
		return s.err
	}
	for _, level := range []store.Read{store.ReadAny, store.ReadComplete} {
		got, err := s.p.Snapshot(ctx, "p", 1500, level)
		s.same("snapshot of 1500 rows with limit 1500", want, got, err)
	}
	got, err = s.p.Snapshot(ctx, "p", math.MaxInt, store.ReadComplete)
	s.same("snapshot of 1500 rows with limit math.MaxInt", want, got, err)
	for _, limit := range []int{1499, 10, 0} {
		_, err := s.p.Snapshot(ctx, "p", limit, store.ReadComplete)
		s.refused(err, crdt.ErrTooLarge, "snapshot of 1500 rows with limit %d", limit)
	}
	_, err = s.p.Snapshot(ctx, "p", -1, store.ReadComplete)
	s.refused(err, crdt.ErrInvalidConfig, "snapshot with limit -1")
	// Deleted rows do not count against the limit.
	s.apply(delRange("p", nil, want[1000].Key, 2))
	got, err = s.p.Snapshot(ctx, "p", 500, store.ReadComplete)
	s.same("snapshot with limit 500 after deleting 1000 of 1500 rows", want[1000:], got, err)
	return s.err
}

func partAtomic(ctx context.Context, e *env[store.Partitions]) error {
	s := &steps{ctx: ctx, p: e.fresh()}
	s.apply(put("p", "old", "v", 1), put("q", "old", "v", 1))
	for i, bad := range []store.Mutation{
		put("r", "k", "v", 0),
		put("r", "k", "", 1),
		{Partition: "", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1},
	} {
		batch := []store.Mutation{put("p", "new", "v", 2), delPart("q", 2), put("s", "new", "v", 2)}
		batch = slices.Insert(batch, min(i+1, len(batch)), bad)
		if s.err == nil && s.p.Apply(ctx, batch) == nil {
			s.err = fmt.Errorf("apply of %s succeeded", renderBatch(batch))
		}
		for part, want := range map[string]string{"p": "old=v", "q": "old=v", "r": "", "s": ""} {
			s.expect(part, "a batch with one invalid mutation writes nothing", want)
		}
	}
	// A valid batch over several partitions applies wholly.
	s.batch(put("p", "new", "v", 2), delPart("q", 2), put("s", "new", "v", 2))
	for part, want := range map[string]string{"p": "new=v old=v", "q": "", "s": "new=v"} {
		s.expect(part, "a batch over three partitions", want)
	}
	if s.err != nil {
		return s.err
	}
	if err := s.p.Apply(ctx, nil); err != nil {
		return fmt.Errorf("apply of an empty batch: %w", err)
	}
	return nil
}

func partRefusals(ctx context.Context, e *env[store.Partitions]) error {
	long := bytes.Repeat([]byte("k"), store.MaxRowKey+1)
	type refusal struct {
		name string
		m    store.Mutation
		want error
	}
	cases := []refusal{
		{"zero timestamp", put("p", "k", "v", 0), crdt.ErrInvalidAmount},
		{"negative timestamp", del("p", "k", -1), crdt.ErrInvalidAmount},
		{"empty value", put("p", "k", "", 1), crdt.ErrInvalidAmount},
		{"nil value", store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte("k"), Timestamp: 1}, crdt.ErrInvalidAmount},
		{"row key too long", store.Mutation{Partition: "p", Op: store.OpPut, Key: long, Value: []byte("v"), Timestamp: 1}, crdt.ErrTooLarge},
		{"range end too long", delRange("p", nil, long, 1), crdt.ErrTooLarge},
		{"value too long", store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: make([]byte, store.MaxValue+1), Timestamp: 1}, crdt.ErrTooLarge},
		{"empty range", delRange("p", []byte("b"), []byte("b"), 1), crdt.ErrInvalidAmount},
		{"reversed range", delRange("p", []byte("b"), []byte("a"), 1), crdt.ErrInvalidAmount},
		{"unknown op 0", store.Mutation{Partition: "p", Key: []byte("k"), Timestamp: 1}, crdt.ErrInvalidAmount},
		{"unknown op 9", store.Mutation{Partition: "p", Op: 9, Key: []byte("k"), Timestamp: 1}, crdt.ErrInvalidAmount},
		{"delete with a value", store.Mutation{Partition: "p", Op: store.OpDelete, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}, crdt.ErrInvalidAmount},
		{"partition delete with a value", store.Mutation{Partition: "p", Op: store.OpDeletePartition, Value: []byte{}, Timestamp: 1}, crdt.ErrInvalidAmount},
	}
	// Batches over the byte limits: two values of MaxValue in one
	// partition, and a batch spanning two partitions one byte over
	// MaxSpanningBatchBytes (with SpanningOverhead per mutation).
	big2 := make([]byte, store.MaxValue)
	cases = append(cases, refusal{"batch over store.MaxBatchBytes", store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte("big"), Value: big2, Timestamp: 1}, crdt.ErrTooLarge})
	cases = append(cases, refusal{"spanning batch over store.MaxSpanningBatchBytes", store.Mutation{Partition: "q", Op: store.OpPut, Key: []byte("k"),
		Value: make([]byte, store.MaxSpanningBatchBytes-len("first")-len("v")-len("k")-2*store.SpanningOverhead+1), Timestamp: 1}, crdt.ErrTooLarge})
	for name, k := range crdttest.InvalidKeys() {
		cases = append(cases, refusal{"partition key " + name, put(k, "k", "v", 1), crdt.ErrInvalidKey})
	}
	s := &steps{ctx: ctx, p: e.fresh()}
	for _, c := range cases {
		batch := []store.Mutation{put("p", "first", "v", 1), c.m}
		if c.name == "batch over store.MaxBatchBytes" {
			batch[0].Value = big2
		}
		s.refused(s.p.Apply(ctx, batch), c.want, "apply with %s", c.name)
		s.expect("p", "a refused batch ("+c.name+") writes nothing", "")
		s.expect("q", "a refused batch ("+c.name+") writes nothing", "")
	}
	big := make([]store.Mutation, store.MaxBatch+1)
	for i := range big {
		big[i] = put("p", fmt.Sprint(i), "v", 1)
	}
	s.refused(s.p.Apply(ctx, big), crdt.ErrTooLarge, "apply of %d mutations", len(big))
	s.expect("p", "a batch over store.MaxBatch writes nothing", "")
	// Many small mutations across two partitions: few bytes, but one more
	// than MaxSpanningBatchBytes counts with their overhead (Cassandra
	// refuses a batch across partitions past batch_size_fail_threshold,
	// 50 KiB by default: "Batch too large").
	small := make([]store.Mutation, store.MaxSpanningBatchBytes/(store.SpanningOverhead+3)+1)
	for i := range small {
		small[i] = put([]string{"p", "q"}[i%2], fmt.Sprintf("%02x", i%256), "v", int64(i/256+1))
	}
	s.refused(s.p.Apply(ctx, small), crdt.ErrTooLarge, "apply of %d small mutations across partitions", len(small))
	s.expect("p", "a refused spanning batch of small mutations writes nothing", "")
	s.expect("q", "a refused spanning batch of small mutations writes nothing", "")
	for name, k := range crdttest.InvalidKeys() {
		_, err := s.p.Snapshot(ctx, k, 10, store.ReadAny)
		s.refused(err, crdt.ErrInvalidKey, "snapshot of an invalid partition key (%s)", name)
		_, err = scan(ctx, s.p, k, nil, store.ReadAny, 0)
		s.refused(err, crdt.ErrInvalidKey, "scan of an invalid partition key (%s)", name)
	}
	return s.err
}

func partLimits(ctx context.Context, e *env[store.Partitions]) error {
	s := &steps{ctx: ctx, p: e.fresh()}
	key := bytes.Repeat([]byte{0xff}, store.MaxRowKey)
	most := make([]store.Mutation, store.MaxBatch)
	for i := range most {
		most[i] = store.Mutation{Partition: "q", Op: store.OpPut, Key: []byte{byte(i >> 8), byte(i)}, Value: []byte{1}, Timestamp: 1}
	}
	// Two mutations across two partitions, at MaxSpanningBatchBytes with
	// their overhead.
	half := store.MaxSpanningBatchBytes/2 - store.SpanningOverhead
	for _, c := range []struct {
		what  string
		batch []store.Mutation
	}{
		{"a row key of store.MaxRowKey bytes with a value of store.MaxValue bytes",
			[]store.Mutation{{Partition: "p", Op: store.OpPut, Key: key, Value: bytes.Repeat([]byte("v"), store.MaxValue), Timestamp: 1}}},
		{"a batch of store.MaxBatchBytes bytes in one partition", fillBytes("r", store.MaxBatchBytes)},
		{"a batch of store.MaxSpanningBatchBytes bytes, overhead counted, across two partitions",
			append(fillBytes("s", half), fillBytes("t", store.MaxSpanningBatchBytes-2*store.SpanningOverhead-half)...)},
		{"a batch of store.MaxBatch mutations", most},
	} {
		s.do(func() error { return wrap(c.what, s.p.Apply(ctx, c.batch)) })
		var m model
		m.apply(c.batch)
		for _, part := range storekit.PartitionsOf(c.batch) {
			got, err := s.p.Snapshot(ctx, part, len(c.batch), store.ReadComplete)
			s.same(c.what+", read back", m.rows(part), got, err)
		}
	}
	s.do(func() error {
		return wrap("a range delete ending at a key of store.MaxRowKey bytes", s.p.Apply(ctx, []store.Mutation{delRange("p", nil, key, 2)}))
	})
	return s.err
}

// wrap prefixes a non-nil err with what.
func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func partCopies(ctx context.Context, e *env[store.Partitions]) error {
	s := &steps{ctx: ctx, p: e.fresh()}
	k, v := []byte("key"), []byte("value")
	from := []byte("x")
	s.batch(store.Mutation{Partition: "p", Op: store.OpPut, Key: k, Value: v, Timestamp: 2}, delRange("p", from, []byte("y"), 5))
	copy(k, "XXX")
	copy(v, "YYYYY")
	s.expect("p", "changing a put's key and value after Apply changed the store", "key=value")
	// Were the range [x,y) kept by reference, it would now be [a,y) and
	// hide a later write to "key" at a timestamp below its own.
	from[0] = 'a'
	s.apply(put("p", "key", "late", 3))
	s.expect("p", "changing a range delete's bounds after Apply changed the store", "key=late")
	s.do(func() error {
		rows, err := s.p.Snapshot(ctx, "p", 10, store.ReadAny)
		for _, r := range rows {
			r.Key[0], r.Value[0] = 'Z', 'Z'
		}
		if err != nil {
			return err
		}
		return s.p.Scan(ctx, "p", nil, store.ReadAny, func(r store.Row) bool {
			r.Key[0], r.Value[0] = 'W', 'W'
			return true
		})
	})
	s.expect("p", "changing rows a read returned changed the store", "key=late")
	return s.err
}

func partCancelled(ctx context.Context, e *env[store.Partitions]) error {
	s := &steps{ctx: ctx, p: e.fresh()}
	s.apply(put("p", "k", "v", 1))
	done, cancel := context.WithCancel(ctx)
	cancel()
	s.refused(s.p.Apply(done, []store.Mutation{put("p", "k", "w", 2)}), context.Canceled, "apply with a cancelled context")
	_, err := s.p.Snapshot(done, "p", 10, store.ReadAny)
	s.refused(err, context.Canceled, "snapshot with a cancelled context")
	rows, err := scan(done, s.p, "p", nil, store.ReadAny, 0)
	s.refused(err, context.Canceled, "scan with a cancelled context")
	if s.err == nil && len(rows) != 0 {
		s.err = fmt.Errorf("scan with a cancelled context called fn %d times", len(rows))
	}
	s.expect("p", "an Apply with a cancelled context", "k=v")
	return s.err
}

// partIsolation: writers apply batches that set every row of two
// partitions to the same generation; concurrent Snapshots must see one
// generation across each partition.
func partIsolation(ctx context.Context, e *env[store.Partitions]) error {
	p := e.fresh()
	const rows, writers, gens = 8, 3, 40
	var writing, ready atomic.Int32
	writing.Store(writers)
	// Batches take increasing timestamps in the order they are applied,
	// so that none is shadowed by a later one's and every one is seen.
	var order sync.Mutex
	var last int64
	// Goroutines 0 to writers-1 write once both readers are there; the
	// last two read p and q until every writer is done.
	return kitrun.Parallel(writers+2, func(w int) error {
		if w >= writers {
			part := []string{"p", "q"}[w-writers]
			ready.Add(1)
			for writing.Load() > 0 {
				got, err := p.Snapshot(ctx, part, rows, store.ReadComplete)
				if err != nil {
					return err
				}
				for _, r := range got {
					if !bytes.Equal(r.Value, got[0].Value) || len(got) != rows && len(got) != 0 {
						return fmt.Errorf("a Snapshot concurrent with batches saw part of a batch: %s", renderRows(got))
					}
				}
			}
			return nil
		}
		defer writing.Add(-1)
		for ready.Load() < 2 {
			runtime.Gosched()
		}
		for range gens {
			order.Lock()
			last++
			ts := last
			batch := make([]store.Mutation, 0, 2*rows)
			for _, part := range []string{"p", "q"} {
				for r := range rows {
					batch = append(batch, put(part, fmt.Sprint(r), fmt.Sprintf("%06d", ts), ts))
				}
			}
			err := p.Apply(ctx, batch)
			order.Unlock()
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func partModel(ctx context.Context, e *env[store.Partitions]) error {
	e.logSeed()
	r := rand.New(rand.NewSource(e.seed))
	for c := range e.cases {
		p := e.fresh()
		var m model
		hist := genHistory(r, 40)
		for i, op := range hist {
			if op.batch != nil {
				if err := p.Apply(ctx, op.batch); err != nil {
					return e.seeded(fmt.Errorf("case %d, op %d %v: %w", c, i, op, err))
				}
				m.apply(op.batch)
				continue
			}
			want := m.rows(op.part)
			var got []store.Row
			var err error
			if op.read == "snapshot" {
				got, err = p.Snapshot(ctx, op.part, 100, store.ReadComplete)
			} else {
				want = scanModel(want, op.from, op.stop)
				got, err = scan(ctx, p, op.part, op.from, store.ReadComplete, op.stop)
			}
			if err != nil {
				return e.seeded(fmt.Errorf("case %d, op %d %v: %w", c, i, op, err))
			}
			if !storekit.SameRows(got, want) {
				return e.seeded(fmt.Errorf("case %d, op %d %v: store %s, model %s\nhistory:\n%s", c, i, op, renderRows(got), renderRows(want), renderHistory(hist[:i+1])))
			}
		}
	}
	return nil
}

func renderHistory(h []genOp) string {
	var b strings.Builder
	for i, op := range h {
		fmt.Fprintf(&b, "  %d: %v\n", i, op)
	}
	return b.String()
}

func partIdempotence(ctx context.Context, e *env[store.Partitions]) error {
	e.logSeed()
	r := rand.New(rand.NewSource(e.seed ^ 0x5eed))
	for c := range e.cases {
		var m model
		var batches [][]store.Mutation
		for _, op := range genHistory(r, 30) {
			if op.batch != nil {
				m.apply(op.batch)
				batches = append(batches, op.batch)
			}
		}
		var order [][]store.Mutation
		for _, b := range batches {
			order = append(order, b)
			switch r.Intn(4) {
			case 0:
				order = append(order, storekit.CloneBatch(b))
			case 1:
				for _, mu := range b {
					order = append(order, []store.Mutation{mu})
				}
			}
		}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		p := e.fresh()
		for _, b := range order {
			if err := p.Apply(ctx, b); err != nil {
				return e.seeded(fmt.Errorf("case %d: Apply %s: %w", c, renderBatch(b), err))
			}
		}
		for _, part := range genParts {
			got, err := p.Snapshot(ctx, part, 100, store.ReadComplete)
			if err != nil {
				return e.seeded(err)
			}
			if want := m.rows(part); !storekit.SameRows(got, want) {
				hist := make([]genOp, len(order))
				for i, b := range order {
					hist[i].batch = b
				}
				return e.seeded(fmt.Errorf("case %d: batches applied in another order, some twice, give %s in partition %s; the model %s\norder:\n%s",
					c, renderRows(got), part, renderRows(want), renderHistory(hist)))
			}
		}
	}
	return nil
}

// fillBytes returns puts to partition whose keys and values sum to exactly
// n bytes, each value at most store.MaxValue.
func fillBytes(partition string, n int) []store.Mutation {
	var muts []store.Mutation
	for i := 0; n > 0; i++ {
		k := []byte(fmt.Sprintf("%04d", i))
		v := min(n-len(k), store.MaxValue)
		if v < 1 { // too little left for a row: widen the previous value
			muts[len(muts)-1].Value = append(muts[len(muts)-1].Value, make([]byte, n)...)
			break
		}
		muts = append(muts, store.Mutation{Partition: partition, Op: store.OpPut, Key: k, Value: bytes.Repeat([]byte{'x'}, v), Timestamp: 1})
		n -= len(k) + v
	}
	return muts
}
