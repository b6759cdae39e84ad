package riak

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
)

// ErrDefaultBucketType is what CheckBucket (and so NewSiblings) reports for
// a bucket of Riak's "default" bucket type. It wraps
// crdt.ErrMisconfiguredStore.
//
// The default type runs with dvv_enabled=false (types created with `riak
// admin bucket-type create` have it on). Data stays correct there, as long
// as allow_mult=true: no write is lost and merges are idempotent. But
// without dotted version vectors Riak drops the siblings a write has read
// only when the write's vclock descends everything stored; a write that
// raced with another one keeps them all next to its own value. On a
// contended key siblings then pile up until a write lands with nothing in
// between, and past max_siblings (100 by default) Riak refuses every write
// that would add one. Use a custom bucket type (README.md), or set
// Options.AllowDefaultBucketType to accept this.
var ErrDefaultBucketType = fmt.Errorf("%w: Riak's default bucket type has no dotted version vectors (dvv_enabled=false)", crdt.ErrMisconfiguredStore)

// bucketSettings is used for bucket-level requests, which are retried like
// reads.
func bucketSettings(bucketType, bucket string) (settings, error) {
	return Options{BucketType: bucketType, Bucket: bucket}.settings()
}

// ConfigureBucket sets the bucket properties counterkit needs:
// allow_mult=true (concurrent writes become siblings instead of one
// overwriting the other) and last_write_wins=false (vclocks, not
// timestamps, decide what a write supersedes). It only changes those two
// properties. bucketType "" means "default".
//
// It cannot turn on dotted version vectors (dvv_enabled is not among the
// properties the protocol-buffers API sets; see ErrDefaultBucketType). In
// production create a bucket type once per cluster instead, which needs no
// ConfigureBucket:
//
//	riak admin bucket-type create counterkit '{"props":{"allow_mult":true}}'
//	riak admin bucket-type activate counterkit
//
// (`riak-admin` instead of `riak admin` on Riak 2.x). New types have
// allow_mult=true, last_write_wins=false and dvv_enabled=true by default.
func ConfigureBucket(ctx context.Context, cl *riakc.Cluster, bucketType, bucket string) error {
	st, err := bucketSettings(bucketType, bucket)
	if err != nil {
		return err
	}
	_, err = execute(ctx, cl, st, request{
		op: "bucket props", write: true,
		build: func() (riakc.Command, error) {
			return riakc.NewStoreBucketPropsCommandBuilder().
				WithBucketType(st.bucketType).WithBucket(st.bucket).
				WithAllowMult(true).WithLastWriteWins(false).Build()
		},
	})
	return err
}

// CheckBucket reads the bucket's effective properties and returns an error
// wrapping crdt.ErrMisconfiguredStore if counterkit cannot keep its
// guarantees there:
//
//   - allow_mult=false: Riak keeps one of two concurrent writes and drops
//     the other, so a credit can silently disappear;
//   - last_write_wins=true: the same, decided by timestamps (Riak accepts
//     it only where dvv_enabled=false: the default type, or a type
//     created without dotted version vectors);
//   - datatype set: the bucket type holds Riak data types, not KV objects;
//   - consistent=true: strongly consistent buckets never keep siblings and
//     refuse a write whose vclock is not the latest, which this adapter
//     does not handle.
//
// If none of these applies but bucketType is "" or "default", the error
// wraps ErrDefaultBucketType (which wraps crdt.ErrMisconfiguredStore): the
// bucket is safe but has no dotted version vectors, so siblings are not
// collapsed under contention. dvv_enabled is not among the properties Riak
// returns, so a custom type created with dvv_enabled=false cannot be
// detected: do not create one.
//
// Other failures wrap crdt.ErrUnavailable.
func CheckBucket(ctx context.Context, cl *riakc.Cluster, bucketType, bucket string) error {
	st, err := bucketSettings(bucketType, bucket)
	if err != nil {
		return err
	}
	cmd, err := execute(ctx, cl, st, request{
		op: "bucket props",
		build: func() (riakc.Command, error) {
			return riakc.NewFetchBucketPropsCommandBuilder().
				WithBucketType(st.bucketType).WithBucket(st.bucket).Build()
		},
	})
	if err != nil {
		return err
	}
	p := cmd.(*riakc.FetchBucketPropsCommand).Response
	if p == nil {
		return &Error{Op: "bucket props", Attempts: 1, Kind: crdt.ErrUnavailable, Err: fmt.Errorf("empty response")}
	}
	var problems []string
	if !p.AllowMult {
		problems = append(problems, "allow_mult=false (concurrent writes would be silently dropped)")
	}
	if p.LastWriteWins {
		problems = append(problems, "last_write_wins=true (concurrent writes would be silently dropped)")
	}
	if p.DataType != "" {
		problems = append(problems, fmt.Sprintf("datatype=%q (a Riak data-type bucket type, not a KV one)", p.DataType))
	}
	if p.Consistent {
		problems = append(problems, "consistent=true (strongly consistent buckets are not supported)")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: bucket %s/%s has %s; run riak.ConfigureBucket or fix the bucket type",
			crdt.ErrMisconfiguredStore, st.bucketType, st.bucket, strings.Join(problems, ", "))
	}
	if st.bucketType == "default" {
		return fmt.Errorf("%w: bucket %s/%s: siblings are collapsed only by a write that has seen all of them, and a contended key can reach max_siblings; "+
			"use a bucket type created with `riak admin bucket-type create` (README.md) or set Options.AllowDefaultBucketType",
			ErrDefaultBucketType, st.bucketType, st.bucket)
	}
	return nil
}

// dialTimeout bounds NewCluster's check that some node accepts connections.
const dialTimeout = 5 * time.Second

// NewCluster builds and starts a riak-go-client cluster for the given
// protocol-buffers addresses (host:port) with the settings this package
// expects: driver-level retries off (ExecutionAttempts 1; Siblings retries
// itself and must see every failure to tell ambiguous from refused), and
// requestTimeout as the per-request read timeout (0 means the driver's
// default, 5s). Stop it when done.
//
// Before returning, NewCluster connects to the addresses in turn (up to 5s
// each, and not past ctx) and, once one accepts, sends a ping through the
// cluster. If no node accepts, the ping fails or ctx ends first, it stops
// the cluster and returns an error wrapping crdt.ErrUnavailable (and ctx's
// error, if that was the cause); call it again later. This works around
// riak-go-client v1.7.0's node manager: until some command has been run, a
// command that no node can take (all unreachable or health-checking) is not
// refused but retried in a busy loop, on a goroutine that keeps spinning
// even after the cluster is stopped, until a node answers. So the first
// command on a cluster started while Riak is down never completes: a
// Siblings call returns when its context ends (never, without a deadline),
// and the driver's goroutine spins on. Once a node has executed a command,
// such a command fails at once (and Siblings retries it with backoff). A
// cluster you build yourself needs the same care: have a node execute one
// command (a ping) before using it.
func NewCluster(ctx context.Context, requestTimeout time.Duration, addrs ...string) (*riakc.Cluster, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no Riak address", crdt.ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", crdt.ErrUnavailable, err)
	}
	nodes := make([]*riakc.Node, 0, len(addrs))
	for _, a := range addrs {
		n, err := riakc.NewNode(&riakc.NodeOptions{RemoteAddress: a, RequestTimeout: requestTimeout})
		if err != nil {
			return nil, fmt.Errorf("%w: node %q: %v", crdt.ErrInvalidConfig, a, err)
		}
		nodes = append(nodes, n)
	}
	cl, err := riakc.NewCluster(&riakc.ClusterOptions{Nodes: nodes, ExecutionAttempts: 1})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", crdt.ErrInvalidConfig, err)
	}
	// Check that some node accepts connections before the cluster runs its
	// first command, which would otherwise spin until one does.
	var dialErrs []error
	d := net.Dialer{Timeout: dialTimeout}
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", a)
		if err == nil {
			_ = c.Close()
			dialErrs = nil
			break
		}
		dialErrs = append(dialErrs, err)
		if ctx.Err() != nil {
			dialErrs = append(dialErrs, ctx.Err())
			break
		}
	}
	if dialErrs != nil {
		return nil, fmt.Errorf("%w: no Riak node reachable: %w", crdt.ErrUnavailable, errors.Join(dialErrs...))
	}
	if err := cl.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting cluster: %v", crdt.ErrUnavailable, err)
	}
	if err := run(ctx, cl, &riakc.PingCommand{}); err != nil {
		_ = cl.Stop()
		return nil, fmt.Errorf("%w: ping: %w", crdt.ErrUnavailable, err)
	}
	return cl, nil
}
