package wire

import (
	"errors"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

func TestSharedPrefix(t *testing.T) {
	for _, tc := range []struct {
		prev, next string
		want       int
	}{
		{"", "a", 0},
		{"actor-1", "actor-2", 6},
		{"actor-1", "actor-10", 7},
		{"ab", "b", 0},
		{"xé", "xê", 1}, // é and ê share their first byte: cut to the boundary
		{"日本", "日本語", 6},
	} {
		if got := SharedPrefix(tc.prev, tc.next); got != tc.want {
			t.Errorf("SharedPrefix(%q, %q) = %d, want %d", tc.prev, tc.next, got, tc.want)
		}
	}
}

func TestFrontCodedID(t *testing.T) {
	row := func(shared uint64, suffix string) *Decoder {
		e := NewValueEncoder()
		e.Uint(shared)
		e.String(suffix)
		b, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return valueDecoder(b)
	}
	id, _, err := row(6, "2").FrontCodedID(1, "actor-1", nil)
	if err != nil || id != "actor-2" {
		t.Fatalf("got %q, %v", id, err)
	}
	for name, tc := range map[string]struct {
		shared uint64
		suffix string
		prev   string
	}{
		"shares more than prev": {8, "x", "actor-1"},
		"not canonical":         {5, "-2", "actor-1"},
		"not increasing":        {6, "0", "actor-1"},
		"equal to prev":         {6, "1", "actor-1"},
		"too long":              {0, string(make([]byte, crdt.MaxIDLen+1)), "a"},
	} {
		if _, _, err := row(tc.shared, tc.suffix).FrontCodedID(1, tc.prev, nil); !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) {
			t.Errorf("%s: %v, want a corrupt encoding", name, err)
		}
	}
}
