package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

// The embedded store keeps no index of its keys that the adapter exposes,
// so list, stats and compact embedded read the engine's file directly,
// read-only, as bbolt's own command does. They read the layout of
// embedded.FormatVersion 1 and 2 (2 adds the buckets' digests to "meta"):
// buckets "siblings" (keys: uvarint length, the key, an 8-byte dot) and
// "rows" (uvarint length, the partition key, the row key), and the format
// marker in "meta". A file of another version is refused.

var (
	engineMeta     = []byte("meta")
	engineSiblings = []byte("siblings")
	engineRows     = []byte("rows")
	engineFormat   = []byte("format")
	engineMagic    = []byte("counterkit embedded\x00")
)

// engineLayout is the newest format version whose layout this file reads
// (from 1).
const engineLayout = 2

// withDeadline runs fn and returns its error, or, if ctx ends first, an
// error saying so (fn is left running: a damaged file can make the engine
// loop, and the command then exits). A panic or memory fault in fn is
// reported as crdt.ErrCorruptEncoding.
func withDeadline(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("%w: the data file is damaged (%v)", crdt.ErrCorruptEncoding, r)
			}
		}()
		done <- fn()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: the data file was not read within -timeout (a damaged file can make the engine loop: run counterkit check embedded)", crdt.ErrUnavailable)
	}
}

// viewEngine opens the data file of dir read-only (a shared lock: a
// service holding the directory makes it fail with embedded.ErrLocked),
// checks its format marker and runs fn in one read transaction.
func viewEngine(dir string, fn func(db *bolt.DB, tx *bolt.Tx) error) error {
	path := filepath.Join(dir, embedded.FileName)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: no counterkit data file %s in %s", crdt.ErrNotFound, embedded.FileName, dir)
	case err != nil:
		return fmt.Errorf("%w: %v", crdt.ErrUnavailable, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", crdt.ErrMisconfiguredStore, path)
	case st.Size() == 0:
		return fmt.Errorf("%w: %s is empty (truncated?)", crdt.ErrCorruptEncoding, path)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: embedded.DefaultLockTimeout})
	switch {
	case errors.Is(err, bolt.ErrTimeout):
		return fmt.Errorf("%w (a running service holds %s: stop it first)", embedded.ErrLocked, dir)
	case err != nil:
		return fmt.Errorf("%w: open %s: %v", crdt.ErrCorruptEncoding, path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if tx.Size() > st.Size() {
			return fmt.Errorf("%w: %s is truncated (%d bytes, its header says %d)", crdt.ErrCorruptEncoding, path, st.Size(), tx.Size())
		}
		meta := tx.Bucket(engineMeta)
		if meta == nil {
			return fmt.Errorf("%w: %s is not a counterkit data file (no meta bucket)", crdt.ErrMisconfiguredStore, path)
		}
		f := meta.Get(engineFormat)
		if !bytes.HasPrefix(f, engineMagic) || len(f) != len(engineMagic)+2 {
			return fmt.Errorf("%w: %s has no counterkit format marker", crdt.ErrMisconfiguredStore, path)
		}
		if v := binary.BigEndian.Uint16(f[len(engineMagic):]); v < 1 || v > engineLayout {
			return fmt.Errorf("%w: %s has format version %d; this command reads versions 1 to %d", crdt.ErrUnsupportedVersion, path, v, engineLayout)
		}
		for _, b := range [][]byte{engineSiblings, engineRows} {
			if tx.Bucket(b) == nil {
				return fmt.Errorf("%w: %s lacks its %s bucket", crdt.ErrCorruptEncoding, path, b)
			}
		}
		return fn(db, tx)
	})
}

// listedKey is one key of an embedded store.
type listedKey struct {
	Key  string `json:"key"`
	Kind string `json:"kind"` // siblings or partition
}

// keyList is what list prints.
type keyList struct {
	Store         string      `json:"store"`
	SiblingKeys   int         `json:"sibling_keys"`
	PartitionKeys int         `json:"partitions"`
	Truncated     bool        `json:"truncated"`
	Keys          []listedKey `json:"keys"`
}

func (l *keyList) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tkey")
	for _, k := range l.Keys {
		fmt.Fprintf(tw, "%s\t%s\n", k.Kind, k.Key)
	}
	tw.Flush()
	more := ""
	if l.Truncated {
		more = " (truncated at -limit)"
	}
	fmt.Fprintf(w, "%s, %s%s\n", plural(l.SiblingKeys, "sibling key"), plural(l.PartitionKeys, "partition"), more)
}

// listOptions select the keys list returns.
type listOptions struct {
	kind   string // "", siblings or partitions
	prefix string
	limit  int // 0: all
}

// splitStoredKey returns the user key at the start of a stored key (a
// uvarint length, then the key) and what follows it.
func splitStoredKey(k []byte) (string, []byte, error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || n > uint64(len(k)-w) {
		return "", nil, fmt.Errorf("%w: a stored key does not parse", crdt.ErrCorruptEncoding)
	}
	return string(k[w : w+int(n)]), k[w+int(n):], nil
}

// listEmbedded lists the keys of the data file of dir, sorted by kind and
// key. Keys that do not parse, or come out of order, are damage.
func listEmbedded(ctx context.Context, dir string, o listOptions) (*keyList, error) {
	out := &keyList{Store: "embedded:" + dir, Keys: []listedKey{}}
	err := withDeadline(ctx, func() error {
		return viewEngine(dir, func(_ *bolt.DB, tx *bolt.Tx) error {
			for _, b := range []struct {
				bucket []byte
				kind   string
				dotLen int // bytes after the key: a sibling's dot; a row's key varies (-1)
			}{{engineSiblings, "siblings", 8}, {engineRows, "partition", -1}} {
				if o.kind != "" && !strings.HasPrefix(o.kind, b.kind[:4]) {
					continue
				}
				var last []byte
				c := tx.Bucket(b.bucket).Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
					if last != nil && bytes.Compare(k, last) <= 0 {
						return fmt.Errorf("%w: the %s bucket's keys are out of order", crdt.ErrCorruptEncoding, b.bucket)
					}
					last = append(last[:0], k...)
					key, rest, err := splitStoredKey(k)
					if err != nil {
						return err
					}
					if b.dotLen >= 0 && len(rest) != b.dotLen {
						return fmt.Errorf("%w: a stored sibling key does not parse", crdt.ErrCorruptEncoding)
					}
					if n := len(out.Keys); n > 0 && out.Keys[n-1].Kind == b.kind && out.Keys[n-1].Key == key {
						continue
					}
					if !strings.HasPrefix(key, o.prefix) {
						continue
					}
					out.Keys = append(out.Keys, listedKey{Key: key, Kind: b.kind})
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	// Stored keys sort by length first; list them by key.
	slices.SortStableFunc(out.Keys, func(a, b listedKey) int {
		if a.Kind != b.Kind {
			return strings.Compare(b.Kind, a.Kind) // siblings first
		}
		return strings.Compare(a.Key, b.Key)
	})
	if o.limit > 0 && len(out.Keys) > o.limit {
		out.Keys, out.Truncated = out.Keys[:o.limit], true
	}
	for _, k := range out.Keys {
		if k.Kind == "siblings" {
			out.SiblingKeys++
		} else {
			out.PartitionKeys++
		}
	}
	return out, nil
}

const listUsage = `usage: counterkit list -store embedded:DIR [-kind siblings|partitions] [-prefix P] [-limit N]

Lists the keys of an embedded store: every sibling key (ledger, gcounter,
pncounter, bounded) and every partition key (tally, deltalog, balance) that
holds a value, sorted. It reads the data file read-only and does not check
the values (counterkit check embedded does). The directory must not be in
use by a service (embedded.ErrLocked).
`

func runList(args []string, stdout, stderr io.Writer) int {
	c := newCommand("list", listUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	kind := c.fs.String("kind", "", "only siblings or partitions (empty: both)")
	prefix := c.fs.String("key-prefix", "", "only keys that start with this")
	limit := c.fs.Int("limit", 0, "list at most this many keys (0: all)")
	if code := c.parse(args); code >= 0 {
		return code
	}
	dir, err := embeddedDir(c, cf, "list")
	if err != nil {
		return fail(stderr, "list", err)
	}
	switch {
	case *kind != "" && *kind != "siblings" && *kind != "partitions":
		return fail(stderr, "list", usagef("%w: -kind must be siblings or partitions, not %q", crdt.ErrInvalidConfig, *kind))
	case *limit < 0:
		return fail(stderr, "list", usagef("%w: -limit must not be negative", crdt.ErrInvalidConfig))
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	l, err := listEmbedded(ctx, dir, listOptions{kind: *kind, prefix: *prefix, limit: *limit})
	if err != nil {
		return fail(stderr, "list", err)
	}
	return c.emit(stdout, l)
}

// embeddedDir parses -store for a command of the embedded store only.
func embeddedDir(c *command, cf commonFlags, cmd string) (string, error) {
	if err := cf.check(); err != nil {
		return "", err
	}
	spec := *cf.store
	if c.fs.NArg() > 0 {
		return "", usagef("%w: %s takes no arguments (got %q)", crdt.ErrInvalidConfig, cmd, c.fs.Arg(0))
	}
	s, err := parseStore(spec)
	if err != nil {
		return "", err
	}
	if s.kind != "embedded" {
		return "", usagef("%w: %s works on an embedded store (-store embedded:DIR), not %s", crdt.ErrInvalidConfig, cmd, s)
	}
	return s.dir, nil
}

// engineStats is what stats prints.
type engineStats struct {
	Store         string        `json:"store"`
	File          string        `json:"file"`
	FileBytes     int64         `json:"file_bytes"`
	DataBytes     int64         `json:"data_bytes"` // the part the engine uses
	PageSize      int           `json:"page_size"`
	FreePages     int           `json:"free_pages"`
	SiblingKeys   int           `json:"sibling_keys"`
	SiblingValues int           `json:"sibling_values"`
	PartitionKeys int           `json:"partitions"`
	Rows          int           `json:"rows"`
	Buckets       []bucketStats `json:"buckets"`
}

type bucketStats struct {
	Name        string `json:"name"`
	Keys        int    `json:"keys"`
	Depth       int    `json:"depth"`
	LeafPages   int    `json:"leaf_pages"`
	BranchPages int    `json:"branch_pages"`
	BytesInUse  int    `json:"bytes_in_use"`
	BytesAlloc  int    `json:"bytes_allocated"`
}

func (s *engineStats) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "store\t%s\n", s.Store)
	fmt.Fprintf(tw, "file\t%s\n", s.File)
	fmt.Fprintf(tw, "file bytes\t%d (%d in use by the engine)\n", s.FileBytes, s.DataBytes)
	fmt.Fprintf(tw, "page size\t%d\n", s.PageSize)
	fmt.Fprintf(tw, "free pages\t%d\n", s.FreePages)
	fmt.Fprintf(tw, "sibling keys\t%d (%s)\n", s.SiblingKeys, plural(s.SiblingValues, "value"))
	fmt.Fprintf(tw, "partitions\t%d (%s)\n", s.PartitionKeys, plural(s.Rows, "row"))
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "bucket\tkeys\tdepth\tleaf pages\tbranch pages\tbytes in use\tbytes allocated\t")
	for _, b := range s.Buckets {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", b.Name, b.Keys, b.Depth, b.LeafPages, b.BranchPages, b.BytesInUse, b.BytesAlloc)
	}
	tw.Flush()
}

const statsUsage = `usage: counterkit stats -store embedded:DIR

Prints the size of an embedded store: the data file, its pages and free
pages, the number of sibling keys and values and of partitions and rows,
and per engine bucket (siblings, rows, the tombstone buckets points, ranges
and drops, the gc index, meta) its keys, depth, pages and bytes. It reads
the data file read-only; the directory must not be in use by a service.
`

func runStats(args []string, stdout, stderr io.Writer) int {
	c := newCommand("stats", statsUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	if code := c.parse(args); code >= 0 {
		return code
	}
	dir, err := embeddedDir(c, cf, "stats")
	if err != nil {
		return fail(stderr, "stats", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	s, err := statsEmbedded(ctx, dir)
	if err != nil {
		return fail(stderr, "stats", err)
	}
	return c.emit(stdout, s)
}

func statsEmbedded(ctx context.Context, dir string) (*engineStats, error) {
	l, err := listEmbedded(ctx, dir, listOptions{})
	if err != nil {
		return nil, err
	}
	out := &engineStats{Store: "embedded:" + dir, File: filepath.Join(dir, embedded.FileName),
		SiblingKeys: l.SiblingKeys, PartitionKeys: l.PartitionKeys, Buckets: []bucketStats{}}
	err = withDeadline(ctx, func() error {
		return viewEngine(dir, func(db *bolt.DB, tx *bolt.Tx) error {
			out.DataBytes = tx.Size()
			if st, err := os.Stat(out.File); err == nil {
				out.FileBytes = st.Size()
			}
			out.PageSize = db.Info().PageSize
			out.FreePages = db.Stats().FreePageN
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				st := b.Stats()
				out.Buckets = append(out.Buckets, bucketStats{Name: string(name), Keys: st.KeyN, Depth: st.Depth,
					LeafPages: st.LeafPageN + st.LeafOverflowN, BranchPages: st.BranchPageN + st.BranchOverflowN,
					BytesInUse: st.LeafInuse + st.BranchInuse, BytesAlloc: st.LeafAlloc + st.BranchAlloc})
				switch {
				case bytes.Equal(name, engineSiblings):
					out.SiblingValues = st.KeyN
				case bytes.Equal(name, engineRows):
					out.Rows = st.KeyN
				}
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

const compactEmbeddedUsage = `usage: counterkit compact embedded -store embedded:DIR -to NEWDIR

Writes a compacted copy of an embedded store into NEWDIR (a new or empty
directory): the same keys, values, tombstones and sequence numbers in a
file without the free pages the store has accumulated, as bbolt's compact
command does. The store is verified first (DB.Verify: a damaged store is
not copied), and the copy is verified and its keys compared with the
original's. The original is not changed: stop the service, move NEWDIR's
counterkit.db into place (or point the service at NEWDIR), start it again.
The directory must not be in use by a service.
`

// compactResult is what compact embedded prints.
type compactResult struct {
	From        string `json:"from"`
	To          string `json:"to"`
	BytesBefore int64  `json:"bytes_before"`
	BytesAfter  int64  `json:"bytes_after"`
	Keys        int    `json:"keys"`
}

func (r *compactResult) writeTable(w io.Writer) {
	fmt.Fprintf(w, "compacted %s into %s: %d bytes to %d, %s, verified\n", r.From, r.To, r.BytesBefore, r.BytesAfter, plural(r.Keys, "key"))
}

func runCompactEmbedded(args []string, stdout, stderr io.Writer) int {
	c := newCommand("compact embedded", compactEmbeddedUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	to := c.fs.String("to", "", "the directory to write the compacted copy to (new or empty)")
	if code := c.parse(args); code >= 0 {
		return code
	}
	dir, err := embeddedDir(c, cf, "compact embedded")
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if err := emptyTarget(*to, dir); err != nil {
		return fail(stderr, c.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	res, err := compactEmbedded(ctx, dir, *to)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	return c.emit(stdout, res)
}

// emptyTarget checks that to names a new or empty directory other than
// dir. Errors are usage errors.
func emptyTarget(to, dir string) error {
	if to == "" {
		return usagef("%w: give -to NEWDIR", crdt.ErrInvalidConfig)
	}
	a, _ := filepath.Abs(to)
	b, _ := filepath.Abs(dir)
	if dir != "" && a == b {
		return usagef("%w: -to must be another directory than the store's", crdt.ErrInvalidConfig)
	}
	entries, err := os.ReadDir(to)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return usagef("%w: -to %s: %v", crdt.ErrInvalidConfig, to, err)
	case len(entries) > 0:
		return usagef("%w: -to %s is not empty", crdt.ErrInvalidConfig, to)
	}
	return nil
}

func compactEmbedded(ctx context.Context, dir, to string) (*compactResult, error) {
	// Refuse to copy damage.
	if err := withDeadline(ctx, func() error {
		db, err := openEmbedded(dir)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Verify()
	}); err != nil {
		return nil, err
	}
	before, err := listEmbedded(ctx, dir, listOptions{})
	if err != nil {
		return nil, err
	}
	res := &compactResult{From: dir, To: to, Keys: len(before.Keys)}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", crdt.ErrUnavailable, err)
	}
	dst := filepath.Join(to, embedded.FileName)
	err = withDeadline(ctx, func() error {
		return viewEngine(dir, func(src *bolt.DB, tx *bolt.Tx) error {
			res.BytesBefore = tx.Size()
			out, err := bolt.Open(dst, 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				return fmt.Errorf("%w: create %s: %v", crdt.ErrUnavailable, dst, err)
			}
			if err := bolt.Compact(out, src, 64<<20); err != nil {
				out.Close()
				return fmt.Errorf("%w: compact: %v", crdt.ErrUnavailable, err)
			}
			if err := out.Sync(); err != nil {
				out.Close()
				return fmt.Errorf("%w: %v", crdt.ErrUnavailable, err)
			}
			return out.Close()
		})
	})
	if err != nil {
		os.Remove(dst)
		return nil, err
	}
	// The copy opens, verifies and holds the same keys.
	err = withDeadline(ctx, func() error {
		db, err := openEmbedded(to)
		if err != nil {
			return err
		}
		defer db.Close()
		if err := db.Verify(); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the compacted copy in %s does not verify: %w", to, err)
	}
	after, err := listEmbedded(ctx, to, listOptions{})
	if err != nil {
		return nil, err
	}
	if !slices.Equal(before.Keys, after.Keys) {
		return nil, fmt.Errorf("%w: the compacted copy in %s holds other keys than %s", crdt.ErrCorruptEncoding, to, dir)
	}
	st, err := os.Stat(dst)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", crdt.ErrUnavailable, err)
	}
	res.BytesAfter = st.Size()
	return res, nil
}
