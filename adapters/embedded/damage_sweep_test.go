package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
)

// The damage sweep: a store written through the drivers (ledger, deltalog,
// balance, tally) and raw keys (values spanning overflow pages, a three
// level rows tree, point, range and partition deletions) is damaged in
// ways the damage suite does not cover systematically: every byte of the
// meta pages, page headers and element arrays flipped, every k-th byte
// elsewhere, each page zeroed, pairs of pages swapped, one page copied
// over another, each page put back as an earlier commit left it (a lost
// write), truncations at and between page boundaries, garbage appended.
// Each copy must open and read back exactly, or fail with a documented
// sentinel; nothing may panic or hang.

type sweepFixture struct {
	dir      string
	siblings []string // sibling keys
	parts    []string // partition keys
	want     map[string]string
	versions [][]byte // the file after successive commits
}

func sweepDump(db *embedded.DB, f *sweepFixture) (map[string]string, error) {
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range f.siblings {
		vals, _, err := db.Siblings().Fetch(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", k, err)
		}
		ss := make([]string, len(vals))
		for i, v := range vals {
			ss[i] = string(v)
		}
		slices.Sort(ss)
		out["s/"+k] = strings.Join(ss, "\x00")
	}
	for _, p := range f.parts {
		rows, err := db.Partitions().Snapshot(ctx, p, 100000, store.ReadAny)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", p, err)
		}
		var b strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&b, "%q=%q;", r.Key, r.Value)
		}
		out["p/"+p] = b.String()
	}
	return out, nil
}

func buildSweep(t *testing.T) *sweepFixture {
	t.Helper()
	ctx := context.Background()
	f := &sweepFixture{dir: t.TempDir()}
	db, err := embedded.Open(f.dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(f.dir, embedded.FileName)
	n := 0
	snap := func() {
		if n++; n%7 != 0 {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f.versions = append(f.versions, b)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		snap()
	}
	rng := rand.New(rand.NewPCG(7, 11))
	clock := func() time.Time { return time.Unix(1_800_000_000, 0) }
	// Raw siblings, some spanning overflow pages.
	for i := range 120 {
		k := fmt.Sprintf("raw-%03d", i)
		size := 10 + rng.IntN(200)
		if i%17 == 0 {
			size = 5000 + rng.IntN(9000)
		}
		v := make([]byte, size)
		for j := range v {
			v[j] = byte('a' + rng.IntN(26))
		}
		must(db.Siblings().Put(ctx, k, "a", v, nil))
		f.siblings = append(f.siblings, k)
	}
	// Ledgers.
	for a := range 3 {
		acct := fmt.Sprintf("acct/%d", a)
		l, err := ledger.New(db.Siblings(), acct, ledger.Options{Actor: "w"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 12 {
			_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("t%d-%d", a, i)), int64(1+i))
			must(err)
		}
		f.siblings = append(f.siblings, acct)
	}
	// Deltalog and balance.
	dl, err := deltalog.New(db.Partitions(), deltalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ba, err := balance.New(db.Partitions(), balance.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		must(dl.Add(ctx, fmt.Sprintf("ctr%d", i%2), timeid.New(time.Now().Add(-time.Duration(i)*time.Second)), int64(i*3-7)))
		must(ba.Add(ctx, fmt.Sprintf("bal%d", i%2), timeid.New(clock().Add(time.Duration(i)*time.Millisecond)), int64(10+i)))
	}
	// Tally.
	for k := range 2 {
		c, err := tally.New[*tally.Sum](db.Partitions(), fmt.Sprintf("tal%d", k), tallyConfig(clock, "rv"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.NewMutator()
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			must(m.Update(ctx, func(s *tally.Sum) error { return s.Add(int64(i + 1)) }))
		}
	}
	// A large partition with deletions of every kind.
	for b := range 8 {
		var muts []store.Mutation
		for i := range 60 {
			muts = append(muts, store.Mutation{Partition: "big", Op: store.OpPut, Key: fmt.Appendf(nil, "row-%04d", b*60+i),
				Value: bytes.Repeat([]byte{byte('A' + b)}, 20+i), Timestamp: tsBase + int64(b)})
		}
		must(db.Partitions().Apply(ctx, muts))
	}
	must(db.Partitions().Apply(ctx, []store.Mutation{
		{Partition: "big", Op: store.OpDelete, Key: []byte("row-0007"), Timestamp: tsBase + 100},
		{Partition: "big", Op: store.OpDeleteRange, Key: []byte("row-0100"), End: []byte("row-0140"), Timestamp: tsBase + 100},
		{Partition: "gone", Op: store.OpPut, Key: []byte("x"), Value: []byte("y"), Timestamp: tsBase},
	}))
	must(db.Partitions().Apply(ctx, []store.Mutation{{Partition: "gone", Op: store.OpDeletePartition, Timestamp: tsBase + 100}}))
	// Churn: overwrite and delete raw siblings, so pages are freed and reused.
	for i := range 40 {
		k := fmt.Sprintf("raw-%03d", i*3)
		_, tok, err := db.Siblings().Fetch(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			must(db.Siblings().Delete(ctx, k, tok))
		} else {
			must(db.Siblings().Put(ctx, k, "b", fmt.Appendf(nil, "over-%d", i), tok))
		}
	}
	n = 6
	snap() // the final version
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	keys, err := embedded.Keys(ctx, f.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Shape == embedded.ShapePartition {
			f.parts = append(f.parts, k.Key)
		}
	}
	f.parts = append(f.parts, "gone", "nothing")
	f.siblings = append(f.siblings, "absent")
	db, err = embedded.Open(f.dir, embedded.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if f.want, err = sweepDump(db, f); err != nil {
		t.Fatal(err)
	}
	return f
}

type sweepCopy struct {
	name string
	mk   func() []byte
}

// sweepCheck opens a damaged copy, reads it and verifies: "" if it is
// intact or reported with a documented sentinel, else what went wrong.
func sweepCheck(t *testing.T, f *sweepFixture, dir string, readOnly bool) (outcome string) {
	allowed := func(err error) bool {
		return errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, crdt.ErrMisconfiguredStore) ||
			errors.Is(err, crdt.ErrUnsupportedVersion)
	}
	done := make(chan string, 1)
	go func() {
		db, err := embedded.Open(dir, embedded.Options{ReadOnly: readOnly})
		if err != nil {
			if allowed(err) {
				done <- "reported"
			} else {
				done <- "other error: " + err.Error()
			}
			return
		}
		defer db.Close()
		got, err := sweepDump(db, f)
		switch {
		case err != nil && !allowed(err):
			done <- "read, other error: " + err.Error()
			return
		case err != nil:
			done <- "read reported (Open passed): " + err.Error()
			return
		}
		for k, v := range f.want {
			if got[k] != v {
				done <- fmt.Sprintf("WRONG %s: got %.80q want %.80q", k, got[k], v)
				return
			}
		}
		if err := db.Verify(); err != nil {
			done <- "verify after intact reads: " + err.Error()
			return
		}
		done <- "intact"
	}()
	select {
	case o := <-done:
		return o
	case <-time.After(20 * time.Second):
		return "HANG"
	}
}

func TestDamageSweep(t *testing.T) {
	f := buildSweep(t)
	final := f.versions[len(f.versions)-1]
	l := layoutOf(t, final)
	ps := l.ps
	t.Logf("fixture: %d bytes, %d pages (hwm %d), %d versions, %d sibling keys, %d partitions",
		len(final), len(final)/ps, l.hwm, len(f.versions), len(f.siblings), len(f.parts))
	rng := rand.New(rand.NewPCG(99, 1))
	stride := 5
	if testing.Short() {
		stride = 23
	}
	var copies []sweepCopy
	add := func(name string, mk func() []byte) { copies = append(copies, sweepCopy{name, mk}) }
	flip := func(off int, x byte) func() []byte {
		return func() []byte { b := slices.Clone(final); b[off] ^= x; return b }
	}
	isStruct := func(off int) bool {
		pg, in := off/ps, off%ps
		if pg < 2 {
			return in < 80
		}
		if !slices.Contains(l.pages, pg) {
			return in < hdr
		}
		return in < hdr+16*l.count(pg)
	}
	for off := range l.hwm * ps {
		switch {
		case isStruct(off):
			add(fmt.Sprintf("flip struct byte %d", off), flip(off, 0xff))
			add(fmt.Sprintf("flip struct bit %d.%d", off, off%8), flip(off, 1<<(off%8)))
		case off%stride == rng.IntN(stride):
			add(fmt.Sprintf("flip bit %d.%d", off, off%8), flip(off, 1<<(off%8)))
		}
	}
	for pg := range l.hwm {
		add(fmt.Sprintf("zero page %d", pg), func() []byte {
			b := slices.Clone(final)
			clear(b[pg*ps : (pg+1)*ps])
			return b
		})
		for _, q := range []int{pg + 1, rng.IntN(l.hwm)} {
			if q == pg || q >= l.hwm {
				continue
			}
			add(fmt.Sprintf("swap pages %d %d", pg, q), func() []byte {
				b := slices.Clone(final)
				copy(b[pg*ps:], final[q*ps:(q+1)*ps])
				copy(b[q*ps:], final[pg*ps:(pg+1)*ps])
				return b
			})
			add(fmt.Sprintf("page %d over page %d", q, pg), func() []byte {
				b := slices.Clone(final)
				copy(b[pg*ps:], final[q*ps:(q+1)*ps])
				return b
			})
		}
		for v, old := range f.versions[:len(f.versions)-1] {
			if len(old) < (pg+1)*ps || bytes.Equal(old[pg*ps:(pg+1)*ps], final[pg*ps:(pg+1)*ps]) {
				continue
			}
			add(fmt.Sprintf("page %d lost its write (version %d)", pg, v), func() []byte {
				b := slices.Clone(final)
				copy(b[pg*ps:], old[pg*ps:(pg+1)*ps])
				return b
			})
		}
		for _, cut := range []int{pg * ps, pg*ps + 1, pg*ps + ps/2, pg*ps + ps - 1} {
			add(fmt.Sprintf("truncate at %d", cut), func() []byte { return final[:cut:cut] })
		}
	}
	for _, n := range []int{1, 100, ps, 3 * ps} {
		g := make([]byte, n)
		for i := range g {
			g[i] = byte(rng.Uint32())
		}
		add(fmt.Sprintf("append %d garbage bytes", n), func() []byte { return append(slices.Clone(final), g...) })
	}
	t.Logf("%d copies made", len(copies))
	if max := sweepMax(); len(copies) > max {
		rng.Shuffle(len(copies), func(i, j int) { copies[i], copies[j] = copies[j], copies[i] })
		copies = copies[:max]
	}
	work := t.TempDir()
	counts := map[string]int{}
	bad := 0
	for i, c := range copies {
		dir := filepath.Join(work, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, embedded.FileName), c.mk(), 0o600); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		o := sweepCheck(t, f, dir, i%3 == 0)
		if el := time.Since(start); el > 2*time.Second {
			t.Logf("slow copy %s: %v %s", c.name, el, o)
		}
		key := o
		if k, _, ok := strings.Cut(o, ":"); ok {
			key = k
		}
		counts[key]++
		if o != "intact" && o != "reported" && !strings.HasPrefix(o, "read reported") {
			bad++
			if bad < 30 {
				t.Errorf("%s: %s", c.name, o)
			}
		}
		os.RemoveAll(dir)
	}
	t.Logf("%d copies: %v", len(copies), counts)
}

// sweepMax is how many copies TestDamageSweep checks: a sample of
// 50 under -short, COUNTERKIT_CASES if set, else 1,500.
func sweepMax() int {
	if n, err := strconv.Atoi(os.Getenv("COUNTERKIT_CASES")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return 50
	}
	return 1500
}
