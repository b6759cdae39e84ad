package riaktest

import (
	"bytes"
	"slices"
	"strconv"
	"time"

	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
)

// sibling is one stored version of a value: its content and the dot of the
// write that created it. A tombstone is a sibling whose content has
// Deleted set.
type sibling struct {
	dot     Dot
	content *rpbkv.RpbContent
}

func (s sibling) tombstone() bool { return s.content.Deleted != nil }

// object is what the double keeps per key: the causal context of everything
// ever written to it (vv) and the siblings nothing has superseded yet.
// reapAt is set when a delete left only tombstones: the object is kept
// (fetches answer "not found", or the tombstone's vclock when asked for it)
// until then, and reaped at the first access after it (Riak's delete_mode).
// written is the time of the last write (a put or a delete's tombstone),
// from which a backend's expiry counts: the backend stores the whole
// object again on every write.
type object struct {
	vv      VClock
	sibs    []sibling
	reapAt  time.Time
	written time.Time
	epoch   uint64 // the key's epoch: its writers' actor ids (see apply)
}

// objectOverhead is what size counts for an object and for each sibling
// besides its content: more than Riak's encoding of the vclock and of a
// sibling's fixed metadata (vtag, last-modified), which are tens of bytes
// each.
const objectOverhead = 1024

// size is the object's size as max_object_size counts it, over-estimated
// (objectOverhead): each sibling's content is counted whole, its value and
// its metadata (content type, user metadata, indexes, links), as Riak
// encodes every sibling's metadata into the object it sizes.
func (o *object) size() int {
	n := objectOverhead
	for _, sib := range o.sibs {
		n += objectOverhead + proto.Size(sib.content)
	}
	return n
}

func (o *object) live() bool {
	return slices.ContainsFunc(o.sibs, func(s sibling) bool { return !s.tombstone() })
}

// contents returns copies of the siblings' contents, with empty values when
// head is set.
func (o *object) contents(head bool) []*rpbkv.RpbContent {
	var out []*rpbkv.RpbContent
	for _, sib := range o.sibs {
		c := proto.Clone(sib.content).(*rpbkv.RpbContent)
		if head {
			c.Value = []byte{}
		}
		out = append(out, c)
	}
	return out
}

// writeProps is the part of the bucket properties that decides what a write
// does to existing siblings.
type writeProps struct {
	allowMult     bool
	lastWriteWins bool
	// dvv is dvv_enabled: false for Riak's "default" bucket type, true for
	// every type created with `riak admin bucket-type create`.
	dvv bool
}

// apply performs one write (a put, or a delete's tombstone) coordinated by
// vnode coord with client context ctx, following riak_object:update/merge:
// the new context is the join of the stored context and ctx, plus the new
// write's dot. The dot's actor is coord in the key's epoch ("vnode-0@3"):
// a key written when absent (new, or reaped) takes the next epoch from
// clocks[""], as Riak's vnodes give each key a fresh actor id of their own
// (riak_kv_vnode's key epochs), so that neither a stale vclock of the key
// nor another key's vclock covers a write the client never read. The dot's
// counter is one past both the joined context's entry and the actor's own
// counter in clocks (updated in place). With dvv, siblings whose dot ctx covers
// are dropped and the others stay. Without dvv (the default type), a write
// whose ctx descends the stored context replaces every sibling, and any
// other write keeps them all (riak_object:merge_contents(New, Old, false)
// is the union of both lists). allow_mult=false keeps only the newest
// sibling (Riak resolves by timestamp) and last_write_wins=true replaces
// the object outright: both lose concurrent writes. old may be nil (no
// stored object); apply never mutates it.
func apply(old *object, ctx VClock, content *rpbkv.RpbContent, p writeProps, coord string, clocks map[string]uint64, now time.Time) *object {
	var base VClock
	var prev []sibling
	if old != nil {
		base = old.vv
		prev = old.sibs
	}
	epoch := uint64(0)
	if old != nil {
		epoch = old.epoch
	} else {
		clocks[""]++
		epoch = clocks[""]
	}
	actor := coord + "@" + strconv.FormatUint(epoch, 10)
	vv := base.Join(ctx)
	clocks[actor] = max(clocks[actor], vv[actor]) + 1
	dot := Dot{Vnode: actor, Counter: clocks[actor]}
	vv[actor] = dot.Counter
	c := proto.Clone(content).(*rpbkv.RpbContent)
	if c.Value == nil {
		c.Value = []byte{}
	}
	secs, usecs := uint32(now.Unix()), uint32(now.Nanosecond()/1000)
	c.LastMod, c.LastModUsecs, c.Vtag = &secs, &usecs, []byte(dot.String())
	next := &object{vv: vv, written: now, epoch: epoch}
	if !p.lastWriteWins && p.allowMult {
		switch {
		case p.dvv:
			for _, s := range prev {
				if !ctx.Covers(s.dot) {
					next.sibs = append(next.sibs, s)
				}
			}
		case ctx.Descends(base):
			// Without DVV, a write that has seen everything replaces it.
		default:
			next.sibs = append(next.sibs, prev...)
		}
	}
	next.sibs = append(next.sibs, sibling{dot: dot, content: c})
	// Riak keeps siblings sorted by value (riak_object:compare/2, then by
	// metadata, which the write order stands in for): a fetch lists them
	// in that order, not in the order they were written.
	slices.SortStableFunc(next.sibs, func(a, b sibling) int { return bytes.Compare(a.content.Value, b.content.Value) })
	return next
}

// String renders a dot as vnode.counter.
func (d Dot) String() string { return d.Vnode + "." + strconv.FormatUint(d.Counter, 10) }
