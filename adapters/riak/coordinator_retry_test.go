package riak_test

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

// TestNewSiblingsRefusesDriverResends: riak-go-client's cluster resends
// a command after any error when ExecutionAttempts is above 1 (its
// default, for 0, is 3: cluster.go, Cluster.execute), also after a read
// timeout on a put that landed. The adapter would see only the last
// attempt's error, which can say nothing landed (a refused connection, a
// node with no free connection), so NewSiblings refuses such a cluster,
// and accepts one with ExecutionAttempts 1 (riak.NewCluster builds that).
func TestNewSiblingsRefusesDriverResends(t *testing.T) {
	srv := riaktest.Start(t)
	require.NoError(t, srv.CreateBucketType(fakeType, riaktest.BucketTypeProps{AllowMult: true}))
	for _, attempts := range []byte{0, 1, 2, 3} {
		node, err := riakc.NewNode(&riakc.NodeOptions{RemoteAddress: srv.Addr(), RequestTimeout: 300 * time.Millisecond})
		require.NoError(t, err)
		cl, err := riakc.NewCluster(&riakc.ClusterOptions{Nodes: []*riakc.Node{node}, ExecutionAttempts: attempts})
		require.NoError(t, err)
		require.NoError(t, cl.Start())
		t.Cleanup(func() { stopCluster(cl) })
		require.NoError(t, cl.Execute(&riakc.PingCommand{}))
		_, err = riak.NewSiblings(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket})
		if attempts == 1 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "ExecutionAttempts %d", attempts)
		}
	}
	cl := newCluster(t, srv.Addr())
	_, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket})
	require.NoError(t, err, "riak.NewCluster's cluster")
}

// answerAfterApplyProxy relays Riak protocol-buffers requests to upstream
// and, for the i-th put with a non-empty msgs[i], lets the server apply
// it and answers the client with RpbErrorResp msgs[i] instead of the
// server's answer.
func answerAfterApplyProxy(t *testing.T, upstream string, msgs ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	puts := 0
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
					msg := ""
					if op == riaktest.OpPut {
						mu.Lock()
						if puts < len(msgs) {
							msg = msgs[puts]
						}
						puts++
						mu.Unlock()
					}
					if msg != "" {
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

// TestRefusalAfterCoordinatorRetryIsAmbiguous: classify took "overload",
// "all_nodes_down" and "insufficient_vnodes" (notApplied) and
// "too_many_siblings"/"too_large" (stale) to mean that no vnode applied
// the put, and Put reported crdt.ErrUnavailable. That holds for one put
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
// applies the put, and the client reads the refusal, which a put now
// reports as crdt.ErrAmbiguousWrite (a read's refusal stays
// crdt.ErrUnavailable).
func TestRefusalAfterCoordinatorRetryIsAmbiguous(t *testing.T) {
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
	t.Run("a corrupt vclock after an attempt in doubt", func(t *testing.T) {
		// The first attempt lands and is answered with a timeout; Riak
		// refuses the second's vclock: the write may have landed.
		srv, _ := fakeCluster(t)
		cl := newCluster(t, answerAfterApplyProxy(t, srv.Addr(), "timeout",
			"Error processing incoming message: error:data_error:[{riak_object,decode_vclock,2,[]}]"))
		s := newStore(t, cl, riak.Options{RetryCount: 1, RetryBackoff: time.Millisecond})
		key := uniqueKey("vclock-after-doubt")
		err := s.Put(context.Background(), key, "a", []byte("v"), nil)
		require.NotEmpty(t, srv.Values(fakeType, testBucket, key), "the premise: the first put landed")
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		require.NotErrorIs(t, err, crdt.ErrCorruptEncoding)
	})
	t.Run("a refused read", func(t *testing.T) {
		srv, cl := fakeCluster(t)
		s := newStore(t, cl, riak.Options{RetryCount: riak.NoRetries})
		srv.InjectFault(riaktest.OpGet, riaktest.Refuse, 1)
		_, _, err := s.Fetch(context.Background(), uniqueKey("refused-read"))
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite)
	})
}
