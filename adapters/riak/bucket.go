package riak

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
)

// ErrDefaultBucketType is what CheckBucket (and so NewSiblings) reports for
// a bucket of Riak's "default" bucket type, which has no dotted version
// vectors, so siblings pile up on a contended key (README.md, "Riak's
// default bucket type"). Use a bucket type of your own, or set
// Options.AllowDefaultBucketType. It wraps crdt.ErrMisconfiguredStore.
var ErrDefaultBucketType = fmt.Errorf("%w: Riak's default bucket type has no dotted version vectors (dvv_enabled=false)", crdt.ErrMisconfiguredStore)

// bucketRequest runs one bucket-properties request (built by build from the
// validated bucket), retried like a read.
func bucketRequest(ctx context.Context, cl *riakc.Cluster, bucketType, bucket string, write bool, build func(settings) (riakc.Command, error)) (riakc.Command, settings, error) {
	st, err := Options{BucketType: bucketType, Bucket: bucket}.settings()
	if err != nil {
		return nil, st, err
	}
	if cl == nil {
		return nil, st, fmt.Errorf("%w: nil cluster", crdt.ErrInvalidConfig)
	}
	cmd, err := execute(ctx, cl, st, request{op: "bucket props", write: write, build: func() (riakc.Command, error) { return build(st) }})
	return cmd, st, err
}

// ConfigureBucket sets the two bucket properties counterkit needs,
// allow_mult=true and last_write_wins=false, and no other. bucketType ""
// means "default". It cannot turn on dotted version vectors (see
// ErrDefaultBucketType): in production create a bucket type once per
// cluster instead (README.md, "Bucket type and properties"), which needs no
// ConfigureBucket. Invalid names and a nil cluster are refused as by
// CheckBucket; other errors are as Put's.
func ConfigureBucket(ctx context.Context, cl *riakc.Cluster, bucketType, bucket string) error {
	_, _, err := bucketRequest(ctx, cl, bucketType, bucket, true, func(st settings) (riakc.Command, error) {
		return riakc.NewStoreBucketPropsCommandBuilder().WithBucketType(st.bucketType).WithBucket(st.bucket).
			WithAllowMult(true).WithLastWriteWins(false).Build()
	})
	return err
}

// CheckBucket reads the bucket's effective properties and returns an error
// wrapping crdt.ErrMisconfiguredStore if counterkit cannot keep its
// guarantees there: allow_mult=false or last_write_wins=true (concurrent
// writes dropped), a datatype (not a KV bucket), consistent=true (not
// supported), or a quorum (r, pr, w, pw, dw, rw) set to a number above
// n_val (Riak refuses every request it applies to). Otherwise, for bucketType "" or "default", the error wraps
// ErrDefaultBucketType. dvv_enabled is not among the properties Riak
// returns, so a type created with dvv_enabled=false cannot be detected: do
// not create one. Invalid names wrap crdt.ErrInvalidIdentifier, a nil
// cluster crdt.ErrInvalidConfig, and other failures crdt.ErrUnavailable.
func CheckBucket(ctx context.Context, cl *riakc.Cluster, bucketType, bucket string) error {
	cmd, st, err := bucketRequest(ctx, cl, bucketType, bucket, false, func(st settings) (riakc.Command, error) {
		return riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(st.bucketType).WithBucket(st.bucket).Build()
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
	for _, q := range []struct {
		name string
		v    uint32
	}{{"r", p.R}, {"pr", p.Pr}, {"w", p.W}, {"pw", p.Pw}, {"dw", p.Dw}, {"rw", p.Rw}} {
		// A number of vnodes, not one of the symbolic quorums (one,
		// quorum, all, default: the largest uint32 values), above n_val.
		if q.v < math.MaxUint32-4 && q.v > p.NVal {
			problems = append(problems, fmt.Sprintf("%s=%d above n_val=%d (Riak refuses every such request: n_val_violation)", q.name, q.v, p.NVal))
		}
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

// dialTimeout bounds NewCluster's check that some node accepts connections
// when it has no request timeout.
const dialTimeout = 5 * time.Second

// NewCluster builds and starts a riak-go-client cluster for the given
// protocol-buffers addresses (host:port) with driver-level retries off
// (ExecutionAttempts 1) and requestTimeout as the per-request read timeout
// and the timeout of each connection attempt (0: the driver's 5s and 3s),
// so that an address that does not answer (a firewalled or stopped host)
// costs no more than requestTimeout. Stop it when done. It first connects
// to the addresses in turn (up to requestTimeout each, 5s with 0, not past
// ctx) and sends a ping, and fails with an error wrapping
// crdt.ErrUnavailable (and ctx's error, if that was the cause) when no
// node answers (README.md, "Usage", says why). No address, an empty one or
// a negative requestTimeout wraps crdt.ErrInvalidConfig.
func NewCluster(ctx context.Context, requestTimeout time.Duration, addrs ...string) (*riakc.Cluster, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no Riak address", crdt.ErrInvalidConfig)
	}
	if requestTimeout < 0 {
		return nil, fmt.Errorf("%w: request timeout %v is negative", crdt.ErrInvalidConfig, requestTimeout)
	}
	if i := slices.Index(addrs, ""); i >= 0 {
		return nil, fmt.Errorf("%w: Riak address %d is empty", crdt.ErrInvalidConfig, i)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", crdt.ErrUnavailable, err)
	}
	nodes := make([]*riakc.Node, 0, len(addrs))
	for _, a := range addrs {
		n, err := riakc.NewNode(&riakc.NodeOptions{RemoteAddress: a, RequestTimeout: requestTimeout, ConnectTimeout: max(requestTimeout, 0)})
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
	d := net.Dialer{Timeout: cmp.Or(max(requestTimeout, 0), dialTimeout)}
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", a)
		if err == nil {
			_ = c.Close()
			dialErrs = nil
			break
		}
		dialErrs = append(dialErrs, err)
		if cerr := ctxEnded(ctx); cerr != nil {
			dialErrs = append(dialErrs, cerr)
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

// ctxEnded returns ctx's error, or context.DeadlineExceeded once its
// deadline has passed: a dial cut short by the deadline can return its own
// timeout before ctx reports that it ended.
func ctxEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
