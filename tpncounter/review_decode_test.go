package tpncounter_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// A version 2 encoding holding a transaction id as a 16-byte bin is
// corrupt (SPEC.md 6.7: "Version 2 ... writes every txn as a str (a bin
// there is corrupt)"). MergeBinary must refuse what UnmarshalBinary
// refuses, also when the entry equals the receiver's own (skipped path).
func TestReviewMergeBinaryVersion2WithBinUUID(t *testing.T) {
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
