package cassandra

import (
	"context"
	"fmt"
	"sort"
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
	// OpStateLoad reads all per-actor rows of a GCounter/PNCounter key.
	OpStateLoad Op = iota + 1
	// OpStateSave overwrites one actor's row of a GCounter/PNCounter key.
	OpStateSave
	// OpLedgerFetch reads all per-actor rows of a TPNCounter key.
	OpLedgerFetch
	// OpLedgerPut overwrites one actor's row of a TPNCounter key.
	OpLedgerPut
	// OpShardWrite overwrites one tally shard.
	OpShardWrite
	// OpTallyRead reads the shards and the tally of a key to compute a value.
	OpTallyRead
	// OpTallyGCRead reads shards and tally before a GC. It must be ALL: a GC
	// may only fold shards when it has certainly seen every one of them.
	OpTallyGCRead
	// OpTallyGCWrite writes a GC's fold (tally update plus shard deletes).
	OpTallyGCWrite
	// OpLogAppend writes one windowed-log cell.
	OpLogAppend
	// OpLogRead scans log cells (newest first, stopping at the first merge
	// cell) for reads, merges and compactions. Because merges use it, it
	// must overlap OpLogAppend.
	OpLogRead
	// OpLogDelete removes the cells a merge cell covers, or a whole counter.
	OpLogDelete
	// OpBalanceIncrement writes normal (N) balance rows and nothing else.
	OpBalanceIncrement
	// OpBalanceRead reads a balance partition, for sums and for merges
	// alike, so it must overlap both balance writes.
	OpBalanceRead
	// OpBalanceMergeWrite writes every other balance mutation: tombstone
	// and sum rows, row deletes, account deletes.
	OpBalanceMergeWrite
	// OpTxCommit executes a transaction-context batch (see Tx). A Tx
	// writes state, ledger, shard, log and balance rows, so it must overlap
	// every read that depends on those writes (OpStateLoad, OpLedgerFetch,
	// OpLogRead, OpBalanceRead).
	OpTxCommit

	opEnd
)

var opNames = map[Op]string{
	OpStateLoad: "state load", OpStateSave: "state save",
	OpLedgerFetch: "ledger fetch", OpLedgerPut: "ledger put",
	OpShardWrite: "tally shard write", OpTallyRead: "tally read",
	OpTallyGCRead: "tally gc read", OpTallyGCWrite: "tally gc write",
	OpLogAppend: "log append", OpLogRead: "log read",
	OpLogDelete:        "log delete",
	OpBalanceIncrement: "balance increment", OpBalanceRead: "balance read",
	OpBalanceMergeWrite: "balance merge write",
	OpTxCommit:          "tx commit",
}

// String returns the operation's name as used in error messages.
func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// DefaultConsistency returns the level used for op when Options does not
// override it: ALL for OpTallyGCRead, QUORUM for everything else. QUORUM
// reads and writes overlap, which the per-actor stores need (an actor must
// read its own last write before overwriting its row) and the merges need
// (a merge must see every cell older than its cutoff).
func DefaultConsistency(op Op) gocql.Consistency {
	if op == OpTallyGCRead {
		return gocql.All
	}
	return gocql.Quorum
}

// isWrite reports whether statements of op can change stored data.
func (o Op) isWrite() bool {
	switch o {
	case OpStateSave, OpLedgerPut, OpShardWrite, OpTallyGCWrite, OpLogAppend, OpLogDelete,
		OpBalanceIncrement, OpBalanceMergeWrite, OpTxCommit:
		return true
	}
	return false
}

// Options configure a DB. The zero value is valid and gives the defaults.
type Options struct {
	// TablePrefix is prepended to every table name (default "counterkit_").
	// The resulting names must pass CheckIdentifier.
	TablePrefix string

	// Consistency overrides the level of individual operations. Missing
	// entries (and gocql.Any, the zero Consistency) use DefaultConsistency.
	// New rejects combinations that would break a guarantee; see
	// CheckConsistency.
	Consistency map[Op]gocql.Consistency

	// RetryPolicy, when not nil, is set on every statement; otherwise the
	// session's policy applies. Every statement the adapter sends is marked
	// idempotent, so a policy may resend it (a write retried after a
	// failure is reported as crdt.ErrAmbiguousWrite, never as
	// crdt.ErrUnavailable; see Error). A policy must not answer
	// gocql.Ignore (that reports a failed write as applied) nor lower a
	// statement's consistency (SetConsistency): New refuses
	// *gocql.DowngradingConsistencyRetryPolicy, which does both (see
	// CheckRetryPolicy). New cannot see the session's own policy; check
	// ClusterConfig.RetryPolicy with CheckRetryPolicy before creating the
	// session.
	RetryPolicy gocql.RetryPolicy

	// LogPageSize is the page size of windowed-log scans
	// (default 100). Scans stop paging at the first merge cell. It does not
	// apply to whole-partition reads (state, ledger, tally, balance), which
	// always fetch one page of their row cap plus one.
	LogPageSize int

	// Now returns the current time; nil means time.Now. Tests use it to move
	// the clock.
	Now func() time.Time
}

// CheckConsistency reports whether the per-operation levels in levels
// (missing entries use DefaultConsistency) keep the adapter's guarantees.
// It requires:
//   - no ANY, SERIAL or LOCAL_SERIAL (the adapter uses no lightweight
//     transactions, and ANY reads nothing back);
//   - OpTallyGCRead at ALL;
//   - each read that precedes a dependent write to overlap that write:
//     state load/save, ledger fetch/put, log read/append (log merges read
//     through the same scan), balance read/increment and balance
//     read/merge write (merges read through Rows too);
//   - the transaction commit to overlap every read of rows a Tx writes:
//     state load, ledger fetch, log read and balance read, each against
//     OpTxCommit (the tally's only read that needs overlap, the GC read,
//     is ALL).
//
// A read level r and a write level w overlap when either is ALL, or both
// are in {QUORUM, EACH_QUORUM}, or both are in {LOCAL_QUORUM, EACH_QUORUM}.
// QUORUM and LOCAL_QUORUM do not overlap: with several data centers a
// QUORUM write can miss a DC's local quorum entirely. LOCAL_QUORUM pairs
// only overlap within one data center: an actor must then stay in its DC,
// and merges must run in the DC the writes go to. A DC-local setup sets
// every read above and its writes to LOCAL_QUORUM (or the Tx commit to
// EACH_QUORUM, which overlaps both families).
//
// The error wraps crdt.ErrInvalidConfig.
func CheckConsistency(levels map[Op]gocql.Consistency) error {
	get := func(op Op) gocql.Consistency {
		if c, ok := levels[op]; ok && c != gocql.Any {
			return c
		}
		return DefaultConsistency(op)
	}
	for op := range levels {
		if op < OpStateLoad || op >= opEnd {
			return fmt.Errorf("%w: unknown operation %v", crdt.ErrInvalidConfig, op)
		}
	}
	for op := OpStateLoad; op < opEnd; op++ {
		switch c := get(op); c {
		case gocql.Serial, gocql.LocalSerial:
			return fmt.Errorf("%w: %v at %v: serial levels are for lightweight transactions only", crdt.ErrInvalidConfig, op, c)
		case gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All, gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne:
		default:
			return fmt.Errorf("%w: %v at unknown level %v", crdt.ErrInvalidConfig, op, c)
		}
	}
	if c := get(OpTallyGCRead); c != gocql.All {
		return fmt.Errorf("%w: %v must be ALL (a GC folds shards only after seeing every replica), got %v", crdt.ErrInvalidConfig, OpTallyGCRead, c)
	}
	pairs := [][2]Op{
		{OpStateLoad, OpStateSave},
		{OpLedgerFetch, OpLedgerPut},
		{OpLogRead, OpLogAppend},
		{OpBalanceRead, OpBalanceIncrement},
		{OpBalanceRead, OpBalanceMergeWrite},
		{OpStateLoad, OpTxCommit},
		{OpLedgerFetch, OpTxCommit},
		{OpLogRead, OpTxCommit},
		{OpBalanceRead, OpTxCommit},
	}
	for _, p := range pairs {
		r, w := get(p[0]), get(p[1])
		if !overlaps(r, w) {
			return fmt.Errorf("%w: %v at %v does not overlap %v at %v; a read could miss an acknowledged write",
				crdt.ErrInvalidConfig, p[0], r, p[1], w)
		}
	}
	return nil
}

// globalQuorum reports whether c acknowledges a majority of all replicas
// (EACH_QUORUM: a majority in every DC, hence of all of them).
func globalQuorum(c gocql.Consistency) bool {
	return c == gocql.Quorum || c == gocql.EachQuorum
}

// localQuorum reports whether c acknowledges a majority of the
// coordinator's DC (EACH_QUORUM: of every DC, the local one included).
func localQuorum(c gocql.Consistency) bool {
	return c == gocql.LocalQuorum || c == gocql.EachQuorum
}

// overlaps reports whether every read at r is guaranteed to meet every
// acknowledged write at w (within a data center for LOCAL_QUORUM): either
// is ALL, or both are majorities of the same replica set. Mixed locality
// (QUORUM with LOCAL_QUORUM) does not overlap with several DCs, as
// Cassandra's own ConsistencyLevel.satisfies warns.
func overlaps(r, w gocql.Consistency) bool {
	return r == gocql.All || w == gocql.All ||
		(globalQuorum(r) && globalQuorum(w)) || (localQuorum(r) && localQuorum(w))
}

// CheckRetryPolicy reports whether p may be used for the adapter's
// statements, as Options.RetryPolicy (New calls it) or as the session's
// ClusterConfig.RetryPolicy (which New cannot see: gocql offers no way to
// read it back, so call CheckRetryPolicy on it yourself). A nil policy is
// fine. *gocql.DowngradingConsistencyRetryPolicy is refused: on a write
// timeout of type SIMPLE or BATCH with at least one replica acknowledging
// it answers Ignore, so a write below the configured level is reported as
// applied, and on read timeouts and unavailable errors it retries at lower
// levels, breaking the read/write overlap CheckConsistency enforces. A
// custom policy must likewise never answer gocql.Ignore and never call
// SetConsistency. The error wraps crdt.ErrInvalidConfig.
func CheckRetryPolicy(p gocql.RetryPolicy) error {
	if _, ok := p.(*gocql.DowngradingConsistencyRetryPolicy); ok {
		return fmt.Errorf("%w: gocql.DowngradingConsistencyRetryPolicy ignores write timeouts and lowers consistency levels", crdt.ErrInvalidConfig)
	}
	return nil
}

// Table names, without prefix.
const (
	tableState   = "state"
	tableLedger  = "ledger"
	tableShard   = "tally_shard"
	tableLog     = "log"
	tableBalance = "balance"
)

var allTables = []string{tableState, tableLedger, tableShard, tableLog, tableBalance}

// DB is the adapter: one session, one keyspace, validated names and levels.
// The stores it hands out (States, Ledger, Tally, Log, Balance) share its
// session and write clock.
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
	// openPage starts a single-page read (sessionPage; unit tests
	// substitute it).
	openPage func(ctx context.Context, op Op, limit int, cql string, args []any) rowIter
	// clock stamps per-actor rows; it observes WRITETIMEs read back.
	clock clock
}

// New returns a DB that uses session and the tables in keyspace (create
// them with CreateSchema). It validates the keyspace, the table names, the
// consistency levels (CheckConsistency) and Options.RetryPolicy
// (CheckRetryPolicy; the session's own policy is not visible to it); errors
// wrap crdt.ErrInvalidIdentifier or crdt.ErrInvalidConfig. It sends no
// statement.
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
	if opts.LogPageSize < 0 {
		return nil, fmt.Errorf("%w: negative LogPageSize %d", crdt.ErrInvalidConfig, opts.LogPageSize)
	}
	db := &DB{
		session:  session,
		keyspace: keyspace,
		tables:   tables,
		cons:     make(map[Op]gocql.Consistency),
		retry:    opts.RetryPolicy,
		pageSize: opts.LogPageSize,
		now:      opts.Now,
	}
	if db.pageSize == 0 {
		db.pageSize = 100
	}
	if db.now == nil {
		db.now = time.Now
	}
	for op := OpStateLoad; op < opEnd; op++ {
		db.cons[op] = DefaultConsistency(op)
		if c, ok := opts.Consistency[op]; ok && c != gocql.Any {
			db.cons[op] = c
		}
	}
	db.clock.now = db.now
	db.openPage = db.sessionPage
	return db, nil
}

func tableNames(keyspace, prefix string) (map[string]string, error) {
	if err := CheckIdentifier(keyspace); err != nil {
		return nil, fmt.Errorf("keyspace: %w", err)
	}
	if prefix == "" {
		prefix = "counterkit_"
	}
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
// writes bind their own timestamps and client-chosen keys, so sending one
// twice stores the same cells.
func (db *DB) query(op Op, stmt string, args ...any) *gocql.Query {
	q := db.session.Query(stmt, args...).Consistency(db.cons[op]).Idempotent(true)
	if db.retry != nil {
		q = q.RetryPolicy(db.retry)
	}
	return q
}

// exec runs a single write statement. A failure after more than one
// attempt by the driver is ambiguous (see classifyWrite).
func (db *DB) exec(ctx context.Context, op Op, stmt string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	iter := db.query(op, stmt, args...).IterContext(ctx)
	err := iter.Close()
	if !op.isWrite() {
		return wrapErr(op.String(), false, err)
	}
	return wrapWrite(op.String(), err, iter.Attempts(), false)
}

// stmt is one write statement: CQL text, bound values and the partition
// key it writes. Stores build stmts so that the same write can run alone or
// inside a Tx batch.
type stmt struct {
	cql  string
	args []any
	// key is the statement's partition key value. Every table has a single
	// text partition key and all live in one keyspace, so statements with
	// equal keys are one Cassandra mutation (BatchUpdatesCollector groups by
	// keyspace and partition key).
	key string
}

// batchlogged reports whether stmts, sent as one LOGGED batch, span more
// than one partition: only then does the coordinator go through the
// batchlog (and the batch size thresholds apply).
func batchlogged(stmts []stmt) bool {
	for _, s := range stmts[min(1, len(stmts)):] {
		if s.key != stmts[0].key {
			return true
		}
	}
	return false
}

// batch runs stmts as one LOGGED batch at op's consistency. All entries are
// marked idempotent, so the driver's retry policy may resend the batch; a
// failure after more than one attempt, or an Overloaded refusal of a
// multi-partition batch, is ambiguous (see classifyWrite).
func (db *DB) batch(ctx context.Context, op Op, stmts []stmt) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	if len(stmts) == 0 {
		return nil
	}
	if len(stmts) == 1 {
		return db.exec(ctx, op, stmts[0].cql, stmts[0].args...)
	}
	b := db.session.Batch(gocql.LoggedBatch).Consistency(db.cons[op])
	if db.retry != nil {
		b = b.RetryPolicy(db.retry)
	}
	for _, s := range stmts {
		b.Entries = append(b.Entries, gocql.BatchEntry{Stmt: s.cql, Args: s.args, Idempotent: true})
	}
	iter := b.IterContext(ctx)
	err := iter.Close()
	return wrapWrite(op.String(), err, iter.Attempts(), batchlogged(stmts))
}

// rowIter is the part of *gocql.Iter a single-page read uses.
type rowIter interface {
	Scan(dest ...any) bool
	PageState() []byte
	Close() error
}

// singlePage makes q fetch at most limit+1 rows in one request, with
// automatic paging off (PageState(nil) starts at the beginning and
// disables it). Pages are separate reads, so a write landing between two of
// them (a tally GC, a ledger Put, a balance merge) could be seen in half;
// one page is one read of the partition, which Cassandra answers from one
// consistent view of each replica and reconciles cell by cell, keeping a
// single-partition batch whole. The extra row detects a partition above
// limit without reading all of it.
func singlePage(q *gocql.Query, limit int) *gocql.Query {
	return q.PageSize(limit + 1).PageState(nil)
}

// sessionPage starts a single-page read through the session.
func (db *DB) sessionPage(ctx context.Context, op Op, limit int, cql string, args []any) rowIter {
	return singlePage(db.query(op, cql, args...), limit).IterContext(ctx)
}

// closePage ends a single-page read: it returns the driver's error
// (mapped as a read) or, when the server had rows beyond the page,
// tooLarge(), an error wrapping crdt.ErrTooLarge. A partition that does not
// fit in one page is refused, never read in pieces.
func closePage(iter rowIter, op Op, tooLarge func() error) error {
	more := len(iter.PageState()) > 0
	if err := iter.Close(); err != nil {
		return wrapErr(op.String(), false, err)
	}
	if more {
		return tooLarge()
	}
	return nil
}

// clock hands out write timestamps in microseconds that are strictly
// increasing within the DB and never below a timestamp it has observed
// (a WRITETIME read back from the table). An actor that reads its own row
// before overwriting it therefore always writes with a larger timestamp,
// even across restarts and small clock steps backwards.
type clock struct {
	mu   sync.Mutex
	last int64
	now  func() time.Time
}

// next returns a timestamp above every earlier one and above floor.
func (c *clock) next(floor int64) int64 { return c.reserve(floor, 1) }

// reserve returns the first of n consecutive timestamps (n ≥ 1), all above
// every earlier one and above floor. A multi-statement write stamps its
// statements in order with them, so that within one batch a later statement
// on the same cell wins, exactly as if they had been sent one by one.
func (c *clock) reserve(floor int64, n int) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now().UnixMicro()
	if t <= c.last {
		t = c.last + 1
	}
	if t <= floor {
		t = floor + 1
	}
	c.last = t + int64(max(n, 1)) - 1
	return t
}

// observe raises the clock to at least ts.
func (c *clock) observe(ts int64) {
	c.mu.Lock()
	if ts > c.last {
		c.last = ts
	}
	c.mu.Unlock()
}

// sortedOps is used by docs and tests.
func sortedOps() []Op {
	ops := make([]Op, 0, len(opNames))
	for op := range opNames {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	return ops
}
