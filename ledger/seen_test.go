package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/txnrec"
	"github.com/counterkit/counterkit/store"
)

// TestSightingsEncoding: stored sightings encode sorted (SPEC.md 6.9),
// decode to what was encoded, and the key is the prefix and 32 base32
// characters, in no ledger key's space.
func TestSightingsEncoding(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 1, time.UTC)
	in := []Sighting{{"b~bbbbbbbb", 2, at}, {"a~aaaaaaaa", 9, at.Add(time.Hour)}, {"a~aaaaaaaa", 1, at}}
	b, err := encodeSightings(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeSightings(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Sighting{in[2], in[1], in[0]}
	if len(out) != 3 {
		t.Fatalf("decoded %v, want %v", out, want)
	}
	for i := range want {
		if out[i].Writer != want[i].Writer || out[i].Version != want[i].Version || !out[i].At.Equal(want[i].At) {
			t.Fatalf("decoded %v, want %v", out, want)
		}
	}
	if k := SeenKey("acct"); !IsSeenKey(k) || len(k) != len(SeenKeyPrefix)+32 || IsRecordKey(k) {
		t.Errorf("SeenKey(acct) = %q", k)
	}
	if err := checkKey("ledger key", SeenKey("acct")); !errors.Is(err, crdt.ErrInvalidKey) {
		t.Errorf("a ledger key in the sightings' space: %v, want ErrInvalidKey", err)
	}
}

// TestSightingsRefused: the encoder and the decoder refuse what no ledger
// writes, each with its sentinel; the decoder wraps ErrCorruptEncoding
// for a body that passes the envelope.
func TestSightingsRefused(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	many := make([]Sighting, maxSeen+1)
	for i := range many {
		many[i] = Sighting{crdt.ActorID(strings.Repeat("w", 1+i%200) + string(rune('a'+i/200))), 1, at}
	}
	// maxSeen sightings of writers with 255-byte ids: 18 MB.
	long := make([]Sighting, maxSeen)
	for i := range long {
		long[i] = Sighting{crdt.ActorID(fmt.Sprintf("%0255d", i)), 1, at}
	}
	for _, tc := range []struct {
		name string
		in   []Sighting
		want error
	}{
		{"version 0", []Sighting{{"a", 0, at}}, crdt.ErrInvalidAmount},
		{"version above a writer's", []Sighting{{"a", txnrec.MaxVersion + 1, at}}, crdt.ErrInvalidAmount},
		{"a time not after 1970", []Sighting{{"a", 1, time.Unix(0, 0)}}, crdt.ErrInvalidAmount},
		{"an invalid writer", []Sighting{{"", 1, at}}, crdt.ErrInvalidActor},
		{"one writer and version twice", []Sighting{{"a", 1, at}, {"a", 1, at.Add(1)}}, crdt.ErrInvalidAmount},
		{"more than maxSeen", many, crdt.ErrTooLarge},
		{"above 16 MiB", long, crdt.ErrTooLarge},
	} {
		if _, err := encodeSightings(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("encode %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	good, err := encodeSightings([]Sighting{{"a", 1, at}, {"b", 1, at}})
	if err != nil {
		t.Fatal(err)
	}
	// The same body with its entries swapped: out of order.
	swapped := bytes.Replace(bytes.Replace(good, []byte{0xa1, 'a'}, []byte{0xa1, 'X'}, 1), []byte{0xa1, 'b'}, []byte{0xa1, 'a'}, 1)
	swapped = bytes.Replace(swapped, []byte{0xa1, 'X'}, []byte{0xa1, 'b'}, 1)
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"out of order", swapped, crdt.ErrCorruptEncoding},
		{"truncated", good[:len(good)-1], crdt.ErrCorruptEncoding},
		{"a record", mustRecord(t), crdt.ErrTypeMismatch},
		{"not msgpack", []byte("garbage"), crdt.ErrCorruptEncoding},
	} {
		if _, err := decodeSightings(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("decode %s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func mustRecord(t *testing.T) []byte {
	b, err := Record{Txn: "x", Amount: 1, Writer: "a", At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Version: 1}.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodeSightings: any bytes decode to sightings that encode back to
// the same bytes, or fail with a sentinel; never a panic.
func FuzzDecodeSightings(f *testing.F) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, in := range [][]Sighting{nil, {{"a", 1, at}}, {{"a", 1, at}, {"b", 7, at.Add(time.Hour)}}} {
		b, err := encodeSightings(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSightings(b)
		if err != nil {
			for _, e := range []error{crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch, crdt.ErrUnsupportedVersion, crdt.ErrTooLarge} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("decode error %v wraps no sentinel", err)
		}
		again, err := encodeSightings(s)
		if err != nil {
			t.Fatalf("decoded %v does not encode: %v", s, err)
		}
		if s2, err := decodeSightings(again); err != nil || len(s2) != len(s) {
			t.Fatalf("re-decode: %v %v", s2, err)
		}
	})
}

// TestEarliestSightingsKept: of more sightings than a ledger keeps, the
// earliest stay (ties by writer, then version); fewer stay as they are.
func TestEarliestSightingsKept(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	in := []Sighting{{"e", 1, at.Add(3)}, {"b", 2, at.Add(1)}, {"c", 1, at}, {"a", 1, at.Add(1)}, {"b", 1, at.Add(1)}, {"d", 1, at.Add(2)}}
	got := earliestSightings(slices.Clone(in), 4)
	want := []Sighting{{"c", 1, at}, {"a", 1, at.Add(1)}, {"b", 1, at.Add(1)}, {"b", 2, at.Add(1)}}
	if !slices.Equal(got, want) {
		t.Errorf("earliest 4: %v, want %v", got, want)
	}
	if got := earliestSightings(slices.Clone(in), 6); !slices.Equal(got, in) {
		t.Errorf("earliest 6 of 6: %v, want them as they were", got)
	}
	// maxSeen sightings of writers with 255-byte ids encode above 16 MiB:
	// the earliest that fit in a store's value are kept, encode, and are
	// stored.
	long := make([]Sighting, maxSeen)
	for i := range long {
		long[i] = Sighting{crdt.ActorID(fmt.Sprintf("%0255d", i)), 1, at.Add(time.Duration(len(long) - i))}
	}
	kept := earliestSightings(slices.Clone(long), maxSeen)
	b, err := encodeSightings(kept)
	if err != nil || len(kept) < maxSeen*4/10 || len(kept) == maxSeen || kept[0] != long[len(long)-1] {
		t.Errorf("of %d sightings of 255-byte writers: kept %d (first %v), encoded to %d bytes, %v; want the earliest that fit in %d",
			len(long), len(kept), kept[0].Writer[250:], len(b), err, store.MaxValue)
	}
	if err := memory.NewSiblings().Put(context.Background(), SeenKey("k"), "w", b, nil); err != nil {
		t.Errorf("the %d earliest sightings (%d bytes) are not stored: %v", len(kept), len(b), err)
	}
}
