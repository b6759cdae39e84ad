package cassandratest

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Cassandra 4.0's limits with its default configuration.
const (
	maxKeyLen      = 65535         // FBUtilities.MAX_UNSIGNED_SHORT
	maxTTL         = 630720000     // Attributes.MAX_TTL, 20 years
	dataCenter     = "datacenter1" // the node's, as system.local names it
	maxExpiration  = math.MaxInt32 // the last localExpirationTime 4.0 stores
	batchFailBytes = 50 << 10      // batch_size_fail_threshold_in_kb
	maxMutation    = 16 << 20      // max_mutation_size (half the commit log segment)
	maxNameLen     = 48            // SchemaConstants.NAME_LENGTH
)

// What a write adds to its mutation's size besides its clustering and
// cell values, as Cassandra 4.0 counts a batch (IMutation.dataSize, the
// sum of PartitionUpdate.dataSize): a written row its liveness timestamp
// (8, 16 with a TTL) and row deletion time (12, even when live); each cell
// its timestamp, TTL and local deletion time (16), a counter's its context
// too (36: its header and one local shard); a deleted row its liveness and
// deletion time; a range tombstone its deletion time; each partition of
// the batch its partition deletion (12). The commit log's limit is checked
// against the same sum (an approximation of the serialized mutation).
const (
	rowLiveness    = 8 + 12
	expiringExtra  = 8
	cellOverhead   = 16
	counterContext = 36
	rowDeletion    = 8 + 12
	rangeDeletion  = 12
	partitionBase  = 12
)

// cqlInvalid is a statement the parser refuses as an InvalidRequest.
type cqlInvalid struct{ msg string }

func (e *cqlInvalid) Error() string { return e.msg }

func invalid(format string, args ...any) message.Error {
	return &message.Invalid{ErrorMessage: fmt.Sprintf(format, args...)}
}

// prepared is a parsed statement with its tables resolved and its bind
// markers typed: what PREPARE stores and QUERY builds for one request.
type prepared struct {
	id     []byte
	query  string
	stmt   any
	ks     string   // the keyspace the statement's names resolve in
	tbl    *table   // the user table it reads or writes, if any
	sys    *sysView // the system table it reads, if any
	vars   []*message.ColumnMetadata
	pkIdx  []uint16
	result []*message.ColumnMetadata
}

// prepare parses query and resolves it in keyspace ks (the connection's,
// or the request's).
func (s *Server) prepare(query, ks string) (*prepared, message.Error) {
	st, markers, err := parse(query)
	var syn *cqlSyntax
	var inv *cqlInvalid
	switch {
	case errors.As(err, &syn):
		return nil, &message.SyntaxError{ErrorMessage: syn.msg}
	case errors.As(err, &inv):
		return nil, invalid("%s", inv.msg)
	}
	sum := md5.Sum([]byte(ks + "\x00" + query))
	p := &prepared{id: sum[:], query: query, stmt: st, ks: ks, vars: make([]*message.ColumnMetadata, markers)}
	s.mu.Lock()
	defer s.mu.Unlock()
	var perr message.Error
	switch st := st.(type) {
	case selectStmt:
		perr = s.prepareSelect(p, st)
	case insertStmt:
		perr = s.prepareInsert(p, st)
	case updateStmt:
		perr = s.prepareUpdate(p, st)
	case deleteStmt:
		perr = s.prepareDelete(p, st)
	default: // DDL and USE bind nothing
		if markers > 0 {
			perr = invalid("Bind variables are not supported in this statement")
		}
	}
	if perr != nil {
		return nil, perr
	}
	for i, v := range p.vars {
		if v == nil { // a marker the statement does not use: cannot happen
			return nil, invalid("bind marker %d has no receiver", i)
		}
	}
	return p, nil
}

// lookup resolves a table name; the caller holds s.mu.
func (s *Server) lookup(ks string, ref tableRef) (*table, message.Error) {
	if ref.ks != "" {
		ks = ref.ks
	}
	if ks == "" {
		return nil, invalid("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	k := s.keyspaces[ks]
	if k == nil {
		return nil, invalid("keyspace %s does not exist", ks)
	}
	t := k.tables[ref.name]
	if t == nil {
		return nil, invalid("unconfigured table %s", ref.name)
	}
	return t, nil
}

func (p *prepared) colVar(t *table, name, typ string) *message.ColumnMetadata {
	return &message.ColumnMetadata{Keyspace: t.ks, Table: t.name, Name: name, Type: colTypes[typ]}
}

// typeTerm gives term tm the receiver column: a marker's metadata, or a
// literal checked against the column's type.
func (p *prepared) typeTerm(t *table, tm term, name, typ string) message.Error {
	if tm.marker >= 0 {
		p.vars[tm.marker] = p.colVar(t, name, typ)
		if t.pk != nil && name == t.pk.name {
			p.pkIdx = append(p.pkIdx, uint16(tm.marker))
		}
		return nil
	}
	_, err := literal(tm.lit, name, typ)
	return err
}

// whereKeys checks WHERE restrictions of a read or write of t: the
// partition key by =, the clustering column by = or a slice, nothing else.
func (p *prepared) where(t *table, rels []relation, write bool) message.Error {
	pkSet := false
	for _, r := range rels {
		c := t.byName[r.col]
		switch {
		case c == nil:
			return invalid("Undefined column name %s", r.col)
		case c.kind == "regular":
			if write {
				return invalid("Non PRIMARY KEY columns found in where clause: %s ", r.col)
			}
			return invalid("Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. " +
				"If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
		case c.kind == "partition_key" && r.op != "=":
			return invalid("Only EQ and IN relation are supported on the partition key (unless you use the token() function)")
		case c.kind == "partition_key":
			pkSet = true
		}
		if err := p.typeTerm(t, r.t, c.name, c.typ); err != nil {
			return err
		}
	}
	if !pkSet {
		if write {
			return invalid("Some partition key parts are missing: %s", t.pk.name)
		}
		return invalid("the test double reads one partition at a time: restrict %s by =", t.pk.name)
	}
	return nil
}

func (s *Server) prepareSelect(p *prepared, st selectStmt) message.Error {
	ks := cmpOr(st.table.ks, p.ks)
	if isSystemKeyspace(ks) {
		return s.prepareSystemSelect(p, st, ks)
	}
	t, err := s.lookup(p.ks, st.table)
	if err != nil {
		return err
	}
	p.tbl = t
	if st.star {
		for _, c := range t.ordered() {
			p.result = append(p.result, p.colVar(t, c.name, c.typ))
		}
	}
	for _, sel := range st.sel {
		c := t.byName[sel.col]
		if c == nil {
			return invalid("Undefined column name %s", sel.col)
		}
		switch {
		case sel.fn == "":
			p.result = append(p.result, p.colVar(t, c.name, c.typ))
		case c.kind != "regular":
			return invalid("Cannot use selection function %s on PRIMARY KEY part %s", map[string]string{"writetime": "writeTime", "ttl": "ttl"}[sel.fn], c.name)
		case c.typ == "counter":
			return invalid("Cannot use selection function %s on counter column %s", sel.fn, c.name)
		case sel.fn == "writetime":
			p.result = append(p.result, p.colVar(t, "writetime("+c.name+")", "bigint"))
		default:
			p.result = append(p.result, p.colVar(t, "ttl("+c.name+")", "int"))
		}
	}
	if err := p.where(t, st.where, false); err != nil {
		return err
	}
	if st.limit != nil {
		if err := p.typeTerm(&table{ks: t.ks, name: t.name}, *st.limit, "[limit]", "int"); err != nil {
			return err
		}
	}
	return nil
}

// using types USING TIMESTAMP and TTL.
func (p *prepared) using(t *table, ts, ttl *term) message.Error {
	if ts != nil && t.counter {
		return invalid("Cannot provide custom timestamp for counter updates")
	}
	if ttl != nil && t.counter {
		return invalid("Cannot provide custom TTL for counter updates")
	}
	if ts != nil {
		if err := p.typeTerm(&table{ks: t.ks, name: t.name}, *ts, "[timestamp]", "bigint"); err != nil {
			return err
		}
	}
	if ttl != nil {
		return p.typeTerm(&table{ks: t.ks, name: t.name}, *ttl, "[ttl]", "int")
	}
	return nil
}

func (s *Server) prepareInsert(p *prepared, st insertStmt) message.Error {
	t, err := s.lookup(p.ks, st.table)
	if err != nil {
		return err
	}
	p.tbl = t
	if t.counter {
		return invalid("INSERT statements are not allowed on counter tables, use UPDATE instead")
	}
	seen := map[string]bool{}
	for i, name := range st.cols {
		c := t.byName[name]
		if c == nil {
			return invalid("Undefined column name %s", name)
		}
		if seen[name] {
			return invalid("Multiple definitions found for column %s", name)
		}
		seen[name] = true
		if err := p.typeTerm(t, st.vals[i], c.name, c.typ); err != nil {
			return err
		}
	}
	if !seen[t.pk.name] {
		return invalid("Some partition key parts are missing: %s", t.pk.name)
	}
	if t.ck != nil && !seen[t.ck.name] {
		return invalid("Some clustering keys are missing: %s", t.ck.name)
	}
	return p.using(t, st.ts, st.ttl)
}

func (s *Server) prepareUpdate(p *prepared, st updateStmt) message.Error {
	t, err := s.lookup(p.ks, st.table)
	if err != nil {
		return err
	}
	p.tbl = t
	for _, a := range st.sets {
		c := t.byName[a.col]
		switch {
		case c == nil:
			return invalid("Undefined column name %s", a.col)
		case c.kind != "regular":
			return invalid("PRIMARY KEY part %s found in SET part", a.col)
		case a.op != "=" && c.typ != "counter":
			return invalid("Invalid operation (%s = %s %s ?) for non counter column %s", c.name, c.name, a.op, c.name)
		case a.op == "=" && c.typ == "counter":
			return invalid("Cannot set the value of counter column %s (counters can only be incremented/decremented, not set)", c.name)
		}
		typ := c.typ
		if err := p.typeTerm(t, a.t, c.name, typ); err != nil {
			return err
		}
	}
	if err := p.where(t, st.where, true); err != nil {
		return err
	}
	if err := p.keyEquality(t, st.where); err != nil {
		return err
	}
	return p.using(t, st.ts, st.ttl)
}

// keyEquality requires the clustering column, if any, restricted by =
// (an UPDATE writes one row).
func (p *prepared) keyEquality(t *table, rels []relation) message.Error {
	if t.ck == nil {
		return nil
	}
	for _, r := range rels {
		if r.col == t.ck.name {
			if r.op != "=" {
				return invalid("Slice restrictions are not supported on the clustering columns in UPDATE statements")
			}
			return nil
		}
	}
	return invalid("Some clustering keys are missing: %s", t.ck.name)
}

func (s *Server) prepareDelete(p *prepared, st deleteStmt) message.Error {
	t, err := s.lookup(p.ks, st.table)
	if err != nil {
		return err
	}
	p.tbl = t
	if err := p.where(t, st.where, true); err != nil {
		return err
	}
	eq := 0
	for _, r := range st.where {
		if t.ck != nil && r.col == t.ck.name && r.op == "=" {
			eq++
		}
	}
	if eq > 0 && len(st.where) > 2 {
		return invalid("Clustering column \"%s\" cannot be restricted by both an equality and an inequality relation", t.ck.name)
	}
	return p.using(t, st.ts, nil)
}

// literal encodes a literal for a column of type typ.
func literal(t token, col, typ string) ([]byte, message.Error) {
	bad := func(kind string) message.Error {
		return invalid("Invalid %s constant (%s) for \"%s\" of type %s", kind, t.raw, col, typ)
	}
	switch {
	case t.kind == tkIdent && t.s == "null":
		return nil, nil
	case t.kind == tkString:
		if typ != "text" && typ != "varchar" {
			return nil, bad("STRING")
		}
		return []byte(t.s), nil
	case t.kind == tkHex:
		if typ != "blob" {
			return nil, bad("HEX")
		}
		b := make([]byte, len(t.s)/2)
		for i := range b {
			v, _ := strconv.ParseUint(t.s[2*i:2*i+2], 16, 8)
			b[i] = byte(v)
		}
		return b, nil
	case t.kind == tkInt:
		n, err := strconv.ParseInt(t.s, 10, 64)
		switch {
		case err != nil || typ != "int" && typ != "bigint" && typ != "counter":
			return nil, bad("INTEGER")
		case typ == "int" && (n < math.MinInt32 || n > math.MaxInt32):
			return nil, bad("INTEGER")
		case typ == "int":
			return put32(uint32(n)), nil
		}
		return put64(uint64(n)), nil
	case t.kind == tkIdent && (t.s == "true" || t.s == "false"):
		if typ != "boolean" {
			return nil, bad("BOOLEAN")
		}
		if t.s == "true" {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	}
	return nil, bad("")
}

// validate checks a bound value of a column of type typ as the type's
// serializer does (a MarshalException: an InvalidRequest).
func validate(typ string, b []byte) message.Error {
	switch typ {
	case "text", "varchar":
		if !utf8.Valid(b) {
			return invalid("String didn't validate.")
		}
	case "bigint", "counter":
		if len(b) != 8 && len(b) != 0 {
			return invalid("Expected 8 or 0 byte long (%d)", len(b))
		}
	case "int":
		if len(b) != 4 && len(b) != 0 {
			return invalid("Expected 4 or 0 byte int (%d)", len(b))
		}
	case "boolean":
		if len(b) > 1 {
			return invalid("Expected 1 or 0 byte value (%d)", len(b))
		}
	}
	return nil
}

// binding is one execution's values: a bound value, or nil with null or
// unset set.
type binding struct {
	vals []*primitive.Value
}

// value returns tm's bytes for a column of type typ, validated; null and
// unset report a null or unset marker.
func (b binding) value(tm term, col, typ string) (v []byte, null, unset bool, err message.Error) {
	if tm.marker < 0 {
		v, err = literal(tm.lit, col, typ)
		return v, v == nil && err == nil, false, err
	}
	pv := b.vals[tm.marker]
	switch {
	case pv == nil || pv.Type == primitive.ValueTypeNull:
		return nil, true, false, nil
	case pv.Type == primitive.ValueTypeUnset:
		return nil, false, true, nil
	}
	v = pv.Contents
	if v == nil {
		v = []byte{}
	}
	return v, false, false, validate(typ, v)
}

// key binds a key column restricted by = (or an INSERT's value for it):
// not null, and for the partition key not empty; neither above
// maxKeyLen bytes.
func (b binding) key(c *column, tm term) ([]byte, message.Error) {
	v, null, unset, err := b.value(tm, c.name, c.typ)
	switch {
	case err != nil:
		return nil, err
	case unset:
		return nil, invalid("Invalid unset value for column %s", c.name)
	case null:
		return nil, invalid("Invalid null value in condition for column %s", c.name)
	}
	return v, nil
}

func checkPartitionKey(v []byte) message.Error {
	if len(v) == 0 {
		return invalid("Key may not be empty")
	}
	return checkKeyLen(v)
}

func checkKeyLen(v []byte) message.Error {
	if len(v) > maxKeyLen {
		return invalid("Key length of %d is longer than maximum of %d", len(v), maxKeyLen)
	}
	return nil
}

// int64Of returns a bound bigint; int32Of a bound int.
func int64Of(v []byte) int64 { return int64(be64(v)) }
func int32Of(v []byte) int32 { return int32(uint32(be64(v))) }

// mutation is one statement's write, checked and ready to apply.
type mutation struct {
	tbl     *table
	pk      string
	size    int // its part of a batch's size
	counter bool
	apply   func(p *partition)
}

// buildWrite checks one INSERT, UPDATE or DELETE with its values at the
// node's second now and builds its mutation, in Cassandra 4.0's order:
// the partition key, the clustering key, the timestamp and TTL, the
// values.
func (s *Server) buildWrite(p *prepared, b binding, defaultTS, now int64) (*mutation, message.Error) {
	t := p.tbl
	m := &mutation{tbl: t, counter: t.counter}
	var where []relation
	var ts, ttl *term
	cells := map[string]term{}
	var ops []assignment
	marker := false
	switch st := p.stmt.(type) {
	case insertStmt:
		for i, c := range st.cols {
			cells[c] = st.vals[i]
		}
		where = append(where, relation{col: t.pk.name, op: "=", t: cells[t.pk.name]})
		if t.ck != nil {
			where = append(where, relation{col: t.ck.name, op: "=", t: cells[t.ck.name]})
		}
		ts, ttl, marker = st.ts, st.ttl, true
	case updateStmt:
		where, ts, ttl = st.where, st.ts, st.ttl
		for _, a := range st.sets {
			if a.op == "=" {
				cells[a.col] = a.t
			} else {
				ops = append(ops, a)
			}
		}
	case deleteStmt:
		where, ts = st.where, st.ts
	}
	// Keys.
	var pk []byte
	var ckEq []byte
	hasEq := false
	var r rng
	hasRange := false
	for _, rel := range where {
		c := t.byName[rel.col]
		if c.kind == "partition_key" {
			v, err := b.key(c, rel.t)
			if err != nil {
				return nil, err
			}
			if err := checkPartitionKey(v); err != nil {
				return nil, err
			}
			pk = v
		}
	}
	for _, rel := range where {
		c := t.byName[rel.col]
		if c.kind != "clustering" {
			continue
		}
		v, err := b.key(c, rel.t)
		if err != nil {
			return nil, err
		}
		m.size += len(v)
		k := []byte(sortKey(c.typ, v))
		switch rel.op {
		case "=":
			if err := checkKeyLen(v); err != nil {
				return nil, err
			}
			ckEq, hasEq = v, true
		case ">=", ">":
			r.lo, r.loIncl, hasRange = k, rel.op == ">=", true
		case "<", "<=":
			r.hi, r.hiIncl, hasRange = k, rel.op == "<=", true
		}
	}
	m.pk = string(pk)
	ck := ""
	if hasEq {
		ck = sortKey(t.ck.typ, ckEq)
	}
	// Timestamp and TTL.
	stamp := defaultTS
	if ts != nil {
		v, null, unset, err := b.value(*ts, "[timestamp]", "bigint")
		switch {
		case err != nil:
			return nil, err
		case null:
			return nil, invalid("Invalid null value of timestamp")
		case !unset && len(v) == 8:
			stamp = int64Of(v)
		}
	}
	var exp int64
	if ttl != nil {
		v, null, unset, err := b.value(*ttl, "[ttl]", "int")
		switch {
		case err != nil:
			return nil, err
		case null: // Cassandra 4.0: a null TTL is none
		case !unset && len(v) == 4:
			n := int64(int32Of(v))
			switch {
			case n < 0:
				return nil, invalid("A TTL must be greater or equal to 0, but was %d", n)
			case n > maxTTL:
				return nil, invalid("ttl is too large. requested (%d) maximum (%d)", n, maxTTL)
			case n > 0 && now+n > maxExpiration:
				return nil, invalid("Request on table %s.%s with ttl of %d seconds exceeds maximum supported expiration "+
					"date of 2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the expiration date overflow "+
					"policy or upgrade to a version where this limitation is fixed. See CASSANDRA-14092 for more details.", t.ks, t.name, n)
			case n > 0:
				exp = now + n
			}
		}
	}
	// Values.
	type put struct {
		col string
		c   cell
	}
	var puts []put
	if marker {
		puts = append(puts, put{"", cell{v: []byte{}, ts: stamp, exp: exp}})
	}
	for col, tm := range cells {
		c := t.byName[col]
		if c.kind != "regular" {
			continue
		}
		v, null, unset, err := b.value(tm, c.name, c.typ)
		switch {
		case err != nil:
			return nil, err
		case unset:
			continue
		case null:
			m.size += cellOverhead
			puts = append(puts, put{col, cell{ts: stamp}})
		default:
			m.size += cellOverhead + len(v)
			puts = append(puts, put{col, cell{v: v, ts: stamp, exp: exp}})
		}
	}
	type inc struct {
		col   string
		delta int64
	}
	var incs []inc
	for _, a := range ops {
		v, null, unset, err := b.value(a.t, a.col, "counter")
		switch {
		case err != nil:
			return nil, err
		case null:
			return nil, invalid("Invalid null value for counter increment")
		case unset:
			continue
		}
		d := int64Of(v)
		if a.op == "-" {
			d = -d
		}
		m.size += cellOverhead + counterContext
		incs = append(incs, inc{a.col, d})
	}
	_, isDelete := p.stmt.(deleteStmt)
	switch {
	case isDelete && hasEq:
		m.size += rowDeletion
	case isDelete && hasRange:
		m.size += rangeDeletion
	case isDelete: // the partition deletion, counted once a partition
	case exp > 0:
		m.size += rowLiveness + expiringExtra
	default:
		m.size += rowLiveness
	}
	m.apply = func(part *partition) {
		switch {
		case isDelete && hasEq:
			part.deletePoint(ck, stamp)
		case isDelete && hasRange:
			r.ts = stamp
			part.deleteRange(r)
		case isDelete:
			part.deletePartition(stamp)
		}
		for _, x := range puts {
			part.put(ck, x.col, x.c)
		}
		for _, x := range incs {
			part.add(ck, x.col, x.delta, stamp)
		}
	}
	return m, nil
}

// blockFor is how many replicas a request at cl waits for at replication
// factor rf (ConsistencyLevel.blockFor).
func blockFor(cl primitive.ConsistencyLevel, rf int) int {
	switch cl {
	case primitive.ConsistencyLevelTwo:
		return 2
	case primitive.ConsistencyLevelThree:
		return 3
	case primitive.ConsistencyLevelQuorum, primitive.ConsistencyLevelLocalQuorum, primitive.ConsistencyLevelEachQuorum,
		primitive.ConsistencyLevelSerial, primitive.ConsistencyLevelLocalSerial:
		return rf/2 + 1
	case primitive.ConsistencyLevelAll:
		return rf
	}
	return 1
}

// checkReplicas refuses a request at cl on keyspace k when it needs more
// replicas than the one node holds.
func checkReplicas(cl primitive.ConsistencyLevel, rf int) message.Error {
	alive := min(rf, 1)
	if n := blockFor(cl, rf); n > alive {
		return &message.Unavailable{ErrorMessage: "Cannot achieve consistency level " + cl.String(),
			Consistency: cl, Required: int32(n), Alive: int32(alive)}
	}
	return nil
}

// counterRules refuses, as Cassandra 4.0 does, a batch that mixes counter
// and other statements or holds counters in a LOGGED batch, and a
// counter write at ANY or a serial level.
func counterRules(muts []*mutation, cl primitive.ConsistencyLevel, batch *primitive.BatchType) message.Message {
	var counters, others int
	var name string
	for _, m := range muts {
		if m.counter {
			counters, name = counters+1, m.tbl.name
		} else {
			others++
		}
	}
	switch {
	case batch != nil && *batch == primitive.BatchTypeCounter && others > 0:
		return invalid("Cannot include non-counter statement in a counter batch")
	case batch != nil && *batch == primitive.BatchTypeLogged && counters > 0:
		return invalid("Cannot include a counter statement in a logged batch")
	case counters > 0 && others > 0:
		return invalid("Counter and non-counter mutations cannot exist in the same batch")
	case counters > 0 && cl == primitive.ConsistencyLevelAny:
		return invalid("Consistency level ANY is not yet supported for counter table %s", name)
	case counters > 0 && (cl == primitive.ConsistencyLevelSerial || cl == primitive.ConsistencyLevelLocalSerial):
		return invalid("Counter operations are inherently non-serializable")
	case batch == nil && (cl == primitive.ConsistencyLevelSerial || cl == primitive.ConsistencyLevelLocalSerial):
		return invalid("You must use conditional updates for serializable writes")
	}
	return nil
}

// write runs statements as one request: one statement, or a batch
// (batch: its type). Checks run in Cassandra 4.0's order and nothing is
// applied unless all pass.
func (s *Server) write(stmts []*prepared, binds []binding, cl primitive.ConsistencyLevel, defaultTS *int64, batch *primitive.BatchType) message.Message {
	nowT := s.now()
	ts := nowT.UnixMicro()
	if defaultTS != nil {
		ts = *defaultTS
	}
	var muts []*mutation
	for i, p := range stmts {
		m, err := s.buildWrite(p, binds[i], ts, nowT.Unix())
		if err != nil {
			return err
		}
		muts = append(muts, m)
	}
	if err := counterRules(muts, cl, batch); err != nil {
		return err
	}
	type pkey struct{ ks, pk string } // a mutation: one partition key of one keyspace, every table's part
	sizes := map[pkey]int{}
	total := 0
	for _, m := range muts {
		k := pkey{m.tbl.ks, m.pk}
		if _, ok := sizes[k]; !ok {
			sizes[k] = partitionBase
			total += partitionBase
		}
		sizes[k] += m.size
		total += m.size
	}
	if len(sizes) > 1 && total > batchFailBytes {
		return invalid("Batch too large")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rf := 1
	for _, m := range muts {
		if k := s.keyspaces[m.tbl.ks]; k != nil {
			rf = k.rf()
		}
		if err := checkReplicas(cl, rf); err != nil {
			return err
		}
	}
	for _, n := range sizes {
		if n > maxMutation {
			wt := primitive.WriteTypeSimple
			if len(muts) > 1 {
				wt = primitive.WriteTypeBatch
			}
			return &message.WriteFailure{
				ErrorMessage: "Operation failed - received 0 responses and 1 failures: UNKNOWN from localhost/127.0.0.1:7000",
				Consistency:  cl, BlockFor: int32(blockFor(cl, rf)), NumFailures: 1, WriteType: wt,
				FailureReasons: []*primitive.FailureReason{{Endpoint: net.IPv4(127, 0, 0, 1).To4(), Code: primitive.FailureCodeUnknown}},
			}
		}
	}
	for _, m := range muts {
		m.apply(m.tbl.part(m.pk))
	}
	return &message.VoidResult{}
}

// pageState is a read's paging state: the rows returned so far (for
// LIMIT) and the sort key of the last one.
func pageState(count int, last string) []byte {
	return append(binary.AppendUvarint(nil, uint64(count)), last...)
}

func parsePageState(b []byte) (int, string, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > math.MaxInt32 {
		return 0, "", false
	}
	return int(n), string(b[k:]), true
}

// read runs a SELECT of a user table: one page of pageSize rows (<= 0:
// all) after paging state state.
func (s *Server) read(p *prepared, b binding, cl primitive.ConsistencyLevel, pageSize int32, state []byte) message.Message {
	if cl == primitive.ConsistencyLevelAny {
		return invalid("ANY ConsistencyLevel is only supported for writes")
	}
	st := p.stmt.(selectStmt)
	t := p.tbl
	var pk []byte
	var bounds []rng // the clustering restrictions, as ranges
	for _, rel := range st.where {
		c := t.byName[rel.col]
		v, err := b.key(c, rel.t)
		if err != nil {
			return err
		}
		if c.kind == "partition_key" {
			pk = v
			continue
		}
		k := []byte(sortKey(c.typ, v))
		switch rel.op {
		case "=":
			bounds = append(bounds, rng{lo: k, hi: k, loIncl: true, hiIncl: true})
		case ">", ">=":
			bounds = append(bounds, rng{lo: k, loIncl: rel.op == ">="})
		default:
			bounds = append(bounds, rng{hi: k, hiIncl: rel.op == "<="})
		}
	}
	if err := checkPartitionKey(pk); err != nil {
		return err
	}
	limit := math.MaxInt
	if st.limit != nil {
		v, null, _, err := b.value(*st.limit, "[limit]", "int")
		if err != nil {
			return err
		}
		if null || len(v) != 4 || int32Of(v) <= 0 {
			return invalid("LIMIT must be strictly positive")
		}
		limit = int(int32Of(v))
	}
	count, after, resume := 0, "", len(state) > 0
	if resume {
		var ok bool
		if count, after, ok = parsePageState(state); !ok {
			return &message.ProtocolError{ErrorMessage: "Invalid value for the paging state"}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rf := 1
	if k := s.keyspaces[t.ks]; k != nil {
		rf = k.rf()
	}
	if err := checkReplicas(cl, rf); err != nil {
		return err
	}
	s.reads.Add(1)
	now := s.now().Unix()
	res := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: int32(len(p.result)), Columns: p.result}, Data: message.RowSet{}}
	part := t.parts[string(pk)]
	if part == nil {
		return res
	}
	for _, k := range part.sorted() {
		if resume && k <= after || slices.ContainsFunc(bounds, func(r rng) bool { return !r.holds(k) }) {
			continue
		}
		if count >= limit {
			break
		}
		r := part.rows[k]
		live := false
		for _, c := range r.cells {
			live = live || c.live(now)
		}
		if !live {
			continue
		}
		res.Data = append(res.Data, s.rowOf(t, st, pk, k, r, now))
		count++
		if pageSize > 0 && len(res.Data) == int(pageSize) && count < limit {
			res.Metadata.PagingState = pageState(count, k)
			break
		}
	}
	return res
}

// rowOf renders the selected columns of row k.
func (s *Server) rowOf(t *table, st selectStmt, pk []byte, k string, r *row, now int64) message.Row {
	val := func(c *column) []byte {
		switch c.kind {
		case "partition_key":
			return pk
		case "clustering":
			return rawKey(c.typ, k)
		}
		if x, ok := r.cells[c.name]; ok && x.live(now) {
			return x.v
		}
		return nil
	}
	var out message.Row
	if st.star {
		for _, c := range t.ordered() {
			out = append(out, val(c))
		}
	}
	for _, sel := range st.sel {
		c := t.byName[sel.col]
		x, ok := r.cells[c.name]
		ok = ok && x.live(now)
		switch {
		case sel.fn == "":
			out = append(out, val(c))
		case !ok:
			out = append(out, nil)
		case sel.fn == "writetime":
			out = append(out, put64(uint64(x.ts)))
		case x.exp == 0:
			out = append(out, nil)
		default:
			out = append(out, put32(uint32(x.exp-now)))
		}
	}
	return out
}

// checkName refuses a keyspace or table name Cassandra 4.0 refuses.
func checkName(kind, name string) message.Error {
	ok := name != "" && len(name) <= maxNameLen
	for _, c := range name {
		ok = ok && (c < utf8.RuneSelf && (isLetter(byte(c)) || isDigit(byte(c)) || c == '_'))
	}
	if !ok {
		return invalid("%s name must not be empty, more than %d characters long, or contain non-alphanumeric-underscore characters (got \"%s\")",
			kind, maxNameLen, name)
	}
	return nil
}

// ddl runs CREATE, DROP and USE; connKS is the connection's keyspace,
// setKS sets it.
func (s *Server) ddl(p *prepared, setKS func(string)) message.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st := p.stmt.(type) {
	case useStmt:
		if s.keyspaces[st.ks] == nil && !isSystemKeyspace(st.ks) {
			return invalid("Keyspace '%s' does not exist", st.ks)
		}
		setKS(st.ks)
		return &message.SetKeyspaceResult{Keyspace: st.ks}
	case createKeyspaceStmt:
		if err := checkName("Keyspace", st.name); err != nil {
			return err
		}
		if isSystemKeyspace(st.name) || s.keyspaces[st.name] != nil {
			if st.ifNotExists {
				return &message.VoidResult{}
			}
			return &message.AlreadyExists{ErrorMessage: fmt.Sprintf("Cannot add existing keyspace \"%s\"", st.name), Keyspace: st.name}
		}
		repl, err := replication(st.replication)
		if err != nil {
			return err
		}
		s.keyspaces[st.name] = &keyspace{name: st.name, replication: repl, tables: map[string]*table{}}
		return &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: st.name}
	case createTableStmt:
		return s.createTable(p.ks, st)
	case dropStmt:
		if st.keyspace {
			if s.keyspaces[st.table.ks] == nil {
				if st.ifExists {
					return &message.VoidResult{}
				}
				return invalid("Keyspace '%s' doesn't exist", st.table.ks)
			}
			delete(s.keyspaces, st.table.ks)
			return &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeDropped, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: st.table.ks}
		}
		ks := cmpOr(st.table.ks, p.ks)
		k := s.keyspaces[ks]
		if k == nil || k.tables[st.table.name] == nil {
			if st.ifExists && k != nil {
				return &message.VoidResult{}
			}
			if k == nil {
				return invalid("Keyspace '%s' doesn't exist", ks)
			}
			return invalid("Table '%s.%s' doesn't exist", ks, st.table.name)
		}
		delete(k.tables, st.table.name)
		return &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeDropped, Target: primitive.SchemaChangeTargetTable, Keyspace: ks, Object: st.table.name}
	}
	return invalid("unsupported statement")
}

// replication checks and normalises a keyspace's replication map.
func replication(opts map[string]string) (map[string]string, message.Error) {
	out := map[string]string{}
	for k, v := range opts {
		out[k] = v
	}
	class := out["class"]
	if class == "" {
		return nil, &message.ConfigError{ErrorMessage: "Missing replication strategy class"}
	}
	if !strings.Contains(class, ".") {
		class = "org.apache.cassandra.locator." + class
	}
	out["class"] = class
	switch class {
	case "org.apache.cassandra.locator.SimpleStrategy":
		rf, ok := out["replication_factor"]
		if !ok {
			return nil, &message.ConfigError{ErrorMessage: "SimpleStrategy requires a replication_factor strategy option."}
		}
		if n, err := strconv.Atoi(rf); err != nil || n < 0 {
			return nil, &message.ConfigError{ErrorMessage: fmt.Sprintf("Replication factor must be non-negative integer; found %s", rf)}
		}
		for k := range out {
			if k != "class" && k != "replication_factor" {
				return nil, &message.ConfigError{ErrorMessage: fmt.Sprintf("Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace", k)}
			}
		}
	case "org.apache.cassandra.locator.NetworkTopologyStrategy":
		dcs := 0
		for k, v := range out {
			switch {
			case k == "class":
			case k != dataCenter:
				return nil, &message.ConfigError{ErrorMessage: fmt.Sprintf("Unrecognized strategy option {%s} passed to NetworkTopologyStrategy for keyspace", k)}
			default:
				if n, err := strconv.Atoi(v); err != nil || n < 0 {
					return nil, &message.ConfigError{ErrorMessage: fmt.Sprintf("Replication factor must be non-negative integer; found %s", v)}
				}
				dcs++
			}
		}
		if dcs == 0 {
			return nil, &message.ConfigError{ErrorMessage: "Configuration for at least one datacenter must be present"}
		}
	default:
		return nil, &message.ConfigError{ErrorMessage: fmt.Sprintf("Unable to find replication strategy class '%s'", opts["class"])}
	}
	return out, nil
}

func (s *Server) createTable(connKS string, st createTableStmt) message.Message {
	ks := cmpOr(st.table.ks, connKS)
	if ks == "" {
		return invalid("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	if err := checkName("Table", st.table.name); err != nil {
		return err
	}
	k := s.keyspaces[ks]
	if k == nil {
		return invalid("Keyspace '%s' doesn't exist", ks)
	}
	if k.tables[st.table.name] != nil {
		if st.ifNotExists {
			return &message.VoidResult{}
		}
		return &message.AlreadyExists{ErrorMessage: fmt.Sprintf("Cannot add already existing table \"%s\" to keyspace \"%s\"", st.table.name, ks),
			Keyspace: ks, Table: st.table.name}
	}
	t := &table{ks: ks, name: st.table.name, byName: map[string]*column{}, parts: map[string]*partition{}}
	for _, c := range st.cols {
		if _, ok := colTypes[c.typ]; !ok {
			return invalid("the test double does not support type %s (column %s)", c.typ, c.name)
		}
		if t.byName[c.name] != nil {
			return invalid("Multiple definition of identifier %s", c.name)
		}
		typ := c.typ
		if typ == "varchar" {
			typ = "text"
		}
		col := &column{name: c.name, typ: typ, kind: "regular", pos: -1}
		t.cols = append(t.cols, col)
		t.byName[c.name] = col
	}
	if len(st.pk) == 0 {
		return invalid("No PRIMARY KEY specifed for table '%s' (exactly one required)", st.table.name)
	}
	if len(st.pk) > 1 || len(st.ck) > 1 {
		return invalid("the test double supports one partition key column and at most one clustering column")
	}
	for i, name := range append(slices.Clone(st.pk), st.ck...) {
		c := t.byName[name]
		if c == nil {
			return invalid("Unknown definition %s referenced in PRIMARY KEY", name)
		}
		if c.typ == "counter" {
			return invalid("counter type is not supported for PRIMARY KEY column '%s'", name)
		}
		c.pos = 0
		if i == 0 {
			c.kind, t.pk = "partition_key", c
		} else {
			c.kind, t.ck = "clustering", c
		}
	}
	counters, others := 0, 0
	for _, c := range t.cols {
		if c.kind == "regular" {
			if c.typ == "counter" {
				counters++
			} else {
				others++
			}
		}
	}
	if counters > 0 && others > 0 {
		return invalid("Cannot mix counter and non counter columns in the same table")
	}
	t.counter = counters > 0
	k.tables[t.name] = t
	return &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetTable, Keyspace: ks, Object: t.name}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
