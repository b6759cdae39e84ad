package riak_test

import (
	"context"
	"os"
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

// EnvRiakExpiringBucketType names the variable holding a bucket type whose
// backend expires objects realExpiry after their last write, for the
// real-Riak run of TestBackendExpiringLedgerRecords (README.md, "Tests").
const EnvRiakExpiringBucketType = "RIAK_EXPIRING_BUCKET_TYPE"

// realExpiry is the expiry of RIAK_EXPIRING_BUCKET_TYPE's backend: riak.conf
// multi_backend.NAME.bitcask.expiry = 2s.
const realExpiry = 2 * time.Second

// expiringType is the double's bucket type whose backend expires objects.
const expiringType = "counterkit_records"

// until moves the clock to t, never back.
func (c *stepClock) until(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// expiringTarget is a Riak with a bucket whose backend expires objects
// after realExpiry and one that keeps them.
type expiringTarget struct {
	cl *riakc.Cluster
	// records is the expiring bucket, with Expiry declared; accounts one
	// that keeps its objects.
	records, accounts riak.Options
	// now is the server's clock, and until waits until it reads t.
	now   func() time.Time
	until func(t time.Time)
	// srv is the test double, nil for a real Riak.
	srv *riaktest.FakeServer
}

// startExpiringDouble starts a double with the bucket type fakeType, and
// expiringType whose backend "expiring" expires objects after expiry; its
// clock is clock (nil: time.Now).
func startExpiringDouble(t testing.TB, expiry time.Duration, clock func() time.Time) *riaktest.FakeServer {
	t.Helper()
	srv := riaktest.Start(t, riaktest.Options{Clock: clock,
		Backends: map[string]riaktest.Backend{"expiring": {Expiry: expiry}}})
	require.NoError(t, srv.CreateBucketType(fakeType, riaktest.BucketTypeProps{AllowMult: true}))
	require.NoError(t, srv.CreateBucketType(expiringType, riaktest.BucketTypeProps{AllowMult: true, Backend: "expiring"}))
	return srv
}

// fakeExpiringTarget is the test double with a clock of its own, half a
// second into a second.
func fakeExpiringTarget(t testing.TB) expiringTarget {
	c := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, int(500*time.Millisecond), time.UTC)}
	srv := startExpiringDouble(t, realExpiry, c.now)
	cl := newCluster(t, srv.Addr())
	return expiringTarget{cl: cl, srv: srv, now: c.now, until: c.until,
		records:  riak.Options{BucketType: expiringType, Bucket: testBucket, Expiry: realExpiry},
		accounts: riak.Options{BucketType: fakeType, Bucket: testBucket}}
}

// realExpiringTarget is RIAK_ADDR's Riak, with RIAK_EXPIRING_BUCKET_TYPE
// for the records and RIAK_BUCKET_TYPE (or the default type) for the
// accounts; it skips without them.
func realExpiringTarget(t testing.TB) expiringTarget {
	t.Helper()
	tg := realTarget(t)
	typ := os.Getenv(EnvRiakExpiringBucketType)
	if typ == "" {
		t.Skipf("%s is not set: no bucket type whose backend expires objects %v after their last write to test against "+
			"(README.md, \"Tests\"; the double's subtest covers the adapter in CI)", EnvRiakExpiringBucketType, realExpiry)
	}
	return expiringTarget{cl: tg.cl, now: time.Now, until: func(at time.Time) { time.Sleep(time.Until(at)) },
		records:  riak.Options{BucketType: typ, Bucket: testBucket, Expiry: realExpiry},
		accounts: tg.opts}
}

var expiringBackends = []struct {
	name string
	open func(t testing.TB) expiringTarget
}{
	{"fake", fakeExpiringTarget},
	{"riak", realExpiringTarget},
}

// forEachExpiringBackend runs fn on the double and, with RIAK_ADDR and
// RIAK_EXPIRING_BUCKET_TYPE set, on that Riak.
func forEachExpiringBackend(t *testing.T, fn func(t *testing.T, tg expiringTarget)) {
	for _, b := range expiringBackends {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "riak" && os.Getenv(EnvRiakAddr) == "" {
				t.Skipf("%s is not set: no real Riak to test against (the FakeServer subtest covers the adapter in CI)", EnvRiakAddr)
			}
			fn(t, b.open(t))
		})
	}
}

// TestBackendExpiringLedgerRecords: a ledger keeps its records in a bucket
// whose backend expires them (Options.Expiry declared) and its account in
// one that keeps it. The ledger refuses the expiring store for an account,
// and as Records for a retry window longer than its expiry. A retry inside
// the window is a duplicate; the record is read until the expiry has
// passed since its write and is gone a second after; the account stays.
func TestBackendExpiringLedgerRecords(t *testing.T) {
	forEachExpiringBackend(t, func(t *testing.T, tg expiringTarget) {
		cmd, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(tg.records.BucketType).WithBucket(tg.records.Bucket).Build()
		require.NoError(t, err)
		require.NoError(t, tg.cl.Execute(cmd))
		require.NotEmpty(t, cmd.(*riakc.FetchBucketPropsCommand).Response.Backend, "the records' bucket type names a backend")

		recs := newStore(t, tg.cl, tg.records)
		require.Equal(t, realExpiry, store.TTL(recs))
		accounts := newStore(t, tg.cl, tg.accounts)
		require.Zero(t, store.TTL(accounts))
		key := uniqueKey("acct")
		_, err = ledger.New(recs, key, ledger.Options{Actor: "svc"})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "an account in an expiring store")
		_, err = ledger.New(accounts, key, ledger.Options{Actor: "svc", Records: recs})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "records expiring inside the default 24h retry window")

		l, err := ledger.New(accounts, key, ledger.Options{Actor: "svc", Clock: tg.now, RetryWindow: realExpiry, Records: recs})
		require.NoError(t, err)
		rk := ledger.RecordKey(key, "t1")
		requireRecord := func(want bool) {
			t.Helper()
			sibs, _, err := recs.Fetch(ctx, rk)
			require.NoError(t, err)
			require.Equal(t, want, len(sibs) > 0, "record at %v", tg.now())
			sibs, _, err = accounts.Fetch(ctx, rk)
			require.NoError(t, err)
			require.Empty(t, sibs, "the record is not in the accounts' bucket")
		}
		before := tg.now()
		res, err := l.Credit(ctx, "t1", 5)
		require.NoError(t, err)
		require.Equal(t, tpncounter.Applied, res.Outcome)
		written := tg.now()
		requireRecord(true)
		res, err = l.Credit(ctx, "t1", 5)
		require.NoError(t, err)
		require.Equal(t, tpncounter.Duplicate, res.Outcome)

		tg.until(before.Add(realExpiry - 300*time.Millisecond))
		requireRecord(true)
		tg.until(written.Add(realExpiry + time.Second + 100*time.Millisecond))
		requireRecord(false)

		// The account stays: its bucket's backend keeps it.
		res, err = l.Credit(ctx, "t1", 5)
		require.NoError(t, err)
		require.NotEqual(t, tpncounter.Applied, res.Outcome)
		v, err := l.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(5), v)
	})
}

// TestRealRiakExpiringPathOnTheDouble runs TestBackendExpiringLedgerRecords'
// real-Riak setup (RIAK_ADDR, RIAK_BUCKET_TYPE, RIAK_EXPIRING_BUCKET_TYPE:
// realExpiringTarget) against the double posing as a real Riak, on its
// real clock, so that CI covers the path the integration run takes. It
// skips when RIAK_ADDR is set: the real run covers it then.
func TestRealRiakExpiringPathOnTheDouble(t *testing.T) {
	if addr := os.Getenv(EnvRiakAddr); addr != "" {
		t.Skipf("%s=%s is set: the test runs against that Riak", EnvRiakAddr, addr)
	}
	srv := startExpiringDouble(t, realExpiry, nil)
	t.Setenv(EnvRiakAddr, srv.Addr())
	t.Setenv(EnvRiakBucketType, fakeType)
	t.Setenv(EnvRiakExpiringBucketType, expiringType)
	t.Run("records", TestBackendExpiringLedgerRecords)
}

// TestOptionsExpiry: Expiry is declared, whole seconds, and reported by
// TTL; a negative one and one with a fraction of a second are refused.
func TestOptionsExpiry(t *testing.T) {
	_, cl := fakeCluster(t)
	for _, d := range []time.Duration{0, time.Second, ledger.DefaultExpireAfter} {
		s, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket, Expiry: d})
		require.NoError(t, err)
		require.Equal(t, d, s.TTL())
		require.Equal(t, d, store.TTL(s))
	}
	for _, d := range []time.Duration{-time.Second, -time.Nanosecond, 1500 * time.Millisecond, ledger.DefaultExpireAfter + time.Millisecond} {
		_, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket, Expiry: d})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%v", d)
	}
}

// TestLedgerRecordsExpireOnTheDouble: a ledger with the defaults and its
// records in a bucket whose backend expires them after
// ledger.DefaultExpireAfter (declared as Expiry), on the double's clock. A
// retry an hour later is a duplicate; the record is read through the
// second DefaultExpireAfter after its write's second and gone after; the
// account stays a year on. A store declaring a shorter expiry than the
// retry window is refused as Records, and any expiring store for the
// accounts.
func TestLedgerRecordsExpireOnTheDouble(t *testing.T) {
	w := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &stepClock{t: w.Add(500 * time.Millisecond)}
	srv := startExpiringDouble(t, ledger.DefaultExpireAfter, c.now)
	cl := newCluster(t, srv.Addr())
	recs := newStore(t, cl, riak.Options{BucketType: expiringType, Expiry: ledger.DefaultExpireAfter})
	accounts := newStore(t, cl, riak.Options{BucketType: fakeType})

	_, err := ledger.New(recs, "acct", ledger.Options{Actor: "svc"})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	short := newStore(t, cl, riak.Options{BucketType: expiringType, Expiry: ledger.DefaultRetryWindow - time.Second})
	_, err = ledger.New(accounts, "acct", ledger.Options{Actor: "svc", Records: short})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)

	l, err := ledger.New(accounts, "acct", ledger.Options{Actor: "svc", Clock: c.now, Records: recs})
	require.NoError(t, err)
	res, err := l.Credit(context.Background(), "t1", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	rk := ledger.RecordKey("acct", "t1")
	requireRecord := func(want bool) {
		t.Helper()
		sibs, _, err := recs.Fetch(ctx, rk)
		require.NoError(t, err)
		require.Equal(t, want, len(sibs) > 0, "record at %v", c.now())
	}
	requireRecord(true)

	c.add(time.Hour)
	res, err = l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome)
	c.until(w.Add(ledger.DefaultExpireAfter + time.Second - time.Nanosecond))
	requireRecord(true)
	c.until(w.Add(ledger.DefaultExpireAfter + time.Second))
	requireRecord(false)

	c.add(365 * 24 * time.Hour)
	res, err = l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.NotEqual(t, tpncounter.Applied, res.Outcome)
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
}
