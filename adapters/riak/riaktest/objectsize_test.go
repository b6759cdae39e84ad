package riaktest_test

import (
	"strings"
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// TestObjectSizeCountsMetadata: Riak's max_object_size check is on the
// whole encoded object, every sibling's metadata (user metadata, indexes)
// included (riak_kv_vnode.erl sizes riak_object:to_binary of the object;
// riak_object.erl's encoding writes each sibling's metadata). The double
// counted values and a flat 1 KiB a sibling, and so accepted a put whose
// user metadata carried it past max_object_size. Found by a review of the
// double against Riak's source.
func TestObjectSizeCountsMetadata(t *testing.T) {
	srv := startDVV(t, riaktest.Options{MaxObjectSize: 4096})
	cl := client(t, srv)
	obj := &riakc.Object{
		Value:       []byte("v"),
		ContentType: "application/octet-stream",
		UserMeta:    []*riakc.Pair{{Key: "m", Value: strings.Repeat("x", 16<<10)}},
	}
	cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey("k").
		WithContent(obj).Build()
	require.NoError(t, err)
	err = cl.Execute(cmd)
	require.Error(t, err, "an object of at least 16 KiB encoded, max_object_size 4096: Riak answers {too_large,N}")
	require.Contains(t, err.Error(), "too_large")
}
