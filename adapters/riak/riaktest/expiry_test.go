package riaktest_test

// Backend expiry as bitcask does it (bitcask:get/3 and expiry_time/1):
//
//	case E#bitcask_entry.tstamp < bitcask_time:tstamp() - ExpirySecs of
//	    true -> %% Expired entry; remove from keydir ... not_found
//
// where tstamp() is os:timestamp()'s whole seconds and a put stamps the
// entry with tstamp() at the write. An object written at second w is read
// while the clock's second is at most w + expiry_secs.

import (
	"sync"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// expiringType is a bucket type whose backend property names the backend
// "expiring", which expires objects after expirySecs.
const (
	expiringType = "records"
	expirySecs   = 10
)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// startExpiring starts a double whose clock is c, with the backend
// "expiring" (expirySecs), the type expiringType using it and dvvType
// using none.
func startExpiring(t *testing.T, c *fakeClock) (*riaktest.FakeServer, *riakc.Cluster) {
	t.Helper()
	srv := startDVV(t, riaktest.Options{Clock: c.Now,
		Backends: map[string]riaktest.Backend{"expiring": {Expiry: expirySecs * time.Second}, "keeping": {}}})
	require.NoError(t, srv.CreateBucketType(expiringType, riaktest.BucketTypeProps{AllowMult: true, Backend: "expiring"}))
	return srv, client(t, srv)
}

// TestBackendExpiryBoundary: an object written at second w (here half a
// second into it) is read up to the last instant of second w+expiry and
// gone from the first instant of the next, with its vclock: a write after
// it starts a new object. A bucket type without the backend property keeps
// its objects.
func TestBackendExpiryBoundary(t *testing.T) {
	w := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &fakeClock{t: w.Add(500 * time.Millisecond)}
	srv, cl := startExpiring(t, c)
	require.NoError(t, store(cl, expiringType, "k", "v", nil))
	require.NoError(t, store(cl, dvvType, "k", "kept", nil))

	c.Set(w.Add(expirySecs*time.Second + time.Second - time.Nanosecond))
	r := fetch(t, cl, expiringType, "k")
	require.Equal(t, []string{"v"}, values(r), "read through the last instant of second w+expiry")
	old := r.VClock

	c.Set(w.Add(expirySecs*time.Second + time.Second))
	require.True(t, fetch(t, cl, expiringType, "k").IsNotFound, "gone from second w+expiry+1")
	n, _ := srv.Siblings(expiringType, bucket, "k")
	require.Zero(t, n, "dropped, vclock and all")
	require.Equal(t, []string{"kept"}, values(fetch(t, cl, dvvType, "k")), "no backend property: kept")

	// A write with the expired object's vclock starts a new object (its
	// old siblings are gone); the dots it covers are never reused.
	require.NoError(t, store(cl, expiringType, "k", "new", old))
	require.Equal(t, []string{"new"}, values(fetch(t, cl, expiringType, "k")))
}

// TestBackendExpiryCountsFromTheLastWrite: each write stores the whole
// object again, so its expiry counts from the last write, siblings
// included; a delete's tombstone is a write too.
func TestBackendExpiryCountsFromTheLastWrite(t *testing.T) {
	w := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &fakeClock{t: w}
	_, cl := startExpiring(t, c)
	require.NoError(t, store(cl, expiringType, "k", "a", nil))
	c.Set(w.Add(5 * time.Second))
	require.NoError(t, store(cl, expiringType, "k", "b", nil))
	c.Set(w.Add((5 + expirySecs) * time.Second))
	require.ElementsMatch(t, []string{"a", "b"}, values(fetch(t, cl, expiringType, "k")), "a's expiry counts from b's write")
	c.Set(w.Add((6 + expirySecs) * time.Second))
	require.True(t, fetch(t, cl, expiringType, "k").IsNotFound)
}

// TestBackendExpiryPerBucket: a bucket's own backend property overrides
// its type's, as riak_kv_multi_backend reads the merged properties; a
// backend with no expiry keeps its objects.
func TestBackendExpiryPerBucket(t *testing.T) {
	w := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &fakeClock{t: w}
	_, cl := startExpiring(t, c)
	cmd, err := riakc.NewStoreBucketPropsCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithBackend("expiring").Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	cmd, err = riakc.NewStoreBucketPropsCommandBuilder().WithBucketType(expiringType).WithBucket(bucket).WithBackend("keeping").Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	require.NoError(t, store(cl, dvvType, "k", "v", nil))
	require.NoError(t, store(cl, expiringType, "k", "v", nil))
	c.Set(w.Add((1 + expirySecs) * time.Second))
	require.True(t, fetch(t, cl, dvvType, "k").IsNotFound)
	require.Equal(t, []string{"v"}, values(fetch(t, cl, expiringType, "k")))
}

// TestBackendExpiryMustBeWholeSeconds: bitcask's expiry_secs is whole
// seconds; the double refuses any other expiry, and a negative one.
func TestBackendExpiryMustBeWholeSeconds(t *testing.T) {
	for _, d := range []time.Duration{1500 * time.Millisecond, -time.Second} {
		_, err := riaktest.NewFakeServer(riaktest.Options{Backends: map[string]riaktest.Backend{"x": {Expiry: d}}})
		require.ErrorContains(t, err, "whole number of seconds", "%v", d)
	}
}

// TestBucketTypeBackendProperty: a created type's backend property is
// returned with its properties.
func TestBucketTypeBackendProperty(t *testing.T) {
	_, cl := startExpiring(t, &fakeClock{t: time.Now()})
	cmd, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(expiringType).WithBucket(bucket).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	require.Equal(t, "expiring", cmd.(*riakc.FetchBucketPropsCommand).Response.Backend)
}
