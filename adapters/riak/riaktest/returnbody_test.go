package riaktest_test

// What a put returns, as riak_kv_pb_object answers it: with return_body
// or return_head, the stored object's siblings and vclock, and with
// return_head (whether or not return_body is set too) every value blank:
//
//	Options = case ReturnBody of true -> [returnbody];
//	              _ -> case ReturnHead of true -> [returnbody]; _ -> [] end end,
//	...
//	{ok, Obj} -> PbContents = case ReturnHead of
//	                 true -> BlankContents = [{MD, <<>>} || {MD, _} <- Contents], ...

import (
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"
)

func TestPutReturnBodyAndHead(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "a", nil))
	for _, c := range []struct {
		name       string
		body, head bool
		want       []string // the values returned, nil for no content
	}{
		{"neither", false, false, nil},
		{"return_body", true, false, []string{"a", "b"}},
		{"return_head", false, true, []string{"", ""}},
		{"both", true, true, []string{"", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := "k-" + c.name
			require.NoError(t, store(cl, dvvType, key, "a", nil))
			cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey(key).
				WithReturnBody(c.body).WithReturnHead(c.head).
				WithContent(&riakc.Object{Value: []byte("b"), ContentType: "text/plain"}).Build()
			require.NoError(t, err)
			require.NoError(t, cl.Execute(cmd))
			r := cmd.(*riakc.StoreValueCommand).Response
			var got []string
			for _, o := range r.Values {
				got = append(got, string(o.Value))
				require.Equal(t, "text/plain", o.ContentType, "metadata is returned either way")
			}
			if c.want == nil {
				require.Empty(t, got)
				require.Empty(t, r.VClock)
				return
			}
			require.ElementsMatch(t, c.want, got)
			require.NotEmpty(t, r.VClock)
			require.ElementsMatch(t, [][]byte{[]byte("a"), []byte("b")}, srv.Values(dvvType, bucket, key), "values stored either way")
		})
	}
}
