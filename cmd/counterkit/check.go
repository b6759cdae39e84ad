package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/store"
)

const checkUsage = `usage: counterkit check cassandra -hosts HOST[,HOST] -keyspace KEYSPACE [-prefix P] [-consistency OP=LEVEL,...]
       counterkit check riak -addr ADDR[,ADDR] -type BUCKET_TYPE -bucket BUCKET
       counterkit check embedded -store embedded:DIR
       counterkit check -store embedded:DIR

Checks that a store is configured so that counterkit keeps its guarantees,
prints what it found, and exits 1 when a check fails, naming the sentinel
(crdt.ErrMisconfiguredStore, crdt.ErrInvalidConfig, crdt.ErrCorruptEncoding,
crdt.ErrUnavailable when the store cannot be reached).

cassandra  the consistency level of each adapter operation and whether
           cassandra.CheckConsistency accepts them (-consistency overrides
           levels, e.g. siblings-fetch=LOCAL_QUORUM,siblings-put=LOCAL_QUORUM);
           the keyspace's replication; the contacted node's commitlog_sync;
           and each adapter table, column by column, against
           cassandra.Schema, with its gc_grace_seconds; a table whose
           default_time_to_live is not 0 fails (its rows, counter state
           included, would expire; ledger records expire with a records
           DB's cassandra.Options.SiblingsTTL).
riak       the bucket's properties as Riak returns them (quorums by name:
           one, quorum, all, default), and the verdict of riak.CheckBucket
           (allow_mult, last_write_wins, datatype, consistent, and the
           default bucket type, which has no dotted version vectors).
embedded   DB.Verify (the engine's structure, the buckets' digests, the
           checksum of every stored value and the encoding of every
           tombstone), then a read of every key through the adapter. Any
           error fails the check. It does not decode the values: one that
           its counter cannot read (damaged before it was written,
           another type's) passes; get or inspect decodes a key's. It runs in a child process: a file
           that crashes the engine fails the check
           (crdt.ErrCorruptEncoding), one that makes it loop is stopped at
           -timeout (crdt.ErrUnavailable). The directory must not be in use.
`

func runCheck(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stderr, checkUsage+checkFlagsHint)
			return 0
		}
		if k, _, _ := strings.Cut(storeFlag(args), ":"); k == "embedded" {
			return checkEmbedded(args, stdout, stderr) // -store names the kind
		}
		code := fail(stderr, "check", cli.Usagef("%w: name the store to check: cassandra, riak or embedded", crdt.ErrInvalidConfig))
		fmt.Fprint(stderr, "\n", checkUsage+checkFlagsHint) // apart: fail escapes newlines
		return code
	}
	switch args[0] {
	case "cassandra":
		return checkCassandra(args[1:], stdout, stderr)
	case "riak":
		return checkRiak(args[1:], stdout, stderr)
	case "embedded":
		return checkEmbedded(args[1:], stdout, stderr)
	}
	return fail(stderr, "check", cli.Usagef("%w: unknown store %q: cassandra, riak or embedded", crdt.ErrInvalidConfig, args[0]))
}

// checkFlagsHint ends check's own help, which has no flags of its own.
const checkFlagsHint = `
Each store's flags: counterkit help check cassandra (or riak, embedded).
`

// storeFlag returns the value of the last -store flag in args, "" for
// none.
func storeFlag(args []string) string {
	v := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		name, val, eq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-") || name != "store":
		case eq:
			v = val
		case i+1 < len(args):
			v = args[i+1]
		}
	}
	return v
}

// checkReport is what check prints: what it found, advice, and each
// check's verdict.
type checkReport struct {
	Store  string      `json:"store"`
	OK     bool        `json:"ok"`
	Facts  []checkFact `json:"facts"`
	Notes  []string    `json:"notes,omitempty"`
	Checks []checkItem `json:"checks"`
}

type checkFact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type checkItem struct {
	Name     string `json:"name"`
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
	Sentinel string `json:"sentinel,omitempty"`
}

func newCheckReport(store string) *checkReport {
	return &checkReport{Store: store, Facts: []checkFact{}, Checks: []checkItem{}}
}

// fact records what was found.
func (r *checkReport) fact(name, format string, args ...any) {
	r.Facts = append(r.Facts, checkFact{name, fmt.Sprintf(format, args...)})
}

// note records advice that does not fail the check.
func (r *checkReport) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// check records a verdict: err nil passes.
func (r *checkReport) check(name string, err error) {
	item := checkItem{Name: name, OK: err == nil}
	if err != nil {
		item.Error, item.Sentinel = redact(err), sentinelName(err)
	}
	r.Checks = append(r.Checks, item)
}

// writeTable prints the facts, aligned, then the notes and the verdicts.
func (r *checkReport) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// Facts, notes and errors may carry a server's or a file's bytes.
	fmt.Fprintf(tw, "store\t%s\n", printable(r.Store))
	for _, f := range r.Facts {
		fmt.Fprintf(tw, "%s\t%s\n", printable(f.Name), printable(f.Value))
	}
	tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note  %s\n", printable(n))
	}
	for _, c := range r.Checks {
		if c.OK {
			fmt.Fprintf(w, "ok    %s\n", printable(c.Name))
		} else {
			fmt.Fprintf(w, "FAIL  %s: %s\n", printable(c.Name), printable(c.Error))
		}
	}
}

// finish prints the report and returns the exit status: 1 when a check
// failed (the errors, with their sentinels, also go to stderr).
func (r *checkReport) finish(c *command, stdout io.Writer) int {
	var failed []error
	for _, item := range r.Checks {
		if !item.OK {
			failed = append(failed, sentinelError{item.Error, item.Sentinel})
		}
	}
	r.OK = len(failed) == 0
	if code := c.emit(stdout, r); code != 0 || r.OK {
		return code
	}
	return fail(c.stderr, "check", errors.Join(failed...))
}

func checkEmbedded(args []string, stdout, stderr io.Writer) int {
	c := newCommand("check embedded", checkUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	if code := c.parse(args); code >= 0 {
		return code
	}
	spec, err := parseStore(*cf.store)
	if err := cmp.Or(invalidIf(c.fs.NArg() > 0, "check embedded takes -store embedded:DIR and no arguments"),
		checkTimeout(*cf.timeout), err, invalidIf(spec.kind != "embedded", "check embedded takes -store embedded:DIR, not %s", spec)); err != nil {
		return fail(stderr, "check", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	rep, err := checkEmbeddedIsolated(ctx, spec.dir)
	if err != nil {
		return fail(stderr, "check", err)
	}
	return rep.finish(c, stdout)
}

// checkEmbeddedWork lists the keys of the store in dir from the engine's
// file, then opens it with the adapter, verifies it and reads every key.
// The error is for what stops the check (a locked or missing store); what
// the check finds is in the report.
func checkEmbeddedWork(ctx context.Context, dir string) (*checkReport, error) {
	keys, lerr := listEmbedded(ctx, dir, listOptions{})
	if lerr != nil && !errors.Is(lerr, crdt.ErrCorruptEncoding) {
		return nil, lerr
	}
	rep := newCheckReport("embedded:" + dir)
	err := withDeadline(ctx, func() error {
		db, err := openEmbedded(dir, false)
		if err != nil {
			return err
		}
		defer db.Close()
		rep.fact("data file", "%s", db.Path())
		rep.check("verify: the engine's structure and every checksum", db.Verify())
		rep.check("list every key from the engine's file", lerr)
		if keys != nil {
			rep.check(fmt.Sprintf("read every key through the adapter (%s, %s)",
				plural(keys.SiblingKeys, "sibling key"), plural(keys.PartitionKeys, "partition")), readAll(ctx, db, keys))
		}
		return nil
	})
	return rep, err
}

// verifyChildEnv, set to a data directory, makes the program run
// checkEmbeddedWork on it and print the outcome as JSON: check embedded
// runs the check in a child process, so that a damaged file that crashes
// the engine (a fault in a goroutine of its own, a stack overflow) or
// makes it loop ends that process, not the command.
const verifyChildEnv = "COUNTERKIT_CHECK_EMBEDDED_CHILD"

// childOutcome is what the child prints.
type childOutcome struct {
	Report   *checkReport `json:"report,omitempty"`
	Error    string       `json:"error,omitempty"`
	Sentinel string       `json:"sentinel,omitempty"`
}

// verifyChild is the child's program: it returns its exit status.
func verifyChild(dir string, stdout io.Writer) int {
	rep, err := checkEmbeddedWork(context.Background(), dir)
	out := childOutcome{Report: rep}
	if err != nil {
		out.Error, out.Sentinel = redact(err), sentinelName(err)
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

// checkEmbeddedIsolated runs checkEmbeddedWork in a child process (this
// program, run again), and in this process when the program cannot be
// found. A child that crashes means the file is damaged: the error wraps
// crdt.ErrCorruptEncoding; one that outlives ctx is stopped.
func checkEmbeddedIsolated(ctx context.Context, dir string) (*checkReport, error) {
	exe, err := os.Executable()
	if err != nil {
		return checkEmbeddedWork(ctx, dir)
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), verifyChildEnv+"="+dir)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	wait, err := startChild(cmd)
	if err == nil {
		err = wait()
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: the check did not finish within -timeout and was stopped (a damaged file can make the engine loop)", crdt.ErrUnavailable)
	case err != nil:
		return nil, fmt.Errorf("%w: reading the data file crashed the engine, so the file is damaged (%s)", crdt.ErrCorruptEncoding, crashLine(errOut.String(), err))
	}
	var o childOutcome
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		return nil, fmt.Errorf("%w: the check's child process printed %q", crdt.ErrUnavailable, out.String())
	}
	if o.Error != "" {
		return nil, sentinelError{o.Error, o.Sentinel}
	}
	if o.Report == nil {
		return nil, fmt.Errorf("%w: the check's child process printed no report", crdt.ErrUnavailable)
	}
	return o.Report, nil
}

// crashLine picks what a crashed child said: its first line of stderr.
func crashLine(stderr string, err error) string {
	if l, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n"); l != "" {
		return strings.TrimSpace(l)
	}
	return err.Error()
}

// sentinelError is an error carried across processes as its message and
// the names of the sentinels it wraps (sentinelName's form).
type sentinelError struct{ msg, names string }

func (e sentinelError) Error() string { return e.msg }

func (e sentinelError) Unwrap() []error {
	var out []error
	for _, name := range strings.Split(e.names, ", ") {
		for _, s := range sentinels {
			if first, _, _ := strings.Cut(s.Name, ", "); first == name {
				out = append(out, s.Err)
				break
			}
		}
	}
	return out
}

// readAll reads every listed key through the adapter, as a service would:
// each sibling key's values and each partition's rows, which the adapter
// checks. It returns the errors of the first keys that failed.
func readAll(ctx context.Context, db *embedded.DB, keys *keyList) error {
	var errs []error
	n := 0 // keys failed
	for _, k := range keys.Keys {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: reading every key: %v", crdt.ErrUnavailable, err)
		}
		var err error
		if k.Kind == "siblings" {
			_, _, err = db.Siblings().Fetch(ctx, k.Key)
		} else {
			err = db.Partitions().Scan(ctx, k.Key, nil, store.ReadComplete, func(store.Row) bool { return true })
		}
		if err != nil {
			if n++; len(errs) < 10 {
				errs = append(errs, fmt.Errorf("%s %q: %w", cli.Either(k.Kind == "siblings", "sibling key", "partition"), k.Key, err))
			}
		}
	}
	if n > len(errs) {
		errs = append(errs, fmt.Errorf("and %d more keys failed", n-len(errs)))
	}
	return errors.Join(errs...)
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
			return nil, cli.Usagef("%w: -consistency %q: want OP=LEVEL with OP one of %s", crdt.ErrInvalidConfig, part, strings.Join(names, ", "))
		}
		c, err := gocql.ParseConsistencyWrapper(strings.ToUpper(level))
		if err != nil {
			return nil, cli.Usagef("%w: -consistency %q: %v", crdt.ErrInvalidConfig, part, err)
		}
		levels[cassandraOps[i]] = c
	}
	return levels, nil
}

func checkCassandra(args []string, stdout, stderr io.Writer) int {
	c := newCommand("check cassandra", checkUsage, stderr)
	fs := c.fs
	hosts := fs.String("hosts", "", "contact points, comma-separated (host or host:port)")
	keyspace := fs.String("keyspace", "", "the keyspace")
	prefix := fs.String("prefix", "", "the table prefix (empty: the adapter's default, counterkit_)")
	consistency := fs.String("consistency", "", "levels to check instead of the defaults: OP=LEVEL,... (OP: siblings-fetch, siblings-put, partition-read, partition-read-complete, partition-apply)")
	timeout := fs.Duration("timeout", 10*time.Second, "connect and request timeout")
	if code := c.parse(args); code >= 0 {
		return code
	}
	levels, lerr := parseConsistency(*consistency)
	schema, serr := cassandra.Schema(*keyspace, *prefix)
	if err := cmp.Or(checkTimeout(*timeout), invalidIf(*hosts == "" || *keyspace == "" || fs.NArg() > 0, "check cassandra takes -hosts and -keyspace"),
		checkAddresses("cassandra", cli.SplitList(*hosts)), lerr, cli.Usage(serr)); err != nil {
		return fail(stderr, "check", err)
	}
	rep := newCheckReport("cassandra:" + strings.Join(cli.SplitList(*hosts), ",") + "/" + *keyspace)

	// Consistency levels: no server needed.
	for _, op := range cassandraOps {
		l, set := levels[op]
		if !set || l == gocql.Any {
			l = cassandra.DefaultConsistency(op)
		}
		rep.fact("consistency "+opFlagName(op), "%s (%s)", l, cli.Either(set, "-consistency", "default"))
	}
	rep.check("consistency: every read overlaps the writes it depends on; complete reads at ALL", cassandra.CheckConsistency(levels))

	ctx, cancel := context.WithTimeout(context.Background(), 4**timeout)
	defer cancel()
	sess, err := cassandraSession(cli.SplitList(*hosts), "", *timeout)
	if err != nil {
		rep.check("connect to "+*hosts, err)
		return rep.finish(c, stdout)
	}
	defer sess.Close()

	// Replication.
	var replication map[string]string
	err = sess.Query(`SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?`, *keyspace).ScanContext(ctx, &replication)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		rep.check("keyspace "+*keyspace+" exists", fmt.Errorf("%w: keyspace %q does not exist", crdt.ErrMisconfiguredStore, *keyspace))
	case err != nil:
		rep.check("read keyspace "+*keyspace, fmt.Errorf("%w: %v", crdt.ErrUnavailable, err))
		return rep.finish(c, stdout)
	default:
		rep.fact("keyspace "+*keyspace+" replication", "%s", formatMap(replication, "="))
		if strings.HasSuffix(replication["class"], "SimpleStrategy") && replication["replication_factor"] == "1" {
			rep.note("replication factor 1: one node holds every value (development only)")
		}
	}

	// Durability of acknowledged writes: informational (Cassandra 4.0+
	// exposes the contacted node's settings in system_views.settings).
	var sync string
	if err := sess.Query(`SELECT value FROM system_views.settings WHERE name = 'commitlog_sync'`).ScanContext(ctx, &sync); err != nil {
		rep.note("commitlog_sync: could not read it (%v)", err)
	} else {
		rep.fact("commitlog_sync (contacted node)", "%s", sync)
		if sync == "periodic" {
			rep.note("commitlog_sync periodic acknowledges writes before they reach the disk; for balances use batch or group")
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
			rep.check("read table "+*keyspace+"."+want.name, err)
			return rep.finish(c, stdout)
		}
		rep.fact("table "+want.name+" want", "%s", want)
		if got == nil {
			rep.fact("table "+want.name+" got", "(no such table)")
		} else {
			rep.fact("table "+want.name+" got", "%s", got)
			var grace, ttl int
			if err := sess.Query(`SELECT gc_grace_seconds, default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?`,
				*keyspace, want.name).ScanContext(ctx, &grace, &ttl); err != nil {
				rep.check("read table "+want.name+" options", fmt.Errorf("%w: read system_schema.tables: %v", crdt.ErrUnavailable, err))
			} else {
				rep.fact("table "+want.name+" gc_grace_seconds", "%d: run repairs more often than every %s", grace, time.Duration(grace)*time.Second)
				rep.fact("table "+want.name+" default_time_to_live", "%d", ttl)
				rep.check("table "+want.name+" has no default_time_to_live", checkTableTTL(want.name, ttl))
			}
		}
		rep.check("table "+want.name+" matches cassandra.Schema", compareTable(want, got))
	}
	return rep.finish(c, stdout)
}

// checkTableTTL refuses (crdt.ErrMisconfiguredStore) an adapter table
// whose default_time_to_live (seconds) is not 0: Cassandra would expire
// every row written to it, counter state included, which an idle key
// loses. Records expire by a records DB's cassandra.Options.SiblingsTTL,
// which leaves the table's option at 0.
func checkTableTTL(table string, ttl int) error {
	if ttl != 0 {
		return fmt.Errorf("%w: table %s has default_time_to_live %d (%s): its rows, counter state included, expire; "+
			"set it to 0 (ALTER TABLE ... WITH default_time_to_live = 0) and expire ledger records with a records DB's cassandra.Options.SiblingsTTL",
			crdt.ErrMisconfiguredStore, table, ttl, time.Duration(ttl)*time.Second)
	}
	return nil
}

// formatMap lists m's entries by key, each key sep value, comma-separated.
func formatMap(m map[string]string, sep string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+sep+m[k])
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
	ck := make([]string, len(t.clustering))
	for i, c := range t.clustering {
		ck[i] = c + " " + t.order[i]
	}
	return fmt.Sprintf("(%s) PRIMARY KEY ((%s), %s)", formatMap(t.columns, " "), strings.Join(t.partition, ", "), strings.Join(ck, ", "))
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
			t.partition = cli.SplitList(pk[1])
			t.clustering = cli.SplitList(pk[2])
			t.order = slices.Repeat([]string{"asc"}, len(t.clustering))
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
	var rows []schemaColumn
	var c schemaColumn
	for iter.Scan(&c.name, &c.kind, &c.position, &c.typ, &c.order) {
		rows = append(rows, c)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("%w: read system_schema.columns: %v", crdt.ErrUnavailable, err)
	}
	return shapeOf(table, rows), nil
}

// schemaColumn is one row of system_schema.columns: a column's name, kind
// (partition_key, clustering or regular), position among the key columns
// of its kind (-1 for a regular one), CQL type and clustering order (asc,
// desc or none).
type schemaColumn struct {
	name, kind string
	position   int
	typ, order string
}

// shapeOf is the shape of table whose system_schema.columns rows are rows
// (in any order); nil when there are none.
func shapeOf(table string, rows []schemaColumn) *tableShape {
	if len(rows) == 0 {
		return nil
	}
	t := &tableShape{name: table, columns: map[string]string{}}
	// at sets s[i] (a key column's position), growing s as needed.
	at := func(s []string, i int, v string) []string {
		s = append(s, make([]string, max(i+1-len(s), 0))...)
		s[i] = v
		return s
	}
	for _, c := range rows {
		t.columns[c.name] = c.typ
		switch c.kind {
		case "partition_key":
			t.partition = at(t.partition, c.position, c.name)
		case "clustering":
			t.clustering, t.order = at(t.clustering, c.position, c.name), at(t.order, c.position, c.order)
		}
	}
	return t
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
	c := newCommand("check riak", checkUsage, stderr)
	fs := c.fs
	addr := fs.String("addr", "", "protocol-buffers addresses, comma-separated (host:port)")
	typ := fs.String("type", "", "the bucket type (empty: default)")
	bucket := fs.String("bucket", "", "the bucket")
	timeout := fs.Duration("timeout", 10*time.Second, "connect and request timeout")
	if code := c.parse(args); code >= 0 {
		return code
	}
	if err := cmp.Or(checkTimeout(*timeout), invalidIf(*addr == "" || *bucket == "" || fs.NArg() > 0, "check riak takes -addr, -type and -bucket"),
		checkAddresses("riak", cli.SplitList(*addr))); err != nil {
		return fail(stderr, "check", err)
	}
	bt := cmp.Or(*typ, "default")
	rep := newCheckReport("riak:" + strings.Join(cli.SplitList(*addr), ",") + "/" + bt + "/" + *bucket)
	ctx, cancel := context.WithTimeout(context.Background(), 4**timeout)
	defer cancel()
	cl, err := riak.NewCluster(ctx, *timeout, cli.SplitList(*addr)...)
	if err != nil {
		rep.check("connect to "+*addr, err)
		return rep.finish(c, stdout)
	}
	defer cl.Stop()
	var p *riakc.FetchBucketPropsResponse
	cmd, err := riakc.NewFetchBucketPropsCommandBuilder().WithBucketType(bt).WithBucket(*bucket).Build()
	if err == nil {
		if err = cl.Execute(cmd); err == nil {
			p = cmd.(*riakc.FetchBucketPropsCommand).Response
		}
	}
	if p == nil {
		rep.check("read the properties of bucket "+bt+"/"+*bucket, fmt.Errorf("%w: bucket %s/%s: %v", crdt.ErrUnavailable, bt, *bucket, err))
		return rep.finish(c, stdout)
	}
	for _, kv := range []struct {
		k string
		v any
	}{
		{"allow_mult", p.AllowMult}, {"last_write_wins", p.LastWriteWins}, {"datatype", cmp.Or(p.DataType, `""`)},
		{"consistent", p.Consistent}, {"n_val", p.NVal}, {"r", riakQuorum(p.R)}, {"w", riakQuorum(p.W)},
		{"pr", riakQuorum(p.Pr)}, {"pw", riakQuorum(p.Pw)}, {"dw", riakQuorum(p.Dw)}, {"rw", riakQuorum(p.Rw)},
		{"basic_quorum", p.BasicQuorum}, {"notfound_ok", p.NotFoundOk},
		{"backend", cmp.Or(p.Backend, `""`)}, {"precommit hooks", len(p.PreCommit)}, {"postcommit hooks", len(p.PostCommit)},
	} {
		rep.fact(kv.k, "%v", kv.v)
	}
	rep.check("riak.CheckBucket: concurrent writes are kept as siblings and collapsed by dotted version vectors",
		riak.CheckBucket(ctx, cl, *typ, *bucket))
	return rep.finish(c, stdout)
}

// riakQuorums names the symbolic quorums, which Riak's protocol buffers
// carry as the largest uint32 values (riak_pb_kv_codec).
var riakQuorums = map[uint32]string{math.MaxUint32 - 1: "one", math.MaxUint32 - 2: "quorum",
	math.MaxUint32 - 3: "all", math.MaxUint32 - 4: "default"}

// riakQuorum names a quorum property: one, quorum, all, default, or the
// number of replicas.
func riakQuorum(v uint32) string {
	if name, ok := riakQuorums[v]; ok {
		return name
	}
	return strconv.FormatUint(uint64(v), 10)
}
