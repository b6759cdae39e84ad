package embedded_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

// The damage suite: a store of known contents (the fixture) is closed,
// and copies of its file are damaged in every way below. Each copy is
// opened, read in full and verified in a child process (the test binary
// re-executed), so that a crash or a hang is observed as an outcome rather
// than ending the suite. A copy's outcome is one of:
//
//	intact    every read returned the fixture's data and Verify passed
//	reported  Open, a read or Verify failed with an error wrapping an
//	          allowed sentinel, and no read returned wrong data silently
//	verify    a read returned wrong data without an error, but Verify
//	          reported the damage
//	wrong     a read returned wrong data and Verify passed
//	other     an error that wraps no allowed sentinel
//	crash     the child died
//	hang      the child made no progress for damageTimeout
//
// Only intact, reported and verify are acceptable.

const (
	envDamageChild   = "COUNTERKIT_EMBEDDED_DAMAGE_CHILD"
	envDamageFixture = "COUNTERKIT_EMBEDDED_DAMAGE_FIXTURE"
)

// damageTimeout is how long one copy may take before it counts as a hang
// (generous: CI runs the race detector on a loaded machine).
const damageTimeout = 20 * time.Second

type edit struct {
	Off int
	B   []byte // written over the file at Off
}

type damage struct {
	Class, Name string
	Edits       []edit
	Truncate    int    // < 0: none; otherwise the file's new length
	Odd         string // replace the data file by an odd file instead
	// AllowUnavailable accepts crdt.ErrUnavailable (odd files).
	AllowUnavailable bool
}

type damagePlan struct {
	Orig      string // the undamaged data file
	Work      string // directory for the copies
	Unchecked bool
	// Inspect reads each copy with Keys, ReadStats and Compact
	// (checkInspect) instead of Open (checkFixture).
	Inspect bool
	Start   int
	Copies  []damage
}

// Fixture: siblings key-s000.. (every fifth key with two siblings), rows
// r000.. of partition "part" with point and range deletions, and a dropped
// partition "gone".
const fixN = 160

func fixPayload(id string) []byte {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	n := 8 + int(x%40)
	b := append([]byte(id), ':')
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b = append(b, 'a'+byte(x%26))
	}
	return b
}

func fixDeleted(i int) bool { return i%9 == 4 || (i >= 100 && i < 105) }

func buildFixture(t testing.TB, dir string) {
	t.Helper()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatal(err)
		}
	}
	for i := range fixN {
		id := fmt.Sprintf("s%03d", i)
		must(db.Siblings().Put(ctx, "key-"+id, "a", fixPayload(id), nil))
		if i%5 == 0 {
			must(db.Siblings().Put(ctx, "key-"+id, "b", fixPayload(id+"b"), nil))
		}
		rid := fmt.Sprintf("r%03d", i)
		must(db.Partitions().Apply(ctx, []store.Mutation{{Partition: "part", Op: store.OpPut, Key: []byte(rid), Value: fixPayload(rid), Timestamp: tsBase + int64(i)}}))
	}
	// A sibling put and deleted: its dot is gone, the sequence moved on.
	must(db.Siblings().Put(ctx, "key-temp", "a", []byte("temp"), nil))
	_, tok, err := db.Siblings().Fetch(ctx, "key-temp")
	must(err)
	must(db.Siblings().Delete(ctx, "key-temp", tok))
	var muts []store.Mutation
	for i := range fixN {
		if i%9 == 4 {
			muts = append(muts, store.Mutation{Partition: "part", Op: store.OpDelete, Key: []byte(fmt.Sprintf("r%03d", i)), Timestamp: tsBase + 1000})
		}
	}
	muts = append(muts, store.Mutation{Partition: "part", Op: store.OpDeleteRange, Key: []byte("r100"), End: []byte("r105"), Timestamp: tsBase + 1000})
	must(db.Partitions().Apply(ctx, muts))
	for i := range 10 {
		must(db.Partitions().Apply(ctx, []store.Mutation{{Partition: "gone", Op: store.OpPut, Key: []byte{byte(i)}, Value: []byte("x"), Timestamp: tsBase}}))
	}
	must(db.Partitions().Apply(ctx, []store.Mutation{{Partition: "gone", Op: store.OpDeletePartition, Timestamp: tsBase + 1000}}))
}

// checkFixture opens dir, reads everything and verifies; it returns the
// outcome and a detail.
func checkFixture(dir string, opts embedded.Options, allowUnavailable bool) (string, string) {
	allowed := func(err error) bool {
		return errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, crdt.ErrMisconfiguredStore) ||
			errors.Is(err, crdt.ErrUnsupportedVersion) || (allowUnavailable && errors.Is(err, crdt.ErrUnavailable))
	}
	db, err := embedded.Open(dir, opts)
	if err != nil {
		if allowed(err) {
			return "reported", "open: " + err.Error()
		}
		return "other", "open: " + err.Error()
	}
	defer db.Close()
	return checkOpenFixture(db, allowed)
}

// checkOpenFixture is checkFixture on an open store; allowed tells the
// errors that report damage.
func checkOpenFixture(db *embedded.DB, allowed func(error) bool) (string, string) {
	ctx := context.Background()
	var wrong, reported []string
	note := func(what string, err error) bool {
		if err == nil {
			return false
		}
		if allowed(err) {
			reported = append(reported, what+": "+err.Error())
		} else {
			wrong = append(wrong, what+": unexpected error "+err.Error())
		}
		return true
	}
	for i := range fixN {
		id := fmt.Sprintf("s%03d", i)
		vals, _, err := db.Siblings().Fetch(ctx, "key-"+id)
		if note("fetch "+id, err) {
			continue
		}
		want := [][]byte{fixPayload(id)}
		if i%5 == 0 {
			want = append(want, fixPayload(id+"b"))
		}
		if !slices.EqualFunc(vals, want, bytes.Equal) {
			wrong = append(wrong, fmt.Sprintf("fetch %s: %q", id, vals))
		}
	}
	for _, k := range []string{"key-temp", "key-s999"} {
		vals, _, err := db.Siblings().Fetch(ctx, k)
		if !note("fetch "+k, err) && len(vals) != 0 {
			wrong = append(wrong, fmt.Sprintf("fetch %s: %q", k, vals))
		}
	}
	var want []store.Row
	for i := range fixN {
		if !fixDeleted(i) {
			id := fmt.Sprintf("r%03d", i)
			want = append(want, store.Row{Key: []byte(id), Value: fixPayload(id)})
		}
	}
	rows, err := db.Partitions().Snapshot(ctx, "part", 1<<20, store.ReadComplete)
	if !note("snapshot", err) && !sameRows(rows, want) {
		wrong = append(wrong, fmt.Sprintf("snapshot: %d rows, want %d", len(rows), len(want)))
	}
	var scanned []store.Row
	err = db.Partitions().Scan(ctx, "part", nil, store.ReadComplete, func(r store.Row) bool {
		scanned = append(scanned, r)
		return len(scanned) <= 2*fixN
	})
	if !note("scan", err) && !sameRows(scanned, want) {
		wrong = append(wrong, fmt.Sprintf("scan: %d rows, want %d", len(scanned), len(want)))
	}
	rows, err = db.Partitions().Snapshot(ctx, "gone", 100, store.ReadComplete)
	if !note("snapshot gone", err) && len(rows) != 0 {
		wrong = append(wrong, fmt.Sprintf("dropped partition: %d rows", len(rows)))
	}
	verr := db.Verify()
	vnote := ""
	if verr != nil {
		vnote = "verify: " + verr.Error()
		if !allowed(verr) {
			return "other", vnote
		}
	}
	switch {
	case len(wrong) > 0 && verr == nil:
		return "wrong", strings.Join(wrong, "; ")
	case len(wrong) > 0:
		return "verify", wrong[0] + " | " + vnote
	case verr != nil:
		return "reported", vnote
	case len(reported) > 0:
		return "reported", reported[0]
	}
	return "intact", ""
}

// applyDamage makes a damaged copy of orig in a new directory under work.
func applyDamage(orig, work string, d damage) (string, error) {
	dir, err := os.MkdirTemp(work, "copy-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(orig)
	if err != nil {
		return "", err
	}
	switch d.Odd {
	case "":
	case "directory":
		return dir, os.Mkdir(path, 0o755)
	case "fifo":
		return dir, syscall.Mkfifo(path, 0o600)
	case "symlink":
		if err := os.WriteFile(filepath.Join(work, filepath.Base(dir)+".target"), b, 0o600); err != nil {
			return "", err
		}
		return dir, os.Symlink(filepath.Join(work, filepath.Base(dir)+".target"), path)
	case "dangling symlink":
		return dir, os.Symlink(filepath.Join(work, "nowhere"), path)
	case "symlink loop":
		return dir, os.Symlink(path, path)
	case "symlink to /dev/zero":
		return dir, os.Symlink("/dev/zero", path)
	case "sparse 64 GiB tail":
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return "", err
		}
		return dir, os.Truncate(path, 64<<30)
	case "read-only file":
		if err := os.WriteFile(path, b, 0o400); err != nil {
			return "", err
		}
		return dir, os.Chmod(path, 0o400)
	default:
		return "", fmt.Errorf("unknown odd file %q", d.Odd)
	}
	for _, e := range d.Edits {
		copy(b[e.Off:], e.B)
	}
	if d.Truncate >= 0 {
		b = b[:d.Truncate]
	}
	return dir, os.WriteFile(path, b, 0o600)
}

// TestDamageChild is the child side of the damage suite.
func TestDamageChild(t *testing.T) {
	planFile := os.Getenv(envDamageChild)
	if planFile == "" {
		t.Skip("runs only as a child of the damage suite")
	}
	raw, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var p damagePlan
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	opts := embedded.Options{LockTimeout: 50 * time.Millisecond}
	if p.Unchecked {
		opts = embedded.UncheckedOptions(opts)
		defer embedded.SetInspectUnchecked(true)()
	}
	var wantKeys []embedded.KeyInfo
	if p.Inspect {
		if wantKeys, err = embedded.Keys(context.Background(), filepath.Dir(p.Orig)); err != nil {
			t.Fatal(err)
		}
	}
	for i := p.Start; i < len(p.Copies); i++ {
		fmt.Printf("begin %d\n", i)
		switch p.Copies[i].Odd {
		case "harness: crash":
			go func() { panic("a crash the harness must see") }()
			time.Sleep(time.Minute)
		case "harness: hang":
			select {}
		}
		dir, err := applyDamage(p.Orig, p.Work, p.Copies[i])
		if err != nil {
			fmt.Printf("end %d setup %q\n", i, err.Error())
			continue
		}
		var outcome, detail string
		if p.Inspect {
			outcome, detail = checkInspect(dir, wantKeys, p.Copies[i].AllowUnavailable)
		} else {
			outcome, detail = checkFixture(dir, opts, p.Copies[i].AllowUnavailable)
		}
		os.RemoveAll(dir)
		if len(detail) > 2000 {
			detail = detail[:2000] + "..."
		}
		fmt.Printf("end %d %s %q\n", i, outcome, detail)
	}
}

type damageResult struct {
	outcome, detail string
}

// runDamage runs the copies in child processes, one child for as many
// copies as it gets through: after a crash or a hang the next child starts
// at the following copy.
func runDamage(t *testing.T, orig string, copies []damage, unchecked bool, timeout time.Duration) []damageResult {
	t.Helper()
	return runDamagePlan(t, damagePlan{Orig: orig, Unchecked: unchecked, Copies: copies}, timeout)
}

// runDamagePlan is runDamage for a plan of any mode; it sets the plan's
// Work and Start.
func runDamagePlan(t *testing.T, p damagePlan, timeout time.Duration) []damageResult {
	t.Helper()
	copies := p.Copies
	p.Work = t.TempDir()
	work := p.Work
	res := make([]damageResult, len(copies))
	planFile := filepath.Join(work, "plan.json")
	for start := 0; start < len(copies); {
		p.Start = start
		raw, _ := json.Marshal(p)
		if err := os.WriteFile(planFile, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestDamageChild$", "-test.v=false", "-test.timeout=0")
		cmd.Env = append(os.Environ(), envDamageChild+"="+planFile)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
			// A line too long ends the scan: keep the child's stdout
			// drained so that it cannot block on it.
			io.Copy(io.Discard, out)
			close(lines)
		}()
		cur := -1
		timer := time.NewTimer(timeout)
		done, killed := false, false
		for !done {
			select {
			case l, ok := <-lines:
				if !ok {
					done = true
					break
				}
				f := strings.SplitN(l, " ", 4)
				if len(f) < 2 {
					continue
				}
				i, err := strconv.Atoi(f[1])
				if err != nil {
					continue
				}
				switch f[0] {
				case "begin":
					cur = i
					timer.Reset(timeout)
				case "end":
					detail := ""
					if len(f) == 4 {
						detail, _ = strconv.Unquote(f[3])
					}
					res[i] = damageResult{f[2], detail}
					cur = -1
					start = i + 1
				}
			case <-timer.C:
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				killed = true
				if cur >= 0 {
					res[cur] = damageResult{"hang", "no answer within " + timeout.String()}
					start = cur + 1
					cur = -1
				}
				for range lines {
				}
				done = true
			}
		}
		timer.Stop()
		werr := cmd.Wait()
		if cur >= 0 {
			tail := stderr.String()
			if i := strings.Index(tail, "fatal error"); i >= 0 {
				tail = tail[i:]
			} else if i := strings.Index(tail, "panic:"); i >= 0 {
				tail = tail[i:]
			}
			res[cur] = damageResult{"crash", fmt.Sprintf("%v: %.300s", werr, tail)}
			start = cur + 1
		} else if !killed && start < len(copies) && res[start].outcome == "" {
			t.Fatalf("child stopped before copy %d: %v\n%s", start, werr, stderr.String())
		}
	}
	return res
}

var acceptable = map[string]bool{"intact": true, "reported": true, "verify": true}

// tally logs outcome counts per class and returns the copies whose outcome
// is not acceptable.
func tallyDamage(t *testing.T, copies []damage, res []damageResult) (bad []string, counts map[string]map[string]int) {
	t.Helper()
	counts = map[string]map[string]int{}
	var classes []string
	for i, d := range copies {
		if counts[d.Class] == nil {
			counts[d.Class] = map[string]int{}
			classes = append(classes, d.Class)
		}
		counts[d.Class][res[i].outcome]++
		if !acceptable[res[i].outcome] {
			bad = append(bad, fmt.Sprintf("%s/%s: %s %s", d.Class, d.Name, res[i].outcome, res[i].detail))
		}
	}
	total := map[string]int{}
	for _, c := range classes {
		t.Logf("%-12s %s", c, showCounts(counts[c]))
		for k, v := range counts[c] {
			total[k] += v
		}
	}
	t.Logf("%-12s %s", "all", showCounts(total))
	return bad, counts
}

func showCounts(m map[string]int) string {
	n := 0
	for _, v := range m {
		n += v
	}
	var parts []string
	for _, k := range []string{"intact", "reported", "verify", "wrong", "other", "crash", "hang"} {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return fmt.Sprintf("%4d copies: %s", n, strings.Join(parts, ", "))
}

// bbolt's layout, as far as the damage needs it: little-endian page
// headers (id u64, flags u16, count u16, overflow u32), meta pages 0 and 1,
// 16-byte branch (pos, ksize, pgid) and leaf (flags, pos, ksize, vsize)
// elements, positions relative to the element.
const (
	hdr        = 16
	flBranch   = 0x01
	flLeaf     = 0x02
	flFreelist = 0x10
)

type fileLayout struct {
	b        []byte
	ps       int
	hwm      int   // pages
	newer    int   // the meta page with the greater txid
	freelist int   // its freelist page
	pages    []int // leaf and branch pages (by header)
}

// Meta page fields, from the page's start.
const (
	mMagic    = 16
	mVersion  = 20
	mPageSize = 24
	mRoot     = 32
	mSeq      = 40
	mFreelist = 48
	mPgid     = 56
	mTxid     = 64
	mChecksum = 72
)

func layoutOf(t testing.TB, b []byte) fileLayout {
	t.Helper()
	le := binary.LittleEndian
	ps := int(le.Uint32(b[mPageSize:]))
	l := fileLayout{b: b, ps: ps}
	if le.Uint64(b[ps+mTxid:]) > le.Uint64(b[mTxid:]) {
		l.newer = 1
	}
	m := b[l.newer*ps:]
	l.freelist = int(le.Uint64(m[mFreelist:]))
	l.hwm = int(le.Uint64(m[mPgid:]))
	for pg := 2; pg < l.hwm; pg++ {
		h := b[pg*ps:]
		if int(le.Uint64(h)) == pg && (le.Uint16(h[8:]) == flBranch || le.Uint16(h[8:]) == flLeaf) {
			l.pages = append(l.pages, pg)
		}
	}
	return l
}

func u16(v int) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(v)) }
func u32(v int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func u64(v int) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

func (l fileLayout) count(pg int) int { return int(binary.LittleEndian.Uint16(l.b[pg*l.ps+10:])) }
func (l fileLayout) flags(pg int) int { return int(binary.LittleEndian.Uint16(l.b[pg*l.ps+8:])) }

// elem returns the file offset of element i of page pg.
func (l fileLayout) elem(pg, i int) int { return pg*l.ps + hdr + 16*i }

func (l fileLayout) childOf(pg, i int) int {
	return int(binary.LittleEndian.Uint64(l.b[l.elem(pg, i)+8:]))
}

// metaDamage damages each field of each meta page.
func metaDamage(l fileLayout) []damage {
	var out []damage
	le := binary.LittleEndian
	for m := range 2 {
		role := "older"
		if m == l.newer {
			role = "newer"
		}
		at := func(off int) int { return m*l.ps + off }
		add := func(name string, e ...edit) {
			out = append(out, damage{Class: "meta", Name: fmt.Sprintf("%s meta %d: %s", role, m, name), Edits: e, Truncate: -1})
		}
		add("checksum zeroed", edit{at(mChecksum), make([]byte, 8)})
		add("checksum bit", edit{at(mChecksum), []byte{l.b[at(mChecksum)] ^ 1}})
		add("magic", edit{at(mMagic), []byte{l.b[at(mMagic)] ^ 0x10}})
		add("version", edit{at(mVersion), u32(1)})
		add("page size", edit{at(mPageSize), u32(l.ps * 2)})
		add("root", edit{at(mRoot), []byte{l.b[at(mRoot)] ^ 1}})
		add("root past the end", edit{at(mRoot), u64(l.hwm + 7)})
		add("freelist", edit{at(mFreelist), []byte{l.b[at(mFreelist)] ^ 1}})
		add("high-water mark", edit{at(mPgid), u64(int(le.Uint64(l.b[at(mPgid):])) - 1)})
		add("txid", edit{at(mTxid), []byte{l.b[at(mTxid)] ^ 4}})
		add("page zeroed", edit{m * l.ps, make([]byte, l.ps)})
	}
	out = append(out, damage{Class: "meta", Name: "both checksums zeroed", Truncate: -1,
		Edits: []edit{{mChecksum, make([]byte, 8)}, {l.ps + mChecksum, make([]byte, 8)}}})
	return out
}

// structDamage damages counts, flags and pointers of every leaf and branch
// page, the buckets' headers and the freelist.
func structDamage(l fileLayout) []damage {
	var out []damage
	add := func(class string, pg int, name string, e ...edit) {
		out = append(out, damage{Class: class, Name: fmt.Sprintf("page %d: %s", pg, name), Edits: e, Truncate: -1})
	}
	for _, pg := range l.pages {
		base := pg * l.ps
		n := l.count(pg)
		add("count", pg, "count-1", edit{base + 10, u16(n - 1)})
		add("count", pg, "count+1", edit{base + 10, u16(n + 1)})
		add("count", pg, "count 0", edit{base + 10, u16(0)})
		add("count", pg, "count 65535", edit{base + 10, u16(0xffff)})
		add("header", pg, "overflow+1", edit{base + 12, u32(1)})
		add("header", pg, "id", edit{base, u64(pg + 1)})
		if l.flags(pg) == flLeaf {
			add("header", pg, "leaf as branch", edit{base + 8, u16(flBranch)})
			if n == 0 {
				continue
			}
			e0 := l.elem(pg, 0)
			add("pointer", pg, "element 0 position past the page", edit{e0 + 4, u32(l.ps * 3)})
			add("pointer", pg, "last element value size huge", edit{l.elem(pg, n-1) + 12, u32(0x7fffffff)})
			add("pointer", pg, "element 0 key size +1", edit{e0 + 8, u32(int(binary.LittleEndian.Uint32(l.b[e0+8:])) + 1)})
			for i := range n {
				e := l.elem(pg, i)
				if binary.LittleEndian.Uint32(l.b[e:])&1 == 0 {
					continue
				}
				// A bucket: its value is root pgid, sequence.
				v := e + int(binary.LittleEndian.Uint32(l.b[e+4:])) + int(binary.LittleEndian.Uint32(l.b[e+8:]))
				name := fmt.Sprintf("bucket %d", i)
				add("bucket", pg, name+" flag cleared", edit{e, u32(0)})
				add("bucket", pg, name+" sequence-1", edit{v + 8, u64(int(binary.LittleEndian.Uint64(l.b[v+8:])) - 1)})
				if binary.LittleEndian.Uint64(l.b[v:]) != 0 {
					add("self", pg, name+" root to its parent page", edit{v, u64(pg)})
					add("past end", pg, name+" root past the end", edit{v, u64(l.hwm + 3)})
					add("pointer", pg, name+" root to meta page", edit{v, u64(1)})
					add("pointer", pg, name+" root to freelist", edit{v, u64(l.freelist)})
				} else {
					add("pointer", pg, name+" inline count+1", edit{v + 16 + 10, u16(int(binary.LittleEndian.Uint16(l.b[v+16+10:])) + 1)})
					add("pointer", pg, name+" inline to page", edit{v, u64(l.pages[0])})
				}
			}
			continue
		}
		add("header", pg, "branch as leaf", edit{base + 8, u16(flLeaf)})
		if n == 0 {
			continue
		}
		last := l.elem(pg, n-1)
		add("self", pg, "child 0 to itself", edit{l.elem(pg, 0) + 8, u64(pg)})
		add("self", pg, "last child to itself", edit{last + 8, u64(pg)})
		add("past end", pg, "child 0 past the end", edit{l.elem(pg, 0) + 8, u64(l.hwm)})
		add("past end", pg, "last child far past the end", edit{last + 8, u64(1 << 40)})
		add("pointer", pg, "child 0 to meta page", edit{l.elem(pg, 0) + 8, u64(0)})
		add("pointer", pg, "child 0 to freelist", edit{l.elem(pg, 0) + 8, u64(l.freelist)})
		add("pointer", pg, "element 0 position past the page", edit{l.elem(pg, 0), u32(l.ps * 2)})
		if n >= 2 {
			a, b := l.childOf(pg, 0), l.childOf(pg, 1)
			add("pointer", pg, "children 0 and 1 swapped", edit{l.elem(pg, 0) + 8, u64(b)}, edit{l.elem(pg, 1) + 8, u64(a)})
			add("pointer", pg, "child 1 = child 0", edit{l.elem(pg, 1) + 8, u64(a)})
		}
	}
	// The freelist page.
	if fl := l.freelist; fl > 1 && fl < l.hwm {
		base := fl * l.ps
		n := l.count(fl)
		add("freelist", fl, "count+1", edit{base + 10, u16(n + 1)})
		add("freelist", fl, "count 0", edit{base + 10, u16(0)})
		add("freelist", fl, "flags", edit{base + 8, u16(flLeaf)})
		if n > 0 {
			add("freelist", fl, "entry to a live page", edit{base + hdr, u64(l.pages[len(l.pages)-1])})
			add("freelist", fl, "entry past the end", edit{base + hdr, u64(l.hwm + 2)})
			add("freelist", fl, "entry to meta", edit{base + hdr, u64(0)})
		} else {
			add("freelist", fl, "a live page freed", edit{base + 10, u16(1)}, edit{base + hdr, u64(l.pages[0])})
		}
	}
	return out
}

func truncDamage(l fileLayout) []damage {
	var out []damage
	for pg := 0; pg*l.ps < len(l.b); pg++ {
		out = append(out, damage{Class: "truncate", Name: fmt.Sprintf("at page %d", pg), Truncate: pg * l.ps})
	}
	out = append(out, damage{Class: "truncate", Name: "one byte short of the high-water mark", Truncate: l.hwm*l.ps - 1})
	return out
}

func flipDamage(l fileLayout, rng *rand.Rand, n int) []damage {
	var out []damage
	for c := range n {
		d := damage{Class: "flips", Truncate: -1}
		var names []string
		for range 1 + rng.IntN(3) {
			off := rng.IntN(l.hwm * l.ps)
			x := byte(1 + rng.IntN(255))
			if rng.IntN(2) == 0 {
				x = 1 << rng.IntN(8) // a single bit
			}
			d.Edits = append(d.Edits, edit{off, []byte{l.b[off] ^ x}})
			names = append(names, fmt.Sprintf("%d^%#x", off, x))
		}
		d.Name = fmt.Sprintf("copy %d: %s", c, strings.Join(names, ","))
		out = append(out, d)
	}
	return out
}

func oddDamage() []damage {
	var out []damage
	for _, k := range []string{"directory", "fifo", "symlink", "dangling symlink", "symlink loop", "symlink to /dev/zero", "sparse 64 GiB tail", "read-only file"} {
		out = append(out, damage{Class: "odd file", Name: k, Odd: k, Truncate: -1, AllowUnavailable: true})
	}
	return out
}

// fixtureFile builds the fixture and returns its data file and bytes.
func fixtureFile(t *testing.T) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	buildFixture(t, dir)
	path := filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestDamage is the damage suite: every copy must be intact or reported,
// never wrong, never a crash or a hang. Every kind of copy runs; the
// random flips are 600 (COUNTERKIT_CASES scales them), 100 in the race
// pass (-short) unless COUNTERKIT_CASES is set.
func TestDamage(t *testing.T) {
	t.Parallel()
	// The engine picks free pages in map order, so two fixtures differ in
	// layout: a failing run saves its fixture, and envDamageFixture names
	// a saved one to replay on.
	var orig string
	var b []byte
	if saved := os.Getenv(envDamageFixture); saved != "" {
		var err error
		if b, err = os.ReadFile(saved); err != nil {
			t.Fatal(err)
		}
		orig = filepath.Join(t.TempDir(), embedded.FileName)
		if err := os.WriteFile(orig, b, 0o600); err != nil {
			t.Fatal(err)
		}
	} else {
		orig, b = fixtureFile(t)
	}
	if outcome, detail := checkFixture(filepath.Dir(orig), embedded.Options{}, false); outcome != "intact" {
		t.Fatalf("the undamaged fixture: %s %s", outcome, detail)
	}
	l := layoutOf(t, b)
	rng, seed := seeded(t)
	flips := proptest.Scale(600)
	if testing.Short() && proptest.Scale(1) == 1 {
		flips = 100
	}
	copies := allDamage(l, rng, flips)
	t.Logf("fixture: %d bytes, page size %d, high-water mark %d pages, %d leaf and branch pages", len(b), l.ps, l.hwm, len(l.pages))
	res := runDamage(t, orig, copies, false, damageTimeout)
	bad, _ := tallyDamage(t, copies, res)
	sort.Strings(bad)
	if len(bad) > 0 && os.Getenv(envDamageFixture) == "" {
		saved := filepath.Join(os.TempDir(), fmt.Sprintf("embedded-damage-fixture-%d.db", seed))
		if err := os.WriteFile(saved, b, 0o600); err == nil {
			t.Logf("replay on this fixture: %s=%s %s", envDamageFixture, saved, proptest.Replay(t, seed))
		}
	}
	for i, s := range bad {
		if i == 40 {
			t.Errorf("... and %d more", len(bad)-40)
			break
		}
		t.Errorf("%s", s)
	}
}

// allDamage is every kind of damaged copy of the file l describes, with
// flips random byte flips drawn from rng.
func allDamage(l fileLayout, rng *rand.Rand, flips int) []damage {
	var copies []damage
	copies = append(copies, truncDamage(l)...)
	copies = append(copies, metaDamage(l)...)
	copies = append(copies, structDamage(l)...)
	copies = append(copies, flipDamage(l, rng, flips)...)
	return append(copies, oddDamage()...)
}

// uncheckedCopies are the damaged copies that reads without the file
// check get wrong: lowered leaf counts and a zeroed newer meta checksum.
func uncheckedCopies(l fileLayout) []damage {
	var copies []damage
	for _, d := range structDamage(l) {
		if strings.HasSuffix(d.Name, "count-1") && l.flags(pageOf(d.Name)) == flLeaf {
			copies = append(copies, d)
		}
	}
	for _, d := range metaDamage(l) {
		if strings.HasPrefix(d.Name, "newer") && strings.HasSuffix(d.Name, "checksum zeroed") {
			copies = append(copies, d)
		}
	}
	return copies
}

// TestDamageCatchesUncheckedStore runs part of the suite against the store
// without its file check and digests (the store before them): lowered
// leaf counts and a zeroed newer meta checksum must show as wrong values,
// so the suite can fail.
func TestDamageCatchesUncheckedStore(t *testing.T) {
	t.Parallel()
	orig, b := fixtureFile(t)
	l := layoutOf(t, b)
	copies := uncheckedCopies(l)
	res := runDamage(t, orig, copies, true, damageTimeout)
	_, counts := tallyDamage(t, copies, res)
	if counts["count"]["wrong"] == 0 || counts["meta"]["wrong"] != 1 {
		t.Fatalf("the suite did not catch the unchecked store: %v", counts)
	}
	// The checked store reports the same copies.
	res = runDamage(t, orig, copies, false, damageTimeout)
	if bad, _ := tallyDamage(t, copies, res); len(bad) > 0 {
		t.Fatalf("checked store: %v", bad)
	}
}

func pageOf(name string) int {
	var pg int
	fmt.Sscanf(name, "page %d:", &pg)
	return pg
}

// TestDamageHarnessSeesCrashAndHang: a child that crashes or hangs on a
// copy is reported as such, and the copies after it still run.
func TestDamageHarnessSeesCrashAndHang(t *testing.T) {
	t.Parallel()
	orig, _ := fixtureFile(t)
	copies := []damage{
		{Class: "harness", Name: "crash", Odd: "harness: crash", Truncate: -1},
		{Class: "harness", Name: "undamaged", Truncate: -1},
		{Class: "harness", Name: "hang", Odd: "harness: hang", Truncate: -1},
		{Class: "harness", Name: "undamaged again", Truncate: -1},
	}
	// The hang is found when a copy takes the timeout: long enough that a
	// child slowed by -race and the parallel damage tests still opens an
	// undamaged copy inside it (the hang costs the whole timeout).
	res := runDamage(t, orig, copies, false, 10*time.Second)
	want := []string{"crash", "intact", "hang", "intact"}
	for i := range want {
		if res[i].outcome != want[i] {
			t.Errorf("copy %q: %s (%s), want %s", copies[i].Name, res[i].outcome, res[i].detail, want[i])
		}
	}
}
