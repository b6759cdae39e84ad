package tpncounter

import (
	"bytes"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// FuzzEncodedHorizon: EncodedHorizon never panics, its errors wrap a
// decoder sentinel, and on every input UnmarshalBinary accepts it accepts
// too and gives the decoded counter's Horizon (a driver sets siblings
// aside by it before decoding them). Seeds: every vector encoding, a
// tgcounter's body as either half.
//
//	go test ./tpncounter -run '^$' -fuzz FuzzEncodedHorizon -fuzztime 60s
func FuzzEncodedHorizon(f *testing.F) {
	for _, b := range vectorEncodings(f) {
		f.Add(asCounter(b, 0))
		if !bytes.Equal(asCounter(b, 1), b) {
			f.Add(asCounter(b, 1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, herr := EncodedHorizon(data)
		if herr != nil && !errors.Is(herr, crdt.ErrCorruptEncoding) && !errors.Is(herr, crdt.ErrTooLarge) &&
			!errors.Is(herr, crdt.ErrTypeMismatch) && !errors.Is(herr, crdt.ErrUnsupportedVersion) {
			t.Fatalf("EncodedHorizon: %v wraps no decoder sentinel", herr)
		}
		var c Counter
		if err := c.UnmarshalBinary(data); err != nil {
			return
		}
		if herr != nil {
			t.Fatalf("UnmarshalBinary accepts %x, EncodedHorizon refuses: %v", data, herr)
		}
		if !h.Equal(c.Horizon()) {
			t.Fatalf("EncodedHorizon %v, decoded Horizon %v", h, c.Horizon())
		}
	})
}
