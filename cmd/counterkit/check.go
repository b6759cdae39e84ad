package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
)

const checkUsage = `usage: counterkit check cassandra -hosts HOST[,HOST] -keyspace KEYSPACE [-prefix P] [-consistency OP=LEVEL,...]
       counterkit check riak -addr ADDR[,ADDR] -type BUCKET_TYPE -bucket BUCKET
       counterkit check embedded -data DIR

Checks that a store is configured so that counterkit keeps its guarantees,
prints what it found, and exits 1 when a check fails, naming the sentinel
(crdt.ErrMisconfiguredStore, crdt.ErrInvalidConfig, crdt.ErrCorruptEncoding,
crdt.ErrUnavailable when the store cannot be reached).

cassandra  the consistency level of each adapter operation and whether
           cassandra.CheckConsistency accepts them (-consistency overrides
           levels, e.g. siblings-fetch=LOCAL_QUORUM,siblings-put=LOCAL_QUORUM);
           the keyspace's replication; the contacted node's commitlog_sync;
           and each adapter table, column by column, against
           cassandra.Schema, with its gc_grace_seconds.
riak       the bucket's properties as Riak returns them, and the verdict of
           riak.CheckBucket (allow_mult, last_write_wins, datatype, consistent,
           and the default bucket type, which has no dotted version vectors).
embedded   DB.Verify: the engine's page structure and the checksum of every
           stored value and tombstone. The directory must not be in use.
`

func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stderr, checkUsage)
			return 0
		}
		return fail(stderr, "check", usagef("%w: name the store to check: cassandra, riak or embedded\n\n%s", crdt.ErrInvalidConfig, checkUsage))
	}
	switch args[0] {
	case "cassandra":
		return checkCassandra(args[1:], stdout, stderr)
	case "riak":
		return checkRiak(args[1:], stdout, stderr)
	case "embedded":
		return checkEmbedded(args[1:], stdout, stderr)
	}
	return fail(stderr, "check", usagef("%w: unknown store %q: cassandra, riak or embedded", crdt.ErrInvalidConfig, args[0]))
}

func checkFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("check "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, checkUsage+"\nFlags of check "+name+":\n"); fs.PrintDefaults() }
	return fs
}

// verdict prints the result line of one check and returns the exit status.
func verdict(stdout, stderr io.Writer, what string, err error) int {
	if err != nil {
		fmt.Fprintf(stdout, "FAIL  %s\n", what)
		return fail(stderr, "check", err)
	}
	fmt.Fprintf(stdout, "ok    %s\n", what)
	return 0
}

func checkEmbedded(args []string, stdout, stderr io.Writer) int {
	fs := checkFlags("embedded", stderr)
	dir := fs.String("data", "", "the data directory")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if *dir == "" || fs.NArg() > 0 {
		return fail(stderr, "check", usagef("%w: check embedded takes -data DIR and no arguments", crdt.ErrInvalidConfig))
	}
	db, err := openEmbedded(*dir)
	if err != nil {
		return fail(stderr, "check", err)
	}
	defer db.Close()
	fmt.Fprintf(stdout, "data file  %s\n", db.Path())
	return verdict(stdout, stderr, "verify: page structure and every checksum", db.Verify())
}

// cassandraOps are the adapter's operations, in order, with their flag
// names.
var cassandraOps = []cassandra.Op{cassandra.OpSiblingsFetch, cassandra.OpSiblingsPut,
	cassandra.OpPartitionRead, cassandra.OpPartitionReadComplete, cassandra.OpPartitionApply}

func opFlagName(op cassandra.Op) string { return strings.ReplaceAll(op.String(), " ", "-") }

// parseConsistency parses OP=LEVEL,... into levels.
func parseConsistency(s string) (map[cassandra.Op]gocql.Consistency, error) {
	levels := map[cassandra.Op]gocql.Consistency{}
	if s == "" {
		return levels, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, level, ok := strings.Cut(strings.TrimSpace(part), "=")
		i := slices.IndexFunc(cassandraOps, func(op cassandra.Op) bool { return opFlagName(op) == name })
		if !ok || i < 0 {
			var names []string
			for _, op := range cassandraOps {
				names = append(names, opFlagName(op))
			}
			return nil, usagef("%w: -consistency %q: want OP=LEVEL with OP one of %s", crdt.ErrInvalidConfig, part, strings.Join(names, ", "))
		}
		c, err := gocql.ParseConsistencyWrapper(strings.ToUpper(level))
		if err != nil {
			return nil, usagef("%w: -consistency %q: %v", crdt.ErrInvalidConfig, part, err)
		}
		levels[cassandraOps[i]] = c
	}
	return levels, nil
}

func checkCassandra(args []string, stdout, stderr io.Writer) int {
	fs := checkFlags("cassandra", stderr)
	hosts := fs.String("hosts", "", "contact points, comma-separated (host or host:port)")
	keyspace := fs.String("keyspace", "", "the keyspace")
	prefix := fs.String("prefix", "", "the table prefix (empty: the adapter's default, counterkit_)")
	consistency := fs.String("consistency", "", "levels to check instead of the defaults: OP=LEVEL,... (OP: siblings-fetch, siblings-put, partition-read, partition-read-complete, partition-apply)")
	timeout := fs.Duration("timeout", 10*time.Second, "connect and request timeout")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if *hosts == "" || *keyspace == "" || fs.NArg() > 0 {
		return fail(stderr, "check", usagef("%w: check cassandra takes -hosts and -keyspace", crdt.ErrInvalidConfig))
	}
	levels, err := parseConsistency(*consistency)
	if err != nil {
		return fail(stderr, "check", err)
	}
	schema, err := cassandra.Schema(*keyspace, *prefix)
	if err != nil {
		return fail(stderr, "check", usageError{err})
	}
	var failed []error

	// Consistency levels: no server needed.
	fmt.Fprintln(stdout, "consistency levels:")
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, op := range cassandraOps {
		l, set := levels[op]
		if !set || l == gocql.Any {
			l = cassandra.DefaultConsistency(op)
		}
		src := "default"
		if set {
			src = "-consistency"
		}
		fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", opFlagName(op), l, src)
	}
	tw.Flush()
	if err := cassandra.CheckConsistency(levels); err != nil {
		failed = append(failed, err)
		fmt.Fprintf(stdout, "FAIL  consistency: %v\n", err)
	} else {
		fmt.Fprintln(stdout, "ok    consistency: every read overlaps the writes it depends on; complete reads at ALL")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4**timeout)
	defer cancel()
	sess, err := cassandraSession(ctx, splitList(*hosts), "", *timeout)
	if err != nil {
		fmt.Fprintf(stdout, "FAIL  connect to %s\n", *hosts)
		return fail(stderr, "check", errors.Join(append(failed, err)...))
	}
	defer sess.Close()

	// Replication.
	var replication map[string]string
	err = sess.Query(`SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?`, *keyspace).ScanContext(ctx, &replication)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		err = fmt.Errorf("%w: keyspace %q does not exist", crdt.ErrMisconfiguredStore, *keyspace)
		failed = append(failed, err)
		fmt.Fprintf(stdout, "FAIL  keyspace %s: does not exist\n", *keyspace)
	case err != nil:
		fmt.Fprintf(stdout, "FAIL  read keyspace %s\n", *keyspace)
		return fail(stderr, "check", errors.Join(append(failed, fmt.Errorf("%w: %v", crdt.ErrUnavailable, err))...))
	default:
		fmt.Fprintf(stdout, "keyspace %s replication: %s\n", *keyspace, formatMap(replication))
		if strings.HasSuffix(replication["class"], "SimpleStrategy") && replication["replication_factor"] == "1" {
			fmt.Fprintln(stdout, "note  replication factor 1: one node holds every value (development only)")
		}
	}

	// Durability of acknowledged writes: informational (Cassandra 4.0+
	// exposes the contacted node's settings in system_views.settings).
	var sync string
	if err := sess.Query(`SELECT value FROM system_views.settings WHERE name = 'commitlog_sync'`).ScanContext(ctx, &sync); err != nil {
		fmt.Fprintf(stdout, "note  commitlog_sync: could not read it (%v)\n", err)
	} else {
		fmt.Fprintf(stdout, "commitlog_sync (contacted node): %s\n", sync)
		if sync == "periodic" {
			fmt.Fprintln(stdout, "note  commitlog_sync periodic acknowledges writes before they reach the disk; for balances use batch or group")
		}
	}

	// Tables.
	for _, stmt := range schema {
		want, err := parseCreateTable(stmt)
		if err != nil {
			return fail(stderr, "check", err)
		}
		got, err := readTable(ctx, sess, *keyspace, want.name)
		if err != nil {
			fmt.Fprintf(stdout, "FAIL  read table %s.%s\n", *keyspace, want.name)
			return fail(stderr, "check", errors.Join(append(failed, err)...))
		}
		fmt.Fprintf(stdout, "table %s.%s:\n", *keyspace, want.name)
		fmt.Fprintf(stdout, "  want  %s\n", want)
		if got == nil {
			fmt.Fprintln(stdout, "  got   (no such table)")
		} else {
			fmt.Fprintf(stdout, "  got   %s\n", got)
		}
		if got != nil {
			var grace int
			if err := sess.Query(`SELECT gc_grace_seconds FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?`,
				*keyspace, want.name).ScanContext(ctx, &grace); err == nil {
				fmt.Fprintf(stdout, "  gc_grace_seconds %d: run repairs more often than every %s\n", grace, time.Duration(grace)*time.Second)
			}
		}
		if err := compareTable(want, got); err != nil {
			failed = append(failed, err)
			fmt.Fprintf(stdout, "FAIL  table %s: %v\n", want.name, err)
		} else {
			fmt.Fprintf(stdout, "ok    table %s matches cassandra.Schema\n", want.name)
		}
	}
	if len(failed) > 0 {
		return fail(stderr, "check", errors.Join(failed...))
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ", ")
}

// tableShape is a table's columns and primary key, as cassandra.Schema
// states them and as system_schema.columns reports them.
type tableShape struct {
	name       string
	columns    map[string]string // name → CQL type
	partition  []string
	clustering []string
	order      []string // clustering order: asc or desc, per clustering column
}

func (t *tableShape) String() string {
	names := make([]string, 0, len(t.columns))
	for n := range t.columns {
		names = append(names, n)
	}
	slices.Sort(names)
	cols := make([]string, len(names))
	for i, n := range names {
		cols[i] = n + " " + t.columns[n]
	}
	ck := make([]string, len(t.clustering))
	for i, c := range t.clustering {
		ck[i] = c + " " + t.order[i]
	}
	return fmt.Sprintf("(%s) PRIMARY KEY ((%s), %s)", strings.Join(cols, ", "), strings.Join(t.partition, ", "), strings.Join(ck, ", "))
}

var (
	createRe = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS "[a-z0-9_]+"\."([a-z0-9_]+)" \((.*)\)`)
	pkRe     = regexp.MustCompile(`^PRIMARY KEY \(\(([^)]*)\)(?:, *(.*))?\)$`)
)

// parseCreateTable reads a statement of cassandra.Schema.
func parseCreateTable(stmt string) (*tableShape, error) {
	m := createRe.FindStringSubmatch(strings.TrimSpace(stmt))
	if m == nil {
		return nil, fmt.Errorf("%w: cannot read cassandra.Schema statement %q", crdt.ErrInvalidConfig, stmt)
	}
	t := &tableShape{name: m[1], columns: map[string]string{}}
	body := m[2]
	if i := strings.LastIndex(body, ") WITH"); i >= 0 {
		body = body[:i]
	}
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), ",")
		if line == "" {
			continue
		}
		if pk := pkRe.FindStringSubmatch(line); pk != nil {
			t.partition = splitList(pk[1])
			t.clustering = splitList(pk[2])
			for range t.clustering {
				t.order = append(t.order, "asc")
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%w: cannot read column %q of cassandra.Schema", crdt.ErrInvalidConfig, line)
		}
		t.columns[f[0]] = f[1]
	}
	return t, nil
}

// readTable reads a table's shape from system_schema.columns; nil when the
// table does not exist.
func readTable(ctx context.Context, sess *gocql.Session, keyspace, table string) (*tableShape, error) {
	iter := sess.Query(`SELECT column_name, kind, position, type, clustering_order FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?`,
		keyspace, table).IterContext(ctx)
	t := &tableShape{name: table, columns: map[string]string{}}
	type keyCol struct {
		pos         int
		name, order string
	}
	var pks, cks []keyCol
	var name, kind, typ, order string
	var pos int
	for iter.Scan(&name, &kind, &pos, &typ, &order) {
		t.columns[name] = typ
		switch kind {
		case "partition_key":
			pks = append(pks, keyCol{pos, name, order})
		case "clustering":
			cks = append(cks, keyCol{pos, name, order})
		}
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("%w: read system_schema.columns: %v", crdt.ErrUnavailable, err)
	}
	if len(t.columns) == 0 {
		return nil, nil
	}
	byPos := func(a, b keyCol) int { return a.pos - b.pos }
	slices.SortFunc(pks, byPos)
	slices.SortFunc(cks, byPos)
	for _, k := range pks {
		t.partition = append(t.partition, k.name)
	}
	for _, k := range cks {
		t.clustering = append(t.clustering, k.name)
		t.order = append(t.order, k.order)
	}
	return t, nil
}

// compareTable reports how got differs from want, wrapping
// crdt.ErrMisconfiguredStore.
func compareTable(want, got *tableShape) error {
	if got == nil {
		return fmt.Errorf("%w: table %s does not exist (create it with cassandra.CreateSchema)", crdt.ErrMisconfiguredStore, want.name)
	}
	var diffs []string
	for n, typ := range want.columns {
		switch g, ok := got.columns[n]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("column %s missing", n))
		case g != typ:
			diffs = append(diffs, fmt.Sprintf("column %s is %s, not %s", n, g, typ))
		}
	}
	for n := range got.columns {
		if _, ok := want.columns[n]; !ok {
			diffs = append(diffs, fmt.Sprintf("extra column %s", n))
		}
	}
	if !slices.Equal(want.partition, got.partition) {
		diffs = append(diffs, fmt.Sprintf("partition key (%s), not (%s)", strings.Join(got.partition, ", "), strings.Join(want.partition, ", ")))
	}
	if !slices.Equal(want.clustering, got.clustering) || !slices.Equal(want.order, got.order) {
		diffs = append(diffs, fmt.Sprintf("clustering %v %v, not %v %v", got.clustering, got.order, want.clustering, want.order))
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		return fmt.Errorf("%w: table %s: %s", crdt.ErrMisconfiguredStore, want.name, strings.Join(diffs, "; "))
	}
	return nil
}

func checkRiak(args []string, stdout, stderr io.Writer) int {
	fs := checkFlags("riak", stderr)
	addr := fs.String("addr", "", "protocol-buffers addresses, comma-separated (host:port)")
	typ := fs.String("type", "", "the bucket type (empty: default)")
	bucket := fs.String("bucket", "", "the bucket")
	timeout := fs.Duration("timeout", 10*time.Second, "connect and request timeout")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if *addr == "" || *bucket == "" || fs.NArg() > 0 {
		return fail(stderr, "check", usagef("%w: check riak takes -addr, -type and -bucket", crdt.ErrInvalidConfig))
	}
	bt := *typ
	if bt == "" {
		bt = "default"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4**timeout)
	defer cancel()
	cl, err := riak.NewCluster(ctx, *timeout, splitList(*addr)...)
	if err != nil {
		fmt.Fprintf(stdout, "FAIL  connect to %s\n", *addr)
		return fail(stderr, "check", err)
	}
	defer cl.Stop()
	cmd, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(bt).WithBucket(*bucket).Build()
	if err == nil {
		err = cl.Execute(cmd)
	}
	p := (*riakc.FetchBucketPropsResponse)(nil)
	if err == nil {
		p = cmd.(*riakc.FetchBucketPropsCommand).Response
	}
	if p == nil {
		fmt.Fprintf(stdout, "FAIL  read the properties of bucket %s/%s\n", bt, *bucket)
		return fail(stderr, "check", fmt.Errorf("%w: bucket %s/%s: %v", crdt.ErrUnavailable, bt, *bucket, err))
	}
	fmt.Fprintf(stdout, "bucket %s/%s:\n", bt, *bucket)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, kv := range []struct {
		k string
		v any
	}{
		{"allow_mult", p.AllowMult}, {"last_write_wins", p.LastWriteWins}, {"datatype", quoteEmpty(p.DataType)},
		{"consistent", p.Consistent}, {"n_val", p.NVal}, {"r", p.R}, {"w", p.W}, {"pr", p.Pr}, {"pw", p.Pw},
		{"dw", p.Dw}, {"rw", p.Rw}, {"basic_quorum", p.BasicQuorum}, {"notfound_ok", p.NotFoundOk},
		{"backend", quoteEmpty(p.Backend)}, {"precommit hooks", p.HasPrecommit}, {"postcommit hooks", p.HasPostcommit},
	} {
		fmt.Fprintf(tw, "  %s\t%v\n", kv.k, kv.v)
	}
	tw.Flush()
	return verdict(stdout, stderr, "riak.CheckBucket: concurrent writes are kept as siblings and collapsed by dotted version vectors",
		riak.CheckBucket(ctx, cl, *typ, *bucket))
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
