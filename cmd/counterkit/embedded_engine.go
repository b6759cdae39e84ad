package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
)

// list, stats and compact embedded read the data file through the
// adapter's read-only functions (embedded.Keys, ReadStats, Compact), which
// check the file as embedded.Open does and know its layout.

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
		return errNotRead
	}
}

// errNotRead is withDeadline's error when ctx ends first.
var errNotRead = fmt.Errorf("%w: the data file was not read within -timeout (a damaged file can make the engine loop: run counterkit check embedded)", crdt.ErrUnavailable)

// readEngine runs one of the adapter's read-only functions on dir within
// ctx (withDeadline), wording its errors for a missing or locked store as
// the other commands on an embedded store do.
func readEngine[T any](ctx context.Context, dir string, read func(context.Context, string) (T, error)) (T, error) {
	var v T
	err := withDeadline(ctx, func() (err error) {
		switch v, err = read(ctx, dir); {
		case errors.Is(err, crdt.ErrNotFound):
			return noDataFile(dir)
		case errors.Is(err, embedded.ErrLocked):
			return fmt.Errorf("%w (a running service holds %s: stop it first)", embedded.ErrLocked, dir)
		}
		return err
	})
	return v, err
}

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
		fmt.Fprintf(tw, "%s\t%s\n", k.Kind, printable(k.Key))
	}
	tw.Flush()
	fmt.Fprintf(w, "%s, %s%s\n", plural(l.SiblingKeys, "sibling key"), plural(l.PartitionKeys, "partition"), cli.Either(l.Truncated, " (truncated at -limit)", ""))
}

// kindNames are list's names of the key shapes.
var kindNames = map[embedded.Shape]string{embedded.ShapeSiblings: "siblings", embedded.ShapePartition: "partition"}

// listOptions select the keys list returns.
type listOptions struct {
	kind   string // "", siblings or partitions
	prefix string
	limit  int // 0: all
}

// listEmbedded lists the keys of the data file of dir, sibling keys
// first, each kind sorted by key.
func listEmbedded(ctx context.Context, dir string, o listOptions) (*keyList, error) {
	keys, err := readEngine(ctx, dir, embedded.Keys)
	if err != nil {
		return nil, err
	}
	out := &keyList{Store: "embedded:" + dir, Keys: []listedKey{}}
	for _, k := range keys {
		switch {
		case o.kind == "siblings" && k.Shape != embedded.ShapeSiblings,
			o.kind == "partitions" && k.Shape != embedded.ShapePartition,
			!strings.HasPrefix(k.Key, o.prefix):
			continue
		case o.limit > 0 && len(out.Keys) == o.limit:
			out.Truncated = true
			return out, nil
		case k.Shape == embedded.ShapeSiblings:
			out.SiblingKeys++
		default:
			out.PartitionKeys++
		}
		out.Keys = append(out.Keys, listedKey{Key: k.Key, Kind: kindNames[k.Shape]})
	}
	return out, nil
}

const listUsage = `usage: counterkit list -store embedded:DIR [-kind siblings|partitions] [-key-prefix P] [-limit N]

Lists the keys of an embedded store: every sibling key (ledger, gcounter,
pncounter, bounded) and every partition key (tally, deltalog, balance) that
holds a value, sorted. It reads the data file read-only and does not check
the values: counterkit check embedded checks the file and every stored
value's checksum, and counterkit get decodes a key's value as its type.
The directory must not be in use by a service (embedded.ErrLocked).
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
	check := func(string) error {
		return cmp.Or(invalidIf(*kind != "" && *kind != "siblings" && *kind != "partitions", "-kind must be siblings or partitions, not %q", *kind),
			invalidIf(*limit < 0, "-limit must not be negative"))
	}
	return onEmbedded(c, cf, stdout, check, func(ctx context.Context, dir string) (*keyList, error) {
		return listEmbedded(ctx, dir, listOptions{kind: *kind, prefix: *prefix, limit: *limit})
	})
}

// onEmbedded runs do on the directory of -store within -timeout, once
// check (if any) accepts the directory, and emits what do returns.
func onEmbedded[T tabler](c *command, cf commonFlags, stdout io.Writer, check func(dir string) error, do func(ctx context.Context, dir string) (T, error)) int {
	dir, err := embeddedDir(c, cf)
	if err == nil && check != nil {
		err = check(dir)
	}
	if err != nil {
		return fail(c.stderr, c.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	v, err := do(ctx, dir)
	return c.emitResult(stdout, v, err)
}

// embeddedDir parses -store for a command of the embedded store only.
func embeddedDir(c *command, cf commonFlags) (string, error) {
	s, err := parseStore(*cf.store)
	return s.dir, cmp.Or(checkTimeout(*cf.timeout), invalidIf(c.fs.NArg() > 0, "%s takes no arguments (got %q)", c.name, c.fs.Arg(0)),
		err, invalidIf(s.kind != "embedded", "%s works on an embedded store (-store embedded:DIR), not %s", c.name, s))
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

// bucketStats is embedded.BucketStats with the output's key names (a
// conversion of it).
type bucketStats struct {
	Name           string `json:"name"`
	Keys           int    `json:"keys"`
	Depth          int    `json:"depth"`
	LeafPages      int    `json:"leaf_pages"`
	BranchPages    int    `json:"branch_pages"`
	BytesInUse     int    `json:"bytes_in_use"`
	BytesAllocated int    `json:"bytes_allocated"`
	Inline         bool   `json:"inline"` // inside its parent's page
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
	inline := false
	for _, b := range s.Buckets {
		alloc := fmt.Sprint(b.BytesAllocated)
		if b.Inline {
			alloc, inline = "inline", true
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", b.Name, b.Keys, b.Depth, b.LeafPages, b.BranchPages, b.BytesInUse, alloc)
	}
	tw.Flush()
	if inline {
		fmt.Fprintln(w, "\ninline: a small bucket the engine stores inside its parent's page, with no pages of its own")
	}
}

const statsUsage = `usage: counterkit stats -store embedded:DIR

Prints the size of an embedded store: the data file, its pages and free
pages, the number of sibling keys and values and of partitions and rows,
and per engine bucket (siblings, rows, the tombstone buckets points, ranges
and drops, the gc index, meta) its keys, depth, pages and bytes. A small
bucket is stored inline, inside its parent's page: it has no pages of its
own and allocates no bytes ("inline"; in JSON "inline": true), and its bytes
in use are what it takes of that page. It reads the data file read-only;
the directory must not be in use by a service.
`

func runStats(args []string, stdout, stderr io.Writer) int {
	c := newCommand("stats", statsUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	if code := c.parse(args); code >= 0 {
		return code
	}
	return onEmbedded(c, cf, stdout, nil, func(ctx context.Context, dir string) (*engineStats, error) {
		st, err := readEngine(ctx, dir, embedded.ReadStats)
		if err != nil {
			return nil, err
		}
		out := &engineStats{Store: "embedded:" + dir, File: st.File, FileBytes: st.FileBytes, DataBytes: st.DataBytes,
			PageSize: st.PageSize, FreePages: st.FreePages, SiblingKeys: st.SiblingKeys, SiblingValues: st.SiblingValues,
			PartitionKeys: st.Partitions, Rows: st.Rows, Buckets: []bucketStats{}}
		for _, b := range st.Buckets {
			out.Buckets = append(out.Buckets, bucketStats(b))
		}
		return out, nil
	})
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
	fmt.Fprintf(w, "compacted %s into %s: %d bytes in use before, a %d-byte file after (the engine grows a small file in steps), %s, verified\n", r.From, r.To, r.BytesBefore, r.BytesAfter, plural(r.Keys, "key"))
}

func runCompactEmbedded(args []string, stdout, stderr io.Writer) int {
	c := newCommand("compact embedded", compactEmbeddedUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	to := c.fs.String("to", "", "the directory to write the compacted copy to (new or empty)")
	if code := c.parse(args); code >= 0 {
		return code
	}
	return onEmbedded(c, cf, stdout, func(dir string) error { return emptyTarget(*to, dir, true) },
		func(ctx context.Context, dir string) (*compactResult, error) {
			r, err := readEngine(ctx, dir, func(ctx context.Context, dir string) (embedded.CompactResult, error) {
				return embedded.Compact(ctx, dir, *to)
			})
			return &compactResult{From: dir, To: *to, BytesBefore: r.BytesBefore, BytesAfter: r.BytesAfter, Keys: r.Keys}, err
		})
}

// emptyTarget checks that to names a new or empty directory other than
// dir, or with copying one that holds only an interrupted copy (Backup's
// or Compact's CopyTempName, which they replace). Errors are usage errors.
func emptyTarget(to, dir string, copying bool) error {
	if to == "" {
		return cli.Usagef("%w: give -to NEWDIR", crdt.ErrInvalidConfig)
	}
	a, _ := filepath.Abs(to)
	b, _ := filepath.Abs(dir)
	if dir != "" && a == b {
		return cli.Usagef("%w: -to must be another directory than the store's", crdt.ErrInvalidConfig)
	}
	entries, err := os.ReadDir(to)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return cli.Usagef("%w: -to %s: %v", crdt.ErrInvalidConfig, to, err)
	case copying && len(entries) == 1 && entries[0].Name() == embedded.CopyTempName && entries[0].Type().IsRegular():
		return nil // an interrupted copy, which Backup and Compact replace
	case len(entries) > 0:
		return cli.Usagef("%w: -to %s is not empty", crdt.ErrInvalidConfig, to)
	}
	return nil
}
