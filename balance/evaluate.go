package balance

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/store"
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
	// Conflicts are the update ids present with an amount that does not
	// count (an id reused with another amount), in clustering order.
	Conflicts []Conflict

	// total is the exact sum of Live (Value when it fits int64).
	total exact.Int128
	// claimed maps a valid S row's version to the rows it cancelled (for
	// an N target, every N row of that update id).
	claimed map[ID][]Row
	// tombs holds the tombstones present per version.
	tombs map[ID][]Row
	// normals holds the N rows present per update id.
	normals map[ID][]Row
	// keys holds the key of every row present.
	keys map[Key]bool
	// places holds, in a placed partition (placed.go), the oldest and
	// newest places of every row present, and stored its rows as stored,
	// in key order; nil otherwise.
	places map[Key]placeSpan
	stored []placedRow
}

// Conflict is an update id whose N rows carry more than one amount, or
// whose amount differs from the one a merge already counted for it. Exactly
// one amount counts (SPEC.md 9.2); the others count
// nothing.
type Conflict struct {
	UpdateID ID
	// Counted is the amount that counts for the id.
	Counted int64
	// Refused are the other amounts present, ascending.
	Refused []int64
}

// Evaluate interprets a snapshot of one account's rows (any order) under the
// validity rules of SPEC.md 9.2. It fails only if the rows are
// invalid (crdt.ErrCorruptEncoding), share a key, or the balance overflows
// (crdt.ErrOverflow). With crdt.ErrOverflow it returns the View all the
// same, whose Value is then 0: its rows are still the snapshot's (a
// Transactions row partition may hold more than int64, SPEC.md 9.4).
func Evaluate(rows []Row) (View, error) {
	v, err := evaluate(rows)
	if err != nil {
		return View{}, err
	}
	_, err = v.value()
	return v, err
}

// value returns the balance, crdt.ErrOverflow if it does not fit int64.
func (v View) value() (int64, error) {
	value, fits := v.total.Int64()
	if !fits {
		return 0, fmt.Errorf("%w: balance does not fit int64", crdt.ErrOverflow)
	}
	return value, nil
}

// evaluate is Evaluate whose balance may not fit int64: View.Value is then
// 0 and View.total holds it.
func evaluate(rows []Row) (View, error) {
	live := make(map[elem]Row, len(rows))
	var sums []Row
	v := View{claimed: map[ID][]Row{}, tombs: map[ID][]Row{}, normals: make(map[ID][]Row, len(rows)), keys: make(map[Key]bool, len(rows))}
	for _, r := range rows {
		if err := r.Validate(); err != nil {
			return View{}, fmt.Errorf("%w: stored row %s: %v", crdt.ErrCorruptEncoding, r, err)
		}
		if v.keys[r.Key()] {
			return View{}, fmt.Errorf("%w: two rows with key %s", crdt.ErrCorruptEncoding, r)
		}
		v.keys[r.Key()] = true
		switch r.Kind {
		case KindNormal:
			v.normals[r.UpdateID] = append(v.normals[r.UpdateID], r)
		case KindSum:
			sums = append(sums, r)
		case KindTombstone:
			v.tombs[r.Version] = append(v.tombs[r.Version], r)
		}
	}
	// Until a merge counts an update id, its smallest amount counts (rows of
	// one amount are copies of one update).
	for u, ns := range v.normals {
		sort.Slice(ns, func(i, j int) bool {
			if ns[i].Amount != ns[j].Amount {
				return ns[i].Amount < ns[j].Amount
			}
			return CompareRows(ns[i], ns[j]) < 0
		})
		live[elem{KindNormal, u}] = ns[0]
	}
	slices.SortFunc(sums, func(a, b Row) int { return cmp.Or(a.UpdateID.Compare(b.UpdateID), a.Version.Compare(b.Version)) })
	valid := map[ID]bool{}
	counted := map[ID]int64{} // update id -> the amount a valid merge counted
	for _, s := range sums {
		ts := v.tombs[s.Version]
		targets, named := make([]Row, 0, len(ts)), make([]Row, 0, len(ts))
		ok := true
		if s.Settled {
			// Covered rows were deleted when it settled; its tombstones
			// still cancel a retried N row that comes back, and an N row
			// of a counted id with another amount counts nothing.
			for _, t := range ts {
				if r, hit := live[elem{t.Target, t.UpdateID}]; hit && ((t.Target == KindNormal && !brokenAmountClaims) || r.Amount == t.Amount) {
					targets, named = append(targets, r), append(named, t)
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
				targets, named = append(targets, r), append(named, t)
				sum.Add(t.Amount)
			}
			got, fits := sum.Int64()
			ok = ok && fits && got == s.Amount
		}
		if !ok {
			v.InvalidSums = append(v.InvalidSums, s)
			continue
		}
		claimed := make([]Row, 0, len(targets))
		for i, r := range targets {
			delete(live, elem{r.Kind, r.UpdateID})
			if r.Kind == KindNormal {
				counted[r.UpdateID] = named[i].Amount
				claimed = append(claimed, v.normals[r.UpdateID]...)
			} else {
				claimed = append(claimed, r)
			}
		}
		live[elem{KindSum, s.UpdateID}] = s
		valid[s.Version] = true
		v.Valid = append(v.Valid, s)
		v.claimed[s.Version] = claimed
	}
	for _, ts := range v.tombs {
		for _, t := range ts {
			if !valid[t.Version] || !v.targetRemains(t, nil) {
				v.InvalidTombstones = append(v.InvalidTombstones, t)
			}
		}
	}
	slices.SortFunc(v.InvalidTombstones, CompareRows)
	for u, ns := range v.normals {
		amount, ok := counted[u]
		if !ok {
			amount = ns[0].Amount
		}
		c := Conflict{UpdateID: u, Counted: amount}
		for i, r := range ns {
			if r.Amount != amount && (i == 0 || r.Amount != ns[i-1].Amount) {
				c.Refused = append(c.Refused, r.Amount)
			}
		}
		if len(c.Refused) > 0 {
			v.Conflicts = append(v.Conflicts, c)
		}
	}
	sort.Slice(v.Conflicts, func(i, j int) bool { return v.Conflicts[i].UpdateID.Compare(v.Conflicts[j].UpdateID) > 0 })
	var total exact.Int128
	v.Live = make([]Row, 0, len(live))
	for _, r := range live {
		v.Live = append(v.Live, r)
		total.Add(r.Amount)
	}
	v.total = total
	if value, fits := total.Int64(); fits {
		v.Value = value
	}
	slices.SortFunc(v.Live, CompareRows)
	return v, nil
}

// plan is what one merge will write, computed from a View.
type plan struct {
	tombstones []Row // step 5
	sum        Row   // step 6 (valid when len(tombstones) > 0)
	settle     []Row // step 7 upserts (settled S rows)
	deletes    []Row // step 7 deletes (rows covered by settled merges)
	gc         []Row // step 8 deletes (invalid rows older than GCGrace, and tombstones whose targets step 7 deletes)
	gcYoung    []Row // invalid rows kept because they are not old enough
}

// MaxCover is the most live rows one merge covers (step 5), the oldest
// (the last in clustering order); later merges cover the rest. With it
// each step's batch stays within store.MaxBatch mutations, so no backlog
// makes a partition unmergeable.
const MaxCover = store.MaxBatch / 2

// covered returns the live rows step 5 covers, in clustering order: none
// when there is nothing to merge (no N row and at most one S row); else
// one row per update id (an N and an S row that share one: the first,
// since one tombstone key cannot name both, and the other stays live for
// a later merge), the oldest (the last in clustering order, newest id
// first) while the rows they cancel (every N row of a covered id, whatever
// its amount) number at most MaxCover, so that a backlog drains in order
// and settling them fits one batch. If their sum does not fit int64 (a
// Transactions row partition may hold more than int64 while the account's
// balance fits), it covers instead the oldest of them (by their oldest
// place in a placed partition, else in clustering order) while their
// running sum fits, at least one: a merge never fails on its sum, and
// merges cover the oldest live rows in turn, so that removal goes on.
func (v View) covered() []Row {
	if len(v.Live) <= 1 && !slices.ContainsFunc(v.Live, func(r Row) bool { return r.Kind == KindNormal }) {
		return nil
	}
	byID := map[ID]bool{}
	var out []Row
	for _, r := range v.Live {
		if !byID[r.UpdateID] {
			byID[r.UpdateID] = true
			out = append(out, r)
		}
	}
	rows := 0
	for i := len(out) - 1; i >= 0; i-- {
		n := 1
		if out[i].Kind == KindNormal {
			n = len(v.normals[out[i].UpdateID])
		}
		if rows+n > MaxCover && rows > 0 {
			out = out[i+1:]
			break
		}
		rows += n
	}
	var sum exact.Int128
	for _, r := range out {
		sum.Add(r.Amount)
	}
	if _, fits := sum.Int64(); fits {
		return out
	}
	age := make([]int, len(out)) // indexes of out, oldest first
	for i := range age {
		age[i] = len(out) - 1 - i
	}
	if v.places != nil {
		slices.SortStableFunc(age, func(a, b int) int { return cmp.Compare(v.places[out[a].Key()].oldest, v.places[out[b].Key()].oldest) })
	}
	take := map[int]bool{}
	sum = exact.Int128{}
	for _, i := range age {
		if sum.Add(out[i].Amount); len(take) > 0 && !fitsInt64(sum) {
			break
		}
		take[i] = true
	}
	var kept []Row
	for i, r := range out {
		if take[i] {
			kept = append(kept, r)
		}
	}
	return kept
}

func fitsInt64(a exact.Int128) bool { _, fits := a.Int64(); return fits }

// planSteps computes steps 5–8 for a snapshot view at time now, for a merge
// with the given version (fresh, newer than every S row it may cover). Step
// 7 settles the valid merges old enough in validation order only as far as
// its batch stays within store.MaxBatch (at least one merge): as a merge
// with a longer settleGrace would, which is always safe.
func planSteps(v View, now time.Time, version ID, settleGrace, gcGrace time.Duration) (plan, error) {
	p, err := planStepsGrace(v, now, version, settleGrace, gcGrace)
	// A placed partition removes what step 7 deletes by range (placed.go),
	// not one by one: only its upserts count toward the batch.
	batch := func() int {
		if v.places != nil {
			return len(p.settle)
		}
		return len(p.deletes) + len(p.settle)
	}
	if err != nil || batch() <= store.MaxBatch {
		return p, err
	}
	// Settle fewer merges: those before the first one whose settling
	// overflows the batch (v.Valid is in time order).
	for i := len(v.Valid) - 1; i > 0 && batch() > store.MaxBatch; i-- {
		if g := now.Sub(v.Valid[i].UpdateID.Time()); g > settleGrace && !v.Valid[i].Settled {
			if p, err = planStepsGrace(v, now, version, g, gcGrace); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// planStepsGrace is planSteps with every valid merge old enough by
// settleGrace settled.
func planStepsGrace(v View, now time.Time, version ID, settleGrace, gcGrace time.Duration) (plan, error) {
	var p plan
	// Steps 5–6: cover the live rows covered() selects.
	if cover := v.covered(); len(cover) > 0 {
		var sum exact.Int128
		for _, r := range cover {
			sum.Add(r.Amount)
			p.tombstones = append(p.tombstones, Row{UpdateID: r.UpdateID, Kind: KindTombstone, Version: version, Amount: r.Amount, Target: r.Kind})
		}
		amount, fits := sum.Int64()
		if !fits {
			return plan{}, fmt.Errorf("%w: merge sum does not fit int64", crdt.ErrOverflow)
		}
		p.sum = Row{UpdateID: version, Kind: KindSum, Version: version, Amount: amount, Covers: int64(len(p.tombstones))}
	}
	// Step 8: collect invalid rows older than gcGrace (aged by update id,
	// which for a tombstone is its target's).
	old := func(r Row) bool { return r.UpdateID.Time().Before(now.Add(-gcGrace)) }
	gone := map[Key]bool{} // rows this merge deletes
	for _, r := range append(append([]Row(nil), v.InvalidSums...), v.InvalidTombstones...) {
		if old(r) {
			p.gc = append(p.gc, r)
			gone[r.Key()] = true
		} else {
			p.gcYoung = append(p.gcYoung, r)
		}
	}
	allGone := func(rows []Row) bool { return !anyLeft(rows, gone) }
	// Step 7: settle valid merges old enough that no racing merge can still
	// land (see doc.go), deleting what they cover, in validation order so
	// that a merge meets the merges it covers already processed.
	for _, s := range v.Valid {
		// A settled merge may still cancel a retried N row that came back;
		// that row is deleted too.
		if !s.Settled && !s.UpdateID.Time().Before(now.Add(-settleGrace)) {
			continue
		}
		for _, r := range v.claimed[s.Version] {
			if s.Settled && len(p.deletes) >= store.MaxBatch/2 && v.places == nil {
				// Rows come back to a settled merge only as retries:
				// their deletes wait for later merges.
				break
			}
			if r.Kind == KindSum && (!allGone(v.tombs[r.Version]) || brokenLevelPerMerge && len(v.tombs[r.Version]) > 0) {
				// A covered sum row stays while it has tombstones: they
				// cancel retries of the rows it covers until the window
				// has passed. It is marked settled below instead.
				continue
			}
			p.deletes = append(p.deletes, r)
			gone[r.Key()] = true
		}
		// Its tombstones whose targets this merge deletes are collected
		// by step 8 once they are gcGrace old, as if they were already
		// targetless; counting them as gone lets the merge that covers s
		// delete s in this same pass, so a chain of merges is compacted
		// in one merge, not one level per merge. Step 8's batch is
		// written after step 7's, so a tombstone never goes before its
		// target.
		// In a placed partition a sum row cannot come back (placed.go):
		// a tombstone naming one goes with it.
		for _, t := range v.tombs[s.Version] {
			if !gone[t.Key()] && (old(t) || v.places != nil && t.Target == KindSum) && !v.targetRemains(t, gone) {
				p.gc = append(p.gc, t)
				gone[t.Key()] = true
			}
		}
	}
	for _, s := range v.Valid {
		if !s.Settled && s.UpdateID.Time().Before(now.Add(-settleGrace)) && !gone[s.Key()] {
			s.Settled = true
			p.settle = append(p.settle, s)
		}
	}
	return p, nil
}

// targetRemains reports whether some row a tombstone targets is in the
// snapshot and not among gone.
func (v View) targetRemains(t Row, gone map[Key]bool) bool {
	if t.Target == KindNormal {
		return anyLeft(v.normals[t.UpdateID], gone)
	}
	k := Key{UpdateID: t.UpdateID, Kind: KindSum, Version: t.UpdateID}
	return v.keys[k] && !gone[k]
}

// anyLeft reports whether some of rows is not among gone.
func anyLeft(rows []Row, gone map[Key]bool) bool {
	return slices.ContainsFunc(rows, func(r Row) bool { return !gone[r.Key()] })
}
