package storekit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

func TestCheckKey(t *testing.T) {
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		key  string
		want error
	}{
		{t.Context(), "k", nil},
		{t.Context(), "", crdt.ErrInvalidKey},
		{done, "k", context.Canceled},
		{done, "", context.Canceled}, // the context first
	} {
		if err := CheckKey(c.ctx, "key", c.key); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckKey(%q) with context error %v: %v, want %v", c.key, c.ctx.Err(), err, c.want)
		}
	}
}

func TestCovers(t *testing.T) {
	r := func(k, e string) store.Mutation {
		m := store.Mutation{Op: store.OpDeleteRange, Key: []byte(k)}
		if e != "" {
			m.End = []byte(e)
		}
		return m
	}
	for _, c := range []struct {
		a, b store.Mutation
		want bool
	}{
		{r("b", "d"), r("b", "d"), true},
		{r("b", "d"), r("c", "d"), true},
		{r("b", "d"), r("a", "d"), false},
		{r("b", "d"), r("b", "e"), false},
		{r("b", "d"), r("b", ""), false},
		{r("b", ""), r("c", ""), true},
		{r("b", ""), r("c", "z"), true},
		{r("", "d"), r("c", "d"), true},
	} {
		if got := Covers(c.a, c.b); got != c.want {
			t.Errorf("Covers([%q,%q), [%q,%q)) = %v, want %v", c.a.Key, c.a.End, c.b.Key, c.b.End, got, c.want)
		}
	}
}

// TestScanPages scans rows 0..n-1 in pages of every size around n, stopping
// at every point, and checks the rows seen and the pages read.
func TestScanPages(t *testing.T) {
	const n = 7
	var all []store.Row
	for i := range n {
		all = append(all, store.Row{Key: []byte{byte(i)}, Value: []byte(fmt.Sprint(i))})
	}
	for page := 1; page <= n+1; page++ {
		for stop := 1; stop <= n+1; stop++ {
			reads := 0
			read := func(from []byte, size int) ([]store.Row, error) {
				reads++
				i, _ := slices.BinarySearchFunc(all, from, func(r store.Row, k []byte) int { return slices.Compare(r.Key, k) })
				return CloneRows(all[i:min(i+size, n)]), nil
			}
			var got []store.Row
			err := ScanPages(nil, FirstPage, page, read, func(r store.Row) bool {
				got = append(got, CloneRow(r))
				r.Key[0] = 0xff // fn owns the row: the scan must go on from the row read
				return len(got) < stop
			})
			want := all[:min(stop, n)]
			// Pages read: until fn stops, or a short (possibly empty) page.
			wantReads := (len(want) + page - 1) / page
			if stop > n && n%page == 0 {
				wantReads++
			}
			if err != nil || !SameRows(got, want) || reads != wantReads {
				t.Errorf("page %d, stop after %d: %d rows, %d reads, %v; want %d rows, %d reads", page, stop, len(got), reads, err, len(want), wantReads)
			}
		}
	}
}

// TestClones: the copies share no memory with what they copy, and a nil
// batch stays nil.
func TestClones(t *testing.T) {
	b := []store.Mutation{{Partition: "p", Op: store.OpDeleteRange, Key: []byte("a"), End: []byte("b"), Timestamp: 1},
		{Partition: "q", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 2}}
	rows := []store.Row{{Key: []byte("k"), Value: []byte("v")}}
	cb, cr := CloneBatch(b), CloneRows(rows)
	b[0].Key[0], b[0].End[0], b[1].Value[0], rows[0].Key[0], rows[0].Value[0] = 'x', 'x', 'x', 'x', 'x'
	if string(cb[0].Key)+string(cb[0].End)+string(cb[1].Value) != "abv" || !SameRows(cr, []store.Row{{Key: []byte("k"), Value: []byte("v")}}) {
		t.Errorf("changing the originals changed the copies: %+v, %+v", cb, cr)
	}
	if CloneBatch(nil) != nil {
		t.Error("CloneBatch(nil) is not nil")
	}
	if got := PartitionsOf(append(cb, cb...)); !slices.Equal(got, []string{"p", "q"}) {
		t.Errorf("PartitionsOf = %q, want [p q]", got)
	}
}
