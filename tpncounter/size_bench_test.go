package tpncounter

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/counterkit/counterkit/crdt"
)

// naturalEntry and naturalCounter are the JSON a service would write for
// the same state without counterkit: every entry with its history and
// folded record, ids as text.
type naturalTxn struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount"`
}

type naturalEntry struct {
	Seq     uint64       `json:"seq"`
	Total   int64        `json:"total"`
	Forgot  int64        `json:"forgot"`
	History []naturalTxn `json:"history"`
	Folded  []naturalTxn `json:"folded"`
}

type naturalCounter struct {
	P map[string]naturalEntry `json:"p"`
	N map[string]naturalEntry `json:"n"`
}

func natural(c *Counter) naturalCounter {
	half := func(g *GCounter) map[string]naturalEntry {
		out := map[string]naturalEntry{}
		for _, a := range g.Actors() {
			e, _ := g.Entry(a)
			ne := naturalEntry{Seq: e.Seq, Total: e.Total, Forgot: e.Forgot.UnixNano()}
			if e.Forgot.IsZero() {
				ne.Forgot = 0
			}
			for _, t := range e.History {
				ne.History = append(ne.History, naturalTxn{string(t.ID), t.Amount})
			}
			for _, t := range e.Folded {
				ne.Folded = append(ne.Folded, naturalTxn{string(t.ID), t.Amount})
			}
			out[string(a)] = ne
		}
		return out
	}
	return naturalCounter{P: half(&c.p), N: half(&c.n)}
}

// uuidState has actors entries, each with a full history and folded record
// of history transactions whose ids are random (version 4) UUIDs, a third
// of them debits.
func uuidState(tb testing.TB, actors, history int) *Counter {
	r := rand.New(rand.NewPCG(1, 2))
	c, err := New(Options{HistoryLength: history, MaxActors: MaxActorsLimit})
	if err != nil {
		tb.Fatal(err)
	}
	for a := 0; a < actors; a++ {
		actor := crdt.ActorID(fmt.Sprintf("svc-%04d~abcdefgh", a))
		for t := 0; t < 2*history+1; t++ {
			var u uuid.UUID
			for i := range u {
				u[i] = byte(r.Uint32())
			}
			u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
			amt := int64(1 + r.IntN(100000))
			if r.IntN(3) == 0 {
				amt = -amt
			}
			if _, err := c.Apply(actor, crdt.TxnID(u.String()), amt); err != nil {
				tb.Fatal(err)
			}
		}
		if _, err := c.Compact(actor); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// BenchmarkUUIDSize compares the encoding of TPNCounters whose
// transaction ids are UUIDs with the natural JSON of the same state: size
// (format version 3 writes a UUID as 16 bytes) and decode time, measured
// in the same run. best-decode-speedup is the ratio of each decoder's
// fastest decode, which other work on a shared machine disturbs least.
// Run: go test ./tpncounter -run '^$' -bench UUIDSize
func BenchmarkUUIDSize(b *testing.B) {
	for _, sz := range [][2]int{{100, 10}, {1000, 100}} {
		b.Run(fmt.Sprintf("actors=%d/history=%d", sz[0], sz[1]), func(b *testing.B) {
			c := uuidState(b, sz[0], sz[1])
			bin, err := c.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			js, err := json.Marshal(natural(c))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var msgpackTime, jsonTime time.Duration
			bestMsgpack, bestJSON := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
			for i := 0; i < b.N; i++ {
				start := time.Now()
				d, _ := New(Options{MaxActors: MaxActorsLimit})
				if err := d.UnmarshalBinary(bin); err != nil {
					b.Fatal(err)
				}
				t := time.Since(start)
				msgpackTime += t
				bestMsgpack = min(bestMsgpack, t)
				start = time.Now()
				var n naturalCounter
				if err := json.Unmarshal(js, &n); err != nil {
					b.Fatal(err)
				}
				t = time.Since(start)
				jsonTime += t
				bestJSON = min(bestJSON, t)
			}
			b.ReportMetric(float64(len(bin)), "msgpack-bytes")
			b.ReportMetric(float64(len(js)), "json-bytes")
			b.ReportMetric(float64(len(bin))/float64(len(js)), "size-ratio")
			b.ReportMetric(float64(jsonTime)/float64(msgpackTime), "decode-speedup")
			b.ReportMetric(float64(bestJSON)/float64(bestMsgpack), "best-decode-speedup")
		})
	}
}
