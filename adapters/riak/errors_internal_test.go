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
		{"overload", wrap(riakErr("overload")), notApplied, nil},
		{"insufficient vnodes", wrap(riakErr("{insufficient_vnodes,0,need,2}")), notApplied, nil},
		{"read timeout", wrap(timeout), maybeApplied, nil},
		{"EOF after send", wrap(io.EOF), maybeApplied, nil},
		{"reset after send", wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), maybeApplied, nil},
		{"riak timeout", wrap(riakErr("timeout")), maybeApplied, nil},
		{"w unsatisfied", wrap(riakErr("{w_val_unsatisfied,2,1}")), maybeApplied, nil},
		{"unknown riak error", wrap(riakErr("something new")), maybeApplied, nil},
		{"context", context.DeadlineExceeded, maybeApplied, nil},
		{"bad bucket type", wrap(riakErr(`Invalid bucket type: "x"`)), fatal, crdt.ErrMisconfiguredStore},
		{"bad vclock", wrap(riakErr("bad vclock: ...")), fatal, crdt.ErrCorruptEncoding},
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
