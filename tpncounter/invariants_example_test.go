package tpncounter_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// A retired entry whose forgot is 2^63−1 ns (April 2262, after every time
// a transaction may have) would refuse every timed transaction: the
// decoder refuses it and names the invariant.
func ExampleInvariantError() {
	data, _ := hex.DecodeString("93aa74706e636f756e746572039291" + "94a567686f7374" + "0101cf7fffffffffffffff" + "90")
	var c tpncounter.Counter
	err := c.UnmarshalBinary(data)
	var ie *tpncounter.InvariantError
	fmt.Println(errors.As(err, &ie), ie.Invariant)
	// Output:
	// true forgot-within-txn-times
}

// A driver that merges siblings with MergeBinary reads each one's horizon
// first, and sets aside one whose horizon is later than its clock allows
// (a stamp far in the future would refuse every timed transaction until
// then).
func ExampleEncodedHorizon() {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stamp := func(x crdt.TxnID) (time.Time, bool) { // "t3" was made at 03:00
		var h int
		_, err := fmt.Sscanf(string(x), "t%d", &h)
		return base.Add(time.Duration(h) * time.Hour), err == nil
	}
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1, FoldedLength: 1, TxnTime: stamp})
	for _, x := range []crdt.TxnID{"t1", "t2", "t3", "t4", "t5"} {
		_, _ = c.Apply("a", x, 1)
	}
	data, _ := c.MarshalBinary()
	h, err := tpncounter.EncodedHorizon(data)
	fmt.Println(h.Format(time.Kitchen), err)
	now, skew := base.Add(6*time.Hour), time.Minute
	fmt.Println("set aside:", h.After(now.Add(skew)))
	// Output:
	// 2:00AM <nil>
	// set aside: false
}
