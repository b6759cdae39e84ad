package riaktest_test

import (
	"errors"
	"net"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

const bucket = "b"

// client returns a started riak-go-client cluster for srv with a short
// request timeout and no driver-level retries.
func client(t *testing.T, srv *riaktest.FakeServer) *riakc.Cluster {
	t.Helper()
	node, err := riakc.NewNode(&riakc.NodeOptions{
		RemoteAddress:  srv.Addr(),
		RequestTimeout: time.Second,
		ConnectTimeout: time.Second,
	})
	require.NoError(t, err)
	cl, err := riakc.NewCluster(&riakc.ClusterOptions{Nodes: []*riakc.Node{node}, ExecutionAttempts: 1})
	require.NoError(t, err)
	require.NoError(t, cl.Start())
	t.Cleanup(func() { _ = cl.Stop() })
	return cl
}

func fetch(t *testing.T, cl *riakc.Cluster, typ, key string) *riakc.FetchValueResponse {
	t.Helper()
	cmd, err := riakc.NewFetchValueCommandBuilder().WithBucketType(typ).WithBucket(bucket).WithKey(key).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	return cmd.(*riakc.FetchValueCommand).Response
}

func store(cl *riakc.Cluster, typ, key, value string, vclock []byte) error {
	cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(typ).WithBucket(bucket).WithKey(key).
		WithContent(&riakc.Object{Value: []byte(value), ContentType: "text/plain", VClock: vclock}).Build()
	if err != nil {
		return err
	}
	return cl.Execute(cmd)
}

func values(r *riakc.FetchValueResponse) []string {
	var out []string
	for _, o := range r.Values {
		if !o.IsTombstone {
			out = append(out, string(o.Value))
		}
	}
	return out
}

func setProps(t *testing.T, cl *riakc.Cluster, typ string, allowMult, lww bool) {
	t.Helper()
	cmd, err := riakc.NewStoreBucketPropsCommandBuilder().WithBucketType(typ).WithBucket(bucket).
		WithAllowMult(allowMult).WithLastWriteWins(lww).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
}

func TestNotFoundThenStoreThenFetch(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	require.True(t, fetch(t, cl, "default", "k").IsNotFound)
	require.NoError(t, store(cl, "default", "k", "v1", nil))
	r := fetch(t, cl, "default", "k")
	require.False(t, r.IsNotFound)
	require.Equal(t, []string{"v1"}, values(r))
	require.Equal(t, "text/plain", r.Values[0].ContentType)
	require.NotEmpty(t, r.VClock)
}

func TestSiblingsAndCollapse(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	setProps(t, cl, "default", true, false)

	require.NoError(t, store(cl, "default", "k", "a", nil))
	first := fetch(t, cl, "default", "k")
	// Two writers both start from the same context: concurrent puts.
	require.NoError(t, store(cl, "default", "k", "b", first.VClock))
	require.NoError(t, store(cl, "default", "k", "c", first.VClock))
	r := fetch(t, cl, "default", "k")
	require.ElementsMatch(t, []string{"b", "c"}, values(r))
	// A put without any vclock is concurrent with everything.
	require.NoError(t, store(cl, "default", "k", "d", nil))
	r = fetch(t, cl, "default", "k")
	require.ElementsMatch(t, []string{"b", "c", "d"}, values(r))
	n, _ := srv.Siblings("default", bucket, "k")
	require.Equal(t, 3, n)

	// Writing with the latest vclock replaces every sibling it covers.
	require.NoError(t, store(cl, "default", "k", "merged", r.VClock))
	r2 := fetch(t, cl, "default", "k")
	require.Equal(t, []string{"merged"}, values(r2))

	var before, after riaktest.VClock
	require.NoError(t, before.UnmarshalBinary(r.VClock))
	require.NoError(t, after.UnmarshalBinary(r2.VClock))
	require.True(t, after.Descends(before))
	require.False(t, before.Descends(after))
}

func TestStaleWriteAfterCollapseMakesSibling(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	setProps(t, cl, "default", true, false)
	require.NoError(t, store(cl, "default", "k", "a", nil))
	old := fetch(t, cl, "default", "k").VClock
	require.NoError(t, store(cl, "default", "k", "b", old))
	// A writer still holding the old vclock: its write is concurrent with b
	// but supersedes a (which both b and it have seen).
	require.NoError(t, store(cl, "default", "k", "c", old))
	require.ElementsMatch(t, []string{"b", "c"}, values(fetch(t, cl, "default", "k")))
}

func TestAllowMultFalseAndLWWLoseConcurrentWrites(t *testing.T) {
	for _, tc := range []struct {
		name           string
		allowMult, lww bool
	}{{"allow_mult=false", false, false}, {"last_write_wins=true", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := riaktest.Start(t)
			cl := client(t, srv)
			setProps(t, cl, "default", tc.allowMult, tc.lww)
			require.NoError(t, store(cl, "default", "k", "a", nil))
			require.NoError(t, store(cl, "default", "k", "b", nil))
			require.Equal(t, []string{"b"}, values(fetch(t, cl, "default", "k")))
		})
	}
}

func TestBucketProps(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	require.NoError(t, srv.CreateBucketType("ledgers", riaktest.BucketTypeProps{AllowMult: true}))

	get := func(typ string) *riakc.FetchBucketPropsResponse {
		cmd, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(typ).WithBucket(bucket).Build()
		require.NoError(t, err)
		require.NoError(t, cl.Execute(cmd))
		return cmd.(*riakc.FetchBucketPropsCommand).Response
	}
	p := get("default")
	require.False(t, p.AllowMult)
	require.False(t, p.LastWriteWins)
	require.Equal(t, uint32(3), p.NVal)
	require.True(t, get("ledgers").AllowMult)

	setProps(t, cl, "default", true, true)
	p = get("default")
	require.True(t, p.AllowMult)
	require.True(t, p.LastWriteWins)

	// Unknown bucket types are refused, as by Riak.
	cmd, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType("nope").WithBucket(bucket).Build()
	require.NoError(t, err)
	err = cl.Execute(cmd)
	var re riakc.RiakError
	require.True(t, errors.As(unwrapClient(err), &re), "%v", err)
}

func unwrapClient(err error) error {
	var ce riakc.ClientError
	if errors.As(err, &ce) && ce.InnerError != nil {
		return ce.InnerError
	}
	return err
}

func TestDeleteWithVClock(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	setProps(t, cl, "default", true, false)
	require.NoError(t, store(cl, "default", "k", "a", nil))
	seen := fetch(t, cl, "default", "k").VClock
	// A concurrent writer the deleter has not seen.
	require.NoError(t, store(cl, "default", "k", "late", nil))
	del, err := riakc.NewDeleteValueCommandBuilder().WithBucket(bucket).WithKey("k").WithVClock(seen).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(del))
	r := fetch(t, cl, "default", "k")
	require.Equal(t, []string{"late"}, values(r), "the unseen write survives the delete")
	require.Len(t, r.Values, 2, "plus the tombstone sibling")

	// Deleting with the latest vclock removes the key.
	del, err = riakc.NewDeleteValueCommandBuilder().WithBucket(bucket).WithKey("k").WithVClock(r.VClock).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(del))
	require.True(t, fetch(t, cl, "default", "k").IsNotFound)
}

func TestFaultsAndCounting(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	setProps(t, cl, "default", true, false)
	srv.ResetRequests()

	// Refuse: an error response, nothing applied.
	srv.InjectFault(riaktest.OpPut, riaktest.Refuse, 1)
	err := store(cl, "default", "k", "a", nil)
	var re riakc.RiakError
	require.True(t, errors.As(unwrapClient(err), &re), "%v", err)
	require.Contains(t, re.Errmsg, "overload")
	require.True(t, fetch(t, cl, "default", "k").IsNotFound)

	// DropResponse: applied, but the client times out.
	srv.InjectFault(riaktest.OpPut, riaktest.DropResponse, 1)
	err = store(cl, "default", "k", "b", nil)
	var ne net.Error
	require.True(t, errors.As(unwrapClient(err), &ne) && ne.Timeout(), "%v", err)
	require.Equal(t, []string{"b"}, values(fetch(t, cl, "default", "k")))

	// TimeoutAfterApply: applied, then an error response.
	srv.InjectFault(riaktest.OpPut, riaktest.TimeoutAfterApply, 1)
	err = store(cl, "default", "k", "c", nil)
	require.True(t, errors.As(unwrapClient(err), &re), "%v", err)
	require.Equal(t, "timeout", re.Errmsg)
	require.ElementsMatch(t, []string{"b", "c"}, values(fetch(t, cl, "default", "k")))

	// CloseAfterApply: applied, connection reset.
	srv.InjectFault(riaktest.OpPut, riaktest.CloseAfterApply, 1)
	require.Error(t, store(cl, "default", "k", "d", nil))
	require.Eventually(t, func() bool { // the node health-checks after a reset
		cmd, _ := riakc.NewFetchValueCommandBuilder().WithBucket(bucket).WithKey("k").Build()
		return cl.Execute(cmd) == nil
	}, 5*time.Second, 20*time.Millisecond)
	require.ElementsMatch(t, []string{"b", "c", "d"}, values(fetch(t, cl, "default", "k")))

	require.Equal(t, int64(4), srv.Requests(riaktest.OpPut))
	require.GreaterOrEqual(t, srv.Requests(riaktest.OpGet), int64(4))
	require.Equal(t, int64(0), srv.Requests(riaktest.OpDelete))
	h := srv.SiblingHistogram()
	require.Positive(t, h[1])
	require.Positive(t, h[3])
}

func TestFaultFuncAndCloseBeforeApply(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	srv.SetFaultFunc(func(op riaktest.Op, key string) riaktest.Fault {
		if op == riaktest.OpPut && key == "doomed" {
			return riaktest.CloseBeforeApply
		}
		return riaktest.NoFault
	})
	require.Error(t, store(cl, "default", "doomed", "x", nil))
	srv.SetFaultFunc(nil)
	require.Eventually(t, func() bool {
		cmd, _ := riakc.NewFetchValueCommandBuilder().WithBucket(bucket).WithKey("doomed").Build()
		return cl.Execute(cmd) == nil && cmd.(*riakc.FetchValueCommand).Response.IsNotFound
	}, 5*time.Second, 20*time.Millisecond)
}

func TestMalformedVClockIsRefused(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	err := store(cl, "default", "k", "x", []byte("not a vclock"))
	var re riakc.RiakError
	require.True(t, errors.As(unwrapClient(err), &re), "%v", err)
	require.Contains(t, re.Errmsg, "bad vclock")
}

func deleteCmd(t *testing.T, key string, vclock []byte) riakc.Command {
	t.Helper()
	cmd, err := riakc.NewDeleteValueCommandBuilder().WithBucket(bucket).WithKey(key).WithVClock(vclock).Build()
	require.NoError(t, err)
	return cmd
}
