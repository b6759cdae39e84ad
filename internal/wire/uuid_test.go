package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
)

func TestUUIDText(t *testing.T) {
	const id = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	u, ok := ParseUUIDText(id)
	if !ok {
		t.Fatal("canonical UUID not recognised")
	}
	if got := string(AppendUUIDText(nil, u[:])); got != id {
		t.Fatalf("round trip %q, want %q", got, id)
	}
	for _, s := range []string{
		"6BA7B810-9DAD-11D1-80B4-00C04FD430C8", // uppercase: kept as text
		"6ba7b8109dad11d180b400c04fd430c8",     // no dashes
		"6ba7b810-9dad-11d1-80b4-00c04fd430c",  // short
		"6ba7b810-9dad-11d1-80b4-00c04fd430cg", // not hex
		"6ba7b810_9dad-11d1-80b4-00c04fd430c8", // wrong separator
	} {
		if _, ok := ParseUUIDText(s); ok {
			t.Errorf("%q taken for a canonical UUID", s)
		}
	}
}

func TestTxnIDEncoding(t *testing.T) {
	for _, tc := range []struct {
		id      string
		uuidBin bool
		size    int
	}{
		{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", true, 18},
		{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", false, 38},
		{"txn-1", true, 6},
	} {
		e := NewValueEncoder()
		e.TxnID(tc.id, tc.uuidBin)
		b, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != tc.size {
			t.Errorf("%q (bin %v): %d bytes, want %d", tc.id, tc.uuidBin, len(b), tc.size)
		}
		d := valueDecoder(b)
		got, isUUID, err := d.TxnIDBytes(nil, tc.uuidBin)
		if err != nil || string(got) != tc.id {
			t.Errorf("%q (bin %v): decoded %q, %v", tc.id, tc.uuidBin, got, err)
		}
		if wantUUID := b[0] == 0xc4; isUUID != wantUUID { // bin 8
			t.Errorf("%q (bin %v): isUUID %v, want %v", tc.id, tc.uuidBin, isUUID, wantUUID)
		}
	}
	// With bins, a UUID written as text is not canonical; a bin of another
	// length is not an id.
	for name, build := range map[string]func(e *Encoder){
		"uuid as text": func(e *Encoder) { e.String("6ba7b810-9dad-11d1-80b4-00c04fd430c8") },
		"bin of 15":    func(e *Encoder) { e.Bin(make([]byte, 15)) },
	} {
		e := NewValueEncoder()
		build(e)
		b, _ := e.Bytes()
		d := valueDecoder(b)
		if _, _, err := d.TxnIDBytes(nil, true); !errors.Is(err, crdt.ErrCorruptEncoding) {
			t.Errorf("%s: %v, want ErrCorruptEncoding", name, err)
		}
	}
}

func valueDecoder(b []byte) *Decoder {
	d := &Decoder{data: b, r: bytes.NewReader(b)}
	d.dec = msgpack.NewDecoder(d.r)
	return d
}
