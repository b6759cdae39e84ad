package riaktest_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	rpb "github.com/basho/riak-go-client/rpb/riak"
	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

const bucket = "b"

// dvvType is a bucket type created by startDVV: allow_mult=true and, like
// every type created with `riak admin bucket-type create`, dotted version
// vectors. Riak's "default" type has neither.
const dvvType = "dvv"

// startDVV starts a FakeServer with dvvType created.
func startDVV(t *testing.T, opts ...riaktest.Options) *riaktest.FakeServer {
	t.Helper()
	srv := riaktest.Start(t, opts...)
	require.NoError(t, srv.CreateBucketType(dvvType, riaktest.BucketTypeProps{AllowMult: true}))
	return srv
}

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
	srv := startDVV(t)
	cl := client(t, srv)

	require.NoError(t, store(cl, dvvType, "k", "a", nil))
	first := fetch(t, cl, dvvType, "k")
	// Two writers both start from the same context: concurrent puts.
	require.NoError(t, store(cl, dvvType, "k", "b", first.VClock))
	require.NoError(t, store(cl, dvvType, "k", "c", first.VClock))
	r := fetch(t, cl, dvvType, "k")
	require.ElementsMatch(t, []string{"b", "c"}, values(r))
	// A put without any vclock is concurrent with everything.
	require.NoError(t, store(cl, dvvType, "k", "d", nil))
	r = fetch(t, cl, dvvType, "k")
	require.ElementsMatch(t, []string{"b", "c", "d"}, values(r))
	n, _ := srv.Siblings(dvvType, bucket, "k")
	require.Equal(t, 3, n)

	// Writing with the latest vclock replaces every sibling it covers.
	require.NoError(t, store(cl, dvvType, "k", "merged", r.VClock))
	r2 := fetch(t, cl, dvvType, "k")
	require.Equal(t, []string{"merged"}, values(r2))

	var before, after riaktest.VClock
	require.NoError(t, before.UnmarshalBinary(r.VClock))
	require.NoError(t, after.UnmarshalBinary(r2.VClock))
	require.True(t, after.Descends(before))
	require.False(t, before.Descends(after))
}

func TestStaleWriteAfterCollapseMakesSibling(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "a", nil))
	old := fetch(t, cl, dvvType, "k").VClock
	require.NoError(t, store(cl, dvvType, "k", "b", old))
	// A writer still holding the old vclock: its write is concurrent with b
	// but supersedes a (which both b and it have seen).
	require.NoError(t, store(cl, dvvType, "k", "c", old))
	require.ElementsMatch(t, []string{"b", "c"}, values(fetch(t, cl, dvvType, "k")))
}

// TestDefaultTypeHasNoDVV: in Riak's "default" bucket type
// (dvv_enabled=false) a put whose vclock does not descend the stored object
// keeps every stored sibling, even those its writer read and merged; in a
// created type (dvv_enabled=true) it drops exactly the siblings its vclock
// covers. In both, a put whose vclock descends everything collapses them.
func TestDefaultTypeHasNoDVV(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want []string // after the contended write
	}{
		{"default", []string{"a", "b", "y", "x"}},
		{dvvType, []string{"y", "x"}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			srv := startDVV(t)
			cl := client(t, srv)
			setProps(t, cl, "default", true, false)
			require.NoError(t, store(cl, tc.typ, "k", "a", nil))
			require.NoError(t, store(cl, tc.typ, "k", "b", nil))
			read := fetch(t, cl, tc.typ, "k")
			require.ElementsMatch(t, []string{"a", "b"}, values(read))
			// Another writer lands in between; then x, which read and
			// merged a and b, writes with the vclock of that read.
			require.NoError(t, store(cl, tc.typ, "k", "y", nil))
			require.NoError(t, store(cl, tc.typ, "k", "x", read.VClock))
			r := fetch(t, cl, tc.typ, "k")
			require.ElementsMatch(t, tc.want, values(r))
			n, _ := srv.Siblings(tc.typ, bucket, "k")
			require.Equal(t, len(tc.want), n)

			// A quiet write with the latest vclock collapses everything.
			require.NoError(t, store(cl, tc.typ, "k", "merged", r.VClock))
			require.Equal(t, []string{"merged"}, values(fetch(t, cl, tc.typ, "k")))
		})
	}
}

// TestMaxSiblings: a write that would leave more than max_siblings siblings
// is refused with Riak's error and applies nothing; a write whose vclock
// covers the siblings still lands.
func TestMaxSiblings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  riaktest.Options
		limit int
	}{
		{"default limit", riaktest.Options{}, riaktest.DefaultMaxSiblings},
		{"limit 3", riaktest.Options{MaxSiblings: 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startDVV(t, tc.opts)
			cl := client(t, srv)
			for i := 0; i < tc.limit; i++ {
				require.NoError(t, store(cl, dvvType, "k", strconv.Itoa(i), nil))
			}
			err := store(cl, dvvType, "k", "one too many", nil)
			var re riakc.RiakError
			require.True(t, errors.As(unwrapClient(err), &re), "%v", err)
			require.Equal(t, fmt.Sprintf("{too_many_siblings,%d}", tc.limit+1), re.Errmsg)
			r := fetch(t, cl, dvvType, "k")
			require.Len(t, r.Values, tc.limit, "the refused write applied nothing")
			require.NotContains(t, values(r), "one too many")

			// A delete that would add a tombstone sibling is refused too.
			stale, err := riakc.NewDeleteValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).
				WithKey("k").WithVClock(unrelatedVClock(t)).Build()
			require.NoError(t, err)
			require.Error(t, cl.Execute(stale))
			require.Len(t, fetch(t, cl, dvvType, "k").Values, tc.limit)

			require.NoError(t, store(cl, dvvType, "k", "merged", r.VClock))
			require.Equal(t, []string{"merged"}, values(fetch(t, cl, dvvType, "k")))
		})
	}

	t.Run("no limit", func(t *testing.T) {
		srv := startDVV(t, riaktest.Options{MaxSiblings: -1})
		cl := client(t, srv)
		for i := 0; i <= riaktest.DefaultMaxSiblings; i++ {
			require.NoError(t, store(cl, dvvType, "k", strconv.Itoa(i), nil))
		}
		n, _ := srv.Siblings(dvvType, bucket, "k")
		require.Equal(t, riaktest.DefaultMaxSiblings+1, n)
	})
}

// unrelatedVClock returns a vclock that covers no write the server made.
func unrelatedVClock(t *testing.T) []byte {
	t.Helper()
	b, err := riaktest.VClock{"elsewhere": 1}.MarshalBinary()
	require.NoError(t, err)
	return b
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
	// Riak 3.2's defaults (riak_core_bucket_type), in every type: the
	// quorums as riak_pb encodes them (quorum is 2^32-3), empty commit
	// hooks that are present nonetheless.
	const quorum = 1<<32 - 3
	for _, typ := range []string{"default", "ledgers"} {
		p := get(typ)
		require.Equal(t, [6]uint32{0, quorum, quorum, 0, quorum, quorum}, [6]uint32{p.Pr, p.R, p.W, p.Pw, p.Dw, p.Rw}, typ)
		require.True(t, p.NotFoundOk, typ)
		require.False(t, p.BasicQuorum, typ)
		require.Equal(t, [4]uint32{86400, 20, 50, 50}, [4]uint32{p.OldVClock, p.YoungVClock, p.BigVClock, p.SmallVClock}, typ)
		require.True(t, p.HasPrecommit && p.HasPostcommit, typ)
		require.Empty(t, p.PreCommit, typ)
		require.Equal(t, &riakc.ModFun{Module: "riak_core_util", Function: "chash_std_keyfun"}, p.ChashKeyFun, typ)
	}

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
	srv := startDVV(t, riaktest.Options{DeleteMode: riaktest.ReapImmediately})
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "a", nil))
	seen := fetch(t, cl, dvvType, "k").VClock
	// A concurrent writer the deleter has not seen.
	require.NoError(t, store(cl, dvvType, "k", "late", nil))
	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", seen)))
	r := fetch(t, cl, dvvType, "k")
	require.Equal(t, []string{"late"}, values(r), "the unseen write survives the delete")
	require.Len(t, r.Values, 2, "plus the tombstone sibling")

	// Deleting with the latest vclock removes the key.
	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", r.VClock)))
	require.True(t, fetch(t, cl, dvvType, "k").IsNotFound)
	n, _ := srv.Siblings(dvvType, bucket, "k")
	require.Zero(t, n, "reaped at once")
}

// TestTombstoneKeptForDeleteMode: an object left with only tombstones is
// kept for delete_mode. A plain fetch says "not found" (no vclock), so a
// put after it becomes a sibling of the tombstone; a fetch with
// deletedvclock returns the tombstone's vclock, and a put with it replaces
// the tombstone. After delete_mode the object is reaped. The node's clock
// stands still until the test moves it, so no pause of a loaded machine
// reaps a tombstone early.
func TestTombstoneKeptForDeleteMode(t *testing.T) {
	const deleteMode = 300 * time.Millisecond
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	srv := startDVV(t, riaktest.Options{DeleteMode: deleteMode, Clock: c.Now})
	cl := client(t, srv)
	fetchDeleted := func(key string) *riakc.FetchValueResponse {
		cmd, err := riakc.NewFetchValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).
			WithKey(key).WithReturnDeletedVClock(true).Build()
		require.NoError(t, err)
		require.NoError(t, cl.Execute(cmd))
		return cmd.(*riakc.FetchValueCommand).Response
	}
	deleteAll := func(key string) {
		require.NoError(t, store(cl, dvvType, key, "v", nil))
		require.NoError(t, cl.Execute(deleteCmd(t, dvvType, key, fetch(t, cl, dvvType, key).VClock)))
	}

	deleteAll("plain")
	r := fetch(t, cl, dvvType, "plain")
	require.True(t, r.IsNotFound)
	require.Empty(t, r.VClock)
	require.NoError(t, store(cl, dvvType, "plain", "new", r.VClock))
	n, _ := srv.Siblings(dvvType, bucket, "plain")
	require.Equal(t, 2, n, "a put without the tombstone's vclock is its sibling")

	deleteAll("deleted-vclock")
	r = fetchDeleted("deleted-vclock")
	require.False(t, r.IsNotFound)
	require.NotEmpty(t, r.VClock)
	require.Len(t, r.Values, 1)
	require.True(t, r.Values[0].IsTombstone)
	require.NoError(t, store(cl, dvvType, "deleted-vclock", "new", r.VClock))
	n, _ = srv.Siblings(dvvType, bucket, "deleted-vclock")
	require.Equal(t, 1, n, "a put with the tombstone's vclock replaces it")
	require.Equal(t, []string{"new"}, values(fetch(t, cl, dvvType, "deleted-vclock")))

	deleteAll("reaped")
	n, _ = srv.Siblings(dvvType, bucket, "reaped")
	require.Equal(t, 1, n, "the tombstone is kept")
	c.Set(c.Now().Add(deleteMode - 1))
	n, _ = srv.Siblings(dvvType, bucket, "reaped")
	require.Equal(t, 1, n, "the tombstone is kept until delete_mode is over")
	c.Set(c.Now().Add(1))
	n, _ = srv.Siblings(dvvType, bucket, "reaped")
	require.Zero(t, n, "and reaped after delete_mode")
	require.True(t, fetchDeleted("reaped").IsNotFound)
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

// TestMalformedVClockIsRefused: a vclock Riak cannot decode crashes its
// request handler (riak_object:decode_vclock), which answers "Error
// processing incoming message: ..." with the crash, stores nothing and
// closes the connection; the client's next request on another connection
// goes through.
func TestMalformedVClockIsRefused(t *testing.T) {
	srv := riaktest.Start(t)
	cl := client(t, srv)
	err := store(cl, "default", "k", "x", []byte("not a vclock"))
	var re riakc.RiakError
	require.True(t, errors.As(unwrapClient(err), &re), "%v", err)
	require.True(t, strings.HasPrefix(re.Errmsg, "Error processing incoming message: error:"), re.Errmsg)
	require.Contains(t, re.Errmsg, "{riak_object,decode_vclock,")
	require.Empty(t, srv.Values("default", bucket, "k"))

	// On the wire: the error frame, then the end of the connection.
	c, err := net.Dial("tcp", srv.Addr())
	require.NoError(t, err)
	defer c.Close()
	body, err := proto.Marshal(&rpbkv.RpbDelReq{Bucket: []byte(bucket), Key: []byte("k"), Vclock: []byte("not a vclock")})
	require.NoError(t, err)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)+1))
	_, err = c.Write(append(append(frame, 13), body...)) // RpbDelReq
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := io.ReadAll(c)
	require.NoError(t, err, "the connection is closed after the answer")
	require.Greater(t, len(resp), 5)
	require.Equal(t, byte(0), resp[4], "RpbErrorResp")
	var e rpb.RpbErrorResp
	require.NoError(t, proto.Unmarshal(resp[5:], &e))
	require.Contains(t, string(e.Errmsg), "decode_vclock")

	require.Eventually(t, func() bool { return store(cl, "default", "k", "x", nil) == nil }, 5*time.Second, 20*time.Millisecond)
}

func deleteCmd(t *testing.T, typ, key string, vclock []byte) riakc.Command {
	t.Helper()
	cmd, err := riakc.NewDeleteValueCommandBuilder().WithBucketType(typ).WithBucket(bucket).WithKey(key).WithVClock(vclock).Build()
	require.NoError(t, err)
	return cmd
}

// TestEmptyKeyIsRefused: riak-go-client's WithKey("") sends the key field
// present but empty, which Riak 3.2 refuses ("Key cannot be zero-length",
// riak_kv_pb_object) and stores nothing; only a put without the field
// gets a key made up by the server.
func TestEmptyKeyIsRefused(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	err := store(cl, dvvType, "", "x", nil)
	var re riakc.RiakError
	require.True(t, errors.As(unwrapClient(err), &re), "%v", err)
	require.Equal(t, "Key cannot be zero-length", re.Errmsg)
	n, _ := srv.Siblings(dvvType, bucket, "")
	require.Zero(t, n)

	cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).
		WithContent(&riakc.Object{Value: []byte("x"), ContentType: "text/plain"}).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	key := cmd.(*riakc.StoreValueCommand).Response.GeneratedKey
	require.NotEmpty(t, key)
	require.Equal(t, []string{"x"}, values(fetch(t, cl, dvvType, key)))
}
