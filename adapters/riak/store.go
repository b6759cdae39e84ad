package riak

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// ContentType is the content type of every value this package stores (the
// counter packages' msgpack envelopes). Fetch refuses siblings with any
// other content type, so a key written by another application is never
// mistaken for a counter.
const ContentType = "application/x-counterkit+msgpack"

// actorMetaKey is the user-metadata key that records which actor wrote a
// sibling. It is informational (handy when inspecting siblings with other
// tools); nothing reads it back.
const actorMetaKey = "counterkit-actor"

// Defaults for Options fields left zero.
const (
	// DefaultRetryCount is the number of extra attempts after a failed
	// write or read when Options.RetryCount is zero.
	DefaultRetryCount = 3
	// DefaultRetryBackoff is the pause before the first retry; it doubles
	// with each further retry up to one second (with jitter). With
	// DefaultRetryCount the retries span more than the riak-go-client's
	// node health-check interval (125ms), so a node that just saw a reset
	// gets its chance again.
	DefaultRetryBackoff = 50 * time.Millisecond
	// NoRetries, as Options.RetryCount, sends every request exactly once.
	NoRetries = -1
)

// Limits on what Siblings sends and accepts.
const (
	// MaxKeyLen is the longest key, in bytes: the core's limit for every
	// storage key (crdt.ValidateKey).
	MaxKeyLen = crdt.MaxKeyLen
	// MaxBucketLen is the longest bucket or bucket-type name, in bytes.
	MaxBucketLen = 255
	// MaxValueSize is the largest value Put accepts, in bytes:
	// store.MaxValue, the limit every backend shares. It is below Riak's
	// default max_object_size ("50MB"), past which Riak refuses a write
	// with an error that would otherwise read as ambiguous.
	MaxValueSize = store.MaxValue
	// MaxTokenSize is the largest token (a framed vclock) Put and Delete
	// accept, in bytes.
	MaxTokenSize = 64 << 10
	// MaxSiblings is the most siblings Fetch accepts for one key. Riak
	// itself warns at 25 and (by default) refuses writes past 100
	// (max_siblings).
	MaxSiblings = 1000
)

// Options configure a Siblings store. The zero value selects every
// default except Bucket, which is required. Options is a plain value, safe
// to copy and share.
type Options struct {
	// BucketType is the Riak bucket type; "" means "default". Use a type
	// created with `riak admin bucket-type create` (see ConfigureBucket):
	// NewSiblings refuses the default type unless AllowDefaultBucketType
	// is set.
	BucketType string
	// Bucket is the bucket holding the objects. Required.
	Bucket string
	// RetryCount is how many times a failed request is resent: the
	// operations are idempotent, so a resent write that had already landed
	// changes nothing. Riak's too_many_siblings refusal is not resent (the
	// same write would be refused again). Zero means DefaultRetryCount;
	// NoRetries sends once.
	RetryCount int
	// RetryBackoff is the pause before the first retry (doubling after);
	// zero means DefaultRetryBackoff.
	RetryBackoff time.Duration
	// SkipBucketCheck skips NewSiblings' bucket check. Use it only when the
	// bucket properties cannot be read (restricted security permissions)
	// and were checked another way.
	SkipBucketCheck bool
	// AllowDefaultBucketType lets NewSiblings accept a bucket of Riak's
	// "default" bucket type (configured with ConfigureBucket): counts stay
	// correct, but siblings pile up (see ErrDefaultBucketType).
	AllowDefaultBucketType bool
	// Expiry declares that the bucket's backend expires objects that long
	// after their last write: a bitcask backend with that expiry (riak.conf
	// multi_backend.NAME.bitcask.expiry, in a bucket type whose backend
	// property names it; README.md, "Expiring ledger records"). The
	// adapter cannot see the backend's configuration and sets nothing; it
	// reports Expiry as (*Siblings).TTL, which makes the store a
	// store.Expiring. Bitcask stamps a write with its second, truncated,
	// and drops an object once the clock's second is past that plus the
	// expiry, so an object is read for more than Expiry after its last
	// write (by the clock of the node holding it). It is only for a
	// records store (ledger.Options.Records): counter state there would
	// vanish from an idle key, and the ledger refuses such a store for its
	// accounts. Choose it at least the ledger's RetryWindow plus
	// FutureSkew plus the skew between the writers' and the Riak nodes'
	// clocks (SPEC.md 6.11, "Storage"): ledger.DefaultExpireAfter, 25
	// hours, for the defaults. Zero: the backend keeps objects for good.
	// Negative, and not a whole number of seconds (bitcask's expiry is
	// whole seconds), are refused (crdt.ErrInvalidConfig).
	Expiry time.Duration
}

// settings are validated Options with defaults applied.
type settings struct {
	bucketType, bucket string
	retries            int
	backoff            time.Duration
	expiry             time.Duration
}

func (o Options) settings() (settings, error) {
	st := settings{bucketType: cmp.Or(o.BucketType, "default"), bucket: o.Bucket, retries: o.RetryCount,
		backoff: cmp.Or(o.RetryBackoff, DefaultRetryBackoff), expiry: o.Expiry}
	if err := checkName("bucket type", st.bucketType, MaxBucketLen); err != nil {
		return st, err
	}
	if err := checkName("bucket", st.bucket, MaxBucketLen); err != nil {
		return st, err
	}
	switch {
	case o.RetryCount == 0:
		st.retries = DefaultRetryCount
	case o.RetryCount == NoRetries:
		st.retries = 0
	case o.RetryCount < 0:
		return st, fmt.Errorf("%w: RetryCount %d (use NoRetries to disable retries)", crdt.ErrInvalidConfig, o.RetryCount)
	}
	if o.RetryBackoff < 0 {
		return st, fmt.Errorf("%w: negative RetryBackoff %v", crdt.ErrInvalidConfig, o.RetryBackoff)
	}
	if o.Expiry < 0 || o.Expiry%time.Second != 0 {
		return st, fmt.Errorf("%w: Expiry %v is not a whole, non-negative number of seconds (bitcask's expiry)", crdt.ErrInvalidConfig, o.Expiry)
	}
	return st, nil
}

// checkName accepts 1..max bytes of UTF-8 without control characters. It
// checks bucket and bucket-type names; keys are checked with
// crdt.ValidateKey.
func checkName(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", crdt.ErrInvalidIdentifier, what)
	case len(s) > max:
		return fmt.Errorf("%w: %s of %d bytes, limit %d", crdt.ErrInvalidIdentifier, what, len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", crdt.ErrInvalidIdentifier, what)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %s contains a control character", crdt.ErrInvalidIdentifier, what)
	}
	return nil
}

// Siblings is a store.Siblings (and store.SiblingDeleter, and
// store.Expiring) in one Riak bucket: a key holds Riak's siblings, and the
// key's vclock is the token. It is safe for concurrent use; the
// riak-go-client cluster is the connection pool.
type Siblings struct {
	cl *riakc.Cluster
	st settings
}

var (
	_ store.Siblings       = (*Siblings)(nil)
	_ store.SiblingDeleter = (*Siblings)(nil)
	_ store.Expiring       = (*Siblings)(nil)
)

// TTL returns Options.Expiry: the shortest time the bucket's backend keeps
// an object after its last write, as declared (zero: for good).
func (s *Siblings) TTL() time.Duration { return s.st.expiry }

// NewSiblings returns a Siblings store on a started cluster. Unless
// opts.SkipBucketCheck is set it runs CheckBucket first and refuses what
// that reports (ErrDefaultBucketType only without
// opts.AllowDefaultBucketType). Invalid options wrap crdt.ErrInvalidConfig
// or crdt.ErrInvalidIdentifier. Build the cluster with NewCluster, or give
// your own ExecutionAttempts = 1 and one command run first (see
// NewCluster): a cluster that resends commands by itself is refused
// (crdt.ErrInvalidConfig), since the adapter would see only the last
// attempt's error, which can say nothing landed when an earlier one did.
func NewSiblings(ctx context.Context, cl *riakc.Cluster, opts Options) (*Siblings, error) {
	if cl == nil {
		return nil, fmt.Errorf("%w: nil cluster", crdt.ErrInvalidConfig)
	}
	switch n, ok := executionAttempts(cl); {
	case !ok:
		return nil, fmt.Errorf("%w: cannot tell how many times this riak-go-client's cluster sends a command (the adapter needs v1.7.0)", crdt.ErrInvalidConfig)
	case n != 1:
		return nil, fmt.Errorf("%w: the cluster sends each command up to %d times (ClusterOptions.ExecutionAttempts; 0 means the client's default, 3): build it with riak.NewCluster, or with ExecutionAttempts 1", crdt.ErrInvalidConfig, n)
	}
	st, err := opts.settings()
	if err != nil {
		return nil, err
	}
	if !opts.SkipBucketCheck {
		err := CheckBucket(ctx, cl, st.bucketType, st.bucket)
		if err != nil && !(opts.AllowDefaultBucketType && errors.Is(err, ErrDefaultBucketType)) {
			return nil, err
		}
	}
	return &Siblings{cl: cl, st: st}, nil
}

// Fetch reads key and returns the values of all its live siblings (in
// Riak's order) and its vclock, framed with a checksum, as the token. An
// absent key gives no siblings, a nil token and a nil error. Tombstones are
// skipped, but their vclock is in the token (Fetch asks for it on a key
// that holds only tombstones), so the next Put replaces them.
//
// A sibling of another content type (written by another client) is not a
// counter's: Fetch hands it up, in its place, as a stand-in value that
// names its content type and that every counter decoder refuses with
// crdt.ErrCorruptEncoding (see foreignSibling). So it stops operations on
// the key as a corrupt value does, and the token covers it like any other
// sibling, so that a Put or Delete with that token replaces it:
// `counterkit find ledger -drop-corrupt` repairs the key.
//
// Errors wrap crdt.ErrUnavailable (after retries), crdt.ErrTooLarge (more
// than MaxSiblings siblings), crdt.ErrMisconfiguredStore (a bucket type
// that does not exist, or a read quorum above the bucket's n_val, which
// CheckBucket finds first) or crdt.ErrInvalidKey (nothing sent).
func (s *Siblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if err := crdt.ValidateKey("key", key); err != nil {
		return nil, nil, err
	}
	cmd, err := execute(ctx, s.cl, s.st, request{
		op: "fetch", key: key,
		build: func() (riakc.Command, error) {
			return riakc.NewFetchValueCommandBuilder().
				WithBucketType(s.st.bucketType).WithBucket(s.st.bucket).WithKey(key).
				WithReturnDeletedVClock(true).Build()
		},
	})
	if err != nil {
		return nil, nil, err
	}
	resp := cmd.(*riakc.FetchValueCommand).Response
	if resp == nil || resp.IsNotFound {
		return nil, nil, nil
	}
	if len(resp.Values) > MaxSiblings {
		return nil, nil, &Error{Op: "fetch", Key: key, Attempts: 1, Kind: crdt.ErrTooLarge,
			Err: fmt.Errorf("%d siblings, limit %d", len(resp.Values), MaxSiblings)}
	}
	var sibs [][]byte
	for _, o := range resp.Values {
		if o.IsTombstone {
			continue
		}
		if o.ContentType != ContentType {
			sibs = append(sibs, foreignSibling(o.ContentType, o.Value))
			continue
		}
		sibs = append(sibs, o.Value)
	}
	return sibs, makeToken(s.st, key, resp.VClock), nil
}

// Put stores value under key with token (the vclock from Fetch) as its
// causal context, with ContentType and actor in the sibling's user
// metadata. In a bucket type with dotted version vectors Riak replaces
// every sibling the token covers, and a write that raced with it becomes a
// sibling; in the "default" type only if nothing was written since the
// Fetch (see ErrDefaultBucketType). A nil token stores a new sibling.
// Errors are as README.md ("Errors and retries") lists; input Put refuses
// before sending is what store.CheckPut refuses, and a token Fetch did not
// make (crdt.ErrCorruptEncoding).
func (s *Siblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if err := store.CheckPut(key, actor, value); err != nil {
		return err
	}
	vclock, err := vclockOf(s.st, key, token)
	if err != nil {
		return err
	}
	_, err = execute(ctx, s.cl, s.st, request{
		op: "store", key: key, write: true,
		build: func() (riakc.Command, error) {
			obj := &riakc.Object{
				Value:       value,
				ContentType: ContentType,
				UserMeta:    []*riakc.Pair{{Key: actorMetaKey, Value: string(actor)}},
			}
			if len(vclock) > 0 {
				obj.VClock = vclock
			}
			return riakc.NewStoreValueCommandBuilder().
				WithBucketType(s.st.bucketType).WithBucket(s.st.bucket).WithKey(key).
				WithContent(obj).Build()
		},
	})
	return err
}

// Delete removes key as far as token covers it: Riak writes a tombstone
// with token as its context. A write concurrent with the delete survives as
// a sibling, with the state its writer had read (README.md, "Deletes"). A
// nil token covers nothing: Delete then sends nothing. Retries and errors
// are as for Put.
func (s *Siblings) Delete(ctx context.Context, key string, token store.Token) error {
	if err := crdt.ValidateKey("key", key); err != nil {
		return err
	}
	vclock, err := vclockOf(s.st, key, token)
	if err != nil {
		return err
	}
	if len(vclock) == 0 {
		if err := ctx.Err(); err != nil {
			return &Error{Op: "delete", Key: key, Kind: crdt.ErrUnavailable, Err: err}
		}
		return nil
	}
	_, err = execute(ctx, s.cl, s.st, request{
		op: "delete", key: key, write: true,
		build: func() (riakc.Command, error) {
			return riakc.NewDeleteValueCommandBuilder().
				WithBucketType(s.st.bucketType).WithBucket(s.st.bucket).WithKey(key).
				WithVClock(vclock).Build()
		},
	})
	return err
}

// maxForeignContentType bounds how much of a foreign content type
// foreignSibling quotes.
const maxForeignContentType = 128

// foreignSibling is what Fetch returns in place of a sibling whose content
// type is not ContentType: a msgpack string, for example
//
//	riak: sibling of content type "application/json", not application/x-counterkit+msgpack (2 bytes, sha256 44136fa355b3678a)
//
// Every counterkit value is a msgpack array (the envelope, SPEC.md 3.3),
// so every decoder refuses this one with crdt.ErrCorruptEncoding, whatever
// the sibling holds: a value of another application is never taken for a
// counter, and a key holding one can be repaired like a key holding a
// corrupt value. The digest of the sibling's value keeps two foreign
// siblings apart.
func foreignSibling(contentType string, value []byte) []byte {
	if len(contentType) > maxForeignContentType {
		contentType = contentType[:maxForeignContentType] + "..."
	}
	sum := sha256.Sum256(value)
	text := fmt.Sprintf("riak: sibling of content type %q, not %s (%d bytes, sha256 %x)",
		contentType, ContentType, len(value), sum[:8])
	// A str 8 or str 16 header: the text is at most a few hundred bytes.
	var b []byte
	if len(text) < 1<<8 {
		b = append(make([]byte, 0, 2+len(text)), 0xd9, byte(len(text)))
	} else {
		b = binary.BigEndian.AppendUint16(append(make([]byte, 0, 3+len(text)), 0xda), uint16(len(text)))
	}
	return append(b, text...)
}

// executionAttempts returns how many times cl sends a command
// (ClusterOptions.ExecutionAttempts after its default), which
// riak-go-client v1.7.0 keeps in an unexported field; false if this
// version of the client has no such field.
func executionAttempts(cl *riakc.Cluster) (int, bool) {
	f := reflect.ValueOf(cl).Elem().FieldByName("executionAttempts")
	if !f.IsValid() || f.Kind() != reflect.Uint8 {
		return 0, false
	}
	return int(f.Uint()), true
}
