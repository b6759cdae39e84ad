package riak

import (
	"context"
	"fmt"
	"strings"
	"time"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
)

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
// For a bucket type other than "default", prefer setting the properties on
// the type itself (riak-admin bucket-type create NAME
// '{"props":{"allow_mult":true,"last_write_wins":false}}'); Riak 2.x
// creates new types with these values already.
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
//   - last_write_wins=true: the same, decided by timestamps;
//   - datatype set: the bucket type holds Riak data types, not KV objects;
//   - consistent=true: strongly consistent buckets never keep siblings and
//     refuse a write whose vclock is not the latest, which this adapter
//     does not handle.
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
	return nil
}

// NewCluster builds and starts a riak-go-client cluster for the given
// protocol-buffers addresses (host:port) with the settings this package
// expects: driver-level retries off (ExecutionAttempts 1; Store retries
// itself and must see every failure to tell ambiguous from refused), and
// requestTimeout as the per-request read timeout (0 means the driver's
// default, 5s). Stop it when done.
func NewCluster(requestTimeout time.Duration, addrs ...string) (*riakc.Cluster, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no Riak address", crdt.ErrInvalidConfig)
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
	if err := cl.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting cluster: %v", crdt.ErrUnavailable, err)
	}
	return cl, nil
}
