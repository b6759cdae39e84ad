package riak_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// target is a bucket to run a test against.
type target struct {
	cl *riakc.Cluster
	// opts name the bucket type and bucket (and allow the default type
	// where it is used). Tests use unique keys, so the bucket may be shared
	// (on a real Riak every bucket with its own properties is kept in the
	// ring forever).
	opts riak.Options
	// dvv reports whether the bucket type has dotted version vectors:
	// false for Riak's default type.
	dvv bool
	// addr is the server's protocol-buffers address, for more clusters.
	addr string
	// srv is the test double, nil for a real Riak.
	srv *riaktest.FakeServer
}

// requireDVV skips the rest of a test whose remaining assertions hold only
// with dotted version vectors.
func (tg target) requireDVV(t *testing.T, what string) {
	t.Helper()
	if !tg.dvv {
		t.Skipf("bucket type %q has no dotted version vectors (dvv_enabled=false): skipping %s", tg.opts.BucketType, what)
	}
}

// backend is a place to run the same test: the test double always (with a
// created bucket type, and with its default type), a real Riak when
// RIAK_ADDR is set.
type backend struct {
	name string
	open func(t testing.TB) target
}

// fakeBackend is the test double with a created bucket type.
var fakeBackend = backend{"fake", func(t testing.TB) target {
	srv, cl := fakeCluster(t)
	return target{cl: cl, opts: riak.Options{BucketType: fakeType, Bucket: testBucket}, dvv: true, addr: srv.Addr(), srv: srv}
}}

var backends = []backend{
	fakeBackend,
	{"fake-default-type", func(t testing.TB) target {
		srv, cl := fakeDefaultTypeCluster(t)
		return target{cl: cl, opts: defaultTypeOptions, dvv: false, addr: srv.Addr(), srv: srv}
	}},
	{"riak", realTarget},
}

// eachBackend runs fn as a subtest per backend; the real-Riak subtest
// skips without RIAK_ADDR, the double ones under a TestRealRiakPath test
// (realPathOnly).
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "riak" && os.Getenv(EnvRiakAddr) == "" {
				t.Skipf("%s is not set: no real Riak to test against (the FakeServer subtest covers the adapter in CI)", EnvRiakAddr)
			}
			if b.name != "riak" {
				skipDoubleInRealPath(t)
			}
			fn(t, b)
		})
	}
}

// forEachBackend is eachBackend with the backend's target opened.
func forEachBackend(t *testing.T, fn func(t *testing.T, tg target)) {
	eachBackend(t, func(t *testing.T, b backend) {
		fn(t, b.open(t))
	})
}

func TestBackendSiblingsCollapse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		s := newStore(t, tg.cl, tg.opts)
		key := uniqueKey("sib")
		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Empty(t, sibs)
		require.NoError(t, s.Put(ctx, key, "a", []byte("base"), tok))
		_, tok, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, key, "a", []byte("a"), tok))
		require.NoError(t, s.Put(ctx, key, "b", []byte("b"), tok))
		sibs, tok, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.ElementsMatch(t, [][]byte{[]byte("a"), []byte("b")}, sibs)
		require.NoError(t, s.Put(ctx, key, "a", []byte("ab"), tok))
		sibs, tok, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("ab")}, sibs)
		require.NoError(t, s.Delete(ctx, key, tok))
	})
}

// TestBackendContendedWrite: x reads siblings a and b, y writes in between,
// then x writes its merge with the vclock of its read. Nothing is lost in
// any bucket type; with dotted version vectors, x's write also drops the
// siblings it read (without them, Riak keeps a, b, y and x).
func TestBackendContendedWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		s := newStore(t, tg.cl, tg.opts)
		key := uniqueKey("contended")
		require.NoError(t, s.Put(ctx, key, "a", []byte("a"), nil))
		require.NoError(t, s.Put(ctx, key, "b", []byte("b"), nil))
		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.ElementsMatch(t, [][]byte{[]byte("a"), []byte("b")}, sibs)
		require.NoError(t, s.Put(ctx, key, "y", []byte("y"), nil))
		require.NoError(t, s.Put(ctx, key, "x", []byte("x"), tok))
		sibs, tok, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Subset(t, sibs, [][]byte{[]byte("x"), []byte("y")}, "no write is lost")
		require.Subset(t, [][]byte{[]byte("a"), []byte("b"), []byte("x"), []byte("y")}, sibs)
		// A quiet write collapses everything in any bucket type.
		require.NoError(t, s.Put(ctx, key, "x", []byte("xy"), tok))
		after, _, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("xy")}, after)

		tg.requireDVV(t, "the assertion that a contended write drops the siblings it read")
		require.ElementsMatch(t, [][]byte{[]byte("x"), []byte("y")}, sibs, "x's write dropped a and b, which it had read")
	})
}

func TestBackendDeleteKeepsRacingWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		s := newStore(t, tg.cl, tg.opts)
		key := uniqueKey("del")
		require.NoError(t, s.Put(ctx, key, "a", []byte("v1"), nil))
		_, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, key, "b", []byte("racing"), tok))
		require.NoError(t, s.Delete(ctx, key, tok))
		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("racing")}, sibs)
		require.NoError(t, s.Delete(ctx, key, tok))
		sibs, _, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Empty(t, sibs)
	})
}

// propsBucket is the bucket whose properties the bucket-property tests
// change; no other test uses it.
const propsBucket = "counterkit-test-props"

// setLastWriteWins sets a bucket's last_write_wins property through the
// driver, as an operator would.
func setLastWriteWins(cl *riakc.Cluster, bucketType, bucket string, lww bool) error {
	cmd, err := riakc.NewStoreBucketPropsCommandBuilder().WithBucketType(bucketType).WithBucket(bucket).WithLastWriteWins(lww).Build()
	if err != nil {
		return err
	}
	return cl.Execute(cmd)
}

// lwwNeedsNoDVV is Riak's reason for refusing last_write_wins=true on a
// bucket whose type has dotted version vectors (riak_kv_bucket).
const lwwNeedsNoDVV = "If last_write_wins is true, dvv_enabled must be false"

// lwwRefusal is Riak's whole message with that reason: Erlang's ~p
// breaks the {dvv_enabled, Reason} tuple, too long for the line, after
// its tag and indents the reason 4 columns past the tuple.
const lwwRefusal = "Invalid bucket properties: [{dvv_enabled,\n" +
	"                                \"" + lwwNeedsNoDVV + "\"}]"

// TestBackendLastWriteWinsRefusedWithDVV: Riak 3.2 refuses
// last_write_wins=true on a bucket of a type with dotted version vectors
// (every type created with `riak admin bucket-type create`), so such a
// bucket cannot become unsafe that way; the refusal changes nothing.
func TestBackendLastWriteWinsRefusedWithDVV(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		tg.requireDVV(t, "Riak accepts last_write_wins=true in a bucket type without dotted version vectors")
		typ := tg.opts.BucketType
		require.NoError(t, riak.ConfigureBucket(ctx, tg.cl, typ, propsBucket))
		err := setLastWriteWins(tg.cl, typ, propsBucket, true)
		require.Equal(t, lwwRefusal, riakMessage(err))
		require.NoError(t, riak.CheckBucket(ctx, tg.cl, typ, propsBucket), "the refused change left the bucket as it was")
		// ConfigureBucket sets last_write_wins=false, which is always
		// accepted.
		require.NoError(t, riak.ConfigureBucket(ctx, tg.cl, typ, propsBucket))
	})
}

// TestBackendCheckBucket: CheckBucket accepts a bucket ConfigureBucket set
// up and refuses one with last_write_wins=true. Riak 3.2 accepts
// last_write_wins=true only where dvv_enabled=false, which over protocol
// buffers means Riak's default bucket type (a created type has dvv_enabled
// unless created without it, which RIAK_BUCKET_TYPE's type is not), so the
// unsafe bucket is made there on every backend.
func TestBackendCheckBucket(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		if tg.opts.BucketType != "default" {
			require.NoError(t, riak.ConfigureBucket(ctx, tg.cl, tg.opts.BucketType, propsBucket))
			require.NoError(t, riak.CheckBucket(ctx, tg.cl, tg.opts.BucketType, propsBucket))
		}
		checkDefault := func() {
			t.Helper()
			err := riak.CheckBucket(ctx, tg.cl, "default", propsBucket)
			require.ErrorIs(t, err, riak.ErrDefaultBucketType)
			require.NotContains(t, err.Error(), "last_write_wins")
		}
		require.NoError(t, riak.ConfigureBucket(ctx, tg.cl, "default", propsBucket))
		checkDefault()
		require.NoError(t, setLastWriteWins(tg.cl, "default", propsBucket, true))
		err := riak.CheckBucket(ctx, tg.cl, "default", propsBucket)
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
		require.NotErrorIs(t, err, riak.ErrDefaultBucketType)
		require.Contains(t, err.Error(), "last_write_wins=true")
		require.NoError(t, riak.ConfigureBucket(ctx, tg.cl, "default", propsBucket))
		checkDefault()
	})
}

// missingType names a bucket type no backend has.
const missingType = "counterkit-no-such-type"

// riakMessage returns the message of the Riak error in err ("" if none).
func riakMessage(err error) string {
	var ce riakc.ClientError
	if errors.As(err, &ce) && ce.InnerError != nil {
		err = ce.InnerError
	}
	var re riakc.RiakError
	if errors.As(err, &re) {
		return re.Errmsg
	}
	return ""
}

// TestBackendObjectTooLarge: Riak refuses a put that would leave an object,
// its siblings together, larger than max_object_size (50 MB by default),
// before applying it: seven writers that did not see each other, each
// putting a value of store.MaxValue (8 MiB), leave six siblings and the
// seventh put is refused ("{too_large,N}"), sent once and reported as
// crdt.ErrAmbiguousWrite (a put a node forwarded first may still land, as
// errors.go says); a put with a fresh token supersedes
// the siblings it read and lands.
func TestBackendObjectTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("moves about 100 MB of values (1 GB of memory under -race); the full run covers it")
	}
	forEachBackend(t, func(t *testing.T, tg target) {
		// A cluster with the suites' timeout: the fetch below reads six
		// siblings of 8 MiB, which a Riak reads from each of n_val vnodes
		// and merges before it answers.
		s := newStore(t, newClusterTimeout(t, tg.addr, suiteRequestTimeout), tg.opts)
		key := uniqueKey("too-large")
		value := bytes.Repeat([]byte{'v'}, store.MaxValue)
		for i := range 6 {
			require.NoError(t, s.Put(ctx, key, crdt.ActorID(fmt.Sprint("w", i)), value, nil), "put %d", i)
		}
		err := s.Put(ctx, key, "w6", value, nil)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "refused, but a put a node forwarded first may land")
		var re *riak.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 1, re.Attempts, "not resent: the same put would be refused again")
		require.Contains(t, riakMessage(err), "too_large")

		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Len(t, sibs, 6, "the refused put left nothing")
		require.NoError(t, s.Put(ctx, key, "w6", value, tok))
		sibs, _, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Len(t, sibs, 1)
	})
}

// TestBackendRefusals: what Riak 3.2 refuses, with its messages, on every
// backend. Bucket properties: r, w and rw of 0 ({Prop,not_valid_quorum},
// riak_kv_bucket's is_quorum), several listed in Riak's order, while pr,
// pw and dw may be 0; a refusal changes nothing. A bucket type that does
// not exist: "no_type" for a fetch, store or delete, "No bucket-type named
// 'NAME'" for a bucket's properties, "Invalid bucket type: <<"NAME">>" for
// the type's properties and "Invalid bucket properties: not_active" for
// setting them. Nothing here is stored on a real Riak.
func TestBackendRefusals(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		typ := tg.opts.BucketType
		require.NoError(t, riak.ConfigureBucket(ctx, tg.cl, typ, propsBucket))
		fetchProps := func() *riakc.FetchBucketPropsResponse {
			t.Helper()
			cmd, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(typ).WithBucket(propsBucket).Build()
			require.NoError(t, err)
			require.NoError(t, tg.cl.Execute(cmd))
			return cmd.(*riakc.FetchBucketPropsCommand).Response
		}
		before := fetchProps()
		for _, c := range []struct {
			name string
			set  func(b *riakc.StoreBucketPropsCommandBuilder)
			want string
		}{
			{"r 0", func(b *riakc.StoreBucketPropsCommandBuilder) { b.WithR(0) }, "[{r,not_valid_quorum}]"},
			{"w 0", func(b *riakc.StoreBucketPropsCommandBuilder) { b.WithW(0) }, "[{w,not_valid_quorum}]"},
			{"rw 0", func(b *riakc.StoreBucketPropsCommandBuilder) { b.WithRw(0) }, "[{rw,not_valid_quorum}]"},
			// Riak prints the list with Erlang's ~p, which breaks it after
			// each element once it passes 80 columns, indenting the next
			// under the first.
			{"r, w and rw 0", func(b *riakc.StoreBucketPropsCommandBuilder) { b.WithR(0).WithW(0).WithRw(0) },
				"[{rw,not_valid_quorum},\n" +
					"                            {w,not_valid_quorum},\n" +
					"                            {r,not_valid_quorum}]"},
		} {
			b := riakc.NewStoreBucketPropsCommandBuilder().WithBucketType(typ).WithBucket(propsBucket)
			c.set(b)
			cmd, err := b.Build()
			require.NoError(t, err)
			require.Equal(t, "Invalid bucket properties: "+c.want, riakMessage(tg.cl.Execute(cmd)), c.name)
		}
		require.Equal(t, before, fetchProps(), "refused properties changed nothing")

		// A store, fetch or delete in a type that does not exist.
		store, err := riakc.NewStoreValueCommandBuilder().WithBucketType(missingType).WithBucket(propsBucket).WithKey("k").
			WithContent(&riakc.Object{Value: []byte("v"), ContentType: "text/plain"}).Build()
		require.NoError(t, err)
		require.Equal(t, "no_type", riakMessage(tg.cl.Execute(store)), "store")
		fetch, err := riakc.NewFetchValueCommandBuilder().WithBucketType(missingType).WithBucket(propsBucket).WithKey("k").Build()
		require.NoError(t, err)
		require.Equal(t, "no_type", riakMessage(tg.cl.Execute(fetch)), "fetch")
		del, err := riakc.NewDeleteValueCommandBuilder().WithBucketType(missingType).WithBucket(propsBucket).WithKey("k").Build()
		require.NoError(t, err)
		require.Equal(t, "no_type", riakMessage(tg.cl.Execute(del)), "delete")

		// Its properties, and a bucket's.
		bp, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(missingType).WithBucket(propsBucket).Build()
		require.NoError(t, err)
		require.Equal(t, "No bucket-type named '"+missingType+"'", riakMessage(tg.cl.Execute(bp)))
		tp, err := riakc.NewFetchBucketTypePropsCommandBuilder().WithBucketType(missingType).Build()
		require.NoError(t, err)
		require.Equal(t, `Invalid bucket type: <<"`+missingType+`">>`, riakMessage(tg.cl.Execute(tp)))
		st, err := riakc.NewStoreBucketTypePropsCommandBuilder().WithBucketType(missingType).WithAllowMult(true).Build()
		require.NoError(t, err)
		require.Equal(t, "Invalid bucket properties: not_active", riakMessage(tg.cl.Execute(st)))
	})
}

// TestBackendPutAfterDeleteReplacesTombstone: right after a delete that
// covered every sibling, Riak keeps the tombstone for delete_mode (3 s by
// default) and a fetch asking for deletedvclock gets its vclock with no
// content, which the driver hands up as one tombstone: Fetch returns no
// siblings and a token, and a Put with it supersedes the tombstone (one
// sibling stored, not the tombstone and the value).
func TestBackendPutAfterDeleteReplacesTombstone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		s := newStore(t, tg.cl, tg.opts)
		key := uniqueKey("after-delete")
		require.NoError(t, s.Put(ctx, key, "a", []byte("v1"), nil))
		_, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.NoError(t, s.Delete(ctx, key, tok))

		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Empty(t, sibs)
		require.NotNil(t, tok, "the tombstone's vclock, within delete_mode")
		require.NoError(t, s.Put(ctx, key, "a", []byte("v2"), tok))

		cmd, err := riakc.NewFetchValueCommandBuilder().WithBucketType(tg.opts.BucketType).WithBucket(tg.opts.Bucket).
			WithKey(key).WithReturnDeletedVClock(true).Build()
		require.NoError(t, err)
		require.NoError(t, tg.cl.Execute(cmd))
		resp := cmd.(*riakc.FetchValueCommand).Response
		require.Len(t, resp.Values, 1, "the put superseded the tombstone")
		require.False(t, resp.Values[0].IsTombstone)
		require.Equal(t, []byte("v2"), resp.Values[0].Value)
	})
}

// TestBackendMaxSiblings: Riak's max_siblings is 100 by default (riak_kv's
// object.siblings.maximum): 100 writers that did not see each other leave
// 100 siblings, in any bucket type, and the 101st put is refused before it
// is applied ("{too_many_siblings,101}"), sent once and reported as
// crdt.ErrAmbiguousWrite (a put a node forwarded first may still land);
// a put with a fresh token supersedes every sibling and lands.
func TestBackendMaxSiblings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		s := newStore(t, tg.cl, tg.opts)
		key := uniqueKey("max-siblings")
		for i := range riaktest.DefaultMaxSiblings {
			require.NoError(t, s.Put(ctx, key, crdt.ActorID(fmt.Sprint("w", i)), []byte{byte(i)}, nil), "put %d", i)
		}
		err := s.Put(ctx, key, "last", []byte("last"), nil)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		var re *riak.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 1, re.Attempts, "not resent: the same put would be refused again")
		require.Equal(t, fmt.Sprintf("{too_many_siblings,%d}", riaktest.DefaultMaxSiblings+1), riakMessage(err))

		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Len(t, sibs, riaktest.DefaultMaxSiblings, "the refused put left nothing")
		require.NoError(t, s.Put(ctx, key, "last", []byte("last"), tok))
		sibs, _, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("last")}, sibs)
	})
}
