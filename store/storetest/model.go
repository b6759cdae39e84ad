package storetest

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
)

// model is the Partitions contract written as plainly as possible: it keeps
// every mutation ever applied, and a row's value is the winner, by
// store.Wins, among the puts of that row no deletion shadows.
type model struct {
	muts []store.Mutation
}

func (m *model) apply(batch []store.Mutation) {
	for _, mu := range batch {
		m.muts = append(m.muts, storekit.CloneMutation(mu))
	}
}

// rows returns the live rows of partition in unsigned byte order.
func (m *model) rows(partition string) []store.Row {
	var dels []store.Mutation
	for _, d := range m.muts {
		if d.Partition == partition && d.Op != store.OpPut {
			dels = append(dels, d)
		}
	}
	best := map[string]store.Mutation{}
	for _, p := range m.muts {
		if p.Partition != partition || p.Op != store.OpPut {
			continue
		}
		if slices.ContainsFunc(dels, func(d store.Mutation) bool { return d.Shadows(p.Key, p.Timestamp) }) {
			continue
		}
		if b, ok := best[string(p.Key)]; !ok || store.Wins(p.Value, p.Timestamp, b.Value, b.Timestamp) {
			best[string(p.Key)] = p
		}
	}
	keys := slices.Sorted(maps.Keys(best)) // Go compares strings as unsigned bytes
	out := make([]store.Row, len(keys))
	for i, k := range keys {
		out[i] = store.Row{Key: []byte(k), Value: best[k].Value}
	}
	return out
}

// renderRows prints rows compactly for error messages.
func renderRows(rows []store.Row) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = fmt.Sprintf("%q=%q", r.Key, r.Value)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func renderMutation(m store.Mutation) string {
	switch m.Op {
	case store.OpPut:
		return fmt.Sprintf("put %s/%q=%q @%d", m.Partition, m.Key, m.Value, m.Timestamp)
	case store.OpDelete:
		return fmt.Sprintf("delete %s/%q @%d", m.Partition, m.Key, m.Timestamp)
	case store.OpDeleteRange:
		end := "∞"
		if m.End != nil {
			end = fmt.Sprintf("%q", m.End)
		}
		return fmt.Sprintf("delete-range %s/[%q,%s) @%d", m.Partition, m.Key, end, m.Timestamp)
	case store.OpDeletePartition:
		return fmt.Sprintf("delete-partition %s @%d", m.Partition, m.Timestamp)
	}
	return fmt.Sprintf("%+v", m)
}

func renderBatch(b []store.Mutation) string {
	s := make([]string, len(b))
	for i, m := range b {
		s[i] = renderMutation(m)
	}
	return "{" + strings.Join(s, "; ") + "}"
}

// The generator's alphabet: keys that test unsigned ordering (bytes 0x00,
// 0x7f, 0x80, 0xff, prefixes), few timestamps so ties happen, values that
// differ in their first byte and in length.
var (
	genParts  = []string{"p", "q"}
	genKeys   = [][]byte{{0x00}, {0x00, 0x00}, []byte("a"), []byte("ab"), []byte("b"), {0x7f}, {0x80}, {0x80, 0x00}, {0xff}, {0xff, 0xff}}
	genValues = [][]byte{[]byte("a"), []byte("b"), []byte("ba"), {0x00}, {0xff}, {0x80, 0x01}}
)

// genOp is one step of a generated history: a batch, or a read.
type genOp struct {
	batch []store.Mutation // a write when not nil
	read  string           // "snapshot" or "scan"
	part  string
	from  []byte // scan: nil or a key
	stop  int    // scan: stop after this many rows (0: never)
}

func (o genOp) String() string {
	if o.batch != nil {
		return "apply " + renderBatch(o.batch)
	}
	if o.read == "scan" {
		return fmt.Sprintf("scan %s from %q stop %d", o.part, o.from, o.stop)
	}
	return "snapshot " + o.part
}

func genMutation(r *rand.Rand) store.Mutation {
	m := store.Mutation{Partition: genParts[r.Intn(len(genParts))], Timestamp: 1 + r.Int63n(6)}
	x := r.Intn(20)
	switch {
	case x < 13:
		m.Op, m.Key, m.Value = store.OpPut, genKeys[r.Intn(len(genKeys))], genValues[r.Intn(len(genValues))]
	case x < 16:
		m.Op, m.Key = store.OpDelete, genKeys[r.Intn(len(genKeys))]
	case x < 19:
		m.Op = store.OpDeleteRange
		a, b := r.Intn(len(genKeys)), r.Intn(len(genKeys))
		lo, hi := genKeys[a], genKeys[b]
		if bytes.Compare(lo, hi) > 0 {
			lo, hi = hi, lo
		}
		switch {
		case r.Intn(5) == 0:
			m.Key, m.End = nil, hi
		case r.Intn(4) == 0 || bytes.Equal(lo, hi):
			m.Key, m.End = lo, nil
		default:
			m.Key, m.End = lo, hi
		}
	default:
		m.Op = store.OpDeletePartition
	}
	return storekit.CloneMutation(m)
}

// genHistory returns a random list of n ops: batches of 1..4 mutations over
// two partitions, and reads.
func genHistory(r *rand.Rand, n int) []genOp {
	ops := make([]genOp, 0, n)
	for range n {
		if r.Intn(3) == 0 {
			o := genOp{part: genParts[r.Intn(len(genParts))], read: "snapshot"}
			if r.Intn(2) == 0 {
				o.read = "scan"
				if r.Intn(2) == 0 {
					o.from = slices.Clone(genKeys[r.Intn(len(genKeys))])
				}
				o.stop = r.Intn(4)
			}
			ops = append(ops, o)
			continue
		}
		batch := make([]store.Mutation, 1+r.Intn(4))
		for i := range batch {
			batch[i] = genMutation(r)
		}
		ops = append(ops, genOp{batch: batch})
	}
	return ops
}

// scanModel is what a scan from from, stopped after stop rows, returns.
func scanModel(rows []store.Row, from []byte, stop int) []store.Row {
	var out []store.Row
	for _, r := range rows {
		if bytes.Compare(r.Key, from) < 0 {
			continue
		}
		out = append(out, r)
		if stop > 0 && len(out) == stop {
			break
		}
	}
	return out
}
