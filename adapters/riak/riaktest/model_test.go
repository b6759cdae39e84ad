package riaktest_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/proptest"
)

// TestCausalityAgainstModel drives the double through the real client with
// random reads, context-carrying writes, blind writes and deletes from
// several clients, and compares every read with a plain model of Riak's
// causal semantics that knows nothing about version vectors: a write
// supersedes exactly the writes its issuer had read (plus, for a blind write,
// nothing), and a read returns the writes nobody has superseded. That is
// Riak's behaviour in a bucket type with dotted version vectors (dvvType),
// with delete_mode=immediate so that the model need not track tombstones
// kept after a delete.
//
// Replay a failure with the command the test logs.
func TestCausalityAgainstModel(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	srv := startDVV(t, riaktest.Options{DeleteMode: riaktest.ReapImmediately})
	cl := client(t, srv)

	const clients = 3
	runs := proptest.Scale(20)
	for run := 0; run < runs; run++ {
		key := "k" + strconv.Itoa(run)
		// Model state: every write ever made (by index) and the set each
		// write superseded. The live set is what no write superseded.
		type write struct {
			value      string
			tombstone  bool
			supersedes []int
		}
		var writes []write
		superseded := map[int]bool{}
		live := func() []string {
			var out []string
			for i, w := range writes {
				if !superseded[i] && !w.tombstone {
					out = append(out, w.value)
				}
			}
			return out
		}
		reaped := func() bool { // only tombstones left: the double reaps the key
			for i := range writes {
				if !superseded[i] && !writes[i].tombstone {
					return false
				}
			}
			return true
		}
		// Per client: the vclock of its last read and the write indexes that
		// read had seen.
		vclocks := make([][]byte, clients)
		seen := make([][]int, clients)

		for step := 0; step < 40; step++ {
			c := rng.Intn(clients)
			switch r := rng.Intn(10); {
			case r < 4: // read
				resp := fetch(t, cl, dvvType, key)
				want := live()
				if reaped() {
					require.True(t, resp.IsNotFound, "seed %d run %d step %d", seed, run, step)
					vclocks[c], seen[c] = nil, nil
					continue
				}
				got := values(resp)
				slices.Sort(got)
				slices.Sort(want)
				require.Equal(t, want, got, "seed %d run %d step %d", seed, run, step)
				vclocks[c] = resp.VClock
				seen[c] = nil
				for i := range writes {
					seen[c] = append(seen[c], i)
				}
			case r < 8: // write with the client's context (nil if it never read)
				v := fmt.Sprintf("w%d", len(writes))
				require.NoError(t, store(cl, dvvType, key, v, vclocks[c]))
				writes = append(writes, write{value: v, supersedes: slices.Clone(seen[c])})
				for _, i := range seen[c] {
					superseded[i] = true
				}
			case r < 9: // blind write
				v := fmt.Sprintf("w%d", len(writes))
				require.NoError(t, store(cl, dvvType, key, v, nil))
				writes = append(writes, write{value: v})
			default: // delete with the client's context
				if vclocks[c] == nil {
					continue
				}
				del := deleteCmd(t, dvvType, key, vclocks[c])
				require.NoError(t, cl.Execute(del))
				writes = append(writes, write{tombstone: true, supersedes: slices.Clone(seen[c])})
				for _, i := range seen[c] {
					superseded[i] = true
				}
				if reaped() {
					// Only tombstones left: the double reaps the key at
					// once and forgets them.
					for i := range writes {
						superseded[i] = true
					}
				}
			}
		}
		n, _ := srv.Siblings(dvvType, bucket, key)
		if !reaped() {
			unsuperseded := 0
			for i := range writes {
				if !superseded[i] {
					unsuperseded++
				}
			}
			require.Equal(t, unsuperseded, n, "stored siblings (tombstones included)")
		}
	}
}

// Each key has actors of its own (Riak's key epochs): a put to one key
// with another key's vclock covers none of its siblings, in both kinds of
// bucket type.
func TestVClockOfAnotherKeyCoversNothing(t *testing.T) {
	for _, typ := range []string{dvvType, "default"} {
		t.Run(typ, func(t *testing.T) {
			srv := startDVV(t)
			cl := client(t, srv)
			cmd, err := riakc.NewStoreBucketPropsCommandBuilder().WithBucketType("default").WithBucket(bucket).
				WithAllowMult(true).Build()
			require.NoError(t, err)
			require.NoError(t, cl.Execute(cmd))
			require.NoError(t, store(cl, typ, "b", "b1", nil))
			for _, v := range []string{"a1", "a2", "a3"} {
				require.NoError(t, store(cl, typ, "a", v, fetch(t, cl, typ, "a").VClock))
			}
			require.NoError(t, store(cl, typ, "b", "b2", fetch(t, cl, typ, "a").VClock))
			require.ElementsMatch(t, []string{"b1", "b2"}, values(fetch(t, cl, typ, "b")))
		})
	}
}
