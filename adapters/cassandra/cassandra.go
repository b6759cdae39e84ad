package cassandra

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
)

// Op names one kind of statement the adapter sends, so that its consistency
// level can be chosen separately.
type Op int

// The operations whose consistency level can be configured.
const (
	// OpSiblingsFetch reads every row of a key of the siblings table
	// (Siblings.Fetch).
	OpSiblingsFetch Op = iota + 1
	// OpSiblingsPut writes one actor's row of a key and deletes the rows a
	// token names (Siblings.Put). It must overlap OpSiblingsFetch: an actor
	// reads its own last write before overwriting it.
	OpSiblingsPut
	// OpPartitionRead reads a partition at store.ReadAny (Partitions.Scan
	// and Snapshot). It must overlap OpPartitionApply: clients merge and
	// compact from what it returns.
	OpPartitionRead
	// OpPartitionReadComplete reads a partition at store.ReadComplete. It
	// must be ALL: such a read is what a client folds and deletes rows
	// after, so it must see every replica, including a write that reached
	// only one of them (an ambiguous write).
	OpPartitionReadComplete
	// OpPartitionApply writes a batch of mutations (Partitions.Apply).
	OpPartitionApply

	opEnd
)

var opNames = map[Op]string{
	OpSiblingsFetch:         "siblings fetch",
	OpSiblingsPut:           "siblings put",
	OpPartitionRead:         "partition read",
	OpPartitionReadComplete: "partition read complete",
	OpPartitionApply:        "partition apply",
}

// String returns the operation's name as used in error messages.
func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// DefaultConsistency returns the level used for op when Options does not
// override it: ALL for OpPartitionReadComplete, QUORUM for everything
// else. QUORUM reads and writes overlap, which both shapes need: an actor
// must read its own last Put before overwriting its row, and a client must
// see every acknowledged mutation of a partition before it merges.
func DefaultConsistency(op Op) gocql.Consistency {
	if op == OpPartitionReadComplete {
		return gocql.All
	}
	return gocql.Quorum
}

// DefaultScanPageSize is the page size of Partitions.Scan when
// Options.ScanPageSize is zero.
const DefaultScanPageSize = 100

// Options configure a DB. The zero value is valid and gives the defaults.
type Options struct {
	// TablePrefix is prepended to both table names (default
	// "counterkit_"). The resulting names must pass CheckIdentifier.
	TablePrefix string

	// Consistency overrides the level of individual operations. Missing
	// entries (and gocql.Any, the zero Consistency) use DefaultConsistency.
	// New rejects combinations that would break a guarantee; see
	// CheckConsistency.
	Consistency map[Op]gocql.Consistency

	// RetryPolicy, when not nil, is set on every statement; otherwise the
	// session's policy applies. Statements are idempotent, so a policy may
	// resend them; it must neither answer gocql.Ignore nor change a level
	// (see CheckRetryPolicy, which New applies to this field only; an
	// Ignore it did not ask about is taken as Rethrow, and a level it sets
	// where it did not probe is not applied).
	RetryPolicy gocql.RetryPolicy

	// ScanPageSize is the number of rows each page of Partitions.Scan
	// fetches (default DefaultScanPageSize), at most math.MaxInt32 − 1 (New
	// refuses more, and a negative one, with crdt.ErrInvalidConfig). It
	// does not apply to Snapshot or Siblings.Fetch, which always read one
	// page.
	ScanPageSize int

	// Now returns the current time; nil means time.Now. Tests use it to move
	// the clock.
	Now func() time.Time

	// SiblingsTTL, when positive, makes every row Siblings.Put writes
	// expire that long after the server wrote it (INSERT ... USING
	// TIMESTAMP ? AND TTL ?), rounded up to whole seconds; (*Siblings).TTL
	// reports it, so the store is a store.Expiring. It is only for a
	// records store (ledger.Options.Records): a DB of its own, with its own
	// TablePrefix, on the same session. Counter state in such a store would
	// vanish from an idle key, and the ledger refuses it there. Choose a
	// TTL of at least the ledger's RetryWindow plus FutureSkew plus the
	// writers' clock skew and the Cassandra nodes' (SPEC.md 6.11,
	// "Storage"): ledger.DefaultExpireAfter, 25 hours, for the defaults.
	// The TTL counts from the server's clock at the write, in whole seconds
	// (Cassandra expires a row at the second it was written, truncated,
	// plus the TTL), so a row lives more than TTL minus one second by that
	// clock; a read through a node whose clock runs ahead finds it gone
	// that much sooner. Zero
	// means no TTL; negative, or above MaxSiblingsTTL (Cassandra's
	// maximum, 20 years), is refused. Cassandra 4.x also refuses a TTL
	// that takes a row past 2038-01-19 (CASSANDRA-14092; Put fails with
	// crdt.ErrMisconfiguredStore): a ledger's first credit then lands
	// in the counter with its record owed, and its later writes fail
	// (crdt.ErrUnavailable, naming the refusal) until the record is
	// written. Partitions are unaffected.
	SiblingsTTL time.Duration
}

// MaxSiblingsTTL is the longest Options.SiblingsTTL: Cassandra's maximum
// TTL, 630720000 seconds (20 years).
const MaxSiblingsTTL = maxTTLSeconds * time.Second

// maxTTLSeconds is Cassandra's maximum TTL in seconds (Attributes.MAX_TTL).
const maxTTLSeconds = 630720000

// ttlSeconds returns d in whole seconds, rounded up, and refuses (wrapping
// crdt.ErrInvalidConfig) a negative d and one above MaxSiblingsTTL.
func ttlSeconds(d time.Duration) (int, error) {
	if d < 0 {
		return 0, fmt.Errorf("%w: SiblingsTTL %v is negative", crdt.ErrInvalidConfig, d)
	}
	secs := d / time.Second
	if d%time.Second != 0 {
		secs++
	}
	if secs > maxTTLSeconds {
		return 0, fmt.Errorf("%w: SiblingsTTL %v is above Cassandra's maximum TTL, %d seconds", crdt.ErrInvalidConfig, d, maxTTLSeconds)
	}
	return int(secs), nil
}

// CheckConsistency reports whether the per-operation levels in levels
// (missing entries, and gocql.Any, the zero Consistency, use
// DefaultConsistency) keep the adapter's guarantees: no SERIAL or
// LOCAL_SERIAL; OpPartitionReadComplete at ALL; and each
// read overlapping the writes it depends on (OpSiblingsFetch with
// OpSiblingsPut, OpPartitionRead with OpPartitionApply). Two levels
// overlap when either is ALL, or both are in {QUORUM, EACH_QUORUM}, or
// both in {LOCAL_QUORUM, EACH_QUORUM} (README.md, "Consistency"). The error
// wraps crdt.ErrInvalidConfig.
func CheckConsistency(levels map[Op]gocql.Consistency) error {
	get := func(op Op) gocql.Consistency { return level(levels, op) }
	for op := range levels {
		if op < OpSiblingsFetch || op >= opEnd {
			return fmt.Errorf("%w: unknown operation %v", crdt.ErrInvalidConfig, op)
		}
	}
	for op := OpSiblingsFetch; op < opEnd; op++ {
		switch c := get(op); c {
		case gocql.Serial, gocql.LocalSerial:
			return fmt.Errorf("%w: %v at %v: serial levels are for lightweight transactions only", crdt.ErrInvalidConfig, op, c)
		case gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All, gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne:
		default:
			return fmt.Errorf("%w: %v at unknown level %v", crdt.ErrInvalidConfig, op, c)
		}
	}
	if c := get(OpPartitionReadComplete); c != gocql.All {
		return fmt.Errorf("%w: %v must be ALL (a complete read must see every replica), got %v", crdt.ErrInvalidConfig, OpPartitionReadComplete, c)
	}
	for _, p := range [][2]Op{{OpSiblingsFetch, OpSiblingsPut}, {OpPartitionRead, OpPartitionApply}} {
		r, w := get(p[0]), get(p[1])
		if !overlaps(r, w) {
			return fmt.Errorf("%w: %v at %v does not overlap %v at %v; a read could miss an acknowledged write",
				crdt.ErrInvalidConfig, p[0], r, p[1], w)
		}
	}
	return nil
}

// level returns op's level in levels: DefaultConsistency(op) when the entry
// is missing or gocql.Any.
func level(levels map[Op]gocql.Consistency, op Op) gocql.Consistency {
	if c, ok := levels[op]; ok && c != gocql.Any {
		return c
	}
	return DefaultConsistency(op)
}

// overlaps reports whether every read at r is guaranteed to meet every
// acknowledged write at w (within a data center for LOCAL_QUORUM): either
// is ALL, or both are majorities of the same replica set: of all replicas
// (QUORUM, or EACH_QUORUM: a majority in every DC, hence of all of them)
// or of the coordinator's DC (LOCAL_QUORUM, or EACH_QUORUM). Mixed
// locality (QUORUM with LOCAL_QUORUM) does not overlap with several DCs,
// as Cassandra's own ConsistencyLevel.satisfies warns.
func overlaps(r, w gocql.Consistency) bool {
	both := func(a, b gocql.Consistency) bool { return (r == a || r == b) && (w == a || w == b) }
	return r == gocql.All || w == gocql.All || both(gocql.Quorum, gocql.EachQuorum) || both(gocql.LocalQuorum, gocql.EachQuorum)
}

// CheckRetryPolicy reports whether p may be used for the adapter's
// statements, as Options.RetryPolicy or as the session's
// ClusterConfig.RetryPolicy (which New cannot read back: check it
// yourself). A policy must never answer gocql.Ignore, which the driver
// turns into success (a write that timed out reported as applied, a read
// that failed as no rows): CheckRetryPolicy asks p about every error a
// statement's attempt can end with (write and read timeouts and failures
// of every write type, unavailable, overloaded, no response, a closed
// connection) and refuses a policy answering Ignore to one. Nor may its
// Attempt change the statement's consistency level
// (gocql.RetryableQuery.SetConsistency), which the driver applies to the
// retry: a lower level breaks the overlap CheckConsistency guarantees, and
// Cassandra refuses a write at SERIAL or LOCAL_SERIAL and a read at ANY.
// CheckRetryPolicy calls p.Attempt on probe statements (attempts 1 to
// retryProbeAttempts at each level CheckConsistency accepts; not for
// gocql's own SimpleRetryPolicy and ExponentialBackoffRetryPolicy, which
// never set one, the latter sleeping in Attempt; a policy of yours that
// sleeps there makes the check wait) and refuses a policy that sets
// another level on one; a level set where it did not probe is not applied
// to a statement of a DB with the policy as Options.RetryPolicy.
// *gocql.DowngradingConsistencyRetryPolicy is refused as such: it does
// both. A nil policy is fine; a typed nil (a nil *gocql.SimpleRetryPolicy)
// is refused. The error wraps crdt.ErrInvalidConfig.
func CheckRetryPolicy(p gocql.RetryPolicy) error {
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		// A typed nil is not the nil interface: the driver would call it.
		return fmt.Errorf("%w: retry policy is a nil %T (leave Options.RetryPolicy nil for the default)", crdt.ErrInvalidConfig, p)
	}
	if _, ok := p.(*gocql.DowngradingConsistencyRetryPolicy); ok {
		return fmt.Errorf("%w: gocql.DowngradingConsistencyRetryPolicy ignores write timeouts and lowers consistency levels", crdt.ErrInvalidConfig)
	}
	for _, err := range attemptErrors() {
		if p.GetRetryType(err) == gocql.Ignore {
			return fmt.Errorf("%w: retry policy %T answers gocql.Ignore to %T (%v), which the driver reports as success", crdt.ErrInvalidConfig, p, err, err)
		}
	}
	switch p.(type) {
	case *gocql.SimpleRetryPolicy, *gocql.ExponentialBackoffRetryPolicy:
		return nil
	}
	for attempts := 1; attempts <= retryProbeAttempts; attempts++ {
		for _, c := range statementLevels {
			q := &probeQuery{attempts: attempts, cons: c}
			p.Attempt(q)
			if q.cons != c {
				return fmt.Errorf("%w: retry policy %T sets consistency %v on attempt %d of a statement at %v; a retry must keep the statement's level",
					crdt.ErrInvalidConfig, p, q.cons, attempts, c)
			}
		}
	}
	return nil
}

// retryProbeAttempts is how many attempts of a statement CheckRetryPolicy
// hands a policy's Attempt at each level. A level set on a later attempt
// is not applied either (guarded).
const retryProbeAttempts = 3

// statementLevels are the levels CheckConsistency accepts for an
// operation: those the adapter's statements are sent at.
var statementLevels = []gocql.Consistency{gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All,
	gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne}

// probeQuery is the gocql.RetryableQuery CheckRetryPolicy hands a policy:
// a statement at cons after attempts attempts, with no deadline.
type probeQuery struct {
	attempts int
	cons     gocql.Consistency
}

func (q *probeQuery) Attempts() int                      { return q.attempts }
func (q *probeQuery) SetConsistency(c gocql.Consistency) { q.cons = c }
func (q *probeQuery) GetConsistency() gocql.Consistency  { return q.cons }
func (q *probeQuery) Context() context.Context           { return context.Background() }

// attemptErrors are errors a statement's attempt can end with, as the
// driver hands them to a retry policy: what CheckRetryPolicy asks about.
func attemptErrors() []error {
	var errs []error
	for _, wt := range []string{"SIMPLE", "BATCH", "UNLOGGED_BATCH", "BATCH_LOG", "CAS", "COUNTER", "VIEW", "CDC"} {
		for received := range 2 {
			errs = append(errs,
				&gocql.RequestErrWriteTimeout{Consistency: gocql.Quorum, Received: received, BlockFor: 2, WriteType: wt},
				&gocql.RequestErrWriteFailure{Consistency: gocql.Quorum, Received: received, BlockFor: 2, NumFailures: 1, WriteType: wt})
		}
	}
	for received := range 3 {
		for _, present := range []byte{0, 1} {
			errs = append(errs, &gocql.RequestErrReadTimeout{Consistency: gocql.Quorum, Received: received, BlockFor: 2, DataPresent: present},
				&gocql.RequestErrReadFailure{Consistency: gocql.Quorum, Received: received, BlockFor: 2, NumFailures: 1, DataPresent: present != 0})
		}
	}
	return append(errs,
		&gocql.RequestErrUnavailable{Consistency: gocql.Quorum, Required: 2, Alive: 1},
		&gocql.RequestErrOverloaded{}, &gocql.RequestErrBootstrapping{},
		gocql.ErrTimeoutNoResponse, gocql.ErrConnectionClosed, gocql.ErrNoStreams,
		context.DeadlineExceeded, context.Canceled)
}

// guarded is the policy set on the adapter's statements for
// Options.RetryPolicy: the same answers, except that Ignore, for an error
// CheckRetryPolicy did not ask about, becomes Rethrow, and that Attempt
// hands the policy the statement through keptLevel, so a level the policy
// sets where CheckRetryPolicy did not probe (a later attempt, a context
// it reads) is not applied: the retry goes at the statement's own level.
type guarded struct{ gocql.RetryPolicy }

func (p guarded) Attempt(q gocql.RetryableQuery) bool {
	return p.RetryPolicy.Attempt(keptLevel{q})
}

func (p guarded) GetRetryType(err error) gocql.RetryType {
	if t := p.RetryPolicy.GetRetryType(err); t != gocql.Ignore {
		return t
	}
	return gocql.Rethrow
}

// keptLevel is a statement as guarded hands it to a policy: SetConsistency
// does nothing.
type keptLevel struct{ gocql.RetryableQuery }

func (keptLevel) SetConsistency(gocql.Consistency) {}

// Table names, without prefix.
const (
	tableSiblings   = "siblings"
	tablePartitions = "partitions"
)

var allTables = []string{tableSiblings, tablePartitions}

// DB is the adapter: one session, one keyspace, validated names and levels.
// The stores it hands out (Siblings, Partitions) share its session; the
// Siblings stores also share its write clock.
//
// A DB is safe for concurrent use by multiple goroutines. It does not own
// the session: closing the session is the caller's job.
type DB struct {
	session  *gocql.Session
	keyspace string
	tables   map[string]string // short name -> quoted "ks"."table"
	cons     map[Op]gocql.Consistency
	retry    gocql.RetryPolicy
	pageSize int
	now      func() time.Time
	// ttl is the TTL, in seconds, of the rows Siblings.Put writes (0:
	// none).
	ttl int
	// openPage starts a read of one page through the session (onePage;
	// unit tests substitute it).
	openPage func(ctx context.Context, op Op, cql string, args []any, pageSize int, pageState []byte) rowIter
	// send runs a write: one statement, or one LOGGED batch (sessionSend;
	// unit tests substitute it).
	send func(ctx context.Context, op Op, stmts []stmt) error
	// clock stamps sibling rows; it observes WRITETIMEs read back.
	clock clock
}

// New returns a DB that uses session and the tables in keyspace (create
// them with CreateSchema). It validates the keyspace, the table names, the
// consistency levels (CheckConsistency), Options.RetryPolicy
// (CheckRetryPolicy; the session's own policy is not visible to it) and
// Options.SiblingsTTL; errors
// wrap crdt.ErrInvalidIdentifier or crdt.ErrInvalidConfig. It sends no
// statement, so it does not see a table of another shape (made by hand;
// CreateSchema's IF NOT EXISTS keeps one): a siblings table keyed on key
// alone keeps one value per key and loses siblings. Run `counterkit check
// cassandra` against a keyspace whose tables you did not create with
// CreateSchema.
func New(session *gocql.Session, keyspace string, opts Options) (*DB, error) {
	if session == nil {
		return nil, fmt.Errorf("%w: nil session", crdt.ErrInvalidConfig)
	}
	return newDB(session, keyspace, opts)
}

// newDB validates and builds a DB; unit tests call it with a nil session to
// inspect statements without a cluster.
func newDB(session *gocql.Session, keyspace string, opts Options) (*DB, error) {
	tables, err := tableNames(keyspace, opts.TablePrefix)
	if err != nil {
		return nil, err
	}
	if err := CheckConsistency(opts.Consistency); err != nil {
		return nil, err
	}
	if err := CheckRetryPolicy(opts.RetryPolicy); err != nil {
		return nil, err
	}
	if opts.ScanPageSize < 0 || opts.ScanPageSize > maxPageRows {
		return nil, fmt.Errorf("%w: ScanPageSize %d out of 0..%d", crdt.ErrInvalidConfig, opts.ScanPageSize, maxPageRows)
	}
	ttl, err := ttlSeconds(opts.SiblingsTTL)
	if err != nil {
		return nil, err
	}
	db := &DB{session: session, keyspace: keyspace, tables: tables, cons: make(map[Op]gocql.Consistency),
		pageSize: cmp.Or(opts.ScanPageSize, DefaultScanPageSize), now: opts.Now, ttl: ttl}
	if db.now == nil {
		db.now = time.Now
	}
	if opts.RetryPolicy != nil {
		db.retry = guarded{opts.RetryPolicy}
	}
	for op := OpSiblingsFetch; op < opEnd; op++ {
		db.cons[op] = level(opts.Consistency, op)
	}
	db.clock.now = db.now
	db.openPage = func(ctx context.Context, op Op, cql string, args []any, pageSize int, pageState []byte) rowIter {
		return onePage(db.query(op, cql, args...), pageSize, pageState).IterContext(ctx)
	}
	db.send = db.sessionSend
	return db, nil
}

func tableNames(keyspace, prefix string) (map[string]string, error) {
	if err := CheckIdentifier(keyspace); err != nil {
		return nil, fmt.Errorf("keyspace: %w", err)
	}
	prefix = cmp.Or(prefix, "counterkit_")
	out := make(map[string]string, len(allTables))
	for _, t := range allTables {
		name := prefix + t
		if err := CheckIdentifier(name); err != nil {
			return nil, fmt.Errorf("table (prefix %q): %w", prefix, err)
		}
		out[t] = quote(keyspace) + "." + quote(name)
	}
	return out, nil
}

// Keyspace returns the keyspace the DB uses.
func (db *DB) Keyspace() string { return db.keyspace }

// Consistency returns the level the DB uses for op.
func (db *DB) Consistency(op Op) gocql.Consistency { return db.cons[op] }

// query builds a statement with op's consistency, the configured retry
// policy, and the idempotence flag. Every adapter statement is idempotent:
// writes bind their own timestamps and keys, so sending one twice stores
// the same cells.
func (db *DB) query(op Op, stmt string, args ...any) *gocql.Query {
	q := db.session.Query(stmt, args...).Consistency(db.cons[op]).Idempotent(true)
	if db.retry != nil {
		q = q.RetryPolicy(db.retry)
	}
	return q
}

// stmt is one write statement: CQL text, bound values and the partition
// key it writes.
type stmt struct {
	cql  string
	args []any
	// key is the statement's partition key value. Both tables have a
	// single text partition key, so statements of one table with equal
	// keys are one Cassandra mutation.
	key string
}

// batchlogged reports whether stmts, sent as one LOGGED batch, span more
// than one partition: only then does the coordinator go through the
// batchlog (and the batch size thresholds apply). All statements of one
// batch address one table.
func batchlogged(stmts []stmt) bool {
	return slices.ContainsFunc(stmts, func(s stmt) bool { return s.key != stmts[0].key })
}

// write checks the context and sends stmts through db.send. A done
// context is reported before anything is sent, as a write that certainly
// did not happen.
func (db *DB) write(ctx context.Context, op Op, stmts []stmt) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	if len(stmts) == 0 {
		return nil
	}
	return db.send(ctx, op, stmts)
}

// sessionSend runs stmts through the session at op's consistency: a single
// statement alone, several as one LOGGED batch, every entry idempotent (the
// driver's retry policy may resend it; see classifyWrite).
func (db *DB) sessionSend(ctx context.Context, op Op, stmts []stmt) error {
	var iter *gocql.Iter
	if len(stmts) == 1 {
		iter = db.query(op, stmts[0].cql, stmts[0].args...).IterContext(ctx)
	} else {
		b := db.session.Batch(gocql.LoggedBatch).Consistency(db.cons[op])
		if db.retry != nil {
			b = b.RetryPolicy(db.retry)
		}
		for _, s := range stmts {
			b.Entries = append(b.Entries, gocql.BatchEntry{Stmt: s.cql, Args: s.args, Idempotent: true})
		}
		iter = b.IterContext(ctx)
	}
	err := iter.Close()
	return wrapWrite(op.String(), err, iter.Attempts(), batchlogged(stmts))
}

// rowIter is the part of *gocql.Iter a one-page read uses.
type rowIter interface {
	Scan(dest ...any) bool
	PageState() []byte
	Close() error
}

// maxPageRows bounds the rows of one page: the native protocol's page size
// is an int32, and a one-page read asks for one row more than its limit.
const maxPageRows = math.MaxInt32 - 1

// onePage makes q fetch one page of pageSize rows from pageState (nil: the
// beginning) as exactly one request: PageState turns automatic paging off.
func onePage(q *gocql.Query, pageSize int, pageState []byte) *gocql.Query {
	return q.PageSize(pageSize).PageState(pageState)
}

// clock hands out write timestamps in microseconds, strictly increasing
// within the DB and above every WRITETIME it has observed, so an actor that
// reads its own row before overwriting it writes with a larger timestamp
// even across restarts and clock steps backwards.
type clock struct {
	mu   sync.Mutex
	last int64
	now  func() time.Time
}

// next returns a timestamp above every earlier one and above floor (or
// math.MaxInt64 when there is none).
func (c *clock) next(floor int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now().UnixMicro()
	if t <= c.last {
		t = sat(c.last)
	}
	if t <= floor {
		t = sat(floor)
	}
	c.last = t
	return t
}

// sat returns ts+1, or ts when that would overflow. Callers that need a
// timestamp strictly above ts check the result (see Siblings.Put).
func sat(ts int64) int64 {
	if ts == math.MaxInt64 {
		return ts
	}
	return ts + 1
}

// observe raises the clock to at least ts.
func (c *clock) observe(ts int64) {
	c.mu.Lock()
	c.last = max(c.last, ts)
	c.mu.Unlock()
}
