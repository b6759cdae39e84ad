package riak

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

func TestClassify(t *testing.T) {
	wrap := func(inner error) error {
		return riakc.ClientError{Errmsg: riakc.ErrClusterNoNodesAvailable, InnerError: inner}
	}
	riakErr := func(msg string) error { return riakc.RiakError{Errmsg: msg} }
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		name string
		err  error
		want outcome
		kind error
	}{
		{"no node took the command", wrap(nil), notApplied, nil},
		{"pool exhausted", riakc.ErrConnMgrAllConnectionsInUse, notApplied, nil},
		{"dial refused", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), notApplied, nil},
		{"cannot write", wrap(riakc.ErrCannotWrite), notApplied, nil},
		{"overload", wrap(riakErr("overload")), refused, nil},
		{"insufficient vnodes", wrap(riakErr("{insufficient_vnodes,0,need,2}")), refused, nil},
		{"all nodes down", wrap(riakErr("all_nodes_down")), refused, nil},
		{"n_val violation", wrap(riakErr("{n_val_violation,3}")), fatal, crdt.ErrMisconfiguredStore},
		{"w_val violation", wrap(riakErr("w_val_violation")), fatal, crdt.ErrMisconfiguredStore},
		{"pw unsatisfied is no violation", wrap(riakErr("{pw_val_unsatisfied,2,1}")), maybeApplied, nil},
		{"read timeout", wrap(timeout), maybeApplied, nil},
		{"EOF after send", wrap(io.EOF), maybeApplied, nil},
		{"reset after send", wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), maybeApplied, nil},
		{"riak timeout", wrap(riakErr("timeout")), maybeApplied, nil},
		{"w unsatisfied", wrap(riakErr("{w_val_unsatisfied,2,1}")), maybeApplied, nil},
		{"unknown riak error", wrap(riakErr("something new")), maybeApplied, nil},
		{"context", context.DeadlineExceeded, maybeApplied, nil},
		{"bad bucket type", wrap(riakErr(`Invalid bucket type: "x"`)), fatal, crdt.ErrMisconfiguredStore},

		// The driver nests ClientErrors: peel them all.
		{"nested pool exhausted", wrap(riakc.ErrConnMgrAllConnectionsInUse), notApplied, nil},
		{"doubly nested pool exhausted", wrap(wrap(riakc.ErrConnMgrAllConnectionsInUse)), notApplied, nil},
		{"nested overload", wrap(wrap(riakErr("overload"))), refused, nil},
		{"nested riak timeout", wrap(wrap(riakErr("timeout"))), maybeApplied, nil},
		{"nested short read", wrap(riakc.ClientError{Errmsg: "[Connection] expected to read 4 bytes, only read: 0"}), maybeApplied, nil},

		// Riak's own messages.
		{"too many siblings", wrap(riakErr("{too_many_siblings,101}")), stale, nil},
		{"object too large", wrap(riakErr("{too_large,58720711}")), stale, nil},
		{"no type", wrap(riakErr("Invalid bucket properties: no_type")), fatal, crdt.ErrMisconfiguredStore},
		{"no bucket type for bucket properties", wrap(riakErr("No bucket-type named 'x'")), fatal, crdt.ErrMisconfiguredStore},
		{"refused bucket properties", wrap(riakErr("Invalid bucket properties: [{dvv_enabled,\n                                \"If last_write_wins is true, dvv_enabled must be false\"}]")), fatal, crdt.ErrMisconfiguredStore},
		{"refused bucket properties, ~p over two lines", wrap(riakErr("Invalid bucket properties: [{n_val,not_integer},\n                            {consistent,\"cannot update consistent property\"}]")), fatal, crdt.ErrMisconfiguredStore},
		{"no type crash", wrap(riakErr("Error processing incoming message: error:{badmatch,{error,no_type}}:" +
			"[{riak_kv_pb_object,process,2,[{file,\"src/riak_kv_pb_object.erl\"},{line,210}]}]")), fatal, crdt.ErrMisconfiguredStore},
		{"bad vclock crash", wrap(riakErr("Error processing incoming message: error:data_error:" +
			"[{zlib,call,3,[]},{zlib,inflate,2,[]},{zlib,unzip,1,[]},{riak_object,decode_vclock,2,[{file,\"src/riak_object.erl\"},{line,1125}]}," +
			"{riak_kv_pb_object,process,2,[]},{riak_api_pb_server,process_message,4,[]}]")), fatal, crdt.ErrCorruptEncoding},
		{"other crash quoting the request", wrap(riakErr("Error processing incoming message: error:function_clause:" +
			"[{riak_kv_pb_object,process,[{rpbputreq,<<\"overload\">>,<<\"too_many_siblings\">>}],[]}]")), maybeApplied, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, kind := classify(tc.err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.kind, kind)
		})
	}
}

func TestErrorUnwrapsEverything(t *testing.T) {
	inner := riakc.RiakError{Errmsg: "timeout"}
	err := error(&Error{Op: "store", Key: "k", Attempts: 4, Kind: crdt.ErrAmbiguousWrite,
		Err: riakc.ClientError{Errmsg: "x", InnerError: inner}})
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	var re riakc.RiakError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "timeout", re.Errmsg)
	var ce riakc.ClientError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, `counterkit/riak: store "k" (4 attempts): counterkit: write outcome unknown: ClientError|x|InnerError|RiakError|0|timeout`, err.Error())
	require.False(t, errors.Is(err, crdt.ErrUnavailable))
}
