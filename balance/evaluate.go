package balance

import (
	"fmt"
	"sort"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// elem names a countable row: an N or S row by kind and update id.
type elem struct {
	kind Kind
	id   ID
}

// View is the interpretation of one partition snapshot: which merges are
// valid, which rows count, and which rows a merge may delete. Evaluate
// computes it; it is a pure function of the rows.
type View struct {
	// Value is the account balance: the sum of Live.
	Value int64
	// Live are the N and S rows that count, in clustering order.
	Live []Row
	// Valid are the valid S rows, in validation order (ascending
	// (UpdateID, Version)).
	Valid []Row
	// InvalidSums are S rows that are not valid.
	InvalidSums []Row
	// InvalidTombstones are T rows that cancel nothing: their merge is not
	// valid, or their target row is gone.
	InvalidTombstones []Row

	// claimed maps a valid S row's version to the rows it cancelled.
	claimed map[ID][]Row
	// tombs counts the tombstones present per version.
	tombs map[ID]int
}

// Evaluate interprets a snapshot of one account's rows (any order) under the
// validity rules in the package documentation. It fails only if the rows are
// invalid (crdt.ErrCorruptEncoding), share a key, or the balance overflows
// (crdt.ErrOverflow).
func Evaluate(rows []Row) (View, error) {
	live := map[elem]Row{}
	var sums []Row
	tombs := map[ID][]Row{}
	seen := map[Key]bool{}
	for _, r := range rows {
		if err := r.Validate(); err != nil {
			return View{}, fmt.Errorf("%w: stored row %s: %v", crdt.ErrCorruptEncoding, r, err)
		}
		if seen[r.Key()] {
			return View{}, fmt.Errorf("%w: two rows with key %s", crdt.ErrCorruptEncoding, r)
		}
		seen[r.Key()] = true
		switch r.Kind {
		case KindNormal:
			live[elem{KindNormal, r.UpdateID}] = r
		case KindSum:
			sums = append(sums, r)
		case KindTombstone:
			tombs[r.Version] = append(tombs[r.Version], r)
		}
	}
	sort.Slice(sums, func(i, j int) bool {
		if c := sums[i].UpdateID.Compare(sums[j].UpdateID); c != 0 {
			return c < 0
		}
		return sums[i].Version.Compare(sums[j].Version) < 0
	})
	v := View{claimed: map[ID][]Row{}, tombs: map[ID]int{}}
	for ver, ts := range tombs {
		v.tombs[ver] = len(ts)
	}
	valid := map[ID]bool{}
	for _, s := range sums {
		ts := tombs[s.Version]
		var targets []Row
		ok := true
		if s.Settled {
			// Covered rows were deleted when it settled; its tombstones
			// still cancel a retried N row that comes back.
			for _, t := range ts {
				if r, hit := live[elem{t.Target, t.UpdateID}]; hit && r.Amount == t.Amount {
					targets = append(targets, r)
				}
			}
		} else {
			ok = int64(len(ts)) == s.Covers
			var sum exact.Int128
			for _, t := range ts {
				r, hit := live[elem{t.Target, t.UpdateID}]
				if !ok || !hit || r.Amount != t.Amount {
					ok = false
					break
				}
				targets = append(targets, r)
				sum.Add(t.Amount)
			}
			got, fits := sum.Int64()
			ok = ok && fits && got == s.Amount
		}
		if !ok {
			v.InvalidSums = append(v.InvalidSums, s)
			continue
		}
		for _, r := range targets {
			delete(live, elem{r.Kind, r.UpdateID})
		}
		live[elem{KindSum, s.UpdateID}] = s
		valid[s.Version] = true
		v.Valid = append(v.Valid, s)
		v.claimed[s.Version] = targets
	}
	for _, ts := range tombs {
		for _, t := range ts {
			if !valid[t.Version] || !seen[Key{UpdateID: t.UpdateID, Kind: t.Target, Version: targetVersion(t)}] {
				v.InvalidTombstones = append(v.InvalidTombstones, t)
			}
		}
	}
	sort.Slice(v.InvalidTombstones, func(i, j int) bool { return CompareRows(v.InvalidTombstones[i], v.InvalidTombstones[j]) < 0 })
	var total exact.Int128
	for _, r := range live {
		v.Live = append(v.Live, r)
		total.Add(r.Amount)
	}
	value, fits := total.Int64()
	if !fits {
		return View{}, fmt.Errorf("%w: balance does not fit int64", crdt.ErrOverflow)
	}
	v.Value = value
	sort.Slice(v.Live, func(i, j int) bool { return CompareRows(v.Live[i], v.Live[j]) < 0 })
	return v, nil
}

// targetVersion is the Version column of the row a tombstone targets: empty
// for N rows, and equal to the update id for S rows.
func targetVersion(t Row) ID {
	if t.Target == KindSum {
		return t.UpdateID
	}
	return ID{}
}

// plan is what one merge will write, computed from a View.
type plan struct {
	tombstones []Row // step 5
	sum        Row   // step 6 (valid when len(tombstones) > 0)
	settle     []Row // step 7 upserts (settled S rows)
	deletes    []Row // step 7 deletes (rows covered by settled merges)
	gc         []Row // step 8 deletes (invalid rows older than GCGrace)
	gcYoung    []Row // invalid rows kept because they are not old enough
}

// planSteps computes steps 5–8 for a snapshot view at time now, for a merge
// with the given version (fresh, newer than every S row it may cover).
func planSteps(v View, now time.Time, version ID, settleGrace, gcGrace time.Duration) (plan, error) {
	var p plan
	// Steps 5–6: cover every live row, unless there is nothing to merge
	// (no N row and at most one S row).
	nN := 0
	for _, r := range v.Live {
		if r.Kind == KindNormal {
			nN++
		}
	}
	if nN > 0 || len(v.Live) > 1 {
		byID := map[ID]bool{}
		var sum exact.Int128
		for _, r := range v.Live {
			if byID[r.UpdateID] {
				// An N and an S row share an update id (a client reused a
				// merge's id): one tombstone key cannot name both, so the
				// second stays live for a later merge.
				continue
			}
			byID[r.UpdateID] = true
			sum.Add(r.Amount)
			p.tombstones = append(p.tombstones, Row{UpdateID: r.UpdateID, Kind: KindTombstone, Version: version, Amount: r.Amount, Target: r.Kind})
		}
		amount, fits := sum.Int64()
		if !fits {
			return plan{}, fmt.Errorf("%w: merge sum does not fit int64", crdt.ErrOverflow)
		}
		p.sum = Row{UpdateID: version, Kind: KindSum, Version: version, Amount: amount, Covers: int64(len(p.tombstones))}
	}
	// Step 7: settle valid merges old enough that no racing merge can still
	// land (see doc.go), deleting what they cover.
	deleted := map[Key]bool{}
	for _, s := range v.Valid {
		// A settled merge may still cancel a retried N row that came back;
		// that row is deleted too.
		if !s.Settled && !s.UpdateID.Time().Before(now.Add(-settleGrace)) {
			continue
		}
		for _, r := range v.claimed[s.Version] {
			if r.Kind == KindSum && v.tombs[r.Version] > 0 {
				// A covered sum row stays while it has tombstones: they
				// cancel retries of the rows it covers until the window
				// has passed and step 8 collects them. It is marked
				// settled below instead.
				continue
			}
			p.deletes = append(p.deletes, r)
			deleted[r.Key()] = true
		}
	}
	for _, s := range v.Valid {
		if !s.Settled && s.UpdateID.Time().Before(now.Add(-settleGrace)) && !deleted[s.Key()] {
			s.Settled = true
			p.settle = append(p.settle, s)
		}
	}
	// Step 8: garbage-collect invalid rows older than gcGrace (age by
	// update id time).
	for _, r := range append(append([]Row(nil), v.InvalidSums...), v.InvalidTombstones...) {
		if r.UpdateID.Time().Before(now.Add(-gcGrace)) {
			p.gc = append(p.gc, r)
		} else {
			p.gcYoung = append(p.gcYoung, r)
		}
	}
	return p, nil
}
