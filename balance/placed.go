package balance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/store"
)

// A Transactions row partition is placed: each row key starts with the
// row's place, the time in microseconds since 1970 its writer chose, so
// that rows sort newest place first and the oldest rows, once no write can
// reach their places, leave with one delete-range (SPEC.md 9.4). A row
// written twice at two places (a retry) is one row held at both.

// TxnRowKeyLen is the length of a row key of a Transactions row partition
// (EncodeTxnRowKey).
const TxnRowKeyLen = 8 + RowKeyLen

// EncodeTxnRowKey returns the key of the row k placed at at (µs since
// 1970, ≥ 0) in a Transactions row partition: ^at as a big-endian uint64
// (newest place first), then EncodeKey(k).
func EncodeTxnRowKey(at int64, k Key) []byte {
	return appendPlacedKey(make([]byte, 0, TxnRowKeyLen), at, k)
}

func appendPlacedKey(dst []byte, at int64, k Key) []byte {
	return appendKey(binary.BigEndian.AppendUint64(dst, ^uint64(at)), k)
}

// DecodeTxnRowKey inverts EncodeTxnRowKey: a key of the wrong length or a
// negative place is refused with an error wrapping crdt.ErrCorruptEncoding,
// as is what DecodeKey refuses.
func DecodeTxnRowKey(b []byte) (at int64, k Key, err error) {
	if len(b) != TxnRowKeyLen {
		return 0, Key{}, fmt.Errorf("%w: transaction row key of %d bytes, want %d", crdt.ErrCorruptEncoding, len(b), TxnRowKeyLen)
	}
	if at = int64(^binary.BigEndian.Uint64(b)); at < 0 {
		return 0, Key{}, fmt.Errorf("%w: transaction row key placed at %d", crdt.ErrCorruptEncoding, at)
	}
	k, err = DecodeKey(b[8:])
	return at, k, err
}

// placedRow is a row of a placed partition and its place.
type placedRow struct {
	at  int64
	row Row
}

func decodePlacedRow(account string, sr store.Row) (placedRow, error) {
	var at int64
	r, err := rowlog.DecodeRow("balance", "account", account, sr, func(b []byte) (rowKey, error) {
		var k Key
		var err error
		at, k, err = DecodeTxnRowKey(b)
		return rowKey(k), err
	}, func(b []byte) (Row, rowKey, error) {
		var r Row
		err := r.UnmarshalBinary(b)
		return r, rowKey(r.Key()), err
	})
	return placedRow{at, r}, err
}

// MaxBacklogRows bounds the rows of an Accounts partition and of a
// Transactions row partition (the default of TxnOptions.BacklogRows): a
// read that finds more than MaxRows reads again, up to MaxBacklogRows, so
// that a backlog (merges paused, a rate above an account's capacity, or a
// burst of retries before a merge, each a copy of its row) and the
// tombstones of the merges that drain it stay readable and mergeable
// (SPEC.md 9.3 step 1, 9.4).
const MaxBacklogRows = 2 * MaxRows

// snapshot reads a partition of t at store.ReadAny: up to MaxRows rows, and
// when it holds more, again up to backlog (SPEC.md 9.3 step 1, 9.4).
func snapshot[R any](ctx context.Context, t *rowlog.Table[R], account string, backlog int) ([]R, error) {
	rows, err := t.Snapshot(ctx, account, MaxRows, store.ReadAny)
	if errors.Is(err, crdt.ErrTooLarge) {
		rows, err = t.Snapshot(ctx, account, backlog, store.ReadAny)
	}
	return rows, err
}

// placedView reads a placed partition (evaluatePlaced).
func (ac *Accounts) placedView(ctx context.Context, account string) (View, error) {
	stored, err := snapshot(ctx, ac.pt, account, ac.backlog)
	if err != nil {
		return View{}, err
	}
	return evaluatePlaced(account, stored)
}

// EvaluateTxnRows returns the View of a Transactions row partition
// (RowPartitions; its key, partition, names it in errors) from rows, one
// snapshot of its stored rows in clustering order: the View Transactions'
// Balance, Conflicts and Merge read from those rows. A row stored at two
// places counts once. A row key that is not a Transactions row key
// (EncodeTxnRowKey), a key that disagrees with its value, and one row
// stored at two places with two contents are refused with an error
// wrapping crdt.ErrCorruptEncoding, and so is what Evaluate refuses; a
// partition whose own balance does not fit int64 is crdt.ErrOverflow,
// returned with the View as Evaluate does, though Transactions.Balance,
// which sums the partitions exactly, may read it.
func EvaluateTxnRows(partition string, rows []store.Row) (View, error) {
	stored := make([]placedRow, len(rows))
	for i, sr := range rows {
		var err error
		if stored[i], err = decodePlacedRow(partition, sr); err != nil {
			return View{}, err
		}
	}
	v, err := evaluatePlaced(partition, stored)
	if err != nil {
		return View{}, err
	}
	_, err = v.value()
	return v, err
}

// evaluatePlaced evaluates the rows of a placed partition, stored in key
// order: the rows, each once, and their oldest and newest places in
// View.places. One row at two places with two contents is
// crdt.ErrCorruptEncoding.
func evaluatePlaced(account string, stored []placedRow) (View, error) {
	places := make(map[Key]placeSpan, len(stored))
	rows := make([]Row, 0, len(stored))
	for _, pr := range stored {
		k := pr.row.Key()
		sp, ok := places[k]
		if !ok {
			places[k] = placeSpan{oldest: pr.at, newest: pr.at, row: int32(len(rows))}
			rows = append(rows, pr.row)
			continue
		}
		if r := rows[sp.row]; r != pr.row {
			return View{}, fmt.Errorf("%w: account %q: row %s is stored as %s and as %s", crdt.ErrCorruptEncoding, account, rowKey(k), r, pr.row)
		}
		sp.oldest, sp.newest = min(sp.oldest, pr.at), max(sp.newest, pr.at)
		places[k] = sp
	}
	v, err := evaluate(rows)
	v.places, v.stored = places, stored
	return v, err
}

// placeSpan is where a row of a placed partition is stored: its oldest
// and newest places, and its index in the rows evaluatePlaced evaluates.
type placeSpan struct {
	oldest, newest int64
	row            int32
}

// placeOf returns where a merge writes the row r of a placed partition: a
// tombstone at the newest place of a row it names; a stored row where it
// is (its newest place); a new sum row at its version's time or, if later,
// the newest place of a row a live row's tombstone would name, so that the
// rows it covers are older than it even when written by a clock ahead of
// the merge's.
func (v View) placeOf(r Row) int64 {
	var at int64 = -1
	newest := func(k Key) {
		if sp, ok := v.places[k]; ok {
			at = max(at, sp.newest)
		}
	}
	switch {
	case r.Kind == KindTombstone && r.Target == KindNormal:
		for _, n := range v.normals[r.UpdateID] {
			newest(n.Key())
		}
	case r.Kind == KindTombstone:
		newest(Key{UpdateID: r.UpdateID, Kind: KindSum, Version: r.UpdateID})
	default:
		if newest(r.Key()); at < 0 && r.Kind == KindSum {
			at = r.Version.Time().UnixMicro()
			for _, l := range v.Live {
				if l.Kind != KindNormal {
					newest(l.Key())
				}
				for _, n := range v.normals[l.UpdateID] {
					newest(n.Key())
				}
			}
		}
	}
	if at < 0 { // a tombstone names only rows the merge read: not reached
		at = r.Version.Time().UnixMicro()
	}
	return at
}

// placedRemoval is what a merge of a placed partition removes of the rows
// its plan deletes (gone): the oldest rows, from the row at from to the
// partition's end, with one delete-range, when each of them is gone (or
// invalid and moved: written again at a new place) and placed before
// closed; the invalid rows of gone (left by racing or
// crashed merges, wherever they are placed); and with them the rows
// removing them needs (a tombstone's targets, a sum row's tombstones, the
// unsettled valid sum row a tombstone or its target belongs to), at their
// other places. Rows of gone not removed stay until a later merge
// removes them: they count nothing, and the rows that make them count
// nothing stay with them.
type placedRemoval struct {
	from    []byte           // the delete-range's first key; nil: none
	removed map[Key]bool     // the rows removed
	dels    []store.Mutation // the places of removed rows before from
	moved   []Row            // invalid rows at or after from, to write again
}

func (v View) placedRemoval(account string, gone map[Key]bool, closed time.Time, invalid, unsettled []Row) placedRemoval {
	entries := v.stored // in key order
	before := closed.UnixMicro()
	// An invalid row not yet GCGrace old, in the way of the oldest run, is
	// moved (written again at a new place) rather than stop it: it counts
	// nothing, so a move that lands after another merge removed it is
	// harmless. (A valid row is never moved: a late move would bring back
	// a row another merge had removed as covered.)
	movable := map[Key]bool{}
	for _, r := range invalid {
		movable[r.Key()] = !gone[r.Key()]
	}
	// A copy of a row at an older place than its newest is not needed.
	newest := func(e placedRow) bool { return e.at == v.places[e.row.Key()].newest }
	s := len(entries)
	for s > 0 && (gone[entries[s-1].row.Key()] || movable[entries[s-1].row.Key()] || !newest(entries[s-1])) && entries[s-1].at < before {
		s--
	}
	// Removing a tombstone needs the rows it names removed too, removing
	// a sum row its tombstones, and removing a tombstone of a sum row that
	// stays valid and unsettled, or a row such a tombstone names, needs
	// that sum row removed: a row that needs, at any depth, a row that is
	// not gone stays, and so does every row after it.
	down := func(k Key) []Key {
		var out []Key
		switch k.Kind {
		case KindTombstone:
			for _, n := range v.normals[k.UpdateID] {
				out = append(out, n.Key())
			}
			if k := (Key{UpdateID: k.UpdateID, Kind: KindSum, Version: k.UpdateID}); v.keys[k] {
				out = append(out, k)
			}
		case KindSum:
			for _, t := range v.tombs[k.Version] {
				out = append(out, t.Key())
			}
		}
		return out
	}
	up := map[Key][]Key{} // only from rows of gone: the others stay
	for _, u := range unsettled {
		for _, t := range v.tombs[u.Version] {
			if gone[t.Key()] {
				up[t.Key()] = append(up[t.Key()], u.Key())
			}
			for _, r := range down(t.Key()) {
				if gone[r] {
					up[r] = append(up[r], u.Key())
				}
			}
		}
	}
	needs := func(k Key) []Key {
		if brokenPlacedNoNeeds {
			return nil
		}
		return append(down(k), up[k]...)
	}
	neededBy := map[Key][]Key{}
	var stays []Key
	for k := range v.keys {
		if !gone[k] {
			stays = append(stays, k)
			continue
		}
		for _, n := range needs(k) {
			neededBy[n] = append(neededBy[n], k)
		}
	}
	staying := map[Key]bool{}
	for len(stays) > 0 {
		k := stays[len(stays)-1]
		stays = stays[:len(stays)-1]
		if !staying[k] {
			staying[k] = true
			stays = append(stays, neededBy[k]...)
		}
	}
	for i := len(entries) - 1; i >= s; i-- {
		if k := entries[i].row.Key(); staying[k] && !movable[k] && newest(entries[i]) {
			s = i + 1
		}
	}
	for s < len(entries) && movable[entries[s].row.Key()] && newest(entries[s]) { // moved for nothing
		s++
	}
	removed := map[Key]bool{}
	var mark func(Key)
	mark = func(k Key) {
		if !removed[k] {
			removed[k] = true
			for _, n := range needs(k) {
				mark(n)
			}
		}
	}
	out := placedRemoval{removed: removed}
	for _, e := range entries[s:] {
		switch k := e.row.Key(); {
		case movable[k] && newest(e):
			out.moved = append(out.moved, e.row)
		case !staying[k]:
			mark(k)
		} // else an older copy of a row that stays at its newest place
	}
	for _, r := range invalid {
		if gone[r.Key()] && !staying[r.Key()] {
			mark(r.Key())
		}
	}
	if s < len(entries) {
		out.from = EncodeTxnRowKey(entries[s].at, entries[s].row.Key())
	}
	for _, e := range entries[:s] {
		if removed[e.row.Key()] {
			out.dels = append(out.dels, store.Mutation{Partition: account, Op: store.OpDelete, Key: EncodeTxnRowKey(e.at, e.row.Key())})
		}
	}
	return out
}

// placed returns Accounts like ac whose partitions are placed.
func (ac *Accounts) placed(backlog int) *Accounts {
	c := *ac
	c.pt = &rowlog.Table[placedRow]{Name: ac.t.Name, Store: ac.t.Store, Clock: ac.t.Clock, Consecutive: ac.t.Consecutive,
		Decode: decodePlacedRow, CheckKey: ac.t.CheckKey, Observer: ac.t.Observer}
	c.backlog = backlog
	return &c
}

// mergeWrite writes in one batch the deletes del, then the rows put, into
// account's partition, read as v: at their places (placeOf) when it is
// placed.
func (ac *Accounts) mergeWrite(ctx context.Context, account string, v View, del []store.Mutation, put []Row) error {
	if v.places == nil {
		return ac.writeRows(ctx, account, nil, put)
	}
	muts := append(make([]store.Mutation, 0, len(del)+len(put)), del...)
	buf := make([]byte, 0, len(put)*(TxnRowKeyLen+maxRowLen))
	for _, r := range put {
		if err := r.Validate(); err != nil {
			return err
		}
		at := v.placeOf(r)
		m := appendPlacedPut(&buf, account, at, r)
		if r.Kind == KindSum {
			// Written, and settled, at its place: a delete of it
			// shadows a settling that a slower merge sends later.
			m.Timestamp = at
		}
		muts = append(muts, m)
	}
	return ac.t.Write(ctx, muts)
}

// appendN is the write of the N row r into partition at the writer's
// clock now: placed at now in a placed partition (SPEC.md 9.4).
func (ac *Accounts) appendN(buf *[]byte, partition string, now time.Time, r Row) store.Mutation {
	if ac.pt != nil {
		return appendPlacedPut(buf, partition, now.UnixMicro(), r)
	}
	return appendPut(buf, partition, r)
}

// appendPlacedPut is appendPut for a row placed at at.
func appendPlacedPut(buf *[]byte, account string, at int64, r Row) store.Mutation {
	b := *buf
	k := len(b)
	b = appendPlacedKey(b, at, r.Key())
	v := len(b)
	b = r.appendEncoding(b, FormatVersion)
	*buf = b
	return store.Mutation{Partition: account, Op: store.OpPut, Key: b[k:v:v], Value: b[v:len(b):len(b)]}
}

// removePlaced is steps 7 and 8 of a merge of a placed partition, in one
// batch: the settled sum rows, and the rows of the plan's deletes that
// placedRemoval removes. When the batch would exceed store.MaxBatch it
// settles only; later merges remove the rows.
func (ac *Accounts) removePlaced(ctx context.Context, account string, v View, p plan, start time.Time, rep *MergeReport) error {
	gone := map[Key]bool{}
	for _, r := range p.deletes {
		gone[r.Key()] = true
	}
	for _, r := range p.gc {
		gone[r.Key()] = true
	}
	var unsettled []Row // valid sum rows this merge leaves unsettled
	for _, s := range v.Valid {
		if !s.Settled && !slices.ContainsFunc(p.settle, func(r Row) bool { return r.Key() == s.Key() }) {
			unsettled = append(unsettled, s)
		}
	}
	rm := v.placedRemoval(account, gone, start.Add(-ac.opts.SettleGrace), append(slices.Clip(v.InvalidSums), v.InvalidTombstones...), unsettled)
	del := rm.dels
	if rm.from != nil {
		del = append(del, store.Mutation{Partition: account, Op: store.OpDeleteRange, Key: rm.from})
	}
	// Moved rows go after the delete-range, placed at the merge's start
	// (after the run) and stamped after the delete-range.
	var buf []byte
	at := start.UnixMicro()
	for _, r := range rm.moved {
		del = append(del, appendPlacedPut(&buf, account, at, r))
	}
	if len(del)+len(p.settle) > store.MaxBatch {
		del, rm.removed = nil, nil
	}
	if len(del)+len(p.settle) == 0 {
		return nil
	}
	if err := ac.mergeWrite(ctx, account, v, del, p.settle); err != nil {
		return err
	}
	rep.Settled = p.settle
	keep := func(rows []Row) []Row {
		var out []Row
		for _, r := range rows {
			if rm.removed[r.Key()] {
				out = append(out, r)
			}
		}
		return out
	}
	rep.Deleted, rep.Collected = keep(p.deletes), keep(p.gc)
	return nil
}
