package tpncounter

import (
	"encoding/hex"
	"testing"
)

// receiverStates returns the distinct tpncounter encodings of the vectors
// that decode (a tgcounter body as either half), and a few hand-made ones
// holding a base, timed retired entries and UUID ids: the states a
// MergeBinary receiver may hold.
func receiverStates(tb testing.TB) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	add := func(b []byte) {
		var c Counter
		if seen[string(b)] || c.UnmarshalBinary(b) != nil {
			return
		}
		seen[string(b)] = true
		out = append(out, b)
	}
	const head = "93aa74706e636f756e7465720"
	for _, s := range []string{
		head + "492" + "91" + "95a16101050032" + "90",                                 // P: a timed retired entry
		head + "492" + "91" + "93640500" + "90",                                       // P: a base
		head + "492" + "92" + "93640500" + "95a16101070064" + "91" + "94a16201020a",   // base, timed retired; N: retired
		head + "392" + "9196a1610100009192c4106ba7b8109dad11d180b400c04fd430c8019090", // a UUID id
	} {
		b, err := hex.DecodeString(s)
		if err != nil {
			tb.Fatal(err)
		}
		add(b)
	}
	for _, b := range vectorEncodings(tb) {
		add(asCounter(b, 0))
		add(asCounter(b, 1))
	}
	return out
}

// FuzzMergeBinaryReceivers is FuzzMergeBinary (checkShiftMerge:
// MergeBinary gives what decoding and Merge give, and a failure changes
// nothing) over many receivers: every valid vector state and states with
// a base, timed retired entries and UUID ids, so that the inputs' entries
// equal to the receiver's (skipped undecoded) meet every shape.
//
//	go test ./tpncounter -run '^$' -fuzz FuzzMergeBinaryReceivers -fuzztime 60s
func FuzzMergeBinaryReceivers(f *testing.F) {
	recvs := receiverStates(f)
	for i, r := range recvs {
		f.Add(uint16(i), r)
		f.Add(uint16(i), recvs[(i+1)%len(recvs)])
	}
	f.Fuzz(func(t *testing.T, k uint16, data []byte) {
		c, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.UnmarshalBinary(recvs[int(k)%len(recvs)]); err != nil {
			t.Fatal(err)
		}
		must(c.MarshalBinary()) // cache the entries' encodings, as a writer's are
		if err := checkShiftMerge(c, data); err != nil {
			t.Fatalf("receiver %x, input %x: %v", recvs[int(k)%len(recvs)], data, err)
		}
	})
}
