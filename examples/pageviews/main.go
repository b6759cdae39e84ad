// Command pageviews shows the sharded tally (package tally) on the in-memory
// store (memory.Partitions): three web servers count page views and unique visitors,
// each overwriting only its own shard (one write per flush, no read); a day
// later a GC folds the expired shards into the tally. The program checks the
// exact page-view total and exits non-zero if it is wrong.
//
//	go run ./examples/pageviews
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	cfg := tally.Options{
		Clock: func() time.Time { return now },
		NewID: func() crdt.ActorID { n++; return crdt.ActorID(fmt.Sprintf("web-%d", n)) },
	}
	db := memory.NewPartitions()
	views, err := tally.New[*tally.Sum](db, "views:/pricing", cfg)
	if err != nil {
		return err
	}
	visitors, err := tally.New[*tally.Distinct](db, "visitors:/pricing", cfg)
	if err != nil {
		return err
	}

	const perServer = 5000
	want := int64(0)
	for server := 0; server < 3; server++ {
		vm, err := views.NewMutator()
		if err != nil {
			return err
		}
		um, err := visitors.NewMutator()
		if err != nil {
			return err
		}
		// Coalesce: stage every hit in memory, then one write per mutator.
		for i := 0; i < perServer; i++ {
			visitor := fmt.Sprintf("visitor-%d", (server*perServer/2+i)%12000)
			if err := vm.Stage(func(s *tally.Sum) error { return s.Add(1) }); err != nil {
				return err
			}
			if err := um.Stage(func(d *tally.Distinct) error { d.AddString(visitor); return nil }); err != nil {
				return err
			}
			want++
		}
		if err := vm.Flush(ctx); err != nil {
			return err
		}
		if err := um.Flush(ctx); err != nil {
			return err
		}
	}
	v, err := views.Read(ctx)
	if err != nil {
		return err
	}
	u, err := visitors.Read(ctx)
	if err != nil {
		return err
	}
	rows, err := db.Snapshot(ctx, "views:/pricing", 100, store.ReadComplete)
	if err != nil {
		return err
	}
	fmt.Printf("page views %d (expected %d), unique visitors ~%d (exactly 10000), rows %d (one shard per server)\n",
		v.Value(), want, u.Estimate(), len(rows))

	now = now.Add(tally.DefaultLifetime + tally.DefaultGrace + time.Hour)
	plan, err := views.GC(ctx)
	if err != nil {
		return err
	}
	v, err = views.Read(ctx)
	if err != nil {
		return err
	}
	if rows, err = db.Snapshot(ctx, "views:/pricing", 100, store.ReadComplete); err != nil {
		return err
	}
	fmt.Printf("after GC: folded %d shards, page views %d, rows %d (the tally)\n",
		plan.Folded, v.Value(), len(rows))
	if len(rows) != 1 {
		return fmt.Errorf("%d rows after GC, want the tally row alone", len(rows))
	}
	if v.Value() != want {
		return fmt.Errorf("page views %d, want %d", v.Value(), want)
	}
	fmt.Println("verified")
	return nil
}
