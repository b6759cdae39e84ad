package tpncounter_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/tpncounter"
)

// A version 2 encoding holding a transaction id as a 16-byte bin is
// corrupt (SPEC.md 6.7: "Version 2 ... writes every txn as a str (a bin
// there is corrupt)"). MergeBinary must refuse what UnmarshalBinary
// refuses, also when the entry equals the receiver's own (skipped path).
func TestMergeBinaryVersion2WithBinUUID(t *testing.T) {
	c, err := tpncounter.New(tpncounter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply("a", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", 1); err != nil {
		t.Fatal(err)
	}
	enc, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	head := []byte("\x93\xaatpncounter")
	if !bytes.HasPrefix(enc, head) || enc[len(head)] != 3 {
		t.Fatalf("expected a version 3 encoding, got %x", enc)
	}
	v2 := bytes.Clone(enc)
	v2[len(head)] = 2
	t.Logf("input %s", hex.EncodeToString(v2))

	var d tpncounter.Counter
	if err := d.UnmarshalBinary(v2); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("UnmarshalBinary: %v, want corrupt", err)
	}
	before, _ := c.MarshalBinary()
	err = c.MergeBinary(v2)
	after, _ := c.MarshalBinary()
	if !bytes.Equal(before, after) {
		t.Fatalf("receiver changed")
	}
	if !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("MergeBinary accepted a version 2 input with a bin txn id that UnmarshalBinary refuses (err %v)", err)
	}
}

// timedRetiredBody returns a version 4 tgcounter encoding of n timed retired
// entries ([actor, 1, 0, 0, 1], 3-byte actors in order) and no base.
func timedRetiredBody(n int) []byte {
	b := []byte("\x93\xa9tgcounter\x04")
	b = append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	const alpha = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for i := 0; i < n; i++ {
		x := i
		var id [3]byte
		for k := 2; k >= 0; k-- {
			id[k] = alpha[x%len(alpha)]
			x /= len(alpha)
		}
		b = append(b, 0x95, 0xa3)
		b = append(b, id[:]...)
		b = append(b, 1, 0, 0, 1)
	}
	return b
}

// SPEC.md 3.4 and 6.7: a half holds at most 131072 entries, live or
// retired; version 4 allows one more array only for the base. A version 4
// body of 131073 timed retired entries and no base is a state no writer
// produces (Merge refuses it even into an empty counter: "merge would hold
// 131073 entries, limit 131072"), yet the decoder accepts it, because the
// body header's cap is raised for version 4 whether or not a base follows.
func TestV4EntriesPastCapWithoutBase(t *testing.T) {
	testsize.SkipSequential(t)
	ok := timedRetiredBody(131072)
	var g tpncounter.GCounter
	if err := g.UnmarshalBinary(ok); err != nil {
		t.Fatalf("131072 entries: %v", err)
	}
	bad := timedRetiredBody(131073)
	var h tpncounter.GCounter
	err := h.UnmarshalBinary(bad)
	if err == nil {
		var e tpncounter.GCounter
		t.Errorf("131073 entries without a base decoded (Merge into an empty counter then says: %v); want too_large", e.Merge(&h))
	} else if !errors.Is(err, crdt.ErrTooLarge) {
		t.Errorf("131073 entries: %v, want too_large", err)
	}
}

// SPEC.md 6.7 retired-after-cutoff: a timed retired entry's retired_at is
// not below its half's base cutoff (Fold and Merge remove such an entry,
// the base holding its total). UnmarshalBinary refuses the input below;
// MergeBinary skips the retired entry because it equals the receiver's,
// so it never checks it against the input's (new) base, merges the base,
// and the receiver's retired entry is dropped: its total (5) is lost,
// although the base claiming to hold it holds 0.
//
// receiver: P = [timed retired ["a", seq 1, total 5, forgot 0, retired_at 50]], N = []
// input:    P = [base [cutoff 100, total 0, forgot 0], the same entry], N = []
func TestMergeBinaryRetiredBeforeNewBaseCutoff(t *testing.T) {
	const head = "93aa74706e636f756e7465720492" // ["tpncounter", 4, [
	recv, _ := hex.DecodeString(head + "91" + "95a16101050032" + "90")
	data, _ := hex.DecodeString(head + "92" + "93640000" + "95a16101050032" + "90")
	t.Logf("input %x", data)

	var d tpncounter.Counter
	if err := d.UnmarshalBinary(data); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("UnmarshalBinary: %v, want corrupt", err)
	}
	var c tpncounter.Counter
	if err := c.UnmarshalBinary(recv); err != nil {
		t.Fatal(err)
	}
	v0 := c.Value()
	before, _ := c.MarshalBinary()
	err := c.MergeBinary(data)
	after, _ := c.MarshalBinary()
	v1 := c.Value()
	if err == nil || !bytes.Equal(before, after) {
		t.Errorf("MergeBinary of an input UnmarshalBinary refuses: err %v, receiver %x (value %d) -> %x (value %d)", err, before, v0, after, v1)
	}
}

// The same rule, the other way round: the input's base equals the
// receiver's, so MergeBinary leaves it out of the changed entries it
// decodes, and the new timed retired entry (retired_at 50, below the
// cutoff 100) is never checked against it. UnmarshalBinary refuses the
// input; MergeBinary returns nil.
//
// receiver: P = [base [100, 5, 0]], N = []
// input:    P = [base [100, 5, 0], ["a", 1, 7, 0, retired_at 50]], N = []
func TestMergeBinaryRetiredBeforeSameBaseCutoff(t *testing.T) {
	const head = "93aa74706e636f756e7465720492"
	recv, _ := hex.DecodeString(head + "91" + "93640500" + "90")
	data, _ := hex.DecodeString(head + "92" + "93640500" + "95a16101070032" + "90")
	t.Logf("input %x", data)
	var d tpncounter.Counter
	if err := d.UnmarshalBinary(data); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("UnmarshalBinary: %v, want corrupt", err)
	}
	var c tpncounter.Counter
	if err := c.UnmarshalBinary(recv); err != nil {
		t.Fatal(err)
	}
	if err := c.MergeBinary(data); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Errorf("MergeBinary: %v, want corrupt as UnmarshalBinary", err)
	}
}

// retiredHalf appends a tgcounter body of n timed retired entries named
// prefix + 3 characters, in order.
func retiredHalf(b []byte, prefix string, n int) []byte {
	switch {
	case n < 16:
		b = append(b, 0x90|byte(n))
	case n < 1<<16:
		b = append(b, 0xdc, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	const alpha = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for i := 0; i < n; i++ {
		x := i
		var id [3]byte
		for k := 2; k >= 0; k-- {
			id[k] = alpha[x%len(alpha)]
			x /= len(alpha)
		}
		b = append(b, 0x95, byte(0xa0|(len(prefix)+3)))
		b = append(b, prefix...)
		b = append(b, id[:]...)
		b = append(b, 1, 0, 0, 1)
	}
	return b
}

// A Merge (and MergeBinary) whose P half fits but whose N half passes
// 131072 entries fails with too_large and changes neither half (SPEC.md
// 6.6: all or nothing).
func TestMergeFailsInSecondHalfAtomically(t *testing.T) {
	testsize.SkipSequential(t)
	env := []byte("\x93\xaatpncounter\x04\x92")
	recv := append(bytes.Clone(env), 0x91, 0x96, 0xa1, 'p', 1, 0, 0, 0x91, 0x92, 0xa1, 'x', 5, 0x90)
	recv = retiredHalf(recv, "a", 131071)
	in := append(bytes.Clone(env), 0x91, 0x96, 0xa1, 'q', 1, 0, 0, 0x91, 0x92, 0xa1, 'y', 7, 0x90)
	in = retiredHalf(in, "b", 2)
	var o tpncounter.Counter
	if err := o.UnmarshalBinary(in); err != nil {
		t.Fatal(err)
	}
	for _, viaBytes := range []bool{false, true} {
		var c tpncounter.Counter
		if err := c.UnmarshalBinary(recv); err != nil {
			t.Fatal(err)
		}
		before, _ := c.MarshalBinary()
		v0 := c.Value()
		var err error
		if viaBytes {
			err = c.MergeBinary(in)
		} else {
			err = c.Merge(&o)
		}
		after, _ := c.MarshalBinary()
		if !errors.Is(err, crdt.ErrTooLarge) || !bytes.Equal(before, after) || c.Value() != v0 {
			t.Errorf("MergeBinary %v: err %v, changed %v, value %d -> %d", viaBytes, err, !bytes.Equal(before, after), v0, c.Value())
		}
	}
}

// An entry that is the receiver's with a transaction appended (a shift,
// which MergeBinary reads without copying its ids) is refused as
// UnmarshalBinary refuses it when an array of its lists is not in its
// smallest header (SPEC.md 6.7: one encoding per state): a history of 4
// written as an array 16.
func TestMergeBinaryShiftRefusesALongArrayHeader(t *testing.T) {
	c, err := tpncounter.New(tpncounter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []crdt.TxnID{"t1", "t2", "t3"} {
		if _, err := c.Apply("a", x, 1); err != nil {
			t.Fatal(err)
		}
	}
	next := c.Clone()
	if _, err := next.Apply("a", "t4", 1); err != nil {
		t.Fatal(err)
	}
	good, err := next.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The history: 4 transactions [fixstr id, 1], the first "t1".
	hist := []byte("\x94\x92\xa2t1\x01")
	if bytes.Count(good, hist) != 1 {
		t.Fatalf("no single history of 4 in %x", good)
	}
	long := bytes.Replace(good, hist, append([]byte("\xdc\x00\x04"), hist[1:]...), 1)
	var d tpncounter.Counter
	if err := d.UnmarshalBinary(long); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("UnmarshalBinary: %v, want corrupt", err)
	}
	before, _ := c.MarshalBinary() // caches c's encodings, as a reader's
	if err := c.MergeBinary(long); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("MergeBinary of %x: %v, want corrupt", long, err)
	}
	if after, _ := c.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("receiver changed")
	}
	// The same input in its smallest header merges as a shift.
	if err := c.MergeBinary(good); err != nil {
		t.Fatal(err)
	}
	if v := c.Value(); v != 4 {
		t.Fatalf("value %d after the merge, want 4", v)
	}
}
