package retry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// vv is a toy state for Cycle: each actor's version; merging keeps the
// larger. A sibling encodes it as "a=1,b=2".
type vv map[string]int

func (v vv) String() string {
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(v)) {
		parts = append(parts, fmt.Sprintf("%s=%d", a, v[a]))
	}
	return strings.Join(parts, ",")
}

func (v vv) join(o vv) {
	for a, n := range o {
		v[a] = max(v[a], n)
	}
}

func (v vv) holds(o vv) bool {
	for a, n := range o {
		if v[a] < n {
			return false
		}
	}
	return true
}

func decode(b []byte) (vv, error) {
	v := vv{}
	for _, kv := range strings.Split(string(b), ",") {
		var a string
		var n int
		if i := strings.IndexByte(kv, '='); i > 0 {
			a = kv[:i]
			_, err := fmt.Sscan(kv[i+1:], &n)
			if err == nil {
				v[a] = n
				continue
			}
		}
		return nil, fmt.Errorf("bad entry %q", kv)
	}
	return v, nil
}

// inPlace reads in place, like the bounded Account; absorbs counts Absorb
// calls.
type inPlace struct{ absorbs *int }

func (inPlace) New() (*vv, error) { return &vv{}, nil }

func (o inPlace) Absorb(dst *vv, sibs [][]byte) (bool, error) {
	*o.absorbs++
	orig := maps.Clone(*dst)
	all := vv{}
	for _, b := range sibs {
		v, err := decode(b)
		if err != nil {
			return false, err
		}
		dst.join(v)
		all.join(v)
	}
	return all.holds(orig), nil
}

// apart reads apart while a write is pending, like the ledger.
type apart struct{ inPlace }

func (apart) Holds(fetched, local *vv) bool { return fetched.holds(*local) }
func (apart) Join(dst, src *vv) error       { dst.join(*src); return nil }

func sibs(s ...string) [][]byte {
	var out [][]byte
	for _, x := range s {
		out = append(out, []byte(x))
	}
	return out
}

func TestCycleInPlace(t *testing.T) {
	n := 0
	c := Cycle[*vv, inPlace]{Ops: inPlace{&n}}
	got, held, err := c.Read(nil)
	if err != nil || got != c.Local || !held || len(*got) != 0 {
		t.Fatalf("first read: %v %v %v, want an empty Local the store holds", got, held, err)
	}
	// A write of a=1 that may have landed stays in every read until the
	// store shows it.
	(*c.Local)["a"] = 1
	c.Ambiguous(c.Local)
	got, held, err = c.Read(sibs("b=1"))
	if err != nil || held || !c.Pending || got.String() != "a=1,b=1" {
		t.Fatalf("read without the pending write: %v held %v pending %v %v", got, held, c.Pending, err)
	}
	got, held, err = c.Read(sibs("a=1,b=1"))
	if err != nil || !held || c.Pending || string(c.Seen) != "a=1,b=1" || got.String() != "a=1,b=1" {
		t.Fatalf("read that holds it: %v held %v pending %v seen %q %v", got, held, c.Pending, c.Seen, err)
	}
	before := n
	if got, held, err = c.Read(sibs("a=1,b=1")); err != nil || !held || n != before || got != c.Local {
		t.Fatalf("the bytes seen again: held %v, %d Absorb calls, want none", held, n-before)
	}
	// A refused write of a=2 is taken back; a write that lands is Local.
	(*c.Local)["a"] = 2
	c.Undo(c.Local, func(v *vv) (bool, error) { (*v)["a"] = 1; return true, nil })
	if c.Seen != nil || c.Local.String() != "a=1,b=1" {
		t.Fatalf("undo: seen %q, local %v", c.Seen, c.Local)
	}
	c.Landed(&vv{"a": 3}, []byte("a=3"))
	if c.Pending || string(c.Seen) != "a=3" {
		t.Fatalf("landed: pending %v seen %q", c.Pending, c.Seen)
	}
	c.Undo(c.Local, func(*vv) (bool, error) { return true, errors.New("at its limit") })
	if c.Local != nil || c.Seen != nil {
		t.Fatal("an undo that fails drops Local")
	}
	if _, _, err := c.Read(sibs("a=x")); err == nil {
		t.Fatal("a bad sibling is an error")
	}
}

func TestCycleApart(t *testing.T) {
	n := 0
	c := Cycle[*vv, apart]{Ops: apart{inPlace{&n}}}
	got, held, err := c.Read(sibs("b=1"))
	if err != nil || got != c.Local || string(c.Seen) != "b=1" {
		t.Fatalf("read outside a pending write: %v held %v seen %q %v", got, held, c.Seen, err)
	}
	if got, _, _ := c.Read(sibs("b=1")); got != c.Local || n != 1 {
		t.Fatalf("the bytes seen again: %d Absorb calls, want 1", n)
	}
	(*c.Local)["a"] = 1
	c.Ambiguous(c.Local)
	got, held, err = c.Read(sibs("b=2"))
	if err != nil || held || got == c.Local || got.String() != "b=2" || c.Local.String() != "a=1,b=1" {
		t.Fatalf("pending read: %v (apart %v) held %v local %v %v; want the store's view apart", got, got != c.Local, held, c.Local, err)
	}
	merged, err := c.Merged(got)
	if err != nil || merged != got || merged.String() != "a=1,b=2" {
		t.Fatalf("merged: %v %v", merged, err)
	}
	c.Undo(&vv{"a": 9}, func(*vv) (bool, error) { t.Fatal("a state apart is dropped, not undone"); return false, nil })
	got, held, err = c.Read(sibs("a=1", "b=3"))
	if err != nil || !held || c.Pending || got != c.Local || got.String() != "a=1,b=3" {
		t.Fatalf("read that holds the pending write: %v held %v pending %v", got, held, c.Pending)
	}
	if merged, _ := c.Merged(got); merged != got {
		t.Fatal("Merged of Local is Local")
	}
}

// A state Undo changed is ahead of the store: an Apart Ops reads apart
// until a write lands, so that the driver sees its entry as the store
// holds it; a refusal of the state apart leaves Local as it was.
func TestCycleApartAhead(t *testing.T) {
	n := 0
	c := Cycle[*vv, apart]{Ops: apart{inPlace{&n}}}
	if _, _, err := c.Read(sibs("a=1")); err != nil {
		t.Fatal(err)
	}
	(*c.Local)["a"] = 2 // a write of a=2, refused: taken back as a=3
	c.Undo(c.Local, func(v *vv) (bool, error) { (*v)["a"] = 3; return true, nil })
	if !c.Ahead {
		t.Fatal("a state Undo changed is Ahead")
	}
	got, held, err := c.Read(sibs("a=1", "b=1"))
	if err != nil || held || got == c.Local || got.String() != "a=1,b=1" || c.Local.String() != "a=3" {
		t.Fatalf("read ahead: %v (apart %v) held %v local %v %v; want the store's view apart", got, got != c.Local, held, c.Local, err)
	}
	merged, _ := c.Merged(got)
	(*merged)["a"] = 4
	c.Undo(merged, func(*vv) (bool, error) { t.Fatal("a state apart is dropped, not undone"); return false, nil })
	if !c.Ahead || c.Local.String() != "a=3" {
		t.Fatalf("after a second refusal: ahead %v local %v, want a=3 still ahead", c.Ahead, c.Local)
	}
	c.Landed(&vv{"a": 4, "b": 1}, []byte("a=4,b=1"))
	if c.Ahead {
		t.Fatal("a write that lands clears Ahead")
	}
	if got, _, _ := c.Read(sibs("a=4,b=1")); got != c.Local {
		t.Fatal("after a write lands the read is in place")
	}
}

// A driver may change Local while a write is pending (the ledger's
// take-outs, on a clone): the store holding the write as it was sent is
// held, and Local, with the change, is then ahead of the store.
func TestCycleApartHeldAsSent(t *testing.T) {
	n := 0
	c := Cycle[*vv, apart]{Ops: apart{inPlace{&n}}}
	if _, _, err := c.Read(sibs("a=1")); err != nil {
		t.Fatal(err)
	}
	c.Ambiguous(&vv{"a": 2})
	c.Local = &vv{"a": 3} // changed after it was sent
	if _, held, err := c.Read(sibs("a=1")); err != nil || held || !c.Pending {
		t.Fatalf("a store without the sent write: held %v pending %v %v", held, c.Pending, err)
	}
	got, held, err := c.Read(sibs("a=2,b=1"))
	if err != nil || !held || c.Pending || !c.Ahead || got != c.Local || got.String() != "a=3,b=1" {
		t.Fatalf("a store holding the sent write: held %v pending %v ahead %v local %v %v; want held, ahead, a=3,b=1", held, c.Pending, c.Ahead, c.Local, err)
	}
	if _, held, _ := c.Read(sibs("a=2,b=1")); held || !c.Ahead {
		t.Fatalf("until the change is written: held %v ahead %v", held, c.Ahead)
	}
}
