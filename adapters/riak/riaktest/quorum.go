package riaktest

import (
	"fmt"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
)

// This file reproduces the quorum checks Riak KV 3.2's request FSMs make
// before they ask any vnode: a quorum, expanded against the bucket's
// n_val, may not ask for more vnodes than n_val (README.md, "Quorums").
// On the double's one node every vnode of a key is a primary, so a
// quorum that passes these checks is always met.

// expandQuorum is riak_kv_util:expand_rw_value: the request's quorum req,
// or the bucket's prop when the request has none or "default", as a
// number of vnodes out of n.
func expandQuorum(req *uint32, prop, n uint32) uint32 {
	v := prop
	if given(req) {
		v = *req
	}
	switch v {
	case quorumOne:
		return 1
	case quorumQuorum:
		return n/2 + 1
	case quorumAll:
		return n
	}
	return v
}

// nValViolation is Riak's refusal of quorums above n_val: the FSM's
// {error,{n_val_violation,N}}, printed with ~p by riak_kv_pb_object.
func nValViolation(n uint32) rpcError {
	return rpcError(fmt.Sprintf("{n_val_violation,%d}", n))
}

// readQuorumError is riak_kv_get_fsm's validate_quorum for a read with
// quorums r and pr (nil: the bucket's) in a bucket with properties p.
func readQuorumError(p *rpb.RpbBucketProps, r, pr *uint32) rpcError {
	return checkQuorums(p.GetNVal(), expandQuorum(r, p.GetR(), p.GetNVal()), expandQuorum(pr, p.GetPr(), p.GetNVal()))
}

// writeQuorumError is riak_kv_put_fsm's validate for a write with quorums
// w, dw and pw (nil: the bucket's) in a bucket with properties p.
func writeQuorumError(p *rpb.RpbBucketProps, w, dw, pw *uint32) rpcError {
	n := p.GetNVal()
	return checkQuorums(n, expandQuorum(w, p.GetW(), n), expandQuorum(dw, p.GetDw(), n), expandQuorum(pw, p.GetPw(), n))
}

// given reports whether a request sets quorum q: riak_kv_pb_object
// passes on no option that is absent or "default" (make_option).
func given(q *uint32) bool { return q != nil && *q != quorumDefault }

// deleteReadQuorumError checks the read a delete without a vclock makes
// first (riak_kv_delete's get_r_options): with r when the request gives an
// r or a w, and with rw (the request's or the bucket's) otherwise.
func deleteReadQuorumError(p *rpb.RpbBucketProps, m *rpbkv.RpbDelReq) rpcError {
	n := p.GetNVal()
	r := expandQuorum(m.Rw, p.GetRw(), n)
	if given(m.R) || given(m.W) {
		r = expandQuorum(m.R, p.GetR(), n)
	}
	return checkQuorums(n, r, expandQuorum(m.Pr, p.GetPr(), n))
}

// deleteWriteQuorumError checks the tombstone's put (riak_kv_delete's
// get_w_options): with w when the request gives one, and with rw (the
// request's or the bucket's) otherwise, so that a bucket's w does not
// apply to deletes.
func deleteWriteQuorumError(p *rpb.RpbBucketProps, m *rpbkv.RpbDelReq) rpcError {
	n := p.GetNVal()
	w := expandQuorum(m.Rw, p.GetRw(), n)
	if given(m.W) {
		w = expandQuorum(m.W, p.GetW(), n)
	}
	return checkQuorums(n, w, expandQuorum(m.Dw, p.GetDw(), n), expandQuorum(m.Pw, p.GetPw(), n))
}

// checkQuorums refuses any quorum above n. (Riak raises a write's dw to
// at least 1, which is never above n_val, at least 1.)
func checkQuorums(n uint32, quorums ...uint32) rpcError {
	for _, q := range quorums {
		if q > n {
			return nValViolation(n)
		}
	}
	return ""
}
