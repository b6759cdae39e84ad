package riak_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

var ctx = context.Background()

func TestFetchMissingThenPut(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("basic")

	sibs, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Empty(t, sibs)
	require.Nil(t, tok)

	require.NoError(t, s.Put(ctx, key, "a1", []byte("v1"), tok))
	sibs, tok, err = s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v1")}, sibs)
	require.NotEmpty(t, tok)

	require.NoError(t, s.Put(ctx, key, "a1", []byte("v2"), tok))
	require.Equal(t, [][]byte{[]byte("v2")}, srv.Values(fakeType, testBucket, key))
	require.Equal(t, int64(2), srv.Requests(riaktest.OpGet))
	require.Equal(t, int64(2), srv.Requests(riaktest.OpPut))
}

func TestStaleTokenMakesSiblingAndMergedPutCollapses(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("sib")
	require.NoError(t, s.Put(ctx, key, "a", []byte("base"), nil))
	_, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)

	// Two actors read the same version and write concurrently.
	require.NoError(t, s.Put(ctx, key, "a", []byte("from-a"), tok))
	require.NoError(t, s.Put(ctx, key, "b", []byte("from-b"), tok))
	sibs, tok2, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.ElementsMatch(t, [][]byte{[]byte("from-a"), []byte("from-b")}, sibs)

	// Writing back the merge with the fetched vclock collapses them.
	require.NoError(t, s.Put(ctx, key, "a", []byte("merged"), tok2))
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n)
	sibs, _, err = s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("merged")}, sibs)
}

func TestCheckBucketRefusesUnsafeBuckets(t *testing.T) {
	srv := riaktest.Start(t)
	cl := newCluster(t, srv.Addr())
	// Riak accepts last_write_wins=true only without dotted version vectors.
	require.ErrorContains(t, srv.CreateBucketType("lww", riaktest.BucketTypeProps{AllowMult: true, LastWriteWins: true}), "dvv_enabled must be false")
	require.NoError(t, srv.CreateBucketType("lww", riaktest.BucketTypeProps{AllowMult: true, LastWriteWins: true, DisableDVV: true}))
	require.NoError(t, srv.CreateBucketType("counters", riaktest.BucketTypeProps{AllowMult: true, Datatype: "counter"}))
	require.NoError(t, srv.CreateBucketType("ledgers", riaktest.BucketTypeProps{AllowMult: true}))

	for _, tc := range []struct {
		typ, want string
	}{
		{"", "allow_mult=false"}, // Riak's default type
		{"lww", "last_write_wins=true"},
		{"counters", "datatype"},
	} {
		_, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: tc.typ, Bucket: "b"})
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore, tc.typ)
		require.Contains(t, err.Error(), tc.want)
	}
	_, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: "ledgers", Bucket: "b"})
	require.NoError(t, err)

	// ConfigureBucket makes a bucket of the default type safe, but the
	// default type has no dotted version vectors: New refuses it unless
	// told otherwise.
	require.NoError(t, riak.ConfigureBucket(ctx, cl, "", "b"))
	for _, typ := range []string{"", "default"} {
		err = riak.CheckBucket(ctx, cl, typ, "b")
		require.ErrorIs(t, err, riak.ErrDefaultBucketType)
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
		require.Contains(t, err.Error(), "bucket-type create")
		_, err = riak.NewSiblings(ctx, cl, riak.Options{BucketType: typ, Bucket: "b"})
		require.ErrorIs(t, err, riak.ErrDefaultBucketType)
		_, err = riak.NewSiblings(ctx, cl, riak.Options{BucketType: typ, Bucket: "b", AllowDefaultBucketType: true})
		require.NoError(t, err)
	}
	// AllowDefaultBucketType does not let an unsafe bucket through.
	_, err = riak.NewSiblings(ctx, cl, riak.Options{Bucket: "unconfigured", AllowDefaultBucketType: true})
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	require.NotErrorIs(t, err, riak.ErrDefaultBucketType)
	require.Contains(t, err.Error(), "allow_mult=false")

	// An unknown bucket type is a misconfiguration, not an outage.
	_, err = riak.NewSiblings(ctx, cl, riak.Options{BucketType: "nope", Bucket: "b"})
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	var re riakc.RiakError
	require.ErrorAs(t, err, &re)
}

func TestAmbiguousPutIsRetried(t *testing.T) {
	for _, f := range []riaktest.Fault{riaktest.DropResponse, riaktest.CloseAfterApply, riaktest.TimeoutAfterApply, riaktest.CloseBeforeApply, riaktest.Refuse} {
		t.Run(f.String(), func(t *testing.T) {
			srv, cl := fakeCluster(t)
			s := newStore(t, cl, riak.Options{RetryCount: 5})
			key := uniqueKey("retry")
			srv.InjectFault(riaktest.OpPut, f, 1)
			require.NoError(t, s.Put(ctx, key, "a", []byte("v"), nil))
			require.GreaterOrEqual(t, srv.Requests(riaktest.OpPut), int64(2))
			vals := srv.Values(fakeType, testBucket, key)
			require.NotEmpty(t, vals)
			for _, v := range vals {
				require.Equal(t, "v", string(v))
			}
			// A landed first attempt plus its resend leave at most two
			// identical siblings; the next merged write collapses them.
			if f.Applies() {
				require.Len(t, vals, 2)
			} else {
				require.Len(t, vals, 1)
			}
		})
	}
}

func TestOutcomeWithoutRetries(t *testing.T) {
	for _, tc := range []struct {
		fault  riaktest.Fault
		kind   error
		driver any
	}{
		{riaktest.DropResponse, crdt.ErrAmbiguousWrite, new(net.Error)},
		{riaktest.TimeoutAfterApply, crdt.ErrAmbiguousWrite, new(riakc.RiakError)},
		{riaktest.CloseAfterApply, crdt.ErrAmbiguousWrite, nil},
		{riaktest.Refuse, crdt.ErrAmbiguousWrite, new(riakc.RiakError)}, // a put a node forwarded first may land
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			srv, cl := fakeCluster(t)
			s := newStore(t, cl, riak.Options{RetryCount: riak.NoRetries})
			key := uniqueKey("once")
			srv.InjectFault(riaktest.OpPut, tc.fault, 1)
			err := s.Put(ctx, key, "a", []byte("v"), nil)
			require.ErrorIs(t, err, tc.kind)
			var rerr *riak.Error
			require.ErrorAs(t, err, &rerr)
			require.Equal(t, 1, rerr.Attempts)
			require.Equal(t, "store", rerr.Op)
			if tc.driver != nil {
				require.ErrorAs(t, err, tc.driver)
			}
			var ce riakc.ClientError
			require.ErrorAs(t, err, &ce, "the driver's own error is reachable too")
			require.Equal(t, int64(1), srv.Requests(riaktest.OpPut))
			require.Equal(t, tc.fault.Applies(), len(srv.Values(fakeType, testBucket, key)) == 1)
		})
	}
}

func TestExhaustedRetries(t *testing.T) {
	t.Run("all refused", func(t *testing.T) {
		srv, cl := fakeCluster(t)
		s := newStore(t, cl, riak.Options{RetryCount: 2, RetryBackoff: time.Millisecond})
		srv.InjectFault(riaktest.OpPut, riaktest.Refuse, 3)
		err := s.Put(ctx, uniqueKey("refused"), "a", []byte("v"), nil)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "refused, but a put a node forwarded first may land")
		require.Equal(t, int64(3), srv.Requests(riaktest.OpPut))
	})
	t.Run("one ambiguous among refusals", func(t *testing.T) {
		srv, cl := fakeCluster(t)
		s := newStore(t, cl, riak.Options{RetryCount: 2, RetryBackoff: time.Millisecond})
		srv.InjectFault(riaktest.OpPut, riaktest.Refuse, 1)
		srv.InjectFault(riaktest.OpPut, riaktest.TimeoutAfterApply, 1)
		srv.InjectFault(riaktest.OpPut, riaktest.Refuse, 1)
		key := uniqueKey("mixed")
		err := s.Put(ctx, key, "a", []byte("v"), nil)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		require.Len(t, srv.Values(fakeType, testBucket, key), 1, "the ambiguous attempt did land")
	})
	t.Run("fetch", func(t *testing.T) {
		srv, cl := fakeCluster(t)
		s := newStore(t, cl, riak.Options{RetryCount: 1, RetryBackoff: time.Millisecond})
		srv.InjectFault(riaktest.OpGet, riaktest.TimeoutAfterApply, 2)
		_, _, err := s.Fetch(ctx, uniqueKey("fetch"))
		require.ErrorIs(t, err, crdt.ErrUnavailable, "a read is never ambiguous")
	})
}

func TestContext(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err := s.Put(cancelled, uniqueKey("ctx"), "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "nothing was sent")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, int64(0), srv.Requests(riaktest.OpPut))

	// A deadline that expires while the response is being dropped.
	srv.SetFaultFunc(func(op riaktest.Op, _ string) riaktest.Fault {
		if op == riaktest.OpPut {
			return riaktest.DropResponse
		}
		return riaktest.NoFault
	})
	short, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel2()
	start := time.Now()
	err = s.Put(short, uniqueKey("ctx"), "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 2*time.Second, "returns at the deadline, not after retries")
	srv.SetFaultFunc(nil)
}

// TestServerDown: once the server is gone, the first request fails on
// the connection the driver pooled (EOF after sending: for a write that
// would be ambiguous) and the driver starts checking the node's health;
// until a check succeeds it sends nothing, so a write is then reported
// crdt.ErrUnavailable, never ambiguous.
func TestServerDown(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{RetryCount: 1, RetryBackoff: time.Millisecond})
	require.NoError(t, srv.Close())
	_, _, err := s.Fetch(ctx, uniqueKey("down"))
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	for range 3 {
		err = s.Put(ctx, uniqueKey("down"), "a", []byte("v"), nil)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite)
	}
}

func TestDelete(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	var _ store.SiblingDeleter = s
	key := uniqueKey("del")
	require.NoError(t, s.Put(ctx, key, "a", []byte("v1"), nil))
	_, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)

	// A writer the deleter has not seen survives the delete.
	require.NoError(t, s.Put(ctx, key, "b", []byte("racing"), tok))
	require.NoError(t, s.Delete(ctx, key, tok))
	sibs, tok2, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("racing")}, sibs, "tombstones are not returned")
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 2, n, "live sibling + tombstone")

	// A put with the new token removes the tombstone too.
	require.NoError(t, s.Put(ctx, key, "a", []byte("v2"), tok2))
	n, _ = srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n)

	// Deleting with the latest token leaves only a tombstone, which Riak
	// keeps for delete_mode. Fetch returns no siblings but the tombstone's
	// vclock, so a Put right after the delete replaces the tombstone
	// instead of becoming its sibling.
	_, tok3, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.NoError(t, s.Delete(ctx, key, tok3))
	sibs, tok4, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Empty(t, sibs)
	require.NotEmpty(t, tok4, "the tombstone's vclock")
	require.NoError(t, s.Put(ctx, key, "a", []byte("v3"), tok4))
	n, _ = srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n, "the tombstone is gone")
	require.Equal(t, [][]byte{[]byte("v3")}, srv.Values(fakeType, testBucket, key))

	// A nil token covers nothing: nothing is sent, nothing removed.
	srv.ResetRequests()
	require.NoError(t, s.Delete(ctx, key, nil))
	require.Zero(t, srv.Requests(riaktest.OpDelete))
	require.Equal(t, [][]byte{[]byte("v3")}, srv.Values(fakeType, testBucket, key))
	done, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Delete(done, key, nil), context.Canceled)
}

// TestDeleteThenReaped: once Riak has reaped the tombstone, Fetch finds
// nothing and returns no token.
func TestDeleteThenReaped(t *testing.T) {
	srv, cl := fakeCluster(t, riaktest.Options{DeleteMode: riaktest.ReapImmediately})
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("reaped")
	require.NoError(t, s.Put(ctx, key, "a", []byte("v1"), nil))
	_, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.NoError(t, s.Delete(ctx, key, tok))
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Zero(t, n)
	sibs, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Empty(t, sibs)
	require.Nil(t, tok)
}

// TestTooManySiblingsIsNotResent: Riak refuses a write that would leave
// more than max_siblings siblings before applying it. Siblings does not
// resend it (the same write would be refused again) and reports it as
// crdt.ErrAmbiguousWrite (a put a node forwarded first may still land);
// the ledger then fetches again, and its next write, whose
// token covers every sibling, lands. In the default bucket type (no dotted
// version vectors) a write raced by another keeps every sibling it read,
// which is how a hot key reaches the limit.
func TestTooManySiblingsIsNotResent(t *testing.T) {
	srv, cl := fakeDefaultTypeCluster(t, riaktest.Options{MaxSiblings: 4})
	s := newStore(t, cl, defaultTypeOptions)
	key := uniqueKey("hot")
	for _, v := range []string{"a", "b", "c"} {
		require.NoError(t, s.Put(ctx, key, crdt.ActorID(v), []byte(v), nil))
	}
	_, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, key, "d", []byte("d"), nil)) // lands between the fetch and the put
	srv.ResetRequests()
	err = s.Put(ctx, key, "x", []byte("merged"), tok)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "refused, but a put a node forwarded first may land")
	var re riakc.RiakError
	require.ErrorAs(t, err, &re)
	require.Contains(t, re.Errmsg, "too_many_siblings")
	require.Equal(t, int64(1), srv.Requests(riaktest.OpPut), "not resent")
	require.Len(t, srv.Values("default", testBucket, key), 4)

	// The ledger recovers by fetching again.
	key = uniqueKey("hot-ledger")
	for _, v := range []string{"a", "b", "c"} {
		var c tpncounter.Counter
		_, err := c.Apply(crdt.ActorID(v), crdt.TxnID("seed-"+v), 1)
		require.NoError(t, err)
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, key, crdt.ActorID(v), b, nil))
	}
	var c tpncounter.Counter
	_, err = c.Apply("d", "seed-d", 1)
	require.NoError(t, err)
	racing, err := c.MarshalBinary()
	require.NoError(t, err)
	racer := &racingStore{Siblings: s, race: func() {
		require.NoError(t, s.Put(ctx, key, "d", racing, nil))
	}}
	l, err := ledger.New(racer, key, ledger.Options{Actor: "x"})
	require.NoError(t, err)
	srv.ResetRequests()
	res, err := l.Credit(ctx, "txn", 10)
	require.NoError(t, err)
	require.Equal(t, 2, res.Attempts, "one refused write, one after a fresh fetch")
	require.Equal(t, int64(14), res.Value)
	require.Equal(t, int64(5), srv.Requests(riaktest.OpPut), "the racing put, the refused put, the sightings of d (no record dates it), the landed put, the record")
	require.Len(t, srv.Values("default", testBucket, key), 1)
}

// racingStore is a store.Siblings wrapper for tests: after its first Fetch it
// runs race, a write that lands between that Fetch and the next Put.
type racingStore struct {
	*riak.Siblings
	once sync.Once
	race func()
}

func (r *racingStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	sibs, tok, err := r.Siblings.Fetch(ctx, key)
	r.once.Do(r.race)
	return sibs, tok, err
}

func TestBadInput(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("bad")
	require.ErrorIs(t, s.Put(ctx, "", "a", []byte("v"), nil), crdt.ErrInvalidIdentifier)
	require.ErrorIs(t, s.Put(ctx, key, "", []byte("v"), nil), crdt.ErrInvalidActor)
	require.ErrorIs(t, s.Put(ctx, key, "a", []byte("v"), bytes.Repeat([]byte{1}, riak.MaxTokenSize+1)), crdt.ErrTooLarge)
	require.Equal(t, store.MaxValue, riak.MaxValueSize, "every backend takes exactly store.MaxValue")
	require.ErrorIs(t, s.Put(ctx, key, "a", make([]byte, riak.MaxValueSize+1), nil), crdt.ErrTooLarge)
	require.ErrorIs(t, s.Put(ctx, key, "a", nil, nil), crdt.ErrInvalidAmount)
	require.ErrorIs(t, s.Put(ctx, key, "a", []byte{}, nil), crdt.ErrInvalidAmount)
	_, _, err := s.Fetch(ctx, strings.Repeat("k", riak.MaxKeyLen+1))
	require.ErrorIs(t, err, crdt.ErrInvalidIdentifier)
	require.Equal(t, int64(0), srv.Requests(riaktest.OpPut), "bad input is refused before sending")
	require.Equal(t, int64(0), srv.Requests(riaktest.OpGet), "bad input is refused before sending")

	// A token Fetch did not make is refused before sending: other bytes, a
	// token with a byte changed, cut or extended.
	require.NoError(t, s.Put(ctx, key, "a", []byte("v"), nil))
	_, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	flipped := bytes.Clone(tok)
	flipped[len(flipped)-1] ^= 1
	srv.ResetRequests()
	for _, bad := range []store.Token{
		store.Token("garbage"), tok[:1], tok[:5], tok[:len(tok)-1], append(bytes.Clone(tok), 0xff), flipped,
		append([]byte{'X'}, tok[1:]...),
	} {
		require.ErrorIs(t, s.Put(ctx, key, "a", []byte("w"), bad), crdt.ErrCorruptEncoding, "Put %x", bad)
		require.ErrorIs(t, s.Delete(ctx, key, bad), crdt.ErrCorruptEncoding, "Delete %x", bad)
	}
	require.Zero(t, srv.Requests(riaktest.OpPut)+srv.Requests(riaktest.OpDelete))

	// A token whose framing is intact but whose vclock Riak cannot decode
	// is refused by the server and not retried. Riak's handler crashes
	// on it and closes the connection; the store goes on working.
	garbled := bytes.Clone(tok)
	garbled[5] ^= 0xff
	// The framing's checksum: CRC-32C of the bucket type, the bucket and
	// the key, each after its length as a uvarint, then the vclock.
	var names []byte
	for _, n := range []string{fakeType, testBucket, key} {
		names = append(binary.AppendUvarint(names, uint64(len(n))), n...)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	binary.BigEndian.PutUint32(garbled[1:], crc32.Update(crc32.Checksum(names, castagnoli), castagnoli, garbled[5:]))
	require.ErrorIs(t, s.Put(ctx, key, "a", []byte("w"), garbled), crdt.ErrCorruptEncoding)
	require.Equal(t, int64(1), srv.Requests(riaktest.OpPut))
	require.Equal(t, [][]byte{[]byte("v")}, srv.Values(fakeType, testBucket, key))
	sibs, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v")}, sibs)
	require.NoError(t, s.Put(ctx, key, "a", []byte("w"), tok))
	require.Equal(t, [][]byte{[]byte("w")}, srv.Values(fakeType, testBucket, key))

	for _, o := range []riak.Options{{}, {Bucket: "b", RetryCount: -2}, {Bucket: "b", RetryBackoff: -1}, {Bucket: "b\x00"}} {
		_, err := riak.NewSiblings(ctx, cl, o)
		require.Error(t, err, "%+v", o)
	}
	_, err = riak.NewSiblings(ctx, nil, riak.Options{Bucket: "b"})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
}

// TestKeysAreValidated: every entry point refuses a key crdt.ValidateKey
// refuses, with crdt.ErrInvalidKey and before sending anything, and accepts
// the longest valid key.
func TestKeysAreValidated(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	require.Equal(t, 255, riak.MaxKeyLen)
	require.Equal(t, crdt.MaxKeyLen, riak.MaxKeyLen)
	srv.ResetRequests()
	for _, key := range []string{"", strings.Repeat("k", riak.MaxKeyLen+1), "a\x00b", "tab\there", "del\x7f", "\xff\xfe", "c1\u0085"} {
		_, _, err := s.Fetch(ctx, key)
		require.ErrorIs(t, err, crdt.ErrInvalidKey, "Fetch %q", key)
		require.ErrorIs(t, s.Put(ctx, key, "a", []byte("v"), nil), crdt.ErrInvalidKey, "Put %q", key)
		require.ErrorIs(t, s.Delete(ctx, key, nil), crdt.ErrInvalidKey, "Delete %q", key)
		require.ErrorIs(t, s.Put(ctx, key, "", nil, []byte("garbage")), crdt.ErrInvalidKey, "Put %q checks the key first", key)
	}
	for _, op := range []riaktest.Op{riaktest.OpGet, riaktest.OpPut, riaktest.OpDelete} {
		require.Zero(t, srv.Requests(op), "an invalid key was sent (%s)", op)
	}

	long := strings.Repeat("k", riak.MaxKeyLen)
	require.NoError(t, s.Put(ctx, long, "a", []byte("v"), nil))
	sibs, tok, err := s.Fetch(ctx, long)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v")}, sibs)
	require.NoError(t, s.Delete(ctx, long, tok))
	require.NoError(t, s.Put(ctx, "naïve/"+uniqueKey("k"), "a", []byte("v"), nil))
}
