package riak_test

// Review tests of how the adapter reports a write that landed (see the
// review report).

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
)

// TestReviewUserClusterDriverResendHidesLandedWrite: NewSiblings takes any
// started *riakc.Cluster. One built with riak-go-client's own defaults
// (ClusterOptions.ExecutionAttempts left 0, which NewCluster turns into
// defaultExecutionAttempts = 3) resends a StoreValueCommand after any
// error (cluster.go, Cluster.execute: "re-try due to error"), including a
// read timeout after the request was sent. The adapter then sees only the
// last attempt's error: here "overload", which classify maps to
// notApplied, so Put reports crdt.ErrUnavailable although the first send
// landed. The README asks users to set ExecutionAttempts 1, but nothing
// checks it (the field is unexported, yet readable by reflection, and a
// driver-side retry is observable only that way).
func TestReviewUserClusterDriverResendHidesLandedWrite(t *testing.T) {
	srv := riaktest.Start(t)
	require.NoError(t, srv.CreateBucketType(fakeType, riaktest.BucketTypeProps{AllowMult: true}))
	node, err := riakc.NewNode(&riakc.NodeOptions{RemoteAddress: srv.Addr(), RequestTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	cl, err := riakc.NewCluster(&riakc.ClusterOptions{Nodes: []*riakc.Node{node}}) // the driver's defaults
	require.NoError(t, err)
	require.NoError(t, cl.Start())
	t.Cleanup(func() { stopCluster(cl) })
	require.NoError(t, cl.Execute(&riakc.PingCommand{}), "one command first, as README.md asks")

	s, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket, RetryCount: riak.NoRetries})
	if err != nil {
		// Refusing such a cluster would be a fix too.
		require.ErrorIs(t, err, crdt.ErrInvalidConfig)
		return
	}
	srv.ResetRequests()
	srv.InjectFault(riaktest.OpPut, riaktest.DropResponse, 1) // lands; the client's read times out
	srv.InjectFault(riaktest.OpPut, riaktest.Refuse, 2)       // the driver's resends are refused
	key := uniqueKey("driver-resend")
	err = s.Put(ctx, key, "a", []byte("v"), nil)
	require.Error(t, err)
	// The premise: the driver sent the put three times, and the first landed.
	require.Equal(t, int64(3), srv.Requests(riaktest.OpPut), "the driver resent the put by itself")
	require.Len(t, srv.Values(fakeType, testBucket, key), 1, "the first send landed")
	require.NotErrorIs(t, err, crdt.ErrUnavailable, "a landed write is reported as known not to have landed")
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
}

// answerAfterApplyProxy relays Riak protocol-buffers requests to upstream
// and, for the first put, lets the server apply it and answers the client
// with RpbErrorResp msg instead of the server's answer.
func answerAfterApplyProxy(t *testing.T, upstream, msg string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	var once sync.Once
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			track(client)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer client.Close()
				server, err := net.Dial("tcp", upstream)
				if err != nil {
					return
				}
				track(server)
				defer server.Close()
				for {
					req, err := readPBFrame(client)
					if err != nil {
						return
					}
					op, _ := classifyPB(req)
					if _, err := server.Write(req); err != nil {
						return
					}
					resp, err := readPBFrame(server)
					if err != nil {
						return
					}
					replace := false
					if op == riaktest.OpPut {
						once.Do(func() { replace = true })
					}
					if replace {
						err = writePBError(client, msg)
					} else {
						_, err = client.Write(resp)
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestReviewRefusalAfterCoordinatorRetry: classify takes "overload",
// "all_nodes_down" and "insufficient_vnodes" (notApplied) and
// "too_many_siblings"/"too_large" (stale) to mean that no vnode applied
// the put, and Put reports crdt.ErrUnavailable. That holds for one put
// FSM, but Riak (2.1 and later, riak_kv_put_fsm.erl: make_ack_options,
// monitor_remote_coordinator) forwards a put whose receiving node is not
// in the preference list, or is loaded, to a coordinator on another node,
// and with retry_put_coordinator_failure (on by default) restarts the put
// from prepare, excluding that node, when the forwarded FSM has not acked
// within put_coordinator_failure_timeout (3 s). The forwarded FSM is not
// cancelled (only the middleman spawning it is killed, and a late ack is
// counted as late_put_fsm_coordinator_ack): it may still coordinate the
// put and apply it, while the restarted pass answers the client first,
// with a refusal from its own coordinating vnode ({fail, Idx, overload},
// {too_many_siblings, N}, ...) or from validate (insufficient_vnodes) or
// coordinate_or_forward (all_nodes_down). The client then gets a refusal
// for a put that landed. The proxy below plays that answer: the server
// applies the put, and the client reads the refusal.
func TestReviewRefusalAfterCoordinatorRetry(t *testing.T) {
	for _, msg := range []string{"overload", "all_nodes_down", "{insufficient_vnodes,2,need,3}", "{too_many_siblings,101}"} {
		t.Run(msg, func(t *testing.T) {
			srv, _ := fakeCluster(t)
			cl := newCluster(t, answerAfterApplyProxy(t, srv.Addr(), msg))
			s := newStore(t, cl, riak.Options{RetryCount: riak.NoRetries})
			key := uniqueKey("coord-retry")
			err := s.Put(context.Background(), key, "a", []byte("v"), nil)
			require.Error(t, err)
			require.Len(t, srv.Values(fakeType, testBucket, key), 1, "the premise: the put landed")
			require.NotErrorIs(t, err, crdt.ErrUnavailable, "a Riak refusal is not proof that no coordinator applied the put")
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		})
	}
}
