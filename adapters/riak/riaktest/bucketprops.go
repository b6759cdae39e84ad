package riaktest

import (
	"math"
	"strings"

	rpb "github.com/basho/riak-go-client/rpb/riak"
)

// This file reproduces the bucket-property validation Riak KV 3.2 applies
// when a client sets bucket or bucket-type properties (riak_kv_bucket's
// validate/4, called by riak_core_bucket:set_bucket), limited to the rules
// that properties sent over protocol buffers can trigger and that the
// double models, with Riak's reasons verbatim. See "Bucket properties" in
// README.md.

// propError is one {Property, Reason} entry of Riak's refusal. An atom
// reason (not_integer) is printed bare, a string reason in double quotes,
// as Erlang's ~p prints them.
type propError struct {
	prop, reason string
	atom         bool
}

// term is e as the Erlang term Riak prints.
func (e propError) term() *pterm {
	reason := pString(e.reason)
	if e.atom {
		reason = pAtom(e.reason)
	}
	return pTuple(pAtom(e.prop), reason)
}

// invalidPropsPrefix starts Riak's refusal of bucket properties.
const invalidPropsPrefix = "Invalid bucket properties: "

// invalidProps is the message Riak's protocol-buffers bucket service sends
// for refused properties: riak_core_pb_bucket prints the error list with
// io_lib:format and the format "Invalid bucket properties: ~p". ~p breaks
// a list that does not fit in 80 columns after the prefix over several
// lines, each element under the first, and a {Property, Reason} tuple
// that does not fit after its property; erlPrint does as it does.
func invalidProps(errs []propError) string {
	if errs == nil {
		return invalidPropsPrefix
	}
	terms := make([]*pterm, len(errs))
	for i, e := range errs {
		terms[i] = e.term()
	}
	return invalidPropsPrefix + erlPrint(pList(terms...), len(invalidPropsPrefix)+1)
}

// erlAtom prints name as Erlang's ~p prints the atom Riak decodes it to:
// bare if it is a lower-case identifier and not a reserved word, in single
// quotes otherwise.
func erlAtom(name string) string {
	bare := name != "" && !erlReserved[name]
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '@'):
		default:
			bare = false
		}
	}
	if bare {
		return name
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(name, `\`, `\\`), "'", `\'`) + "'"
}

// erlReserved are the reserved words of Erlang/OTP 25 (erl_scan), which
// ~p prints in quotes although they are lower-case identifiers.
var erlReserved = map[string]bool{
	"after": true, "and": true, "andalso": true, "band": true, "begin": true, "bnot": true, "bor": true,
	"bsl": true, "bsr": true, "bxor": true, "case": true, "catch": true, "cond": true, "div": true,
	"end": true, "fun": true, "if": true, "let": true, "not": true, "of": true, "or": true,
	"orelse": true, "receive": true, "rem": true, "try": true, "when": true, "xor": true,
}

// prepend mirrors how riak_kv_bucket accumulates errors ([Err | Errors]),
// so that a refusal lists them in Riak's order.
func prepend(errs []propError, e propError) []propError {
	return append([]propError{e}, errs...)
}

// genericErrors applies riak_kv_bucket's per-property checks
// (validate/3) to the properties present in p, in the order Riak decodes
// them from RpbBucketProps (riak_pb_codec:decode_bucket_props: integers,
// then booleans), prepending each refusal to errs. consistent and
// write_once are checked only when checkFlags is set: on a created type,
// the type-specific checks have already taken a true value out.
func genericErrors(errs []propError, p *rpb.RpbBucketProps, checkFlags bool) []propError {
	// n_val, old_vclock, big_vclock and small_vclock must be integers > 0.
	for _, f := range []struct {
		name string
		v    *uint32
	}{{"n_val", p.NVal}, {"old_vclock", p.OldVclock}, {"big_vclock", p.BigVclock}, {"small_vclock", p.SmallVclock}} {
		if f.v != nil && *f.v == 0 {
			errs = prepend(errs, propError{prop: f.name, reason: "not_integer", atom: true})
		}
	}
	if p.Consistent != nil && *p.Consistent && checkFlags {
		errs = prepend(errs, propError{prop: "consistent", reason: "cannot update consistent property"})
	}
	if p.WriteOnce != nil && *p.WriteOnce && checkFlags {
		errs = prepend(errs, propError{prop: "write_once", reason: "cannot update write_once property"})
	}
	// The quorum properties, in decode order (pr, r, w, pw, dw, rw). r, w
	// and rw must be a positive integer or one, quorum or all (is_quorum);
	// pr, pw and dw may also be 0 (is_opt_quorum). "default", which
	// riak_pb decodes to the atom default, is neither.
	for _, f := range []struct {
		name     string
		v        *uint32
		zeroOkay bool
	}{{"pr", p.Pr, true}, {"r", p.R, false}, {"w", p.W, false}, {"pw", p.Pw, true}, {"dw", p.Dw, true}, {"rw", p.Rw, false}} {
		if f.v != nil && (*f.v == quorumDefault || *f.v == 0 && !f.zeroOkay) {
			errs = prepend(errs, propError{prop: f.name, reason: "not_valid_quorum", atom: true})
		}
	}
	return errs
}

// The symbolic quorum values of the protocol-buffers interface
// (riak_pb_kv_codec.hrl): an RpbBucketProps or request quorum field holds
// either a count or one of these.
const (
	quorumOne     uint32 = math.MaxUint32 - 1 // one
	quorumQuorum  uint32 = math.MaxUint32 - 2 // quorum
	quorumAll     uint32 = math.MaxUint32 - 3 // all
	quorumDefault uint32 = math.MaxUint32 - 4 // default
)

// lwwDVVErrors is riak_kv_bucket's check on the merged result: a bucket
// (or type) may not end up with both last_write_wins=true and
// dvv_enabled=true.
func lwwDVVErrors(errs []propError, existing, p *rpb.RpbBucketProps, dvv bool) []propError {
	lww := existing.GetLastWriteWins()
	if p.LastWriteWins != nil {
		lww = *p.LastWriteWins
	}
	if lww && dvv {
		errs = prepend(errs, propError{prop: "dvv_enabled", reason: "If last_write_wins is true, dvv_enabled must be false"})
	}
	return errs
}

// validateUpdate returns Riak's refusals of setting the properties p on a
// bucket or a created bucket type whose effective properties are existing
// and whose type has dvv_enabled=dvv; none if Riak accepts them.
// defaultBucket is set for a bucket of the "default" type, which Riak
// checks with fewer rules ("default buckets are free to do as they
// please").
func validateUpdate(defaultBucket bool, existing *rpb.RpbBucketProps, dvv bool, p *rpb.RpbBucketProps) []propError {
	var errs []propError
	if defaultBucket {
		errs = genericErrors(errs, p, true)
		return lwwDVVErrors(errs, existing, p, dvv)
	}
	// A bucket of a created type, or the type itself. The double's types
	// are never consistent or write_once, so Riak's type-specific rules
	// are those for data-type types and for plain ones.
	if len(existing.Datatype) > 0 {
		if p.Datatype != nil && string(p.Datatype) != string(existing.Datatype) {
			errs = prepend(errs, propError{prop: "datatype", reason: erlAtom(string(p.Datatype)) + " not supported for bucket datatype property"})
		}
		if p.AllowMult != nil && !*p.AllowMult {
			errs = prepend(errs, propError{prop: "allow_mult", reason: "Data Type buckets must be allow_mult=true"})
		}
		errs = genericErrors(errs, p, true)
	} else {
		if p.Datatype != nil {
			errs = prepend(errs, propError{prop: "datatype", reason: "`datatype` must not be defined."})
		}
		if p.Consistent != nil && *p.Consistent {
			errs = prepend(errs, propError{prop: "consistent", reason: "Write once buckets must not be consistent=true"})
		}
		if p.WriteOnce != nil && *p.WriteOnce {
			errs = prepend(errs, propError{prop: "write_once", reason: "Cannot set existing bucket type to `write_once`"})
		}
		errs = genericErrors(errs, p, false)
	}
	return lwwDVVErrors(errs, existing, p, dvv)
}

// validateCreate returns Riak's refusals of creating a bucket type with
// the properties p and dvv_enabled=dvv.
func validateCreate(p *rpb.RpbBucketProps, dvv bool) []propError {
	var errs []propError
	if len(p.Datatype) > 0 && !p.GetAllowMult() {
		errs = prepend(errs, propError{prop: "allow_mult", reason: "Data Type buckets must be allow_mult=true"})
	}
	errs = genericErrors(errs, p, false)
	return lwwDVVErrors(errs, &rpb.RpbBucketProps{}, p, dvv)
}
