package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/store"
)

// storeSpecHelp describes the -store flag, for every command's usage text.
const storeSpecHelp = `The store is one of
  embedded:DIR                         an embedded data directory
  cassandra:HOST[,HOST]/KEYSPACE       a Cassandra keyspace (-prefix sets
                                       the table prefix)
  riak:ADDR[,ADDR]/BUCKET_TYPE/BUCKET  a Riak bucket (sibling keys only)
`

// storeSpec is a parsed -store value.
type storeSpec struct {
	kind     string // embedded, cassandra or riak
	dir      string
	hosts    []string
	keyspace string
	typ      string // riak bucket type
	bucket   string
}

func (s storeSpec) String() string {
	switch s.kind {
	case "embedded":
		return "embedded:" + s.dir
	case "cassandra":
		return "cassandra:" + strings.Join(s.hosts, ",") + "/" + s.keyspace
	default:
		return "riak:" + strings.Join(s.hosts, ",") + "/" + s.typ + "/" + s.bucket
	}
}

// parseStore parses a -store value. Errors are usage errors wrapping
// crdt.ErrInvalidConfig.
func parseStore(spec string) (storeSpec, error) {
	bad := func(why string) (storeSpec, error) {
		return storeSpec{}, cli.UsageError{Err: fmt.Errorf("%w: -store %q: %s (want embedded:DIR, cassandra:HOST[,HOST]/KEYSPACE or riak:ADDR/BUCKET_TYPE/BUCKET)",
			crdt.ErrInvalidConfig, spec, why)}
	}
	kind, rest, ok := strings.Cut(spec, ":")
	if spec == "" {
		return bad("missing")
	}
	if !ok {
		return bad("no store kind")
	}
	if at := credentialsEnd(kind, rest); at >= 0 {
		spec = kind + ":***" + rest[at:]
		return bad(noCredentials)
	}
	switch kind {
	case "embedded":
		if rest == "" {
			return bad("no directory")
		}
		return storeSpec{kind: kind, dir: rest}, nil
	case "cassandra":
		h, ks, ok := strings.Cut(rest, "/")
		if !ok || ks == "" || strings.Contains(ks, "/") {
			return bad("no keyspace")
		}
		if len(cli.SplitList(h)) == 0 {
			return bad("no host")
		}
		if why := addressProblem("cassandra", cli.SplitList(h)); why != "" {
			return bad(why)
		}
		return storeSpec{kind: kind, hosts: cli.SplitList(h), keyspace: ks}, nil
	case "riak":
		parts := strings.Split(rest, "/")
		if len(parts) != 3 || parts[2] == "" {
			return bad("want ADDR/BUCKET_TYPE/BUCKET")
		}
		if len(cli.SplitList(parts[0])) == 0 {
			return bad("no address")
		}
		if why := addressProblem("riak", cli.SplitList(parts[0])); why != "" {
			return bad(why)
		}
		return storeSpec{kind: kind, hosts: cli.SplitList(parts[0]), typ: parts[1], bucket: parts[2]}, nil
	default:
		return bad(fmt.Sprintf("unknown store kind %q", kind))
	}
}

// noCredentials says why an address with credentials is refused.
const noCredentials = "an address holds credentials (USER:PASSWORD@HOST, not printed): counterkit connects without authentication and takes none"

// credentialsEnd returns the index in rest, the part of a -store value
// after "cassandra:" or "riak:", of the last @ of the credentials it
// holds, or -1. Everything before it is left out of messages, so a
// password holding a slash or a comma is not printed either. A Cassandra
// keyspace holds no @; a Riak bucket (the part after the last slash) may.
func credentialsEnd(kind, rest string) int {
	switch kind {
	case "cassandra":
		return strings.LastIndex(rest, "@")
	case "riak":
		return strings.LastIndex(rest[:max(strings.LastIndex(rest, "/"), 0)], "@")
	}
	return -1
}

// checkAddresses refuses the addresses of a Cassandra or Riak store that
// addressProblem finds wrong: a usage error wrapping crdt.ErrInvalidConfig.
func checkAddresses(kind string, addrs []string) error {
	if why := addressProblem(kind, addrs); why != "" {
		return cli.Usagef("%w: %s", crdt.ErrInvalidConfig, why)
	}
	return nil
}

// addressProblem says what is wrong with the addresses of a Cassandra or
// Riak store, or "": one holds credentials (noCredentials; the address is
// not printed), a Riak address has no port, or one is not HOST or
// HOST:PORT (cli.AddressProblem).
func addressProblem(kind string, addrs []string) string {
	for _, a := range addrs {
		if strings.Contains(a, "@") {
			return noCredentials
		}
		if _, _, err := net.SplitHostPort(a); kind == "riak" && err != nil {
			return fmt.Sprintf("riak address %q: want host:port", a)
		}
		if why := cli.AddressProblem(a); why != "" {
			return why
		}
	}
	return ""
}

// storeOpts are the flags that shape how a store is opened.
type storeOpts struct {
	prefix  string        // cassandra table prefix
	timeout time.Duration // connect and request timeout
	// write: the command writes (jobs); a Riak bucket of the default type
	// is then refused, as riak.NewSiblings does by default, and an
	// embedded store is opened to write (else read-only: not upgraded).
	write bool
}

// backend is an open store: one or both shapes, and how to close it.
type backend struct {
	siblings   store.Siblings
	partitions store.Partitions // nil for riak
	close      func()
	// verify checks the whole store (embedded: DB.Verify); nil when the
	// store has no such check.
	verify func() error
}

func openStore(ctx context.Context, spec storeSpec, o storeOpts) (*backend, error) {
	switch spec.kind {
	case "embedded":
		db, err := openEmbedded(spec.dir, o.write)
		if err != nil {
			return nil, err
		}
		return &backend{siblings: db.Siblings(), partitions: db.Partitions(), close: func() { db.Close() }, verify: db.Verify}, nil
	case "cassandra":
		sess, err := cassandraSession(spec.hosts, spec.keyspace, o.timeout)
		if err != nil {
			return nil, err
		}
		db, err := cassandra.New(sess, spec.keyspace, cassandra.Options{TablePrefix: o.prefix})
		if err != nil {
			sess.Close()
			return nil, err
		}
		return &backend{siblings: db.Siblings(), partitions: db.Partitions(), close: sess.Close}, nil
	default:
		cl, err := riak.NewCluster(ctx, o.timeout, spec.hosts...)
		if err != nil {
			return nil, err
		}
		sib, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: spec.typ, Bucket: spec.bucket, AllowDefaultBucketType: !o.write})
		if err != nil {
			cl.Stop()
			return nil, err
		}
		return &backend{siblings: sib, close: func() { cl.Stop() }}, nil
	}
}

// openEmbedded opens an existing data directory, read-only unless write
// (then an older format is upgraded). It never creates one: a directory
// without a data file is reported with crdt.ErrNotFound. The embedded
// store locks its directory, so a service that has it open makes this
// fail with embedded.ErrLocked.
func openEmbedded(dir string, write bool) (*embedded.DB, error) {
	// As the adapter does (embedded.Open, Keys): the data file itself,
	// not what a symbolic link names (one to nothing is a misconfigured
	// store), and a file where the directory should be holds none.
	if _, err := os.Lstat(filepath.Join(dir, embedded.FileName)); err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, noDataFile(dir)
		}
		return nil, fmt.Errorf("%w: %v", crdt.ErrUnavailable, err)
	}
	db, err := embedded.Open(dir, embedded.Options{ReadOnly: !write})
	if errors.Is(err, embedded.ErrLocked) {
		return nil, fmt.Errorf("%w (a running service holds %s: stop it, or read through the service)", err, dir)
	}
	return db, err
}

// noDataFile is the error for an embedded store's directory without a data
// file, as every command words it: crdt.ErrNotFound, or, as the adapter
// says, crdt.ErrMisconfiguredStore for one holding only an interrupted
// backup or compaction.
func noDataFile(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, embedded.CopyTempName)); err == nil {
		return fmt.Errorf("embedded: %s holds only an interrupted backup or compaction (%s), not a store: %w",
			dir, embedded.CopyTempName, crdt.ErrMisconfiguredStore)
	}
	why := ""
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		why = " (" + dir + " is a file, not a directory)"
	}
	return fmt.Errorf("%w: no counterkit data file %s in %s%s", crdt.ErrNotFound, embedded.FileName, dir, why)
}

// cassandraSession connects to hosts with the keyspace as default.
func cassandraSession(hosts []string, keyspace string, timeout time.Duration) (*gocql.Session, error) {
	if keyspace != "" {
		if err := cassandra.CheckIdentifier(keyspace); err != nil {
			return nil, cli.UsageError{Err: err}
		}
	}
	cfg := gocql.NewCluster(hosts...)
	cfg.Keyspace = keyspace
	cfg.Consistency = gocql.Quorum
	if timeout > 0 {
		cfg.Timeout, cfg.ConnectTimeout = timeout, timeout
	}
	sess, err := cfg.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("%w: cassandra %s: %v", crdt.ErrUnavailable, strings.Join(hosts, ","), err)
	}
	return sess, nil
}
