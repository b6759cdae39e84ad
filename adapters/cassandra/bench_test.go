package cassandra

// Benchmarks need a cluster (CASSANDRA_HOSTS) and skip without one. They
// compare the adapter's writes with raw driver INSERTs of the same rows in
// the same run; the goal is adapter throughput >= 0.9x raw. Run with
//
//	CASSANDRA_HOSTS=127.0.0.1 go test -run '^$' -bench . -benchtime 5s

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

// writeBench is one way of writing row i of a benchmark.
type writeBench struct {
	name  string
	write func(ctx context.Context, i int64) error
}

func stateWriters(b *testing.B, db *DB) []writeBench {
	key := uniqueKey(b, "bench")
	state := gEnc(b, map[crdt.ActorID]int64{"a1": 3, "a2": 5}) // a typical small encoded state
	raw := fmt.Sprintf("INSERT INTO %s (key, actor, state) VALUES (?, ?, ?) USING TIMESTAMP ?", db.tables[tableState])
	st := db.States()
	return []writeBench{
		{"raw-driver", func(ctx context.Context, i int64) error {
			return db.session.Query(raw, key, fmt.Sprintf("a%d", i%64), state, time.Now().UnixMicro()).ExecContext(ctx)
		}},
		{"adapter", func(ctx context.Context, i int64) error {
			return st.Save(ctx, key, crdt.ActorID(fmt.Sprintf("a%d", i%64)), state)
		}},
	}
}

func runWriters(b *testing.B, writers []writeBench) {
	for _, w := range writers {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			var n atomic.Int64
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := w.write(ctx, n.Add(1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkStateSave compares StateStore.Save with the raw INSERT it sends.
func BenchmarkStateSave(b *testing.B) {
	db := newTestDB(b, Options{})
	runWriters(b, stateWriters(b, db))
}

// BenchmarkStateSaveRatio interleaves rounds of raw and adapter writes and
// reports adapter throughput divided by raw throughput (goal >= 0.9), so
// cluster noise affects both sides alike.
func BenchmarkStateSaveRatio(b *testing.B) {
	db := newTestDB(b, Options{})
	ws := stateWriters(b, db)
	ratio(b, ws[0], ws[1])
}

func ratio(b *testing.B, raw, adapter writeBench) {
	b.ReportAllocs()
	ctx := context.Background()
	var rawT, adT time.Duration
	const round = 50
	for i := 0; i < b.N; i++ {
		for _, w := range []struct {
			wb *writeBench
			d  *time.Duration
		}{{&raw, &rawT}, {&adapter, &adT}} {
			start := time.Now()
			for j := 0; j < round; j++ {
				if err := w.wb.write(ctx, int64(i*round+j)); err != nil {
					b.Fatal(err)
				}
			}
			*w.d += time.Since(start)
		}
	}
	if adT > 0 {
		b.ReportMetric(float64(rawT)/float64(adT), "adapter/raw-throughput")
	}
}

// logWriters compares deltalog.Counters.Add through the adapter with a raw
// INSERT of the same encoded cell.
func logWriters(b *testing.B, db *DB) []writeBench {
	key := uniqueKey(b, "benchlog")
	c, err := deltalog.New(db.Log(), deltalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	raw := fmt.Sprintf("INSERT INTO %s (key, id, kind, cell) VALUES (?, ?, ?, ?)", db.tables[tableLog])
	return []writeBench{
		{"raw-driver", func(ctx context.Context, i int64) error {
			cell := deltalog.Cell{ID: deltalog.NewIDAt(time.Now()), Kind: deltalog.KindRegular, Delta: 1}
			blob, err := cell.MarshalBinary()
			if err != nil {
				return err
			}
			return db.session.Query(raw, key, gocql.UUID(cell.ID), int8(cell.Kind), blob).ExecContext(ctx)
		}},
		{"adapter", func(ctx context.Context, i int64) error {
			return c.Add(ctx, key, deltalog.NewIDAt(time.Now()), 1)
		}},
	}
}

// balanceWriters compares balance.Ledger.Add through the adapter with a raw
// INSERT of the same encoded N row.
func balanceWriters(b *testing.B, db *DB) []writeBench {
	key := uniqueKey(b, "benchbal")
	l, err := balance.New(db.Balance(), balance.Options{})
	if err != nil {
		b.Fatal(err)
	}
	raw := fmt.Sprintf("INSERT INTO %s (id, updateid, type, version, row) VALUES (?, ?, ?, ?, ?)", db.tables[tableBalance])
	return []writeBench{
		{"raw-driver", func(ctx context.Context, i int64) error {
			r := balance.Row{UpdateID: deltalog.NewIDAt(time.Now()), Kind: balance.KindNormal, Amount: 1}
			blob, err := r.MarshalBinary()
			if err != nil {
				return err
			}
			return db.session.Query(raw, key, gocql.UUID(r.UpdateID), int8(r.Kind), gocql.UUID{}, blob).ExecContext(ctx)
		}},
		{"adapter", func(ctx context.Context, i int64) error {
			return l.Add(ctx, key, deltalog.NewIDAt(time.Now()), 1)
		}},
	}
}

// BenchmarkLogAdd compares log increments with raw INSERTs.
func BenchmarkLogAdd(b *testing.B) {
	db := newTestDB(b, Options{})
	runWriters(b, logWriters(b, db))
}

// BenchmarkLogAddRatio reports adapter/raw throughput for log increments.
func BenchmarkLogAddRatio(b *testing.B) {
	db := newTestDB(b, Options{})
	ws := logWriters(b, db)
	ratio(b, ws[0], ws[1])
}

// BenchmarkBalanceAdd compares balance increments with raw INSERTs.
func BenchmarkBalanceAdd(b *testing.B) {
	db := newTestDB(b, Options{})
	runWriters(b, balanceWriters(b, db))
}

// BenchmarkBalanceAddRatio reports adapter/raw throughput for balance
// increments.
func BenchmarkBalanceAddRatio(b *testing.B) {
	db := newTestDB(b, Options{})
	ws := balanceWriters(b, db)
	ratio(b, ws[0], ws[1])
}
