package embedded

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/counterkit/counterkit/crdt"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// FileName is the data file Open keeps in its directory.
const FileName = "counterkit.db"

// FormatVersion is the on-disk layout this build writes and reads; a
// greater one is refused (crdt.ErrUnsupportedVersion). Version 2 added the
// buckets' digests; version 3 names in the digest record the transaction
// that wrote it. Open upgrades an older file: a version 1 file checking
// every record it can (a tombstone has no checksum, and version 1 no
// digests: damage to one before the upgrade is kept).
const FormatVersion = 3

// Defaults for the zero Options.
const (
	// DefaultLockTimeout is how long Open waits for the directory's lock,
	// and the least it waits for the data file's, which only a reader or,
	// for an instant, a subprocess can hold once the directory's is taken:
	// a child that the process forks (os/exec) shares its open files, and
	// their locks, until it starts its program, so a file just closed can
	// stay locked that long on a loaded machine.
	DefaultLockTimeout = time.Second
	// DefaultTombstoneGrace is how long a deletion is kept after it was
	// applied (ten days, Cassandra's gc_grace_seconds).
	DefaultTombstoneGrace = 10 * 24 * time.Hour
	// DefaultPageSize is how many rows Partitions.Scan reads per read
	// transaction.
	DefaultPageSize = 100
)

// MaxBatchBytes is the most key and value bytes one Apply writes, beyond
// the limits every store accepts (store.MaxValue, MaxRowKey, MaxBatch).
const MaxBatchBytes = 256 << 20

// ErrReadOnly is the error of a write to a DB opened with
// Options.ReadOnly. It wraps crdt.ErrInvalidConfig.
var ErrReadOnly = fmt.Errorf("%w: embedded: opened read-only", crdt.ErrInvalidConfig)

// ErrLocked is returned by Open when another DB, in this process or
// another, holds the directory. It wraps crdt.ErrUnavailable.
var ErrLocked = fmt.Errorf("%w: embedded: directory in use (locked by another open DB)", crdt.ErrUnavailable)

// ErrClosed is returned by every operation on a closed DB. It wraps
// crdt.ErrUnavailable.
var ErrClosed = fmt.Errorf("%w: embedded: database closed", crdt.ErrUnavailable)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// LockTimeout is how long Open waits for another DB to release the
	// directory before failing with ErrLocked; zero means
	// DefaultLockTimeout. The data file's lock, taken next, waits at least
	// DefaultLockTimeout.
	LockTimeout time.Duration

	// TombstoneGrace is how long a deletion is kept after it was applied
	// (by Now, whatever its timestamp); zero means DefaultTombstoneGrace, a
	// negative value forever. A write older than a deletion that arrives
	// later than that may become visible (README.md, "Tombstones").
	TombstoneGrace time.Duration

	// PageSize is how many rows Partitions.Scan reads per read
	// transaction; zero means DefaultPageSize.
	PageSize int

	// Now is the clock that stamps a tombstone's arrival and decides when
	// its grace has passed; nil means time.Now. Timestamps of mutations
	// never come from it.
	Now func() time.Time

	// ReadOnly opens an existing store to read it: the directory is locked
	// shared (other read-only DBs may open it, a writing one may not),
	// nothing in it is created, changed or upgraded, and every write
	// fails with ErrReadOnly.
	ReadOnly bool

	// unchecked turns the file check and the digests off (tests and
	// benchmarks compare the store with and without them).
	unchecked bool
}

// DB is an open data directory. It is safe for concurrent use; Close it
// to release the directory's lock.
type DB struct {
	bolt    *bolt.DB
	path    string
	opts    Options
	version int // the file's format: FormatVersion unless opened ReadOnly
	group   group
	lock    *os.File // the directory, flocked while the DB is open

	closed atomic.Bool
	// committed is the newest transaction the DB opened or committed: a
	// read showing an older one finds the newest meta page damaged (the
	// engine falls back to the other one without a word).
	committed atomic.Uint64
	// failed is set when a commit failed: the file may hold a write the
	// process no longer knows of, so writes are refused until a reopen.
	failed atomic.Pointer[error]
}

var (
	bucketMeta     = []byte("meta")
	bucketSiblings = []byte("siblings")
	bucketRows     = []byte("rows")
	bucketPoints   = []byte("points")
	bucketRanges   = []byte("ranges")
	bucketDrops    = []byte("drops")
	bucketGC       = []byte("gc")

	allBuckets = [][]byte{bucketMeta, bucketSiblings, bucketRows, bucketPoints, bucketRanges, bucketDrops, bucketGC}

	keyFormat   = []byte("format")
	formatMagic = []byte("counterkit embedded\x00")
)

// Open opens the data directory dir, creating it and its data file if
// they do not exist. It fails, changing nothing in an existing directory,
// with an error wrapping ErrLocked when another DB holds dir;
// crdt.ErrUnavailable when dir or its file cannot be created, opened or
// written (the *fs.PathError reachable with errors.As);
// crdt.ErrMisconfiguredStore when dir is not a counterkit data directory;
// crdt.ErrCorruptEncoding when the data file is damaged anywhere (Open
// checks the whole file first); crdt.ErrUnsupportedVersion when its format
// is newer. With Options.ReadOnly it creates, changes and upgrades
// nothing: a directory without a data file is crdt.ErrNotFound (one
// holding an interrupted backup or compaction, CopyTempName,
// crdt.ErrMisconfiguredStore).
func Open(dir string, opts Options) (db *DB, err error) {
	if dir == "" {
		return nil, fmt.Errorf("embedded: empty directory name: %w", crdt.ErrInvalidConfig)
	}
	opts.LockTimeout = cmp.Or(opts.LockTimeout, DefaultLockTimeout)
	opts.TombstoneGrace = cmp.Or(opts.TombstoneGrace, DefaultTombstoneGrace)
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	path := filepath.Join(dir, FileName)
	if opts.ReadOnly {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, noDataFile(dir)
		}
	} else if err := makeDir(dir); err != nil {
		return nil, fmt.Errorf("embedded: create directory: %w: %w", crdt.ErrUnavailable, err)
	}
	lock, err := lockDir(dir, opts.LockTimeout, opts.ReadOnly)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) && !opts.ReadOnly {
		if err := create(dir, path, opts); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("embedded: %w: %w", crdt.ErrUnavailable, err)
	}
	fileOpts := opts
	fileOpts.LockTimeout = fileLockTimeout(opts.LockTimeout)
	r, err := openChecked(path, fileOpts.LockTimeout, opts.unchecked)
	if err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		db = &DB{bolt: r.db.bolt, path: path, opts: opts, version: r.version, lock: lock}
		return db, db.noteOpened()
	}
	r.db.Close()
	bdb, err := openBolt(path, fileOpts, false)
	if err != nil {
		return nil, err
	}
	db = &DB{bolt: bdb, path: path, opts: opts, version: FormatVersion, lock: lock}
	err = db.noteOpened()
	// The engine's own open commits a transaction, changing no entry, when
	// the file keeps no freelist (one written with the engine's
	// NoFreelistSync, or after `bbolt surgery freelist abandon`): the
	// digest record must then name the file's transaction again, as an
	// upgrade writes it.
	moved := db.committed.Load() != r.walk.tx
	if err == nil && !opts.unchecked && (r.version < FormatVersion || moved) {
		if err = db.upgrade(r.version); err == nil {
			err = db.noteOpened()
		}
	}
	if err != nil {
		bdb.Close()
		return nil, err
	}
	return db, nil
}

// noteOpened sets committed to the transaction the opened file shows.
func (d *DB) noteOpened() error {
	return d.bolt.View(func(tx *bolt.Tx) error {
		d.committed.Store(uint64(tx.ID()))
		return nil
	})
}

// fileLockTimeout is how long a data file's lock is waited for once its
// directory's lock is held: no other DB can hold it then, only a reader or
// a forked child for an instant (DefaultLockTimeout).
func fileLockTimeout(dirTimeout time.Duration) time.Duration {
	return max(dirTimeout, DefaultLockTimeout)
}

// checkError reports a failed file check.
func checkError(path string, err error) error {
	var de *damageError
	if errors.As(err, &de) || errors.Is(err, crdt.ErrCorruptEncoding) {
		return fmt.Errorf("embedded: %s is damaged: %w: %w", path, crdt.ErrCorruptEncoding, err)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("embedded: %s cannot be read: %w: %w", path, crdt.ErrUnavailable, err)
	}
	return fmt.Errorf("embedded: check %s: %w: %w", path, crdt.ErrUnavailable, err)
}

// upgrade brings a checked file of an older format to FormatVersion: it
// computes a version 1 file's digests, and writes the digest record again,
// naming its transaction (for a file of FormatVersion, only that).
func (d *DB) upgrade(version int) error {
	err := d.bolt.Update(func(tx *bolt.Tx) error {
		if version > 1 {
			sums, _, err := decodeDigests(tx.Bucket(bucketMeta).Get(keyDigest))
			if err != nil {
				return err
			}
			return putFormat(tx, sums)
		}
		// The digests vouch for what they sum: Open checked every record
		// first (openChecked).
		sums := make([]bucketSum, len(dataBuckets))
		for i, name := range dataBuckets {
			b := tx.Bucket(name)
			if b == nil {
				return fmt.Errorf("embedded: bucket %q is missing: %w", name, crdt.ErrCorruptEncoding)
			}
			sums[i].seq = b.Sequence()
			if err := b.ForEach(func(k, v []byte) error { sums[i].add(k, v); return nil }); err != nil {
				return err
			}
		}
		return putFormat(tx, sums)
	})
	if err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
		err = fmt.Errorf("embedded: upgrade %s to format %d: %w: %w", d.path, FormatVersion, crdt.ErrUnavailable, err)
	}
	return err
}

// boltLockRetry is how long the engine sleeps between tries of a file's
// lock (its flockRetryTimeout).
const boltLockRetry = 50 * time.Millisecond

// openBolt opens the engine's file. A file damaged in a way the engine
// panics or faults on is reported as crdt.ErrCorruptEncoding; the engine
// then keeps the file open (and locked) until the process exits.
func openBolt(path string, opts Options, readOnly bool) (db *bolt.DB, err error) {
	defer onDamage(path, &err)()
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		// The engine gives up one retry interval before its Timeout.
		Timeout:      opts.LockTimeout + boltLockRetry,
		FreelistType: bolt.FreelistMapType,
		ReadOnly:     readOnly,
	})
	if err != nil {
		return nil, openError(path, readOnly, err)
	}
	return db, nil
}

// noDataFile is the error of a read of dir, which holds no data file:
// crdt.ErrNotFound, or crdt.ErrMisconfiguredStore when it holds an
// interrupted backup or compaction, which Open refuses the same way.
func noDataFile(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, CopyTempName)); err == nil {
		return fmt.Errorf("embedded: %s holds only an interrupted backup or compaction (%s), not a store: %w",
			dir, CopyTempName, crdt.ErrMisconfiguredStore)
	}
	return fmt.Errorf("embedded: no data file %s in %s: %w", FileName, dir, crdt.ErrNotFound)
}

// create makes the data file complete as FileName+".new" (replacing one
// left by a crash) and links it to FileName, keeping a FileName another
// process linked meanwhile: a crash leaves no file or a complete one.
func create(dir, path string, opts Options) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("embedded: read directory: %w: %w", crdt.ErrUnavailable, err)
	}
	tmp := path + ".new"
	for _, e := range entries {
		if e.Name() == CopyTempName {
			return fmt.Errorf("embedded: %s holds only an interrupted backup or compaction (%s), not a store: %w",
				dir, CopyTempName, crdt.ErrMisconfiguredStore)
		}
		if e.Name() != filepath.Base(tmp) {
			return fmt.Errorf("embedded: %s holds %s but no %s: not a counterkit data directory: %w",
				dir, e.Name(), FileName, crdt.ErrMisconfiguredStore)
		}
	}
	// A left-over file of a crashed creation is started again.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("embedded: %w: %w", crdt.ErrUnavailable, err)
	}
	bdb, err := openBolt(tmp, opts, false)
	if err != nil {
		return err
	}
	// The buckets, the digests and the marker, in one durable transaction.
	err = bdb.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return putFormat(tx, make([]bucketSum, len(dataBuckets)))
	})
	if cerr := bdb.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("embedded: %w: %w", crdt.ErrUnavailable, cerr)
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("embedded: %w: %w", crdt.ErrUnavailable, err)
	}
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("embedded: %w: %w", crdt.ErrUnavailable, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("embedded: sync directory: %w: %w", crdt.ErrUnavailable, err)
	}
	return nil
}

func openError(path string, readOnly bool, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("%w: %s: %w", ErrLocked, path, err)
	case readOnly && errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("embedded: %s cannot be opened for reading (permissions?): %w: %w", path, crdt.ErrUnavailable, err)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return fmt.Errorf("embedded: %s cannot be opened for writing (read-only directory or file?): %w: %w", path, crdt.ErrUnavailable, err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrInvalidMapping),
		!errors.As(err, new(*fs.PathError)): // bbolt's own checks (a file too small to hold its header)
		return fmt.Errorf("embedded: %s is not a readable data file: %w: %w", path, crdt.ErrCorruptEncoding, err)
	}
	return fmt.Errorf("embedded: open %s: %w: %w", path, crdt.ErrUnavailable, err)
}

// checkFormat refuses a truncated or foreign file and returns its format.
func (d *DB) checkFormat() (version int, err error) {
	st, err := os.Stat(d.path)
	if err != nil {
		return 0, fmt.Errorf("embedded: %w: %w", crdt.ErrUnavailable, err)
	}
	err = d.view(func(tx *bolt.Tx) error {
		if st.Size() < tx.Size() {
			return fmt.Errorf("embedded: %s is truncated (%d bytes, its header says %d): %w", d.path, st.Size(), tx.Size(), crdt.ErrCorruptEncoding)
		}
		empty := true
		if err := tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil }); err != nil {
			return err
		}
		if empty {
			return fmt.Errorf("embedded: %s holds no format marker: %w", d.path, crdt.ErrMisconfiguredStore)
		}
		// A file with every data bucket counterkit makes, or with its
		// digests, is counterkit's: a meta bucket or marker missing there
		// is damage, not another program's file.
		ours := !slices.ContainsFunc(allBuckets[1:], func(b []byte) bool { return tx.Bucket(b) == nil })
		meta := tx.Bucket(bucketMeta)
		switch {
		case meta == nil && ours:
			return fmt.Errorf("embedded: %s holds every data bucket of counterkit's but no meta bucket (damaged): %w", d.path, crdt.ErrCorruptEncoding)
		case meta == nil:
			return fmt.Errorf("embedded: %s is a bbolt file of another program (no meta bucket): %w", d.path, crdt.ErrMisconfiguredStore)
		}
		f := meta.Get(keyFormat)
		if !bytes.HasPrefix(f, formatMagic) || len(f) != len(formatMagic)+2 {
			if ours || meta.Get(keyDigest) != nil {
				return fmt.Errorf("embedded: %s holds counterkit's buckets but its format marker is missing or damaged: %w", d.path, crdt.ErrCorruptEncoding)
			}
			return fmt.Errorf("embedded: %s has no counterkit format marker: %w", d.path, crdt.ErrMisconfiguredStore)
		}
		version = int(binary.BigEndian.Uint16(f[len(formatMagic):]))
		switch {
		case version > FormatVersion:
			return fmt.Errorf("embedded: %s has format version %d, this build reads up to %d (a newer build's file, or a damaged marker): %w", d.path, version, FormatVersion, crdt.ErrUnsupportedVersion)
		case version < 1:
			return fmt.Errorf("embedded: %s has format version %d: %w", d.path, version, crdt.ErrCorruptEncoding)
		case version == 1 && meta.Get(keyDigest) != nil:
			return fmt.Errorf("embedded: %s says format 1 but holds digests: %w", d.path, crdt.ErrCorruptEncoding)
		}
		for _, b := range allBuckets {
			if tx.Bucket(b) == nil {
				return fmt.Errorf("embedded: %s lacks bucket %q: %w", d.path, b, crdt.ErrCorruptEncoding)
			}
		}
		return nil
	})
	return version, err
}

// putFormat writes the digests sums and the marker of FormatVersion.
func putFormat(tx *bolt.Tx, sums []bucketSum) error {
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(keyDigest, encodeDigests(sums, uint64(tx.ID()))); err != nil {
		return err
	}
	return meta.Put(keyFormat, binary.BigEndian.AppendUint16(append([]byte(nil), formatMagic...), FormatVersion))
}

// syncClose syncs f unless err is set, closes it, and returns err or the
// first error of those.
func syncClose(f interface {
	Sync() error
	Close() error
}, err error) error {
	if err == nil {
		err = f.Sync()
	}
	return cmp.Or(err, f.Close())
}

// makeDir makes dir and its missing parents, as os.MkdirAll, and syncs
// the parent of each directory it makes, so that a write acknowledged in
// a new directory survives a power loss with the directory's entry.
func makeDir(dir string) error {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range made {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Close waits for writes in progress and releases the directory. Further
// operations fail with ErrClosed.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	err := d.bolt.Close()
	if d.lock != nil {
		d.lock.Close() // releases the directory's flock
	}
	if err != nil {
		return fmt.Errorf("embedded: close: %w", err)
	}
	return nil
}

// Path returns the data file's path.
func (d *DB) Path() string { return d.path }

// Siblings returns the DB's sibling store.
func (d *DB) Siblings() *Siblings { return &Siblings{db: d} }

// Partitions returns the DB's partition store.
func (d *DB) Partitions() *Partitions { return &Partitions{db: d} }

// view runs fn in a read transaction; engine faults are damage reported.
func (d *DB) view(fn func(*bolt.Tx) error) (err error) {
	if d.closed.Load() {
		return ErrClosed
	}
	defer onDamage(d.path, &err)()
	want := d.committed.Load() // before the read: commits only raise it
	err = d.bolt.View(func(tx *bolt.Tx) error {
		if id := uint64(tx.ID()); id < want {
			return fmt.Errorf("embedded: %s shows transaction %d, not %d, the newest committed: its meta page is damaged: %w", d.path, id, want, crdt.ErrCorruptEncoding)
		}
		return fn(tx)
	})
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// update runs fn in a group-committed write transaction, until durable.
func (d *DB) update(fn func(*wtx) error, size int) error {
	if d.closed.Load() {
		return ErrClosed
	}
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	if p := d.failed.Load(); p != nil {
		return fmt.Errorf("embedded: an earlier commit failed (%v); close and reopen %s: %w", *p, d.path, crdt.ErrUnavailable)
	}
	return d.group.run(d, &op{fn: fn, size: size})
}

// Group commit: a writer that finds no commit in progress leads one with
// every write queued so far; writers that arrive meanwhile queue and are
// committed, with one fsync, by the next leader, which is the first of
// them. No writer waits for a timer.
//
// The engine's own group commit, its Batch method, is not used: it holds
// every batch open for MaxBatchDelay unless MaxBatchSize calls arrive, so
// a lone writer always waits the timer (BenchmarkGroupVsBatch measured
// Batch at 1.1x to 6.1x this group commit's time per durable write;
// README.md has the rows), it runs a function that fails a second time
// alone rather than failing it alone, and it bounds a batch by calls, not
// by bytes (maxGroupBytes here).

const (
	maxGroupOps   = 256
	maxGroupBytes = 8 << 20
)

type op struct {
	fn       func(*wtx) error
	size     int
	err      error
	finished bool
	wake     chan struct{}
	hold     bool // a turn with no commit (group.hold): batches stop before it
}

type group struct {
	mu      sync.Mutex
	queue   []*op
	leading bool
}

func (g *group) run(d *DB, o *op) error {
	o.wake = make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, o)
	if g.leading {
		g.mu.Unlock()
		<-o.wake
		if o.finished {
			return o.err
		}
		g.mu.Lock() // this writer leads the next commit
	} else {
		g.leading = true
	}
	n, bytes := 0, 0
	for n < len(g.queue) && n < maxGroupOps && (n == 0 || !g.queue[n].hold && bytes+g.queue[n].size <= maxGroupBytes) {
		bytes += g.queue[n].size
		n++
	}
	batch := g.queue[:n:n]
	g.queue = append([]*op(nil), g.queue[n:]...)
	g.mu.Unlock()

	d.commit(batch)
	for _, b := range batch {
		b.finished = true
		if b != o {
			close(b.wake)
		}
	}

	g.passOn()
	return o.err
}

// passOn ends a turn: the first queued call leads next, or no one does.
func (g *group) passOn() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 {
		close(g.queue[0].wake)
	} else {
		g.leading = false
	}
}

// hold runs fn while no commit runs. It takes its turn in the queue as a
// leader does, so writers cannot starve it, and writers that arrive while
// fn runs queue behind it.
func (g *group) hold(fn func()) {
	o := &op{wake: make(chan struct{}), hold: true}
	g.mu.Lock()
	if g.leading {
		g.queue = append(g.queue, o)
		g.mu.Unlock()
		<-o.wake // o is at the head of the queue: its turn
		g.mu.Lock()
		g.queue = g.queue[1:]
	} else {
		g.leading = true
	}
	g.mu.Unlock()
	defer g.passOn()
	fn()
}

// opFailed carries the index of the op whose function refused.
type opFailed struct {
	i   int
	err error
}

func (e *opFailed) Error() string { return e.err.Error() }

// commit runs the batch's functions in one write transaction. A function
// that returns an error is dropped with its error and the rest are run
// again; a failed commit fails them all and stops further writes.
func (d *DB) commit(batch []*op) {
	for len(batch) > 0 {
		err := d.commitOnce(batch)
		var f *opFailed
		if errors.As(err, &f) {
			batch[f.i].err = f.err
			batch = append(batch[:f.i:f.i], batch[f.i+1:]...)
			continue
		}
		switch {
		case err == nil:
		case errors.Is(err, berrors.ErrDatabaseNotOpen):
			err = fmt.Errorf("%w: %w", ErrClosed, err)
		case errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, errPanicked):
			// Damage found before the commit (the digest record): nothing
			// was written.
		default:
			d.failed.CompareAndSwap(nil, &err)
			err = fmt.Errorf("embedded: commit failed, the write may or may not be on disk: %w: %w", crdt.ErrAmbiguousWrite, err)
		}
		for _, o := range batch {
			o.err = err
		}
		return
	}
}

// onDamage makes a fault the engine takes in the file's memory a panic,
// and returns the function to defer that turns the panic into *err,
// wrapping crdt.ErrCorruptEncoding and also.
func onDamage(path string, err *error, also ...error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			*err = fmt.Errorf("embedded: %s is damaged (%v): %w", path, r, crdt.ErrCorruptEncoding)
			for _, e := range also {
				*err = fmt.Errorf("%w: %w", *err, e)
			}
		}
	}
}

// errPanicked marks a commit the engine panicked in, maybe half written.
var errPanicked = errors.New("the engine panicked")

func (d *DB) commitOnce(batch []*op) (err error) {
	defer onDamage(d.path, &err, errPanicked)()
	var id uint64
	err = d.bolt.Update(func(tx *bolt.Tx) error {
		id = uint64(tx.ID())
		w := &wtx{tx: tx, off: d.opts.unchecked}
		for i, o := range batch {
			if err := o.fn(w); err != nil {
				return &opFailed{i, err}
			}
		}
		return w.finish()
	})
	if err == nil {
		d.committed.Store(id) // commits run one at a time: ids ascend
	}
	return err
}

// appendPrefix appends a partition or sibling key as stored: uvarint(len)
// || key, so that one key's prefix is never another's; the row key or the
// sibling's dot follows.
func appendPrefix(b []byte, key string) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	return append(b, key...)
}

// cutPrefix splits a stored key into its key and the dot or row key.
func cutPrefix(k []byte) (key, rest []byte, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || n > uint64(len(k)-w) {
		return nil, nil, fmt.Errorf("embedded: stored key %q does not parse: %w", k, crdt.ErrCorruptEncoding)
	}
	return k[w : w+int(n)], k[w+int(n):], nil
}

// dotBytes is the size of a sibling's dot, after its key's prefix.
const dotBytes = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum covers a record's key and value: damage in either is reported.
func checksum(key, value []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, value)
}

func crcUpdate(c uint32, b []byte) uint32 { return crc32.Update(c, castagnoli, b) }

func corrupt(what string, key []byte) error {
	return fmt.Errorf("embedded: %s %q fails its checksum: %w", what, key, crdt.ErrCorruptEncoding)
}

// Verify runs Open's check of the whole file (README.md, "Layout and
// checks") and the checksum or encoding of every stored value and
// tombstone, on the version one read transaction sees, while writes go on,
// and both meta pages between two commits. If commits keep overwriting the
// version it reads, it checks once more with commits held off. It returns
// an error wrapping crdt.ErrCorruptEncoding naming the first damage found.
func (d *DB) Verify() error {
	if d.closed.Load() {
		return ErrClosed
	}
	if d.opts.unchecked {
		return d.view(func(tx *bolt.Tx) error {
			// The engine checks in a goroutine of its own, using tx: read
			// the channel to its end before tx closes.
			var first error
			for err := range tx.Check() {
				first = cmp.Or(first, err)
			}
			if first != nil {
				return fmt.Errorf("embedded: %s fails the engine's check: %w: %w", d.path, crdt.ErrCorruptEncoding, first)
			}
			return checkRecords(tx)
		})
	}
	f, err := os.Open(d.path)
	if err != nil {
		return fmt.Errorf("embedded: verify: %w: %w", crdt.ErrUnavailable, err)
	}
	defer f.Close()
	var readTx uint64 // the transaction the last check read
	check := func() error {
		return d.view(func(tx *bolt.Tx) error {
			readTx = uint64(tx.ID())
			walk, err := checkMapped(f, tx.Size(), readTx)
			if err == nil && d.version >= 2 {
				err = walk.compareDigests(d.version)
			}
			if err == nil {
				err = checkRecords(tx)
			}
			return err
		})
	}
	for attempt := 0; ; attempt++ {
		var err error
		if attempt < verifyTries {
			err = check()
		} else {
			d.group.hold(func() { err = check() })
		}
		switch {
		case errors.Is(err, errRetry) && attempt < verifyTries:
			continue // writers overwrote the transaction's meta page first
		case errors.Is(err, errRetry):
			// No commit ran during this check: the meta page of the
			// version it read is not on disk as written.
			return checkError(d.path, damaged("no meta page holds transaction %d, which the file's reads see", readTx))
		case err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrUnavailable):
			return checkError(d.path, err)
		case err == nil:
			err = d.checkMetaPages(f)
		}
		return err
	}
}

// verifyTries is how many times Verify checks while writes go on before
// it checks with commits held off: each try fails only if two commits land
// during it.
const verifyTries = 10

// checkMetaPages checks both meta pages as Open does, between two commits:
// reads use one, and damage to the other would make the next Open refuse
// the file.
func (d *DB) checkMetaPages(f *os.File) (err error) {
	head := make([]byte, 2*maxPageSize)
	n := 0
	d.group.hold(func() { n, err = f.ReadAt(head, 0) })
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("embedded: verify: %w: %w", crdt.ErrUnavailable, err)
	}
	if _, err := pickMeta(head[:n], 0); err != nil {
		return checkError(d.path, err)
	}
	return nil
}

// checkRecords checks every stored value's and tombstone's encoding.
func checkRecords(tx *bolt.Tx) error {
	tombstone := func(k, v []byte) error {
		if len(v) != 16 {
			return fmt.Errorf("embedded: tombstone %q malformed: %w", k, crdt.ErrCorruptEncoding)
		}
		return nil
	}
	for _, c := range []struct {
		bucket []byte
		check  func(k, v []byte) error
	}{
		{bucketSiblings, func(k, v []byte) error { _, err := openRecord(k, v); return err }},
		{bucketRows, func(k, v []byte) error { _, _, err := openCell(k, v); return err }},
		{bucketRanges, func(k, v []byte) error { _, err := decodeRange(k, v); return err }},
		{bucketPoints, tombstone},
		{bucketDrops, tombstone},
	} {
		if err := tx.Bucket(c.bucket).ForEach(c.check); err != nil {
			return err
		}
	}
	return nil
}
