package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"

	"github.com/counterkit/counterkit/crdt"
)

// The file check (README.md, "Layout and checks"): bbolt checksums its
// meta pages only, so the adapter checks the rest, and each data bucket's
// digest, itself, with a bounds-checked reader over a read-only mapping
// (never outside the file, no recursion without a depth bound).

const (
	pageHeaderSize = 16
	elementSize    = 16
	flagBranch     = 0x01
	flagLeaf       = 0x02
	flagMeta       = 0x04
	flagFreelist   = 0x10
	bucketLeafFlag = 0x01
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	noFreelist     = ^uint64(0)

	maxTreeDepth   = 48 // far above any real B+tree of this engine
	maxBucketDepth = 4
)

type boltMeta struct {
	pageSize          uint32
	root              uint64
	freelist, hwm, tx uint64
}

// readMeta decodes and validates the meta page at p (one page).
func readMeta(p []byte) (boltMeta, error) {
	le := binary.LittleEndian
	if len(p) < 80 {
		return boltMeta{}, errors.New("short meta page")
	}
	if le.Uint16(p[8:]) != flagMeta {
		return boltMeta{}, errors.New("not a meta page")
	}
	m := p[pageHeaderSize:]
	if le.Uint32(m) != boltMagic {
		return boltMeta{}, errors.New("bad magic")
	}
	if le.Uint32(m[4:]) != boltVersion {
		return boltMeta{}, fmt.Errorf("engine version %d", le.Uint32(m[4:]))
	}
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != le.Uint64(m[56:]) {
		return boltMeta{}, errors.New("checksum mismatch")
	}
	mt := boltMeta{pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]), hwm: le.Uint64(m[40:]), tx: le.Uint64(m[48:])}
	if ps := mt.pageSize; ps < 1024 || ps > maxPageSize || ps&(ps-1) != 0 {
		return boltMeta{}, fmt.Errorf("page size %d", ps)
	}
	return mt, nil
}

// bucketSum is a bucket's digest: entries, sum of entry hashes, sequence.
type bucketSum struct {
	n, sum, seq uint64
}

func entryHash(k, v []byte) uint64 {
	x := uint64(checksum(k, v)) | uint64(len(k))<<32 ^ uint64(len(v))<<44
	// splitmix64's finaliser: the sum of hashes must not be linear in the
	// CRC.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func (s *bucketSum) add(k, v []byte) { s.n++; s.sum += entryHash(k, v) }
func (s *bucketSum) sub(k, v []byte) { s.n--; s.sum -= entryHash(k, v) }

// dataBuckets are the buckets with a digest, in the digest record's order.
var dataBuckets = allBuckets[1:]

var keyDigest = []byte("digest")

// encodeDigests makes the digest record: per data bucket n, sum, seq
// (8 bytes each), the engine's id of the transaction that writes it (8
// bytes), then a CRC-32C of those bytes.
func encodeDigests(s []bucketSum, txid uint64) []byte {
	b := make([]byte, 0, 24*len(s)+12)
	for _, x := range s {
		b = binary.BigEndian.AppendUint64(b, x.n)
		b = binary.BigEndian.AppendUint64(b, x.sum)
		b = binary.BigEndian.AppendUint64(b, x.seq)
	}
	b = binary.BigEndian.AppendUint64(b, txid)
	return binary.BigEndian.AppendUint32(b, crcUpdate(0, b))
}

// decodeDigests reads a digest record; txid is 0 in a record written
// before records held it.
func decodeDigests(b []byte) (s []bucketSum, txid uint64, err error) {
	n := 24 * len(dataBuckets)
	if len(b) != n+4 && len(b) != n+12 || binary.BigEndian.Uint32(b[len(b)-4:]) != crcUpdate(0, b[:len(b)-4]) {
		return nil, 0, fmt.Errorf("embedded: the digest record is damaged: %w", crdt.ErrCorruptEncoding)
	}
	s = make([]bucketSum, len(dataBuckets))
	for i := range s {
		r := b[24*i:]
		s[i] = bucketSum{binary.BigEndian.Uint64(r), binary.BigEndian.Uint64(r[8:]), binary.BigEndian.Uint64(r[16:])}
	}
	if len(b) == n+12 {
		txid = binary.BigEndian.Uint64(b[n:])
	}
	return s, txid, nil
}

// fileCheck walks one version of the file.
type fileCheck struct {
	data  []byte // the file, mapped
	ps    uint64
	hwm   uint64
	tx    uint64 // the meta page's transaction: the version checked
	state []byte // per page: 0 not seen, 1 reachable, 2 free, 3 meta or freelist

	// Found in the root bucket.
	sums   map[string]*bucketSum
	digest []byte // meta bucket's digest key
	other  bool   // the meta bucket holds another key
}

type damageError struct{ msg string }

func (e *damageError) Error() string { return e.msg }

// damaged reports damage the file check found.
func damaged(format string, args ...any) error {
	return &damageError{fmt.Sprintf(format, args...)}
}

// maxPageSize is the largest page size the check accepts.
const maxPageSize = 1 << 16

// pickMeta returns the meta page to check the file at data by: with
// wantTx non-zero that transaction's, not requiring the other meta page to
// be valid (a writer may be writing it), else the newer of two valid ones.
func pickMeta(data []byte, wantTx uint64) (boltMeta, error) {
	if len(data) < 2*1024 {
		return boltMeta{}, damaged("%d bytes: too small for the engine's two meta pages", len(data))
	}
	m0, err0 := readMeta(data)
	ps := uint64(m0.pageSize) // 0 if meta page 0 is invalid: then take meta page 1's, wherever it is
	for try := uint64(1024); ps == 0 && try <= maxPageSize && 2*try <= uint64(len(data)); try *= 2 {
		if m, err := readMeta(data[try:]); err == nil && uint64(m.pageSize) == try {
			ps = try
		}
	}
	m1, err1 := boltMeta{}, errors.New("no valid page size")
	if ps != 0 && 2*ps <= uint64(len(data)) {
		m1, err1 = readMeta(data[ps:])
	}
	switch {
	case wantTx != 0 && err0 == nil && m0.tx == wantTx:
		return m0, nil
	case wantTx != 0 && err1 == nil && m1.tx == wantTx:
		return m1, nil
	case wantTx != 0:
		return boltMeta{}, errRetry
	case err0 != nil:
		return boltMeta{}, damaged("meta page 0: %v", err0)
	case err1 != nil:
		return boltMeta{}, damaged("meta page 1: %v", err1)
	case m0.pageSize != m1.pageSize:
		return boltMeta{}, damaged("meta pages disagree on the page size (%d, %d)", m0.pageSize, m1.pageSize)
	case m0.tx != m1.tx+1 && m1.tx != m0.tx+1 && !copiedThenWritten(m0.tx, m1.tx):
		return boltMeta{}, damaged("meta pages hold transactions %d and %d, not two consecutive ones", m0.tx, m1.tx)
	case m0.tx > m1.tx:
		return m0, nil
	}
	return m1, nil
}

// copiedThenWritten reports whether meta pages 0 and 1 holding
// transactions tx0 and tx1 are those of a copy the engine wrote (Backup,
// Restore: transaction T on page 0, T−1 on page 1) with an odd T, written
// once since: the engine writes transaction n to page n mod 2, so that
// write, T+1, replaced page 0, and page 1 still holds T−1, on the page
// that no write of the engine gives an even transaction. The next write
// makes them consecutive again.
func copiedThenWritten(tx0, tx1 uint64) bool {
	return tx0%2 == 0 && tx1%2 == 0 && tx0 == tx1+2
}

// checkFile checks the file mapped at data (the version of transaction
// wantTx, if not zero).
func checkFile(data []byte, wantTx uint64) (*fileCheck, error) {
	m, err := pickMeta(data, wantTx)
	if err != nil {
		return nil, err
	}
	ps := uint64(m.pageSize)
	if m.hwm < 3 || m.hwm > uint64(len(data))/ps {
		return nil, damaged("high-water mark of %d pages, the file holds %d (truncated?)", m.hwm, uint64(len(data))/ps)
	}
	if m.root < 2 || m.root >= m.hwm {
		return nil, damaged("root page %d outside [2, %d)", m.root, m.hwm)
	}
	c := &fileCheck{data: data, ps: ps, hwm: m.hwm, tx: m.tx, state: make([]byte, m.hwm), sums: map[string]*bucketSum{}}
	c.state[0], c.state[1] = 3, 3
	if m.freelist != noFreelist {
		if err := c.freelist(m.freelist); err != nil {
			return nil, err
		}
	}
	if err := c.bucket(m.root, nil, 0, nil); err != nil {
		return nil, err
	}
	if m.freelist != noFreelist {
		for id, s := range c.state {
			if s == 0 {
				return nil, damaged("page %d is neither reachable nor free", id)
			}
		}
	}
	return c, nil
}

var errRetry = errors.New("the transaction's meta page was overwritten")

// page returns page id with its overflow pages.
func (c *fileCheck) page(id uint64, mark byte) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, damaged("page %d outside [2, %d)", id, c.hwm)
	}
	h := c.data[id*c.ps:]
	le := binary.LittleEndian
	if got := le.Uint64(h); got != id {
		return nil, damaged("page %d says it is page %d", id, got)
	}
	over := uint64(le.Uint32(h[12:]))
	if over >= c.hwm-id {
		return nil, damaged("page %d: %d overflow pages run past the high-water mark", id, over)
	}
	for i := id; i <= id+over; i++ {
		if c.state[i] != 0 {
			return nil, damaged("page %d reached twice (a cycle, a shared page or a live page listed as free)", i)
		}
		c.state[i] = mark
	}
	return c.data[id*c.ps : (id+over+1)*c.ps : (id+over+1)*c.ps], nil
}

func (c *fileCheck) freelist(id uint64) error {
	p, err := c.page(id, 3)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if le.Uint16(p[8:]) != flagFreelist {
		return damaged("page %d: freelist page of type %#x", id, le.Uint16(p[8:]))
	}
	n, at := uint64(le.Uint16(p[10:])), uint64(pageHeaderSize)
	if n == 0xffff {
		n, at = le.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > (uint64(len(p))-at)/8 {
		return damaged("freelist page %d: %d entries do not fit", id, n)
	}
	for i := range n {
		f := le.Uint64(p[at+8*i:])
		if f < 2 || f >= c.hwm {
			return damaged("freelist page %d: free page %d outside [2, %d)", id, f, c.hwm)
		}
		if c.state[f] != 0 {
			return damaged("freelist page %d: page %d listed twice or in use", id, f)
		}
		c.state[f] = 2
	}
	return nil
}

// bucket checks a bucket's tree: rooted at page root, or inline (root 0).
func (c *fileCheck) bucket(root uint64, inline []byte, depth int, sum *bucketSum) error {
	if depth > maxBucketDepth {
		return damaged("buckets nested deeper than %d", maxBucketDepth)
	}
	if root == 0 {
		if len(inline) < pageHeaderSize {
			return damaged("inline bucket of %d bytes", len(inline))
		}
		if binary.LittleEndian.Uint16(inline[8:]) != flagLeaf {
			return damaged("inline bucket of type %#x", binary.LittleEndian.Uint16(inline[8:]))
		}
		_, err := c.elements(inline, 0, nil, nil, 0, depth, sum)
		return err
	}
	_, err := c.tree(root, nil, nil, 0, depth, sum)
	return err
}

// tree checks the subtree at page id, whose keys must lie in [lo, hi)
// (nil: unbounded) and start with lo when set; it returns the subtree's
// greatest key.
func (c *fileCheck) tree(id uint64, lo, hi []byte, level, depth int, sum *bucketSum) ([]byte, error) {
	if level > maxTreeDepth {
		return nil, damaged("tree deeper than %d levels", maxTreeDepth)
	}
	p, err := c.page(id, 1)
	if err != nil {
		return nil, err
	}
	return c.elements(p, id, lo, hi, level, depth, sum)
}

// elements checks the elements of a branch or leaf page p.
func (c *fileCheck) elements(p []byte, id uint64, lo, hi []byte, level, depth int, sum *bucketSum) ([]byte, error) {
	le := binary.LittleEndian
	flags, n := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	if pageHeaderSize+n*elementSize > len(p) {
		return nil, damaged("page %d: %d elements do not fit", id, n)
	}
	// The engine writes the elements' keys (and a leaf's values) back to
	// back after the last element: a count that does not match is found
	// here, also where no digest would (format 1).
	at := uint64(pageHeaderSize + n*elementSize)
	for i := range n {
		e := pageHeaderSize + i*elementSize
		pos, size := uint64(le.Uint32(p[e:])), uint64(le.Uint32(p[e+4:]))
		if flags != flagBranch {
			pos, size = uint64(le.Uint32(p[e+4:])), uint64(le.Uint32(p[e+8:]))+uint64(le.Uint32(p[e+12:]))
		}
		if uint64(e)+pos != at {
			return nil, damaged("page %d: element %d of %d starts at byte %d, not %d (a wrong element count?)", id, i, n, uint64(e)+pos, at)
		}
		at += size
	}
	key := func(i int) ([]byte, uint32, []byte, error) {
		e := pageHeaderSize + i*elementSize
		pos, ks := uint64(le.Uint32(p[e+4:])), uint64(le.Uint32(p[e+8:]))
		var vs uint64
		if flags == flagBranch {
			pos, ks = uint64(le.Uint32(p[e:])), uint64(le.Uint32(p[e+4:]))
		} else {
			vs = uint64(le.Uint32(p[e+12:]))
		}
		if uint64(e)+pos+ks+vs > uint64(len(p)) {
			return nil, 0, nil, damaged("page %d: element %d runs past the page", id, i)
		}
		k := p[uint64(e)+pos : uint64(e)+pos+ks]
		return k, le.Uint32(p[e:]), p[uint64(e)+pos+ks : uint64(e)+pos+ks+vs], nil
	}
	var prev []byte
	// inOrder is key(i), checked to lie after prev and within [lo, hi).
	// A page below a branch starts with the branch element's key (lo):
	// the engine finds a page's element in its parent by that first key
	// when it writes the page again, and would add a second one otherwise.
	inOrder := func(i int) ([]byte, uint32, []byte, error) {
		k, fl, v, err := key(i)
		if err == nil && ((i > 0 && bytes.Compare(prev, k) >= 0) || (i == 0 && lo != nil && !bytes.Equal(k, lo)) ||
			(hi != nil && bytes.Compare(k, hi) >= 0)) {
			err = damaged("page %d: key %d out of order", id, i)
		}
		return k, fl, v, err
	}
	switch flags {
	case flagBranch:
		if n == 0 {
			return nil, damaged("page %d: empty branch page", id)
		}
		for i := range n {
			k, _, _, err := inOrder(i)
			if err != nil {
				return nil, err
			}
			next := hi
			if i+1 < n {
				if next, _, _, err = key(i + 1); err != nil {
					return nil, err
				}
			}
			child := le.Uint64(p[pageHeaderSize+i*elementSize+8:])
			max, err := c.tree(child, k, next, level+1, depth, sum)
			if err != nil {
				return nil, err
			}
			if prev = max; prev == nil {
				prev = k
			}
		}
		return prev, nil
	case flagLeaf:
		for i := range n {
			k, fl, v, err := inOrder(i)
			if err != nil {
				return nil, err
			}
			prev = k
			switch {
			case fl == bucketLeafFlag:
				if len(v) < 16 {
					return nil, damaged("page %d: bucket %q with a %d-byte header", id, k, len(v))
				}
				var s *bucketSum
				if depth == 0 {
					s = &bucketSum{seq: le.Uint64(v[8:])}
					c.sums[string(k)] = s
				}
				if err := c.bucket(le.Uint64(v), v[16:], depth+1, s); err != nil {
					return nil, err
				}
			case fl != 0:
				return nil, damaged("page %d: element %d has flags %#x", id, i, fl)
			case depth == 0:
				return nil, damaged("page %d: a value in the root bucket", id)
			default:
				if sum != nil {
					sum.add(k, v)
				}
				if depth == 1 && c.sums["meta"] == sum && sum != nil {
					switch {
					case bytes.Equal(k, keyDigest):
						c.digest = bytes.Clone(v)
					case !bytes.Equal(k, keyFormat):
						c.other = true
					}
				}
			}
		}
		return prev, nil
	}
	return nil, damaged("page %d: type %#x where a branch or leaf page belongs", id, flags)
}

// compareDigests checks the walk's digests against the stored record of
// a file of format version.
func (c *fileCheck) compareDigests(version int) error {
	if c.other {
		return damaged("the meta bucket holds an unknown key")
	}
	if c.digest == nil {
		return damaged("the digest record is missing")
	}
	want, txid, err := decodeDigests(c.digest)
	if err != nil {
		return err
	}
	if version >= 3 && txid == 0 {
		return damaged("the digest record names no transaction")
	}
	if version == 2 && txid != 0 { // format 3's record: the marker is damaged
		return damaged("a format 2 file whose digest record names a transaction")
	}
	if txid != 0 && txid != c.tx {
		// A page holding the record and its bucket's entries went back
		// to an earlier commit's content: a lost write.
		return damaged("the digest record was written by transaction %d, the file is at %d (a lost page write?)", txid, c.tx)
	}
	for i, b := range dataBuckets {
		got := c.sums[string(b)]
		if got == nil {
			return damaged("bucket %q is missing", b)
		}
		if *got != want[i] {
			return damaged("bucket %q holds %d entries (digest %x, sequence %d), its record says %d (%x, %d)",
				b, got.n, got.sum, got.seq, want[i].n, want[i].sum, want[i].seq)
		}
	}
	return nil
}

// checkPath checks the data file at path as it is now (its size read
// under the caller's lock).
func checkPath(path string) (*fileCheck, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return checkMapped(f, st.Size(), 0)
}

// checkMapped maps size bytes of f read-only and checks them.
func checkMapped(f *os.File, size int64, wantTx uint64) (*fileCheck, error) {
	head := make([]byte, min(size, 2<<16))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	m, err := pickMeta(head, wantTx)
	if err != nil {
		return nil, err
	}
	// Map no more than its high-water mark covers (a sparse or padded file
	// is not read past it).
	end, ps := uint64(len(head)), uint64(m.pageSize)
	if m.hwm <= uint64(size)/ps {
		end = max(end, m.hwm*ps)
	}
	if end != uint64(int(end)) {
		return nil, damaged("%d bytes: too large to map", end)
	}
	data, unmap, err := mapFile(f, int(end))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	defer unmap()
	c, err := checkFile(data, wantTx)
	if c != nil {
		c.data = nil // unmapped
	}
	return c, err
}

// freePages counts the pages below the high-water mark the engine may
// reuse: those its freelist lists, or, when it keeps none in the file,
// those no bucket reaches.
func (c *fileCheck) freePages() int {
	n := 0
	for _, s := range c.state {
		if s == 2 || s == 0 {
			n++
		}
	}
	return n
}
