package vectors

// Driver protocol vectors (SPEC.md 11.1; schema in testdata/vectors/README.md):
// scripted runs of the ledger, tally, deltalog and balance drivers. A vector
// is a list of steps. A step sets the clock, calls the driver and lists every
// store call the driver makes: its arguments (keys, the bytes written, the
// token, the write timestamps) and the store's answer (the siblings or rows
// read, and whether a write was acknowledged, refused or ambiguous, landed or
// not, or a read answered from an older state). It then gives what the call
// returned.
//
//	go test ./vectors -run TestDriverVectors            # replay and check
//	go test ./vectors -run TestDriverVectors -update    # regenerate from the code (review the diff)
//
// Replaying runs the steps against the Go drivers with a scripted store that
// answers every call from the vector and records it; the recorded calls and
// the results must equal the vector's. Generating runs the same steps on the
// in-memory stores with the vector's faults injected.
//
// The expectations are also checked without the drivers: a model store
// written from SPEC.md 10 must give every read answer the vector gives (or
// an older state, for a read marked stale); a msgpack writer written from the
// SPEC layouts must give every value and key; and a plain model of each
// protocol (SPEC.md 6.9, 7.4, 8.4-8.5, 9.3) derives what each call writes
// and returns, and the value as "each update counted once".
//
// deltalog and balance stamp their writes with the process's write clock,
// which only moves forward and is shared by every test in the process, so
// their files are replayed in a child process that starts from a fresh
// clock.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
	"github.com/vmihailenco/msgpack/v5"
)

// dvDrivers lists the driver vector files: how to build each from the code,
// and whether it must be replayed from a fresh process write clock.
var dvDrivers = map[string]struct {
	driver string
	gen    func() dvFile
	fresh  bool
}{
	"driver_ledger.json":   {"ledger", dvGenLedger, false},
	"driver_tally.json":    {"tally", dvGenTally, false},
	"driver_deltalog.json": {"deltalog", dvGenDeltalog, true},
	"driver_balance.json":  {"balance", dvGenBalance, true},
	"driver_bounded.json":  {"bounded", dvGenBounded, false},
}

// The driver files are vector files like the others: TestVectors checks
// and regenerates them too, and TestVectorFilesAreRead knows them.
func init() {
	for name := range dvDrivers {
		vectorFiles[name] = struct {
			gen   func(t *testing.T) any
			check func(t *testing.T, raw []byte)
		}{
			gen:   func(t *testing.T) any { return dvGenerateFile(t, name) },
			check: func(t *testing.T, raw []byte) { dvCheckFile(t, name, raw) },
		}
	}
}

// The environment of a child process (see dvChild).
const (
	dvEnvChild  = "COUNTERKIT_DRIVER_VECTORS_CHILD"  // "1": replay fresh-clock files in this process
	dvEnvReplay = "COUNTERKIT_DRIVER_VECTORS_REPLAY" // "<driver>:<path>": TestDriverVectorsReplayFile's input
)

func dvInChild() bool { return os.Getenv(dvEnvChild) == "1" }

// TestDriverVectors replays every driver vector file on the drivers and
// runs the independent checks of each vector (dvCheckFile). The race pass
// (-short) replays them alone: the independent checks (models, decoders)
// run on one goroutine, and the full pass runs them without -race; it
// also leaves out the vectors with generated states (drivers_big_test.go,
// states of up to store.MaxValue bytes: seconds each under the detector),
// whose group steps run their members as the other group vectors do.
func TestDriverVectors(t *testing.T) {
	for _, name := range dvFileNames() {
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			path := filepath.Join(vectorDir, name)
			if dvDrivers[name].fresh && !dvInChild() {
				run := "^TestDriverVectors$/^" + regexp.QuoteMeta(strings.TrimSuffix(name, ".json")) + "$"
				if *update {
					dvChild(t, true, run, "")
				}
				dvChild(t, false, run, "")
				return
			}
			if *update {
				dvWrite(t, path, dvDrivers[name].gen())
				if dvDrivers[name].fresh {
					return // generating moved the write clock: the parent checks in another process
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./vectors -run TestDriverVectors -update to create it)", err)
			}
			dvCheckFile(t, name, raw)
		})
	}
}

// TestDriverVectorsReplayFile replays one file named by the environment; it
// is the child process of TestDriverVectorsCatchWrongExpectations.
func TestDriverVectorsReplayFile(t *testing.T) {
	spec := os.Getenv(dvEnvReplay)
	if spec == "" {
		t.Skip("runs only as a child process of TestDriverVectorsCatchWrongExpectations")
	}
	driver, path, _ := strings.Cut(spec, ":")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f dvFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for _, p := range dvReplayFile(driver, f) {
		t.Error(p)
	}
}

func dvFileNames() []string {
	names := make([]string, 0, len(dvDrivers))
	for n := range dvDrivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func dvWrite(t *testing.T, path string, f dvFile) {
	t.Helper()
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dvGenerateFile builds a file from the code (TestVectors -update).
func dvGenerateFile(t *testing.T, name string) any {
	if dvDrivers[name].fresh && !dvInChild() {
		dvChild(t, true, "^TestDriverVectors$/^"+regexp.QuoteMeta(strings.TrimSuffix(name, ".json"))+"$", "")
		raw, err := os.ReadFile(filepath.Join(vectorDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return json.RawMessage(raw)
	}
	return dvDrivers[name].gen()
}

// dvChecked holds the name and SHA-256 of each driver file that passed
// dvCheckFile in this process.
var dvChecked sync.Map

// dvCheckFile replays every vector of a file and runs the independent checks.
func dvCheckFile(t *testing.T, name string, raw []byte) {
	t.Helper()
	d := dvDrivers[name]
	if d.fresh && !dvInChild() {
		dvChild(t, false, "^TestDriverVectors$/^"+regexp.QuoteMeta(strings.TrimSuffix(name, ".json"))+"$", "")
		return
	}
	// TestVectors and TestDriverVectors both check every driver file:
	// the same bytes pass once per process.
	sum := sha256.Sum256(raw)
	if _, ok := dvChecked.Load(name + "\x00" + string(sum[:])); ok {
		t.Logf("%s: these bytes passed earlier in this process", name)
		return
	}
	modelled := false
	defer func() {
		if modelled && !t.Failed() {
			dvChecked.Store(name+"\x00"+string(sum[:]), true)
		}
	}()
	var f dvFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if f.Driver != d.driver {
		t.Fatalf("%s: driver %q, want %q", name, f.Driver, d.driver)
	}
	if len(f.Vectors) == 0 {
		t.Fatalf("%s: no vectors", name)
	}
	if testing.Short() {
		// Generated states (drivers_big_test.go) reach store.MaxValue
		// bytes: the race detector takes seconds on each, and their
		// groups run as the other group vectors' do.
		f.Vectors = slices.DeleteFunc(f.Vectors, func(v dvVector) bool { return len(v.Generated) > 0 })
	}
	for _, p := range dvReplayFile(d.driver, f) {
		t.Error(p)
	}
	if testing.Short() {
		t.Logf("%s: -short (the race pass): the independent checks are sequential, and vectors with generated states too big to replay under the detector are left out; the full pass runs them without -race", name)
		return
	}
	modelled = true
	for _, p := range dvModelFile(d.driver, f) {
		t.Error("model: " + p)
	}
}

// dvChild runs this test binary again, so with a fresh write clock,
// running the tests run selects. Without replay it fails t if the child
// fails; with replay (TestDriverVectorsReplayFile's input) it returns the
// child's output, empty if the child passed.
func dvChild(t *testing.T, passUpdate bool, run, replay string) string {
	t.Helper()
	args := []string{"-test.run=" + run, "-test.count=1"}
	if passUpdate && *update {
		args = append(args, "-update")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), dvEnvChild+"=1")
	if replay != "" {
		cmd.Env = append(cmd.Env, dvEnvReplay+"="+replay)
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		return ""
	}
	if replay == "" {
		t.Fatalf("child process %s: %v\n%s", run, err, out)
	}
	return string(out)
}

// dvReplayFile replays every vector of f against the Go driver and returns
// the differences from the vector.
func dvReplayFile(driver string, f dvFile) []string {
	var problems []string
	for _, v := range f.Vectors {
		got, err := dvRun(driver, v, true)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", v.Name, err))
			continue
		}
		problems = append(problems, dvCompare(v, got)...)
	}
	return append(problems, dvCheckOptions(f, false)...)
}

// dvModelFile runs the independent checks of every vector of f.
func dvModelFile(driver string, f dvFile) []string {
	var problems []string
	for _, v := range f.Vectors {
		var ps []string
		switch driver {
		case "ledger":
			ps = dvModelLedger(v)
		case "tally":
			ps = dvModelTally(v)
		case "deltalog":
			ps = dvModelDeltalog(v)
		case "balance":
			ps = dvModelBalance(v)
		case "bounded":
			ps = dvModelBounded(v) // checks its encodings itself
		}
		ps = append(ps, dvModelStore(v)...)
		if driver != "bounded" {
			ps = append(ps, dvCheckEncodings(driver, v)...)
		}
		for _, p := range ps {
			problems = append(problems, v.Name+": "+p)
		}
	}
	return append(problems, dvCheckOptions(f, true)...)
}

func dvRun(driver string, v dvVector, replay bool) (dvVector, error) {
	switch driver {
	case "ledger":
		return dvRunLedger(v, replay)
	case "tally":
		return dvRunTally(v, replay)
	case "deltalog":
		return dvRunDeltalog(v, replay)
	case "balance":
		return dvRunBalance(v, replay)
	case "bounded":
		return dvRunBounded(v, replay)
	}
	return dvVector{}, fmt.Errorf("unknown driver %q", driver)
}

// dvCompare reports every field where a replay differs from the vector.
func dvCompare(want, got dvVector) []string {
	var out []string
	if len(got.Steps) != len(want.Steps) {
		out = append(out, fmt.Sprintf("%s: %d steps replayed, vector has %d", want.Name, len(got.Steps), len(want.Steps)))
	}
	for i := range min(len(got.Steps), len(want.Steps)) {
		for _, d := range dvDiff("", dvGeneric(want.Steps[i]), dvGeneric(got.Steps[i])) {
			out = append(out, fmt.Sprintf("%s: step %d (%s): %s", want.Name, i+1, want.Steps[i].Op, d))
		}
	}
	return out
}

// dvGeneric turns v into plain JSON values (maps, slices, strings, numbers).
func dvGeneric(v any) any {
	b := must(json.Marshal(v))
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		panic(err)
	}
	return g
}

// dvDiff lists the paths where two plain JSON values differ, with both
// values ("vector" then "replay").
func dvDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		var out []string
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}) {
			out = append(out, dvDiff(path+"."+k, w[k], g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		var out []string
		for i := range w {
			out = append(out, dvDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	return []string{fmt.Sprintf("%s: vector %s, replay %s", strings.TrimPrefix(path, "."), dvShorten(wb), dvShorten(gb))}
}

func dvShorten(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "..."
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// The file format (testdata/vectors/README.md, "Driver vectors").

// dvInt is an int64 carried as a JSON decimal string.
type dvInt int64

func (v dvInt) MarshalJSON() ([]byte, error) { return json.Marshal(strconv.FormatInt(int64(v), 10)) }

func (v *dvInt) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*v = dvInt(n)
	return err
}

func dvI(v int64) *dvInt { x := dvInt(v); return &x }
func dvB(v bool) *bool   { return &v }
func dvN(v int) *int     { return &v }

type dvFile struct {
	Driver  string     `json:"driver"`
	Note    string     `json:"note"`
	Vectors []dvVector `json:"vectors"`
	// OptionChecks are option sets and what the
	// driver's constructor answers (options_test.go).
	OptionChecks []dvOptionCheck `json:"option_checks,omitempty"`
}

type dvVector struct {
	Name    string     `json:"name"`
	Note    string     `json:"note,omitempty"`
	Options dvOptions  `json:"options"`
	Ledgers []dvLedger `json:"ledgers,omitempty"`
	// InitialSiblings (ledger, bounded) and InitialRows (tally, deltalog, balance)
	// are what the store holds before the first step: siblings written
	// with no token by actor "init", rows written at timestamp 1.
	InitialSiblings []dvSibling `json:"initial_siblings,omitempty"`
	InitialRows     []dvRow     `json:"initial_rows,omitempty"`
	// Generated (ledger) lists recipes for entries of ledger states, which
	// the states marked generated hold (drivers_big_test.go).
	Generated []dvGen  `json:"generated,omitempty"`
	Steps     []dvStep `json:"steps"`
}

// dvLedger declares one ledger of a ledger vector: its actor and the writer
// id that stands for its random incarnation in the vector's bytes.
type dvLedger struct {
	Actor  string `json:"actor"`
	Writer string `json:"writer"`
	// LaterWriters stand for the incarnations the ledger takes later
	// (SPEC.md 6.9 RetiredGrace), in the order it takes them.
	LaterWriters []string `json:"later_writers,omitempty"`
	// PassStartMod m, when not 0, asks for an incarnation whose
	// FNV-1a-32 is congruent to Writer's modulo m: a pass over m live
	// actors then starts where the vector's does (SPEC.md 6.9, 11.1).
	PassStartMod uint32 `json:"pass_start_mod,omitempty"`
	// Shards n, when not 0, makes the ledger a sharded one over n
	// sub-keys of the vector's key (SPEC.md 6.12); ShardWriters stand for
	// the incarnations of its sub-keys' ledgers, sub-key 0 first, and
	// Writer is then empty.
	Shards       int      `json:"shards,omitempty"`
	ShardWriters []string `json:"shard_writers,omitempty"`
}

// dvOptions are every option a driver takes, all given (no defaults).
// Durations are nanoseconds, as decimal strings.
type dvOptions struct {
	Key string `json:"key"`
	// ledger
	RetryCount    int    `json:"retry_count,omitempty"`
	HistoryLength int    `json:"history_length,omitempty"`
	FoldedLength  int    `json:"folded_length,omitempty"`
	RetryWindowNS *dvInt `json:"retry_window_ns,omitempty"`
	RetireAfterNS *dvInt `json:"retire_after_ns,omitempty"`
	MaxGroup      int    `json:"max_group,omitempty"`
	// RetiredGraceNS is the ledger's RetiredGrace; absent, the default
	// (ledger.DefaultRetiredGrace, 10 days).
	RetiredGraceNS *dvInt `json:"retired_grace_ns,omitempty"`
	// TxnTime names the ledger's Counter.TxnTime: "timeuuid"
	// (tpncounter.TimeUUID, SPEC.md 6.1), or absent for none.
	TxnTime string `json:"txn_time,omitempty"`
	// tally
	Kind       string `json:"kind,omitempty"`
	LifetimeNS *dvInt `json:"lifetime_ns,omitempty"`
	MarginNS   *dvInt `json:"margin_ns,omitempty"`
	MaxSkewNS  *dvInt `json:"max_skew_ns,omitempty"`
	GraceNS    *dvInt `json:"grace_ns,omitempty"`
	Resends    *int   `json:"resends,omitempty"`
	MaxRows    int    `json:"max_rows,omitempty"`
	// deltalog and balance
	WindowNS       *dvInt `json:"window_ns,omitempty"`
	FutureSkewNS   *dvInt `json:"future_skew_ns,omitempty"`
	SafetyMarginNS *dvInt `json:"safety_margin_ns,omitempty"`
	MaxScanNS      *dvInt `json:"max_scan_ns,omitempty"`
	CompactGraceNS *dvInt `json:"compact_grace_ns,omitempty"`
	MaxMergeCells  int    `json:"max_merge_cells,omitempty"` // deltalog
	MaxMergeNS     *dvInt `json:"max_merge_ns,omitempty"`
	SettleGraceNS  *dvInt `json:"settle_grace_ns,omitempty"`
	GCGraceNS      *dvInt `json:"gc_grace_ns,omitempty"`
	// balance Transactions (SPEC.md 9.4; also retry_window_ns), given in
	// the vectors whose steps are txn_ ops
	DeadlineNS   *dvInt `json:"deadline_ns,omitempty"`
	Partitions   int    `json:"partitions,omitempty"`
	RecordShards int    `json:"record_shards,omitempty"`
	// bounded Account (SPEC.md 13.5; also retry_count): Keep and the
	// counter's window
	Keep   *dvInt `json:"keep,omitempty"`
	Window int    `json:"window,omitempty"`
	// MaxActors is the ledger's Counter.MaxActors (SPEC.md 6.1); absent,
	// the default.
	MaxActors int `json:"max_actors,omitempty"`
}

func dvDur(p *dvInt) time.Duration {
	if p == nil {
		return 0
	}
	return time.Duration(*p)
}

// dvStep is one driver call with the store calls it makes and its results.
type dvStep struct {
	// Clock, when set, is what the driver's clock reads from this step on
	// (RFC 3339); the clock does not move during a step.
	Clock string `json:"clock,omitempty"`
	Op    string `json:"op"`
	Note  string `json:"note,omitempty"`

	// Inputs.
	Ledger  string  `json:"ledger,omitempty"`
	Mutator string  `json:"mutator,omitempty"`
	Key     string  `json:"key,omitempty"`
	Txn     string  `json:"txn,omitempty"`
	ID      string  `json:"id,omitempty"`
	Amount  *dvInt  `json:"amount,omitempty"`
	Values  []dvInt `json:"values,omitempty"`

	// faults are the store faults of this step's calls, in order, when
	// generating: "" (pass), "refuse", "ambiguous_landed",
	// "ambiguous_lost", "stale" or "stale2" (reads).
	faults []string
	// recFaults (ledger, generating) are the faults of the calls to each
	// transaction's record key, by transaction, in order; recKey is the
	// account of those keys.
	recFaults map[string][]string
	recKey    string

	// Group (ledger op "group") lists Updates started together: the
	// first runs alone and its fetch of the counter key is held until
	// every other has queued; the others then run as one group. Each
	// member gives its inputs (op credit or debit, txn, amount) and its
	// results; the step gives the ledger and every store call.
	Group []dvStep `json:"group,omitempty"`

	Calls []dvCall `json:"calls"`

	// Results.
	Error      string   `json:"error,omitempty"`
	Outcome    string   `json:"outcome,omitempty"`
	Landed     *bool    `json:"landed,omitempty"`
	Attempts   int      `json:"attempts,omitempty"`
	Owner      *dvCopy  `json:"owner,omitempty"`
	Value      *dvInt   `json:"value,omitempty"`
	Pending    *bool    `json:"pending,omitempty"`
	ExpiresAt  *dvInt   `json:"expires_at,omitempty"`
	Unresolved *bool    `json:"unresolved,omitempty"`
	GC         *dvGC    `json:"gc,omitempty"`
	Cells      *int     `json:"cells,omitempty"`
	Merged     *bool    `json:"merged,omitempty"`
	MergeCell  *dvDesc  `json:"merge_cell,omitempty"`
	Deleted    *bool    `json:"deleted,omitempty"`
	Merge      *dvMerge `json:"merge,omitempty"`
	// Merges are a txn_merge's reports, one per row partition merged.
	Merges []*dvMerge `json:"merges,omitempty"`

	// bounded Account (SPEC.md 13.5): To is a transfer's recipient or
	// Close's heir; the Result's rights and granted (when landed),
	// requested and available (insufficient_rights).
	To        string `json:"to,omitempty"`
	Rights    *dvInt `json:"rights,omitempty"`
	Granted   *dvInt `json:"granted,omitempty"`
	Requested *dvInt `json:"requested,omitempty"`
	Available *dvInt `json:"available,omitempty"`
}

// dvCopy is the copy of a transaction that counts (ledger Result.Owner).
type dvCopy struct {
	Actor  string `json:"actor"`
	Amount dvInt  `json:"amount"`
	Folded bool   `json:"folded"`
}

// dvGC is what a tally GC reports.
type dvGC struct {
	Folded  int      `json:"folded"`
	Live    int      `json:"live"`
	WriteTS dvInt    `json:"write_ts"`
	Delete  []string `json:"delete"`
}

// dvMerge is a balance MergeReport: the merge's version and the rows of
// steps 5-8, each as a row key (update_id, kind, version).
type dvMerge struct {
	Version    string   `json:"version"`
	Tombstones []dvDesc `json:"tombstones"`
	Sum        *dvDesc  `json:"sum"`
	Settled    []dvDesc `json:"settled"`
	Deleted    []dvDesc `json:"deleted"`
	Collected  []dvDesc `json:"collected"`
	TooYoung   []dvDesc `json:"too_young"`
}

// dvCall is one store call: the method and its arguments, as the driver
// made it, and the store's answer.
type dvCall struct {
	Method string `json:"method"` // fetch, put (Siblings); snapshot, scan, apply (Partitions)
	Key    string `json:"key,omitempty"`

	// Siblings.
	Actor string `json:"actor,omitempty"`
	Token string `json:"token,omitempty"` // hex; absent: no token
	Value string `json:"value,omitempty"` // hex
	// ValueSHA256 and ValueLen stand for Value when State is generated
	// (drivers_big_test.go).
	ValueSHA256 string      `json:"value_sha256,omitempty"`
	ValueLen    int         `json:"value_len,omitempty"`
	raw         []byte      // the bytes written, while recording (not hex: a value may be 8 MiB)
	State       *dvState    `json:"state,omitempty"`
	Record      *dvRecord   `json:"record,omitempty"`
	Sightings   []dvSeen    `json:"sightings,omitempty"` // a put of stored sightings (SPEC.md 6.9)
	Siblings    []dvSibling `json:"siblings,omitempty"`
	// Seeded (fetches) are siblings another writer put under the key, with
	// no token, just before the fetch (a record key's record of another
	// transaction, or bytes that do not decode): Siblings includes them.
	Seeded []dvSibling `json:"seeded,omitempty"`

	// Partitions.
	Level     string  `json:"level,omitempty"` // any, complete
	Limit     int     `json:"limit,omitempty"`
	From      string  `json:"from,omitempty"` // hex
	Rows      []dvRow `json:"rows,omitempty"`
	Visited   *int    `json:"visited,omitempty"`
	Mutations []dvMut `json:"mutations,omitempty"`

	// The answer.
	Reply  string `json:"reply"`            // ok, refused, ambiguous
	Landed *bool  `json:"landed,omitempty"` // ambiguous writes: whether the write took effect
	Stale  int    `json:"stale,omitempty"`  // reads: answered as of this many landed writes ago
	// ClockAfter (tally writes): what the driver's clock reads once the
	// store has answered.
	ClockAfter string `json:"clock_after,omitempty"`

	Bounded *dvBState `json:"bounded,omitempty"` // a bounded Account's put: the state written
}

type dvSibling struct {
	Value string `json:"value,omitempty"`
	// ValueSHA256 and ValueLen stand for Value when State is generated
	// (drivers_big_test.go).
	ValueSHA256 string    `json:"value_sha256,omitempty"`
	ValueLen    int       `json:"value_len,omitempty"`
	raw         []byte    // the bytes read, while recording
	State       *dvState  `json:"state"`
	Record      *dvRecord `json:"record,omitempty"`
	Sightings   []dvSeen  `json:"sightings,omitempty"`

	Bounded *dvBState `json:"bounded,omitempty"` // a bounded Account's sibling
}

// dvRecord is a decoded transaction record (SPEC.md 6.11).
type dvRecord struct {
	Txn     string `json:"txn"`
	Amount  dvInt  `json:"amount"`
	Writer  string `json:"writer"`
	At      string `json:"at"`
	Version string `json:"version"`
	// Key is the key whose state holds Writer's entry (format version 2:
	// a Sharded's sub-key), absent in version 1.
	Key string `json:"key,omitempty"`
}

// dvSeen is a stored sighting (SPEC.md 6.9): writer's entry was at
// version in a state read at at.
type dvSeen struct {
	Writer  string `json:"writer"`
	Version string `json:"version"`
	At      string `json:"at"`
}

// dvDecodeSightings decodes stored sightings from SPEC.md 6.9's encoding
// alone (msgpack ["ledger.seen", 1, [[writer, version, at], ...]]); nil if
// b is not one.
func dvDecodeSightings(b []byte) []dvSeen {
	var env []any
	if err := msgpack.Unmarshal(b, &env); err != nil || len(env) != 3 || env[0] != "ledger.seen" {
		return nil
	}
	body, ok := env[2].([]any)
	if !ok {
		return nil
	}
	out := []dvSeen{}
	for _, e := range body {
		t, ok := e.([]any)
		if !ok || len(t) != 3 {
			return nil
		}
		w, _ := t[0].(string)
		v, _ := strconv.ParseUint(fmt.Sprint(t[1]), 10, 64)
		at, _ := strconv.ParseInt(fmt.Sprint(t[2]), 10, 64)
		out = append(out, dvSeen{Writer: w, Version: strconv.FormatUint(v, 10), At: time.Unix(0, at).UTC().Format(time.RFC3339Nano)})
	}
	return out
}

// dvDecodeRecord decodes a transaction record with the real decoder; nil
// if it does not decode.
func dvDecodeRecord(b []byte) *dvRecord {
	var r ledger.Record
	if err := r.UnmarshalBinary(b); err != nil {
		return nil
	}
	return &dvRecord{Txn: string(r.Txn), Amount: dvInt(r.Amount), Writer: string(r.Writer), At: r.At.Format(time.RFC3339Nano), Version: strconv.FormatUint(r.Version, 10), Key: r.Key}
}

// dvState is a decoded tpncounter (SPEC.md 6.7).
type dvState struct {
	P []dvEntry `json:"p"`
	N []dvEntry `json:"n"`
	// PBase and NBase are the halves' bases (SPEC.md 6.10; version 4),
	// absent for a half without one.
	PBase *dvBase `json:"p_base,omitempty"`
	NBase *dvBase `json:"n_base,omitempty"`
	Value dvInt   `json:"value"`
	// Generated marks a state holding the entries of its vector's
	// recipes, which the file leaves out (drivers_big_test.go); gen are
	// those recipes.
	Generated bool `json:"generated,omitempty"`
	gen       []dvGen
}

// dvBase is a half's base: what Fold took out of its retired entries
// (SPEC.md 6.10), times in Unix ns.
type dvBase struct {
	Cutoff dvInt `json:"cutoff"`
	Total  dvInt `json:"total"`
	Forgot dvInt `json:"forgot"`
}

type dvEntry struct {
	Actor   string  `json:"actor"`
	Seq     string  `json:"seq"`
	Total   dvInt   `json:"total"`
	Forgot  dvInt   `json:"forgot"`
	History []dvTxn `json:"history"`
	Folded  []dvTxn `json:"folded"`
	Retired bool    `json:"retired,omitempty"`
	// RetiredAt is the retirement time (Unix ns) a ledger writes with a
	// retired entry (SPEC.md 6.9, 6.10; version 4).
	RetiredAt dvInt `json:"retired_at,omitempty"`
}

type dvTxn struct {
	Txn    string `json:"txn"`
	Amount dvInt  `json:"amount"`
}

// dvRow is a row a read returned: key and value, and what they hold.
type dvRow struct {
	Key   string  `json:"key"`
	Value string  `json:"value"`
	Is    *dvDesc `json:"is"`
}

// dvMut is one mutation of an Apply.
type dvMut struct {
	Op        string  `json:"op"` // put, delete, delete-range, delete-partition
	Partition string  `json:"partition"`
	Key       string  `json:"key,omitempty"`
	End       string  `json:"end,omitempty"`
	Value     string  `json:"value,omitempty"`
	TS        dvInt   `json:"ts"`
	Is        *dvDesc `json:"is,omitempty"`
}

// dvDesc describes a row key, and for a put or a read row its value: a
// tally shard or tally row, a deltalog cell, a balance row.
type dvDesc struct {
	// tally
	Mutator       string `json:"mutator,omitempty"`
	TallyRow      bool   `json:"tally_row,omitempty"`
	ExpiresAt     *dvInt `json:"expires_at,omitempty"`
	FoldedThrough *dvInt `json:"folded_through,omitempty"`
	Sum           *dvInt `json:"sum,omitempty"`
	// deltalog and balance
	ID       string `json:"id,omitempty"`
	UpdateID string `json:"update_id,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Version  string `json:"version,omitempty"`
	// deltalog cell
	Delta   *dvInt   `json:"delta,omitempty"`
	Written *dvInt   `json:"written,omitempty"`
	Stats   *dvStats `json:"stats,omitempty"`
	// balance row
	Amount  *dvInt `json:"amount,omitempty"`
	Covers  *dvInt `json:"covers,omitempty"`
	Settled *bool  `json:"settled,omitempty"`
	Target  string `json:"target,omitempty"`
	// At is the place of a row of a Transactions row partition (µs).
	At *dvInt `json:"at,omitempty"`
}

type dvStats struct {
	Count   dvInt  `json:"count"`
	Sum     dvInt  `json:"sum"`
	Min     dvInt  `json:"min"`
	Max     dvInt  `json:"max"`
	SumSqHi string `json:"sumsq_hi"`
	SumSqLo string `json:"sumsq_lo"`
}

// ---------------------------------------------------------------------------
// Error kinds (SPEC.md 2.3). A driver error may carry two kinds (a tally
// write that stays unknown because its mutator expired is ambiguous_write
// and expired): the vector lists every kind it carries, in the order of
// 2.3's table, joined with "+".

var dvKinds = []struct {
	name string
	err  error
}{
	{"invalid_actor", crdt.ErrInvalidActor},
	{"invalid_txn", crdt.ErrInvalidTxnID},
	{"invalid_amount", crdt.ErrInvalidAmount},
	{"overflow", crdt.ErrOverflow},
	{"conflicting_transaction", crdt.ErrConflictingTransaction},
	{"invalid_config", crdt.ErrInvalidConfig},
	{"outside_window", crdt.ErrOutsideWindow},
	{"expired", crdt.ErrExpired},
	{"too_large", crdt.ErrTooLarge},
	{"insufficient_rights", crdt.ErrInsufficientRights},
	{"corrupt", crdt.ErrCorruptEncoding},
	{"unsupported_version", crdt.ErrUnsupportedVersion},
	{"type_mismatch", crdt.ErrTypeMismatch},
	{"not_found", crdt.ErrNotFound},
	{"ambiguous_write", crdt.ErrAmbiguousWrite},
	{"unavailable", crdt.ErrUnavailable},
	{"invalid_identifier", crdt.ErrInvalidIdentifier},
	{"misconfigured_store", crdt.ErrMisconfiguredStore},
}

func dvKind(err error) string {
	if err == nil {
		return ""
	}
	var names []string
	for _, k := range dvKinds {
		if errors.Is(err, k.err) {
			names = append(names, k.name)
		}
	}
	if len(names) == 0 {
		return "unknown: " + err.Error()
	}
	return strings.Join(names, "+")
}

// The errors a scripted store returns.
var (
	errDVRefused   = fmt.Errorf("vector store: refused: %w", crdt.ErrUnavailable)
	errDVAmbiguous = fmt.Errorf("vector store: outcome unknown: %w", crdt.ErrAmbiguousWrite)
	// A call the vector does not list: answered as refused, and recorded
	// with reply "unscripted" so the comparison shows it.
	errDVUnscripted = fmt.Errorf("vector store: call not in the vector: %w", crdt.ErrUnavailable)
	// A value above store.MaxValue: refused, nothing written.
	errDVTooLarge = fmt.Errorf("vector store: value over %d bytes: %w", store.MaxValue, crdt.ErrTooLarge)
)

func dvReplyErr(reply string) error {
	switch reply {
	case "ok":
		return nil
	case "refused":
		return errDVRefused
	case "ambiguous":
		return errDVAmbiguous
	case "too_large":
		return errDVTooLarge
	}
	return errDVUnscripted
}

func dvMustTime(s string) time.Time {
	at := must(time.Parse(time.RFC3339Nano, s))
	return at
}

func dvUnhex(s string) []byte {
	b := must(hex.DecodeString(s))
	return b
}

func dvMustID(s string) timeid.ID {
	id, err := timeid.Parse(s)
	if err != nil {
		panic(fmt.Sprintf("id %q: %v", s, err))
	}
	return id
}

// dvUUID formats 16 bytes as a UUID (8-4-4-4-12 lowercase hex digits).
func dvUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// dvParseUUID reads any UUID's 16 bytes (an N row version is an amount key,
// not a version 1 UUID).
func dvParseUUID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 || len(s) != 36 {
		return id, fmt.Errorf("not a UUID: %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// ---------------------------------------------------------------------------
// The stores. One type per shape serves both modes: replaying, it answers
// every call from the step's calls in the vector; generating, it passes the
// call to an in-memory store with the step's fault. Either way it records
// every call the driver makes.

// dvRec holds the store calls of the step being run. A ledger makes some
// calls concurrently or in an order of its choosing (the record puts of a
// cycle or a retirement, the record fetches of a pending write or of idle
// actors): consecutive calls of one method to transaction record keys form
// a set (SPEC.md 11.1). Replaying, each call of a set is answered from the
// set's entry equal to it and recorded in that entry's place; generating,
// each set is sorted by key, then value.
type dvRec struct {
	mu     sync.Mutex
	replay bool
	script []dvCall // replay: the vector's calls of the step, answered in order
	next   int
	used   []bool
	runOf  []int    // replay: the set of each call of the script
	faults []string // generation: the faults of the step's calls to other keys, in order
	// recFaults are the generation faults of the calls to each
	// transaction record key, in order.
	recFaults map[string][]string
	calls     []dvCall // the calls the driver made
	at        []int    // replay: the script entry each call answered
	base      string   // the vector's key
}

// dvInSet reports whether calls a and b, in this order, are in one set
// (SPEC.md 11.1): calls of one method to transaction record keys, or
// fetches of a sharded account's sub-keys (base/i), which its Value reads
// at once.
func dvInSet(a, b dvCall, base string) bool {
	sub := func(c dvCall) bool { return base != "" && c.Method == "fetch" && strings.HasPrefix(c.Key, base+"/") }
	return a.Method == b.Method && (ledger.IsRecordKey(a.Key) && ledger.IsRecordKey(b.Key) || sub(a) && sub(b))
}

func (r *dvRec) begin(s dvStep) {
	r.script, r.next, r.faults, r.calls, r.at = s.Calls, 0, s.faults, []dvCall{}, nil
	r.used, r.runOf = make([]bool, len(s.Calls)), make([]int, len(s.Calls))
	for i, c := range s.Calls {
		r.runOf[i] = i
		if i > 0 && dvInSet(s.Calls[i-1], c, s.recKey) {
			r.runOf[i] = r.runOf[i-1]
		}
	}
	r.base = s.recKey
	r.recFaults = map[string][]string{}
	for txn, fs := range s.recFaults {
		r.recFaults[ledger.RecordKey(s.recKey, crdt.TxnID(txn))] = slices.Clone(fs)
	}
}

// expectCall returns the vector's entry answering a call (replay): the
// first unanswered entry or, when that is in a set, the set's unanswered
// entry that same reports equal to the call. ok is false when the entry is
// not a call of method.
func (r *dvRec) expectCall(method string, same func(dvCall) bool) (c dvCall, at int, ok bool) {
	p := slices.Index(r.used, false)
	if p < 0 {
		return dvCall{}, len(r.script) + len(r.calls), false
	}
	at = p
	for j := p; j < len(r.script); j++ {
		if !r.used[j] && r.runOf[j] == r.runOf[p] && r.script[j].Method == method && same(r.script[j]) {
			at = j
			break
		}
	}
	r.used[at] = true
	return r.script[at], at, r.script[at].Method == method
}

// record adds a call the driver made, answered by script entry at.
func (r *dvRec) record(c dvCall, at int) {
	r.calls = append(r.calls, c)
	r.at = append(r.at, at)
}

// ordered returns the calls made: replaying, in the order of the entries
// that answered them; generating, with every set sorted.
func (r *dvRec) ordered(norm func(dvCall) dvCall) []dvCall {
	calls := make([]dvCall, len(r.calls))
	for i, c := range r.calls {
		calls[i] = norm(c)
	}
	if r.replay {
		idx := make([]int, len(calls))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return r.at[idx[a]] < r.at[idx[b]] })
		out := make([]dvCall, len(calls))
		for i, j := range idx {
			out[i] = calls[j]
		}
		return out
	}
	for i := 0; i < len(calls); {
		j := i + 1
		for j < len(calls) && dvInSet(calls[i], calls[j], r.base) {
			j++
		}
		slices.SortStableFunc(calls[i:j], func(a, b dvCall) int {
			if c := strings.Compare(a.Key, b.Key); c != 0 {
				return c
			}
			return strings.Compare(a.Value, b.Value)
		})
		i = j
	}
	return calls
}

// expect returns the vector's next call of the step if it is a call of
// method.
func (r *dvRec) expect(method string) (dvCall, bool) {
	if r.next >= len(r.script) {
		return dvCall{}, false
	}
	c := r.script[r.next]
	r.next++
	return c, c.Method == method
}

// keyFault is the generation fault of the next call to key: from the
// record faults for a record key, else the step's next fault.
func (r *dvRec) keyFault(key string) string {
	if ledger.IsRecordKey(key) || ledger.IsSeenKey(key) {
		fs := r.recFaults[key]
		if len(fs) == 0 {
			return ""
		}
		r.recFaults[key] = fs[1:]
		return fs[0]
	}
	return r.fault()
}

func (r *dvRec) fault() string {
	if len(r.faults) == 0 {
		return ""
	}
	f := r.faults[0]
	r.faults = r.faults[1:]
	return f
}

// dvWriteFault turns a generation fault into the answer to a write: the
// reply, whether it lands, and the error the driver sees.
func dvWriteFault(f string) (reply string, landed *bool, applies bool, err error) {
	switch f {
	case "":
		return "ok", nil, true, nil
	case "refuse":
		return "refused", nil, false, errDVRefused
	case "ambiguous_landed":
		return "ambiguous", dvB(true), true, errDVAmbiguous
	case "ambiguous_lost":
		return "ambiguous", dvB(false), false, errDVAmbiguous
	case "too_large":
		return "too_large", nil, false, errDVTooLarge
	}
	panic("unknown write fault " + f)
}

func dvStaleness(f string) int {
	switch f {
	case "stale":
		return 1
	case "stale2":
		return 2
	}
	return 0
}

// dvSiblings is the scripted store.Siblings. Generating, each key has a
// memory store of its own, so that a key's tokens do not depend on the
// order of concurrent writes to other keys.
type dvSiblings struct {
	rec      *dvRec
	back     map[string]*memory.Siblings // generation
	hist     map[string][]dvSibState     // generation: every state after a write that landed, oldest first
	toActual func([]byte) []byte         // replay: a vector value as the driver must read it
	toVector func([]byte) []byte         // replay: a value the driver wrote as the vector gives it
	sync     func()                      // takes up a ledger's new incarnation (dvIncarnations); nil: none
	park     *dvPark                     // holds the next fetch of a counter key (group steps)
}

// dvPark holds one fetch until released.
type dvPark struct {
	parked, release chan struct{}
}

type dvSibState struct {
	values [][]byte
	token  store.Token
}

func (s *dvSiblings) backing(key string) *memory.Siblings {
	b := s.back[key]
	if b == nil {
		b = memory.NewSiblings()
		s.back[key] = b
	}
	return b
}

// held parks the calling fetch when a park is armed for key.
func (s *dvSiblings) held(key string) {
	s.rec.mu.Lock()
	p := s.park
	if p != nil && !ledger.IsRecordKey(key) {
		s.park = nil
	} else {
		p = nil
	}
	s.rec.mu.Unlock()
	if p != nil {
		close(p.parked)
		<-p.release
	}
}

func (s *dvSiblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if s.sync != nil {
		s.sync()
	}
	vals, tok, err := s.fetch(ctx, key)
	s.held(key)
	return vals, tok, err
}

func (s *dvSiblings) fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	call := dvCall{Method: "fetch", Key: key}
	if s.rec.replay {
		exp, at, ok := s.rec.expectCall("fetch", func(c dvCall) bool { return c.Key == key })
		if !ok {
			call.Reply = "unscripted"
			s.rec.record(call, at)
			return nil, nil, errDVUnscripted
		}
		call.Reply, call.Stale, call.Siblings, call.Token, call.Seeded = exp.Reply, exp.Stale, exp.Siblings, exp.Token, exp.Seeded
		s.rec.record(call, at)
		if exp.Reply != "ok" {
			return nil, nil, dvReplyErr(exp.Reply)
		}
		vals := make([][]byte, len(exp.Siblings))
		for i, sb := range exp.Siblings {
			b, err := dvBytes(sb.Value, sb.ValueSHA256, sb.ValueLen, sb.State)
			if err != nil {
				return nil, nil, fmt.Errorf("vector store: sibling %d: %v: %w", i+1, err, crdt.ErrUnavailable)
			}
			vals[i] = s.toActual(b)
		}
		var tok store.Token
		if exp.Token != "" {
			tok = dvUnhex(exp.Token)
		}
		return vals, tok, nil
	}
	f := s.rec.keyFault(key)
	if seeds, ok := strings.CutPrefix(f, "seed:"); ok {
		for i, seed := range strings.Split(seeds, ",") {
			b := dvUnhex(seed)
			actual := b
			if s.toActual != nil {
				actual = s.toActual(b) // writer ids as the ledgers have them
			}
			actor := crdt.ActorID("init")
			if i > 0 {
				actor += crdt.ActorID(strconv.Itoa(i + 1)) // one sibling each
			}
			if err := s.backing(key).Put(ctx, key, actor, actual, nil); err != nil {
				return nil, nil, err
			}
			call.Seeded = append(call.Seeded, dvSibling{raw: b})
		}
		f = ""
	}
	if f == "refuse" {
		call.Reply = "refused"
		s.rec.record(call, 0)
		return nil, nil, errDVRefused
	}
	var vals [][]byte
	var tok store.Token
	if n := dvStaleness(f); n > 0 {
		h := s.states(key)
		st := h[max(0, len(h)-1-n)]
		vals, tok, call.Stale = st.values, st.token, n
	} else {
		var err error
		if vals, tok, err = s.backing(key).Fetch(ctx, key); err != nil {
			return nil, nil, err
		}
	}
	call.Reply, call.Token = "ok", hex.EncodeToString(tok)
	for _, v := range vals {
		call.Siblings = append(call.Siblings, dvSibling{raw: v})
	}
	s.rec.record(call, 0)
	return vals, tok, nil
}

func (s *dvSiblings) states(key string) []dvSibState {
	if len(s.hist[key]) == 0 {
		s.hist[key] = []dvSibState{{}}
	}
	return s.hist[key]
}

func (s *dvSiblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if s.sync != nil {
		s.sync()
	}
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	call := dvCall{Method: "put", Key: key, Actor: string(actor), Token: hex.EncodeToString(token), raw: value}
	if s.rec.replay {
		vb := s.toVector(value)
		vec := dvCall{Actor: string(s.toVector([]byte(actor)))}
		exp, at, ok := s.rec.expectCall("put", func(c dvCall) bool {
			if c.Key != key || c.Actor != vec.Actor || c.Token != call.Token {
				return false
			}
			if c.ValueSHA256 != "" {
				if vec.ValueSHA256 == "" {
					vec.ValueSHA256 = dvSHA(vb)
				}
				return c.ValueSHA256 == vec.ValueSHA256 && c.ValueLen == len(vb)
			}
			return len(c.Value) == 2*len(vb) && c.Value == hex.EncodeToString(vb)
		})
		if !ok {
			call.Reply = "unscripted"
			s.rec.record(call, at)
			return errDVUnscripted
		}
		call.Reply, call.Landed = exp.Reply, exp.Landed
		s.rec.record(call, at)
		return dvReplyErr(exp.Reply)
	}
	var applies bool
	var err error
	call.Reply, call.Landed, applies, err = dvWriteFault(s.rec.keyFault(key))
	if applies {
		b := s.backing(key)
		if err := b.Put(ctx, key, actor, value, token); errors.Is(err, crdt.ErrTooLarge) {
			call.Reply, call.Landed = "too_large", nil
			s.rec.record(call, 0)
			return errDVTooLarge
		} else if err != nil {
			return err
		}
		vals, tok, err := b.Fetch(ctx, key)
		if err != nil {
			return err
		}
		s.hist[key] = append(s.states(key), dvSibState{vals, tok})
	}
	s.rec.record(call, 0)
	return err
}

// dvPartitions is the scripted store.Partitions.
type dvPartitions struct {
	rec      *dvRec
	back     *memory.Partitions        // generation
	hist     map[string][][]store.Row  // generation: every state after a write that landed, oldest first
	toActual func(store.Row) store.Row // replay: a vector row as the driver must read it
	setClock func(time.Time)           // moves the driver's clock (a call's clock_after)
}

func dvLevel(l store.Read) string {
	if l == store.ReadComplete {
		return "complete"
	}
	return "any"
}

func (p *dvPartitions) states(partition string) [][]store.Row {
	if len(p.hist[partition]) == 0 {
		p.hist[partition] = [][]store.Row{nil}
	}
	return p.hist[partition]
}

// read answers a Snapshot or Scan: the rows (all of the partition from
// from) and the error.
func (p *dvPartitions) read(ctx context.Context, call *dvCall, partition string, from []byte) ([]store.Row, error) {
	if p.rec.replay {
		exp, ok := p.rec.expect(call.Method)
		if !ok {
			call.Reply = "unscripted"
			return nil, errDVUnscripted
		}
		call.Reply, call.Stale, call.Rows = exp.Reply, exp.Stale, exp.Rows
		if exp.Reply != "ok" {
			return nil, dvReplyErr(exp.Reply)
		}
		rows := make([]store.Row, len(exp.Rows))
		for i, r := range exp.Rows {
			rows[i] = p.toActual(store.Row{Key: dvUnhex(r.Key), Value: dvUnhex(r.Value)})
		}
		return rows, nil
	}
	f := p.rec.fault()
	if f == "refuse" {
		call.Reply = "refused"
		return nil, errDVRefused
	}
	var rows []store.Row
	if n := dvStaleness(f); n > 0 {
		h := p.states(partition)
		rows, call.Stale = h[max(0, len(h)-1-n)], n
	} else {
		var err error
		if rows, err = p.back.Snapshot(ctx, partition, store.MaxBatch*100, store.ReadComplete); err != nil {
			return nil, err
		}
	}
	var out []store.Row
	for _, r := range rows {
		if bytes.Compare(r.Key, from) >= 0 {
			out = append(out, store.Row{Key: slices.Clone(r.Key), Value: slices.Clone(r.Value)})
		}
	}
	call.Reply = "ok"
	for _, r := range out {
		call.Rows = append(call.Rows, dvRow{Key: hex.EncodeToString(r.Key), Value: hex.EncodeToString(r.Value)})
	}
	return out, nil
}

func (p *dvPartitions) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	call := dvCall{Method: "snapshot", Key: partition, Level: dvLevel(level), Limit: limit}
	rows, err := p.read(ctx, &call, partition, nil)
	p.rec.calls = append(p.rec.calls, call)
	return rows, err
}

func (p *dvPartitions) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	call := dvCall{Method: "scan", Key: partition, From: hex.EncodeToString(from), Level: dvLevel(level)}
	rows, err := p.read(ctx, &call, partition, from)
	if err == nil {
		visited := 0
		for _, r := range rows {
			visited++
			if !fn(r) {
				break
			}
		}
		call.Visited = &visited
	}
	p.rec.calls = append(p.rec.calls, call)
	return err
}

func (p *dvPartitions) Apply(ctx context.Context, muts []store.Mutation) error {
	call := dvCall{Method: "apply"}
	for _, m := range muts {
		call.Mutations = append(call.Mutations, dvMut{Op: m.Op.String(), Partition: m.Partition,
			Key: hex.EncodeToString(m.Key), End: hex.EncodeToString(m.End), Value: hex.EncodeToString(m.Value), TS: dvInt(m.Timestamp)})
	}
	if p.rec.replay {
		exp, ok := p.rec.expect("apply")
		if !ok {
			call.Reply = "unscripted"
			p.rec.calls = append(p.rec.calls, call)
			return errDVUnscripted
		}
		call.Reply, call.Landed, call.ClockAfter = exp.Reply, exp.Landed, exp.ClockAfter
		p.rec.calls = append(p.rec.calls, call)
		p.clockAfter(call)
		return dvReplyErr(exp.Reply)
	}
	var applies bool
	var err error
	f, after, _ := strings.Cut(p.rec.fault(), "@") // "refuse@<time>": the clock then reads <time>
	call.Reply, call.Landed, applies, err = dvWriteFault(f)
	call.ClockAfter = after
	defer p.clockAfter(call)
	if applies {
		if err := p.back.Apply(ctx, muts); err != nil {
			return err
		}
		var parts []string
		for _, m := range muts {
			if !slices.Contains(parts, m.Partition) {
				parts = append(parts, m.Partition)
			}
		}
		for _, part := range parts {
			rows, err := p.back.Snapshot(ctx, part, store.MaxBatch*100, store.ReadComplete)
			if err != nil {
				return err
			}
			p.hist[part] = append(p.states(part), rows)
		}
	}
	p.rec.calls = append(p.rec.calls, call)
	return err
}

// clockAfter moves the driver's clock to call's clock_after, if it has one.
func (p *dvPartitions) clockAfter(call dvCall) {
	if call.ClockAfter != "" {
		p.setClock(dvMustTime(call.ClockAfter))
	}
}

// initial writes a vector's initial rows (generation) at timestamp 1.
func (p *dvPartitions) initial(key string, rows []dvRow) error {
	if p.back == nil || len(rows) == 0 {
		return nil
	}
	ctx := context.Background()
	var muts []store.Mutation
	for _, r := range rows {
		muts = append(muts, store.Mutation{Partition: key, Op: store.OpPut, Key: dvUnhex(r.Key), Value: dvUnhex(r.Value), Timestamp: 1})
	}
	if err := p.back.Apply(ctx, muts); err != nil {
		return err
	}
	got, err := p.back.Snapshot(ctx, key, store.MaxBatch*100, store.ReadComplete)
	if err != nil {
		return err
	}
	p.hist[key] = [][]store.Row{got}
	return nil
}

// dvNormRows rewrites the rows and mutations of recorded partition calls
// with norm (actual ids to the vector's) and describes each.
func dvNormRows(calls []dvCall, norm func(k, v []byte) ([]byte, []byte), desc func(k, v []byte) *dvDesc) []dvCall {
	for i := range calls {
		c := &calls[i]
		for j := range c.Rows {
			r := &c.Rows[j]
			k, v := norm(dvUnhex(r.Key), dvUnhex(r.Value))
			r.Key, r.Value, r.Is = hex.EncodeToString(k), hex.EncodeToString(v), desc(k, v)
		}
		for j := range c.Mutations {
			m := &c.Mutations[j]
			if m.Op == "delete-partition" {
				continue
			}
			k, v := norm(dvUnhex(m.Key), dvUnhex(m.Value))
			m.Key, m.Value, m.Is = hex.EncodeToString(k), hex.EncodeToString(v), desc(k, v)
		}
	}
	return calls
}

func dvSameRow(k, v []byte) ([]byte, []byte) { return k, v }

// ---------------------------------------------------------------------------
// ledger (SPEC.md 6.9)

func dvOutcome(o tpncounter.Outcome) string {
	switch o {
	case tpncounter.Applied:
		return "applied"
	case tpncounter.Duplicate:
		return "duplicate"
	case tpncounter.DuplicateFolded:
		return "duplicate_folded"
	case tpncounter.Superseded:
		return "superseded"
	}
	return ""
}

// dvRunLedger runs a ledger vector: replaying it against the scripted
// store, or generating its calls and results on a memory store.
func dvRunLedger(v dvVector, replay bool) (dvVector, error) {
	rec := &dvRec{replay: replay}
	st := &dvSiblings{rec: rec}
	if !replay {
		st.back, st.hist = map[string]*memory.Siblings{}, map[string][]dvSibState{}
	}
	clock := dvT0 // transaction records are written at the clock's time
	ledgers := map[string]*ledger.Ledger{}
	sharded := map[string]*ledger.Sharded{}
	inc := &dvIncarnations{}
	for _, d := range v.Ledgers {
		o := ledger.Options{
			Actor: crdt.ActorID(d.Actor), RetryCount: v.Options.RetryCount, Backoff: ledger.Backoff{Initial: -1},
			Counter:     tpncounter.Options{HistoryLength: v.Options.HistoryLength, FoldedLength: v.Options.FoldedLength, MaxActors: v.Options.MaxActors},
			RetryWindow: dvDur(v.Options.RetryWindowNS), RetireAfter: dvDur(v.Options.RetireAfterNS), MaxGroup: v.Options.MaxGroup,
			RetiredGrace: dvDur(v.Options.RetiredGraceNS),
			Clock:        func() time.Time { return clock },
		}
		switch v.Options.TxnTime {
		case "":
		case "timeuuid":
			o.Counter.TxnTime, o.Counter.FutureSkew = tpncounter.TimeUUID, dvDur(v.Options.FutureSkewNS)
		default:
			return dvVector{}, fmt.Errorf("unknown txn_time %q", v.Options.TxnTime)
		}
		if d.Shards > 0 {
			sl, err := dvNewSharded(st, v.Options.Key, o, d, inc)
			if err != nil {
				return dvVector{}, err
			}
			sharded[d.Actor] = sl
			continue
		}
		l, err := ledger.New(st, v.Options.Key, o)
		if err != nil {
			return dvVector{}, err
		}
		// The incarnation is random: make the ledger again until its
		// writer id starts a pass as the vector's does.
		for i := 0; d.PassStartMod > 0 && dvFNV(string(l.Writer()))%d.PassStartMod != dvFNV(d.Writer)%d.PassStartMod; i++ {
			if i == 100000 {
				return dvVector{}, fmt.Errorf("ledger %q: no incarnation congruent to %q modulo %d", d.Actor, d.Writer, d.PassStartMod)
			}
			if l, err = ledger.New(st, v.Options.Key, o); err != nil {
				return dvVector{}, err
			}
		}
		ids := append([]string{d.Writer}, d.LaterWriters...)
		for i, w := range ids {
			if len(l.Writer()) != len(w) || !strings.HasPrefix(w, d.Actor+"~") {
				return dvVector{}, fmt.Errorf("writer %q does not stand for %q", w, l.Writer())
			}
			if i > 0 && w <= ids[i-1] {
				return dvVector{}, fmt.Errorf("later writer %q does not sort after the one before it (SPEC.md 6.9)", w)
			}
		}
		ledgers[d.Actor] = l
		inc.add(l.Writer, d)
	}
	toVector := inc.swap(true)
	st.toActual, st.toVector, st.sync = inc.swap(false), toVector, inc.sync
	ctx := context.Background()
	if !replay && len(v.InitialSiblings) > 0 {
		b := st.backing(v.Options.Key)
		for _, sb := range v.InitialSiblings {
			value, err := dvBytes(sb.Value, sb.ValueSHA256, sb.ValueLen, sb.State)
			if err != nil {
				return dvVector{}, err
			}
			if err := b.Put(ctx, v.Options.Key, "init", st.toActual(value), nil); err != nil {
				return dvVector{}, err
			}
		}
		vals, tok, err := b.Fetch(ctx, v.Options.Key)
		if err != nil {
			return dvVector{}, err
		}
		st.hist[v.Options.Key] = []dvSibState{{vals, tok}}
	}
	// update makes one credit or debit and returns its results as a step.
	update := func(ctx context.Context, l dvUpdater, s dvStep) dvStep {
		got := dvStep{Op: s.Op, Note: s.Note, Txn: s.Txn, Amount: s.Amount}
		if s.Amount == nil {
			got.Error = "step without an amount"
			return got
		}
		amount := int64(*s.Amount)
		if s.Op == "debit" {
			amount = -amount
		} else if s.Op != "credit" {
			got.Error = "unknown group member op " + s.Op
			return got
		}
		res, err := l.Update(ctx, crdt.TxnID(s.Txn), amount)
		got.Error, got.Outcome, got.Attempts, got.Landed = dvKind(err), dvOutcome(res.Outcome), res.Attempts, dvB(res.Landed)
		if res.Landed {
			got.Value = dvI(res.Value)
			got.Owner = &dvCopy{Actor: string(toVector([]byte(res.Owner.Actor))), Amount: dvInt(res.Owner.Amount), Folded: res.Owner.Folded}
		}
		return got
	}
	// A state holding the entries of a recipe of the vector is given in
	// the generated form, its bytes by their SHA-256 and length.
	recipes := v.Generated
	norm := func(c dvCall) dvCall {
		c.Actor = string(toVector([]byte(c.Actor)))
		if c.Method == "put" {
			b := toVector(c.bytes())
			c.raw, c.State, c.Record, c.Sightings = nil, dvDecodeState(b), dvDecodeRecord(b), dvDecodeSightings(b)
			if dvCompactState(c.State, recipes) {
				c.ValueSHA256, c.ValueLen = dvSHA(b), len(b)
			} else {
				c.Value = hex.EncodeToString(b)
			}
		}
		seeded := c.Seeded
		c.Seeded = nil
		for _, sb := range seeded {
			b := toVector(sb.bytes())
			c.Seeded = append(c.Seeded, dvSibling{Value: hex.EncodeToString(b), State: dvDecodeState(b), Record: dvDecodeRecord(b)})
		}
		sibs := c.Siblings
		c.Siblings = nil
		for _, sb := range sibs {
			if sb.ValueSHA256 != "" {
				c.Siblings = append(c.Siblings, sb) // a replay's answer, as the vector gives it
				continue
			}
			b := toVector(sb.bytes())
			nb := dvSibling{State: dvDecodeState(b), Record: dvDecodeRecord(b), Sightings: dvDecodeSightings(b)}
			if dvCompactState(nb.State, recipes) {
				nb.ValueSHA256, nb.ValueLen = dvSHA(b), len(b)
			} else {
				nb.Value = hex.EncodeToString(b)
			}
			c.Siblings = append(c.Siblings, nb)
		}
		return c
	}
	out := v
	out.Steps = nil
	for _, s := range v.Steps {
		if s.Clock != "" {
			at, err := time.Parse(time.RFC3339Nano, s.Clock)
			if err != nil {
				return dvVector{}, fmt.Errorf("step %q: clock: %v", s.Op, err)
			}
			clock = at
		}
		s.recKey = v.Options.Key
		rec.begin(s)
		got := dvStep{Clock: s.Clock, Op: s.Op, Note: s.Note, Ledger: s.Ledger, Txn: s.Txn, Amount: s.Amount}
		if sl := sharded[s.Ledger]; sl != nil {
			switch s.Op {
			case "credit", "debit":
				r := update(ctx, sl, s)
				got.Error, got.Outcome, got.Attempts, got.Landed, got.Value, got.Owner = r.Error, r.Outcome, r.Attempts, r.Landed, r.Value, r.Owner
			case "value":
				n, err := sl.Value(ctx)
				if got.Error = dvKind(err); err == nil {
					got.Value = dvI(n)
				}
			default:
				return dvVector{}, fmt.Errorf("unknown sharded ledger op %q", s.Op)
			}
			got.Pending = dvB(sl.Pending())
		} else if err := dvLedgerStep(ctx, ledgers[s.Ledger], st, s, &got, update); err != nil {
			return dvVector{}, err
		}
		inc.sync()
		got.Calls = rec.ordered(norm)
		out.Steps = append(out.Steps, got)
		if inc.err != nil {
			return dvVector{}, fmt.Errorf("step %d: %v", len(out.Steps), inc.err)
		}
	}
	for i, d := range inc.ds {
		if inc.taken[i] != len(d.LaterWriters) {
			return dvVector{}, fmt.Errorf("ledger %q took %d later incarnations, the vector names %d", d.Actor, inc.taken[i], len(d.LaterWriters))
		}
	}
	return out, nil
}

// dvLedgerStep runs step s of a vector on plain ledger l into got.
func dvLedgerStep(ctx context.Context, l *ledger.Ledger, st *dvSiblings, s dvStep, got *dvStep, update func(context.Context, dvUpdater, dvStep) dvStep) error {
	if l == nil {
		return fmt.Errorf("step %q: unknown ledger %q", s.Op, s.Ledger)
	}
	switch s.Op {
	case "credit", "debit":
		r := update(ctx, l, s)
		got.Error, got.Outcome, got.Attempts, got.Landed, got.Value, got.Owner = r.Error, r.Outcome, r.Attempts, r.Landed, r.Value, r.Owner
	case "group":
		members, err := dvRunGroup(ctx, st, l, s.Group, update)
		if err != nil {
			return err
		}
		got.Group = members
	case "find":
		c, err := l.Find(ctx)
		if got.Error = dvKind(err); err == nil {
			got.Value = dvI(c.Value())
		}
	case "value":
		n, err := l.Value(ctx)
		if got.Error = dvKind(err); err == nil {
			got.Value = dvI(n)
		}
	default:
		return fmt.Errorf("unknown ledger op %q", s.Op)
	}
	got.Pending = dvB(l.Pending())
	return nil
}

// dvIncarnations maps the ledgers' random incarnations to the writer ids
// of the vector (SPEC.md 11.1): each ledger's first to its writer, and
// each one it takes later (6.9 RetiredGrace) to its next later writer.
// sync takes up a ledger's new incarnation; the scripted store calls it
// before every store call, since a ledger takes one just before a read.
type dvIncarnations struct {
	mu             sync.Mutex
	ls             []func() crdt.ActorID // each ledger's Writer
	ds             []dvLedger
	taken          []int // later writers in use, per ledger
	actual, vector [][]byte
	err            error
}

func (x *dvIncarnations) add(writer func() crdt.ActorID, d dvLedger) {
	x.ls, x.ds, x.taken = append(x.ls, writer), append(x.ds, d), append(x.taken, 0)
	x.actual, x.vector = append(x.actual, []byte(writer())), append(x.vector, []byte(d.Writer))
}

// dvUpdater is what a step's credit or debit calls: a Ledger or a Sharded.
type dvUpdater interface {
	Update(ctx context.Context, txn crdt.TxnID, amount int64) (ledger.Result, error)
}

// dvNewSharded makes ledger d of a vector a Sharded over d.Shards sub-keys
// of key, and maps each sub-key's incarnation to its writer in the vector.
func dvNewSharded(st store.Siblings, key string, o ledger.Options, d dvLedger, inc *dvIncarnations) (*ledger.Sharded, error) {
	if d.Writer != "" || d.PassStartMod != 0 || len(d.LaterWriters) > 0 || len(d.ShardWriters) != d.Shards {
		return nil, fmt.Errorf("sharded ledger %q: give shard_writers, one per shard, and no writer", d.Actor)
	}
	sl, err := ledger.NewSharded(st, key, d.Shards, o)
	if err != nil {
		return nil, err
	}
	for i, w := range d.ShardWriters {
		txn := crdt.TxnID("")
		for j := 0; ledger.ShardOf(txn, d.Shards) != i || txn == ""; j++ {
			txn = crdt.TxnID("probe" + strconv.Itoa(j))
		}
		if !strings.HasPrefix(w, d.Actor+"~") || len(w) != len(sl.Writer(txn)) {
			return nil, fmt.Errorf("writer %q does not stand for %q", w, sl.Writer(txn))
		}
		inc.add(func() crdt.ActorID { return sl.Writer(txn) }, dvLedger{Actor: d.Actor, Writer: w})
	}
	return sl, nil
}

func (x *dvIncarnations) sync() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, writer := range x.ls {
		w := []byte(writer())
		if slices.ContainsFunc(x.actual, func(b []byte) bool { return bytes.Equal(b, w) }) {
			continue
		}
		if x.taken[i] == len(x.ds[i].LaterWriters) {
			x.err = fmt.Errorf("ledger %q takes incarnation %d, the vector names %d", x.ds[i].Actor, x.taken[i]+2, x.taken[i]+1)
			continue
		}
		x.actual, x.vector = append(x.actual, w), append(x.vector, []byte(x.ds[i].LaterWriters[x.taken[i]]))
		x.taken[i]++
	}
}

// swap replaces every incarnation taken so far by its writer id in the
// vector (toVector), or back.
func (x *dvIncarnations) swap(toVector bool) func([]byte) []byte {
	return func(b []byte) []byte {
		x.mu.Lock()
		defer x.mu.Unlock()
		from, to := x.vector, x.actual
		if toVector {
			from, to = x.actual, x.vector
		}
		return dvReplaceAll(b, from, to)
	}
}

// dvQueued is a member's context: its Done is first called when the
// member waits in the ledger's queue, which queued then reports.
type dvQueued struct {
	context.Context
	once   sync.Once
	queued chan struct{}
}

func (q *dvQueued) Done() <-chan struct{} {
	q.once.Do(func() { close(q.queued) })
	return nil // never canceled
}

// dvRunGroup runs a group step (SPEC.md 11.1): the first member alone, its
// fetch of the counter held until each other member, started in order,
// waits in the ledger's queue (or has returned); then releases it.
func dvRunGroup(ctx context.Context, st *dvSiblings, l *ledger.Ledger, members []dvStep, update func(context.Context, dvUpdater, dvStep) dvStep) ([]dvStep, error) {
	if len(members) < 2 {
		return nil, fmt.Errorf("a group step needs at least 2 members")
	}
	park := &dvPark{parked: make(chan struct{}), release: make(chan struct{})}
	st.rec.mu.Lock()
	st.park = park
	st.rec.mu.Unlock()
	released := false
	release := func() {
		if !released {
			released = true
			close(park.release)
		}
	}
	defer release()
	out := make([]dvStep, len(members))
	done := make([]chan struct{}, len(members))
	// A member that never queues or returns is a hang, not a slow run: the
	// generated-state vectors take over 10 s under the race detector on a
	// loaded machine, so the bound is generous.
	timeout := time.After(2 * time.Minute)
	for i, m := range members {
		done[i] = make(chan struct{})
		mctx := ctx
		var q *dvQueued
		if i > 0 {
			q = &dvQueued{Context: ctx, queued: make(chan struct{})}
			mctx = q
		}
		go func() {
			defer close(done[i])
			out[i] = update(mctx, l, m)
		}()
		wait := park.parked
		if q != nil {
			wait = q.queued
		}
		select {
		case <-wait:
		case <-done[i]:
			if i == 0 {
				// It failed before its cycle (a replay that differs from
				// the vector): the others run one after another, and the
				// comparison shows the difference.
				st.rec.mu.Lock()
				st.park = nil
				st.rec.mu.Unlock()
				for j := 1; j < len(members); j++ {
					out[j] = update(ctx, l, members[j])
				}
				return out, nil
			}
		case <-timeout:
			return nil, fmt.Errorf("group: member %d neither queued nor returned", i+1)
		}
	}
	release()
	for i := range done {
		select {
		case <-done[i]:
		case <-timeout:
			return nil, fmt.Errorf("group: member %d did not return", i+1)
		}
	}
	return out, nil
}

// dvDecodeState decodes a tpncounter with the real decoder; nil if it does
// not decode.
func dvDecodeState(b []byte) *dvState {
	c := must(tpncounter.New(tpncounter.Options{}))
	if err := c.UnmarshalBinary(b); err != nil {
		return nil
	}
	half := func(g *tpncounter.GCounter) []dvEntry {
		out := []dvEntry{}
		for _, a := range g.Actors() {
			e, _ := g.Entry(a)
			de := dvEntry{Actor: string(a), Seq: strconv.FormatUint(e.Seq, 10), Total: dvInt(e.Total), History: []dvTxn{}, Folded: []dvTxn{}, Retired: e.Retired}
			if !e.Forgot.IsZero() {
				de.Forgot = dvInt(e.Forgot.UnixNano())
			}
			if !e.RetiredAt.IsZero() {
				de.RetiredAt = dvInt(e.RetiredAt.UnixNano())
			}
			for _, x := range e.History {
				de.History = append(de.History, dvTxn{string(x.ID), dvInt(x.Amount)})
			}
			for _, x := range e.Folded {
				de.Folded = append(de.Folded, dvTxn{string(x.ID), dvInt(x.Amount)})
			}
			out = append(out, de)
		}
		return out
	}
	base := func(b tpncounter.Base) *dvBase {
		if b.Cutoff.IsZero() {
			return nil
		}
		if !b.BigTotal().IsInt64() {
			panic("driver vectors: a base's total past int64 (SPEC.md 6.7) is not modelled: " + b.BigTotal().String())
		}
		d := &dvBase{Cutoff: dvInt(b.Cutoff.UnixNano()), Total: dvInt(b.Total)}
		if !b.Forgot.IsZero() {
			d.Forgot = dvInt(b.Forgot.UnixNano())
		}
		return d
	}
	pb, nb := c.Bases()
	return &dvState{P: half(c.Positive()), N: half(c.Negative()), PBase: base(pb), NBase: base(nb), Value: dvInt(c.Value())}
}

// ---------------------------------------------------------------------------
// tally (SPEC.md 7.4)

func dvTallyOptions(o dvOptions, clock func() time.Time, newID func() crdt.ActorID) tally.Options {
	retries := *o.Resends
	if retries == 0 {
		retries = -1
	}
	return tally.Options{Lifetime: dvDur(o.LifetimeNS), Margin: dvDur(o.MarginNS), MaxSkew: dvDur(o.MaxSkewNS),
		Grace: dvDur(o.GraceNS), Retries: retries, Clock: clock, NewID: newID, MaxRows: o.MaxRows}
}

func dvRunTally(v dvVector, replay bool) (dvVector, error) {
	rec := &dvRec{replay: replay}
	st := &dvPartitions{rec: rec, toActual: func(r store.Row) store.Row { return r }}
	if !replay {
		st.back, st.hist = memory.NewPartitions(), map[string][][]store.Row{}
	}
	var now time.Time
	st.setClock = func(t time.Time) { now = t }
	var nextID string
	if v.Options.Kind != "sum" {
		return dvVector{}, fmt.Errorf("kind %q: the vectors count sums", v.Options.Kind)
	}
	c, err := tally.New[*tally.Sum](st, v.Options.Key, dvTallyOptions(v.Options, func() time.Time { return now }, func() crdt.ActorID { return crdt.ActorID(nextID) }))
	if err != nil {
		return dvVector{}, err
	}
	muts := map[string]*tally.Mutator[*tally.Sum]{}
	adder := func(vals []dvInt) func(*tally.Sum) error {
		return func(s *tally.Sum) error {
			for _, x := range vals {
				if err := s.Add(int64(x)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := st.initial(v.Options.Key, v.InitialRows); err != nil {
		return dvVector{}, err
	}
	out := v
	out.Steps = nil
	ctx := context.Background()
	for _, s := range v.Steps {
		if s.Clock != "" {
			now = dvMustTime(s.Clock)
		}
		rec.begin(s)
		got := dvStep{Clock: s.Clock, Op: s.Op, Note: s.Note, Mutator: s.Mutator, Values: s.Values}
		m := muts[s.Mutator]
		if m == nil && s.Mutator != "" && s.Op != "new_mutator" {
			return dvVector{}, fmt.Errorf("step %q: unknown mutator %q", s.Op, s.Mutator)
		}
		var err error
		switch s.Op {
		case "new_mutator":
			nextID = s.Mutator
			if m, err = c.NewMutator(); err == nil {
				muts[s.Mutator] = m
				got.ExpiresAt = dvI(m.ExpiresAt().UnixMicro())
			}
		case "stage":
			err = m.Stage(adder(s.Values))
		case "update":
			err = m.Update(ctx, adder(s.Values))
		case "flush":
			err = m.Flush(ctx)
		case "retry":
			err = m.Retry(ctx)
		case "abandon":
			err = m.Abandon(ctx)
		case "read", "read_complete":
			read := c.Read
			if s.Op == "read_complete" {
				read = c.ReadComplete
			}
			var sum *tally.Sum
			if sum, err = read(ctx); err == nil {
				got.Value = dvI(sum.Value())
			}
		case "gc":
			var plan tally.GCPlan
			if plan, err = c.GC(ctx); err == nil {
				got.GC = &dvGC{Folded: plan.Folded, Live: plan.Live, WriteTS: dvInt(plan.Batch.WriteTS), Delete: []string{}}
				for _, id := range plan.Batch.Delete {
					got.GC.Delete = append(got.GC.Delete, string(id))
				}
			}
		default:
			return dvVector{}, fmt.Errorf("unknown tally op %q", s.Op)
		}
		got.Error = dvKind(err)
		if m != nil {
			got.Unresolved = dvB(m.Unresolved())
		}
		got.Calls = dvNormRows(rec.calls, dvSameRow, dvDescTally)
		out.Steps = append(out.Steps, got)
	}
	return out, nil
}

// dvDescTally describes a tally row (SPEC.md 7.3, 10.2) with the real
// decoders.
func dvDescTally(k, v []byte) *dvDesc {
	d := &dvDesc{}
	switch {
	case string(k) == "t":
		d.TallyRow = true
		if len(v) > 0 {
			if t, err := tally.DecodeTally[*tally.Sum](v); err == nil {
				d.FoldedThrough, d.Sum = dvI(t.FoldedThrough), dvI(t.State.Value())
			}
		}
	case len(k) > 1 && k[0] == 's':
		d.Mutator = string(k[1:])
		if len(v) > 0 {
			if s, err := tally.DecodeShard[*tally.Sum](v); err == nil {
				d.ExpiresAt, d.Sum = dvI(s.ExpiresAt), dvI(s.State.Value())
			}
		}
	}
	return d
}

// ---------------------------------------------------------------------------
// deltalog (SPEC.md 8.4, 8.5)

func dvRunDeltalog(v dvVector, replay bool) (dvVector, error) {
	rec := &dvRec{replay: replay}
	st := &dvPartitions{rec: rec, toActual: func(r store.Row) store.Row { return r }}
	if !replay {
		st.back, st.hist = memory.NewPartitions(), map[string][][]store.Row{}
	}
	var now time.Time
	o := v.Options
	c, err := deltalog.New(st, deltalog.Options{Window: dvDur(o.WindowNS), FutureSkew: dvDur(o.FutureSkewNS),
		SafetyMargin: dvDur(o.SafetyMarginNS), MaxScan: dvDur(o.MaxScanNS), CompactGrace: dvDur(o.CompactGraceNS),
		MaxMergeCells: o.MaxMergeCells, Clock: func() time.Time { return now }})
	if err != nil {
		return dvVector{}, err
	}
	if err := st.initial(v.Options.Key, v.InitialRows); err != nil {
		return dvVector{}, err
	}
	out := v
	out.Steps = nil
	ctx := context.Background()
	for _, s := range v.Steps {
		if s.Clock != "" {
			now = dvMustTime(s.Clock)
		}
		rec.begin(s)
		got := dvStep{Clock: s.Clock, Op: s.Op, Note: s.Note, Key: s.Key, ID: s.ID, Amount: s.Amount}
		var err error
		switch s.Op {
		case "add":
			err = c.Add(ctx, s.Key, dvMustID(s.ID), int64(*s.Amount))
		case "read":
			var r deltalog.Reading
			if r, err = c.Read(ctx, s.Key); err == nil {
				got.Value, got.Cells = dvI(r.Value), dvN(r.Cells)
			}
		case "merge":
			var m deltalog.Cell
			var ok bool
			if m, ok, err = c.Merge(ctx, s.Key); err == nil {
				got.Merged = dvB(ok)
				if ok {
					got.MergeCell = dvDescCellValue(m)
				}
			}
		case "compact":
			var deleted bool
			if deleted, err = c.Compact(ctx, s.Key); err == nil {
				got.Deleted = dvB(deleted)
			}
		default:
			return dvVector{}, fmt.Errorf("unknown deltalog op %q", s.Op)
		}
		got.Error = dvKind(err)
		got.Calls = dvNormRows(rec.calls, dvSameRow, dvDescCell)
		out.Steps = append(out.Steps, got)
	}
	return out, nil
}

// dvDescCell describes a deltalog row (SPEC.md 8.2, 10.2) with the real
// decoders.
func dvDescCell(k, v []byte) *dvDesc {
	d := &dvDesc{}
	if id, kind, err := deltalog.DecodeKey(k); err == nil {
		d.ID, d.Kind = dvUUID(id), kind.String()
	}
	if len(v) > 0 {
		var c deltalog.Cell
		if err := c.UnmarshalBinary(v); err == nil {
			vd := dvDescCellValue(c)
			d.Delta, d.Written, d.Stats = vd.Delta, vd.Written, vd.Stats
		}
	}
	return d
}

func dvDescCellValue(c deltalog.Cell) *dvDesc {
	d := &dvDesc{ID: dvUUID(c.ID), Kind: c.Kind.String(), Delta: dvI(c.Delta)}
	if c.Kind == deltalog.KindMerge {
		d.Written = dvI(c.Written)
		d.Stats = &dvStats{Count: dvInt(c.Stats.Count), Sum: dvInt(c.Stats.Sum), Min: dvInt(c.Stats.Min), Max: dvInt(c.Stats.Max),
			SumSqHi: strconv.FormatUint(c.Stats.SumSqHi, 10), SumSqLo: strconv.FormatUint(c.Stats.SumSqLo, 10)}
	}
	return d
}

// ---------------------------------------------------------------------------
// balance (SPEC.md 9.3)

// dvVersions maps the versions a replayed or generated merge takes (a
// random clock sequence and node) to the vector's (the same time, clock
// sequence 0, node k for the k-th version of the vector), both ways.
type dvVersions struct {
	toVector, toActual map[timeid.ID]timeid.ID
}

func (m *dvVersions) add(actual, vector timeid.ID) {
	m.toVector[actual], m.toActual[vector] = vector, actual
}

func dvMapID(m map[timeid.ID]timeid.ID, id timeid.ID) timeid.ID {
	if x, ok := m[id]; ok {
		return x
	}
	return id
}

// dvMapRow rewrites the ids of a balance row (key and value) with m.
func dvMapRow(m map[timeid.ID]timeid.ID, k, v []byte) ([]byte, []byte) {
	key, err := balance.DecodeKey(k)
	if err == nil {
		key.UpdateID, key.Version = dvMapID(m, key.UpdateID), dvMapID(m, key.Version)
		k = balance.EncodeKey(key)
	} else if at, key, err := balance.DecodeTxnRowKey(k); err == nil {
		key.UpdateID, key.Version = dvMapID(m, key.UpdateID), dvMapID(m, key.Version)
		k = balance.EncodeTxnRowKey(at, key)
	} else {
		return k, v
	}
	if len(v) > 0 {
		var r balance.Row
		if err := r.UnmarshalBinary(v); err == nil {
			r.UpdateID, r.Version = dvMapID(m, r.UpdateID), dvMapID(m, r.Version)
			if b, err := r.MarshalBinary(); err == nil {
				v = b
			}
		}
	}
	return k, v
}

func dvRunBalance(v dvVector, replay bool) (dvVector, error) {
	rec := &dvRec{replay: replay}
	vers := &dvVersions{toVector: map[timeid.ID]timeid.ID{}, toActual: map[timeid.ID]timeid.ID{}}
	st := &dvPartitions{rec: rec, toActual: func(r store.Row) store.Row {
		k, val := dvMapRow(vers.toActual, r.Key, r.Value)
		return store.Row{Key: k, Value: val}
	}}
	if !replay {
		st.back, st.hist = memory.NewPartitions(), map[string][][]store.Row{}
	}
	var now time.Time
	o := v.Options
	a, err := balance.New(st, dvBalanceOptions(o, func() time.Time { return now }))
	if err != nil {
		return dvVector{}, err
	}
	var tx *balance.Transactions
	if o.Partitions > 0 {
		if tx, err = balance.NewTransactions(st, dvTxnOptions(o, func() time.Time { return now })); err != nil {
			return dvVector{}, err
		}
	}
	// mapped gives a merge report's version its vector form: the next
	// number in the node bits, or the vector's when replaying.
	mapped := func(rep balance.MergeReport, want *dvMerge) *dvMerge {
		if rep.Version == (timeid.ID{}) {
			return nil
		}
		if _, known := vers.toVector[rep.Version]; !known {
			v := timeid.FromParts(rep.Version.Time(), 0, uint64(len(vers.toVector)+1))
			if replay && want != nil {
				v = dvMustID(want.Version)
			}
			vers.add(rep.Version, v)
		}
		return dvDescReport(rep, vers.toVector)
	}
	if err := st.initial(v.Options.Key, v.InitialRows); err != nil {
		return dvVector{}, err
	}
	out := v
	out.Steps = nil
	ctx := context.Background()
	for _, s := range v.Steps {
		if s.Clock != "" {
			now = dvMustTime(s.Clock)
		}
		rec.begin(s)
		got := dvStep{Clock: s.Clock, Op: s.Op, Note: s.Note, Key: s.Key, ID: s.ID, Amount: s.Amount}
		var err error
		switch s.Op {
		case "add":
			err = a.Add(ctx, s.Key, dvMustID(s.ID), int64(*s.Amount))
		case "balance":
			var n int64
			if n, err = a.Balance(ctx, s.Key); err == nil {
				got.Value = dvI(n)
			}
		case "merge":
			var rep balance.MergeReport
			rep, err = a.Merge(ctx, s.Key)
			got.Merge = mapped(rep, s.Merge)
		case "txn_apply":
			got.Txn = s.Txn
			var out balance.Outcome
			if out, err = tx.Apply(ctx, s.Key, crdt.TxnID(s.Txn), int64(*s.Amount)); err == nil {
				got.Outcome = out.String()
			}
		case "txn_balance":
			var n int64
			if n, err = tx.Balance(ctx, s.Key); err == nil {
				got.Value = dvI(n)
			}
		case "txn_merge":
			var reps []balance.MergeReport
			reps, err = tx.Merge(ctx, s.Key)
			for i, rep := range reps {
				var want *dvMerge
				if i < len(s.Merges) {
					want = s.Merges[i]
				}
				got.Merges = append(got.Merges, mapped(rep, want))
			}
		default:
			return dvVector{}, fmt.Errorf("unknown balance op %q", s.Op)
		}
		got.Error = dvKind(err)
		got.Calls = dvNormRows(rec.calls, func(k, v []byte) ([]byte, []byte) { return dvMapRow(vers.toVector, k, v) }, dvDescRow)
		out.Steps = append(out.Steps, got)
	}
	return out, nil
}

func dvKindName(k balance.Kind) string {
	if k == 0 {
		return ""
	}
	return string(rune(k))
}

// dvDescBalanceRow describes a balance row.
func dvDescBalanceRow(r balance.Row) dvDesc {
	d := dvDesc{UpdateID: dvUUID(r.UpdateID), Kind: dvKindName(r.Kind), Version: dvUUID(r.Version), Amount: dvI(r.Amount), Target: dvKindName(r.Target)}
	if r.Kind == balance.KindSum {
		d.Covers, d.Settled = dvI(r.Covers), dvB(r.Settled)
	}
	return d
}

// dvDescRow describes a balance row key and value (SPEC.md 9.1, 10.2) with
// the real decoders.
func dvDescRow(k, v []byte) *dvDesc {
	d := &dvDesc{}
	if key, err := balance.DecodeKey(k); err == nil {
		d.UpdateID, d.Kind, d.Version = dvUUID(key.UpdateID), dvKindName(key.Kind), dvUUID(key.Version)
	} else if at, key, err := balance.DecodeTxnRowKey(k); err == nil {
		d.UpdateID, d.Kind, d.Version, d.At = dvUUID(key.UpdateID), dvKindName(key.Kind), dvUUID(key.Version), dvI(at)
	}
	if len(v) > 0 {
		var r balance.Row
		if err := r.UnmarshalBinary(v); err == nil {
			rd := dvDescBalanceRow(r)
			d.Amount, d.Covers, d.Settled, d.Target = rd.Amount, rd.Covers, rd.Settled, rd.Target
		}
	}
	return d
}

func dvDescReport(rep balance.MergeReport, m map[timeid.ID]timeid.ID) *dvMerge {
	rows := func(rs []balance.Row) []dvDesc {
		var out []dvDesc
		for _, r := range rs {
			r.UpdateID, r.Version = dvMapID(m, r.UpdateID), dvMapID(m, r.Version)
			out = append(out, dvDescBalanceRow(r))
		}
		return out
	}
	d := &dvMerge{Version: dvUUID(dvMapID(m, rep.Version)), Tombstones: rows(rep.Tombstones), Settled: rows(rep.Settled),
		Deleted: rows(rep.Deleted), Collected: rows(rep.Collected), TooYoung: rows(rep.TooYoung)}
	if rep.Sum != nil {
		s := rows([]balance.Row{*rep.Sum})[0]
		d.Sum = &s
	}
	return d
}

// ---------------------------------------------------------------------------
// Encodings written from the SPEC layouts (3.1-3.3, 6.7, 7.3, 8.2, 9.1,
// 10.2), sharing no code with the codecs: the smallest form of every
// integer, string, bin and array header.

type dvMP []byte

func (m dvMP) raw(b ...byte) dvMP { return append(m, b...) }

func (m dvMP) arr(n int) dvMP {
	switch {
	case n < 16:
		return m.raw(0x90 | byte(n))
	case n < 1<<16:
		return m.raw(0xdc, byte(n>>8), byte(n))
	}
	return m.raw(0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func (m dvMP) str(s string) dvMP {
	n := len(s)
	switch {
	case n < 32:
		m = m.raw(0xa0 | byte(n))
	case n < 1<<8:
		m = m.raw(0xd9, byte(n))
	case n < 1<<16:
		m = m.raw(0xda, byte(n>>8), byte(n))
	default:
		m = m.raw(0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return m.raw([]byte(s)...)
}

func (m dvMP) bin(b []byte) dvMP { return m.raw(0xc4, byte(len(b))).raw(b...) } // ids only: < 256 bytes

func (m dvMP) uint(v uint64) dvMP {
	switch {
	case v < 128:
		return m.raw(byte(v))
	case v < 1<<8:
		return m.raw(0xcc, byte(v))
	case v < 1<<16:
		return m.raw(0xcd, byte(v>>8), byte(v))
	case v < 1<<32:
		return m.raw(0xce, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return m.raw(binary.BigEndian.AppendUint64([]byte{0xcf}, v)...)
}

func (m dvMP) int(v int64) dvMP {
	switch {
	case v >= 0:
		return m.uint(uint64(v))
	case v >= -32:
		return m.raw(byte(v))
	case v >= math.MinInt8:
		return m.raw(0xd0, byte(v))
	case v >= math.MinInt16:
		return m.raw(0xd1, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return m.raw(0xd2, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return m.raw(binary.BigEndian.AppendUint64([]byte{0xd3}, uint64(v))...)
}

func (m dvMP) bool(v bool) dvMP {
	if v {
		return m.raw(0xc3)
	}
	return m.raw(0xc2)
}

func dvEnvelope(tag string, version uint64) dvMP { return dvMP{}.arr(3).str(tag).uint(version) }

// dvEncRecord encodes a transaction record (SPEC.md 6.11).
func dvEncRecord(r *dvRecord) ([]byte, error) {
	at, err := time.Parse(time.RFC3339Nano, r.At)
	if err != nil {
		return nil, err
	}
	version, err := strconv.ParseUint(r.Version, 10, 64)
	if err != nil {
		return nil, err
	}
	if r.Key != "" {
		return dvEnvelope("ledger.txn", 2).arr(6).str(r.Txn).int(int64(r.Amount)).str(r.Writer).int(at.UnixNano()).uint(version).str(r.Key), nil
	}
	return dvEnvelope("ledger.txn", 1).arr(5).str(r.Txn).int(int64(r.Amount)).str(r.Writer).int(at.UnixNano()).uint(version), nil
}

// dvEncSightings encodes stored sightings (SPEC.md 6.9).
func dvEncSightings(g []dvSeen) []byte {
	e := dvEnvelope("ledger.seen", 1).arr(len(g))
	for _, x := range g {
		v, _ := strconv.ParseUint(x.Version, 10, 64)
		at, _ := time.Parse(time.RFC3339Nano, x.At)
		e = e.arr(3).str(x.Writer).uint(v).int(at.UnixNano())
	}
	return e
}

// dvEncState encodes a tpncounter (SPEC.md 6.7): format version 4 when a
// half has a base (the first element of its body, [cutoff, total, forgot])
// or a retired entry a time (written as [actor, seq, total, forgot,
// retired_at]), else 3 when an entry is retired (written as [actor, seq,
// total, forgot]), else 2.
func dvEncState(s *dvState) ([]byte, error) { return dvEncStateTo(nil, s) }

// dvEncStateTo is dvEncState writing into buf's storage when it has room.
func dvEncStateTo(buf []byte, s *dvState) ([]byte, error) {
	version := uint64(2)
	if s.PBase != nil || s.NBase != nil {
		version = 4
	}
	for _, e := range append(slices.Clone(s.P), s.N...) {
		if e.Retired {
			version = max(version, 3)
		}
		if e.RetiredAt != 0 {
			version = 4
		}
		for _, x := range append(slices.Clone(e.History), e.Folded...) {
			if dvLowerUUID.MatchString(x.Txn) {
				version = max(version, 3)
			}
		}
	}
	size := 64
	for _, half := range [][]dvEntry{s.P, s.N} {
		for _, e := range half {
			size += len(e.Actor) + 48
			for _, list := range [][]dvTxn{e.History, e.Folded} {
				for _, x := range list {
					size += len(x.Txn) + 16
				}
			}
		}
	}
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	m := append(dvMP(buf[:0]), dvEnvelope("tpncounter", version).arr(2)...)
	for i, half := range [][]dvEntry{s.P, s.N} {
		half = slices.Clone(half)
		slices.SortFunc(half, func(a, b dvEntry) int { return strings.Compare(a.Actor, b.Actor) })
		if b := []*dvBase{s.PBase, s.NBase}[i]; b != nil {
			m = m.arr(len(half) + 1).arr(3).int(int64(b.Cutoff)).int(int64(b.Total)).int(int64(b.Forgot))
		} else {
			m = m.arr(len(half))
		}
		for _, e := range half {
			seq, err := strconv.ParseUint(e.Seq, 10, 64)
			if err != nil {
				return nil, err
			}
			if e.Retired && e.RetiredAt != 0 {
				m = m.arr(5).str(e.Actor).uint(seq).int(int64(e.Total)).int(int64(e.Forgot)).int(int64(e.RetiredAt))
				continue
			}
			if e.Retired {
				m = m.arr(4).str(e.Actor).uint(seq).int(int64(e.Total)).int(int64(e.Forgot))
				continue
			}
			m = m.arr(6).str(e.Actor).uint(seq).int(int64(e.Total)).int(int64(e.Forgot))
			for _, list := range [][]dvTxn{e.History, e.Folded} {
				m = m.arr(len(list))
				for _, x := range list {
					if version >= 3 && dvLowerUUID.MatchString(x.Txn) {
						id, _ := dvParseUUID(x.Txn)
						m = m.arr(2).bin(id[:]).int(int64(x.Amount))
						continue
					}
					m = m.arr(2).str(x.Txn).int(int64(x.Amount))
				}
			}
		}
	}
	return m, nil
}

// dvLowerUUID matches a UUID in canonical text with lowercase hex digits,
// which format version 3 writes as a bin of its 16 bytes (SPEC.md 6.7).
var dvLowerUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// dvTxnTime is SPEC.md 6.1's TimeUUID: the time of a version 1, RFC 4122
// variant UUID in canonical text (either case), when after 1970 and
// before 2262.
func dvTxnTime(s string) (time.Time, bool) {
	if !regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`).MatchString(s) {
		return time.Time{}, false
	}
	id, _ := dvParseUUID(s)
	if id[6]>>4 != 1 || id[8]>>6 != 2 {
		return time.Time{}, false
	}
	at := dvIDTime(strings.ToLower(s))
	if at.UnixNano() <= 0 || at.Year() > 2261 {
		return time.Time{}, false
	}
	return at, true
}

// dvKeyAsc is KEY_ASC (SPEC.md 10.2) of any 16 bytes; dvKeyDesc inverts
// every bit of it.
func dvKeyAsc(id [16]byte) []byte {
	ticks := uint64(id[6]&0x0f)<<56 | uint64(id[7])<<48 | uint64(id[4])<<40 | uint64(id[5])<<32 | uint64(binary.BigEndian.Uint32(id[0:4]))
	k := binary.BigEndian.AppendUint64(nil, ticks<<4|uint64(id[6]>>4))
	for _, b := range id[8:] {
		k = append(k, b^0x80)
	}
	return k
}

func dvKeyDesc(id [16]byte) []byte {
	k := dvKeyAsc(id)
	for i := range k {
		k[i] = ^k[i]
	}
	return k
}

// dvEncDesc returns the row key and (when the description has a value) the
// value a description stands for, per driver.
func dvEncDesc(driver string, d *dvDesc) (key, value []byte, err error) {
	if d == nil {
		return nil, nil, errors.New("no description")
	}
	switch driver {
	case "tally":
		if d.TallyRow {
			key = []byte("t")
			if d.FoldedThrough != nil {
				value = dvEnvelope("tally.tally", 1).arr(3).str("sum").int(int64(*d.FoldedThrough)).int(int64(*d.Sum))
			}
			return key, value, nil
		}
		key = append([]byte("s"), d.Mutator...)
		if d.ExpiresAt != nil {
			value = dvEnvelope("tally.shard", 1).arr(4).str("sum").str(d.Mutator).int(int64(*d.ExpiresAt)).int(int64(*d.Sum))
		}
		return key, value, nil
	case "deltalog":
		id, err := dvParseUUID(d.ID)
		if err != nil {
			return nil, nil, err
		}
		key = append(dvKeyDesc(id), d.Kind...)
		if d.Delta != nil {
			kind := uint64(d.Kind[0])
			written := int64(0)
			if d.Written != nil {
				written = int64(*d.Written)
			}
			m := dvEnvelope("deltalog.cell", 1).arr(5).bin(id[:]).uint(kind).int(int64(*d.Delta)).int(written)
			if d.Stats == nil {
				m = m.raw(0xc0)
			} else {
				hi, err1 := strconv.ParseUint(d.Stats.SumSqHi, 10, 64)
				lo, err2 := strconv.ParseUint(d.Stats.SumSqLo, 10, 64)
				if err1 != nil || err2 != nil {
					return nil, nil, errors.New("bad sumsq")
				}
				m = m.arr(6).int(int64(d.Stats.Count)).int(int64(d.Stats.Sum)).int(int64(d.Stats.Min)).int(int64(d.Stats.Max)).uint(hi).uint(lo)
			}
			value = m
		}
		return key, value, nil
	case "balance":
		uid, err := dvParseUUID(d.UpdateID)
		if err != nil {
			return nil, nil, err
		}
		ver, err := dvParseUUID(d.Version)
		if err != nil {
			return nil, nil, err
		}
		key = append(append(dvKeyDesc(uid), d.Kind...), dvKeyAsc(ver)...)
		if d.At != nil { // SPEC.md 9.4: ^at as a big-endian uint64 first
			key = append(binary.BigEndian.AppendUint64(nil, ^uint64(*d.At)), key...)
		}
		if d.Amount != nil {
			m := dvEnvelope("balance.row", 2).arr(7).bin(uid[:]).uint(uint64(d.Kind[0]))
			if ver == ([16]byte{}) {
				m = m.raw(0xc0)
			} else {
				m = m.bin(ver[:])
			}
			covers, settled, target := int64(0), false, uint64(0)
			if d.Covers != nil {
				covers = int64(*d.Covers)
			}
			if d.Settled != nil {
				settled = *d.Settled
			}
			if d.Target != "" {
				target = uint64(d.Target[0])
			}
			value = m.int(int64(*d.Amount)).int(covers).bool(settled).uint(target)
		}
		return key, value, nil
	}
	return nil, nil, fmt.Errorf("driver %q has no rows", driver)
}

// dvCheckEncodings requires every value and row key of a vector to be the
// encoding of its description.
func dvCheckEncodings(driver string, v dvVector) []string {
	var out []string
	// A sibling another writer seeded under a key may be neither a state
	// nor a record (bytes that do not decode).
	seeded := map[string]bool{}
	for _, s := range v.Steps {
		for _, c := range s.Calls {
			for _, sb := range c.Seeded {
				if sb.State == nil && sb.Record == nil {
					seeded[sb.Value] = true
				}
			}
		}
	}
	sib := func(where, value string, s *dvState, r *dvRecord, g []dvSeen) {
		if s == nil && r == nil && g == nil && (seeded[value] || dvMarkerShards(value) > 0) {
			return
		}
		if s == nil && g != nil {
			if b := dvEncSightings(g); hex.EncodeToString(b) != value {
				out = append(out, fmt.Sprintf("%s: value %s is not the encoding of its sightings (%x)", where, value, b))
			}
			return
		}
		if strings.HasPrefix(value, "sha256:") {
			sha, n, _ := strings.Cut(strings.TrimPrefix(value, "sha256:"), "/")
			size, _ := strconv.Atoi(n)
			if err := dvVerify(sha, size, s); err != nil {
				out = append(out, fmt.Sprintf("%s: %v", where, err))
			}
			return
		}
		if s == nil && r != nil {
			b, err := dvEncRecord(r)
			if err != nil || hex.EncodeToString(b) != value {
				out = append(out, fmt.Sprintf("%s: value %s is not the encoding of its record (%s, %v)", where, value, hex.EncodeToString(b), err))
			}
			return
		}
		if s == nil {
			out = append(out, where+": no state")
			return
		}
		b, err := dvEncState(s)
		if err != nil || hex.EncodeToString(b) != value {
			out = append(out, fmt.Sprintf("%s: value %s is not the encoding of its state (%s, %v)", where, value, hex.EncodeToString(b), err))
		}
	}
	row := func(where, key, value string, d *dvDesc) {
		k, val, err := dvEncDesc(driver, d)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", where, err))
			return
		}
		if hex.EncodeToString(k) != key {
			out = append(out, fmt.Sprintf("%s: key %s is not the key of %+v (%x)", where, key, *d, k))
		}
		if value != "" && hex.EncodeToString(val) != value {
			out = append(out, fmt.Sprintf("%s: value %s is not the encoding of %+v (%x)", where, value, *d, val))
		}
	}
	for i, s := range v.InitialSiblings {
		sib(fmt.Sprintf("initial sibling %d", i+1), dvValueKey(s.Value, s.ValueSHA256, s.ValueLen), s.State, s.Record, s.Sightings)
	}
	for i, r := range v.InitialRows {
		row(fmt.Sprintf("initial row %d", i+1), r.Key, r.Value, r.Is)
	}
	for i, s := range v.Steps {
		for j, c := range s.Calls {
			where := fmt.Sprintf("step %d call %d (%s)", i+1, j+1, c.Method)
			if c.Method == "put" {
				sib(where, dvValueKey(c.Value, c.ValueSHA256, c.ValueLen), c.State, c.Record, c.Sightings)
			}
			for k, sb := range c.Siblings {
				sib(fmt.Sprintf("%s sibling %d", where, k+1), dvValueKey(sb.Value, sb.ValueSHA256, sb.ValueLen), sb.State, sb.Record, sb.Sightings)
			}
			for k, r := range c.Rows {
				row(fmt.Sprintf("%s row %d", where, k+1), r.Key, r.Value, r.Is)
			}
			for k, m := range c.Mutations {
				if m.Op == "delete-partition" {
					continue
				}
				row(fmt.Sprintf("%s mutation %d", where, k+1), m.Key, m.Value, m.Is)
				if m.Op == "put" && (m.Is == nil || m.Value == "") {
					out = append(out, where+": a put without its value described")
				}
			}
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// The vectors, as steps and faults; dvGen* run them on the in-memory stores
// to fill in the calls and results.

// dvStepOf is a step with the faults of its store calls, in call order.
func dvStepOf(s dvStep, faults ...string) dvStep { s.faults = faults; return s }

func dvGenerate(driver string, vs []dvVector) []dvVector {
	out := make([]dvVector, 0, len(vs))
	for _, v := range vs {
		got, err := dvRun(driver, v, false)
		if err != nil {
			panic(fmt.Sprintf("%s vector %q: %v", driver, v.Name, err))
		}
		out = append(out, got)
	}
	return out
}

const dvLedgerKey = "acct"

var dvLedgersABC = []dvLedger{{Actor: "a", Writer: "a~aaaaaaaa"}, {Actor: "b", Writer: "b~bbbbbbbb"}, {Actor: "c", Writer: "c~cccccccc"}}

// dvCredit is a credit step; faults are those of its calls to the counter
// key, in order (the calls to record keys pass unless dvRecFaults says
// otherwise).
func dvCredit(l, txn string, amount int64, faults ...string) dvStep {
	return dvStepOf(dvStep{Op: "credit", Ledger: l, Txn: txn, Amount: dvI(amount)}, faults...)
}

func dvDebit(l, txn string, amount int64, faults ...string) dvStep {
	return dvStepOf(dvStep{Op: "debit", Ledger: l, Txn: txn, Amount: dvI(amount)}, faults...)
}

// dvRecFaults sets the faults of a step's calls to txn's record key, in
// order.
func dvRecFaults(s dvStep, txn string, faults ...string) dvStep {
	if s.recFaults == nil {
		s.recFaults = map[string][]string{}
	}
	s.recFaults[txn] = faults
	return s
}

// dvGroup is a group step on ledger l (SPEC.md 11.1); faults are those of
// its calls to the counter key.
func dvGroup(l string, members []dvStep, faults ...string) dvStep {
	return dvStepOf(dvStep{Op: "group", Ledger: l, Group: members}, faults...)
}

func dvLedgerOp(op, l string, faults ...string) dvStep {
	return dvStepOf(dvStep{Op: op, Ledger: l}, faults...)
}

func dvGenLedger() dvFile {
	opts := func(retries, h, f int) dvOptions {
		return dvOptions{Key: dvLedgerKey, RetryCount: retries, HistoryLength: h, FoldedLength: f,
			RetryWindowNS: dvI(int64(ledger.DefaultRetryWindow)), RetireAfterNS: dvI(int64(ledger.DefaultRetireAfter)),
			MaxGroup: min(ledger.DefaultMaxGroup, h+f)}
	}
	// The state of "Compact is all or nothing": a's entry in P holds two
	// credits and in N two debits at sequence number 2^63-1, so that with
	// history length 1 both halves have a fold to do and N cannot
	// increment its sequence number.
	maxSeq := strconv.FormatUint(tpncounter.MaxSeq, 10)
	overflowing := &dvState{
		P:     []dvEntry{{Actor: "a~aaaaaaaa", Seq: "2", History: []dvTxn{{"c1", 10}, {"c2", 20}}, Folded: []dvTxn{}}},
		N:     []dvEntry{{Actor: "a~aaaaaaaa", Seq: maxSeq, History: []dvTxn{{"d1", 1}, {"d2", 2}}, Folded: []dvTxn{}}},
		Value: 27,
	}
	overflowingBytes := must(dvEncState(overflowing))
	vs := []dvVector{
		{Name: "new credit", Note: "the first write of a key: fetch (no siblings, no token), then put with no token",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvLedgerOp("value", "a"),
			}},
		{Name: "duplicate credit", Note: "a transaction the fetched state holds is not written again, on this ledger or another; the same id with another sign is conflicting_transaction",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t1", 5),
				dvCredit("b", "t1", 5),
				dvDebit("b", "t1", 5),
				dvLedgerOp("value", "b"),
			}},
		{Name: "ambiguous put that landed, then the retry", Note: "the put's acknowledgement is lost but the write took effect: the second attempt's fetch finds the transaction and the call answers applied without writing again; the value counts it once",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_landed"),
				dvCredit("a", "t2", 7),
				dvLedgerOp("value", "b"),
			}},
		{Name: "ambiguous put that was lost, then the retry", Note: "the put did not take effect: the second attempt's fetch does not hold the transaction, the ledger's own last write (merged into every read) does, so the transaction is written again, once",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost"),
				dvLedgerOp("value", "b"),
			}},
		{Name: "every attempt ambiguous, then the next write lands it", Note: "retry_count 1: both attempts are lost; the call fails ambiguous_write and the ledger keeps the write pending. Another ledger does not see it; this ledger does (read-your-writes). Its next credit writes both transactions, and a resend of the first is then a duplicate, after the ledger first writes the record of the first, which that landed write made owed (6.11 step 3)",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvLedgerOp("value", "b"),
				dvLedgerOp("value", "a"),
				dvCredit("a", "t2", 7),
				dvCredit("a", "t1", 5),
				dvLedgerOp("value", "b"),
			}},
		{Name: "a resend after a pending write is a duplicate that lands it", Note: "the first call fails ambiguous_write with the write lost; the caller resends the same transaction: the fetch does not hold it, the ledger's pending write does, so the outcome is duplicate and the put lands it",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t1", 5),
				dvLedgerOp("value", "b"),
			}},
		{Name: "a duplicate in the pending write is followed by Compact", Note: "history length 1. t1 lands; both attempts of t2 are lost. The first applies t2 (history t1, t2); the second's fetch does not hold t2 but the pending write does: Apply answers duplicate, and Compact then folds t1, so the second put holds t2 in history and t1 folded. The resend of t2 is a duplicate again, Compact has nothing left to do, and the put lands that state",
			Options: opts(1, 1, 4), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t2", 7),
				dvLedgerOp("value", "b"),
			}},
		{Name: "refused put", Note: "a refused put did not land and is forgotten: the next attempt applies the transaction again. When every attempt is refused the call fails unavailable, nothing is pending, and a resend is applied (not a duplicate)",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "refuse"),
				dvCredit("a", "t2", 7, "", "refuse", "", "refuse", "", "refuse"),
				dvLedgerOp("value", "b"),
				dvCredit("a", "t2", 7),
			}},
		{Name: "siblings merged", Note: "b and c write without seeing each other (c's fetch is answered from before b's put, as by a lagging replica), leaving two siblings; b's Find merges them and puts with the token covering both, and a's credit then reads one sibling",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("b", "t2", 7),
				dvDebit("c", "t3", 4, "stale"),
				dvLedgerOp("find", "b"),
				dvCredit("a", "t1", 5),
				dvLedgerOp("value", "c"),
			}},
		{Name: "stale read", Note: "a's third fetch is answered from before its second put: the ledger merges its own last write into the read, so the put still holds t1 and t2; its token no longer covers the newest sibling, which survives beside it until the next write merges both",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7),
				dvCredit("a", "t3", 1, "stale"),
				dvLedgerOp("value", "b"),
				dvCredit("b", "t4", 2),
				dvLedgerOp("value", "a"),
			}},
		{Name: "Compact is all or nothing when one half overflows", Note: "the key holds a's entries: P with two credits, N with two debits at sequence number 2^63-1 (history length 1, so both have a fold to do). Find compacts both halves: N's cannot increment its sequence number, so Compact fails overflow, neither half changes and nothing is written. A credit compacts only P (Apply works on one half) and lands; N is unchanged in what it writes. A debit fails overflow",
			Options: opts(2, 1, 4), Ledgers: dvLedgersABC[:1],
			InitialSiblings: []dvSibling{{Value: hex.EncodeToString(overflowingBytes), State: overflowing}},
			Steps: []dvStep{
				dvLedgerOp("find", "a"),
				dvCredit("a", "c3", 30),
				dvLedgerOp("find", "a"),
				dvDebit("a", "d3", 3),
				dvLedgerOp("value", "a"),
			}},
	}
	vs = append(vs, dvLedgerWindowVectors(opts)...)
	vs = append(vs, dvLedgerGroupVectors(opts)...)
	vs = append(vs, dvLedgerTooLargeVectors(opts)...)
	vs = append(vs, dvLedgerGraceVectors(opts)...)
	vs = append(vs, dvLedgerRetireAllVectors(opts)...)
	vs = append(vs, dvLedgerScheduleVectors(opts)...)
	vs = append(vs, dvLedgerLookupVectors(opts)...)
	vs = append(vs, dvLedgerShardedVectors(opts)...)
	return dvFile{Driver: "ledger", Note: "SPEC.md 6.9-6.11 and 11.1: ledger cycles against a scripted sibling store", Vectors: dvGenerate("ledger", vs),
		OptionChecks: dvLedgerOptionChecks()}
}

// dvAtClock sets a step's clock to dvT0 + d.
func dvAtClock(s dvStep, d time.Duration) dvStep { return dvClock(s, dvAt(dvT0, d)) }

// dvLedgerWindowVectors are the vectors of SPEC.md 6.9 RetireAfter and
// 6.11: retirement, transaction records, the pending write's retraction.
func dvLedgerWindowVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	later := 2 * time.Hour // past RetireAfter (1 hour)
	aT1 := must(ledger.Record{Txn: "t1", Amount: 5, Writer: "a~aaaaaaaa", At: dvT0, Version: 1}.MarshalBinary())
	return []dvVector{
		{Name: "retire: an idle writer is retired after its transactions are recorded",
			Note:    "a writes t1 and stops. Two hours later (RetireAfter is one hour) b's first write sees a's entry: it fetches the record of a's newest transaction to date it (written at the start: idle for two hours), fetches the record key of each transaction a's entry holds, finds t1's own record (writer a, amount 5) live, so puts none, then puts the state with a's entry retired (its total counts t1). A retry of t1 on a is answered duplicate from its record alone, the counter no longer holding it: owner a, folded. a's next credit makes its entry live again at a larger seq",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvAtClock(dvCredit("b", "t2", 7), later),
				dvAtClock(dvCredit("a", "t1", 5), later),
				dvAtClock(dvCredit("a", "t3", 1), later),
				dvAtClock(dvLedgerOp("value", "b"), later),
			}},
		{Name: "retire: an idle writer's unrecorded transaction is recorded before it retires",
			Note:    "a's credit of t1 lands but its record put is refused (ambiguous_write), and a stops, its record owed. Two hours later b's first write sees a's entry: t1 has no record, so a is idle from that pass. An hour and five minutes later b's pass finds a due: it fetches t1's record key (no live record), puts the record (writer a, at now, with that fetch's token), then puts the state with a retired. A retry of t1 on b is a duplicate from that record",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "t1", 5), "t1", "", "", "refuse"),
				dvAtClock(dvCredit("b", "t2", 7), later),
				dvAtClock(dvCredit("b", "t3", 1), later+65*time.Minute),
				dvAtClock(dvCredit("b", "t1", 5), later+65*time.Minute),
				dvAtClock(dvLedgerOp("value", "b"), later+65*time.Minute),
			}},
		{Name: "retire: an idle writer whose records are gone is dated by a stored sighting",
			Note:    "a's credit of t1 lands but its record put is refused (ambiguous_write), and a stops, its record owed. Two hours later b's first write sees a's entry: t1 has no record, so its pass, which first fetches the key's stored sightings (none), dates a from now and puts a sighting of a at its version (at two hours). Thirty minutes on b credits t4. An hour and five minutes after b's first write, c's first write sees a at that version: no record dates it, the stored sighting does, idle since b saw it: c's pass records t1 (writer a) and retires a. c dates b by its record of t4, thirty-five minutes old, and stores nothing",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvRecFaults(dvCredit("a", "t1", 5), "t1", "", "", "refuse"),
				dvAtClock(dvCredit("b", "t2", 7), later),
				dvAtClock(dvCredit("b", "t4", 2), later+30*time.Minute),
				dvAtClock(dvCredit("c", "t3", 1), later+65*time.Minute),
				dvAtClock(dvLedgerOp("value", "c"), later+65*time.Minute),
			}},
		{Name: "retire: dated only when its newest credit and debit both have a record naming it",
			Note:    "a debits t1 (recorded) and, thirty minutes later, credits t2, whose record put is refused (ambiguous_write), and stops, its record owed. Ninety minutes in, b's first write sees a's entry: t1's record names a at the start, but a's newest credit, t2, has no record naming it (a may have applied it at any time since), so a is idle from that pass, not from the start, and is not retired. Sixty-one minutes later b's pass finds a due: it records t2 (writer a), then retires a",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvDebit("a", "t1", 3),
				dvAtClock(dvRecFaults(dvCredit("a", "t2", 5), "t2", "", "", "refuse"), 30*time.Minute),
				dvAtClock(dvCredit("b", "t3", 7), 90*time.Minute),
				dvAtClock(dvCredit("b", "t4", 1), 151*time.Minute),
				dvAtClock(dvLedgerOp("value", "b"), 151*time.Minute),
			}},
		func() dvVector {
			o := opts(2, 10, 10)
			o.MaxActors = 2
			return dvVector{Name: "retire: a full account makes room for a new writer",
				Note:    "max_actors 2. a and b credit at the start, filling P. Thirty minutes later c's credit of t3 finds no room for its entry (too_large): its pass, its first, runs at once and dates a and b by their records, idle for thirty minutes, which retires neither, and the call fails with nothing put. Two hours in, c's next pass is due at its credit of t4, which again finds no room: the pass runs at once, records a's and b's transactions and retires both, and t4 is applied in that write. A pass counts c's entry among the live actors for its order, though the call is not yet applied",
				Options: o, Ledgers: dvLedgersABC, Steps: []dvStep{
					dvCredit("a", "t1", 5),
					dvCredit("b", "t2", 7),
					dvAtClock(dvCredit("c", "t3", 1), 30*time.Minute),
					dvAtClock(dvCredit("c", "t4", 2), later),
					dvAtClock(dvLedgerOp("value", "a"), later),
				}}
		}(),
		{Name: "retire: declined while a record put is refused",
			Note:    "a's credit of t1 lands with its record put refused, and a stops. b's write two hours later finds a idle from then (t1 has no record); its write an hour and five minutes later would retire a, but the put of t1's record (writer a) is refused: a stays live in that write, and the record is kept. b's next credit first writes it (flush: it fetches t1's record key and puts it, no token), then retires a, whose record is now live: its fetch finds it, no record put, then the put with a retired",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "t1", 5), "t1", "", "", "refuse"),
				dvAtClock(dvCredit("b", "t2", 7), later),
				dvAtClock(dvRecFaults(dvCredit("b", "t3", 1), "t1", "", "", "refuse"), later+65*time.Minute),
				dvAtClock(dvCredit("b", "t4", 2), later+65*time.Minute),
				dvAtClock(dvLedgerOp("value", "a"), later+65*time.Minute),
			}},
		{Name: "records: a retry the counter forgot is answered from its record",
			Note:    "history and folded length 1: after a's credits t2, t3 and t4, a's entry has forgotten t1. A retry of t1, on a or on b, is a duplicate from t1's record (owner a, folded), nothing written; t1 with another amount is conflicting_transaction at the record, read after the counter's fetch (which no longer holds t1), nothing written",
			Options: opts(2, 1, 1), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7),
				dvCredit("a", "t3", 1),
				dvCredit("a", "t4", 2),
				dvCredit("a", "t1", 5),
				dvCredit("b", "t1", 5),
				dvCredit("b", "t1", 6),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: a write in doubt is recorded once a later read or write shows it landed",
			Note:    "history and folded length 1, retry_count 1. t1's first put is lost and its second lands unacknowledged: the call fails ambiguous_write. t2's fetch shows that write landed, so t1's record is owed and written (no token) before a's next cycle. t3's puts are both lost; t4's put lands t3 with it, so t3's record is owed and written before t5. After t5 and t6, a's entry has forgotten t1 and t3, and b's retries of both are duplicates from their records",
			Options: opts(1, 1, 1), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost", "", "ambiguous_landed"),
				dvCredit("a", "t2", 7),
				dvCredit("a", "t3", 1, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t4", 2),
				dvCredit("a", "t5", 3),
				dvCredit("a", "t6", 4),
				dvCredit("b", "t1", 5),
				dvCredit("b", "t3", 1),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: owed records count toward the hold-back",
			Note:    "history and folded length 1 (H + F = 2), retry_count 1. Both puts of t0 are lost: t0 fails ambiguous_write, unacknowledged in a's pending write. t1's first put is lost, its second lands with the pending write (t0 and t1) but is answered ambiguous: t1 fails ambiguous_write too. t2's read holds that write: it landed, and the records of t0 and t1 are owed (no longer unacknowledged). Two owed records reach H + F: t2 is held back, nothing is pending, the owed records are written, and t2 is applied in a second attempt",
			Options: opts(1, 1, 1), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvCredit("a", "t0", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t1", 7, "", "ambiguous_lost", "", "ambiguous_landed"),
				dvCredit("a", "t2", 1),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: a call that could fold an unrecorded transaction is held back",
			Note:    "history and folded length 1, retry_count 1. Every put of t0 and t1 is lost: both fail ambiguous_write, unacknowledged in a's pending write. t2 would make three unrecorded transactions, which could fold t0 out before its record exists: it fails unavailable, and a puts the pending write alone (lost again). t3, with the store taking writes: held back too, the pending write alone lands, the records of t0 and t1 are owed and written (no token), and a second attempt applies t3. After t4 and t5, b's retries of t0 and t1 are duplicates from their records",
			Options: opts(1, 1, 1), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t0", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t1", 7, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t2", 1, "", "ambiguous_lost"),
				dvCredit("a", "t3", 2),
				dvCredit("a", "t4", 3),
				dvCredit("a", "t5", 4),
				dvCredit("b", "t0", 5),
				dvCredit("b", "t1", 7),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: the retry window with TxnTime",
			Note: "retry window one hour, transaction ids timed (TimeUUID, lowercase: written as bin 16 in the state, format version 3), history and folded length 1. An id with no time is invalid_txn before any store call; one older than the window is outside_window at its record lookup, after the counter's fetch, nothing written. After three more credits a's entry has forgotten x1: thirty minutes on, its retry is a duplicate from its live record; two hours on the record is past the window and x1's time too, so the retry is outside_window",
			Options: func() dvOptions {
				o := opts(2, 1, 1)
				o.RetryWindowNS, o.TxnTime = dvI(int64(time.Hour)), "timeuuid"
				return o
			}(),
			Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvCredit("a", dvTimeID(dvT0.Add(-10*time.Minute), 1), 5),
				dvCredit("a", "no-time", 5),
				dvCredit("a", dvTimeID(dvT0.Add(-2*time.Hour), 2), 5),
				dvCredit("a", dvTimeID(dvT0, 3), 1),
				dvCredit("a", dvTimeID(dvT0, 4), 2),
				dvCredit("a", dvTimeID(dvT0, 5), 3),
				dvAtClock(dvCredit("a", dvTimeID(dvT0.Add(-10*time.Minute), 1), 5), 30*time.Minute),
				dvAtClock(dvCredit("a", dvTimeID(dvT0.Add(-10*time.Minute), 1), 5), later),
				dvAtClock(dvLedgerOp("value", "a"), later),
			}},
		{Name: "records: a timed transaction's records live while its time is inside the window",
			Note: "retry window one hour, TxnTime, history and folded length 1, FutureSkew the ledger's default (1 minute). x1, stamped 30 s after the clock, is applied (its record made at the clock's time); x2, stamped 2 minutes after it, is outside_window with no store call. After three more credits a's entry has forgotten x1. An hour and 10 s on, x1's record is past the window by its own time, but x1's time is not: the record still counts and the retry is a duplicate (a writer whose clock was behind made a record that lives as long as the transaction's time). At an hour and 40 s x1's time is past the window too: outside_window",
			Options: func() dvOptions {
				o := opts(2, 1, 1)
				o.RetryWindowNS, o.TxnTime = dvI(int64(time.Hour)), "timeuuid"
				return o
			}(),
			Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvCredit("a", dvTimeID(dvT0.Add(30*time.Second), 1), 5),
				dvCredit("a", dvTimeID(dvT0.Add(2*time.Minute), 2), 5),
				dvCredit("a", dvTimeID(dvT0, 3), 1),
				dvCredit("a", dvTimeID(dvT0, 4), 2),
				dvCredit("a", dvTimeID(dvT0, 5), 3),
				dvAtClock(dvCredit("a", dvTimeID(dvT0.Add(30*time.Second), 1), 5), time.Hour+10*time.Second),
				dvAtClock(dvCredit("a", dvTimeID(dvT0.Add(30*time.Second), 1), 5), time.Hour+40*time.Second),
				dvAtClock(dvLedgerOp("value", "a"), time.Hour+40*time.Second),
			}},
		{Name: "records: past the retry window an untimed retry is applied again",
			Note:    "retry window one hour, no TxnTime, history and folded length 1: t1's entry copy is forgotten after three more credits, and two hours on its record is past the window, so a retry of t1 is applied as new and counted twice (SPEC 6.11, the window stated once: beyond W an untimed transaction is applied as new)",
			Options: func() dvOptions { o := opts(2, 1, 1); o.RetryWindowNS = dvI(int64(time.Hour)); return o }(),
			Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7),
				dvCredit("a", "t3", 1),
				dvCredit("a", "t4", 2),
				dvAtClock(dvCredit("a", "t1", 5), later),
				dvAtClock(dvLedgerOp("value", "a"), later),
			}},
		{Name: "records: a refused record put is written before the next cycle",
			Note:    "t1 lands but its record put (after the record's confirming fetch) is refused: the call fails ambiguous_write (outcome applied, landed), and the ledger keeps the record. While it cannot be written (flush: fetch, then put refused), the next credit fails unavailable with nothing applied (1 attempt, no fetch of the counter). A Find first writes it (fetch, then put with that fetch's token), then compacts and puts; the credit retried then lands",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "t1", 5), "t1", "", "", "refuse"),
				dvRecFaults(dvCredit("a", "t2", 7), "t1", "", "refuse"),
				dvLedgerOp("find", "a"),
				dvCredit("a", "t2", 7),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: a pending write's transaction recorded by another writer is taken out",
			Note:    "history and folded length 1, retry_count 1. a's put of t1 is ambiguous twice and lost: pending. The caller retries t1 on b, which applies it and, after three more credits, has forgotten it. a's next credit fetches the counter (no t1: a's write is still pending), fetches t1's record, which names b at version 1 while the fetch holds b's entry at version 4 (at or past the record's: b's entry held t1 and let it go), and takes t1 out of its pending write: its put carries t2 only, so t1 counts once",
			Options: opts(1, 1, 1), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("b", "t1", 5),
				dvCredit("b", "t4", 1),
				dvCredit("b", "t5", 2),
				dvCredit("b", "t6", 3),
				dvCredit("a", "t2", 7),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: a pending write's timed transaction recorded by another writer is taken out",
			Note: "as the vector before, with TxnTime (TimeUUID ids) and a retry window of one hour: a's lost write of x1 stays pending; b applies x1 and, after three more credits, has forgotten it; a's next credit takes x1 out of its pending write by its record (b at version 1, the fetch at version 4), not by x1's time, which is inside the window: its put carries x2 only, so x1 counts once",
			Options: func() dvOptions {
				o := opts(1, 1, 1)
				o.RetryWindowNS, o.TxnTime = dvI(int64(time.Hour)), "timeuuid"
				return o
			}(),
			Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", dvTimeID(dvT0, 1), 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("b", dvTimeID(dvT0, 1), 5),
				dvCredit("b", dvTimeID(dvT0, 4), 1),
				dvCredit("b", dvTimeID(dvT0, 5), 2),
				dvCredit("b", dvTimeID(dvT0, 6), 3),
				dvCredit("a", dvTimeID(dvT0, 2), 7),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: a pending transaction and a read older than its record",
			Note:    "retry_count 1. a's put of t1 is ambiguous twice and lost: pending. b applies t1 (record: writer b, version 1). a's next reads are stale, the state before b's write: t1's record names b at version 1, the fetch holds no entry of b (version 0), so the fetch is older than the record and the attempt fails unavailable with nothing more read or written (ambiguous_write+unavailable for a resend of t1, whose copy is in the pending write; unavailable for t2). Two hours later c's first write retires b, idle since t1's record (a second record of t1: writer b, version 1). a's next read is fresh: b's entry is retired at version 1, the record's own (at it, not past it) and holds no transaction, so t1 is taken out (b's total counts it), and a's put carries t2 only",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("b", "t1", 5),
				dvCredit("a", "t1", 5, "stale"),
				dvCredit("a", "t2", 7, "stale"),
				dvAtClock(dvCredit("c", "t3", 1), later),
				dvAtClock(dvCredit("a", "t2", 7), later),
				dvAtClock(dvLedgerOp("value", "b"), later),
			}},
		{Name: "records: a pending write's take-out is kept when a later judgement is stale",
			Note:    "history and folded length 1, retry_count 1. a's puts of t1 and then of t2 are ambiguous twice and lost: a's pending write holds both, unacknowledged. b applies t1 and, after three more credits, has forgotten it (version 4); c applies t2 (version 1). a's credit of t3 reads stale, the state before c's write: in id order, t1's record names b at version 1, the fetch holds b at version 4, so t1 is taken out of the pending write; t2's record names c at version 1, the fetch holds no entry of c, so the attempt fails unavailable. t1 stays taken out: a's next credit, reading fresh, finds t2 in c's entry (the copies meet) and puts t2 and t3 without t1, which counts once",
			Options: opts(1, 1, 1), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t2", 7, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("b", "t1", 5),
				dvCredit("b", "t4", 1),
				dvCredit("b", "t5", 2),
				dvCredit("b", "t6", 3),
				dvCredit("c", "t2", 7),
				dvCredit("a", "t3", 1, "stale"),
				dvCredit("a", "t3", 1),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: a copy in doubt for RetireAfter/2 is taken out when the account holds the retry's",
			Note:    "retry_count 1, RetireAfter 1 hour. b's puts of x are ambiguous twice and lost: b's pending write holds x, unacknowledged. a applies the caller's retry of x and records it (writer a). 30 minutes later (RetireAfter/2) b credits y: its fetch holds x in a's entry, a copy that would count beside b's (a's id is smaller), and b's copy has been in doubt for RetireAfter/2, so b reads x's record, which names a at a version the fetch holds: x is taken out of the pending write, and b puts y alone. Sent again with x, b's write would meet a's copy while another ledger's pass, from a read without b's write, could retire a (idle for RetireAfter by then) with x counted in its total",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("b", "x", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "x", 5),
				dvAtClock(dvCredit("b", "y", 1), 30*time.Minute),
				dvAtClock(dvLedgerOp("value", "a"), 30*time.Minute),
			}},
		{Name: "records: a copy in doubt for less than RetireAfter/2 meets the retry's",
			Note:    "retry_count 1, RetireAfter 1 hour. a's puts of x are ambiguous twice and lost: a's pending write holds x, unacknowledged. b applies the caller's retry of x and records it (writer b). 1 ns before RetireAfter/2 a credits y: the fetch knows x (b's copy), so a reads no record of it, and its put carries x and y; the copies meet and x counts once",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "x", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("b", "x", 5),
				dvAtClock(dvCredit("a", "y", 1), 30*time.Minute-time.Nanosecond),
				dvAtClock(dvLedgerOp("value", "b"), 30*time.Minute),
			}},
		{Name: "records: a copy in doubt for RetireAfter/2 that would count stays beside the retry's",
			Note:    "retry_count 1, RetireAfter 1 hour. a's puts of x are ambiguous twice and lost: a's pending write holds x, unacknowledged. b applies the caller's retry of x and records it (writer b). 30 minutes later a credits y: its fetch holds x in b's entry, but a's copy would count beside b's (a's id is smaller), so a reads no record of it and its put carries x and y; the copies meet and x counts once. Taken out, a's copy would be lost if b, having read it landed, were giving its own up to it (its record naming a not yet written)",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "x", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("b", "x", 5),
				dvAtClock(dvCredit("a", "y", 1), 30*time.Minute),
				dvAtClock(dvLedgerOp("value", "b"), 30*time.Minute),
			}},
		{Name: "retire: a pass does not record its own copy in doubt as the one that counts",
			Note:    "retry_count 1, RetireAfter 1 hour. a's puts of x are ambiguous twice and lost (pending). b applies the caller's retry of x; the put of its record is refused (owed). At 0:08 a's credit y (both puts lost again) makes a pass that first sees b: x has no record, so b is idle from then. At 1:08 a credits z: x, in doubt for over RetireAfter/2, would count beside b's copy (a's id is smaller), so it stays; b is due, but the copy that counts in a's state is a's own copy of x, in a write not known to have landed: a records nothing for b and does not retire it (the pass is due again at the next write). A record naming a would keep a's copy from being taken out if another ledger's pass, from a read without a's write, retired b with x counted. z's put lands with x: a owes x's record",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "x", 5, "", "ambiguous_lost", "", "ambiguous_lost"),
				dvRecFaults(dvCredit("b", "x", 5), "x", "", "", "refuse"),
				dvAtClock(dvCredit("a", "y", 1, "", "ambiguous_lost", "", "ambiguous_lost"), 8*time.Minute),
				dvAtClock(dvCredit("a", "z", 2), 68*time.Minute),
				dvAtClock(dvCredit("a", "w", 3), 68*time.Minute),
				dvAtClock(dvLedgerOp("value", "b"), 68*time.Minute),
			}},
		{Name: "retire: a writer ahead of the store finds its entry retired",
			Note:    "retry_count 2. a credits t1; its credit of t2 is refused three times (unavailable): t2 is taken back out, so a's entry is ahead of the stored one (6.9), and a reads apart. Two hours later b's first write retires a at the stored version (recording t1 first). a's credit t4 reads its entry retired: it drops its state beyond the store and takes its next incarnation (later_writers: a~aaaaaaab), which writes t4 alone. Writing the entry a holds, newer than the retired one, would bring back whatever the retirement let leave without counting. The caller's retry of t2 is applied, and a retry of t1 is a duplicate from its record",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{{Actor: "a", Writer: "a~aaaaaaaa", LaterWriters: []string{"a~aaaaaaab"}}, dvLedgersABC[1]}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7, "", "refuse", "", "refuse", "", "refuse"),
				dvAtClock(dvCredit("b", "t3", 1), later),
				dvAtClock(dvCredit("a", "t4", 2), later),
				dvAtClock(dvCredit("a", "t2", 7), later),
				dvAtClock(dvCredit("a", "t1", 5), later),
				dvAtClock(dvLedgerOp("value", "b"), later),
			}},
		{Name: "records: a pending transaction its own writer's record names stays",
			Note:    "a's put of t1 lands but its retry's fetch is refused: ambiguous_write+unavailable, pending, and t1 unrecorded. a's credit t2 reads a stale (empty) state, its put is lost and its retry's fetch refused: a's pending write holds t1 and t2 at a larger seq than the landed one. a's credit t5 reads a stale (empty) state again, which holds neither, so it reads the records of t1 and t2. t1's, seeded (another ledger's retirement pass recorded a's transaction), names a itself, so t1 stays in the pending write (its copy landed; taking it out would leave it counted by no one), and a's put carries t1, t2 and t5",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_landed", "refuse"),
				dvCredit("a", "t2", 7, "stale", "ambiguous_lost", "refuse"),
				dvRecFaults(dvCredit("a", "t5", 3, "stale"), "t1", dvSeed(aT1)),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: a writer records the copy that counts before giving its own up",
			Note:    "a credits x; its put lands but its record put is refused (the record owed). b, reading stale (before a's put) and finding no record, credits x too and records it (writer b). b's credit y reads both copies: a's counts (the smaller id), so before applying y, b fetches x's record (it names b, whose copy is the one given up: the record to write still names a) and puts x's record naming a (amount 5, a's version, no token), then drops its copy. a's credit z writes its owed record: the confirming fetch finds a record naming a, so the record is put with that fetch's token. x counts once",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "x", 5), "x", "", "", "refuse"),
				dvCredit("b", "x", 5, "stale"),
				dvCredit("b", "y", 1),
				dvCredit("a", "z", 2),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: a writer takes out the copy it gave up, whatever it reads later",
			Note:    "history 2, folded 1. a credits x; its put lands but its record put is refused (owed). b, reading stale (empty), credits x too and records it (writer b). b's credit y reads two states stale (empty): with its own entry b's copy of x counts, so it applies y, and its put is lost (pending). Its second attempt reads both copies: a's counts (the smaller id), so b gives its copy up, but the record naming a is refused: y fails ambiguous_write+unavailable and the record is owed. b's credit z first reads the account (a give-up's owed record is judged against a fresh read: its entry may have been retired meanwhile), writes the owed record and takes its copy of x out of its pending write (its entry in P at seq 3, without x); its read is two states stale again (empty), so it applies z to that entry alone. b's credit w, one state stale, and a's credit v (writing its owed record, which names a) follow: x counts once, in a's entry. Without the take-out, z's put holds b's copy again, the owner in the state it read, which a later write folds into b's total while a keeps its copy",
			Options: opts(2, 2, 1), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "x", 5), "x", "", "", "refuse"),
				dvCredit("b", "x", 5, "stale"),
				dvRecFaults(dvCredit("b", "y", 1, "stale2", "ambiguous_lost", ""), "x", "", "refuse"),
				dvCredit("b", "z", 2, "stale2"),
				dvCredit("b", "w", 3, "stale"),
				dvCredit("a", "v", 4),
				dvLedgerOp("value", "b"),
			}},
		{Name: "records: a record carries its writer's version in the state that landed it",
			Note:    "a credit (a's entry in P at seq 1: version 1), a debit (N at seq 1: version 2, P and N summed), a credit whose first put is refused (taken back out, P at seq 3, then applied, P at seq 4: version 5) and a credit whose put lands ambiguously, found by the retry's fetch (version 6, the fetched state's). Each record carries that version",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvDebit("a", "t2", 2),
				dvCredit("a", "t3", 1, "", "refuse"),
				dvCredit("a", "t4", 4, "", "ambiguous_landed"),
				dvLedgerOp("value", "a"),
			}},
		{Name: "retire: the records of a retired writer carry its version",
			Note:    "a credits t1 and t2 and debits t3, whose record put is refused: its entries are at seq 2 in P and 1 in N, version 3. 25 hours later (past the 24-hour retry window) b's first write finds a's record of t2 dead, which dates a, but none of t3 (owed): a is idle from then. An hour and five minutes later b's pass retires a, first putting a record of t3 with writer a and version 3 (a's version in the state written), with the token of its fetch, which found none; t1 and t2 keep their dead records, which name a with the same amounts (no retry is owed them)",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7),
				dvRecFaults(dvDebit("a", "t3", 2), "t3", "", "", "refuse"),
				dvAtClock(dvCredit("b", "t4", 1), 25*time.Hour),
				dvAtClock(dvCredit("b", "t5", 3), 26*time.Hour+5*time.Minute),
				dvAtClock(dvLedgerOp("value", "b"), 26*time.Hour+5*time.Minute),
			}},
	}
}

// dvMember is a member of a group step.
func dvMemberOf(op, txn string, amount int64) dvStep {
	return dvStep{Op: op, Txn: txn, Amount: dvI(amount)}
}

// dvLedgerLookupVectors are the failure paths of SPEC.md 6.11 step 1: a
// record fetch that fails, a record sibling that does not decode, a record
// of another transaction under the key. The siblings are seeded under the
// key just before the step's fetch (dvSeed).
func dvLedgerLookupVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	c := "credit"
	other := must(ledger.Record{Txn: "t9", Amount: 9, Writer: "z~zzzzzzzz", At: dvT0, Version: 1}.MarshalBinary())
	bx := must(ledger.Record{Txn: "x", Amount: 5, Writer: "b~bbbbbbbb", At: dvT0, Version: 1}.MarshalBinary())
	foreign := must(ledger.Record{Txn: "l1", Amount: 2, Writer: "z~zzzzzzzz", At: dvT0, Version: 1, Key: "other"}.MarshalBinary())
	bx1, err := tpncounter.New(tpncounter.Options{})
	if err == nil {
		_, err = bx1.Apply("b~bbbbbbbb", "x", 5)
	}
	bState := must(bx1.MarshalBinary())
	bFolded := must(ledger.Record{Txn: "x", Amount: 5, Writer: "b~bbbbbbbb", At: dvT0, Version: 3}.MarshalBinary())
	return []dvVector{
		{Name: "records: an earlier attempt's copy that did not land is not the one applied",
			Note:    "a credits x: its first put is ambiguous and lost (pending). Before the second attempt b's state holding x lands under the key (seeded): the fetch knows x, and the copy that counts is b's, so the call is answered duplicate with owner b, not applied: applied only when the owner is this ledger's own copy (6.9)",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "x", 5, "", "ambiguous_lost", dvSeed(bState)),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: an earlier attempt's refused copy, then known from another writer's record",
			Note:    "a credits x: its first put is refused (x taken back out). Before the second attempt b's record of x lands (seeded under x's key: b counted x and forgot it): the lookup knows x, and the call is answered duplicate with owner b (folded), not applied (6.11 step 2); nothing is written",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "x", 5, "", "refuse"), "x", "", dvSeed(bFolded)),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: a failed record fetch fails the attempt",
			Note:    "retry_count 2. t1's record fetch (after the counter's fetch) is refused: the call fails unavailable after 1 attempt, nothing written, no further attempt. Then behind l0, a group of l1 and l2 whose l1 record fetch is refused: the attempt fails, and both members fail unavailable (1 attempt, nothing written). Retried, t1 lands",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "t1", 5), "t1", "refuse"),
				dvRecFaults(dvGroup("a", []dvStep{dvMemberOf(c, "l0", 1), dvMemberOf(c, "l1", 2), dvMemberOf(c, "l2", 3)}), "l1", "refuse"),
				dvCredit("a", "t1", 5),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: a record that does not decode fails its call alone",
			Note:    "behind l0, a group of l1 and l2; l1's record key holds a sibling that does not decode (the byte c0, msgpack nil): l1 fails corrupt and changes nothing, and l2 is applied and lands in the attempt's put",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvRecFaults(dvGroup("a", []dvStep{dvMemberOf(c, "l0", 1), dvMemberOf(c, "l1", 2), dvMemberOf(c, "l2", 3)}), "l1", dvSeed([]byte{0xc0})),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: a record naming another account fails its call alone",
			Note:    "behind l0, a group of l1 and l2; l1's record key holds a live record of l1 with l1's amount (2) naming the key \"other\": neither this ledger's key nor, for a plain ledger, any other key a record may name (6.11 Encoding), so it answers nothing: l1 fails corrupt and changes nothing, and l2 is applied and lands in the attempt's put",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvRecFaults(dvGroup("a", []dvStep{dvMemberOf(c, "l0", 1), dvMemberOf(c, "l1", 2), dvMemberOf(c, "l2", 3)}), "l1", dvSeed(foreign)),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: a record of another transaction under the key is passed over",
			Note:    "t1's record key holds a live record of t9 (amount 9, writer z~zzzzzzzz), as a hash collision would leave: t1's lookup passes over it (neither known nor conflicting_transaction), t1 is applied, and its record is put with the token of the fetch that read the other",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "t1", 5), "t1", dvSeed(other)),
				dvLedgerOp("value", "a"),
			}},
		{Name: "records: a copy landing next to another writer's recorded copy is a duplicate",
			Note:    "b credits x: its put lands, the put of x's record is refused (ambiguous_write, the record owed). a credits x reading stale (from before b's put) and finding no record: a applies x, and its put leaves a second sibling. a confirms its record: the fetch of x's key finds b's record (written meanwhile by b's next cycle, seeded under the key), which names only b, so a settles: it reads the account, where b's entry holds x, and x's key again. The copies meet: a writes no record, and its call is answered duplicate with owner b (not folded), the writer that landed x first; a watches its copy (6.11 step 3). The value counts x once",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvRecFaults(dvCredit("b", "x", 5), "x", "", "", "refuse"),
				dvRecFaults(dvCredit("a", "x", 5, "stale"), "x", "", dvSeed(bx)),
				dvLedgerOp("value", "a"),
			}},
	}
}

// dvSubKeyOf reports whether a record under the records of account may
// name key, read by the ledger on own: only a sub-ledger (own is not the
// account) reads records of other keys, the account's sub-keys
// account/i, i in 0..1023 in decimal without leading zeros (SPEC.md 6.11
// Encoding).
func dvSubKeyOf(account, own, key string) bool {
	i, ok := strings.CutPrefix(key, account+"/")
	n, err := strconv.Atoi(i)
	return own != account && ok && err == nil && n >= 0 && n < 1024 && strconv.Itoa(n) == i
}

// dvSeed is a record fault that puts b under the record key (as actor
// "init", no token) just before the fetch it applies to, which then
// answers as usual: a sibling no ledger of the vector wrote.
// dvSeed is the fault of a fetch before which each of bs is put under the
// key as a sibling of its own, with no token.
func dvSeed(bs ...[]byte) string {
	hs := make([]string, len(bs))
	for i, b := range bs {
		hs[i] = hex.EncodeToString(b)
	}
	return "seed:" + strings.Join(hs, ",")
}

// dvLedgerGroupVectors are the vectors of group commit (SPEC.md 6.9, 11.1).
func dvLedgerGroupVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	c, d := "credit", "debit"
	return []dvVector{
		{Name: "group: duplicate members",
			Note:    "g0 runs alone while three credits queue: g0 again, g1, g1 again. They run as one cycle with one put: g0 is known to the fetch (duplicate, nothing applied), g1 is applied, the second g1 is a duplicate of it (Apply answers duplicate; it stays in the group and lands). Each member an attempt applied (g1 once) has its record put, with its own lookup's token; each g1 reads the record (the fetch does not hold g1), the second g0 does not",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvGroup("a", []dvStep{dvMemberOf(c, "g0", 1), dvMemberOf(c, "g0", 1), dvMemberOf(c, "g1", 5), dvMemberOf(c, "g1", 5)}),
				dvLedgerOp("value", "a"),
			}},
		{Name: "group: a conflicting member",
			Note:    "behind h0, a credit h1 and a debit h1 queue: the credit is applied, the debit's Apply fails conflicting_transaction against it (it changes nothing and gets that error), and the put carries the credit alone",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvGroup("a", []dvStep{dvMemberOf(c, "h0", 1), dvMemberOf(c, "h1", 5), dvMemberOf(d, "h1", 5)}),
				dvLedgerOp("value", "a"),
			}},
		{Name: "group: a refused put",
			Note:    "the group's first put is refused: both members are taken back out (the ledger's entry moves to a larger seq) and the second attempt puts both again; each answers applied after 2 attempts. Then with every attempt refused (retry_count 2) both fail unavailable, nothing pending",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvGroup("a", []dvStep{dvMemberOf(c, "r0", 1), dvMemberOf(c, "r1", 2), dvMemberOf(c, "r2", 3)}, "", "", "", "refuse"),
				dvGroup("a", []dvStep{dvMemberOf(c, "s0", 1), dvMemberOf(c, "s1", 2), dvMemberOf(d, "s2", 3)}, "", "", "", "refuse", "", "refuse", "", "refuse"),
				dvLedgerOp("value", "a"),
			}},
		{Name: "group: an ambiguous put",
			Note:    "the group's put is ambiguous and lost: the state is kept pending and the next attempt puts both members again (applied, 2 attempts). Then, retry_count 1, an ambiguous put then a refused one: both members fail ambiguous_write+unavailable (their transactions may land with the pending write) and the ledger is pending; its next credit lands them",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvGroup("a", []dvStep{dvMemberOf(c, "m0", 1), dvMemberOf(c, "m1", 2), dvMemberOf(c, "m2", 3)}, "", "", "", "ambiguous_lost"),
				dvGroup("a", []dvStep{dvMemberOf(c, "n0", 1), dvMemberOf(c, "n1", 2), dvMemberOf(c, "n2", 3)}, "", "", "", "ambiguous_lost", "", "refuse"),
				dvCredit("a", "n3", 4),
				dvLedgerOp("value", "a"),
			}},
	}
}

// dvLedgerGraceVectors are the vectors of SPEC.md 6.9 RetiredGrace and
// 6.10's bases: a pass folds what was retired more than RetiredGrace ago;
// a ledger whose last read is older than RetiredGrace/2 drops its state;
// one whose entry last changed more than RetireAfter + RetiredGrace/2 ago
// takes a new incarnation. RetireAfter and RetiredGrace are one hour.
func dvLedgerGraceVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	o := opts(2, 10, 10)
	o.RetiredGraceNS = dvI(int64(time.Hour))
	m := time.Minute
	// halfGrace: a credits and debits, b retires a, a credits again (its
	// debit half stays retired), b folds that half at 2:30 and a debits
	// then, its read's faults given.
	halfGrace := func(faults ...string) []dvStep {
		return []dvStep{
			dvCredit("a", "t1", 5),
			dvDebit("a", "t2", 2),
			dvAtClock(dvCredit("b", "t5", 7), 60*m),
			dvAtClock(dvCredit("a", "t3", 3), 70*m),
			dvAtClock(dvCredit("b", "t6", 1), 150*m),
			dvAtClock(dvDebit("a", "t4", 1, faults...), 150*m),
			dvAtClock(dvLedgerOp("value", "b"), 150*m),
		}
	}
	return []dvVector{
		{Name: "grace: a read older than RetiredGrace/2 drops the ledger's state",
			Note:    "retire_after and retired_grace one hour. c credits t1 and stops. At 0:40 a credits t2: its read holds c live (idle 40 minutes: not retired). At 1:00 b's first write retires c (dated by t1's record), retired_at 1:00. At 1:30 b's pass folds nothing: c's retirement is not older than the cutoff 0:30. At 2:01 b's pass retires a (idle since t2's record at 0:40) and folds c into P's base (cutoff 1:01, total 5): c's entry leaves the state. At 2:10 a credits t6: its previous read began at 0:40, more than RetiredGrace/2 ago, so it drops its state and reads the store alone; its entry last changed at 0:40, exactly RetireAfter + RetiredGrace/2 ago, not more, so it keeps its incarnation (its retired entry comes back live). Merging its old state would bring c's live entry back beside the base and count t1 twice",
			Options: o, Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("c", "t1", 5),
				dvAtClock(dvCredit("a", "t2", 7), 40*m),
				dvAtClock(dvCredit("b", "t3", 1), 60*m),
				dvAtClock(dvCredit("b", "t4", 2), 90*m),
				dvAtClock(dvCredit("b", "t5", 3), 121*m),
				dvAtClock(dvCredit("a", "t6", 4), 130*m),
				dvAtClock(dvLedgerOp("value", "b"), 130*m),
			}},
		{Name: "grace: a read's base drops the retired entry the ledger's state holds",
			Note:    "retire_after and retired_grace one hour. c credits t1 and stops; at 1:00 b's first write retires c (retired_at 1:00). At 1:10 a credits t2: its state holds c retired. At 1:50 a reads (40 minutes after its last read: it drops its state and reads the store, c still retired). At 2:05 b's pass folds c into P's base (cutoff 1:05, total 5). At 2:10 a credits t3: its last read, at 1:50, is within RetiredGrace/2, so it merges its state, which holds c retired at 1:00, with the fetch, which holds the base of cutoff 1:05: the merge keeps that base and drops c's entry (retired before the cutoff), so a's put holds the base and no entry of c, and t1 counts once",
			Options: o, Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("c", "t1", 5),
				dvAtClock(dvCredit("b", "t4", 1), 60*m),
				dvAtClock(dvCredit("a", "t2", 7), 70*m),
				dvAtClock(dvLedgerOp("value", "a"), 110*m),
				dvAtClock(dvCredit("b", "t5", 2), 125*m),
				dvAtClock(dvCredit("a", "t3", 3), 130*m),
				dvAtClock(dvLedgerOp("value", "b"), 130*m),
			}},
		{Name: "grace: a half unchanged past RetireAfter + RetiredGrace/2 takes a new incarnation",
			Note:    "retire_after and retired_grace one hour. a credits t1 and debits t2. At 1:00 b's first write retires a, both halves (records first). At 1:10 a credits t3: its credit half is live again, its debit half stays retired. At 2:30 b's pass folds a's retired debit half into N's base. At 2:30 a debits t4: its credit half changed 1:20 ago, but its debit half last changed at 0:00, more than RetireAfter + RetiredGrace/2 ago: each half is retired on its own, so the entry is dated by the half that changed least recently, and a takes a new incarnation (later_writers: a~aaaaaaab), whose fresh entry holds t4. Writing the folded half again would count t2 twice",
			Options: o, Ledgers: []dvLedger{{Actor: "a", Writer: "a~aaaaaaaa", LaterWriters: []string{"a~aaaaaaab"}}, dvLedgersABC[1]}, Steps: halfGrace()},
		{Name: "grace: a half unchanged past RetireAfter + RetiredGrace/2 takes a new incarnation before a read that lags the fold",
			Note:    "as \"grace: a half unchanged past RetireAfter + RetiredGrace/2 takes a new incarnation\", but a's read at 2:30 is stale: it shows the store before b's write that folded a's debit half, which it shows retired, not folded. a takes its new incarnation by its clock alone (later_writers: a~aaaaaaab), before that read: the half that changed least recently, the debit half, last changed at 0:00. Dated by its credit half (1:10), a would write t4 into the debit half the store has folded, and t2 would count twice",
			Options: o, Ledgers: []dvLedger{{Actor: "a", Writer: "a~aaaaaaaa", LaterWriters: []string{"a~aaaaaaab"}}, dvLedgersABC[1]}, Steps: halfGrace("stale")},
		{Name: "grace: a writer idle past RetireAfter + RetiredGrace/2 takes a new incarnation",
			Note:    "retire_after and retired_grace one hour. a credits t1 and stops. At 1:00 b's first write retires a (records t1 with writer a first), retired_at 1:00. At 2:30 b's pass folds a's entry into P's base (cutoff 1:30, total 5). At 2:30 a credits t4: its entry last changed at 0:00, more than RetireAfter + RetiredGrace/2 ago, so before reading it drops its state and takes a new incarnation (later_writers: a~aaaaaaab), whose fresh entry holds t4; writing under the old one would make a second entry of it at seq 1. A retry of t1 on a is a duplicate from its record (owner a's first incarnation, folded)",
			Options: o, Ledgers: []dvLedger{{Actor: "a", Writer: "a~aaaaaaaa", LaterWriters: []string{"a~aaaaaaab"}}, dvLedgersABC[1]}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvAtClock(dvCredit("b", "t2", 7), 60*m),
				dvAtClock(dvCredit("b", "t3", 1), 150*m),
				dvAtClock(dvCredit("a", "t4", 2), 150*m),
				dvAtClock(dvCredit("a", "t1", 5), 150*m),
				dvAtClock(dvLedgerOp("value", "b"), 150*m),
			}},
		{Name: "grace: owed records are written after a read when the last read is older than RetiredGrace/2",
			Note:    "retire_after and retired_grace one hour. a credits t1, which lands, but its record put is refused: the call fails ambiguous_write and the record is owed. At 0:40 a credits t2: its last read began at 0:00, more than RetiredGrace/2 ago, so before writing the owed record it reads the account (dropping its state and reading the store alone, its entry shown at the version last known stored: same incarnation), then fetches and puts t1's record, then runs the cycle. A take-out those records make is then in the state the cycle merges; read after them, it would be dropped with the state",
			Options: o, Ledgers: dvLedgersABC[:1], Steps: []dvStep{
				dvRecFaults(dvCredit("a", "t1", 5), "t1", "", "", "refuse"),
				dvAtClock(dvCredit("a", "t2", 7), 40*m),
				dvAtClock(dvLedgerOp("value", "a"), 40*m),
			}},
		{Name: "grace: a write in doubt older than RetiredGrace/2 is forgotten",
			Note:    "retire_after and retired_grace one hour, retry_count 2. a credits t1; its put of t2 is ambiguous three times and lost: pending. At 1:00 b's first write retires a (dated by t1's record), and at 2:30 b's pass folds a's entry into P's base (cutoff 1:30, total 5). At 2:30 a credits t3: its last read began at 0:00, more than RetiredGrace/2 ago, so its write in doubt has landed or is lost by now; it forgets it and its state, takes a new incarnation (its entry changed more than RetireAfter + RetiredGrace/2 ago) and writes t3 alone. Resending the pending state, under the folded entry, would count a's total twice",
			Options: o, Ledgers: []dvLedger{{Actor: "a", Writer: "a~aaaaaaaa", LaterWriters: []string{"a~aaaaaaab"}}, dvLedgersABC[1]}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7, "", "ambiguous_lost", "", "ambiguous_lost", "", "ambiguous_lost"),
				dvAtClock(dvCredit("b", "t4", 1), 60*m),
				dvAtClock(dvCredit("b", "t5", 2), 150*m),
				dvAtClock(dvCredit("a", "t3", 3), 150*m),
				dvAtClock(dvLedgerOp("value", "b"), 150*m),
			}},
	}
}

// dvLedgerRetireAllVectors are the vectors of SPEC.md 6.9 RetireAfter's
// use of RetireAll (6.10): idle actors whose Retire declined, because they
// share transactions only among themselves, retire together.
func dvLedgerRetireAllVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	later := 2 * time.Hour // past RetireAfter (1 hour)
	return []dvVector{
		{Name: "retire: idle writers that share a transaction wait for all their records",
			Note:    "as \"retire: idle writers that share a transaction retire together\", except that at c's credit of z, the put of x's record for the member not yet recorded is refused: that member is not recorded, so the pair, which retires together or not at all, stays live, and the record is owed. c's next credit writes it first (flush) and retires both",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("a", "x", 5, "", "ambiguous_landed", "refuse"),
				dvCredit("b", "x", 5, "stale"),
				dvAtClock(dvCredit("c", "y", 1), later),
				dvRecFaults(dvAtClock(dvCredit("c", "z", 1), 2*later), "x", "", "refuse"),
				dvAtClock(dvCredit("c", "w", 1), 2*later),
				dvAtClock(dvLedgerOp("value", "c"), 2*later),
			}},
		{Name: "retire: idle writers that share a transaction retire together",
			Note:    "retry_count 1. a's put of x lands but its retry's fetch is refused: ambiguous_write+unavailable, pending, x unrecorded. The caller retries x on b, whose fetch is stale (from before a's put) and finds no record: b applies x too, its put leaving a second sibling, and records x (writer b). Two hours later c's first write dates b by x's record, which names b, and finds it idle; it records b's transactions (x with writer a, whose copy counts), and Retire declines, since a holds x. a is idle from then: x's record does not name it. Two hours on, c's pass finds a idle too; it records a's transactions (x with writer a), and Retire declines a, since b holds x. Declined, at least two, they retire with one RetireAll: a's retired total counts x (a, the smaller id, owns it), b's does not, and the value counts x once",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("a", "x", 5, "", "ambiguous_landed", "refuse"),
				dvCredit("b", "x", 5, "stale"),
				dvAtClock(dvCredit("c", "y", 1), later),
				dvAtClock(dvCredit("c", "z", 1), 2*later),
				dvAtClock(dvLedgerOp("value", "c"), 2*later),
			}},
		{Name: "retire: an idle writer whose copy does not count retires while the owner writes",
			Note:    "history length 1, folded length 4. a credits x; the put of x's record is refused (ambiguous_write, the record kept). b, reading stale (before a's put) and finding no record, credits x too: two siblings, x counted once, by a's copy (the smaller id). Two hours later a's credit of y first writes x's record (dated then), merges b's entry, and its credit of z folds x: a's folded copy counts, and a defers forgetting it while b holds x. Two more hours on, b is idle by x's record: a's pass records b's transactions (x with writer b) and Retire retires b at once, its copy leaving without counting (b's retired total 0); a forgets x once it has folded four more. The value counts x once throughout",
			Options: opts(1, 1, 4), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvRecFaults(dvCredit("a", "x", 5), "x", "", "", "refuse"),
				dvCredit("b", "x", 5, "stale"),
				dvAtClock(dvCredit("a", "y", 1), later),
				dvAtClock(dvCredit("a", "z", 2), later),
				dvAtClock(dvCredit("a", "w", 4), 2*later),
				dvAtClock(dvCredit("a", "v", 8), 2*later),
				dvAtClock(dvLedgerOp("value", "c"), 2*later),
			}},
		func() dvVector {
			// p's entry holds x, a copy that landed late: q applied x
			// first (its record), folded and forgot it (its total).
			st := &dvState{P: []dvEntry{
				{Actor: "p", Seq: "1", History: []dvTxn{{"x", 5}}, Folded: []dvTxn{}},
				{Actor: "q", Seq: "3", Total: 5, Forgot: 1, History: []dvTxn{}, Folded: []dvTxn{}},
			}, N: []dvEntry{}, Value: 10}
			b := must(dvEncState(st))
			rec := must(ledger.Record{Txn: "x", Amount: 5, Writer: "q", At: dvT0, Version: 1}.MarshalBinary())
			return dvVector{Name: "retire: an idle writer holding a copy another writer counted first retires without it",
				Note:    "the key holds p's entry with x in its history (version 1) and q's entry past x (version 3, total 5: q applied x, recorded it at version 1, folded and forgot it), so x counts twice: p's copy landed late, and p's own ledger would take it out if it read again (6.11 step 3). c's first write dates p by the record of its newest transaction, x: the record names q, not p, so p is idle from then; and judges p's copy: q is past its record without x, so q counted it and p's copy is late. q holds nothing: idle from then. Two hours on, c's pass retires q (no transaction to record) and p with its late copy left out (RetireLateAt, 6.10: p's retired total 0), putting no record for x, whose record names q. The value counts x once",
				Options: opts(1, 10, 10), Ledgers: dvLedgersABC, InitialSiblings: []dvSibling{{Value: hex.EncodeToString(b), State: st}},
				Steps: []dvStep{
					dvRecFaults(dvCredit("c", "y", 1), "x", dvSeed(rec)),
					dvAtClock(dvCredit("c", "z", 1), later),
					dvAtClock(dvLedgerOp("value", "c"), later),
				}}
		}(),
		func() dvVector {
			// p's entry holds x, a copy that landed late (q applied x
			// first, folded and forgot it), and w, p's own newer credit.
			st := &dvState{P: []dvEntry{
				{Actor: "p", Seq: "2", History: []dvTxn{{"x", 5}, {"w", 3}}, Folded: []dvTxn{}},
				{Actor: "q", Seq: "3", Total: 5, Forgot: 1, History: []dvTxn{}, Folded: []dvTxn{}},
			}, N: []dvEntry{}, Value: 13}
			b := must(dvEncState(st))
			recX := must(ledger.Record{Txn: "x", Amount: 5, Writer: "q", At: dvT0, Version: 1}.MarshalBinary())
			recW := must(ledger.Record{Txn: "w", Amount: 3, Writer: "p", At: dvT0, Version: 2}.MarshalBinary())
			return dvVector{Name: "retire: an idle writer holding a late copy that is not its newest retires without it",
				Note:    "the key holds p's entry with x and w in its history (version 2) and q's entry past x (version 3, total 5: q applied x, recorded it at version 1, folded and forgot it), so x counts twice: p's copy landed late. c's first write dates p by the record of its newest credit, w (p's own): idle from then. Two hours on, p is due: c's pass reads the records of all its copies, w's and x's; x's names q, past it without x, so p's copy of x is late, though x is not its newest credit. p retires with that copy left out (retired total 3: w), and q, which holds nothing. The value counts x once. Judging only the newest would record x naming p and count x in p's retired total as q's does, for good",
				Options: opts(1, 10, 10), Ledgers: dvLedgersABC, InitialSiblings: []dvSibling{{Value: hex.EncodeToString(b), State: st}},
				Steps: []dvStep{
					dvRecFaults(dvCredit("c", "y", 1), "w", dvSeed(recW)),
					dvRecFaults(dvAtClock(dvCredit("c", "z", 1), later), "x", dvSeed(recX)),
					dvAtClock(dvLedgerOp("value", "c"), later),
				}}
		}(),
		func() dvVector {
			// p's entry holds x, a late copy it recorded; q counted x
			// first, folded and forgot it, and recorded it later.
			st := &dvState{P: []dvEntry{
				{Actor: "p", Seq: "1", History: []dvTxn{{"x", 5}}, Folded: []dvTxn{}},
				{Actor: "q", Seq: "3", Total: 5, Forgot: 1, History: []dvTxn{}, Folded: []dvTxn{}},
			}, N: []dvEntry{}, Value: 10}
			b := must(dvEncState(st))
			recP := must(ledger.Record{Txn: "x", Amount: 5, Writer: "p", At: dvT0.Add(-3 * time.Hour), Version: 1}.MarshalBinary())
			recQ := must(ledger.Record{Txn: "x", Amount: 5, Writer: "q", At: dvT0.Add(-30 * time.Minute), Version: 1}.MarshalBinary())
			return dvVector{Name: "retire: an actor is dated by its own records, not by another writer's",
				Note:    "the key holds p's entry with x in its history (version 1) and q's entry past x (version 3, total 5), so x counts twice: both recorded x, each before reading the other's record, which SPEC.md 6.11's Limit leaves counted twice. p's record of x was made at -3:00, q's at -0:30 (q's was owed). c's first write dates p by the records of its newest transaction that name p: -3:00, so p is idle (RetireAfter one hour) and c retires it at once, its copy counted (retired total 5: it is recorded). Dated by q's record as well, p would look active for another half hour. q holds nothing: idle from then, retired two hours on",
				Options: opts(1, 10, 10), Ledgers: dvLedgersABC, InitialSiblings: []dvSibling{{Value: hex.EncodeToString(b), State: st}},
				Steps: []dvStep{
					dvRecFaults(dvCredit("c", "y", 1), "x", dvSeed(recP, recQ)),
					dvLedgerOp("value", "c"),
					dvAtClock(dvCredit("c", "z", 1), later),
					dvAtClock(dvLedgerOp("value", "c"), later),
				}}
		}(),
		func() dvVector {
			// p's entry holds x; q's record of x (version 1) is seeded,
			// but q's entry is not in the key until the last credit.
			st := &dvState{P: []dvEntry{{Actor: "p", Seq: "1", History: []dvTxn{{"x", 5}}, Folded: []dvTxn{}}}, N: []dvEntry{}, Value: 5}
			b := must(dvEncState(st))
			q := &dvState{P: []dvEntry{{Actor: "q", Seq: "3", Total: 5, Forgot: 1, History: []dvTxn{}, Folded: []dvTxn{}}}, N: []dvEntry{}, Value: 5}
			qb := must(dvEncState(q))
			rec := must(ledger.Record{Txn: "x", Amount: 5, Writer: "q", At: dvT0, Version: 1}.MarshalBinary())
			return dvVector{Name: "retire: an idle writer whose copy is judged against a stale read is not retired",
				Note:    "the key holds p's entry with x in its history (version 1); x's record names q at version 1, but no read shows q's entry: the reads are older than the record. c's first write dates p (idle from then: the record names q) and cannot judge p's copy (stale: q below its record's version), so p is not checked; two hours on, c's pass reads x's record again, still stale: p is not retired (retiring it could make a late copy count twice for good). Then q's entry (version 3, total 5: it counted x and forgot it) lands under the key before c's next fetch: p's copy is judged late, and p retires at that pass with it left out (6.10 RetireLateAt): the value counts x once",
				Options: opts(1, 10, 10), Ledgers: dvLedgersABC, InitialSiblings: []dvSibling{{Value: hex.EncodeToString(b), State: st}},
				Steps: []dvStep{
					dvRecFaults(dvCredit("c", "y", 1), "x", dvSeed(rec)),
					dvAtClock(dvCredit("c", "z", 1), later),
					dvAtClock(dvCredit("c", "w", 1, dvSeed(qb)), 2*later),
					dvAtClock(dvLedgerOp("value", "c"), 2*later),
				}}
		}(),
		{Name: "retire: writers holding one id as a credit and a debit are not retired",
			Note:    "a credits x; its put lands but the put of x's record is refused (ambiguous_write, the record kept unwritten). b, reading stale (before a's put) and finding no record, debits x: the two siblings hold x in both halves, counted once, by a's credit (the smaller id). Two hours later c's first write finds b idle (dated by its record of x) and a not yet (no record names it: idle from then); two hours on, c's pass finds both idle and records their transactions (x with writer a, amount 5; b's own record, writer b, amount -5, is live, so not put again), but Retire declines each and RetireAll declines both, since x is held in both halves: the put leaves both entries live",
			Options: opts(1, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvRecFaults(dvCredit("a", "x", 5), "x", "", "", "refuse"),
				dvDebit("b", "x", 5, "stale"),
				dvAtClock(dvCredit("c", "y", 1), later),
				dvAtClock(dvCredit("c", "z", 1), 2*later),
				dvAtClock(dvLedgerOp("value", "c"), 2*later),
			}},
	}
}

// dvLedgerScheduleVectors are the vectors of SPEC.md 6.9 RetireAfter's
// schedule: the idle threshold, a pass every RetireAfter/8 (or when an
// actor seen in the last pass reaches RetireAfter), at most 16 record
// lookups and 16 retirements per write, the pass starting at the actor of
// index FNV-1a-32(writer) mod (number of live actors). RetireAfter is one
// hour.
func dvLedgerScheduleVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	m := time.Minute
	// seventeen returns the initial sibling of a key holding actors
	// p01..p17, p(i) holding in its history the transactions hist(i), each
	// of amount 1, and value distinct transactions.
	seventeen := func(value dvInt, hist func(i int) []string) dvSibling {
		st := &dvState{P: []dvEntry{}, N: []dvEntry{}, Value: value}
		for i := 1; i <= 17; i++ {
			e := dvEntry{Actor: fmt.Sprintf("p%02d", i), Folded: []dvTxn{}}
			for _, x := range hist(i) {
				e.History = append(e.History, dvTxn{x, 1})
			}
			e.Seq = strconv.Itoa(len(e.History))
			st.P = append(st.P, e)
		}
		b := must(dvEncState(st))
		return dvSibling{Value: hex.EncodeToString(b), State: st}
	}
	x := func(i int) string { return fmt.Sprintf("x%02d", i) }
	// p01..p17, p(i) holding x(i), and b's entry (b~bbbbbbbb) holding
	// x01..x17, whose copies count (the smallest id).
	shared := func() dvSibling {
		own := seventeen(17, func(i int) []string { return []string{x(i)} })
		b := dvEntry{Actor: "b~bbbbbbbb", Seq: "17", Folded: []dvTxn{}}
		for i := 1; i <= 17; i++ {
			b.History = append(b.History, dvTxn{x(i), 1})
		}
		own.State.P = append([]dvEntry{b}, own.State.P...)
		enc := must(dvEncState(own.State))
		own.Value = hex.EncodeToString(enc)
		return own
	}()
	// All hold one transaction, x, which has no record: a pass looks up x's
	// record once per actor it dates, whichever actors its start (FNV-1a of
	// the ledger's random incarnation) makes it visit first.
	idle := seventeen(1, func(int) []string { return []string{"x"} })
	// Each holds a transaction of its own.
	own := seventeen(17, func(i int) []string { return []string{x(i)} })
	// A chain: p(i) holds x(i) and x(i+1), so each shares a transaction
	// with the next.
	chain := seventeen(18, func(i int) []string { return []string{x(i), x(i + 1)} })
	return []dvVector{
		{Name: "retire: dated by its newest credit and its newest debit",
			Note:    "a debits t1 at 0:00 and credits t2 at 0:50, then stops. b's first write, at 1:10, dates a by the records of both (its newest credit and newest debit) and takes the later, 0:50: idle 20 minutes, not retired. Dated by the debit alone, a would look idle since 0:00 and be retired 20 minutes after its last write",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvDebit("a", "t1", 5),
				dvAtClock(dvCredit("a", "t2", 7), 50*m),
				dvAtClock(dvCredit("b", "t3", 1), 70*m),
				dvAtClock(dvLedgerOp("value", "b"), 70*m),
			}},
		{Name: "retire: an actor idle exactly RetireAfter is retired, not before",
			Note:    "a credits t1 at 0:00 and stops. b's first write, at 0:55, dates a by t1's record (0:00): idle 55 minutes, not retired; the next pass is due at 1:00, when a would have been unchanged for RetireAfter, before 0:55 + RetireAfter/8. b's write at 1:00 makes that pass and retires a, idle exactly RetireAfter",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvAtClock(dvCredit("b", "t2", 7), 55*m),
				dvAtClock(dvCredit("b", "t3", 1), 60*m),
				dvAtClock(dvLedgerOp("value", "b"), 60*m),
			}},
		{Name: "retire: a pass every RetireAfter/8",
			Note:    "a credits t1 and b t2 at 0:00 (b's first write makes a pass: it dates a by t1's record); c credits t3 at 0:01. b's write at 0:07 makes no pass (the last was at 0:00, the next is due at 0:07:30), so it does not look c up; its write at 0:07:30 makes one and fetches the record of c's newest transaction to date it",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("b", "t2", 7),
				dvAtClock(dvCredit("c", "t3", 1), m),
				dvAtClock(dvCredit("b", "t4", 2), 7*m),
				dvAtClock(dvCredit("b", "t5", 3), 7*m+30*time.Second),
				dvAtClock(dvLedgerOp("value", "b"), 7*m+30*time.Second),
			}},
		func() dvVector {
			// p01..p17, each with a total and no transaction left.
			st := &dvState{P: []dvEntry{}, N: []dvEntry{}, Value: 17}
			for i := 1; i <= 17; i++ {
				st.P = append(st.P, dvEntry{Actor: fmt.Sprintf("p%02d", i), Seq: "1", Total: 1, Forgot: 1, History: []dvTxn{}, Folded: []dvTxn{}})
			}
			enc := must(dvEncState(st))
			return dvVector{Name: "retire: at most 16 actors recorded per write",
				Note:    "the key holds p01..p17, each with a total and no transaction (nothing to read or record). b's first write, at 0:00, sees them all: idle from now. At 1:00 all are due and checked (no record to read), and b's write records (nothing to put) and retires the first 16 it visits, from the FNV-1a start (pass_start_mod 18); its next write, at 1:00 still, retires the last one",
				Options: opts(2, 10, 10), Ledgers: []dvLedger{{Actor: "b", Writer: "b~bbbbbbbb", PassStartMod: 18}},
				InitialSiblings: []dvSibling{{Value: hex.EncodeToString(enc), State: st}},
				Steps: []dvStep{
					dvCredit("b", "t1", 1),
					dvAtClock(dvCredit("b", "t2", 1), 60*m),
					dvAtClock(dvCredit("b", "t3", 1), 60*m),
					dvAtClock(dvLedgerOp("value", "b"), 60*m),
				}}
		}(),
		{Name: "retire: at most 16 retirements per write, from the FNV-1a start",
			Note:    "the key holds p01..p17, each with one transaction (x01..x17) and no record. b's writer id b~bbbbbbbb has FNV-1a-32 hash 0x" + fmt.Sprintf("%08x", dvFNV("b~bbbbbbbb")) + ", 3 modulo the 18 live actors (b's own entry included): b's passes visit the actors from index 3 (p03) on, in actor order, wrapping round (pass_start_mod 18: the port's random incarnation must give the same start). b's first write, at 0:00, looks up the records of the first 16 it visits (p03..p17, p01: none, idle from now) and leaves p02 undated, so its write at 0:01 passes again and looks up p02. At 1:00 all 17 have been idle for RetireAfter: b's write reads the record of each again (the check for a late copy), within the 16 fetches, records and retires the first 16 of its pass and leaves p02, so its next write passes again and retires p02",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{{Actor: "b", Writer: "b~bbbbbbbb", PassStartMod: 18}},
			InitialSiblings: []dvSibling{own},
			Steps: []dvStep{
				dvCredit("b", "t1", 1),
				dvAtClock(dvCredit("b", "t2", 1), m),
				dvAtClock(dvCredit("b", "t3", 1), 60*m),
				dvAtClock(dvCredit("b", "t4", 1), 60*m),
				dvAtClock(dvLedgerOp("value", "b"), 60*m),
			}},
		func() dvVector {
			o := opts(2, 10, 10)
			o.MaxActors = 17
			return dvVector{Name: "retire: a full account's pass counts the new writer for its start",
				Note:    "max_actors 17: the key holds p01..p17, each with one transaction and no record, so b's entry finds no room. b's credit at 0:00 fails too_large, but its pass runs at once, its order counting b's entry among the live actors though it is not yet in the state: from index 3 modulo 18 (pass_start_mod 18, as in \"at most 16 retirements per write\"), so it dates p03..p17 and p01 and leaves p02 undated; nothing is put. Its credit at 0:01 passes again (an actor was left undated), looks up p02 and fails too_large too. At 1:00 its pass records and retires the first 16 of its order, leaving p02, and the credit is applied in that write",
				Options: o, Ledgers: []dvLedger{{Actor: "b", Writer: "b~bbbbbbbb", PassStartMod: 18}},
				InitialSiblings: []dvSibling{own},
				Steps: []dvStep{
					dvCredit("b", "t1", 1),
					dvAtClock(dvCredit("b", "t2", 1), m),
					dvAtClock(dvCredit("b", "t3", 1), 60*m),
					dvAtClock(dvLedgerOp("value", "b"), 60*m),
				}}
		}(),
		{Name: "retire: idle writers linked by shared transactions retire together, however many",
			Note:    "the key holds p01..p17 in a chain: p(i) holds x(i) and x(i+1), no record. b's passes start at p03 (as in the vector before; pass_start_mod 18). b's writes at 0:00 and 0:01 date all 17 (idle from 0:00). At 1:00 each is due, and a pass reads the records of both its copies to find a late one, at most 16 record reads a write: b's first write at 1:00 checks and records 8 of them, and each declines to retire alone, since its neighbour holds one of its transactions; the group linked to them is all 17, not all recorded yet, so none retires and the next write passes again. The second records 8 more; the third records the last one (the others are recorded at their versions already) and retires all 17 with one RetireAll: more than 16 in one write, since a group retires all or none. Each shared transaction counts once, by its owner, the smaller id",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{{Actor: "b", Writer: "b~bbbbbbbb", PassStartMod: 18}},
			InitialSiblings: []dvSibling{chain},
			Steps: []dvStep{
				dvCredit("b", "t1", 1),
				dvAtClock(dvCredit("b", "t2", 1), m),
				dvAtClock(dvCredit("b", "t3", 1), 60*m),
				dvAtClock(dvCredit("b", "t4", 1), 60*m),
				dvAtClock(dvCredit("b", "t5", 1), 60*m),
				dvAtClock(dvCredit("b", "t6", 1), 60*m),
				dvAtClock(dvLedgerOp("value", "b"), 60*m),
			}},
		{Name: "retire: a pass when the clock went back",
			Note:    "a credits t1 at 0:00. b's first write, at 0:05, makes a pass (the first write of a ledger does): it dates a by t1's record; the next pass is due at 0:12:30. c credits t3 at 0:06. b's clock then reads 0:04, before its last pass: its write makes a pass although the next is not due by the clock, and fetches the record of c's newest transaction to date it",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvAtClock(dvCredit("b", "t2", 7), 5*m),
				dvAtClock(dvCredit("c", "t3", 1), 6*m),
				dvAtClock(dvCredit("b", "t4", 2), 4*m),
				dvAtClock(dvLedgerOp("value", "b"), 4*m),
			}},
		{Name: "retire: idle from the first pass that saw its version",
			Note:    "a credits t1 at 0:00; b's first write, at 0:00, dates a by t1's record. a credits t3 at 0:10 (its version changes) and stops. b's pass at 0:20 sees a's new version: a is idle from 0:20, the pass that saw the version, not from 0:10, the time of t3's record (no record is fetched for a changed actor). b's pass at 1:15 leaves a (idle 55 minutes); its pass at 1:20, when a has been unchanged for RetireAfter since 0:20, retires it",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:2], Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("b", "t2", 7),
				dvAtClock(dvCredit("a", "t3", 1), 10*m),
				dvAtClock(dvCredit("b", "t4", 2), 20*m),
				dvAtClock(dvCredit("b", "t5", 3), 75*m),
				dvAtClock(dvCredit("b", "t6", 4), 80*m),
				dvAtClock(dvLedgerOp("value", "b"), 80*m),
			}},
		{Name: "retire: actors recorded by earlier writes retire more than 16 at once",
			Note:    "the key holds p01..p17, p(i) holding x(i), and b's own entry (b~bbbbbbbb, the smallest id: its copies count) holding x01..x17 in its history; history length 30. b's writes at 0:00 and 0:01 date all 17 (x(i) has no record: idle from then). At 1:01 b's pass records the transactions of 16 of them and its next write the 17th's (16 actors' records per write); each Retire declines, since b's copy of its transaction counts and is not folded. b then writes 27 credits at 1:02, without a pass, which fold x01..x17 in its entry. Its pass at 1:10 retires all 17 alone (their copies leave without counting, as b's are folded): the 16 bound the actors a write records, not its retirements, and these were recorded by earlier writes",
			Options: opts(2, 30, 10), Ledgers: []dvLedger{{Actor: "b", Writer: "b~bbbbbbbb", PassStartMod: 18}},
			InitialSiblings: []dvSibling{shared},
			Steps: func() []dvStep {
				steps := []dvStep{
					dvCredit("b", "t01", 1),
					dvAtClock(dvCredit("b", "t02", 1), m),
					dvAtClock(dvCredit("b", "t03", 1), 61*m),
					dvAtClock(dvCredit("b", "t04", 1), 61*m),
				}
				for i := 5; i <= 31; i++ {
					steps = append(steps, dvAtClock(dvCredit("b", fmt.Sprintf("t%02d", i), 1), 62*m))
				}
				return append(steps, dvAtClock(dvCredit("b", "t32", 1), 70*m), dvAtClock(dvLedgerOp("value", "b"), 70*m))
			}()},
		{Name: "retire: at most 16 record lookups per write",
			Note:    "the key holds p01..p17, which all hold x, a transaction without a record. b's first write, at 0:00, dates at most 16 of them (16 fetches of x's record, none found: idle from now), and the one left undated makes its next write, at 0:01, pass again and fetch x's record once more. Which actor waits depends on where the pass starts (FNV-1a of the writer, which is random), the calls do not",
			Options: opts(2, 10, 10), Ledgers: dvLedgersABC[1:2],
			InitialSiblings: []dvSibling{idle},
			Steps: []dvStep{
				dvCredit("b", "t1", 1),
				dvAtClock(dvCredit("b", "t2", 1), m),
				dvAtClock(dvCredit("b", "t3", 1), 2*m),
				dvAtClock(dvLedgerOp("value", "b"), 2*m),
			}},
	}
}

// ---------------------------------------------------------------------------

var dvT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func dvAt(base time.Time, d time.Duration) string { return base.Add(d).Format(time.RFC3339Nano) }

func dvTallyStep(op, mutator string, values []int64, faults ...string) dvStep {
	s := dvStep{Op: op, Mutator: mutator}
	for _, v := range values {
		s.Values = append(s.Values, dvInt(v))
	}
	return dvStepOf(s, faults...)
}

func dvClock(s dvStep, at string) dvStep { s.Clock = at; return s }

func dvGenTally() dvFile {
	opts := func(resends int) dvOptions {
		return dvOptions{Key: "hits", Kind: "sum", LifetimeNS: dvI(int64(time.Hour)), MarginNS: dvI(int64(10 * time.Minute)),
			MaxSkewNS: dvI(int64(time.Minute)), GraceNS: dvI(int64(3 * time.Minute)), Resends: dvN(resends), MaxRows: 1000}
	}
	st, up := dvTallyStep, func(m string, vals ...int64) dvStep { return dvTallyStep("update", m, vals) }
	day := func(n int) time.Time { return dvT0.AddDate(0, 0, n) }
	// A tally row folded through t0+1h holding 100, and a shard that
	// expired at t0+1h (already inside it): rows a GC's view may show
	// when its deletes are not visible.
	folded := dvI(day(7).Add(time.Hour).UnixMicro())
	initial := []dvRow{
		{Is: &dvDesc{TallyRow: true, FoldedThrough: folded, Sum: dvI(100)}},
		{Is: &dvDesc{Mutator: "m0", ExpiresAt: folded, Sum: dvI(100)}},
	}
	for i := range initial {
		k, v, err := dvEncDesc("tally", initial[i].Is)
		if err != nil {
			panic(err)
		}
		initial[i].Key, initial[i].Value = hex.EncodeToString(k), hex.EncodeToString(v)
	}
	vs := []dvVector{
		{Name: "flush writes the mutator's whole state", Note: "stage 3 and 4, flush: one put of the shard row s<mutator> holding 7 at write timestamp now (µs); a second update at the same clock reading writes 12 at the next microsecond; a flush with nothing staged makes no call",
			Options: opts(2), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(0), 0)),
				st("stage", "m1", []int64{3, 4}),
				st("flush", "m1", nil),
				up("m1", 5),
				st("flush", "m1", nil),
				dvClock(st("read", "", nil), dvAt(day(0), time.Second)),
			}},
		{Name: "an ambiguous flush is resent with the same bytes and timestamp", Note: "the first attempt's answer is ambiguous (the write was lost): the same put is sent again at the same write timestamp and acknowledged; the update counts once",
			Options: opts(2), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(1), 0)),
				st("update", "m1", []int64{5}, "ambiguous_lost"),
				st("read", "", nil),
			}},
		{Name: "a flush that stays unknown, then Retry", Note: "resends 1: both attempts are ambiguous (the first landed). The mutator holds the write unresolved and refuses updates; a read already sees it. Retry sends the same bytes at the same timestamp; the next update writes at a later timestamp. The update counts once",
			Options: opts(1), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(2), 0)),
				st("update", "m1", []int64{5}, "ambiguous_landed", "ambiguous_lost"),
				st("stage", "m1", []int64{1}),
				st("read", "", nil),
				dvClock(st("retry", "m1", nil), dvAt(day(2), time.Second)),
				up("m1", 2),
				st("read", "", nil),
			}},
		{Name: "Abandon overwrites an unknown write with the acknowledged state", Note: "5 is acknowledged; the update of 4 stays unknown although it landed (a read shows 9). Abandon writes the acknowledged shard (5) at a greater timestamp: the 4 is then not counted, and the mutator takes updates again",
			Options: opts(1), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(3), 0)),
				up("m1", 5),
				st("update", "m1", []int64{4}, "ambiguous_landed", "ambiguous_landed"),
				st("read", "", nil),
				st("abandon", "m1", nil),
				st("read", "", nil),
				up("m1", 1),
				st("read", "", nil),
			}},
		{Name: "a refused flush discards the staged updates", Note: "resends 0: the only attempt is refused, so the staged 5 is discarded and not counted; the next update writes 2, not 7",
			Options: opts(0), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(4), 0)),
				st("update", "m1", []int64{5}, "refuse"),
				st("read", "", nil),
				up("m1", 2),
				st("read", "", nil),
			}},
		{Name: "a refused attempt is resent", Note: "resends 2: the update of 5 is refused, then resent (same bytes, same ts) and written: counted once. The update of 2 is ambiguous (lost), then refused twice: it fails ambiguous_write and unavailable (the last attempt was refused), and the write is pending (unresolved) until a retry lands it",
			Options: opts(2), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(4), time.Hour)),
				st("update", "m1", []int64{5}, "refuse", ""),
				st("read", "", nil),
				st("update", "m1", []int64{2}, "ambiguous_lost", "refuse", "refuse"),
				st("retry", "m1", nil),
				st("read", "", nil),
			}},
		{Name: "a failed retry is ambiguous_write with the send's kinds", Note: "resends 2, margin 1µs: the update of 3 is lost three times (ambiguous_write, pending). A retry refused three times fails ambiguous_write and unavailable (the last attempt was refused; an earlier one may have landed), still pending. A retry refused once, with the clock then at expires_at, is not resent: ambiguous_write, expired and unavailable. A last retry makes no call: ambiguous_write and expired. A read shows 0",
			Options: func() dvOptions { o := opts(2); o.MarginNS = dvI(int64(time.Microsecond)); return o }(), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(6), 0)),
				dvClock(st("update", "m1", []int64{3}, "ambiguous_lost", "ambiguous_lost", "ambiguous_lost"), dvAt(day(6), time.Hour-3*time.Microsecond)),
				st("retry", "m1", nil, "refuse", "refuse", "refuse"),
				st("retry", "m1", nil, "refuse@"+dvAt(day(6), time.Hour)),
				st("retry", "m1", nil),
				st("read", "", nil),
			}},
		{Name: "a retry after a failed abandon writes at a fresh timestamp", Note: "resends 0: the update of 3 is lost (pending). Abandon writes the empty shard, which lands, but its answer is lost: still pending. Retry's bytes (the pending write) were not the last sent, so it writes them at a fresh timestamp, above Abandon's: the 3 counts once. Resent at the last timestamp instead, it would tie with Abandon's write",
			Options: opts(0), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(7), 0)),
				st("update", "m1", []int64{3}, "ambiguous_lost"),
				st("abandon", "m1", nil, "ambiguous_landed"),
				st("read", "", nil),
				st("retry", "m1", nil),
				st("read", "", nil),
			}},
		{Name: "a mutator refuses updates within Margin of its expiry", Note: "lifetime 1h, margin 10m: an update at 49m59s is written; at 50m the mutator is dead (expired), its staged updates are discarded, and nothing is written",
			Options: opts(2), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(5), 0)),
				dvClock(up("m1", 1), dvAt(day(5), 49*time.Minute+59*time.Second)),
				dvClock(up("m1", 2), dvAt(day(5), 50*time.Minute)),
				st("flush", "m1", nil),
				st("read", "", nil),
			}},
		{Name: "an unknown write cannot be settled after expiry", Note: "both attempts are ambiguous; once the clock reaches expires_at Retry and Abandon make no call and answer ambiguous_write and expired",
			Options: opts(1), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(6), 0)),
				st("update", "m1", []int64{5}, "ambiguous_lost", "ambiguous_lost"),
				dvClock(st("retry", "m1", nil), dvAt(day(6), time.Hour)),
				st("abandon", "m1", nil),
			}},
		{Name: "GC folds final shards into the tally", Note: "grace 3m. m1 expires at +1h, m2 at +1h30m. At +1h3m m1 is not yet final (expires_at < now - grace is strict): GC reads and writes nothing. At +1h3m1s GC folds m1 (expires_at < now - grace): one batch at write timestamp m1's expires_at, the tally put then the delete; m2 stays live. A second GC then has nothing final and writes nothing. At +1h33m1s GC folds m2 on top of the tally. The value never changes",
			Options: opts(2), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(8), 0)),
				up("m1", 5),
				dvClock(st("new_mutator", "m2", nil), dvAt(day(8), 30*time.Minute)),
				up("m2", 7),
				dvClock(st("gc", "", nil), dvAt(day(8), time.Hour+3*time.Minute)),
				dvClock(st("gc", "", nil), dvAt(day(8), time.Hour+3*time.Minute+time.Second)),
				st("read", "", nil),
				st("gc", "", nil),
				dvClock(st("gc", "", nil), dvAt(day(8), time.Hour+33*time.Minute+time.Second)),
				st("read_complete", "", nil),
			}},
		{Name: "GC leaves the shards whose tally would pass int64", Note: "grace 3m. m1 (expires at +1h) and m2 (+1h30m) each add 2^63 − 1: a read gives 2^64 − 2 exactly, 2^63 − 1 where an int64 is asked for (SPEC.md 7.1). At +1h33m1s both are final, but the tally takes m1 alone (7.4): m2 stays live and the value does not change. m3 adds −(2^63 − 1); once it is final, GC folds m2 and m3 on top of the tally, which holds 2^63 − 1",
			Options: opts(2), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(10), 0)),
				up("m1", math.MaxInt64),
				dvClock(st("new_mutator", "m2", nil), dvAt(day(10), 30*time.Minute)),
				up("m2", math.MaxInt64),
				st("read", "", nil),
				dvClock(st("gc", "", nil), dvAt(day(10), time.Hour+33*time.Minute+time.Second)),
				st("read_complete", "", nil),
				dvClock(st("new_mutator", "m3", nil), dvAt(day(10), time.Hour+34*time.Minute)),
				up("m3", -math.MaxInt64),
				dvClock(st("gc", "", nil), dvAt(day(10), 2*time.Hour+38*time.Minute)),
				st("read_complete", "", nil),
			}},
		{Name: "a shard inside the tally is skipped and deleted again", Note: "the partition holds a tally folded through +1h (100) and m0's shard, which expired at +1h and is inside it. A read skips m0 (counted once, 100 + 7); GC deletes it again without combining it, and folds m1",
			Options: opts(2), InitialRows: initial, Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(7), time.Hour+10*time.Minute)),
				up("m1", 7),
				st("read", "", nil),
				dvClock(st("gc", "", nil), dvAt(day(7), 3*time.Hour)),
				st("read", "", nil),
			}},
		{Name: "a tally folded through the future is corrupt", Note: "the same partition read at +59m59.999999s, before the tally's folded_through (+1h): no GC writes that, and read it would hide m1's shard (+7), so the read and GC fail corrupt and GC writes nothing. A mutator never reads: its update is written. At +1h the same rows read 107, and a GC at +1h13m1s folds m1",
			Options: opts(2), InitialRows: initial, Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(7), 10*time.Minute)),
				up("m1", 7),
				dvClock(st("read", "", nil), dvAt(day(7), time.Hour-time.Microsecond)),
				st("read_complete", "", nil),
				st("gc", "", nil),
				dvClock(st("read", "", nil), dvAt(day(7), time.Hour)),
				dvClock(st("gc", "", nil), dvAt(day(7), time.Hour+13*time.Minute+time.Second)),
				st("read", "", nil),
			}},
		{Name: "a flush whose write timestamp reaches expires_at is expired", Note: "margin 1µs, lifetime 1h: at expires_at − 2µs the mutator may still write, and ts = max(last_ts + 1, now) climbs by one per flush. The flush of 1 writes at expires_at − 2µs, the flush of 2 at expires_at − 1µs, just before; the flush of 4 would write at expires_at: it is expired, makes no call and discards the staged 4, and the mutator is dead. A read shows 3",
			Options: func() dvOptions { o := opts(2); o.MarginNS = dvI(int64(time.Microsecond)); return o }(), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(9), 0)),
				dvClock(st("stage", "m1", []int64{1}), dvAt(day(9), time.Hour-2*time.Microsecond)),
				st("flush", "m1", nil),
				st("stage", "m1", []int64{2}),
				st("flush", "m1", nil),
				st("stage", "m1", []int64{4}),
				st("flush", "m1", nil),
				st("stage", "m1", []int64{8}),
				st("read", "", nil),
			}},
		{Name: "a send stops resending at expires_at", Note: "margin 1µs, lifetime 1h, 2 resends: the flush of 1 writes at expires_at − 2µs and is refused, and the clock then reads expires_at (clock_after): the flush is not resent, fails unavailable and expired, discards the staged 1, and the mutator is dead. m2's flush of 4 is ambiguous (lost) with the clock then at its expires_at: not resent, it fails ambiguous_write and expired and stays pending, and a retry cannot resolve it (ambiguous_write and expired, no call). A read shows 0",
			Options: func() dvOptions { o := opts(2); o.MarginNS = dvI(int64(time.Microsecond)); return o }(), Steps: []dvStep{
				dvClock(st("new_mutator", "m1", nil), dvAt(day(9), 0)),
				dvClock(st("stage", "m1", []int64{1}), dvAt(day(9), time.Hour-2*time.Microsecond)),
				st("flush", "m1", nil, "refuse@"+dvAt(day(9), time.Hour)),
				st("stage", "m1", []int64{2}),
				st("read", "", nil),
				dvClock(st("new_mutator", "m2", nil), dvAt(day(9), 2*time.Hour)),
				dvClock(st("stage", "m2", []int64{4}), dvAt(day(9), 3*time.Hour-2*time.Microsecond)),
				st("flush", "m2", nil, "ambiguous_lost@"+dvAt(day(9), 3*time.Hour)),
				st("retry", "m2", nil),
				st("read", "", nil),
			}},
	}
	return dvFile{Driver: "tally", Note: "SPEC.md 7.4 and 11.1: tally mutators and GC against a scripted partition store", Vectors: dvGenerate("tally", vs),
		OptionChecks: dvTallyOptionChecks()}
}

// ---------------------------------------------------------------------------

// dvTimeID is the version 1 UUID at time at with clock sequence 0x0101 and
// node n.
// dvSharedIDRows is the partition of "step 5: an N and an S row of one
// update id": N t1 (5), a valid unsettled S u2 (3) covering N t3 (3)
// through its tombstone, and an N row of 7 whose update id is u2.
func dvSharedIDRows(at time.Time) []dvRow {
	amountKey := func(a int64) string {
		return fmt.Sprintf("00000000-0000-0000-%04x-%012x", uint64(a)>>48, uint64(a)&(1<<48-1))
	}
	t1, u2, t3 := dvTimeID(at.Add(-2*time.Second), 1), dvUUID(timeid.FromParts(at.Add(-time.Second), 0, 2)), dvTimeID(at.Add(-3*time.Second), 3)
	rows := []dvRow{
		{Is: &dvDesc{UpdateID: t1, Kind: "N", Version: amountKey(5), Amount: dvI(5)}},
		{Is: &dvDesc{UpdateID: t3, Kind: "N", Version: amountKey(3), Amount: dvI(3)}},
		{Is: &dvDesc{UpdateID: u2, Kind: "N", Version: amountKey(7), Amount: dvI(7)}},
		{Is: &dvDesc{UpdateID: u2, Kind: "S", Version: u2, Amount: dvI(3), Covers: dvI(1), Settled: dvB(false)}},
		{Is: &dvDesc{UpdateID: t3, Kind: "T", Version: u2, Amount: dvI(3), Target: "N"}},
	}
	for i := range rows {
		k, v, err := dvEncDesc("balance", rows[i].Is)
		if err != nil {
			panic(err)
		}
		rows[i].Key, rows[i].Value = hex.EncodeToString(k), hex.EncodeToString(v)
	}
	return rows
}

func dvTimeID(at time.Time, n uint64) string { return dvUUID(timeid.FromParts(at, 0x0101, n)) }

func dvAdd(key string, at time.Time, node uint64, amount int64, faults ...string) dvStep {
	return dvStepOf(dvStep{Op: "add", Key: key, ID: dvTimeID(at, node), Amount: dvI(amount)}, faults...)
}

func dvKeyOp(op, key string, faults ...string) dvStep {
	return dvStepOf(dvStep{Op: op, Key: key}, faults...)
}

func dvGenDeltalog() dvFile {
	opts := dvOptions{Key: "views", WindowNS: dvI(int64(10 * time.Minute)), FutureSkewNS: dvI(int64(5 * time.Second)),
		SafetyMarginNS: dvI(int64(time.Minute)), MaxScanNS: dvI(int64(10 * time.Second)), CompactGraceNS: dvI(int64(2 * time.Minute))}
	const k = "views"
	base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	day := func(n int) time.Time { return base.AddDate(0, 0, n) }
	at := func(n int, d time.Duration) string { return dvAt(day(n), d) }
	// The cells of the merge vectors: a at -30m (1), b at -20m (2), c at
	// -15m (3), x at -10m30s (8), d at -5m (4), each added at its own time.
	// A merge at 0 has cutoff -11m: x is inside the window plus the safety
	// margin and stays out of the merge cell.
	mergeSetup := func(n int) []dvStep {
		t := day(n)
		return []dvStep{
			dvClock(dvAdd(k, t.Add(-30*time.Minute), 0xa, 1), at(n, -30*time.Minute)),
			dvClock(dvAdd(k, t.Add(-20*time.Minute), 0xb, 2), at(n, -20*time.Minute)),
			dvClock(dvAdd(k, t.Add(-15*time.Minute), 0xc, 3), at(n, -15*time.Minute)),
			dvClock(dvAdd(k, t.Add(-10*time.Minute-30*time.Second), 0xf, 8), at(n, -10*time.Minute-30*time.Second)),
			dvClock(dvAdd(k, t.Add(-5*time.Minute), 0xd, 4), at(n, -5*time.Minute)),
		}
	}
	vs := []dvVector{
		{Name: "add writes one cell; a resend rewrites it", Note: "window 10m, future skew 5s, both bounds accepted. Each add is one put of the regular cell at write timestamp max(now, last + 1) in µs; a resend of the same id and delta writes the same row again; ids outside the window are refused before any call",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(0).Add(-time.Minute), 1, 5), at(0, 0)),
				dvAdd(k, day(0).Add(-time.Minute), 1, 5),
				dvAdd(k, day(0).Add(-10*time.Minute-time.Nanosecond*100), 2, 9),
				dvAdd(k, day(0).Add(-10*time.Minute), 3, 1),
				dvAdd(k, day(0).Add(5*time.Second+100*time.Nanosecond), 4, 9),
				dvAdd(k, day(0).Add(5*time.Second), 5, 2),
				dvKeyOp("read", k),
			}},
		{Name: "an ambiguous add, resent, counts once", Note: "add makes one attempt: an ambiguous answer is the caller's to resend. Resending the same id and delta rewrites the same cell whether the first write landed or not; a refused add did not land",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(1), 1, 3, "ambiguous_landed"), at(1, time.Second)),
				dvAdd(k, day(1), 1, 3),
				dvAdd(k, day(1).Add(time.Millisecond), 2, 4, "ambiguous_lost"),
				dvKeyOp("read", k),
				dvAdd(k, day(1).Add(time.Millisecond), 2, 4),
				dvAdd(k, day(1).Add(2*time.Millisecond), 3, 1, "refuse"),
				dvKeyOp("read", k),
			}},
		{Name: "merge cells", Note: "cells a (1), b (2), c (3), x (8), d (4) at -30m, -20m, -15m, -10m30s, -5m. Merge at 0 takes cutoff now - window - safety margin = -11m, scans from the first cell before it (c; no merge cell yet), and writes a merge cell at c, the newest cell before it, holding a + b + c with their stats and written = now (ns); x, inside the safety margin, stays out. A read then stops at that merge cell. A second merge has nothing new to merge (the newest old cell is the merge cell). At +20m, with e (5) added at +1m, a merge covers e, d, x and the first merge cell, and a read reads only it",
			Options: opts, Steps: append(mergeSetup(2),
				dvClock(dvKeyOp("read", k), at(2, 0)),
				dvKeyOp("merge", k),
				dvKeyOp("read", k),
				dvKeyOp("merge", k),
				dvClock(dvAdd(k, day(2).Add(time.Minute), 0xe, 5), at(2, time.Minute)),
				dvClock(dvKeyOp("merge", k), at(2, 20*time.Minute)),
				dvKeyOp("read", k),
			)},
		{Name: "compaction waits CompactGrace, then deletes what a merge cell covers", Note: "compact grace 2m. The merge cell at c is written at 0. At +1m59s compact scans from the first cell before now - compact grace - window - safety margin and finds no merge cell old enough: nothing is deleted. At +2m it deletes, with one range delete, every row from the regular cell at c's id to the end of the partition. The value is unchanged. A compaction whose delete is ambiguous (lost) is simply run again",
			Options: opts, Steps: append(mergeSetup(3),
				dvClock(dvKeyOp("merge", k), at(3, 0)),
				dvClock(dvKeyOp("compact", k), at(3, time.Minute+59*time.Second)),
				dvClock(dvKeyOp("compact", k, "", "ambiguous_lost"), at(3, 2*time.Minute)),
				dvKeyOp("read", k),
				dvKeyOp("compact", k),
				dvKeyOp("read", k),
				dvKeyOp("compact", k),
			)},
		{Name: "compact looks past a younger merge cell", Note: "merge cells at c (written at 0) and at e (written at +20m). At +21m the merge cell at e is younger than compact grace, so compact scans past it to the one at c and deletes below that",
			Options: opts, Steps: append(mergeSetup(4),
				dvClock(dvKeyOp("merge", k), at(4, 0)),
				dvClock(dvAdd(k, day(4).Add(time.Minute), 0xe, 5), at(4, time.Minute)),
				dvClock(dvKeyOp("merge", k), at(4, 20*time.Minute)),
				dvClock(dvKeyOp("compact", k), at(4, 21*time.Minute)),
				dvKeyOp("read", k),
			)},
		{Name: "a merge whose sum would not fit goes below", Note: "a and b are 2^62 each, c is -2^62 and newer. Reads sum exactly: 2^62. A merge at b would hold a + b = 2^63, which does not fit a cell: the merge cell goes at a, the newest cell whose aggregate fits (SPEC.md 8.3), and the value is unchanged",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(5).Add(-30*time.Minute), 0xa, 1<<62), at(5, -30*time.Minute)),
				dvClock(dvAdd(k, day(5).Add(-20*time.Minute), 0xb, 1<<62), at(5, -20*time.Minute)),
				dvClock(dvAdd(k, day(5).Add(-5*time.Minute), 0xc, -(1<<62)), at(5, -5*time.Minute)),
				dvClock(dvKeyOp("read", k), at(5, 0)),
				dvKeyOp("merge", k),
				dvKeyOp("read", k),
			}},
		{Name: "a merge cell not older than now - window is corrupt", Note: "the merge at 0 writes its cell at c (-15m). Read by a clock at -5m, it is not older than now - window: no merge writes that (a merge's cell is older than its own now - window - safety margin, and clocks agree within future skew), and read it would hide the cells an add still accepts below it. So the read fails corrupt. Merge and compact scan from their cutoffs and do not reach it: the merge writes its cell at b (-20m), below c, which a read does not reach either; compact finds no merge cell old enough. At -5m + 1µs the same rows read 18",
			Options: opts, Steps: append(mergeSetup(6),
				dvClock(dvKeyOp("merge", k), at(6, 0)),
				dvClock(dvKeyOp("read", k), at(6, -5*time.Minute)),
				dvKeyOp("merge", k),
				dvKeyOp("compact", k),
				dvClock(dvKeyOp("read", k), at(6, -5*time.Minute+time.Microsecond)),
			)},
		{Name: "a merge drains a backlog oldest first", Note: "max merge cells 2: cells 1..8 at -40m, -38m, ..., -26m (a merger outage). The merge at 0 (cutoff -11m) reads 3 regular cells from the cutoff before any merge cell: too many. It steps down from the cutoff by the span of what it read (-11m to -30m) and then twice as far, scanning from each time until a scan reaches the end within 2 cells, then halves the interval until a scan holding a regular cell holds at least 1 (max merge cells / 2) cell, and folds that scan's cells. Each later merge folds the next cells up, and the last one, reading 2 regular cells to the merge cell, merges as usual; the reads between are exact",
			Options: func() dvOptions { o := opts; o.MaxMergeCells = 2; return o }(), Steps: func() []dvStep {
				var st []dvStep
				for i := range 8 {
					t := day(7).Add(-40*time.Minute + time.Duration(2*i)*time.Minute)
					st = append(st, dvClock(dvAdd(k, t, uint64(0x10+i), int64(i+1)), dvAt(t, 0)))
				}
				st = append(st, dvClock(dvKeyOp("merge", k), at(7, 0)), dvKeyOp("read", k))
				for range 5 {
					st = append(st, dvKeyOp("merge", k), dvKeyOp("read", k))
				}
				return st
			}()},
		{Name: "a drain merges a tick holding more than the limit whole", Note: "max merge cells 2: cells 2, 3 and 4 in one 100 ns tick at -20m, nothing below. The merge at 0 reads 3 regular cells from its cutoff: too many. Its drain steps down to the tick's time, whose scan reads nothing (it starts below the tick), then halves the interval above it: every scan there reads the tick's 3 cells, too many. With hi - lo at most 100 ns no time splits the tick, so it scans from the cutoff again without the limit and merges all three",
			Options: func() dvOptions { o := opts; o.MaxMergeCells = 2; return o }(), Steps: []dvStep{
				dvClock(dvAdd(k, day(8).Add(-20*time.Minute), 0x22, 2), at(8, -20*time.Minute)),
				dvAdd(k, day(8).Add(-20*time.Minute), 0x23, 3),
				dvAdd(k, day(8).Add(-20*time.Minute), 0x24, 4),
				dvClock(dvKeyOp("merge", k), at(8, 0)),
				dvKeyOp("read", k),
			}},
	}
	return dvFile{Driver: "deltalog", Note: "SPEC.md 8.4, 8.5 and 11.1: deltalog counters against a scripted partition store", Vectors: dvGenerate("deltalog", vs),
		OptionChecks: dvDeltalogOptionChecks()}
}

func dvGenBalance() dvFile {
	opts := dvOptions{Key: "acct", WindowNS: dvI(int64(5 * time.Minute)), FutureSkewNS: dvI(int64(5 * time.Second)),
		SafetyMarginNS: dvI(int64(30 * time.Second)), MaxMergeNS: dvI(int64(10 * time.Second)),
		SettleGraceNS: dvI(int64(time.Minute)), GCGraceNS: dvI(int64(10 * time.Minute))}
	const k = "acct"
	base := time.Date(2032, 1, 1, 0, 0, 0, 0, time.UTC)
	day := func(n int) time.Time { return base.AddDate(0, 0, n) }
	at := func(n int, d time.Duration) string { return dvAt(day(n), d) }
	vs := []dvVector{
		{Name: "add writes one N row", Note: "window 5m, future skew 5s. Each add is one put of the N row (its version the amount's key) at write timestamp max(now, last + 1) µs; a resend rewrites the same row; ids outside the window are refused before any call; an ambiguous add is resent by the caller",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(0).Add(-time.Minute), 1, 5), at(0, 0)),
				dvAdd(k, day(0).Add(-time.Minute), 1, 5),
				dvAdd(k, day(0).Add(-6*time.Minute), 2, 9),
				dvAdd(k, day(0).Add(-30*time.Second), 3, -2, "ambiguous_lost"),
				dvKeyOp("balance", k),
				dvAdd(k, day(0).Add(-30*time.Second), 3, -2),
				dvKeyOp("balance", k),
			}},
		{Name: "merge steps 4 to 8 over time", Note: "settle grace 1m, GC grace 10m. Merge at +1s: one version at the clock (step 4), a tombstone per live row in one batch (step 5), the sum row (step 6). At +3s only the sum row is live: nothing to merge, one read. At +1m2s the sum row is settle grace old: step 7 deletes the N rows it covers and marks it settled, in one batch. At +10m2s its tombstones are GC grace old and their targets are gone: step 8 collects them. The balance is 3 throughout",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(1), 1, 5), at(1, 0)),
				dvAdd(k, day(1).Add(time.Millisecond), 2, -2),
				dvClock(dvKeyOp("merge", k), at(1, time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(1, 3*time.Second)),
				dvClock(dvKeyOp("merge", k), at(1, time.Minute+2*time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(1, 10*time.Minute+2*time.Second)),
				dvKeyOp("balance", k),
			}},
		{Name: "a racing merge's sum row is invalid and collected", Note: "merge A at +1s covers u1 and u2. Merge B at +2s reads the partition as it was before A's two writes (as a merge that read before them would): it writes tombstones and a sum row of its own, which are invalid because A, validated first, already took the rows. The balance stays 12. At +12m one merge settles A (deleting u1, u2) and collects B's rows and A's tombstones",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(2), 1, 5), at(2, 0)),
				dvAdd(k, day(2).Add(time.Millisecond), 2, 7),
				dvClock(dvKeyOp("merge", k), at(2, time.Second)),
				dvClock(dvKeyOp("merge", k, "stale2"), at(2, 2*time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(2, 12*time.Minute)),
				dvKeyOp("balance", k),
			}},
		{Name: "step 4: the version follows a sum row ahead of the clock", Note: "merge A at +10s writes a sum row at +10s. Merge B's clock reads +7s, 3s behind (within future skew 5s): its version is A's time + 100ns, and its writes still take increasing timestamps. Merge C's clock reads +4s, more than 5s behind B's sum row: it fails unavailable after one read and writes nothing",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(3), 1, 5), at(3, 0)),
				dvClock(dvKeyOp("merge", k), at(3, 10*time.Second)),
				dvClock(dvAdd(k, day(3).Add(time.Second), 2, 1), at(3, 7*time.Second)),
				dvKeyOp("merge", k),
				dvClock(dvAdd(k, day(3).Add(2*time.Second), 3, 1), at(3, 4*time.Second)),
				dvKeyOp("merge", k),
				dvKeyOp("balance", k),
			}},
		{Name: "a merge stopped after its tombstones leaves the balance unchanged", Note: "the tombstone batch is ambiguous (it landed): the merge stops with no sum row, so the tombstones are invalid and cancel nothing (balance 12). A later merge covers the rows again and reports the orphan tombstones as too young; after GC grace a merge collects them",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(4), 1, 5), at(4, 0)),
				dvAdd(k, day(4).Add(time.Millisecond), 2, 7),
				dvClock(dvKeyOp("merge", k, "", "ambiguous_landed"), at(4, time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(4, 2*time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(4, 11*time.Minute)),
				dvKeyOp("balance", k),
			}},
		{Name: "step 7: a covered sum row stays while its tombstones stay", Note: "a chain of merges: the merge at +1s covers t1 with S1, the merge at +3s covers S1 and t2 with S2. At +1m5s both are settle grace old: S1's step 7 deletes t1, S2's deletes t2 but keeps S1, whose own tombstone is not yet GC grace old, and both are marked settled. At +10m5s every tombstone is GC grace old: S1's is collected, so S1, cancelled by S2, is deleted, and S2's two tombstones are collected. The balance is 12 throughout",
			Options: opts, Steps: []dvStep{
				dvClock(dvAdd(k, day(5), 1, 5), at(5, 0)),
				dvClock(dvKeyOp("merge", k), at(5, time.Second)),
				dvClock(dvAdd(k, day(5).Add(2*time.Second), 2, 7), at(5, 2*time.Second)),
				dvClock(dvKeyOp("merge", k), at(5, 3*time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(5, time.Minute+5*time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(5, 10*time.Minute+5*time.Second)),
				dvKeyOp("balance", k),
				dvClock(dvKeyOp("merge", k), at(5, 20*time.Minute)),
				dvKeyOp("balance", k),
			}},
		{Name: "step 5: an N and an S row of one update id: one tombstone", Note: "the partition holds t1 (5); a valid sum row u2 (3) whose merge covered t3 (3); and an N row of 7 whose client id is u2 as well. The merge at +1s writes one tombstone per update id, in clustering order: u2's N row is covered and its S row, which shares the id, is not (a second tombstone would have the same key); the new sum row holds 12 and the balance stays 15",
			Options: opts, InitialRows: dvSharedIDRows(day(6)), Steps: []dvStep{
				dvClock(dvKeyOp("balance", k), at(6, time.Second)),
				dvKeyOp("merge", k),
				dvKeyOp("balance", k),
			}},
	}
	// Transactions (SPEC.md 9.4): 2 row partitions, 2 record shards,
	// RetryWindow 1h, Deadline 5s. pay-1, pay-3 and pay-4 have their rows
	// in acct#0, pay-2 in acct#1; pay-4's records are in shard 0, the
	// others' in shard 1.
	txo := opts
	txo.RetryWindowNS, txo.DeadlineNS, txo.Partitions, txo.RecordShards = dvI(int64(time.Hour)), dvI(int64(5*time.Second)), 2, 2
	txo1 := txo
	txo1.Partitions = 1
	shortTxo := txo
	shortTxo.WindowNS, shortTxo.FutureSkewNS, shortTxo.SafetyMarginNS = dvI(int64(time.Second)), dvI(int64(100*time.Millisecond)), dvI(int64(400*time.Millisecond))
	shortTxo.MaxMergeNS, shortTxo.SettleGraceNS, shortTxo.GCGraceNS, shortTxo.DeadlineNS = dvI(int64(200*time.Millisecond)), dvI(int64(2*time.Second)), dvI(int64(2*time.Second)), dvI(int64(time.Second))
	txn := func(id string, amount int64, faults ...string) dvStep {
		return dvStepOf(dvStep{Op: "txn_apply", Key: k, Txn: id, Amount: dvI(amount)}, faults...)
	}
	vs = append(vs,
		dvVector{Name: "transactions: a retry before and after the merge that records it", Note: "each apply reads the layout marker acct#txn.layout unless it checked it less than a second ago (the first finds it empty and puts the layout first in its row's batch), scans the record partition acct#txn.<window>.<shard> of its clock's window from the row id's key (one read), then puts the transaction's N row, keyed by its row id, in its row partition. A retry before any merge rewrites the same row (applied; it counts once); pay-3's write is ambiguous and landed. The merge at +1s reads the layout marker, acct#0 and acct#1, then writes the records of the live transaction rows it will cover, one batch per record partition in key order, into the windows [m − 5s, m + 10s + 1h + 10s] meets (three here), then steps 4–6. After it a retry is a duplicate with nothing written, and another amount is conflicting",
			Options: txo, Steps: []dvStep{
				dvClock(txn("pay-1", 100), at(7, 0)),
				txn("pay-1", 100),
				txn("pay-2", -30),
				txn("pay-3", 5, "", "ambiguous_landed"),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(7, time.Second)),
				txn("pay-1", 100),
				txn("pay-3", 5),
				txn("pay-1", 7),
				dvKeyOp("txn_balance", k),
			}},
		dvVector{Name: "transactions: a stale record read, settling and record expiry", Note: "at +2s the record read is stale (as of before the merge's records): the call rewrites pay-1's row, which its tombstone cancels, so it counts nothing. At +1m5s the merge settles: the rows and their tombstones are deleted. At 1h30m the call's clock is in the next window, which holds the record too: duplicate. At 3h0m30s a merge whose newest sum row read (of +1m5s) is in an earlier window reads the expiry mark acct#txn.expired (empty), deletes the record partitions of the windows from 3 before that sum row's to 2 before its own (every shard, one batch) and writes the mark (the last window deleted). At 4h0m30s a merge deletes the one window after the mark (2 back) and moves the mark, deleting the mark row it read. At 6h every window a merge up to that sum row could have written (up to 2 after its) is deleted: the merge reads the mark and writes nothing",
			Options: txo, Steps: []dvStep{
				dvClock(txn("pay-1", 100), at(8, 0)),
				dvClock(dvKeyOp("txn_merge", k), at(8, time.Second)),
				dvClock(txn("pay-1", 100, "", "stale"), at(8, 2*time.Second)),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(8, time.Minute+5*time.Second)),
				dvKeyOp("txn_balance", k),
				dvClock(txn("pay-1", 100), at(8, 90*time.Minute)),
				dvClock(dvKeyOp("txn_merge", k), at(8, 3*time.Hour+30*time.Second)),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(8, 4*time.Hour+30*time.Second)),
				dvClock(dvKeyOp("txn_merge", k), at(8, 6*time.Hour)),
			}},
		dvVector{Name: "transactions: a merge whose records are refused stops before its tombstones", Note: "the merge at +1s reads acct#0 (pay-1 and pay-4) and acct#1, and its first record batch is refused: it fails unavailable and writes no tombstone in either partition, so a retry is applied (the same row) and the balance is unchanged. The next merge records both and merges; then a retry is a duplicate",
			Options: txo, Steps: []dvStep{
				dvClock(txn("pay-1", 100), at(9, 0)),
				txn("pay-4", 50),
				dvClock(dvKeyOp("txn_merge", k, "", "", "", "refuse"), at(9, time.Second)),
				txn("pay-1", 100),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(9, 2*time.Second)),
				txn("pay-1", 100),
				dvKeyOp("txn_balance", k),
			}},
		dvVector{Name: "transactions: removal takes a later copy of another amount", Note: "pay-1 (100) is placed at its writer's clock (+0s); the merge at +1s places its tombstone there and its sum row at +1s. At +2s a stale record read lets a call write pay-1 with 110, placed at +2s: a second row of the id, which counts nothing. At +1m5s the merge settles: the oldest run (the row of 100 and the tombstone, placed before start − SettleGrace) goes with one delete-range to the partition's end, and the row of 110, which removing the tombstone needs, is deleted at its place first. The balance stays 100",
			Options: txo, Steps: []dvStep{
				dvClock(txn("pay-1", 100), at(11, 0)),
				dvClock(dvKeyOp("txn_merge", k), at(11, time.Second)),
				dvClock(txn("pay-1", 110, "", "stale"), at(11, 2*time.Second)),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(11, time.Minute+5*time.Second)),
				dvKeyOp("txn_balance", k),
			}},
		dvVector{Name: "transactions: removal takes an unsettled sum row whose tombstone goes", Note: "one row partition. a (1) is merged at +1s (S0) and settled at +1m2s, which removes a and its tombstone by range. Merge A at +2m1s covers S0 and b (10); merge B at +2m4s covers A's sum row and c (100). x (1000) comes from a writer whose clock reads +2m0.5s, 3.5s behind: it is placed before A's sum row and stays live. The merge at +3m15s settles B and plans S0, A's sum row and b deleted; its oldest run stops below x, so it removes S0 and A's tombstone naming S0 by range, and A's sum row, which would stay unsettled with a tombstone short, is removed at its place with its other tombstone and b. The balance stays 1111",
			Options: txo1, Steps: []dvStep{
				dvClock(txn("a", 1), at(12, 0)),
				dvClock(dvKeyOp("txn_merge", k), at(12, time.Second)),
				dvClock(dvKeyOp("txn_merge", k), at(12, time.Minute+2*time.Second)),
				dvClock(txn("b", 10), at(12, 2*time.Minute)),
				dvClock(dvKeyOp("txn_merge", k), at(12, 2*time.Minute+time.Second)),
				dvClock(txn("c", 100), at(12, 2*time.Minute+3*time.Second)),
				dvClock(dvKeyOp("txn_merge", k), at(12, 2*time.Minute+4*time.Second)),
				dvClock(txn("x", 1000), at(12, 2*time.Minute+500*time.Millisecond)),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(12, 3*time.Minute+15*time.Second)),
				dvKeyOp("txn_balance", k),
			}},
		dvVector{Name: "transactions: a sum row is placed after a row written by a clock ahead", Note: "one row partition. y (5) comes from a writer whose clock reads +3s; the merge's clock reads +1s, so its version is at +1s, and its sum row is placed at +3s, y's place, after the row it covers. At +1m10s the merge settles it and removes y and its tombstone by range: the sum row alone is left",
			Options: txo1, Steps: []dvStep{
				dvClock(txn("y", 5), at(13, 3*time.Second)),
				dvClock(dvKeyOp("txn_merge", k), at(13, time.Second)),
				dvClock(dvKeyOp("txn_merge", k), at(13, time.Minute+10*time.Second)),
				dvKeyOp("txn_balance", k),
			}},
		dvVector{Name: "transactions: a row partition past int64 merges its oldest rows", Note: "pay-3 (2^63 − 1) and pay-1 (1, placed 1s later) are in acct#0, pay-2 (−30) in acct#1: acct#0 sums past int64, the account does not, and the balance is their exact sum. The merge at +2s covers in acct#0 only the oldest rows by place whose running sum fits, pay-3 (step 5; pay-1 comes first in clustering order), and records only the rows it covers: a retry of pay-1 rewrites its row (applied, counted once), one of pay-3 is a duplicate. The merge at +3s covers pay-1, the oldest row left whose sum fits (the sum row of 2^63 − 1 is placed after it), and records it: then its retry is a duplicate",
			Options: txo, Steps: []dvStep{
				dvClock(txn("pay-3", math.MaxInt64), at(14, 0)),
				txn("pay-2", -30),
				dvClock(txn("pay-1", 1), at(14, time.Second)),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(14, 2*time.Second)),
				txn("pay-1", 1),
				txn("pay-3", math.MaxInt64),
				dvKeyOp("txn_balance", k),
				dvClock(dvKeyOp("txn_merge", k), at(14, 3*time.Second)),
				txn("pay-1", 1),
				dvKeyOp("txn_balance", k),
			}},
		dvVector{Name: "transactions: a layout check is trusted for SafetyMargin when it is under a second", Note: "SafetyMargin 400ms. pay-1 finds the layout marker empty and writes it; pay-2, 300ms later, skips the check; pay-3, 800ms after pay-1, reads the marker again, as it would not with a second's trust: a Delete's reuse rule (SafetyMargin) then outlasts every check made before the Delete",
			Options: shortTxo, Steps: []dvStep{
				dvClock(txn("pay-1", 1), at(15, 0)),
				dvClock(txn("pay-2", 2), at(15, 300*time.Millisecond)),
				dvClock(txn("pay-3", 3), at(15, 800*time.Millisecond)),
				dvKeyOp("txn_balance", k),
			}},
	)
	return dvFile{Driver: "balance", Note: "SPEC.md 9.3, 9.4 and 11.1: balance adds and merges, and Transactions' applies and merges, against a scripted partition store", Vectors: dvGenerate("balance", vs),
		OptionChecks: dvBalanceOptionChecks()}
}

// ---------------------------------------------------------------------------
// The model store (SPEC.md 10): what every read of a vector must answer,
// given the writes before it that landed.

// dvModelStore replays a vector's calls on a model of the two storage
// shapes and requires every read's answer to be the state the landed writes
// left (or, for a read marked stale n, the state n landed writes before).
func dvModelStore(v dvVector) []string {
	var out []string
	type sibling struct {
		dot   int
		value string
	}
	sibs := map[string][][]sibling{} // key -> every state, oldest first
	tokens := map[string][]int{}     // token -> the dots it covers
	dot := 0
	sibState := func(key string) [][]sibling {
		if len(sibs[key]) == 0 {
			sibs[key] = [][]sibling{nil}
		}
		return sibs[key]
	}
	if len(v.InitialSiblings) > 0 {
		var st []sibling
		for _, s := range v.InitialSiblings {
			dot++
			st = append(st, sibling{dot, dvValueKey(s.Value, s.ValueSHA256, s.ValueLen)})
		}
		sibs[v.Options.Key] = [][]sibling{st}
	}
	var writes []dvPW                // every landed mutation
	parts := map[string][][]dvPRow{} // partition -> every visible state, oldest first
	partState := func(p string) [][]dvPRow {
		if len(parts[p]) == 0 {
			parts[p] = [][]dvPRow{nil}
		}
		return parts[p]
	}
	if len(v.InitialRows) > 0 {
		for _, r := range v.InitialRows {
			writes = append(writes, dvPW{op: "put", partition: v.Options.Key, key: r.Key, value: r.Value, ts: 1})
		}
		parts[v.Options.Key] = [][]dvPRow{dvVisible(writes, v.Options.Key)}
	}
	for i, s := range v.Steps {
		for j, c := range s.Calls {
			where := fmt.Sprintf("step %d call %d (%s)", i+1, j+1, c.Method)
			landed := c.Reply == "ok" || (c.Reply == "ambiguous" && c.Landed != nil && *c.Landed)
			if c.Reply == "ambiguous" && c.Landed == nil {
				out = append(out, where+": an ambiguous write must say whether it landed")
			}
			switch c.Method {
			case "fetch":
				if len(c.Seeded) > 0 {
					// Put by another writer, no token, before the fetch.
					h := sibState(c.Key)
					st := slices.Clone(h[len(h)-1])
					for _, sb := range c.Seeded {
						dot++
						st = append(st, sibling{dot, dvValueKey(sb.Value, sb.ValueSHA256, sb.ValueLen)})
					}
					sibs[c.Key] = append(h, st)
				}
				if c.Reply != "ok" {
					continue
				}
				h := sibState(c.Key)
				if c.Stale < 0 || c.Stale >= len(h) {
					out = append(out, fmt.Sprintf("%s: stale %d, but only %d states", where, c.Stale, len(h)))
					continue
				}
				st := h[len(h)-1-c.Stale]
				var want, got []string
				var dots []int
				for _, sb := range st {
					want, dots = append(want, sb.value), append(dots, sb.dot)
				}
				for _, sb := range c.Siblings {
					got = append(got, dvValueKey(sb.Value, sb.ValueSHA256, sb.ValueLen))
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(want, got) {
					out = append(out, fmt.Sprintf("%s: siblings are not the stored ones (%d given, %d stored)", where, len(got), len(want)))
				}
				slices.Sort(dots)
				// A token is the key's: two keys may hand out equal ones.
				if prev, ok := tokens[c.Key+"\x00"+c.Token]; ok && !slices.Equal(prev, dots) {
					out = append(out, fmt.Sprintf("%s: token %q covered other siblings before", where, c.Token))
				}
				tokens[c.Key+"\x00"+c.Token] = dots
			case "put":
				covered, ok := tokens[c.Key+"\x00"+c.Token]
				if c.Token != "" && !ok {
					out = append(out, fmt.Sprintf("%s: token %q was never fetched", where, c.Token))
				}
				if !landed {
					continue
				}
				h := sibState(c.Key)
				var next []sibling
				for _, sb := range h[len(h)-1] {
					if !slices.Contains(covered, sb.dot) {
						next = append(next, sb)
					}
				}
				dot++
				sibs[c.Key] = append(h, append(next, sibling{dot, dvValueKey(c.Value, c.ValueSHA256, c.ValueLen)}))
			case "snapshot", "scan":
				if c.Reply != "ok" {
					continue
				}
				h := partState(c.Key)
				if c.Stale < 0 || c.Stale >= len(h) {
					out = append(out, fmt.Sprintf("%s: stale %d, but only %d states", where, c.Stale, len(h)))
					continue
				}
				var want []dvPRow
				for _, r := range h[len(h)-1-c.Stale] {
					if r.key >= c.From {
						want = append(want, r)
					}
				}
				var got []dvPRow
				for _, r := range c.Rows {
					got = append(got, dvPRow{r.Key, r.Value})
				}
				if !slices.Equal(want, got) {
					out = append(out, fmt.Sprintf("%s: rows are not the stored ones (%d given, %d stored)", where, len(got), len(want)))
				}
				if c.Method == "scan" && (c.Visited == nil || *c.Visited > len(c.Rows)) {
					out = append(out, where+": visited must be given, at most the rows")
				}
			case "apply":
				if !landed {
					continue
				}
				touched := map[string]bool{}
				for _, m := range c.Mutations {
					writes = append(writes, dvPW{op: m.Op, partition: m.Partition, key: m.Key, end: m.End, value: m.Value, ts: int64(m.TS)})
					touched[m.Partition] = true
				}
				for p := range touched {
					parts[p] = append(partState(p), dvVisible(writes, p))
				}
			}
		}
	}
	return out
}

// dvPW is a mutation that took effect; dvPRow a visible row (hex).
type dvPW struct {
	op, partition, key, end, value string
	ts                             int64
}

type dvPRow struct{ key, value string }

// dvVisible is the partition's rows under SPEC.md 10.2: per row the value
// with the greatest timestamp (then the greatest bytes) wins, and a delete
// of any kind with a timestamp at least its own shadows it. Hex strings of
// equal length order as the bytes do; keys of different lengths are
// compared as bytes.
func dvVisible(writes []dvPW, partition string) []dvPRow {
	best := map[string]dvPW{}
	for _, w := range writes {
		if w.partition != partition || w.op != "put" {
			continue
		}
		b, ok := best[w.key]
		if !ok || w.ts > b.ts || (w.ts == b.ts && bytes.Compare(dvUnhex(w.value), dvUnhex(b.value)) > 0) {
			best[w.key] = w
		}
	}
	var rows []dvPRow
	for k, b := range best {
		shadowed := false
		for _, w := range writes {
			if w.partition != partition || w.ts < b.ts {
				continue
			}
			key, from := dvUnhex(k), dvUnhex(w.key)
			switch w.op {
			case "delete":
				shadowed = shadowed || w.key == k
			case "delete-range":
				shadowed = shadowed || (bytes.Compare(key, from) >= 0 && (w.end == "" || bytes.Compare(key, dvUnhex(w.end)) < 0))
			case "delete-partition":
				shadowed = true
			}
		}
		if !shadowed {
			rows = append(rows, dvPRow{k, b.value})
		}
	}
	slices.SortFunc(rows, func(a, b dvPRow) int { return bytes.Compare(dvUnhex(a.key), dvUnhex(b.key)) })
	return rows
}

// ---------------------------------------------------------------------------
// Plain models of the protocols. Each walks a vector's steps and derives,
// from the store's answers alone, the calls each step must make and what it
// must return, from the SPEC text rather than the drivers' code.

// dvTxns is the transactions a ledger state holds (history and folded,
// every entry of both halves), with signed amounts.
func dvTxns(s *dvState) map[string]int64 {
	out := map[string]int64{}
	if s == nil {
		return out
	}
	for i, es := range [][]dvEntry{s.P, s.N} { // P first: dvAddTxn marks an id held in both
		for _, e := range es {
			for _, list := range [][]dvTxn{e.History, e.Folded} {
				for _, x := range list {
					dvAddTxn(out, []string{"P", "N"}[i], x)
				}
			}
		}
	}
	return out
}

// dvAddTxn adds x, held in half, to a map of transactions and signed
// amounts; a debit of a txn the map holds as a credit (one id in both
// halves, SPEC.md 6.6) is keyed "txn (N)", so that both stay. Credits
// must be added before debits.
func dvAddTxn(out map[string]int64, half string, x dvTxn) {
	if half == "P" {
		out[x.Txn] = int64(x.Amount)
		return
	}
	if a, ok := out[x.Txn]; ok && a > 0 {
		out[x.Txn+" (N)"] = -int64(x.Amount)
		return
	}
	out[x.Txn] = -int64(x.Amount)
}

func dvShow(v *dvInt) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatInt(int64(*v), 10)
}

func dvShow64(v *int64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatInt(*v, 10)
}

// dvEntries is a ledger state as entries: half ("P" or "N") and actor ->
// the entry of the largest seq seen (a retired entry over the live one of
// its seq, SPEC.md 6.5; of two retired ones, the one with the earlier
// retirement time, 6.10). Under the key of the half and an empty actor
// (dvBaseKey) is the half's base (6.10): a retired entry with no actor,
// no seq and no transactions, whose total and forgot are the base's and
// whose RetiredAt is its cutoff. So value and live count it as they
// should, and no actor's rules see it.
type dvEntries map[string]dvEntry

func dvSeqOf(e dvEntry) uint64 { n, _ := strconv.ParseUint(e.Seq, 10, 64); return n }

// dvBaseKey is the key of half's base in dvEntries.
func dvBaseKey(half string) string { return half + "/" }

func (m dvEntries) add(s *dvState) {
	if s == nil {
		return
	}
	for half, es := range map[string][]dvEntry{"P": s.P, "N": s.N} {
		for _, e := range es {
			m.put(half+"/"+e.Actor, e)
		}
	}
	for half, b := range map[string]*dvBase{"P": s.PBase, "N": s.NBase} {
		if b != nil {
			m.put(dvBaseKey(half), dvEntry{Seq: "0", Total: b.Total, Forgot: b.Forgot, Retired: true, RetiredAt: b.Cutoff, History: []dvTxn{}, Folded: []dvTxn{}})
		}
	}
	m.prune()
}

// merge merges o into m (SPEC.md 6.5, 6.10).
func (m dvEntries) merge(o dvEntries) {
	for k, e := range o {
		m.put(k, e)
	}
	m.prune()
}

// put keeps the larger of e and m's entry k: the larger seq, then a retired
// entry over a live one, then the earlier retirement time (a time over
// none); for bases, the larger (cutoff, total, forgot) (SPEC.md 6.10).
func (m dvEntries) put(k string, e dvEntry) {
	old, ok := m[k]
	switch {
	case !ok:
	case strings.HasSuffix(k, "/"):
		if cmp.Or(cmp.Compare(e.RetiredAt, old.RetiredAt), cmp.Compare(e.Total, old.Total), cmp.Compare(e.Forgot, old.Forgot)) <= 0 {
			return
		}
	case dvSeqOf(e) != dvSeqOf(old):
		if dvSeqOf(e) < dvSeqOf(old) {
			return
		}
	case e.Retired != old.Retired:
		if !e.Retired {
			return
		}
	case !e.Retired || e.RetiredAt == 0 || (old.RetiredAt != 0 && e.RetiredAt >= old.RetiredAt):
		return
	}
	m[k] = e
}

// prune drops the retired entries a half's base holds: retired at a known
// time before the base's cutoff (SPEC.md 6.10, Merge).
func (m dvEntries) prune() {
	for k, e := range m {
		half, actor, _ := strings.Cut(k, "/")
		if cut := m[dvBaseKey(half)].RetiredAt; actor != "" && e.Retired && e.RetiredAt > 0 && e.RetiredAt < cut {
			delete(m, k)
		}
	}
}

// fold is Fold(cutoff) of SPEC.md 6.10 on both halves: every retired entry
// retired at a known time before c, the later of cutoff and the base's
// cutoff, goes into the base (its total added, its forgot the later);
// the base's cutoff becomes c. A half with no such entry is unchanged. It
// returns how many entries it folded.
func (m dvEntries) fold(cutoff int64) int {
	if cutoff <= 0 {
		return 0
	}
	cutoff = min(cutoff, tpncounter.MaxForgot.UnixNano())
	n := 0
	for _, half := range []string{"P", "N"} {
		b, ok := m[dvBaseKey(half)]
		if !ok {
			b = dvEntry{Seq: "0", Retired: true, History: []dvTxn{}, Folded: []dvTxn{}}
		}
		c := max(cutoff, int64(b.RetiredAt))
		folded := false
		for k, e := range m {
			h, actor, _ := strings.Cut(k, "/")
			if h != half || actor == "" || !e.Retired || e.RetiredAt <= 0 || int64(e.RetiredAt) >= c {
				continue
			}
			b.Total += e.Total
			b.Forgot = max(b.Forgot, e.Forgot)
			delete(m, k)
			folded = true
			n++
		}
		if folded {
			b.RetiredAt = dvInt(c)
			m[dvBaseKey(half)] = b
		}
	}
	return n
}

// base returns half's base as a state gives it (nil: none).
func (m dvEntries) base(half string) *dvBase {
	b, ok := m[dvBaseKey(half)]
	if !ok {
		return nil
	}
	return &dvBase{Cutoff: b.RetiredAt, Total: b.Total, Forgot: b.Forgot}
}

// value is SPEC.md 6.2 and 6.6: the totals, every transaction held only
// in histories once, a transaction folded by several actors once, and one
// held in both halves once, by its owner across halves.
func (m dvEntries) value() int64 {
	var v int64
	for _, half := range []string{"P", "N"} {
		sign := int64(1)
		if half == "N" {
			sign = -1
		}
		folded, hist := map[string]int64{}, map[string]int64{}
		var n int64
		for k, e := range m {
			if !strings.HasPrefix(k, half+"/") {
				continue
			}
			n += int64(e.Total)
			for _, x := range e.Folded {
				if _, ok := folded[x.Txn]; ok {
					n -= int64(x.Amount)
				}
				folded[x.Txn] = int64(x.Amount)
			}
			for _, x := range e.History {
				hist[x.Txn] = int64(x.Amount)
			}
		}
		for t, a := range hist {
			if _, ok := folded[t]; !ok {
				n += a
			}
		}
		v += sign * n
	}
	// A txn held in both halves (a conflict) counts once, by the owner
	// across halves: a folded owner beats a history owner, then the
	// smaller actor id, and P wins a tie of the same actor; the other
	// half's count of it is taken back out (SPEC.md 6.6).
	type owner struct {
		actor  string
		amount int64
		folded bool
	}
	owners := map[string]map[string]owner{"P": {}, "N": {}}
	better := func(a, b owner) bool {
		return a.folded != b.folded && a.folded || a.folded == b.folded && a.actor < b.actor
	}
	for k, e := range m {
		half, actor, _ := strings.Cut(k, "/")
		if actor == "" {
			continue
		}
		for i, l := range [][]dvTxn{e.History, e.Folded} {
			for _, x := range l {
				c := owner{actor, int64(x.Amount), i == 1}
				if o, ok := owners[half][x.Txn]; !ok || better(c, o) {
					owners[half][x.Txn] = c
				}
			}
		}
	}
	for t, po := range owners["P"] {
		no, ok := owners["N"][t]
		switch {
		case !ok:
		case better(no, po):
			v -= po.amount // N's owner counts: P's count of t goes
		default:
			v += no.amount // P's owner counts: N's count of t goes
		}
	}
	return v
}

// held lists the transactions actor's live entries hold (P, then N, each
// oldest first: folded, then history), with signed amounts.
func (m dvEntries) held(actor string) []dvTxn {
	var out []dvTxn
	for _, half := range []string{"P", "N"} {
		e, ok := m[half+"/"+actor]
		if !ok || e.Retired {
			continue
		}
		for _, x := range append(slices.Clone(e.Folded), e.History...) {
			if half == "N" {
				x.Amount = -x.Amount
			}
			out = append(out, x)
		}
	}
	return out
}

// live returns every actor with a live entry and its version (the sum of
// its seqs in both halves).
func (m dvEntries) live() map[string]uint64 {
	out := map[string]uint64{}
	for k, e := range m {
		if !e.Retired {
			out[strings.SplitN(k, "/", 2)[1]] = 0
		}
	}
	for a := range out {
		for _, half := range []string{"P", "N"} {
			if e, ok := m[half+"/"+a]; ok {
				out[a] += dvSeqOf(e)
			}
		}
	}
	return out
}

// retired reports whether m holds actor's entries, all retired.
func (m dvEntries) retired(actor string) bool {
	_, live := m.live()[actor]
	return !live && m.version(actor) > 0
}

// shares reports whether an entry other than actor's holds a transaction
// actor's live entries hold (SPEC.md 6.10: then Retire declines).
func (m dvEntries) shares(actor string) bool { return m.sharesOutside(actor, []string{actor}) }

// sharesOutside reports whether an entry of an actor not in group holds a
// transaction actor's live entries hold, other than one whose copy that
// counts is another actor's folded copy (actor's copy then leaves without
// counting: SPEC.md 6.10).
func (m dvEntries) sharesOutside(actor string, group []string) bool {
	mine := map[string]bool{}
	for _, x := range m.held(actor) {
		if o, _, folded, _ := m.owner(x.Txn); o == actor || !folded {
			mine[x.Txn] = true
		}
	}
	for k, e := range m {
		if slices.Contains(group, strings.SplitN(k, "/", 2)[1]) {
			continue
		}
		for _, x := range append(slices.Clone(e.Folded), e.History...) {
			if mine[x.Txn] {
				return true
			}
		}
	}
	return false
}

// sharesWith reports whether an entry of b holds a transaction a's live
// entries hold.
func (m dvEntries) sharesWith(a, b string) bool {
	for _, x := range m.held(a) {
		if slices.ContainsFunc(m.held(b), func(y dvTxn) bool { return y.Txn == x.Txn }) {
			return true
		}
	}
	return false
}

// bothHalves reports whether a transaction actor's live entries hold is
// held in both halves, by any entry (SPEC.md 6.10: in the other half every
// entry is an other entry, the actor's own included, so Retire and
// RetireAll decline).
func (m dvEntries) bothHalves(actor string) bool {
	in := map[string]map[string]bool{"P": {}, "N": {}}
	for k, e := range m {
		half, _, _ := strings.Cut(k, "/")
		for _, x := range append(slices.Clone(e.Folded), e.History...) {
			in[half][x.Txn] = true
		}
	}
	for _, x := range m.held(actor) {
		if in["P"][x.Txn] && in["N"][x.Txn] {
			return true
		}
	}
	return false
}

// dvSighting is a ledger's view of another actor for RetireAfter (SPEC.md
// 6.9): its version, since when unchanged, and whether its newest
// transaction's record was read for that.
type dvSighting struct {
	version  uint64
	since    time.Time
	dated    bool
	recorded bool // its transactions' records written at this version
	// checked: its newest transactions' records read at this version.
	checked bool
	// late: its copies counted by another writer first (6.9), which leave
	// uncounted when it retires.
	late []string
}

// dvModelLedger checks ledger vectors against SPEC.md 6.9-6.11, with the
// value as "each distinct transaction once". Records an earlier cycle could
// not write are put before the cycle (flush); every attempt fetches the
// counter, then (one set of record fetches) while a write is pending the
// records of its unacknowledged transactions the fetch lacks (6.11 step 4:
// kept at the ledger's own record, taken out at another writer's record
// the fetch covers by version, unavailable at one it does not), the record
// of every call whose transaction the fetch does not hold (step 1: known,
// conflicting_transaction, or outside_window with TxnTime) and of idle
// actors' newest transactions. A transaction the fetch holds is not
// written (duplicate, or applied when an earlier attempt of the call wrote
// it; the same id with another signed amount is conflicting_transaction),
// nor one the records know; otherwise, after the record puts of the actors
// retired (6.9 RetireAfter, 6.11 step 5), one put, with the fetch's token,
// of exactly the transactions of the fetched siblings, of the ledger's last
// write that may have landed and the new one, less those of the retired
// actors. A refused or ambiguous put is retried up to retry_count times.
// The records of the transactions the cycle applied and landed are put
// last, each with its writer's version in the state that landed it.
// Sequence numbers only grow: two versions of an entry never share one (a
// retired entry and the live one it replaces excepted), and a ledger never
// writes its entry below a version it has seen. A group step is a first
// member's cycle, then one cycle for the others (dvModel.group).
// RetiredGrace (6.9, 6.10): states carry their halves' bases, and a merge
// keeps the larger and drops the retired entries it holds; a write that
// makes a pass folds what was retired before now - RetiredGrace, and its
// put must hold exactly the entries and bases that leaves; a read more
// than RetiredGrace/2 after the ledger's previous one starts from the
// fetch alone, and one more than RetireAfter + RetiredGrace/2 after its
// entry last changed in a put takes the ledger's next writer id.
func dvModelLedger(v dvVector) []string {
	if slices.ContainsFunc(v.Ledgers, func(d dvLedger) bool { return d.Shards > 0 }) {
		return dvModelSharded(v)
	}
	ls := map[string]*dvLedgerModel{}
	for _, d := range v.Ledgers {
		ls[d.Actor] = dvNewLedgerModel(d.Writer, d.LaterWriters)
	}
	m := dvNewModel(v, v.Options.Key)
	for _, sb := range v.InitialSiblings {
		m.see("initial sibling", sb.State, "")
	}
	var out []string
	for i, s := range v.Steps {
		if err := m.setClock(s); err != nil {
			out = append(out, fmt.Sprintf("step %d: %v", i+1, err))
			continue
		}
		L := ls[s.Ledger]
		m.begin(i, s, s.Calls)
		if L == nil {
			m.bad("unknown ledger %q", s.Ledger)
			continue
		}
		m.run(L, s)
		if s.Pending == nil || *s.Pending != L.pending {
			m.bad("pending %v, the model says %v", s.Pending, L.pending)
		}
	}
	return append(out, m.out...)
}

func dvNewLedgerModel(writer string, later []string) *dvLedgerModel {
	return &dvLedgerModel{writer: writer, later: later, last: map[string]int64{}, lastState: dvEntries{}, ownAt: map[string]time.Time{}, ownSeq: map[string]string{},
		unacked: map[string]time.Time{}, unindexed: map[string]dvRecord{}, giving: map[string]bool{}, gaveUp: map[string]bool{}, met: map[string]dvMet{}, sightings: map[string]dvSighting{}}
}

// dvNewModel is the model of one key of vector v whose records are those
// of account recBase.
func dvNewModel(v dvVector, key string) *dvModel {
	m := &dvModel{v: v, recBase: v.Options.Key, seqs: map[string]map[string]string{}, top: map[string]uint64{}, now: dvT0,
		window: dvDur(v.Options.RetryWindowNS), retireAfter: dvDur(v.Options.RetireAfterNS), grace: dvDur(v.Options.RetiredGraceNS)}
	m.v.Options.Key = key
	if m.grace == 0 {
		m.grace = ledger.DefaultRetiredGrace
	}
	return m
}

// setClock takes up step s's clock.
func (m *dvModel) setClock(s dvStep) error {
	if s.Clock == "" {
		return nil
	}
	at, err := time.Parse(time.RFC3339Nano, s.Clock)
	if err != nil {
		return fmt.Errorf("clock %q: %v", s.Clock, err)
	}
	m.now = at
	return nil
}

// begin starts step i (s) with calls, those of the step on the model's key.
func (m *dvModel) begin(i int, s dvStep, calls []dvCall) {
	m.step, m.calls, m.k = i+1, calls, 0
	m.bad = func(format string, args ...any) {
		m.out = append(m.out, fmt.Sprintf("step %d (%s %s): ", i+1, s.Op, s.Txn)+fmt.Sprintf(format, args...))
	}
}

// run walks step s of ledger L, every call of the step being L's.
func (m *dvModel) run(L *dvLedgerModel, s dvStep) {
	switch s.Op {
	case "group":
		m.group(L, s)
	default:
		m.single(L, s)
	}
	if m.k < len(m.calls) {
		m.bad("%d calls after the step is done", len(m.calls)-m.k)
	}
	if len(m.spare) > 0 {
		m.bad("%d record fetches no lookup or record wanted", len(m.spare))
		m.spare = nil
	}
}

// dvLedgerModel is what the model knows of one ledger.
type dvLedgerModel struct {
	writer    string
	last      map[string]int64 // the transactions of its last put that may have landed
	lastState dvEntries        // that put's state, with what L took out since
	sent      dvEntries        // while pending: the ambiguous put's state as sent
	pending   bool
	ahead     bool                 // a put refused with none pending took its transactions back out (6.9)
	stored    uint64               // its writer's version last known stored: a landed put, a read in place (6.9)
	unacked   map[string]time.Time // transactions of pending puts whose callers were not told they landed: when applied
	unindexed map[string]dvRecord  // records not yet written
	giving    map[string]bool      // those of them that give L's copy up (6.11 step 6)
	gaveUp    map[string]bool      // transactions whose copy L gave up: no put of L holds it
	met       map[string]dvMet     // its copies that met another writer's (settle)
	sightings map[string]dvSighting
	// The schedule of RetireAfter's passes (SPEC.md 6.9): the last pass,
	// and when the next is due (zero: on the next write).
	lastPass, nextPass time.Time
	passed             bool // the current attempt's write made a pass
	// RetiredGrace (SPEC.md 6.9): the writer ids of the incarnations it
	// takes later, when its last read began, and when each half of its own
	// entry last changed in a state it wrote, at which seq.
	later  []string
	read   time.Time
	ownAt  map[string]time.Time
	ownSeq map[string]string
}

// changed is when the half of L's entry that changed least recently last
// changed (zero: none).
func (L *dvLedgerModel) changed() (at time.Time) {
	for _, t := range L.ownAt {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at
}

// dvModel walks one ledger vector.
type dvModel struct {
	v       dvVector // its Options.Key is the model's key
	recBase string   // the account of its transaction records (SPEC.md 6.11)
	// part, when set, takes a value read's result instead of checking it
	// (a sub-key of a sharded Value).
	part  *dvMember
	out   []string
	bad   func(format string, args ...any)
	step  int
	calls []dvCall
	k     int
	// spare are record fetches an attempt's set took that no lookup of it
	// wanted: the confirming fetches of its cycle's records (writeRecords).
	spare               []dvCall
	seqs                map[string]map[string]string // half/actor -> seq (and retired) -> entry content
	top                 map[string]uint64            // half/actor -> the greatest seq seen
	now                 time.Time
	window, retireAfter time.Duration
	grace               time.Duration // RetiredGrace
}

// renew is SPEC.md 6.9 RetiredGrace at the start of a read of L with no
// write pending and no unacknowledged transaction: L's state is dropped
// when its previous read began more than RetiredGrace/2 ago, and L takes
// its next incarnation when its entry last changed, in a state it wrote,
// more than RetireAfter + RetiredGrace/2 ago.
func (m *dvModel) renew(L *dvLedgerModel) {
	defer func() { L.read = m.now }()
	if m.grace < 0 {
		return
	}
	doubt := false // a write in doubt forgotten, which may still land: a new incarnation
	if m.now.Sub(L.read) > m.grace/2 {
		doubt = L.pending || len(L.unacked) > 0
		L.last, L.lastState, L.pending, L.ahead, L.unacked = map[string]int64{}, dvEntries{}, false, false, map[string]time.Time{}
	}
	if !doubt && (L.pending || len(L.unacked) > 0 || L.changed().IsZero() || m.now.Sub(L.changed()) <= max(m.retireAfter, 0)+m.grace/2) {
		return
	}
	if L.ahead { // its entry may be retired: the store's state alone
		L.last, L.lastState, L.ahead = map[string]int64{}, dvEntries{}, false
	}
	m.incarnate(L)
}

// incarnate makes L write as its next incarnation.
func (m *dvModel) incarnate(L *dvLedgerModel) {
	if len(L.later) == 0 {
		m.bad("%s takes a new incarnation: the vector names no writer for it", L.writer)
		return
	}
	L.writer, L.later = L.later[0], L.later[1:]
	L.ownAt, L.ownSeq, L.gaveUp, L.stored = map[string]time.Time{}, map[string]string{}, map[string]bool{}, 0
}

func (m *dvModel) see(where string, s *dvState, writer string) {
	if s == nil {
		return
	}
	for half, es := range map[string][]dvEntry{"P": s.P, "N": s.N} {
		for _, e := range es {
			id := half + "/" + e.Actor
			seq := dvSeqOf(e)
			b := dvEntryPrint(e)
			if m.seqs[id] == nil {
				m.seqs[id] = map[string]string{}
			}
			version := fmt.Sprintf("%d/%v", seq, e.Retired)
			if prev, ok := m.seqs[id][version]; ok && prev != string(b) {
				m.out = append(m.out, fmt.Sprintf("%s: two versions of %s's entry in %s with seq %d", where, e.Actor, half, seq))
			}
			m.seqs[id][version] = string(b)
			if e.Actor == writer && seq < m.top[id] {
				m.out = append(m.out, fmt.Sprintf("%s: %s writes its entry in %s at seq %d, below %d seen before", where, writer, half, seq, m.top[id]))
			}
			m.top[id] = max(m.top[id], seq)
		}
	}
}

// set takes the calls from the current one on that are calls of method to
// record keys (SPEC.md 11.1: a set, in any order).
func (m *dvModel) set(method string) []dvCall {
	var out []dvCall
	for m.k < len(m.calls) && m.calls[m.k].Method == method && ledger.IsRecordKey(m.calls[m.k].Key) {
		out = append(out, m.calls[m.k])
		m.k++
	}
	return out
}

// live returns the records of txn among siblings that are inside the
// window at the model's clock (with TxnTime, all of them while txn's time
// is inside it: SPEC.md 6.11, Window) and name no other key than the
// model's: those a copy is judged by.
func (m *dvModel) live(txn string, sibs []dvSibling) []dvRecord {
	return slices.DeleteFunc(m.liveAll(txn, sibs), func(r dvRecord) bool { return r.Key != "" && r.Key != m.v.Options.Key })
}

// liveAll is live with the records naming another key of the account
// (two sharded layouts raced, SPEC.md 6.12): those a call is answered by.
func (m *dvModel) liveAll(txn string, sibs []dvSibling) []dvRecord {
	var out []dvRecord
	oldest := m.now.Add(-m.window)
	timed, ok := dvTxnTime(txn)
	inside := ok && m.v.Options.TxnTime != "" && !timed.Before(oldest)
	for _, sb := range sibs {
		if r := sb.Record; r != nil && r.Txn == txn {
			at, err := time.Parse(time.RFC3339Nano, r.At)
			if err != nil || at.Before(oldest) && !inside {
				continue
			}
			out = append(out, *r)
		}
	}
	return out
}

// old is the records of txn under this key from before the retry window
// (none while a timed txn's time is inside it): they answer no call, but
// date an idle writer (6.9) and are not made again by a retirement.
func (m *dvModel) old(txn string, sibs []dvSibling) []dvRecord {
	oldest := m.now.Add(-m.window)
	if timed, ok := dvTxnTime(txn); ok && m.v.Options.TxnTime != "" && !timed.Before(oldest) {
		return nil
	}
	var out []dvRecord
	for _, sb := range sibs {
		if r := sb.Record; r != nil && r.Txn == txn && (r.Key == "" || r.Key == m.v.Options.Key) {
			if at, err := time.Parse(time.RFC3339Nano, r.At); err == nil && at.Before(oldest) {
				out = append(out, *r)
			}
		}
	}
	return out
}

// recordPuts checks that puts are exactly the record puts of want (as
// ledger L, no token unless given) and returns the transactions whose put
// failed.
func (m *dvModel) recordPuts(L *dvLedgerModel, what string, puts []dvCall, want []dvRecord, token string) (failed []dvRecord) {
	if !m.samePuts(L, what, puts, want, func(dvRecord) (string, bool) { return token, true }) {
		return nil
	}
	for _, p := range puts {
		if p.Reply != "ok" {
			failed = append(failed, *p.Record)
		}
	}
	return failed
}

// samePuts checks that puts are exactly the record puts, as ledger L, of
// the records of want that token says are put, each with its token.
func (m *dvModel) samePuts(L *dvLedgerModel, what string, puts []dvCall, want []dvRecord, token func(dvRecord) (string, bool)) bool {
	var gotS, wantS []string
	for _, p := range puts {
		r := dvRecord{}
		if p.Record != nil {
			r = *p.Record
		}
		gotS = append(gotS, fmt.Sprintf("%s %+v as %s token %q", p.Key, r, p.Actor, p.Token))
	}
	for _, r := range want {
		if t, ok := token(r); ok {
			if m.recBase != m.v.Options.Key { // a sub-key's record names it (the vectors' store lists no keys)
				r.Key = m.v.Options.Key
			}
			wantS = append(wantS, fmt.Sprintf("%s %+v as %s token %q", dvRecordKey(m.recBase, r.Txn), r, L.writer, t))
		}
	}
	slices.Sort(gotS)
	slices.Sort(wantS)
	if !slices.Equal(gotS, wantS) {
		m.bad("%s: record puts %v, want %v", what, gotS, wantS)
		return false
	}
	return true
}

// flush is SPEC.md 6.11 step 3: the records an earlier cycle could not
// write are written (no token, or the confirming fetch's) before the next
// cycle or Find; it reports whether all were written.
func (m *dvModel) flush(L *dvLedgerModel) bool {
	if len(L.unindexed) == 0 {
		return true
	}
	judge := L.lastState
	gives := slices.ContainsFunc(slices.Collect(maps.Keys(L.unindexed)), func(x string) bool { return L.giving[x] })
	// The read first when a record gives L's copy up, or when the next
	// read would drop L's state (6.9 RetiredGrace): a take-out the records
	// make must not be dropped by the cycle's read.
	if gives || m.grace >= 0 && m.now.Sub(L.read) > m.grace/2 {
		var ok bool
		if judge, ok = m.flushRead(L); !ok {
			return false
		}
	}
	var want []dvRecord
	for _, x := range slices.Sorted(maps.Keys(L.unindexed)) {
		want = append(want, L.unindexed[x])
	}
	for _, r := range m.writeRecords(L, "flush", want, func(dvRecord) string { return "" }, judge) {
		if r.ok {
			if L.giving[r.rec.Txn] {
				m.takeOut(L, r.rec, L.lastState)
			}
			delete(L.unindexed, r.rec.Txn)
			delete(L.giving, r.rec.Txn)
		}
	}
	return len(L.unindexed) == 0
}

// readOwn is what a read of the account, fetched, tells L of its own
// writes (SPEC.md 6.9): a pending write the store holds (its records are
// then owed), and an entry ahead of the store that was retired (L takes
// its next incarnation, from the store's state).
func (m *dvModel) readOwn(L *dvLedgerModel, fetched dvEntries) {
	if L.pending {
		// The pending write is ≤ the fetch's merge: its own entries
		// are there, at their seq or later (6.9).
		view := fetched.txns()
		covered := true
		for t, a := range L.last {
			if x, ok := view[t]; !ok || x != a {
				covered = false
			}
		}
		for k, e := range L.sent { // as it was sent
			if f, ok := fetched[k]; strings.HasSuffix(k, "/"+L.writer) && (!ok || dvSeqOf(f) < dvSeqOf(e)) {
				covered = false
			}
		}
		if covered {
			m.owe(L, fetched) // the write in doubt is in the store
			// What L took out since is ahead of the store.
			L.pending, L.ahead = false, !reflect.DeepEqual(L.lastState, L.sent)
		}
	}
	if L.ahead && !L.pending && fetched.retired(L.writer) {
		// 6.9: the entry, ahead of the store after a refusal, was
		// retired: the state is the store's, and L takes its next
		// incarnation.
		L.last, L.lastState, L.ahead = map[string]int64{}, dvEntries{}, false
		m.incarnate(L)
	}
}

// flushRead is the read before L writes owed records that give its copy
// up (SPEC.md 6.11 step 6) or that a read would find L's state too old
// for (6.9 RetiredGrace), which are judged against it: the fetch, and L's
// own state unless it reads apart. ok is false when the read fails.
func (m *dvModel) flushRead(L *dvLedgerModel) (judge dvEntries, ok bool) {
	m.renew(L)
	if m.k >= len(m.calls) || m.calls[m.k].Method != "fetch" || m.calls[m.k].Key != m.v.Options.Key {
		m.bad("call %d: want a fetch of %q before owed records", m.k+1, m.v.Options.Key)
		return nil, false
	}
	f := m.calls[m.k]
	m.k++
	if f.Reply != "ok" {
		return nil, false
	}
	fetched := dvEntries{}
	for _, sb := range f.Siblings {
		m.see(fmt.Sprintf("step %d call %d", m.step, m.k), sb.State, "")
		fetched.add(sb.State)
	}
	m.readOwn(L, fetched)
	fs := m.fetchSet()
	kind := m.retractLate(L, fs, fetched)
	m.checkFetchSet(fs)
	if kind != "" {
		return nil, false
	}
	if L.pending || L.ahead {
		return L.lastState, true
	}
	all := maps.Clone(fetched)
	all.merge(L.lastState)
	return all, true
}

// takeOut is the end of SPEC.md 6.11 step 6: once r, a record giving L's
// copy up, is written, L takes its copy (any amount) out of its own
// entries in each of states (Retract: a newer seq; a folded copy leaves
// the total), its state is ahead of the store (6.9), and no later put of
// L holds it.
func (m *dvModel) takeOut(L *dvLedgerModel, r dvRecord, states ...dvEntries) {
	L.gaveUp[r.Txn], L.ahead = true, true
	for _, st := range states {
		for _, half := range []string{"P", "N"} {
			k := half + "/" + L.writer
			e, ok := st[k]
			if !ok || e.Retired {
				continue
			}
			held := func(x dvTxn) bool { return x.Txn == r.Txn }
			if i := slices.IndexFunc(e.Folded, held); i >= 0 {
				e.Total -= e.Folded[i].Amount
			} else if !slices.ContainsFunc(e.History, held) {
				continue
			}
			e.History = slices.DeleteFunc(slices.Clone(e.History), held)
			e.Folded = slices.DeleteFunc(slices.Clone(e.Folded), held)
			e.Seq = strconv.FormatUint(dvSeqOf(e)+1, 10)
			st[k] = e
		}
	}
}

// dvWritten is what became of one record to write.
type dvWritten struct {
	rec   dvRecord
	ok    bool    // written, or found written already
	owner *dvCopy // the other writer's copy it met (settle)
}

// dvMet is a copy of a ledger's writer that met holder's when it landed
// (SPEC.md 6.11 step 3, settles), watched until a read decides it.
type dvMet struct {
	rec    dvRecord
	holder string
}

// writeRecords checks the writing of the records want (SPEC.md 6.11 step
// 3): those naming L's writer are confirmed first, their keys fetched (a
// set): one whose live records of its amount name only other writers is
// settled (settle), and the others are put with that fetch's token; the records
// naming another writer are put with token(r), except that with judge
// (flush and cede) their keys are fetched in that set too and judged
// against judge: a copy another writer counted makes the record name that
// writer instead; a stale judge leaves it owed, or, for flush's, is put as
// it stands. The puts are one set. It returns each record's
// fate, in want's order.
func (m *dvModel) writeRecords(L *dvLedgerModel, what string, want []dvRecord, token func(dvRecord) string, judge dvEntries) []dvWritten {
	key := func(r dvRecord) string { return dvRecordKey(m.recBase, r.Txn) }
	out := make([]dvWritten, len(want))
	toks := map[string]string{}
	var mine, judged []string
	for i, r := range want {
		out[i].rec = r
		switch {
		case r.Writer == L.writer:
			mine = append(mine, key(r))
		case judge != nil:
			judged = append(judged, key(r))
		default:
			toks[key(r)] = token(r)
		}
	}
	if len(mine)+len(judged) > 0 {
		fetches := append(m.spare, m.set("fetch")...)
		m.spare = nil
		var got []string
		byKey := map[string]dvCall{}
		for _, f := range fetches {
			got = append(got, f.Key)
			byKey[f.Key] = f
		}
		slices.Sort(got)
		read := slices.Sorted(slices.Values(append(slices.Clone(mine), judged...)))
		if !slices.Equal(got, read) {
			m.bad("%s: record fetches %v, want %v", what, got, read)
			return out
		}
		for i, r := range want {
			f, ok := byKey[key(r)]
			if !ok || r.Writer == L.writer || judge == nil || f.Reply != "ok" {
				continue
			}
			switch v, holder := m.judgeCopies(r.Writer, judge, m.live(r.Txn, f.Siblings), r); v {
			case "stale":
				if what != "flush" {
					continue // failed; an owed record is put as it stands
				}
			case "counted":
				r.Writer, r.Version = holder, strconv.FormatUint(max(judge.version(holder), 1), 10)
				want[i], out[i].rec = r, r
			}
			toks[f.Key] = ""
		}
		for i, r := range want { // in order: the settled ones read one at a time
			f, ok := byKey[key(r)]
			if !ok || r.Writer != L.writer || f.Reply != "ok" {
				continue // a failed fetch: kept owed
			}
			var named, others bool
			for _, l := range m.live(r.Txn, f.Siblings) {
				if l.Amount == r.Amount {
					named = named || l.Writer == L.writer
					others = others || l.Writer != L.writer
				}
			}
			switch {
			case others && !named:
				if t, ok := m.settle(L, what, r); ok {
					toks[f.Key] = t
				} else if t == "" {
					out[i].ok = true // nothing to write
					if w, met := L.met[r.Txn]; met {
						out[i].owner = &dvCopy{Actor: w.holder, Amount: r.Amount}
					}
				}
			default:
				toks[f.Key] = m.putToken(r.Txn, f)
			}
		}
	}
	puts := m.set("put")
	for _, p := range puts {
		if i := slices.IndexFunc(want, func(w dvRecord) bool { return key(w) == p.Key }); i >= 0 && p.Reply == "ok" {
			out[i].ok = true
		}
	}
	m.samePuts(L, what, puts, want, func(r dvRecord) (string, bool) { t, ok := toks[key(r)]; return t, ok })
	return out
}

// settle is the rest of SPEC.md 6.11 step 3 for a record r naming L's
// writer whose transaction's live records of its amount name only other
// writers: the account is read, then r's key again. A record naming L's
// writer, or a writer whose entry in that state holds the transaction,
// means nothing is written (put false, token ""); a state older than a
// record, or a failed read, leaves r owed (put false, token "owed");
// none left: r is put with the second read's token. A writer past its
// record without the transaction counted it, and L's copy is taken out:
// no vector reaches that, so the model reports it.
func (m *dvModel) settle(L *dvLedgerModel, what string, r dvRecord) (token string, put bool) {
	next := func(k string) (dvCall, bool) {
		if m.k >= len(m.calls) || m.calls[m.k].Method != "fetch" || m.calls[m.k].Key != k {
			m.bad("%s: settling %s: want a fetch of %q", what, r.Txn, k)
			return dvCall{}, false
		}
		m.k++
		return m.calls[m.k-1], true
	}
	af, ok := next(m.v.Options.Key)
	if !ok || af.Reply != "ok" {
		return "owed", false
	}
	st := dvEntries{}
	for _, sb := range af.Siblings {
		st.add(sb.State)
	}
	rf, ok := next(dvRecordKey(m.recBase, r.Txn))
	if !ok || rf.Reply != "ok" {
		return "owed", false
	}
	switch v, holder := m.judgeCopies(L.writer, st, m.live(r.Txn, rf.Siblings), r); v {
	case "mine":
		return "", false
	case "meet":
		L.met[r.Txn] = dvMet{rec: r, holder: holder}
		return "", false
	case "stale":
		return "owed", false
	case "counted":
		m.bad("%s: %s was counted by another writer: the take-out is not modelled", what, r.Txn)
		return "", false
	}
	return m.putToken(r.Txn, rf), true
}

// judgeCopies judges the live records recs of r's transaction against st
// (SPEC.md 6.11 step 3), over those of r's amount: "mine" if one names
// w; else "meet" if a writer one names holds the transaction in st
// (holder, the first such); else "stale" if st holds a named writer below
// its record's version (folded bases are not modelled); else "counted" if
// any names another writer; else "none".
func (m *dvModel) judgeCopies(w string, st dvEntries, recs []dvRecord, r dvRecord) (verdict, holder string) {
	var named []dvRecord
	for _, l := range recs {
		if l.Amount == r.Amount {
			if l.Writer == w {
				return "mine", ""
			}
			named = append(named, l)
		}
	}
	for _, l := range named {
		if slices.ContainsFunc(st.held(l.Writer), func(x dvTxn) bool { return x.Txn == r.Txn }) {
			return "meet", l.Writer
		}
	}
	for _, l := range named {
		if v, _ := strconv.ParseUint(l.Version, 10, 64); st.version(l.Writer) < v {
			return "stale", ""
		}
	}
	if len(named) > 0 {
		return "counted", named[len(named)-1].Writer
	}
	return "none", ""
}

// resettle is the watch of SPEC.md 6.11 step 3: at each read, every copy
// of L's writer that met another writer's is decided again once the
// writer it met no longer holds the transaction in fetched: its record is
// read (in the set after the counter fetch, in id order) and judged
// (judgeCopies); a copy that left L's entry is no longer watched. It
// returns the error kind of a failed attempt ("" if none).
func (m *dvModel) resettle(L *dvLedgerModel, fs *dvFetchSet, fetched dvEntries) string {
	all := maps.Clone(fetched)
	all.merge(L.lastState)
	for _, t := range slices.Sorted(maps.Keys(L.met)) {
		w := L.met[t]
		if !slices.ContainsFunc(all.held(L.writer), func(x dvTxn) bool { return x.Txn == t }) {
			delete(L.met, t)
			continue
		}
		if slices.ContainsFunc(fetched.held(w.holder), func(x dvTxn) bool { return x.Txn == t }) {
			continue
		}
		recs, f := m.answer(fs, t)
		if f.Reply != "ok" {
			return "unavailable"
		}
		switch v, holder := m.judgeCopies(L.writer, fetched, recs, w.rec); v {
		case "meet":
			L.met[t] = dvMet{rec: w.rec, holder: holder}
			continue
		case "stale":
			return "unavailable"
		case "counted":
			m.bad("%s was counted by another writer: the take-out is not modelled", t)
		}
		delete(L.met, t)
	}
	return ""
}

// putToken is the token of a record Put after the fetch f of txn's record
// (SPEC.md 6.11 step 3): f's, when f read no live record of txn, else none.
func (m *dvModel) putToken(txn string, f dvCall) string {
	if len(m.liveAll(txn, f.Siblings)) > 0 {
		return ""
	}
	return f.Token
}

// cede is SPEC.md 6.11 step 6: before a write that may drop or unfold
// them, each copy of L's writer in merged that does not count is recorded
// as its owner's (no token). It reports whether all were written; those
// that were not are owed.
func (m *dvModel) cede(L *dvLedgerModel, merged dvEntries) bool {
	var want []dvRecord
	for _, x := range merged.held(L.writer) {
		if w, a, _, ok := merged.owner(x.Txn); ok && w != L.writer {
			want = append(want, dvRecord{Txn: x.Txn, Amount: dvInt(a), Writer: w, At: m.now.Format(time.RFC3339Nano), Version: strconv.FormatUint(max(merged.version(w), 1), 10)})
		}
	}
	if len(want) == 0 {
		return true
	}
	all := true
	for _, r := range m.writeRecords(L, "cede", want, func(dvRecord) string { return "" }, merged) {
		if !r.ok {
			L.unindexed[r.rec.Txn], L.giving[r.rec.Txn], all = r.rec, true, false
			continue
		}
		m.takeOut(L, r.rec, merged, L.lastState)
	}
	return all
}

// owe is SPEC.md 6.11 step 3 for a write in doubt: once state, which holds
// it, is known to have landed, the record of each of its transactions whose
// callers were not told it landed is owed (written by the next flush),
// naming the copy that counts in state; when that copy is another
// writer's and L's entries hold one of the same amount, L's is watched.
func (m *dvModel) owe(L *dvLedgerModel, state dvEntries) {
	for t := range L.unacked {
		w, a, _, ok := state.owner(t)
		if !ok {
			continue
		}
		L.unindexed[t] = dvRecord{Txn: t, Amount: dvInt(a), Writer: w, At: m.now.Format(time.RFC3339Nano), Version: strconv.FormatUint(max(state.version(w), 1), 10)}
		delete(L.giving, t)
		if w != L.writer && slices.Contains(state.held(L.writer), dvTxn{t, dvInt(a)}) {
			// L's copy meets the owner's: watched (6.11 step 3).
			L.met[t] = dvMet{rec: dvRecord{Txn: t, Amount: dvInt(a)}, holder: w}
		}
	}
	L.unacked = map[string]time.Time{}
}

// owner is the copy of txn that counts (SPEC.md 6.6): its actor and signed
// amount. A folded copy beats one in a history, then the smaller actor id,
// then P.
func (m dvEntries) owner(txn string) (actor string, amount int64, folded, ok bool) {
	for _, half := range []string{"P", "N"} {
		for k, e := range m {
			h, a, _ := strings.Cut(k, "/")
			if h != half || a == "" {
				continue
			}
			for i, l := range [][]dvTxn{e.History, e.Folded} {
				for _, x := range l {
					if x.Txn != txn {
						continue
					}
					f := i == 1
					if !ok || f && !folded || f == folded && a < actor {
						actor, amount, folded, ok = a, int64(x.Amount), f, true
						if half == "N" {
							amount = -amount
						}
					}
				}
			}
		}
	}
	return actor, amount, folded, ok
}

// heldKind is the error kind of a failed call of txn: with ambiguous_write
// too while txn is in the ledger's pending write (SPEC.md 6.9).
func (m *dvModel) heldKind(L *dvLedgerModel, txn, kind string) string {
	if _, doubt := L.unacked[txn]; L.pending && doubt && kind != "ambiguous_write" {
		return "ambiguous_write+" + kind
	}
	return kind
}

// dvFetchSet is the record fetches that follow a counter fetch (a set,
// SPEC.md 11.1), answered by key as the model asks for them.
type dvFetchSet struct {
	byKey map[string][]dvCall
	got   []string
	want  []string
}

func (m *dvModel) fetchSet() *dvFetchSet {
	fs := &dvFetchSet{byKey: map[string][]dvCall{}}
	for _, f := range m.set("fetch") {
		fs.byKey[f.Key] = append(fs.byKey[f.Key], f)
		fs.got = append(fs.got, f.Key)
	}
	return fs
}

// answer is the live records of txn the set's fetch of its key read, and
// that fetch (Reply "missing" when the set has none).
func (m *dvModel) answer(fs *dvFetchSet, txn string) ([]dvRecord, dvCall) {
	key := dvRecordKey(m.recBase, txn)
	fs.want = append(fs.want, key)
	if len(fs.byKey[key]) == 0 {
		return nil, dvCall{Method: "fetch", Key: key, Reply: "missing"}
	}
	f := fs.byKey[key][0]
	fs.byKey[key] = fs.byKey[key][1:]
	return m.liveAll(txn, f.Siblings), f
}

func (m *dvModel) checkFetchSet(fs *dvFetchSet) {
	slices.Sort(fs.got)
	slices.Sort(fs.want)
	if slices.Equal(fs.got, fs.want) {
		return
	}
	// The cycle's records may be confirmed right after this set, with no
	// call between (6.11 step 3): the fetches no lookup wanted are theirs.
	rest := slices.Clone(fs.got)
	for _, k := range fs.want {
		i := slices.Index(rest, k)
		if i < 0 {
			m.bad("record fetches %v, want %v", fs.got, fs.want)
			return
		}
		rest = slices.Delete(rest, i, i+1)
	}
	for _, k := range rest {
		m.spare = append(m.spare, fs.byKey[k][0])
		fs.byKey[k] = fs.byKey[k][1:]
	}
}

// retractLate is SPEC.md 6.11 step 4: while L's write is pending, the
// record of every unacknowledged transaction of it that the fetch lacks is
// read, in id order. A live record naming L's own writer keeps the
// transaction; else one naming another key of the account, or another
// writer whose entry the fetch holds at or past the record's version,
// takes it out of the pending write; else
// a record of another writer means the fetch is older than the record,
// and the attempt fails unavailable. It returns the error kind of a failed
// attempt ("" if none).
func (m *dvModel) retractLate(L *dvLedgerModel, fs *dvFetchSet, fetched dvEntries) string {
	if !L.pending {
		return ""
	}
	view := fetched.txns()
	for _, t := range slices.Sorted(maps.Keys(L.unacked)) {
		// In doubt for RetireAfter/2: judged even when the fetch knows it.
		// One that would count beside the fetch's copies stays unjudged.
		long := m.retireAfter > 0 && m.now.Sub(L.unacked[t]) >= m.retireAfter/2
		both := maps.Clone(fetched)
		both.merge(L.lastState)
		if w, _, _, ok := both.owner(t); ok && w == L.writer {
			long = false
		}
		if _, ok := view[t]; ok && !long {
			continue
		}
		recs, f := m.answer(fs, t)
		if f.Reply != "ok" {
			return "unavailable"
		}
		own, covered, stale := false, false, false
		for _, r := range recs {
			rv, _ := strconv.ParseUint(r.Version, 10, 64)
			switch {
			case r.Writer == L.writer:
				own = true
			case r.Key != "" && r.Key != m.v.Options.Key: // landed on another key of the account
				covered = true
			case fetched.version(r.Writer) >= rv:
				covered = true
			default:
				stale = true
			}
		}
		switch {
		case own:
		case covered:
			delete(L.unacked, t)
			delete(L.last, t)
			for _, half := range []string{"P", "N"} {
				e, ok := L.lastState[half+"/"+L.writer]
				if !ok {
					continue
				}
				e.History = slices.DeleteFunc(slices.Clone(e.History), func(x dvTxn) bool { return x.Txn == t })
				e.Folded = slices.DeleteFunc(slices.Clone(e.Folded), func(x dvTxn) bool { return x.Txn == t })
				L.lastState[half+"/"+L.writer] = e
			}
		case stale:
			return "unavailable"
		}
	}
	return ""
}

// version is actor's version (SPEC.md 6.11): the sum of the seqs of its
// entries in both halves, live or retired.
func (m dvEntries) version(actor string) uint64 {
	var v uint64
	for _, half := range []string{"P", "N"} {
		if e, ok := m[half+"/"+actor]; ok {
			v += dvSeqOf(e)
		}
	}
	return v
}

// idle is SPEC.md 6.9 RetireAfter for a write of L over merged, when a
// pass is due: every other live actor seen at an unchanged version (the
// sum of its seqs) for RetireAfter, counted from the first write that saw
// the version or from the record of its newest transaction, read once per
// version (at most 16 reads and 16 actors per write). It returns the
// actors to retire, and schedules the next pass. The pass is over the
// state being written: when the write applies a transaction, the ledger's
// own entry is live in it.
func (m *dvModel) idle(L *dvLedgerModel, fs *dvFetchSet, merged dvEntries, applies bool) (retire []string) {
	if m.retireAfter <= 0 {
		return nil
	}
	if !L.nextPass.IsZero() && m.now.Before(L.nextPass) && !m.now.Before(L.lastPass) {
		return nil // no pass due
	}
	L.lastPass, L.passed = m.now, true
	next := m.now.Add(m.retireAfter / ledger.RetirePassDivisor)
	undated := false
	pass := map[string]bool{}
	lookups, restRead := 0, false
	var seen dvSeenPass
	live := merged.live()
	if _, ok := live[L.writer]; applies && !ok {
		live[L.writer] = 0 // its entry in the state written (skipped below)
	}
	actors := slices.Sorted(maps.Keys(live))
	if n := len(actors); n > 1 {
		// The pass starts at the actor of index FNV-1a-32(writer) mod n.
		h := fnv.New32a()
		h.Write([]byte(L.writer))
		k := int(h.Sum32() % uint32(n))
		actors = append(actors[k:], actors[:k]...)
	}
	// A writer first seen: the stored sightings are read once, first.
	if slices.ContainsFunc(actors, func(a string) bool {
		sg, ok := L.sightings[a]
		return a != L.writer && (!ok || sg.version == live[a] && !sg.dated)
	}) {
		m.seenFetch(&seen)
		// The pass's record fetches follow it: one set with those before.
		for _, f := range m.set("fetch") {
			fs.byKey[f.Key] = append(fs.byKey[f.Key], f)
			fs.got = append(fs.got, f.Key)
		}
	}
	for _, a := range actors {
		version := live[a]
		if a == L.writer {
			continue
		}
		pass[a] = true
		sg, ok := L.sightings[a]
		if ok && sg.version != version {
			// It wrote since it was first seen: idle from now, undated.
			sg = dvSighting{version: version, since: m.now, dated: true}
		}
		if !ok {
			sg = dvSighting{version: version, since: m.now}
		}
		// Dated by the records naming it of its newest credit and newest
		// debit (the later of their times), at most 16 record reads a
		// write: a record naming another writer dates that writer. Read
		// again once it is due, unless read at this version: one of them
		// counted by another writer first (judgeCopies: counted) is a
		// late copy, which leaves uncounted when the actor retires.
		var newest []dvTxn
		credit, debit := dvTxn{}, dvTxn{}
		for _, x := range merged.held(a) { // P then N, oldest first
			if x.Amount > 0 {
				credit = x
			} else {
				debit = x
			}
		}
		for _, x := range []dvTxn{credit, debit} {
			if x.Txn != "" {
				newest = append(newest, x)
			}
		}
		if (!sg.dated || !sg.checked && !m.now.Before(sg.since.Add(m.retireAfter))) && lookups+len(newest) <= ledger.MaxRetirePerWrite {
			lookups += len(newest)
			var last time.Time
			var late []string
			unsure := false
			named := 0 // txns with a record naming a
			judge := func(txns []dvTxn) {
				for _, x := range txns {
					recs, f := m.answer(fs, x.Txn)
					// Records from before the window date a as live ones do.
					old := m.old(x.Txn, f.Siblings)
					own := func(r dvRecord) bool { return r.Writer == a }
					if slices.ContainsFunc(recs, own) || slices.ContainsFunc(old, own) {
						named++
					}
					for _, r := range old {
						if at, err := time.Parse(time.RFC3339Nano, r.At); err == nil && own(r) && at.After(last) {
							last = at
						}
					}
					for _, r := range recs {
						if at, err := time.Parse(time.RFC3339Nano, r.At); err == nil && r.Writer == a && at.After(last) {
							last = at
						}
						// Another writer's record (a give-up's) the state
						// read is older than, unless a base folded since
						// explains the version: not judged.
						v, _ := strconv.ParseUint(r.Version, 10, 64)
						at, _ := time.Parse(time.RFC3339Nano, r.At)
						folded := false
						for _, h := range []string{"P", "N"} {
							if b := merged.base(h); b != nil && int64(b.Cutoff) > at.UnixNano() {
								folded = true
							}
						}
						if r.Writer != a && merged.version(r.Writer) < v && !folded {
							unsure = true
						}
					}
					switch v, _ := m.judgeCopies(a, merged, recs, dvRecord{Txn: x.Txn, Amount: x.Amount}); {
					case f.Reply != "ok", v == "stale":
						unsure = true // not judged: read again at the next pass
					case v == "counted":
						late = append(late, x.Txn)
					}
				}
			}
			judge(newest)
			// Dated only when each of them has a record naming a: one
			// whose record is owed may have been applied since.
			if !sg.dated && named == len(newest) && !last.IsZero() && last.Before(sg.since) {
				sg.since = last
			}
			// No record dates it: a stored sighting of this version
			// may (SPEC.md 6.9), else this pass stores one.
			if !sg.dated && !(named == len(newest) && !last.IsZero()) {
				if at, found := m.seenDating(&seen, a, version); found && at.Before(sg.since) {
					sg.since = at
				} else if !found {
					seen.add = append(seen.add, dvSeenEntry{writer: a, version: version, at: m.now})
				}
			}
			// Once it is due, the records of its other copies are read
			// too, to find a late one: within the budget, but the first
			// such actor of a pass whatever its number of copies.
			due := !m.now.Before(sg.since.Add(m.retireAfter))
			rest := map[string]dvTxn{}
			for _, x := range merged.held(a) {
				rest[x.Txn] = x
			}
			for _, x := range newest {
				delete(rest, x.Txn)
			}
			if !unsure && len(rest) > 0 && due {
				unsure = restRead && lookups+len(rest) > ledger.MaxRetirePerWrite
				if !unsure {
					lookups, restRead = lookups+len(rest), true
					judge(slices.SortedFunc(maps.Values(rest), func(x, y dvTxn) int { return strings.Compare(x.Txn, y.Txn) }))
				}
			}
			sg.dated, sg.checked, sg.late = true, !unsure && due, late
		}
		if _, found := m.seenDating(&seen, a, version); !sg.dated && seen.ok && !found {
			seen.add = append(seen.add, dvSeenEntry{writer: a, version: version, at: m.now})
		}
		L.sightings[a] = sg
		due := sg.since.Add(m.retireAfter)
		undated = undated || !sg.dated || !sg.checked && !m.now.Before(due)
		switch {
		case !sg.checked && !m.now.Before(due):
		case !m.now.Before(due):
			retire = append(retire, a)
		case due.Before(next):
			next = due
		}
	}
	m.seenPut(L, &seen, merged)
	for a := range L.sightings {
		if !pass[a] {
			delete(L.sightings, a)
		}
	}
	L.nextPass = next
	if undated {
		L.nextPass = time.Time{}
	}
	return retire
}

// dvSeenEntry is a stored sighting as the model keeps it.
type dvSeenEntry struct {
	writer  string
	version uint64
	at      time.Time
}

// dvSeenPass is what one pass read of its key's stored sightings (SPEC.md
// 6.9): fetched before a pass that first sees a writer.
type dvSeenPass struct {
	ok    bool
	token string
	at    map[dvSeenEntry]time.Time // by writer and version (at zero): the earliest
	add   []dvSeenEntry
}

// dvSeenKey is the key of key's stored sightings (SPEC.md 6.9).
func dvSeenKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return "counterkit.seen/" + base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(h[:20])
}

// seenFetch reads the stored sightings, the next call of the script.
func (m *dvModel) seenFetch(seen *dvSeenPass) {
	key := dvSeenKey(m.v.Options.Key)
	if m.k >= len(m.calls) || m.calls[m.k].Method != "fetch" || m.calls[m.k].Key != key {
		m.bad("a fetch of the stored sightings %s must follow", key)
		return
	}
	f := m.calls[m.k]
	m.k++
	if f.Reply != "ok" {
		return
	}
	seen.ok, seen.token, seen.at = true, f.Token, map[dvSeenEntry]time.Time{}
	for _, sb := range f.Siblings {
		for _, x := range sb.Sightings {
			ver, _ := strconv.ParseUint(x.Version, 10, 64)
			at, _ := time.Parse(time.RFC3339Nano, x.At)
			k := dvSeenEntry{writer: x.Writer, version: ver}
			if t, ok := seen.at[k]; !ok || at.Before(t) {
				seen.at[k] = at
			}
		}
	}
}

// seenDating is when a stored sighting saw a at version v: found is
// false for none (or none read) and for a time after the model's clock.
func (m *dvModel) seenDating(seen *dvSeenPass, a string, v uint64) (time.Time, bool) {
	at, found := seen.at[dvSeenEntry{writer: a, version: v}]
	if !found || at.After(m.now) {
		return time.Time{}, false
	}
	return at, true
}

// seenPut checks the put of the stored sightings a pass that added some
// makes after its fetch succeeded: those read whose writer is live in
// merged at that version or below, and those added (the earlier time of
// one writer and version), sorted by writer and version, at most the
// ledger's MaxActors (the earliest), as L's writer with the fetch's token. A failed put changes
// nothing.
func (m *dvModel) seenPut(L *dvLedgerModel, seen *dvSeenPass, merged dvEntries) {
	if !seen.ok || len(seen.add) == 0 {
		return
	}
	live := merged.live()
	first := map[dvSeenEntry]time.Time{}
	for k, at := range seen.at {
		if v, ok := live[k.writer]; ok && k.version >= v {
			first[k] = at
		}
	}
	for _, x := range seen.add {
		k := dvSeenEntry{writer: x.writer, version: x.version}
		if at, ok := first[k]; !ok || x.at.Before(at) {
			first[k] = x.at
		}
	}
	var all []dvSeenEntry
	for k, at := range first {
		all = append(all, dvSeenEntry{writer: k.writer, version: k.version, at: at})
	}
	byKey := func(a, b dvSeenEntry) int {
		return cmp.Or(strings.Compare(a.writer, b.writer), cmp.Compare(a.version, b.version))
	}
	if n := cmp.Or(m.v.Options.MaxActors, tpncounter.DefaultMaxActors); len(all) > n {
		slices.SortFunc(all, func(a, b dvSeenEntry) int { return cmp.Or(a.at.Compare(b.at), byKey(a, b)) })
		all = all[:n]
	}
	slices.SortFunc(all, byKey)
	want := []dvSeen{}
	for _, x := range all {
		want = append(want, dvSeen{Writer: x.writer, Version: strconv.FormatUint(x.version, 10), At: x.at.UTC().Format(time.RFC3339Nano)})
	}
	key := dvSeenKey(m.v.Options.Key)
	if m.k >= len(m.calls) || m.calls[m.k].Method != "put" || m.calls[m.k].Key != key {
		m.bad("a put of the stored sightings %s must follow", key)
		return
	}
	p := m.calls[m.k]
	m.k++
	if p.Actor != L.writer || p.Token != seen.token || !reflect.DeepEqual(p.Sightings, want) {
		m.bad("stored sightings put as %q with token %q: %v; want as %q with the fetch's token %q: %v", p.Actor, p.Token, p.Sightings, L.writer, seen.token, want)
	}
}

// retire puts the records of the retiring actors' transactions (SPEC.md
// 6.11 step 5: once per version, at most 16 actors' a pass) and returns
// the actors retired: every record written and no other entry sharing a
// transaction (6.10), or, for those Retire declined, the group linked to
// them by shared transactions, all retirable and recorded, retired with one
// RetireAll.
func (m *dvModel) retire(L *dvLedgerModel, merged dvEntries, idle []string) map[string]bool {
	if len(idle) == 0 {
		return nil
	}
	at := m.now.Format(time.RFC3339Nano)
	// The write's own state (the put after the records' fetches and
	// puts), for a record naming L's writer: its version in the state
	// written.
	written := dvEntries{}
	for _, c := range m.calls[m.k:] {
		if !ledger.IsRecordKey(c.Key) {
			if c.Method == "put" && c.Key == m.v.Options.Key {
				written.add(c.State)
			}
			break
		}
	}
	budget, tried := ledger.MaxRetirePerWrite, map[string]bool{}
	unrecorded := false
	record := func(a string) bool {
		sg := L.sightings[a]
		if sg.recorded || tried[a] || budget == 0 {
			return sg.recorded
		}
		budget--
		tried[a] = true
		sg.recorded = m.recordRetiring(L, merged, written, a, at)
		L.sightings[a] = sg
		return sg.recorded
	}
	out := map[string]bool{}
	var shared []string
	for _, a := range idle {
		switch {
		case !record(a):
			unrecorded = true
		case !merged.shares(a) && !merged.bothHalves(a):
			out[a] = true
		default:
			shared = append(shared, a)
		}
	}
	for _, g := range merged.groups(shared) {
		if slices.ContainsFunc(g, func(a string) bool { return !slices.Contains(idle, a) }) {
			continue // a member still writes, or is not idle for RetireAfter and checked
		}
		all := true
		for _, a := range g {
			all = record(a) && all
		}
		if !all {
			unrecorded = true
			continue
		}
		if !slices.ContainsFunc(g, merged.bothHalves) {
			for _, a := range g {
				out[a] = true
			}
		}
	}
	// The next pass is on the next write when records are left to write
	// (refused, or beyond the 16 actors a pass records).
	if unrecorded {
		L.nextPass = time.Time{}
	}
	return out
}

// recordRetiring is SPEC.md 6.11 step 5 for actor a: the record keys of
// its transactions are fetched (a set; fetches of the next actor's that
// follow with no put between are left in m.spare), and the records that
// no live record already makes (same writer and amount) are put (a set),
// with the fetch's token when it found no live record. A failed fetch puts
// nothing; a failed put is owed. It reports whether all were made.
func (m *dvModel) recordRetiring(L *dvLedgerModel, merged, written dvEntries, a, at string) bool {
	var want []dvRecord
	var keys []string
	for _, x := range merged.held(a) {
		if slices.Contains(L.sightings[a].late, x.Txn) {
			continue // another writer counted it, and recorded it (step 5)
		}
		// The copy that counts, when it has this amount (step 6).
		w := a
		if o, amount, _, ok := merged.owner(x.Txn); ok && amount == int64(x.Amount) {
			w = o
		}
		if _, doubt := L.unacked[x.Txn]; w == L.writer && doubt {
			return false // L's own copy in doubt counts: not recorded, nothing fetched
		}
		v := merged.version(w)
		if w == L.writer {
			// Its version last known stored; else in the state written.
			v = cmp.Or(L.stored, written.version(w))
		}
		want = append(want, dvRecord{Txn: x.Txn, Amount: x.Amount, Writer: w, At: at, Version: strconv.FormatUint(max(v, 1), 10)})
		keys = append(keys, dvRecordKey(m.recBase, x.Txn))
	}
	if len(want) == 0 {
		return true
	}
	fetches := append(m.spare, m.set("fetch")...)
	m.spare = nil
	byKey := map[string]dvCall{}
	for _, f := range fetches {
		if _, dup := byKey[f.Key]; !dup && slices.Contains(keys, f.Key) {
			byKey[f.Key] = f
		} else {
			m.spare = append(m.spare, f)
		}
	}
	if len(byKey) != len(slices.Compact(slices.Sorted(slices.Values(keys)))) {
		m.bad("retirement of %s: record fetches %v, want %v", a, slices.Sorted(maps.Keys(byKey)), keys)
		return false
	}
	toks := map[string]string{}
	var put []dvRecord
	for _, r := range want {
		f := byKey[dvRecordKey(m.recBase, r.Txn)]
		if f.Reply != "ok" {
			return false // nothing put: tried again at a later pass
		}
		made := func(l dvRecord) bool { return l.Writer == r.Writer && l.Amount == r.Amount }
		if !slices.ContainsFunc(m.live(r.Txn, f.Siblings), made) && !slices.ContainsFunc(m.old(r.Txn, f.Siblings), made) {
			put = append(put, r)
			toks[f.Key] = m.putToken(r.Txn, f)
		}
	}
	if len(put) == 0 {
		return true
	}
	puts := m.set("put")
	if !m.samePuts(L, "retirement of "+a, puts, put, func(r dvRecord) (string, bool) { return toks[dvRecordKey(m.recBase, r.Txn)], true }) {
		return false
	}
	ok := true
	for _, p := range puts {
		if p.Reply != "ok" {
			L.unindexed[p.Record.Txn], ok = *p.Record, false
		}
	}
	return ok
}

// groups returns, for the actors of from, the sets of live actors linked
// to each by transactions their live entries hold, directly or through
// others (SPEC.md 6.9 RetireAfter).
func (m dvEntries) groups(from []string) [][]string {
	seen := map[string]bool{}
	var out [][]string
	for _, a := range from {
		if seen[a] {
			continue
		}
		seen[a] = true
		g := []string{a}
		for i := 0; i < len(g); i++ {
			for b := range m.live() {
				if !seen[b] && m.sharesWith(g[i], b) {
					seen[b] = true
					g = append(g, b)
				}
			}
		}
		slices.Sort(g)
		out = append(out, g)
	}
	return out
}

// dvMember is one credit or debit as the model runs it.
type dvMember struct {
	s                dvStep
	signed           int64
	known            *dvRecord // this attempt's lookup found its record
	recFetch         dvCall    // this attempt's lookup ("" token when none)
	done             bool
	applied, now     bool // an attempt applied it; the current attempt did
	elsewhere        bool // applied by an attempt, but known from another writer's copy
	attempts         int
	outcome, errKind string
	landed           bool
	value            *int64
	owner            *dvCopy
	version          uint64 // its writer's version in the state that landed it
}

// lookup is SPEC.md 6.11 step 1 for member c, whose transaction the
// attempt's fetch does not hold: its record fetch, from the set of record
// fetches after the counter fetch. It returns false when that fetch
// failed, which fails the attempt.
func (m *dvModel) lookup(fs *dvFetchSet, c *dvMember) bool {
	recs, f := m.answer(fs, c.s.Txn)
	c.recFetch = f
	if f.Reply != "ok" {
		return false
	}
	for _, sb := range f.Siblings {
		if sb.Record == nil {
			// A sibling that does not decode: this call fails, the
			// others go on.
			c.errKind, c.done = "corrupt", true
			return true
		}
	}
	for _, r := range recs {
		if r.Key != "" && r.Key != m.v.Options.Key && !dvSubKeyOf(m.recBase, m.v.Options.Key, r.Key) {
			c.errKind, c.done = "corrupt", true // no writer names that key (6.11 Encoding)
			return true
		}
	}
	other := false
	for _, r := range recs {
		if int64(r.Amount) == c.signed && c.known == nil {
			c.known = &r
		}
		other = other || int64(r.Amount) != c.signed
	}
	switch {
	case other && c.known == nil:
		c.errKind, c.done = "conflicting_transaction", true
	case c.known == nil && m.v.Options.TxnTime != "":
		// With TxnTime, a time before now - W is outside_window,
		// nothing written (6.11 step 1).
		if at, ok := dvTxnTime(c.s.Txn); ok && at.Before(m.now.Add(-m.window)) {
			c.errKind, c.done = "outside_window", true
		}
	}
	return true
}

func dvSigned(s dvStep) int64 {
	if s.Amount == nil {
		return 0
	}
	if s.Op == "debit" {
		return -int64(*s.Amount)
	}
	return int64(*s.Amount)
}

// timeless reports a credit or debit that TxnTime refuses before anything
// else (SPEC.md 6.11 step 1, no store call): invalid_txn for an id with no
// time, outside_window for a time more than FutureSkew (default 1 minute)
// after the clock.
func (m *dvModel) timeless(c *dvMember) bool {
	if m.v.Options.TxnTime == "" {
		return false
	}
	skew := cmp.Or(dvDur(m.v.Options.FutureSkewNS), time.Minute)
	switch at, ok := dvTxnTime(c.s.Txn); {
	case !ok:
		c.errKind = "invalid_txn"
	case at.After(m.now.Add(skew)):
		c.errKind = "outside_window"
	default:
		return false
	}
	c.done = true
	return true
}

// single checks a credit, debit, find or value step.
func (m *dvModel) single(L *dvLedgerModel, s dvStep) {
	c := &dvMember{s: s, signed: dvSigned(s)}
	update := s.Op == "credit" || s.Op == "debit"
	switch {
	case update && m.timeless(c):
	case s.Op != "value" && !m.flush(L):
		c.done, c.errKind, c.attempts = true, m.heldKind(L, s.Txn, "unavailable"), 1
	case update:
		m.cycle(L, []*dvMember{c}, s, nil, nil)
	default:
		m.cycle(L, nil, s, &c.value, &c.errKind)
	}
	if update {
		m.recordLanded(L, []*dvMember{c})
		m.checkMember(c, s)
		return
	}
	if m.part != nil { // one sub-key of a sharded Value: the caller checks
		m.part.value, m.part.errKind = c.value, c.errKind
		return
	}
	if c.errKind != s.Error {
		m.bad("error %q, the model says %q", s.Error, c.errKind)
	}
	if dvShow(s.Value) != dvShow64(c.value) {
		m.bad("value %s, the model says %s", dvShow(s.Value), dvShow64(c.value))
	}
}

func (m *dvModel) checkMember(c *dvMember, s dvStep) {
	if c.errKind != s.Error {
		m.bad("%s: error %q, the model says %q", s.Txn, s.Error, c.errKind)
	}
	if !c.landed && !c.applied {
		c.outcome = ""
	}
	if s.Outcome != c.outcome || s.Attempts != c.attempts || s.Landed == nil || *s.Landed != c.landed {
		m.bad("%s: outcome %q, attempts %d, landed %v; the model says %q, %d, %v", s.Txn, s.Outcome, s.Attempts, dvShowB(s.Landed), c.outcome, c.attempts, c.landed)
	}
	if c.landed {
		switch {
		case s.Owner == nil || s.Owner.Amount != dvInt(c.signed):
			m.bad("%s: the owner's copy must carry the amount %d", s.Txn, c.signed)
		case c.owner != nil && *s.Owner != *c.owner:
			m.bad("%s: owner %+v, the model says %+v", s.Txn, *s.Owner, *c.owner)
		}
	}
	if dvShow(s.Value) != dvShow64(c.value) {
		m.bad("%s: value %s, the model says %s", s.Txn, dvShow(s.Value), dvShow64(c.value))
	}
}

func dvShowB(b *bool) string {
	if b == nil {
		return "none"
	}
	return strconv.FormatBool(*b)
}

// recordLanded is SPEC.md 6.11 step 3: one record put for each member
// that an attempt of the cycle applied and that landed, with the token of
// its last attempt's lookup (none when that attempt's fetch held it):
// writer the owner's actor, else the ledger's; version that writer's in
// the state that landed it, at least 1. A failed one is kept to be written
// before the next cycle, and its call fails ambiguous_write.
func (m *dvModel) recordLanded(L *dvLedgerModel, members []*dvMember) {
	defer m.recordOwnDuplicates(L, members)
	var want []dvRecord
	tok := map[string]string{}
	for _, c := range members {
		if !c.landed || !c.applied || c.errKind != "" {
			continue
		}
		w := L.writer
		if c.s.Owner != nil && c.s.Owner.Actor != "" && !(c.applied && c.s.Outcome == "duplicate" && !c.elsewhere) {
			// The copy that counts in the state that landed it. An applied
			// call answered duplicate met another writer's copy at its
			// record step (6.11 step 3): its record named L's own copy.
			w = c.s.Owner.Actor
		}
		r := dvRecord{Txn: c.s.Txn, Amount: dvInt(c.signed), Writer: w, At: m.now.Format(time.RFC3339Nano), Version: strconv.FormatUint(max(c.version, 1), 10)}
		want = append(want, r)
		tok[r.Txn] = m.putToken(r.Txn, c.recFetch)
	}
	if len(want) == 0 {
		return
	}
	for _, r := range m.writeRecords(L, "records", want, func(r dvRecord) string { return tok[r.Txn] }, nil) {
		if r.owner != nil {
			// Its copy met another writer's, which landed first: a
			// duplicate (6.11 step 3).
			for _, c := range members {
				if c.s.Txn == r.rec.Txn && c.landed && c.applied && c.errKind == "" {
					c.outcome, c.owner = "duplicate", r.owner
				}
			}
		}
		if r.ok {
			delete(L.unindexed, r.rec.Txn) // written: no longer owed
			continue
		}
		L.unindexed[r.rec.Txn] = r.rec
		// The call landed but is not acknowledged until its record is
		// written: ambiguous_write.
		for _, c := range members {
			if c.s.Txn == r.rec.Txn && c.landed && c.applied && c.errKind == "" {
				c.errKind = "ambiguous_write"
			}
		}
	}
}

// recordOwnDuplicates is the end of SPEC.md 6.11 step 3: a member
// answered duplicate from L's own copy, whose record L owes (its write was
// in doubt until this cycle's read), is acknowledged only once the record
// is written: the owed records are flushed after the cycle's record puts,
// as before a cycle, and a member whose record stays owed fails
// ambiguous_write (with the flush's unavailable).
func (m *dvModel) recordOwnDuplicates(L *dvLedgerModel, members []*dvMember) {
	owed := func(c *dvMember) bool {
		_, ok := L.unindexed[c.s.Txn]
		return ok && c.errKind == "" && c.landed && !c.applied && c.s.Owner != nil && c.s.Owner.Actor == L.writer
	}
	if !slices.ContainsFunc(members, owed) {
		return
	}
	m.flush(L)
	for _, c := range members {
		if owed(c) {
			c.errKind = "ambiguous_write+unavailable"
		}
	}
}

// compact carries out the compaction plan of SPEC.md 6.4 on the entry key
// (half/actor) for states without shared copies: fold the oldest history
// items beyond H, then forget the oldest folded items beyond F that no
// other entry holds.
func (m dvEntries) compact(key string, o dvOptions) {
	e, ok := m[key]
	if !ok || e.Retired {
		return
	}
	h, f := o.HistoryLength, o.FoldedLength
	if h == 0 {
		h = tpncounter.DefaultHistoryLength
	}
	if f == 0 {
		f = h
	}
	k := max(0, len(e.History)-h)
	folded := append(slices.Clone(e.Folded), e.History[:k]...)
	for _, x := range e.History[:k] {
		e.Total += x.Amount
	}
	e.History = slices.Clone(e.History[k:])
	excess := len(folded) - f
	e.Folded = nil
	for i, x := range folded {
		if i < excess && !m.heldElsewhere(key, x.Txn) {
			continue
		}
		e.Folded = append(e.Folded, x)
	}
	m[key] = e
}

func (m dvEntries) heldElsewhere(key, txn string) bool {
	for k, e := range m {
		if k == key || strings.SplitN(k, "/", 2)[1] == strings.SplitN(key, "/", 2)[1] {
			continue
		}
		for _, x := range append(slices.Clone(e.History), e.Folded...) {
			if x.Txn == txn {
				return true
			}
		}
	}
	return false
}

// apply is Apply's compaction and append (SPEC.md 6.3 steps 6-7) on the
// entry key; a retired entry becomes live.
func (m dvEntries) apply(key string, x dvTxn, o dvOptions) {
	m.compact(key, o)
	e := m[key]
	if e.Retired {
		e.Retired = false
	}
	e.Actor = strings.SplitN(key, "/", 2)[1]
	e.History = append(slices.Clone(e.History), x)
	m[key] = e
}

// txns lists the transactions the live entries hold, with signed amounts.
func (m dvEntries) txns() map[string]int64 {
	out := map[string]int64{}
	for _, half := range []string{"P", "N"} {
		for k, e := range m {
			if !strings.HasPrefix(k, half+"/") {
				continue
			}
			for _, list := range [][]dvTxn{e.History, e.Folded} {
				for _, x := range list {
					dvAddTxn(out, half, x)
				}
			}
		}
	}
	return out
}

// cycle runs the attempts of one cycle: for members (credits and debits),
// or, with none, a find (s.Op "find") or a value read, whose value and
// error it sets.
func (m *dvModel) cycle(L *dvLedgerModel, members []*dvMember, s dvStep, value **int64, errKind *string) {
	for attempt := 1; ; attempt++ {
		var waiting []*dvMember
		for _, c := range members {
			if !c.done {
				waiting = append(waiting, c)
			}
		}
		if len(members) > 0 && len(waiting) == 0 {
			return
		}
		for _, c := range waiting {
			c.now, c.attempts = false, attempt
		}
		fail := func(kind string) {
			for _, c := range waiting {
				c.errKind, c.done = m.heldKind(L, c.s.Txn, kind), true
				if c.applied {
					c.outcome = "applied" // an earlier attempt applied it (11.1, Errors)
				}
			}
			if errKind != nil {
				*errKind = kind
			}
		}
		m.renew(L)
		if m.k >= len(m.calls) || m.calls[m.k].Method != "fetch" || m.calls[m.k].Key != m.v.Options.Key {
			m.bad("call %d: want a fetch of %q", m.k+1, m.v.Options.Key)
			fail("model: no fetch")
			return
		}
		f := m.calls[m.k]
		m.k++
		if f.Reply != "ok" {
			fail("unavailable")
			return
		}
		fetched := dvEntries{}
		folded := map[string]bool{}
		for _, sb := range f.Siblings {
			m.see(fmt.Sprintf("step %d call %d", m.step, m.k), sb.State, "")
			fetched.add(sb.State)
			if sb.State != nil {
				for _, e := range append(slices.Clone(sb.State.P), sb.State.N...) {
					for _, x := range e.Folded {
						folded[x.Txn] = true
					}
				}
			}
		}
		view := fetched.txns()
		m.readOwn(L, fetched)
		// The record fetches after the counter fetch are one set (11.1):
		// step 4's, the lookups, the dating of idle actors.
		fs := m.fetchSet()
		if kind := cmp.Or(m.retractLate(L, fs, fetched), m.resettle(L, fs, fetched)); kind != "" {
			m.checkFetchSet(fs)
			fail(kind)
			return
		}
		all := maps.Clone(fetched)
		all.merge(L.lastState)
		// What the ledger judges against: the fetch, and its own state
		// unless it reads apart (a write of it pending, or ahead: 6.9).
		judged := fetched
		if !L.pending && !L.ahead {
			judged, L.stored = all, all.version(L.writer)
			maps.Copy(view, all.txns())
		}
		// 6.11 step 1: every member whose transaction the fetch does not
		// hold reads its record (after step 4's reads); a failed read
		// fails the attempt.
		lookedUp := true
		for _, c := range waiting {
			c.known, c.recFetch = nil, dvCall{}
			if _, ok := view[c.s.Txn]; !ok && !m.lookup(fs, c) {
				lookedUp = false
			}
		}
		if !lookedUp {
			m.checkFetchSet(fs)
			fail("unavailable")
			return
		}
		before := all.value()
		// Judge the members the fetch (or the records) know.
		var writers []*dvMember
		for _, c := range waiting {
			if c.done {
				continue // refused at its record
			}
			x, ok := view[c.s.Txn]
			switch {
			case ok && x != c.signed:
				c.errKind, c.done = "conflicting_transaction", true
			case ok || c.known != nil:
				c.landed, c.done, c.outcome, c.value = true, true, "duplicate", &before
				if ok && folded[c.s.Txn] {
					c.outcome = "duplicate_folded"
				}
				w := L.writer
				if c.s.Owner != nil && c.s.Owner.Actor != "" {
					w = c.s.Owner.Actor
				}
				if !ok {
					w = c.known.Writer
				}
				if c.applied && w == L.writer {
					c.outcome = "applied" // the copy that counts is an earlier attempt's (6.9)
				}
				c.elsewhere = c.applied && w != L.writer
				c.version = judged.version(w)
				if !ok {
					// Known from its record alone (6.11 step 2).
					c.owner = &dvCopy{Actor: c.known.Writer, Amount: dvInt(c.signed), Folded: true}
					if c.known.Writer == w {
						kv, _ := strconv.ParseUint(c.known.Version, 10, 64)
						c.version = max(c.version, kv)
					}
				}
			default:
				writers = append(writers, c)
			}
		}
		writes := len(writers) > 0 || s.Op == "find"
		var idle []string
		L.passed = false
		if writes {
			idle = m.idle(L, fs, all, len(writers) > 0)
		}
		m.checkFetchSet(fs)
		if !writes {
			if value != nil {
				*value = &before
			}
			return
		}
		if s.Op == "find" && s.Error == "overflow" {
			// Compact refuses: an entry of this writer with a fold to do
			// is at seq 2^63-1 (SPEC.md 6.6); nothing is written.
			found := false
			for k, e := range fetched {
				found = found || (strings.HasSuffix(k, "/"+L.writer) && e.Seq == strconv.FormatUint(tpncounter.MaxSeq, 10))
			}
			if !found {
				m.bad("find fails overflow, but no entry of %s is at the largest seq", L.writer)
			}
			*errKind = "overflow"
			return
		}
		if !m.cede(L, all) {
			fail("unavailable")
			return
		}
		// Apply in arrival order (6.9 group commit): a member of a
		// transaction an earlier member of this attempt, or the ledger's
		// pending write, holds is a duplicate that stays in the group, or
		// conflicting_transaction for another amount.
		next := maps.Clone(all)
		kept := writers[:0:0]
		appliedNow := false
		held := next.txns()
		var capped []*dvMember
		var retired map[string]bool // by the pass, when it ran early (6.9)
		early := false
		nApplied := 0
		hl, fl := m.v.Options.HistoryLength, m.v.Options.FoldedLength
		if hl == 0 {
			hl = tpncounter.DefaultHistoryLength
		}
		if fl == 0 {
			fl = hl
		}
		for _, c := range writers {
			if a, ok := held[c.s.Txn]; ok {
				if a != c.signed {
					c.errKind, c.done = "conflicting_transaction", true
					continue
				}
				kept = append(kept, c)
				continue
			}
			if len(L.unacked)+len(L.unindexed)+nApplied >= hl+fl {
				// 6.11 step 3: it could fold out an unrecorded txn.
				c.errKind, c.done = "unavailable", true
				capped = append(capped, c)
				continue
			}
			half, amount := "P", c.signed
			if amount < 0 {
				half, amount = "N", -amount
			}
			if !early && (!m.dvApplyFits(next, L.writer, c.s.Txn) || !m.dvActorsFit(next, half, L.writer, nil)) && len(next.live()) >= cmp.Or(m.v.Options.MaxActors, tpncounter.DefaultMaxActors) {
				// too_large in a full state: the pass retires now (6.9).
				early, retired = true, m.retire(L, all, idle)
			}
			if !m.dvApplyFits(next, L.writer, c.s.Txn) || !m.dvActorsFit(next, half, L.writer, retired) {
				c.errKind, c.done = "too_large", true // 6.3 step 3: nothing changes
				continue
			}
			nApplied++
			next.apply(half+"/"+L.writer, dvTxn{Txn: c.s.Txn, Amount: dvInt(amount)}, m.v.Options)
			held = next.txns()
			c.applied, c.now, appliedNow = true, true, true
			kept = append(kept, c)
		}
		writers = kept
		if len(writers) == 0 && len(capped) > 0 {
			// The pending write alone, as merged (6.11 step 3); once it
			// has landed and the owed records are written, the calls held
			// back are tried again.
			landed := true
			if L.pending {
				landed = false
				if m.k >= len(m.calls) || m.calls[m.k].Method != "put" || m.calls[m.k].Key != m.v.Options.Key {
					m.bad("attempt %d: a put of the pending write must follow", attempt)
					return
				}
				p := m.calls[m.k]
				m.k++
				if written := dvTxns(p.State); !reflect.DeepEqual(written, all.txns()) {
					m.bad("attempt %d: the pending write's put writes %s", attempt, dvShowTxnDiff(written, all.txns()))
				}
				state := dvEntries{}
				state.add(p.State)
				switch p.Reply {
				case "ok":
					m.owe(L, state)
					L.last, L.lastState, L.pending, L.ahead, landed = dvTxns(p.State), state, false, false, true
				case "ambiguous":
					L.last, L.lastState, L.sent = dvTxns(p.State), state, maps.Clone(state)
				}
			}
			if landed && m.flush(L) {
				for _, c := range capped {
					c.errKind, c.done = "", false
				}
			}
			continue
		}
		if !appliedNow {
			next.compact("P/"+L.writer, m.v.Options)
			next.compact("N/"+L.writer, m.v.Options)
		}
		// A pass folds what was retired more than RetiredGrace ago
		// (SPEC.md 6.9, 6.10); what this write retires is not (its
		// retirement time is now).
		if L.passed && m.grace >= 0 {
			next.fold(m.now.Add(-m.grace).UnixNano())
		}
		want := next.txns()
		if len(writers) == 0 && s.Op != "find" {
			return
		}
		if len(members) == 1 && members[0].s.Error == "overflow" && m.k >= len(m.calls) {
			// A debit whose entry in N cannot take a new seq fails overflow
			// with nothing written (SPEC.md 6.3 step 6).
			members[0].errKind, members[0].done = "overflow", true
			return
		}
		if !early {
			retired = m.retire(L, all, idle)
		}
		if m.k >= len(m.calls) || m.calls[m.k].Method != "put" || m.calls[m.k].Key != m.v.Options.Key {
			m.bad("attempt %d: a put of %q must follow", attempt, m.v.Options.Key)
			fail("model: no put")
			return
		}
		p := m.calls[m.k]
		m.k++
		if p.Actor != L.writer || p.Token != f.Token {
			m.bad("attempt %d: put as %q with token %q, want as %q with the fetch's token %q", attempt, p.Actor, p.Token, L.writer, f.Token)
		}
		m.see(fmt.Sprintf("step %d call %d", m.step, m.k), p.State, L.writer)
		for a := range retired {
			for _, x := range all.held(a) {
				// Unless a live entry keeps its copy (a retired copy
				// that did not count: SPEC.md 6.10).
				kept := false
				for k := range next {
					if _, actor, _ := strings.Cut(k, "/"); !retired[actor] && !next[k].Retired {
						kept = kept || slices.ContainsFunc(next.held(actor), func(y dvTxn) bool { return y.Txn == x.Txn })
					}
				}
				if !kept {
					delete(want, x.Txn)
				}
			}
		}
		written := dvTxns(p.State)
		if !reflect.DeepEqual(written, want) {
			m.bad("attempt %d: put writes %s", attempt, dvShowTxnDiff(written, want))
		}
		m.checkEntries(attempt, p.State, next)
		for t := range L.gaveUp {
			if slices.ContainsFunc(next.held(L.writer), func(x dvTxn) bool { return x.Txn == t }) {
				m.bad("attempt %d: the model's state holds %s's copy of %s, given up", attempt, L.writer, t)
			}
			if p.State != nil {
				for _, e := range append(slices.Clone(p.State.P), p.State.N...) {
					if e.Actor == L.writer && slices.ContainsFunc(append(slices.Clone(e.History), e.Folded...), func(x dvTxn) bool { return x.Txn == t }) {
						m.bad("attempt %d: put holds %s's copy of %s, which it gave up (6.11 step 6)", attempt, L.writer, t)
					}
				}
			}
		}
		if p.State != nil {
			for a := range retired {
				ok := false
				for _, e := range append(slices.Clone(p.State.P), p.State.N...) {
					// Retired with the writing ledger's time (6.9).
					ok = ok || e.Actor == a && e.Retired && int64(e.RetiredAt) == m.now.UnixNano()
				}
				if !ok {
					m.bad("attempt %d: put does not retire %s", attempt, a)
				}
			}
		}
		state := dvEntries{}
		state.add(p.State)
		// The ledger's own entry changed in a state it wrote (6.9
		// RetiredGrace).
		for _, half := range []string{"P", "N"} {
			if e, ok := state[half+"/"+L.writer]; ok && e.Seq != L.ownSeq[half] {
				L.ownSeq[half], L.ownAt[half] = e.Seq, m.now
			}
		}
		switch p.Reply {
		case "ok":
			m.owe(L, state)
			L.last, L.lastState, L.pending, L.ahead, L.stored = written, state, false, false, state.version(L.writer)
			n := state.value()
			for _, c := range writers {
				c.value, c.landed, c.done = &n, true, true
				w := L.writer
				if c.s.Owner != nil && c.s.Owner.Actor != "" {
					w = c.s.Owner.Actor
				}
				c.version = state.version(w)
				c.outcome = "duplicate"
				if c.applied {
					c.outcome = "applied"
				}
			}
			if value != nil {
				*value = &n
			}
			return
		case "ambiguous":
			L.last, L.lastState, L.sent, L.pending = written, state, maps.Clone(state), true
			for _, c := range writers {
				if c.applied {
					L.unacked[c.s.Txn] = m.now
				}
			}
		case "too_large":
			// Refused for what it is (SPEC.md 10.1: values of at most
			// 8 MiB): taken back out, and no attempt follows.
			L.ahead = L.ahead || !L.pending && state.version(L.writer) != all.version(L.writer)
			for _, c := range writers {
				c.errKind, c.done = m.heldKind(L, c.s.Txn, "too_large"), true
				if c.applied {
					c.outcome = "applied"
				}
			}
			if errKind != nil {
				*errKind = "too_large"
			}
			return
		}
		// refused: forgotten (taken back out); the outcome still says
		// applied (11.1, Errors).
		L.ahead = L.ahead || p.Reply == "refused" && !L.pending && state.version(L.writer) != all.version(L.writer)
		if attempt > m.v.Options.RetryCount {
			kind := "ambiguous_write"
			if p.Reply == "refused" {
				kind = "unavailable"
			}
			for _, c := range writers {
				c.errKind, c.done = m.heldKind(L, c.s.Txn, kind), true
				if c.applied {
					c.outcome = "applied"
				}
			}
			if errKind != nil {
				*errKind = kind
			}
			return
		}
	}
}

// checkEntries checks that a put holds the entries of next, the model's
// state for it, and no other (the actors retired in it included), and
// next's bases (SPEC.md 6.10: what its passes folded, and the larger base
// of each read).
func (m *dvModel) checkEntries(attempt int, s *dvState, next dvEntries) {
	if s == nil {
		return
	}
	var got, want []string
	for half, es := range map[string][]dvEntry{"P": s.P, "N": s.N} {
		for _, e := range es {
			got = append(got, half+"/"+e.Actor)
			if w, ok := next[half+"/"+e.Actor]; ok && e.Retired && w.Retired && e.Seq != w.Seq {
				m.bad("attempt %d: put holds %s's retired entry in %s at seq %s, want %s", attempt, e.Actor, half, e.Seq, w.Seq)
			}
		}
	}
	for k := range next {
		if !strings.HasSuffix(k, "/") {
			want = append(want, k)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		m.bad("attempt %d: put holds the entries %v, want %v", attempt, got, want)
	}
	for half, b := range map[string]*dvBase{"P": s.PBase, "N": s.NBase} {
		if w := next.base(half); !reflect.DeepEqual(b, w) {
			m.bad("attempt %d: put's base of %s is %s, want %s", attempt, half, dvShowBase(b), dvShowBase(w))
		}
	}
}

func dvShowBase(b *dvBase) string {
	if b == nil {
		return "none"
	}
	return fmt.Sprintf("{cutoff %d, total %d, forgot %d}", b.Cutoff, b.Total, b.Forgot)
}

// group checks a group step (SPEC.md 11.1): the first member's cycle
// alone (its fetch held while the others queue), its record; then one
// cycle for the others, after which each landed new member's record is
// put.
func (m *dvModel) group(L *dvLedgerModel, s dvStep) {
	if len(s.Group) < 2 {
		m.bad("a group needs at least 2 members")
		return
	}
	cs := make([]*dvMember, len(s.Group))
	for i, g := range s.Group {
		cs[i] = &dvMember{s: g, signed: dvSigned(g)}
	}
	var queued []*dvMember
	for _, c := range cs[1:] {
		if !m.timeless(c) {
			queued = append(queued, c)
		}
	}
	if m.timeless(cs[0]) || !m.flush(L) {
		m.bad("the first member must reach its cycle")
		return
	}
	m.cycle(L, cs[:1], s, nil, nil)
	m.recordLanded(L, cs[:1])
	if len(queued) > 0 {
		if !m.flush(L) {
			for _, c := range queued {
				c.done, c.errKind, c.attempts = true, m.heldKind(L, c.s.Txn, "unavailable"), 1
			}
		} else {
			m.cycle(L, queued, s, nil, nil)
		}
		m.recordLanded(L, queued)
	}
	for _, c := range cs {
		m.checkMember(c, c.s)
	}
}

// dvRecordKey is the key of txn's record for account (SPEC.md 6.11):
// "counterkit.txn/" and the base32 (extended hex alphabet, no padding) of
// the first 20 bytes of SHA-256(account, 0x00, txn).
func dvRecordKey(account, txn string) string {
	h := sha256.Sum256([]byte(account + "\x00" + txn))
	return "counterkit.txn/" + base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(h[:20])
}

// dvSameMuts compares the mutations of an apply with the ones a model
// expects (op, partition, key, end, value, timestamp).
func dvSameMuts(got, want []dvMut) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Op != w.Op || g.Partition != w.Partition || g.Key != w.Key || g.End != w.End || g.Value != w.Value || g.TS != w.TS {
			return false
		}
	}
	return true
}

// dvEncValue is the encoding of a described tally row value, in hex.
func dvEncValue(d *dvDesc) string {
	_, v, err := dvEncDesc("tally", d)
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString(v)
}

// dvModelTally checks tally vectors against SPEC.md 7.4. A mutator's
// expires_at is its birth plus Lifetime; it refuses updates from expires_at
// - Margin on. A flush puts the whole state as the shard row at
// max(last + 1, now) µs, resends an ambiguous answer with the same bytes
// and timestamp up to `resends` times, and never sends at or after
// expires_at. Retry resends the unresolved bytes, Abandon writes the
// acknowledged state at a fresh timestamp. A read combines the tally with
// the shards above its folded_through; GC folds the shards with
// folded_through < expires_at < now - grace in one batch at the largest
// expires_at folded. With nothing unresolved, a read is the initial value
// plus every acknowledged update, counted once.
func dvModelTally(v dvVector) []string {
	var out []string
	o := v.Options
	lifetime, margin, grace := dvDur(o.LifetimeNS).Microseconds(), dvDur(o.MarginNS).Microseconds(), dvDur(o.GraceNS).Microseconds()
	resends := *o.Resends
	type mutModel struct {
		id                           string
		expires, lastTS              int64
		committed, pending, lastSent string // hex; "" none
		committedSum, staged, ack    int64
		dirty, dead                  bool
	}
	muts := map[string]*mutModel{}
	shard := func(m *mutModel, sum int64) string {
		return dvEncValue(&dvDesc{Mutator: m.id, ExpiresAt: dvI(m.expires), Sum: dvI(sum)})
	}
	// read returns the exact value of rows (SPEC.md 7.1, 7.4).
	read := func(rows []dvRow) (t int64, value *big.Int, shards []*dvDesc) {
		value = new(big.Int)
		for _, r := range rows {
			if r.Is.TallyRow {
				t = int64(*r.Is.FoldedThrough)
				value.SetInt64(int64(*r.Is.Sum))
			} else {
				shards = append(shards, r.Is)
			}
		}
		slices.SortFunc(shards, func(a, b *dvDesc) int {
			if c := int64(*a.ExpiresAt) - int64(*b.ExpiresAt); c != 0 {
				return map[bool]int{true: -1, false: 1}[c < 0]
			}
			return strings.Compare(a.Mutator, b.Mutator)
		})
		for _, s := range shards {
			if int64(*s.ExpiresAt) > t {
				value.Add(value, big.NewInt(int64(*s.Sum)))
			}
		}
		return t, value, shards
	}
	_, initial, _ := read(v.InitialRows)
	var now int64
	for i, s := range v.Steps {
		bad := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("step %d (%s %s): ", i+1, s.Op, s.Mutator)+fmt.Sprintf(format, args...))
		}
		if s.Clock != "" {
			now = dvMustTime(s.Clock).UnixMicro()
		}
		calls := s.Calls
		next := func(method string) (dvCall, bool) {
			if len(calls) == 0 || calls[0].Method != method {
				bad("want a %s call next", method)
				return dvCall{}, false
			}
			c := calls[0]
			calls = calls[1:]
			return c, true
		}
		m := muts[s.Mutator]
		errKind := ""
		rollback := func() { m.staged, m.dirty = m.committedSum, false }
		usable := func() bool {
			switch {
			case m.pending != "":
				errKind = "ambiguous_write"
			case m.dead:
				errKind = "expired"
			case now >= m.expires-margin:
				m.dead = true
				rollback()
				errKind = "expired"
			default:
				return true
			}
			return false
		}
		// send writes data at ts: one put of the shard row per attempt.
		send := func(data string, ts int64) string {
			m.lastTS, m.lastSent = ts, data
			want := []dvMut{{Op: "put", Partition: o.Key, Key: hex.EncodeToString(append([]byte("s"), m.id...)), Value: data, TS: dvInt(ts)}}
			// Every failed attempt is resent, refused or ambiguous, never
			// once now ≥ expires_at (7.4).
			ambiguous, refused := false, false
			for attempt := 0; attempt <= resends; attempt++ {
				if now >= m.expires {
					m.dead = true
					if ambiguous {
						return "expired+ambiguous_write"
					}
					return "expired+unavailable"
				}
				c, ok := next("apply")
				if !ok {
					return "?"
				}
				if !dvSameMuts(c.Mutations, want) {
					bad("attempt %d writes %+v, want %+v", attempt+1, c.Mutations, want)
				}
				if c.ClockAfter != "" {
					now = dvMustTime(c.ClockAfter).UnixMicro()
				}
				switch c.Reply {
				case "ok":
					return ""
				case "refused":
					refused = true
				default:
					ambiguous, refused = true, false
				}
			}
			switch {
			case ambiguous && refused:
				return "ambiguous_write+unavailable"
			case ambiguous:
				return "ambiguous_write"
			}
			return "unavailable"
		}
		nextTS := func() (int64, bool) {
			ts := max(m.lastTS+1, now)
			if ts >= m.expires {
				m.dead = true
				return 0, false
			}
			return ts, true
		}
		flush := func() {
			if !usable() || !m.dirty {
				return
			}
			data := shard(m, m.staged)
			ts, ok := nextTS()
			if !ok {
				rollback()
				errKind = "expired"
				return
			}
			switch errKind = send(data, ts); errKind {
			case "":
				m.committed, m.committedSum, m.ack, m.dirty = data, m.staged, m.staged, false
			case "ambiguous_write", "ambiguous_write+unavailable", "expired+ambiguous_write":
				m.pending = data
			default:
				rollback()
			}
		}
		resolve := func(target string) bool {
			if m.dead || now >= m.expires {
				m.dead = true
				errKind = "expired+ambiguous_write"
				return false
			}
			ts := m.lastTS
			if target != m.lastSent {
				var ok bool
				if ts, ok = nextTS(); !ok {
					errKind = "expired+ambiguous_write"
					return false
				}
			}
			// A failed round of a resolution leaves the outcome unknown:
			// an earlier attempt may have landed.
			if errKind = send(target, ts); errKind == "" {
				return true
			}
			// ambiguous_write, with the send's kinds: an earlier attempt
			// may have landed (7.4).
			var kinds []string
			for _, k := range dvKinds {
				if k.name == "ambiguous_write" || slices.Contains(strings.Split(errKind, "+"), k.name) {
					kinds = append(kinds, k.name)
				}
			}
			errKind = strings.Join(kinds, "+")
			return false
		}
		adds := int64(0)
		for _, x := range s.Values {
			adds += int64(x)
		}
		switch s.Op {
		case "new_mutator":
			m = &mutModel{id: s.Mutator, expires: now + lifetime}
			muts[s.Mutator] = m
			if s.ExpiresAt == nil || int64(*s.ExpiresAt) != m.expires {
				bad("expires_at %s, the model says %d", dvShow(s.ExpiresAt), m.expires)
			}
		case "stage", "update":
			if usable() {
				m.staged, m.dirty = m.staged+adds, true
				if s.Op == "update" {
					flush()
				}
			}
		case "flush":
			flush()
		case "retry":
			if m.pending != "" && resolve(m.pending) {
				m.committed, m.pending, m.dirty = m.pending, "", false
				m.committedSum, m.ack = m.staged, m.staged
			}
		case "abandon":
			if m.pending != "" {
				target := m.committed
				if target == "" {
					target = shard(m, 0)
				}
				if resolve(target) {
					m.committed, m.pending = target, ""
					rollback()
				}
			}
		case "read", "read_complete":
			c, ok := next("snapshot")
			if !ok {
				break
			}
			level := map[string]string{"read": "any", "read_complete": "complete"}[s.Op]
			if c.Key != o.Key || c.Level != level || c.Limit != o.MaxRows {
				bad("snapshot of %q at %s limit %d, want %q at %s limit %d", c.Key, c.Level, c.Limit, o.Key, level, o.MaxRows)
			}
			t, value, _ := read(c.Rows)
			if t > now { // folded through the future: no GC wrote it (7.4)
				errKind = "corrupt"
				break
			}
			if dvShow(s.Value) != strconv.FormatInt(int64(*clampBig(value)), 10) { // clamped past int64
				bad("value %s, the rows read give %s", dvShow(s.Value), value)
			}
			unresolved := false
			plain := new(big.Int).Set(initial)
			for _, mm := range muts {
				unresolved = unresolved || mm.pending != ""
				plain.Add(plain, big.NewInt(mm.ack))
			}
			if !unresolved && c.Stale == 0 && value.Cmp(plain) != 0 {
				bad("value %s, but the acknowledged updates sum to %s", value, plain)
			}
		case "gc":
			c, ok := next("snapshot")
			if !ok {
				break
			}
			if c.Key != o.Key || c.Level != "complete" || c.Limit != o.MaxRows {
				bad("GC must read %q completely with limit %d", o.Key, o.MaxRows)
			}
			t, _, shards := read(c.Rows)
			if t > now {
				errKind = "corrupt"
				break
			}
			acc := int64(0)
			for _, r := range c.Rows {
				if r.Is.TallyRow {
					acc = int64(*r.Is.Sum)
				}
			}
			cutoff, newT := now-grace, t
			gc := dvGC{Delete: []string{}}
			var final []*dvDesc
			for _, sh := range shards {
				switch exp := int64(*sh.ExpiresAt); {
				case exp <= t:
					gc.Delete = append(gc.Delete, sh.Mutator)
				case exp < cutoff:
					final = append(final, sh)
				default:
					gc.Live++
				}
			}
			// The longest run of whole expires_at groups whose tally fits
			// in int64 folds; the rest stay live (SPEC.md 7.4).
			n, run := 0, big.NewInt(acc)
			for i, sh := range final {
				run.Add(run, big.NewInt(int64(*sh.Sum)))
				if run.IsInt64() && (i+1 == len(final) || *final[i+1].ExpiresAt != *sh.ExpiresAt) {
					n = i + 1
				}
			}
			for _, sh := range final[:n] {
				acc += int64(*sh.Sum)
				newT = max(newT, int64(*sh.ExpiresAt))
				gc.Folded++
				gc.Delete = append(gc.Delete, sh.Mutator)
			}
			gc.Live += len(final) - n
			if len(gc.Delete) > 0 {
				slices.Sort(gc.Delete)
				gc.WriteTS = dvInt(newT)
				want := []dvMut{{Op: "put", Partition: o.Key, Key: hex.EncodeToString([]byte("t")),
					Value: dvEncValue(&dvDesc{TallyRow: true, FoldedThrough: dvI(newT), Sum: dvI(acc)}), TS: dvInt(newT)}}
				for _, id := range gc.Delete {
					want = append(want, dvMut{Op: "delete", Partition: o.Key, Key: hex.EncodeToString(append([]byte("s"), id...)), TS: dvInt(newT)})
				}
				errKind = "ambiguous_write"
				for attempt := 0; attempt <= resends && errKind == "ambiguous_write"; attempt++ {
					a, ok := next("apply")
					if !ok {
						break
					}
					if !dvSameMuts(a.Mutations, want) {
						bad("GC writes %+v, want %+v", a.Mutations, want)
					}
					errKind = map[string]string{"ok": "", "refused": "unavailable", "ambiguous": "ambiguous_write"}[a.Reply]
				}
			}
			if errKind == "" && (s.GC == nil || !reflect.DeepEqual(*s.GC, gc)) {
				bad("gc %+v, the model says %+v", s.GC, gc)
			}
		default:
			bad("unknown op")
		}
		if len(calls) > 0 {
			bad("%d calls more than the model makes", len(calls))
		}
		if errKind != s.Error {
			bad("error %q, the model says %q", s.Error, errKind)
		}
		if m != nil && (s.Unresolved == nil || *s.Unresolved != (m.pending != "")) {
			bad("unresolved %v, the model says %v", s.Unresolved, m.pending != "")
		}
	}
	return out
}

// dvIDTime is the time of a version 1 UUID (SPEC.md 8.1): 100 ns ticks since
// 1582-10-15.
func dvIDTime(s string) time.Time {
	id := must(dvParseUUID(s))
	ticks := uint64(id[6]&0x0f)<<56 | uint64(id[7])<<48 | uint64(id[4])<<40 | uint64(id[5])<<32 | uint64(binary.BigEndian.Uint32(id[0:4]))
	// 1582-10-15 is 0x01b21dd213814000 ticks before the Unix epoch.
	unix := int64(ticks) - 0x01b21dd213814000
	sec, rest := unix/10_000_000, unix%10_000_000
	if rest < 0 {
		sec, rest = sec-1, rest+10_000_000
	}
	return time.Unix(sec, rest*100).UTC()
}

// dvCompareIDs is the id order of SPEC.md 8.1: ticks, then bytes 0-7
// unsigned, then bytes 8-15 one by one as signed bytes.
func dvCompareIDs(a, b string) int {
	x, _ := dvParseUUID(a)
	y, _ := dvParseUUID(b)
	if c := dvIDTime(a).Compare(dvIDTime(b)); c != 0 {
		return c
	}
	if c := bytes.Compare(x[:8], y[:8]); c != 0 {
		return c
	}
	for i := 8; i < 16; i++ {
		if int8(x[i]) != int8(y[i]) {
			if int8(x[i]) < int8(y[i]) {
				return -1
			}
			return 1
		}
	}
	return 0
}

// dvStamp is a process write clock (SPEC.md 10.2): a batch of n mutations
// takes max(now, last + 1) ... + n - 1, in µs.
type dvStamp struct{ last int64 }

func (c *dvStamp) take(now time.Time, n int) int64 {
	ts := max(now.UnixMicro(), c.last+1, 1)
	c.last = ts + int64(max(n, 1)) - 1
	return ts
}

func dvReplyKind(reply string) string {
	return map[string]string{"ok": "", "refused": "unavailable", "ambiguous": "ambiguous_write"}[reply]
}

// dvLanded reports whether a write call took effect.
func dvLanded(c dvCall) bool {
	return c.Reply == "ok" || (c.Reply == "ambiguous" && c.Landed != nil && *c.Landed)
}

// dvBefore is the hex of the 8-byte row key from which a deltalog scan
// reads the cells whose id time is before t (SPEC.md 8.5): the last tick
// before t, shifted over the version nibble, with 0xf in it, inverted.
func dvBefore(t time.Time) string {
	epoch := time.Date(1582, time.October, 15, 0, 0, 0, 0, time.UTC)
	d := new(big.Int).Sub(big.NewInt(t.Unix()), big.NewInt(epoch.Unix()))
	d.Mul(d, big.NewInt(1e9)).Add(d, big.NewInt(int64(t.Nanosecond()))) // ns since the epoch
	ticks := new(big.Int).Sub(d, big.NewInt(1))
	ticks.Div(ticks, big.NewInt(100)) // the last tick strictly before t
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ^(ticks.Uint64()<<4 | 0xf))
	return hex.EncodeToString(b[:])
}

// dvModelDeltalog checks deltalog vectors against SPEC.md 8.2-8.5. Add
// refuses an id outside [now - window, now + future skew] with no call and
// otherwise puts the regular cell, at max(now, last + 1) µs, once. Read
// scans the partition from its first row; Merge from the first cell older
// than its cutoff, Compact from the first older than now - compact grace -
// window - safety margin. Each fails corrupt at a merge cell not older than
// now - window. Read stops at
// the first merge cell and sums what it read exactly. Merge takes
// cutoff = now - window - safety margin and writes, at the newest read cell
// older than the cutoff (unless it is a merge cell), a merge cell with the
// aggregate of that cell and everything read below it, written = now.
// Compact stops at the first merge cell with written <= now - compact
// grace and deletes from the regular cell at its id to the partition's
// end. A read is the sum of every distinct update that landed; a merge
// cell holds the sum of every update that landed at or below its id.
func dvModelDeltalog(v dvVector) []string {
	var out []string
	o := v.Options
	var now time.Time
	var clock dvStamp
	landed := map[string]int64{} // update id -> delta, for every add that landed
	for i, s := range v.Steps {
		bad := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("step %d (%s): ", i+1, s.Op)+fmt.Sprintf(format, args...))
		}
		if s.Clock != "" {
			now = dvMustTime(s.Clock)
		}
		calls := s.Calls
		next := func(method string) (dvCall, bool) {
			if len(calls) == 0 || calls[0].Method != method {
				bad("want a %s call next", method)
				return dvCall{}, false
			}
			c := calls[0]
			calls = calls[1:]
			return c, true
		}
		errKind := ""
		// scan reads the partition from from (hex; "": its first row) and
		// returns the rows read up to the first one stop accepts (included).
		scan := func(from string, stop func(*dvDesc) bool) ([]*dvDesc, bool) {
			c, ok := next("scan")
			if !ok {
				return nil, false
			}
			if c.Key != o.Key || c.From != from || c.Level != "complete" {
				bad("scan of %q from %q at %s, want %q from %q, complete", c.Key, c.From, c.Level, o.Key, from)
			}
			if errKind = dvReplyKind(c.Reply); errKind != "" {
				return nil, false
			}
			var read []*dvDesc
			corrupt := false
			for _, r := range c.Rows {
				read = append(read, r.Is)
				// A merge cell not older than now - window is written by
				// no merge (SPEC.md 8.5).
				if corrupt = r.Is.Kind == "m" && !dvIDTime(r.Is.ID).Before(now.Add(-dvDur(o.WindowNS))); corrupt || stop(r.Is) {
					break
				}
			}
			if c.Visited == nil || *c.Visited != len(read) {
				bad("visited %v rows, the model reads %d", c.Visited, len(read))
			}
			if corrupt {
				errKind = "corrupt"
				return nil, false
			}
			return read, true
		}
		// write expects want in one apply, at ts (0: the write clock's next).
		write := func(want []dvMut, ts int64) {
			c, ok := next("apply")
			if !ok {
				return
			}
			if ts == 0 {
				ts = clock.take(now, 1)
			}
			for i := range want {
				want[i].TS = dvInt(ts)
			}
			if !dvSameMuts(c.Mutations, want) {
				bad("writes %+v, want %+v", c.Mutations, want)
			}
			errKind = dvReplyKind(c.Reply)
		}
		isMerge := func(d *dvDesc) bool { return d.Kind == "m" }
		switch s.Op {
		case "add":
			at := dvIDTime(s.ID)
			if at.Before(now.Add(-dvDur(o.WindowNS))) || at.After(now.Add(dvDur(o.FutureSkewNS))) {
				errKind = "outside_window"
				break
			}
			cell := &dvDesc{ID: s.ID, Kind: "r", Delta: s.Amount}
			k, val, err := dvEncDesc("deltalog", cell)
			if err != nil {
				bad("%v", err)
				break
			}
			write([]dvMut{{Op: "put", Partition: s.Key, Key: hex.EncodeToString(k), Value: hex.EncodeToString(val)}}, 0)
			if c := s.Calls[len(s.Calls)-1]; dvLanded(c) {
				landed[s.ID] = int64(*s.Amount)
			}
		case "read":
			read, ok := scan("", isMerge)
			if !ok {
				break
			}
			sum := new(big.Int)
			for _, d := range read {
				sum.Add(sum, big.NewInt(int64(*d.Delta)))
			}
			// Past int64 the value reads clamped (SPEC.md 8.3).
			if dvShow(s.Value) != strconv.FormatInt(int64(*clampBig(sum)), 10) || s.Cells == nil || *s.Cells != len(read) {
				bad("value %s over %v cells, the model reads %s over %d", dvShow(s.Value), s.Cells, sum, len(read))
			}
			plain := big.NewInt(0)
			for _, d := range landed {
				plain.Add(plain, big.NewInt(d))
			}
			if sum.Cmp(plain) != 0 {
				bad("value %s, but the updates that landed sum to %s", sum, plain)
			}
		case "merge":
			// The merge cell's stamp is taken before the scan, and is no
			// later than the cutoff (SPEC.md 8.5).
			cutoff := now.Add(-dvDur(o.WindowNS) - dvDur(o.SafetyMarginNS))
			ts := min(clock.take(now, 1), max(cutoff.UnixMicro(), 1))
			limit := cmp.Or(o.MaxMergeCells, 100_000)
			// scanN reads at most limit regular cells above the merge
			// cell below them; full: it read one more.
			scanN := func(from string) (read []*dvDesc, ok, full bool) {
				regular := 0
				read, ok = scan(from, func(d *dvDesc) bool {
					if d.Kind == "r" {
						regular++
					}
					return d.Kind == "m" || regular > limit
				})
				return read, ok, ok && regular > limit
			}
			read, ok, full := scanN(dvBefore(cutoff))
			if full { // the drain (SPEC.md 8.5)
				hi, lo, loSet := cutoff, time.Time{}, false
				step := max(hi.Sub(dvIDTime(read[len(read)-1].ID)), time.Microsecond)
				floor := hi.Add(-(1 << 62))
				var best []*dvDesc
				for ok {
					if best != nil && (len(best) >= max(limit/2, 1) || hi.Sub(lo) <= 100*time.Nanosecond) {
						read = best
						break
					}
					if loSet && hi.Sub(lo) <= 100*time.Nanosecond { // the first scan again, without the limit
						read, ok = scan(dvBefore(cutoff), isMerge)
						break
					}
					var t time.Time
					switch {
					case loSet:
						t = lo.Add(hi.Sub(lo) / 2)
					case step >= 1<<61 || !hi.Add(-step).After(floor):
						lo, loSet = floor, true
						continue
					default:
						t = hi.Add(-step)
						step *= 2
					}
					var r []*dvDesc
					var f bool
					r, ok, f = scanN(dvBefore(t))
					if !ok && errKind == "corrupt" { // counts as too many
						ok, f, errKind = true, true, ""
					}
					if ok && f {
						hi = t
					} else if ok {
						lo, loSet = t, true
						if len(r) > 0 && r[0].Kind == "r" {
							best = r
						}
					}
				}
			}
			if !ok {
				break
			}
			at := slices.IndexFunc(read, func(d *dvDesc) bool { return dvIDTime(d.ID).Before(cutoff) })
			if at < 0 || read[at].Kind == "m" {
				if s.Merged == nil || *s.Merged {
					bad("merged %v, the model merges nothing", s.Merged)
				}
				break
			}
			// The merge cell goes at the newest cell from at down whose
			// aggregate (of it and every cell below) fits (SPEC.md 8.3).
			sum, sq := new(big.Int), new(big.Int)
			var count int64
			var lo, hi int64 = math.MaxInt64, math.MinInt64
			var cell *dvDesc
			mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
			for j := len(read) - 1; j >= at; j-- {
				d := read[j]
				if d.Kind == "m" {
					sum.Add(sum, big.NewInt(int64(d.Stats.Sum)))
					h, _ := new(big.Int).SetString(d.Stats.SumSqHi, 10)
					l, _ := new(big.Int).SetString(d.Stats.SumSqLo, 10)
					sq.Add(sq, h.Lsh(h, 64).Add(h, l))
					count += int64(d.Stats.Count)
					lo, hi = min(lo, int64(d.Stats.Min)), max(hi, int64(d.Stats.Max))
					continue
				}
				x := int64(*d.Delta)
				sum.Add(sum, big.NewInt(x))
				sq.Add(sq, new(big.Int).Mul(big.NewInt(x), big.NewInt(x)))
				count++
				lo, hi = min(lo, x), max(hi, x)
				if sum.IsInt64() && sq.BitLen() <= 128 {
					cell = &dvDesc{ID: d.ID, Kind: "m", Delta: dvI(sum.Int64()), Written: dvI(now.UnixNano()),
						Stats: &dvStats{Count: dvInt(count), Sum: dvInt(sum.Int64()), Min: dvInt(lo), Max: dvInt(hi),
							SumSqHi: new(big.Int).Rsh(sq, 64).String(), SumSqLo: new(big.Int).And(sq, mask).String()}}
				}
			}
			if cell == nil {
				if s.Merged == nil || *s.Merged {
					bad("merged %v, but no cell's aggregate fits", s.Merged)
				}
				break
			}
			k, val, err := dvEncDesc("deltalog", cell)
			if err != nil {
				bad("%v", err)
				break
			}
			write([]dvMut{{Op: "put", Partition: s.Key, Key: hex.EncodeToString(k), Value: hex.EncodeToString(val)}}, ts)
			if errKind == "" && (s.Merged == nil || !*s.Merged || !reflect.DeepEqual(s.MergeCell, cell)) {
				bad("merge cell %+v, the model writes %+v", s.MergeCell, cell)
			}
			plain := big.NewInt(0)
			for id, d := range landed {
				if dvCompareIDs(id, cell.ID) <= 0 {
					plain.Add(plain, big.NewInt(d))
				}
			}
			if plain.Cmp(big.NewInt(int64(*cell.Delta))) != 0 {
				bad("the merge cell holds %d, but the updates at or below its id sum to %s", *cell.Delta, plain)
			}
		case "compact":
			h := now.Add(-dvDur(o.CompactGraceNS))
			horizon := h.UnixNano()
			read, ok := scan(dvBefore(h.Add(-dvDur(o.WindowNS)-dvDur(o.SafetyMarginNS))),
				func(d *dvDesc) bool { return d.Kind == "m" && int64(*d.Written) <= horizon })
			if !ok {
				break
			}
			found := len(read) > 0 && read[len(read)-1].Kind == "m" && int64(*read[len(read)-1].Written) <= horizon
			if found {
				k, _, _ := dvEncDesc("deltalog", &dvDesc{ID: read[len(read)-1].ID, Kind: "r"})
				write([]dvMut{{Op: "delete-range", Partition: s.Key, Key: hex.EncodeToString(k)}}, 0)
			}
			if errKind == "" && (s.Deleted == nil || *s.Deleted != found) {
				bad("deleted %v, the model says %v", s.Deleted, found)
			}
		default:
			bad("unknown op")
		}
		if len(calls) > 0 {
			bad("%d calls more than the model makes", len(calls))
		}
		if errKind != s.Error {
			bad("error %q, the model says %q", s.Error, errKind)
		}
	}
	return out
}

// dvRowOf is the balance row a description stands for.
func dvRowOf(d *dvDesc) balance.Row {
	uid, _ := dvParseUUID(d.UpdateID)
	ver, _ := dvParseUUID(d.Version)
	r := balance.Row{UpdateID: uid, Kind: balance.Kind(d.Kind[0]), Version: ver, Amount: int64(*d.Amount)}
	if d.Covers != nil {
		r.Covers = int64(*d.Covers)
	}
	if d.Settled != nil {
		r.Settled = *d.Settled
	}
	if d.Target != "" {
		r.Target = balance.Kind(d.Target[0])
	}
	return r
}

func dvRowKey(d dvDesc) string { return d.UpdateID + "/" + d.Kind + "/" + d.Version }

// dvModelBalance checks balance vectors against SPEC.md 9.3. Add refuses an
// id outside [now - window, now + future skew] with no call and otherwise
// puts the N row. Every write is one batch with consecutive timestamps
// from max(now, last + 1) µs. A merge reads one snapshot; takes a version at
// the clock, raised to 100 ns after every valid sum row not before it,
// failing unavailable with nothing written if that is more than future
// skew ahead; writes a tombstone for every live row (one per update id) and
// then the sum row when there is a live N row or more than one live row;
// then settles (step 7: deletes only rows that tombstones of valid merges
// settle grace old cancel, and marks exactly those merges settled) and
// collects (step 8: only invalid rows or tombstones of deleted rows, GC
// grace old). Which rows are valid and live is Evaluate's (SPEC.md 9.2,
// locked by balance.json). After every step the rows that landed evaluate
// to the sum of every N row ever added, and so does every read.
// dvLayoutMarkID is the update id of a Transactions layout marker's rows
// (SPEC.md 9.4 "Layout").
const dvLayoutMarkID = "00000000-0000-1000-8000-000000000001"

func dvModelBalance(v dvVector) []string {
	var out []string
	o := v.Options
	var now time.Time
	var clock dvStamp
	var writes []dvPW
	added := map[string]int64{}       // update id -> amount, for every add that landed
	for _, r := range v.InitialRows { // and every N row the partition held at the start
		writes = append(writes, dvPW{op: "put", partition: o.Key, key: r.Key, value: r.Value, ts: 1})
		if r.Is != nil && r.Is.Kind == "N" && r.Is.Amount != nil {
			added[r.Is.UpdateID] = int64(*r.Is.Amount)
		}
	}
	plain := func() int64 {
		var s int64
		for _, a := range added {
			s += a
		}
		return s
	}
	// exactly is the sum of every N row added, and live the sum of a
	// view's live rows, in integers of any size: a row partition of
	// Transactions may hold more than int64 (SPEC.md 9.4).
	exactly := func() *big.Int {
		s := new(big.Int)
		for _, a := range added {
			s.Add(s, big.NewInt(a))
		}
		return s
	}
	live := func(v balance.View) *big.Int {
		s := new(big.Int)
		for _, r := range v.Live {
			s.Add(s, big.NewInt(r.Amount))
		}
		return s
	}
	// Transactions (SPEC.md 9.4): the row partitions, the windows and the
	// partitions of records.
	rowParts := []string{o.Key} // a plain account's
	if o.Partitions > 0 {
		rowParts = nil
		for i := range o.Partitions {
			rowParts = append(rowParts, fmt.Sprint(o.Key, "#", i))
		}
	}
	rwUS := dvDur(o.RetryWindowNS).Microseconds()
	window := func(t time.Time) int64 {
		us := t.UnixMicro()
		w := us / max(rwUS, 1)
		if us%max(rwUS, 1) < 0 {
			w--
		}
		return w
	}
	recordPart := func(w int64, id [16]byte) string {
		return fmt.Sprintf("%s#txn.%d.%d", o.Key, w, int(id[15])%max(o.RecordShards, 1))
	}
	isTxnRow := func(id string) bool { return dvIDTime(id).Year() < 1900 }
	amountKey := func(amount int64) string {
		var ver [16]byte
		binary.BigEndian.PutUint64(ver[8:], uint64(amount))
		return dvUUID(ver)
	}
	// evaluate is Evaluate of rows read; in a row partition of
	// Transactions one row at two places is one row (SPEC.md 9.4).
	evaluate := func(rows []*dvDesc) (balance.View, error) {
		var rs []balance.Row
		for _, d := range rows {
			if r := dvRowOf(d); !slices.Contains(rs, r) || d.At == nil {
				rs = append(rs, r)
			}
		}
		return balance.Evaluate(rs)
	}
	// covered is step 5's selection (SPEC.md 9.3) of a merge of rows read,
	// whose view is view: one live row per update id; the oldest while
	// the rows they cancel number at most MaxCover (5,000); and if their
	// sum does not fit in int64, the oldest of those (in a row partition
	// of Transactions by the oldest place a row's key was read at, else
	// from the last) while their running sum fits, at least one.
	covered := func(view balance.View, rows []*dvDesc) []balance.Row {
		seen := map[timeid.ID]bool{}
		var out []balance.Row
		for _, r := range view.Live {
			if !seen[r.UpdateID] {
				seen[r.UpdateID] = true
				out = append(out, r)
			}
		}
		nRows := map[string]int{} // an id's N rows, each once whatever its places
		seenRow := map[balance.Key]bool{}
		for _, r := range rows {
			if k := dvRowOf(r).Key(); r.Kind == "N" && !seenRow[k] {
				seenRow[k] = true
				nRows[r.UpdateID]++
			}
		}
		for i, cancelled := len(out)-1, 0; i >= 0; i-- {
			n := 1
			if out[i].Kind == balance.KindNormal {
				n = nRows[dvUUID(out[i].UpdateID)]
			}
			if cancelled+n > 5000 && cancelled > 0 {
				out = out[i+1:]
				break
			}
			cancelled += n
		}
		sum := new(big.Int)
		for _, r := range out {
			sum.Add(sum, big.NewInt(r.Amount))
		}
		if sum.IsInt64() {
			return out
		}
		oldest := make([]int, len(out)) // indexes of out, oldest first
		place := make([]int64, len(out))
		for i, r := range out {
			oldest[i] = len(out) - 1 - i
			place[i] = math.MaxInt64
			for _, d := range rows {
				if d.At != nil && dvRowOf(d).Key() == r.Key() {
					place[i] = min(place[i], int64(*d.At))
				}
			}
		}
		slices.SortStableFunc(oldest, func(a, b int) int { return cmp.Compare(place[a], place[b]) })
		take := map[int]bool{}
		sum.SetInt64(0)
		for _, i := range oldest {
			if sum.Add(sum, big.NewInt(out[i].Amount)); len(take) > 0 && !sum.IsInt64() {
				break
			}
			take[i] = true
		}
		var kept []balance.Row
		for i, r := range out {
			if take[i] {
				kept = append(kept, r)
			}
		}
		return kept
	}
	var trusted *time.Time // the last layout check that passed (Apply's)
	for i, s := range v.Steps {
		bad := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("step %d (%s): ", i+1, s.Op)+fmt.Sprintf(format, args...))
		}
		if s.Clock != "" {
			now = dvMustTime(s.Clock)
		}
		calls := s.Calls
		part := o.Key // the partition write and snapshot expect
		next := func(method string) (dvCall, bool) {
			if len(calls) == 0 || calls[0].Method != method {
				bad("want a %s call next", method)
				return dvCall{}, false
			}
			c := calls[0]
			calls = calls[1:]
			return c, true
		}
		errKind := ""
		// writeMuts expects one batch of the mutations want, stamped
		// with consecutive timestamps but for a sum row of a row
		// partition of Transactions, stamped with its place (SPEC.md
		// 9.4), and records it if it landed.
		writeMuts := func(want []dvMut) bool {
			c, ok := next("apply")
			if !ok {
				return false
			}
			ts := clock.take(now, len(want))
			for i := range want {
				if want[i].TS == 0 {
					want[i].TS = dvInt(ts + int64(i))
				}
			}
			if !dvSameMuts(c.Mutations, want) {
				bad("writes %+v, want %+v", c.Mutations, want)
			}
			if dvLanded(c) {
				for _, m := range c.Mutations {
					writes = append(writes, dvPW{op: m.Op, partition: m.Partition, key: m.Key, value: m.Value, ts: int64(m.TS)})
				}
			}
			errKind = dvReplyKind(c.Reply)
			return errKind == ""
		}
		// write expects one batch of deletes (by key), then puts.
		write := func(dels []dvDesc, puts []dvDesc) bool {
			var want []dvMut
			for _, d := range dels {
				k, _, _ := dvEncDesc("balance", &dvDesc{UpdateID: d.UpdateID, Kind: d.Kind, Version: d.Version, At: d.At})
				want = append(want, dvMut{Op: "delete", Partition: part, Key: hex.EncodeToString(k)})
			}
			for _, d := range puts {
				k, val, _ := dvEncDesc("balance", &d)
				m := dvMut{Op: "put", Partition: part, Key: hex.EncodeToString(k), Value: hex.EncodeToString(val)}
				if d.At != nil && d.Kind == "S" {
					m.TS = *d.At
				}
				want = append(want, m)
			}
			return writeMuts(want)
		}
		snapshot := func() ([]*dvDesc, int, bool) {
			c, ok := next("snapshot")
			if !ok {
				return nil, 0, false
			}
			if c.Key != part || c.Level != "any" || c.Limit != balance.MaxRows {
				bad("snapshot of %q at %s limit %d, want %q at any limit %d", c.Key, c.Level, c.Limit, part, balance.MaxRows)
			}
			if errKind = dvReplyKind(c.Reply); errKind != "" {
				return nil, 0, false
			}
			var rows []*dvDesc
			for _, r := range c.Rows {
				rows = append(rows, r.Is)
			}
			return rows, c.Stale, true
		}
		// readPart reads partition part for a merge (steps 1–3).
		readPart := func() ([]*dvDesc, balance.View, bool) {
			rows, _, ok := snapshot()
			if !ok {
				return nil, balance.View{}, false
			}
			view, err := evaluate(rows)
			if err != nil && (o.Partitions == 0 || !errors.Is(err, crdt.ErrOverflow)) {
				errKind = dvKind(err)
				return nil, view, false
			}
			return rows, view, true
		}
		// mergePart checks steps 4–8 of a merge of partition part, whose
		// snapshot read rows (evaluated: view), against its report rep,
		// and says whether it ran to its end.
		mergePart := func(rep *dvMerge, rows []*dvDesc, view balance.View, placed bool) bool {
			start := now
			// Step 4.
			vt := now
			for _, sr := range view.Valid {
				if t := dvIDTime(dvUUID(sr.UpdateID)).Add(100 * time.Nanosecond); !t.Before(vt) {
					if t.Sub(now) > dvDur(o.FutureSkewNS) {
						errKind = "unavailable"
					}
					vt = t
				}
				if errKind != "" {
					break
				}
			}
			if errKind != "" {
				if rep != nil {
					bad("a merge refused at step 4 reports no version")
				}
				return false
			}
			if rep == nil {
				bad("no merge report")
				return false
			}
			if !dvIDTime(rep.Version).Equal(vt) {
				bad("version at %v, the model takes %v", dvIDTime(rep.Version), vt)
			}
			// Steps 5 and 6.
			var tombs []dvDesc
			var sum *dvDesc
			nN := 0
			for _, r := range view.Live {
				if r.Kind == balance.KindNormal {
					nN++
				}
			}
			if nN > 0 || len(view.Live) > 1 {
				var total int64
				for _, r := range covered(view, rows) {
					tombs = append(tombs, dvDesc{UpdateID: dvUUID(r.UpdateID), Kind: "T", Version: rep.Version, Amount: dvI(r.Amount), Target: dvKindName(r.Kind)})
				}
				for _, d := range tombs {
					total += int64(*d.Amount)
				}
				sum = &dvDesc{UpdateID: rep.Version, Kind: "S", Version: rep.Version, Amount: dvI(total), Covers: dvI(int64(len(tombs))), Settled: dvB(false)}
				if placed { // SPEC.md 9.4: a sum row at its version's time or the newest live row's place, a tombstone at its target's newest place
					sum.At = dvI(vt.UnixMicro())
					for _, l := range view.Live { // a live S row, or any N row of a live N row's id
						for _, r := range rows {
							if r.UpdateID == dvUUID(l.UpdateID) && r.Kind == dvKindName(l.Kind) && (l.Kind == balance.KindNormal || r.Version == dvUUID(l.Version)) && *r.At > *sum.At {
								sum.At = r.At
							}
						}
					}
					for i, d := range tombs {
						for _, r := range rows {
							if r.UpdateID == d.UpdateID && r.Kind == d.Target && (d.Target == "N" || r.Version == d.UpdateID) && (tombs[i].At == nil || *r.At > *tombs[i].At) {
								tombs[i].At = r.At
							}
						}
					}
				}
			}
			// The report lists what was written: the tombstones once their
			// batch succeeded, the sum row once it did.
			var wroteT []dvDesc
			var wroteS *dvDesc
			stopped := false
			if len(tombs) > 0 {
				if stopped = !write(nil, tombs); !stopped {
					wroteT = tombs
					if stopped = !write(nil, []dvDesc{*sum}); !stopped {
						wroteS = sum
					}
				}
			}
			unplaced := func(ds []dvDesc) []dvDesc {
				var out []dvDesc
				for _, d := range ds {
					d.At = nil
					out = append(out, d)
				}
				return out
			}
			if wroteS != nil {
				wroteS = &unplaced([]dvDesc{*wroteS})[0]
			}
			if wroteT = unplaced(wroteT); !reflect.DeepEqual(rep.Tombstones, wroteT) || !reflect.DeepEqual(rep.Sum, wroteS) {
				bad("tombstones %+v and sum %+v, the model writes %+v and %+v", rep.Tombstones, rep.Sum, wroteT, wroteS)
			}
			if stopped {
				return false
			}
			// Step 7: only what merges settle grace old cancel.
			eligible := map[string]bool{}
			for _, sr := range view.Valid {
				if sr.Settled || dvIDTime(dvUUID(sr.UpdateID)).Before(start.Add(-dvDur(o.SettleGraceNS))) {
					eligible[dvUUID(sr.Version)] = true
				}
			}
			deleted := map[string]bool{}
			for _, d := range rep.Deleted {
				deleted[d.UpdateID+"/"+d.Kind] = true
				cancelled := false
				for _, r := range rows {
					cancelled = cancelled || (r.Kind == "T" && eligible[r.Version] && r.UpdateID == d.UpdateID && r.Target == d.Kind)
				}
				if !cancelled || (d.Kind != "N" && d.Kind != "S") {
					bad("step 7 deletes %s, which no tombstone of a settle-grace-old valid merge cancels", dvRowKey(d))
				}
			}
			var settle []dvDesc
			for _, sr := range view.Valid {
				if !sr.Settled && eligible[dvUUID(sr.Version)] && !deleted[dvUUID(sr.UpdateID)+"/S"] {
					d := dvDescBalanceRow(sr)
					d.Settled = dvB(true)
					settle = append(settle, d)
				}
			}
			if !reflect.DeepEqual(rep.Settled, settle) {
				bad("settled %+v, the model settles %+v", rep.Settled, settle)
			}
			if placed {
				return dvPlacedRemoval(rep, rows, view, start, o, part, bad, writeMuts)
			}
			if len(rep.Deleted)+len(rep.Settled) > 0 && !write(rep.Deleted, rep.Settled) {
				return false
			}
			// Step 8: only invalid rows, or tombstones whose target step 7
			// deleted, GC grace old.
			invalid := map[string]bool{}
			for _, r := range append(slices.Clone(view.InvalidSums), view.InvalidTombstones...) {
				invalid[dvRowKey(dvDescBalanceRow(r))] = true
			}
			for _, d := range rep.Collected {
				old := dvIDTime(d.UpdateID).Before(start.Add(-dvDur(o.GCGraceNS)))
				if !old || !(invalid[dvRowKey(d)] || (d.Kind == "T" && deleted[d.UpdateID+"/"+d.Target])) {
					bad("step 8 collects %s, which is not an invalid row or a tombstone of a deleted row, GC grace old", dvRowKey(d))
				}
			}
			for _, d := range rep.TooYoung {
				if !invalid[dvRowKey(d)] || dvIDTime(d.UpdateID).Before(start.Add(-dvDur(o.GCGraceNS))) {
					bad("too young: %s is not an invalid row younger than GC grace", dvRowKey(d))
				}
			}
			if len(rep.Collected) > 0 && !write(rep.Collected, nil) {
				return false
			}
			return true
		}
		// layoutOK checks the account's layout marker (SPEC.md 9.4
		// "Layout"), unless trust and the last check that passed is less
		// than a second (or SafetyMargin, if shorter) old; *empty reports
		// an empty marker.
		mine := int64(o.Partitions-1)<<57 | rwUS<<8 | int64(o.RecordShards-1)
		trustFor := time.Second
		if sm := dvDur(o.SafetyMarginNS); sm > 0 {
			trustFor = min(trustFor, sm)
		}
		layoutOK := func(trust bool, empty *bool) bool {
			if trust && trusted != nil && !now.Before(*trusted) && now.Sub(*trusted) < trustFor {
				return true
			}
			part = o.Key + "#txn.layout"
			rows, _, ok := snapshot()
			if !ok {
				return false
			}
			var named []int64
			for _, r := range rows {
				if r.UpdateID != dvLayoutMarkID || r.Kind != "N" || r.Amount == nil || *r.Amount <= 0 {
					errKind = "corrupt_encoding"
					return false
				}
				named = append(named, int64(*r.Amount))
			}
			switch {
			case len(named) == 0:
				if empty != nil {
					*empty = true
				}
				return true
			case !slices.Contains(named, mine) || slices.Max(named) != mine:
				errKind = "invalid_config"
				return false
			}
			if trust {
				t := now
				trusted = &t
			}
			return true
		}
		switch s.Op {
		case "add":
			at := dvIDTime(s.ID)
			if at.Before(now.Add(-dvDur(o.WindowNS))) || at.After(now.Add(dvDur(o.FutureSkewNS))) {
				errKind = "outside_window"
				break
			}
			row := dvDesc{UpdateID: s.ID, Kind: "N", Version: amountKey(int64(*s.Amount)), Amount: s.Amount}
			write(nil, []dvDesc{row})
			if dvLanded(s.Calls[len(s.Calls)-1]) {
				added[s.ID] = int64(*s.Amount)
			}
		case "balance":
			rows, stale, ok := snapshot()
			if !ok {
				break
			}
			if stale == 0 && dvShow(s.Value) != strconv.FormatInt(plain(), 10) {
				bad("balance %s, but the N rows ever added sum to %d", dvShow(s.Value), plain())
			}
			if view, err := evaluate(rows); err != nil || dvShow(s.Value) != strconv.FormatInt(view.Value, 10) {
				bad("balance %s, the rows read evaluate to %d (%v)", dvShow(s.Value), view.Value, err)
			}
		case "merge":
			if rows, view, ok := readPart(); ok {
				mergePart(s.Merge, rows, view, false)
			}
		case "txn_apply":
			id, err := dvParseUUID(refTxnRowID(s.Txn))
			if err != nil {
				bad("row id: %v", err)
				break
			}
			unmarked := false
			if !layoutOK(true, &unmarked) {
				break
			}
			c, ok := next("scan")
			if !ok {
				break
			}
			from := hex.EncodeToString(append(dvKeyDesc(id), 'N'))
			if rp := recordPart(window(now), id); c.Key != rp || c.From != from || c.Level != "any" {
				bad("scans %q from %s at %s, want %q from %s at any", c.Key, c.From, c.Level, rp, from)
			}
			if errKind = dvReplyKind(c.Reply); errKind != "" {
				break
			}
			var amounts []int64
			for _, r := range c.Rows {
				if r.Is == nil || r.Is.UpdateID != dvUUID(id) || r.Is.Kind != "N" || r.Is.Amount == nil {
					break
				}
				amounts = append(amounts, int64(*r.Is.Amount))
			}
			if want := min(len(amounts)+1, len(c.Rows)); c.Visited == nil || *c.Visited != want {
				bad("visited %v rows, want %d", c.Visited, want)
			}
			outcome := ""
			switch {
			case slices.Contains(amounts, int64(*s.Amount)):
				outcome = "duplicate"
			case len(amounts) > 0:
				errKind = "conflicting_transaction"
			default:
				// The row, and on the account's first row its layout
				// first, in one batch.
				var want []dvMut
				if unmarked {
					k, val, _ := dvEncDesc("balance", &dvDesc{UpdateID: dvLayoutMarkID, Kind: "N", Version: amountKey(mine), Amount: dvI(mine)})
					want = append(want, dvMut{Op: "put", Partition: o.Key + "#txn.layout", Key: hex.EncodeToString(k), Value: hex.EncodeToString(val)})
				}
				row := dvDesc{UpdateID: dvUUID(id), Kind: "N", Version: amountKey(int64(*s.Amount)), Amount: s.Amount, At: dvI(now.UnixMicro())}
				k, val, _ := dvEncDesc("balance", &row)
				part = rowParts[int(id[14])%len(rowParts)]
				want = append(want, dvMut{Op: "put", Partition: part, Key: hex.EncodeToString(k), Value: hex.EncodeToString(val)})
				if writeMuts(want) {
					outcome = "applied"
					if unmarked {
						t := now
						trusted = &t
					}
				}
				if _, seen := added[dvUUID(id)]; !seen && dvLanded(s.Calls[len(s.Calls)-1]) {
					added[dvUUID(id)] = int64(*s.Amount)
				}
			}
			if s.Outcome != outcome {
				bad("outcome %q, the model says %q", s.Outcome, outcome)
			}
		case "txn_balance":
			if !layoutOK(false, nil) {
				break
			}
			sum := new(big.Int) // exactly: a partition may pass int64
			fresh := true
			for _, p := range rowParts {
				part = p
				rows, stale, ok := snapshot()
				if !ok {
					break
				}
				view, err := evaluate(rows)
				if err != nil && !errors.Is(err, crdt.ErrOverflow) {
					bad("partition %s: %v", p, err)
				}
				sum.Add(sum, live(view))
				fresh = fresh && stale == 0
			}
			if errKind == "" && !sum.IsInt64() {
				errKind = "overflow"
			}
			if errKind == "" && dvShow(s.Value) != sum.String() {
				bad("balance %s, the rows read evaluate to %s", dvShow(s.Value), sum)
			}
			if errKind == "" && fresh && sum.Cmp(exactly()) != 0 {
				bad("balance %s, but the transactions applied sum to %s", sum, exactly())
			}
		case "txn_merge":
			// Every row partition read, then the records of the live
			// transaction rows they hold, in every window [now −
			// FutureSkew, now + MaxMerge + RetryWindow + 2·FutureSkew]
			// meets, one batch per record partition in key order, then
			// each partition's steps 4–8.
			type read struct {
				rows []*dvDesc
				view balance.View
				ok   bool
			}
			if !layoutOK(false, nil) {
				break
			}
			reads := make([]read, len(rowParts))
			var newest string
			failed := "" // the first error: the merge goes on after one
			keep := func() {
				if failed == "" {
					failed = errKind
				}
			}
			for i, p := range rowParts {
				part = p
				rows, view, ok := readPart()
				keep()
				reads[i] = read{rows, view, ok}
				for _, sr := range view.Valid {
					if v := dvUUID(sr.Version); newest == "" || dvIDTime(v).After(dvIDTime(newest)) {
						newest = v
					}
				}
			}
			first := window(now.Add(-dvDur(o.FutureSkewNS)))
			last := window(now.Add(dvDur(o.MaxMergeNS) + dvDur(o.RetryWindowNS) + 2*dvDur(o.FutureSkewNS)))
			byPart := map[string][]dvDesc{}
			for _, rd := range reads {
				if !rd.ok {
					continue
				}
				for _, r := range covered(rd.view, rd.rows) {
					if r.Kind != balance.KindNormal || !isTxnRow(dvUUID(r.UpdateID)) {
						continue
					}
					for w := first; w <= last; w++ {
						p := recordPart(w, r.UpdateID)
						byPart[p] = append(byPart[p], dvDesc{UpdateID: dvUUID(r.UpdateID), Kind: "N", Version: amountKey(r.Amount), Amount: dvI(r.Amount)})
					}
				}
			}
			recorded := true
			for _, p := range slices.Sorted(maps.Keys(byPart)) {
				if part = p; !write(nil, byPart[p]) {
					recorded = false
					break
				}
			}
			keep()
			if len(s.Merges) != len(rowParts) {
				bad("%d merge reports, want one per row partition (%d)", len(s.Merges), len(rowParts))
				break
			}
			for i, p := range rowParts {
				if !reads[i].ok || !recorded {
					if s.Merges[i] != nil {
						bad("partition %s: a report of a merge that stopped before step 4", p)
					}
					continue
				}
				part = p
				mergePart(s.Merges[i], reads[i].rows, reads[i].view, true)
				keep()
			}
			if newest == "" || window(dvIDTime(newest)) >= window(now) {
				errKind = failed
				break
			}
			errKind = ""
			func() {
				// Expiry: the mark, the record partitions after it up to
				// min(now − 2, newest + 2), then the mark moved.
				n, c := window(dvIDTime(newest)), window(now)
				mark := o.Key + "#txn.expired"
				mc, ok := next("snapshot")
				if !ok {
					return
				}
				if mc.Key != mark || mc.Level != "any" || mc.Limit != balance.MaxRows {
					bad("reads the mark from %q at %s limit %d, want %q at any limit %d", mc.Key, mc.Level, mc.Limit, mark, balance.MaxRows)
				}
				if errKind = dvReplyKind(mc.Reply); errKind != "" {
					return
				}
				first, last = n-3, min(c-2, n+2)
				var marks []dvDesc
				m, any := int64(0), false
				for _, r := range mc.Rows {
					marks = append(marks, *r.Is)
					if a := int64(*r.Is.Amount); r.Is.Kind == "N" && a >= 1 { // others are damage: passed over
						m, any = max(m, a), true
					}
				}
				marked := any && m <= c+1 // a mark ahead is none
				if marked {
					first = m + 1
				}
				last = min(last, first+63)
				if first > last {
					return
				}
				if !marked { // the first expiry marks where it starts, replacing a mark ahead
					part = mark
					m := dvDesc{UpdateID: "00000000-0000-1000-8000-000000000000", Kind: "N", Version: amountKey(first - 1), Amount: dvI(first - 1)}
					if !write(marks, []dvDesc{m}) {
						return
					}
					marks = []dvDesc{m}
				}
				var dels []dvMut
				for w := first; w <= last; w++ {
					for sh := range o.RecordShards {
						dels = append(dels, dvMut{Op: "delete-partition", Partition: fmt.Sprintf("%s#txn.%d.%d", o.Key, w, sh)})
					}
				}
				for len(dels) > 0 && errKind == "" {
					batch := dels[:min(len(dels), 512)]
					dels = dels[len(batch):]
					c, ok := next("apply")
					if !ok {
						break
					}
					ts := clock.take(now, len(batch))
					for k := range batch {
						batch[k].TS = dvInt(ts + int64(k))
					}
					if !dvSameMuts(c.Mutations, batch) {
						bad("expiry writes %+v, want %+v", c.Mutations, batch)
					}
					if dvLanded(c) {
						for _, m := range c.Mutations {
							writes = append(writes, dvPW{op: m.Op, partition: m.Partition, ts: int64(m.TS)})
						}
					}
					errKind = dvReplyKind(c.Reply)
				}
				if errKind == "" {
					part = mark
					write(marks, []dvDesc{{UpdateID: "00000000-0000-1000-8000-000000000000", Kind: "N", Version: amountKey(last), Amount: dvI(last)}})
				}
			}()
			if failed != "" {
				errKind = failed
			}
		default:
			bad("unknown op")
		}
		if len(calls) > 0 {
			bad("%d calls more than the model makes", len(calls))
		}
		if errKind != s.Error {
			bad("error %q, the model says %q", s.Error, errKind)
		}
		// Whatever was written, the rows evaluate to every N row added.
		total := new(big.Int)
		for _, p := range rowParts {
			var rows []*dvDesc
			for _, r := range dvVisible(writes, p) {
				rows = append(rows, dvDescRow(dvUnhex(r.key), dvUnhex(r.value)))
			}
			view, err := evaluate(rows)
			if err != nil && (o.Partitions == 0 || !errors.Is(err, crdt.ErrOverflow)) {
				bad("the stored rows of %s: %v", p, err)
			}
			total.Add(total, live(view))
		}
		if total.Cmp(exactly()) != 0 {
			bad("the stored rows evaluate to %s, but the N rows ever added sum to %s", total, exactly())
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Wrong expectations are caught. Each case makes one expectation of a
// vector wrong and requires the replay against the Go driver, the
// independent checks, or both, to fail, saying where.

var dvWrongExpectations = []struct {
	name, file, vector string
	edit               func(v *dvVector)
	replay, model      string // what each failure must mention; "" when that check need not fail
}{
	{"a record that does not decode failing the whole attempt", "driver_ledger.json", "records: a record that does not decode fails its call alone",
		func(v *dvVector) {
			m := &v.Steps[0].Group[2]
			m.Error, m.Outcome, m.Landed, m.Value, m.Owner = "corrupt", "", dvB(false), nil, nil
		},
		"group[2].error", `l2: error "corrupt", the model says ""`},
	{"a record of another transaction taken as a conflict", "driver_ledger.json", "records: a record of another transaction under the key is passed over",
		func(v *dvVector) {
			s := &v.Steps[0]
			s.Error, s.Outcome, s.Landed, s.Value, s.Owner = "conflicting_transaction", "", dvB(false), nil, nil
		},
		"error", `t1: error "conflicting_transaction", the model says ""`},
	{"a seeded sibling left out of the store", "driver_ledger.json", "records: a record of another transaction under the key is passed over",
		func(v *dvVector) { v.Steps[0].Calls[1].Seeded = nil },
		"", "siblings are not the stored ones"},
	{"a failed record fetch answered after a second attempt", "driver_ledger.json", "records: a failed record fetch fails the attempt",
		func(v *dvVector) { v.Steps[0].Attempts = 2 },
		"attempts: vector 2, replay 1", `the model says "", 1, false`},
	{"no pass when the clock went back", "driver_ledger.json", "retire: a pass when the clock went back",
		func(v *dvVector) { c := &v.Steps[3].Calls; *c = slices.Delete(*c, 3, 4) },
		"calls", "record fetches [counterkit.txn/1IGP4SAISLKOHAUUGQOCH0MEGDF0L36B], want"},
	{"an actor retired without its records written", "driver_ledger.json", "retire: an idle writer's unrecorded transaction is recorded before it retires",
		func(v *dvVector) { c := &v.Steps[2].Calls; *c = slices.Delete(*c, 4, 5) },
		"step 3 (credit): error", "retirement of a~aaaaaaaa: record puts [], want"},
	{"a put with the token of an older fetch", "driver_ledger.json", "siblings merged",
		func(v *dvVector) { v.Steps[3].Calls[5].Token = v.Steps[2].Calls[0].Token[:4] },
		"calls[5].token", "token"},
	{"an ambiguous put marked lost that landed", "driver_ledger.json", "ambiguous put that landed, then the retry",
		func(v *dvVector) { v.Steps[0].Calls[2].Landed = dvB(false) },
		"", "siblings are not the stored ones"},
	{"a failed cycle expected as refused, not ambiguous", "driver_ledger.json", "every attempt ambiguous, then the next write lands it",
		func(v *dvVector) { v.Steps[0].Error = "unavailable" },
		"error", "error"},
	{"a duplicate expected as applied", "driver_ledger.json", "duplicate credit",
		func(v *dvVector) { v.Steps[1].Outcome = "applied" },
		"outcome", "outcome"},
	{"a put that drops the ledger's own last write", "driver_ledger.json", "stale read",
		func(v *dvVector) {
			prev := v.Steps[1].Calls[2]
			c := &v.Steps[2].Calls[2]
			c.Value, c.State = prev.Value, prev.State
		},
		"calls[2].value", "put writes"},
	{"the record read before the counter's fetch", "driver_ledger.json", "refused put",
		func(v *dvVector) { c := v.Steps[0].Calls; c[0], c[1] = c[1], c[0] },
		"calls[0].key", "want a fetch"},
	{"a retirement without dating the idle actor", "driver_ledger.json", "retire: an idle writer is retired after its transactions are recorded",
		func(v *dvVector) { c := &v.Steps[1].Calls; *c = slices.Delete(*c, 3, 4) },
		"calls", "record fetches"},
	{"a retirement record naming the retiring ledger", "driver_ledger.json", "retire: an idle writer's unrecorded transaction is recorded before it retires",
		func(v *dvVector) { dvEditRecord(&v.Steps[2].Calls[4], func(r *dvRecord) { r.Writer = "b~bbbbbbbb" }) },
		"calls[4].value", "retirement of a~aaaaaaaa: record puts"},
	{"a retirement record put again when one is live", "driver_ledger.json", "retire: declined while a record put is refused",
		func(v *dvVector) {
			c := &v.Steps[3].Calls
			*c = slices.Insert(*c, 5, (*c)[1])
		},
		"step 4 (credit): calls", `a put of "acct" must follow`},
	{"a retirement despite a refused record put", "driver_ledger.json", "retire: declined while a record put is refused",
		func(v *dvVector) { v.Steps[2].Calls[4].Reply = "ok" },
		"calls[5].value", "put writes"},
	{"a put that keeps what the compaction plan forgets", "driver_ledger.json", "records: a retry the counter forgot is answered from its record",
		func(v *dvVector) {
			c := &v.Steps[3].Calls[2]
			e := &c.State.P[0]
			e.Folded = append([]dvTxn{{"t1", 5}}, e.Folded...)
			b := must(dvEncState(c.State))
			c.Value = hex.EncodeToString(b)
		},
		"calls[2].value", "put writes"},
	{"a retry the records know applied again", "driver_ledger.json", "records: a retry the counter forgot is answered from its record",
		func(v *dvVector) { v.Steps[4].Calls[1].Siblings = nil },
		"calls", "must follow"},
	{"an id with no time accepted under TxnTime", "driver_ledger.json", "records: the retry window with TxnTime",
		func(v *dvVector) { v.Steps[1].Error = "" },
		"error", `the model says "invalid_txn"`},
	{"a timed retry past the window answered from a dead record", "driver_ledger.json", "records: the retry window with TxnTime",
		func(v *dvVector) {
			s := &v.Steps[7]
			s.Error, s.Outcome, s.Landed, s.Attempts = "", "duplicate", dvB(true), 1
			s.Value, s.Owner = dvI(11), &dvCopy{Actor: "a~aaaaaaaa", Amount: 5, Folded: true}
			s.Calls = append(s.Calls, v.Steps[6].Calls[1])
		},
		"error", `the model says "outside_window"`},
	{"an untimed retry past the window taken as a duplicate", "driver_ledger.json", "records: past the retry window an untimed retry is applied again",
		func(v *dvVector) { v.Steps[4].Outcome = "duplicate" },
		"outcome", "outcome"},
	{"a cycle before the unwritten record is written", "driver_ledger.json", "records: a refused record put is written before the next cycle",
		func(v *dvVector) { c := &v.Steps[2].Calls; *c = slices.Delete(*c, 0, 2) },
		"calls", "flush: record fetches"},
	{"a pending transaction kept though another writer recorded it", "driver_ledger.json", "records: a pending write's transaction recorded by another writer is taken out",
		func(v *dvVector) {
			dvEditRecord(&v.Steps[5].Calls[1].Siblings[0], func(r *dvRecord) { r.Writer = "a~aaaaaaaa" })
		},
		"calls[3].value", "put writes"},
	{"a pending transaction kept on a read older than its record", "driver_ledger.json", "records: a pending transaction and a read older than its record",
		func(v *dvVector) {
			s := &v.Steps[2]
			s.Error, s.Pending = "", dvB(true)
		},
		"error", `the model says "ambiguous_write+unavailable"`},
	{"a pending transaction taken out at a record of its own writer", "driver_ledger.json", "records: a pending transaction its own writer's record names stays",
		func(v *dvVector) {
			for _, r := range []*dvSibling{&v.Steps[2].Calls[1].Siblings[0], &v.Steps[2].Calls[1].Seeded[0]} {
				dvEditRecord(r, func(r *dvRecord) { r.Writer = "b~bbbbbbbb" })
			}
		},
		"replay \"unavailable\"", "the model says \"unavailable\""},
	{"a record without its writer's version", "driver_ledger.json", "records: a record carries its writer's version in the state that landed it",
		func(v *dvVector) { dvEditRecord(&v.Steps[1].Calls[4], func(r *dvRecord) { r.Version = "1" }) },
		"calls[4].value", "records: record puts"},
	{"a retirement record without the retired writer's version", "driver_ledger.json", "retire: the records of a retired writer carry its version",
		func(v *dvVector) { dvEditRecord(&v.Steps[4].Calls[8], func(r *dvRecord) { r.Version = "1" }) },
		"calls[8].value", "retirement of a~aaaaaaaa: record puts"},
	{"a group member applied twice", "driver_ledger.json", "group: duplicate members",
		func(v *dvVector) { v.Steps[0].Group[3].Outcome = "applied" },
		"group[3].outcome", "outcome"},
	{"a conflicting group member written", "driver_ledger.json", "group: a conflicting member",
		func(v *dvVector) {
			v.Steps[0].Group[2].Error, v.Steps[0].Group[2].Outcome, v.Steps[0].Group[2].Landed = "", "applied", dvB(true)
		},
		"group[2].error", "error"},
	{"a refused group put taken as landed", "driver_ledger.json", "group: a refused put",
		func(v *dvVector) { v.Steps[0].Calls[8].Reply = "ok" },
		"calls", "attempts"},
	{"a refusal after an ambiguous group put taken as definite", "driver_ledger.json", "group: an ambiguous put",
		func(v *dvVector) { v.Steps[1].Group[1].Error = "unavailable" },
		"group[1].error", "ambiguous_write+unavailable"},
	{"a retired entry's total left out of the value", "driver_ledger.json", "retire: an idle writer is retired after its transactions are recorded",
		func(v *dvVector) { v.Steps[4].Value = dvI(8) },
		"value", "value 8, the model says 13"},
	{"a put that merges a state read more than RetiredGrace/2 ago", "driver_ledger.json", "grace: a read older than RetiredGrace/2 drops the ledger's state",
		func(v *dvVector) {
			dvEditState(&v.Steps[5].Calls[4], func(s *dvState) {
				s.P = append(s.P, dvEntry{Actor: "c~cccccccc", Seq: "1", History: []dvTxn{{"t1", 5}}, Folded: []dvTxn{}})
				s.Value += 5
			})
		},
		"calls[4].value", "put writes"},
	{"a pass that folds with the cutoff now", "driver_ledger.json", "grace: a read older than RetiredGrace/2 drops the ledger's state",
		func(v *dvVector) {
			dvEditState(&v.Steps[3].Calls[2], func(s *dvState) {
				s.P = slices.DeleteFunc(s.P, func(e dvEntry) bool { return e.Actor == "c~cccccccc" })
				s.PBase = &dvBase{Cutoff: dvInt(dvT0.Add(90 * time.Minute).UnixNano()), Total: 5}
			})
		},
		"calls[2].value", "put's base of P"},
	{"a merge that keeps an entry retired before the base's cutoff", "driver_ledger.json", "grace: a read's base drops the retired entry the ledger's state holds",
		func(v *dvVector) {
			dvEditState(&v.Steps[5].Calls[2], func(s *dvState) {
				s.P = append(s.P, dvEntry{Actor: "c~cccccccc", Seq: "1", Total: 5, History: []dvTxn{}, Folded: []dvTxn{}, Retired: true, RetiredAt: dvInt(dvT0.Add(time.Hour).UnixNano())})
				s.Value += 5
			})
		},
		"calls[2].value", "put holds the entries"},
	{"a pass that does not fold", "driver_ledger.json", "grace: a writer idle past RetireAfter + RetiredGrace/2 takes a new incarnation",
		func(v *dvVector) {
			dvEditState(&v.Steps[2].Calls[2], func(s *dvState) {
				s.P = append([]dvEntry{{Actor: "a~aaaaaaaa", Seq: "1", Total: 5, History: []dvTxn{}, Folded: []dvTxn{}, Retired: true, RetiredAt: dvInt(dvT0.Add(time.Hour).UnixNano())}}, s.P...)
				s.PBase = nil
			})
		},
		"calls[2].value", "put's base of P"},
	{"a write under an incarnation older than RetireAfter + RetiredGrace/2", "driver_ledger.json", "grace: a writer idle past RetireAfter + RetiredGrace/2 takes a new incarnation",
		func(v *dvVector) {
			c := &v.Steps[3].Calls[4]
			c.Actor = "a~aaaaaaaa"
			dvEditState(c, func(s *dvState) { s.P[0].Actor = "a~aaaaaaaa" })
		},
		"calls[4].actor", "want as \"a~aaaaaaab\""},
	{"a GC at another write timestamp", "driver_tally.json", "GC folds final shards into the tally",
		func(v *dvVector) {
			s := &v.Steps[5]
			s.GC.WriteTS++
			for i := range s.Calls[1].Mutations {
				s.Calls[1].Mutations[i].TS++
			}
		},
		"write_ts", "GC writes"},
	{"an ambiguous flush resent at a new timestamp", "driver_tally.json", "an ambiguous flush is resent with the same bytes and timestamp",
		func(v *dvVector) { v.Steps[1].Calls[1].Mutations[0].TS++ },
		"calls[1].mutations[0].ts", "attempt 2 writes"},
	{"Abandon writing the unknown state", "driver_tally.json", "Abandon overwrites an unknown write with the acknowledged state",
		func(v *dvVector) {
			m := &v.Steps[4].Calls[0].Mutations[0]
			m.Is.Sum = dvI(9)
			m.Value = dvEncValue(m.Is)
		},
		"calls[0].mutations[0].value", "attempt 1 writes"},
	{"a shard inside the tally counted twice", "driver_tally.json", "a shard inside the tally is skipped and deleted again",
		func(v *dvVector) { v.Steps[2].Value = dvI(207) },
		"value", "the rows read give 107"},
	{"a merge cell with another sum", "driver_deltalog.json", "merge cells",
		func(v *dvVector) { v.Steps[6].MergeCell.Delta = dvI(7) },
		"merge_cell.delta", "merge cell"},
	{"a read that stops after the merge cell", "driver_deltalog.json", "merge cells",
		func(v *dvVector) { v.Steps[7].Calls[0].Visited = dvN(4) },
		"visited", "visited"},
	{"a compaction before CompactGrace", "driver_deltalog.json", "compaction waits CompactGrace, then deletes what a merge cell covers",
		func(v *dvVector) { v.Steps[6].Deleted = dvB(true) },
		"deleted", "deleted"},
	{"a tombstone of another amount", "driver_balance.json", "merge steps 4 to 8 over time",
		func(v *dvVector) { v.Steps[2].Merge.Tombstones[0].Amount = dvI(6) },
		"merge.tombstones[0].amount", "tombstones"},
	{"a racing merge that read the current rows", "driver_balance.json", "a racing merge's sum row is invalid and collected",
		func(v *dvVector) { v.Steps[3].Calls[0].Stale = 0 },
		"", "rows are not the stored ones"},
	{"a merge behind the clock that writes", "driver_balance.json", "step 4: the version follows a sum row ahead of the clock",
		func(v *dvVector) { v.Steps[5].Error = "" },
		"error", "error"},
	{"a RetireAll total counting a shared copy twice", "driver_ledger.json", "retire: idle writers that share a transaction retire together",
		func(v *dvVector) {
			dvEditState(&v.Steps[3].Calls[4], func(s *dvState) {
				for i := range s.P {
					if s.P[i].Actor == "b~bbbbbbbb" {
						s.P[i].Total = 5
					}
				}
			})
		},
		"calls[4].state.p[1].total", "the model says 12"},
	{"writers holding an id in both halves retired", "driver_ledger.json", "retire: writers holding one id as a credit and a debit are not retired",
		func(v *dvVector) {
			dvEditState(&v.Steps[3].Calls[5], func(s *dvState) {
				for _, es := range [][]dvEntry{s.P, s.N} {
					for i := range es {
						if es[i].Actor != "c~cccccccc" {
							es[i].Total, es[i].History, es[i].Retired = es[i].History[0].Amount, []dvTxn{}, true
						}
					}
				}
			})
		},
		"calls[5].state.n[0].retired", "put writes map[y:1 z:1], want map[x:5 x (N):-5 y:1 z:1]"},
	{"a seventeenth record lookup in one write", "driver_ledger.json", "retire: at most 16 record lookups per write",
		func(v *dvVector) {
			c := &v.Steps[0].Calls
			*c = slices.Insert(*c, 4, (*c)[4])
			d := &v.Steps[1].Calls
			*d = slices.Delete(*d, 1, 2)
		},
		"step 1 (credit): calls", "step 1 (credit t1): records: record fetches"},
	{"a pass before RetireAfter/8", "driver_ledger.json", "retire: a pass every RetireAfter/8",
		func(v *dvVector) {
			c := &v.Steps[3].Calls
			*c = slices.Insert(*c, 1, v.Steps[4].Calls[3])
		},
		"step 4 (credit): calls", "step 4 (credit t4): records: record fetches"},
	{"the seventeenth idle actor retired in the first write", "driver_ledger.json", "retire: at most 16 retirements per write, from the FNV-1a start",
		func(v *dvVector) {
			// p02's retirement record put, moved into the write before.
			k := slices.IndexFunc(v.Steps[3].Calls, func(c dvCall) bool { return c.Method == "put" && c.Record != nil && c.Record.Writer == "p02" })
			c := &v.Steps[2].Calls
			at := slices.IndexFunc(*c, func(c dvCall) bool { return c.Method == "put" }) // after the record fetches
			*c = slices.Insert(*c, at, v.Steps[3].Calls[k])
		},
		"step 3 (credit): calls", "step 3 (credit t3): retirement of p03: record puts"},
	{"a generated put of another hash", "driver_ledger.json", "group: too large for the store: the last member refused",
		func(v *dvVector) {
			c := &v.Steps[0].Calls[9]
			c.ValueSHA256 = strings.Repeat("0", 64)
		},
		"calls[9].value_sha256", "value_sha256 " + strings.Repeat("0", 64)},
	{"a generated state of another recipe", "driver_ledger.json", "group: too large for the store: no member fits",
		func(v *dvVector) {
			// One transaction more in the bulk: every generated state
			// is read again from the file with the changed recipe.
			v.Generated[1].Txns.Count++
			b := must(json.Marshal(v))
			var w dvVector
			if err := json.Unmarshal(b, &w); err != nil {
				panic(err)
			}
			*v = w
		},
		"group[0].error", "value_sha256"},
	{"a refused member expected landed", "driver_ledger.json", "group: too large for the store: the last member refused",
		func(v *dvVector) {
			m := &v.Steps[0].Group[3]
			m.Error, m.Landed = "", dvB(true)
		},
		"group[3].error", "error \"\", the model says \"too_large\""},
	{"a put the store refused as too large expected written", "driver_ledger.json", "too large for the store: a put refused",
		func(v *dvVector) { v.Steps[0].Calls[2].Reply = "ok" },
		"step 1 (credit): error", "r1: error \"too_large\", the model says \"ambiguous_write\""},
}

// dvEditRecord changes the record a put writes or a fetch reads, and its
// bytes.
// dvEditState edits the state a put writes, and its bytes.
func dvEditState(c *dvCall, edit func(*dvState)) {
	x := *c.State
	x.P, x.N = slices.Clone(x.P), slices.Clone(x.N)
	edit(&x)
	b := must(dvEncState(&x))
	c.State, c.Value = &x, hex.EncodeToString(b)
}

func dvEditRecord(c any, edit func(*dvRecord)) {
	var r **dvRecord
	var value *string
	switch c := c.(type) {
	case *dvCall:
		r, value = &c.Record, &c.Value
	case *dvSibling:
		r, value = &c.Record, &c.Value
	}
	x := **r
	edit(&x)
	b := must(dvEncRecord(&x))
	*r, *value = &x, hex.EncodeToString(b)
}

func TestDriverVectorsCatchWrongExpectations(t *testing.T) {
	testsize.SkipSequential(t)
	for _, c := range dvWrongExpectations {
		t.Run(c.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(vectorDir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			var f dvFile
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(f.Vectors, func(v dvVector) bool { return v.Name == c.vector })
			if i < 0 {
				t.Fatalf("no vector %q in %s", c.vector, c.file)
			}
			f.Vectors = f.Vectors[i : i+1]
			// The vector as it is passes (TestDriverVectors replays the
			// fresh-clock files; a child process per replay costs time),
			// unless the whole file passed in this process.
			var baseline []string
			sum := sha256.Sum256(raw)
			if _, ok := dvChecked.Load(c.file + "\x00" + string(sum[:])); !ok {
				baseline = dvModelFile(f.Driver, f)
				if !dvDrivers[c.file].fresh {
					baseline = append(baseline, dvReplayFile(f.Driver, f)...)
				}
			}
			if len(baseline) > 0 {
				t.Fatalf("the vector as it is fails:\n%s", strings.Join(baseline, "\n"))
			}
			c.edit(&f.Vectors[0])
			replay := strings.Join(dvReplayOne(t, c.file, f), "\n")
			model := strings.Join(dvModelFile(f.Driver, f), "\n")
			for _, check := range []struct{ name, got, want string }{{"replay", replay, c.replay}, {"independent checks", model, c.model}} {
				switch {
				case check.want == "":
				case check.got == "":
					t.Errorf("the %s accepted the wrong expectation", check.name)
				case !strings.Contains(check.got, check.want):
					t.Errorf("the %s failed without mentioning %q:\n%s", check.name, check.want, check.got)
				}
			}
		})
	}
}

// dvReplayOne replays f, in a child process for a fresh-clock driver, and
// returns the differences.
func dvReplayOne(t *testing.T, file string, f dvFile) []string {
	t.Helper()
	if !dvDrivers[file].fresh {
		return dvReplayFile(f.Driver, f)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := dvChild(t, false, "^TestDriverVectorsReplayFile$", f.Driver+":"+path); out != "" {
		return []string{out}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Broken drivers are caught. Each mutant breaks one rule of a driver in a
// copy of the module and requires the named driver vector to fail there.
// Each mutant rebuilds the module, so the check is opt-in:
//
//	go test ./vectors -run TestDriverVectorMutants -driver-mutants

var driverMutants = flag.Bool("driver-mutants", false, "run TestDriverVectorMutants: break each listed driver rule in a copy of the module and require a driver vector to fail")

var driverMutantsRun = flag.String("driver-mutants-run", "", "with -driver-mutants: run only the mutants whose name matches this regular expression")

var dvMutants = []struct {
	name, rule, file, old, new string
	vectors                    string // the vector file whose replay must fail
	want                       string // the vector that must fail
}{
	{"ledger/sharded FNV-1 for FNV-1a", "6.12 Keys: ShardOf is the 64-bit FNV-1a hash",
		"ledger/sharded.go", "h := fnv.New64a()", "h := fnv.New64()",
		"driver_ledger", "sharded: of two layouts only the larger n writes"},
	{"ledger/sharded layout trusted for an hour", "6.12 Layout check: trusted for one second",
		"ledger/sharded.go", "const layoutRecheck = time.Second", "const layoutRecheck = time.Hour",
		"driver_ledger", "sharded: the layout is read again a second after its check"},
	{"ledger/sharded layout trusted after a failed write", "6.12 Layout check: never after a write that failed",
		"ledger/sharded.go", "\t\ts.failed.Add(1)\n\t\ts.recheck.Store(nil)\n", "\n",
		"driver_ledger", "sharded: a failed write reads the layout again"},
	{"ledger/sharded smaller n writes", "6.12 Layout check: only the largest n named writes",
		"ledger/sharded.go", "case !again && largest != s.n:", "case false && !again && largest != s.n:",
		"driver_ledger", "sharded: of two layouts only the larger n writes"},
	{"ledger/sharded Value reads its own n", "6.12 Value: reads the sub-keys of the largest n named",
		"ledger/sharded.go", "s.width = max(largest, s.n)", "s.width = s.n",
		"driver_ledger", "sharded: of two layouts only the larger n writes"},
	{"ledger/sharded marker put not retried", "6.12 Layout check: an ambiguous marker Put is retried as 6.9's Put",
		"ledger/sharded.go", "err, attempt, s.opts.RetryCount, s.opts.Backoff.Initial", "err, attempt, 0, s.opts.Backoff.Initial",
		"driver_ledger", "sharded: a marker put in doubt is put again"},
	{"ledger/no Compact after a duplicate", "6.9: a duplicate from the ledger's own pending write is followed by Compact",
		"ledger/group.go", "\tif appliedNow == 0 {\n\t\tif _, err := merged.Compact(l.writer); err != nil {", "\tif false && appliedNow == 0 {\n\t\tif _, err := merged.Compact(l.writer); err != nil {",
		"driver_ledger", "a duplicate in the pending write is followed by Compact"},
	{"ledger/Compact after an Apply", "6.9: Compact runs only if no transaction was applied in the attempt",
		"ledger/group.go", "\tif appliedNow == 0 {\n\t\tif _, err := merged.Compact(l.writer); err != nil {", "\tif true || appliedNow == 0 {\n\t\tif _, err := merged.Compact(l.writer); err != nil {",
		"driver_ledger", "a duplicate in the pending write is followed by Compact"},
	{"ledger/put without the token", "6.9: Put with the fetch's token",
		"ledger/ledger.go", "err = l.store.Put(ctx, l.key, l.writer, b, token)", "err = l.store.Put(ctx, l.key, l.writer, b, nil)",
		"driver_ledger", "siblings merged"},
	{"ledger/retry known only to its record applied again", "6.11 step 2: a known call never applies",
		"ledger/group.go", "if out == 0 && c.known != nil {", "if false && out == 0 && c.known != nil {",
		"driver_ledger", "records: a retry the counter forgot is answered from its record"},
	{"ledger/ambiguous put not retried", "6.9: an ambiguous put is kept pending and retried",
		"ledger/ledger.go", "l.stats.fail('a')", "l.stats.fail('a')\n\t\treturn true, err",
		"driver_ledger", "ambiguous put that landed, then the retry"},
	{"ledger/retirement without records", "6.11 step 5: the retired entry's transactions are recorded first",
		"ledger/index.go", "func (l *Ledger) recordRetiring(ctx context.Context, merged *tpncounter.Counter, actor crdt.ActorID, now time.Time) bool {",
		"func (l *Ledger) recordRetiring(ctx context.Context, merged *tpncounter.Counter, actor crdt.ActorID, now time.Time) bool {\n\treturn true",
		"driver_ledger", "retire: an idle writer's unrecorded transaction is recorded before it retires"},
	{"ledger/retirement record made again", "6.11 step 5: a record already made is not put again",
		"ledger/index.go", "if !slices.ContainsFunc(xs[i].records, made) && !slices.ContainsFunc(xs[i].old, made) {",
		"if true || !slices.ContainsFunc(xs[i].records, made) && !slices.ContainsFunc(xs[i].old, made) {",
		"driver_ledger", "retire: declined while a record put is refused"},
	{"ledger/retirement despite a refused record put", "6.11 step 5: if one fails, B is not retired",
		"ledger/index.go", "return !slices.ContainsFunc(errs, func(err error) bool { return err != nil })", "return true || !slices.ContainsFunc(errs, func(err error) bool { return err != nil })",
		"driver_ledger", "retire: declined while a record put is refused"},
	{"ledger/idle actor not dated by its record", "6.9 RetireAfter: idle since its newest transaction's record",
		"ledger/ledger.go", "ok && at.Before(s.since) {", "false && ok && at.Before(s.since) {",
		"driver_ledger", "retire: an idle writer is retired after its transactions are recorded"},
	{"ledger/stored sighting not dating", "6.9 Stored sightings: a writer no record dates is dated from the earliest sighting of its version",
		"ledger/ledger.go", "if at, found := seen.dating(a, v, now); found && at.Before(s.since) {", "if at, found := seen.dating(a, v, now); false && found && at.Before(s.since) {",
		"driver_ledger", "retire: an idle writer whose records are gone is dated by a stored sighting"},
	{"ledger/stored sightings not put", "6.9 Stored sightings: a pass that finds a writer no record dates puts its sighting",
		"ledger/seen.go", "	if !s.ok || len(s.add) == 0 {", "	if true || !s.ok || len(s.add) == 0 {",
		"driver_ledger", "retire: an idle writer whose records are gone is dated by a stored sighting"},
	{"ledger/cycle without the flush", "6.11 step 3: a failed record put is written before the next cycle",
		"ledger/index.go", "func (l *Ledger) flush(ctx context.Context) error {", "func (l *Ledger) flush(ctx context.Context) error {\n\treturn nil",
		"driver_ledger", "records: a refused record put is written before the next cycle"},
	{"ledger/pending write not retracted", "6.11 step 4: a pending txn recorded by another writer is taken out",
		"ledger/ledger.go", "if len(l.unacked) > 0 {", "if false && len(l.unacked) > 0 {",
		"driver_ledger", "records: a pending write's transaction recorded by another writer is taken out"},
	{"ledger/timed transaction older than the window accepted", "6.11 step 1: a time before now - W is outside_window",
		"ledger/ledger.go", "if at, ok := l.txnTime(txn); ok && at.Before(now.Add(-l.opts.RetryWindow)) {", "if at, ok := l.txnTime(txn); false && ok && at.Before(now.Add(-l.opts.RetryWindow)) {",
		"driver_ledger", "records: the retry window with TxnTime"},
	{"ledger/timed record live by its own time only", "6.11 Window: with TxnTime, a record lives while its transaction's time is inside the window",
		"ledger/index.go", "if at, ok := l.txnTime(txn); ok && at.UnixNano() >= oldest {", "if at, ok := l.txnTime(txn); false && ok && at.UnixNano() >= oldest {",
		"driver_ledger", "records: a timed transaction's records live while its time is inside the window"},
	{"ledger/FutureSkew unchecked", "6.11 step 1: with TxnTime, a time more than FutureSkew after the clock is outside_window",
		"ledger/ledger.go", "} else if skew := l.opts.Counter.FutureSkew; at.After(l.now().Add(skew)) {", "} else if skew := l.opts.Counter.FutureSkew; false && at.After(l.now().Add(skew)) {",
		"driver_ledger", "records: a timed transaction's records live while its time is inside the window"},
	{"ledger/FutureSkew default an hour", "6.11 step 1: FutureSkew defaults to 1 minute with TxnTime",
		"ledger/ledger.go", "opts.Counter.FutureSkew = cmp.Or(opts.Counter.FutureSkew, DefaultFutureSkew)", "opts.Counter.FutureSkew = cmp.Or(opts.Counter.FutureSkew, time.Hour)",
		"driver_ledger", "records: a timed transaction's records live while its time is inside the window"},
	{"ledger/own duplicate acknowledged unrecorded", "6.11 step 3: a duplicate of the ledger's own copy whose record it owes is acknowledged once the record is written",
		"ledger/group.go", "\tl.checkRecorded(ctx, group)\n", "\n",
		"driver_ledger", "a resend after a pending write is a duplicate that lands it"},
	{"ledger/retired entry ahead written", "6.9: a read apart that shows the ledger's entry retired drops what is ahead of the store and takes a new incarnation",
		"ledger/ledger.go", "retired := !held && !pending && fetched != l.cyc.Local && retiredIn(fetched, l.writer)", "retired := false && retiredIn(fetched, l.writer)",
		"driver_ledger", "retire: a writer ahead of the store finds its entry retired"},
	{"ledger/refused state read in place", "6.9: reads keep the fetch apart from a refused put's state taken back out",
		"internal/retry/cycle.go", "c.Seen, c.Ahead = nil, true", "c.Seen = nil",
		"driver_ledger", "refused put"},
	{"ledger/write in doubt kept past the grace", "6.9 RetiredGrace: a write in doubt whose last read began more than RetiredGrace/2 ago is forgotten",
		"ledger/retire_grace.go", "l.cyc.Local, l.cyc.Seen, l.cyc.Pending, l.cyc.Ahead, l.unacked, l.takenOut = nil, nil, false, false, nil, nil", "if !l.cyc.Pending && len(l.unacked) == 0 {\n\t\t\tl.cyc.Local, l.cyc.Seen = nil, nil\n\t\t}",
		"driver_ledger", "grace: a write in doubt older than RetiredGrace/2 is forgotten"},
	{"ledger/sharded marker doubt forgotten", "6.12 Layout check: the final error wraps ambiguous_write when a marker Put was ambiguous",
		"ledger/sharded.go", "err, doubt = retry.AmbiguousErr(err), true", "err = retry.AmbiguousErr(err)",
		"driver_ledger", "sharded: a marker put in doubt, then refused, fails ambiguous_write"},
	{"ledger/dead record trusted", "6.11 Window: a record is live when at >= t - W",
		"ledger/index.go", "case r.At.UnixNano() < oldest:", "case r.At.UnixNano() < oldest-oldest:",
		"driver_ledger", "records: past the retry window an untimed retry is applied again"},
	{"ledger/pending transaction taken out at its own writer's record", "6.11 step 4: a record naming the ledger's own incarnation keeps the txn",
		"ledger/index.go", "if r.Writer == l.writer {", "if false && r.Writer == l.writer {",
		"driver_ledger", "records: a pending transaction its own writer's record names stays"},
	{"ledger/pending transaction taken out whatever the record's version", "6.11 step 4: taken out only when fetched holds B at the record's version or later",
		"ledger/index.go", "if v := fetched.Version(r.Writer); v >= r.Version || v == 0 && foldedAfter(fetched, r.At) {", "if v := fetched.Version(r.Writer); true || v >= r.Version {",
		"driver_ledger", "records: a pending transaction and a read older than its record"},
	{"ledger/pending transaction taken out only past the record's version", "6.11 step 4: at that record's version or later",
		"ledger/index.go", "if v := fetched.Version(r.Writer); v >= r.Version || v == 0 && foldedAfter(fetched, r.At) {", "if v := fetched.Version(r.Writer); v > r.Version || v == 0 && foldedAfter(fetched, r.At) {",
		"driver_ledger", "records: a pending transaction and a read older than its record"},
	{"ledger/a read older than the record not refused", "6.11 step 4: a stale read fails the attempt unavailable",
		"ledger/index.go", "if stale {", "if false && stale {",
		"driver_ledger", "records: a pending transaction and a read older than its record"},
	{"ledger/record without its writer's version", "6.11 step 3: version, the writer's in the state that landed the txn",
		"ledger/group.go", "return max(v, 1)", "return 1",
		"driver_ledger", "records: a record carries its writer's version in the state that landed it"},
	{"ledger/retirement record without the retired writer's version", "6.11 step 5: version, B's in the state being written",
		"ledger/index.go", "Writer: w, At: now, Version: max(v, 1)}", "Writer: w, At: now, Version: max(v-v, 1)}",
		"driver_ledger", "retire: the records of a retired writer carry its version"},
	{"ledger/a retirement record naming its own writer above the store", "6.9: a record a pass names its own writer in carries its version in the state read",
		"ledger/index.go", "v = l.stored // a version the store holds", "v = max(v, l.stored) // a version the store holds",
		"driver_ledger", "retire: actors recorded by earlier writes retire more than 16 at once"},
	{"ledger/an idle actor retired with its late copy counted", "6.9 RetireAfter: an actor's copies another writer counted first leave uncounted when it retires",
		"ledger/ledger.go", "late := l.sightings[a].late", "late := []crdt.TxnID(nil)",
		"driver_ledger", "retire: an idle writer holding a copy another writer counted first retires without it"},
	{"ledger/a late copy recorded as the retired writer's", "6.11 step 5: a pass puts no record for a late copy",
		"ledger/index.go", "continue // another writer counted it, and recorded it", "_ = 0 // another writer counted it, and recorded it",
		"driver_ledger", "retire: an idle writer holding a copy another writer counted first retires without it"},
	{"ledger/an actor judged against a stale read retired", "6.9 RetireAfter: an actor whose newest copy is judged against a state older than its records is not retired at that pass",
		"ledger/ledger.go", "s.dated, s.checked, s.late = true, !unsure && due, late", "s.dated, s.checked, s.late = true, due, late",
		"driver_ledger", "retire: an idle writer whose copy is judged against a stale read is not retired"},
	{"ledger/an actor dated by another writer's record", "6.9 RetireAfter: an actor is dated by the records of its newest transactions that name it",
		"ledger/index.go", "if r.Writer == actor && r.At.After(at) {", "if r.At.After(at) {",
		"driver_ledger", "retire: an actor is dated by its own records, not by another writer's"},
	{"ledger/a copy that met another answered applied", "6.11 step 3: a call whose copy meets another writer's recorded copy is a duplicate, owner that writer",
		"ledger/group.go", "if o := owners[i]; o != nil {", "if o := owners[i]; false && o != nil {",
		"driver_ledger", "records: a copy landing next to another writer's recorded copy is a duplicate"},
	{"ledger/a copy that met another not watched", "6.11 step 3: a copy that met another writer's is decided again once that writer no longer holds it",
		"ledger/index.go", "	if v == meet {", "	if false && v == meet {",
		"driver_ledger", "retire: an idle writer whose copy does not count retires while the owner writes"},
	{"ledger/record put without confirming it", "6.11 step 3: a record naming the incarnation is read before it is put",
		"ledger/index.go", "case p.confirm && p.rec.Writer == l.writer:", "case p.confirm && false:",
		"driver_ledger", "records: a record carries its writer's version in the state that landed it"},
	{"ledger/retirement record naming the retired writer's copy that does not count", "6.11 step 5: the record names the copy that counts",
		"ledger/index.go", "if o, ok := merged.Owner(txn); ok && o.Actor != actor && o.Amount == amount {", "if o, ok := merged.Owner(txn); false && ok && o.Actor != actor && o.Amount == amount {",
		"driver_ledger", "retire: an idle writer whose copy does not count retires while the owner writes"},
	{"ledger/give-up record not judged", "6.11 step 6: the record of a copy given up is fetched and judged before it is put",
		"ledger/index.go", "case p.judge != nil && p.rec.Writer != l.writer:", "case false:",
		"driver_ledger", "records: a writer records the copy that counts before giving its own up"},
	{"ledger/record put superseding live records", "6.11 step 3: a record Put takes its fetch's token only when that fetch read no live record",
		"ledger/index.go", "if len(x.records) > 0 || len(x.elsewhere) > 0 {\n\t\treturn nil", "if false {\n\t\treturn nil",
		"driver_ledger", "records: a writer records the copy that counts before giving its own up"},
	{"ledger/a copy given up kept", "6.11 step 6: once its record is written, a copy given up is taken out",
		"ledger/index.go", "l.takeOut(l.writer, l.stored, true, given...)", "_ = given //",
		"driver_ledger", "records: a writer takes out the copy it gave up, whatever it reads later"},
	{"ledger/a copy given up unrecorded", "6.11 step 6: the copy that counts is recorded before a copy is given up",
		"ledger/index.go", "if len(ceded) == 0 {", "if true {",
		"driver_ledger", "records: a writer records the copy that counts before giving its own up"},
	{"ledger/record read for a transaction the fetch holds", "6.11 step 1: only calls whose txn fetched does not hold read a record",
		"ledger/index.go", "if fetched.Status(c.txn) == tpncounter.Unknown {", "if true || fetched.Status(c.txn) == tpncounter.Unknown {",
		"driver_ledger", "duplicate credit"},
	{"ledger/group: a retried write drops members", "6.9 group commit: the cycle retries with every remaining member",
		"ledger/group.go", "if brokenDropOnRetry && attempt > 1 && len(open) > 1 {", "if attempt > 1 && len(open) > 1 {",
		"driver_ledger", "group: a refused put"},
	{"ledger/group: members acknowledged before the write lands", "6.9 group commit: after the last attempt every remaining member gets the error",
		"ledger/group.go", "if brokenAckEarly && i > 0 {", "if i > 0 {",
		"driver_ledger", "group: a refused put"},
	{"ledger/group: refused members kept in the state", "6.9 group commit: unavailable takes every applied member back out",
		"ledger/ledger.go", "if brokenKeepRefused && len(applied) > 1 {", "if len(applied) > 1 {",
		"driver_ledger", "group: a refused put"},
	{"ledger/no stale-read drop", "6.9 RetiredGrace: a read more than RetiredGrace/2 after the previous one starts from the store alone",
		"ledger/retire_grace.go", "if now.Sub(l.own.read) > l.opts.RetiredGrace/2 {", "if false && now.Sub(l.own.read) > l.opts.RetiredGrace/2 {",
		"driver_ledger", "grace: a read older than RetiredGrace/2 drops the ledger's state"},
	{"ledger/no new incarnation", "6.9 RetiredGrace: an entry unchanged for more than RetireAfter + RetiredGrace/2 is not written again",
		"ledger/retire_grace.go", "|| l.own.changed().IsZero() || now.Sub(l.own.changed()) <= max(l.opts.RetireAfter, 0)+l.opts.RetiredGrace/2)", "|| true || l.own.changed().IsZero() || now.Sub(l.own.changed()) <= max(l.opts.RetireAfter, 0)+l.opts.RetiredGrace/2)",
		"driver_ledger", "grace: a half unchanged past RetireAfter + RetiredGrace/2 takes a new incarnation before a read that lags the fold"},
	{"ledger/entry dated by its newest half", "6.9 RetiredGrace: the entry is dated by the half that changed least recently",
		"ledger/retire_grace.go", "o.seq[0] != 0 && (o.seq[1] == 0 || o.at[0].Before(o.at[1]))", "o.seq[0] != 0 && (o.seq[1] == 0 || o.at[1].Before(o.at[0]))",
		"driver_ledger", "grace: a half unchanged past RetireAfter + RetiredGrace/2 takes a new incarnation before a read that lags the fold"},
	{"ledger/new incarnation at exactly RetireAfter + RetiredGrace/2", "6.9 RetiredGrace: a new incarnation only when more than RetireAfter + RetiredGrace/2 passed",
		"ledger/retire_grace.go", "now.Sub(l.own.changed()) <= max(l.opts.RetireAfter, 0)+l.opts.RetiredGrace/2)", "now.Sub(l.own.changed()) < max(l.opts.RetireAfter, 0)+l.opts.RetiredGrace/2)",
		"driver_ledger", "grace: a read older than RetiredGrace/2 drops the ledger's state"},
	{"ledger/fold with the cutoff now", "6.9 RetiredGrace: a pass folds with the cutoff now - RetiredGrace",
		"ledger/retire_grace.go", "l.stats.folded += merged.Fold(now.Add(-l.opts.RetiredGrace))", "l.stats.folded += merged.Fold(now)",
		"driver_ledger", "grace: a read older than RetiredGrace/2 drops the ledger's state"},
	{"ledger/never fold", "6.9 RetiredGrace: every pass folds (6.10)",
		"ledger/retire_grace.go", "l.stats.folded += merged.Fold(now.Add(-l.opts.RetiredGrace))", "l.stats.folded += 0",
		"driver_ledger", "grace: a writer idle past RetireAfter + RetiredGrace/2 takes a new incarnation"},
	{"tpncounter/Compact ignores the overflowing half", "6.6: Compact is all or nothing",
		"tpncounter/counter.go", "if err := e.checkSeq(); err != nil {\n\t\t\t\treturn false, err\n\t\t\t}\n\t\t\tjobs = append(jobs, job{g, e, p})",
		"if err := e.checkSeq(); err != nil {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tjobs = append(jobs, job{g, e, p})",
		"driver_ledger", "Compact is all or nothing when one half overflows"},
	{"tally/write timestamp not above the last", "7.4: ts = max(last_ts + 1, now)",
		"tally/mutator.go", "ts := max(m.lastTS+1, m.c.nowMicros())", "ts := m.c.nowMicros()",
		"driver_tally", "flush writes the mutator's whole state"},
	{"tally/Abandon at the pending write's timestamp", "7.4: Abandon writes at a fresh, greater ts",
		"tally/mutator.go", "if !bytes.Equal(target, m.lastSent) {", "if !bytes.Equal(target, m.lastSent) && false {",
		"driver_tally", "Abandon overwrites an unknown write with the acknowledged state"},
	{"tally/GC folds a shard at the cutoff", "7.4: expires_at < now - Grace",
		"tally/counter.go", "case s.ExpiresAt < cutoff:", "case s.ExpiresAt <= cutoff:",
		"driver_tally", "GC folds final shards into the tally"},
	{"tally/read counts a shard inside the tally", "7.4: shards at or below folded_through are skipped",
		"tally/counter.go", "if s.ExpiresAt <= v.tally.FoldedThrough {", "if false && s.ExpiresAt <= v.tally.FoldedThrough {",
		"driver_tally", "a shard inside the tally is skipped and deleted again"},
	{"tally/a tally folded through the future read", "7.4: a tally folded through the reader's future is corrupt",
		"tally/counter.go", "if now := c.nowMicros(); v.tally.FoldedThrough > now {", "if now := c.nowMicros(); false && v.tally.FoldedThrough > now {",
		"driver_tally", "a tally folded through the future is corrupt"},
	{"deltalog/window bound exclusive", "8.4: now - Window is accepted",
		"internal/rowlog/rowlog.go", "t.Before(now.Add(-window)) ||", "!t.After(now.Add(-window)) ||",
		"driver_deltalog", "add writes one cell; a resend rewrites it"},
	{"deltalog/merge cutoff without the safety margin", "8.5: cutoff = now - Window - SafetyMargin",
		"deltalog/counters.go", "cutoff := start.Add(-c.opts.Window - c.opts.SafetyMargin)", "cutoff := start.Add(-c.opts.Window)",
		"driver_deltalog", "merge cells"},
	{"deltalog/read past the merge cell", "8.3: a read stops at the first merge cell",
		"deltalog/counters.go", "return cell.Kind != KindMerge", "return true",
		"driver_deltalog", "merge cells"},
	{"tally/GC folds what the tally holds", "7.4: GC folds the longest run of final shards whose tally fits its encoding",
		"tally/counter.go", "final[i+1].ExpiresAt > s.ExpiresAt) && acc.fits() {", "final[i+1].ExpiresAt > s.ExpiresAt) {",
		"driver_tally", "GC leaves the shards whose tally would pass int64"},
	{"deltalog/merge cell where it fits", "8.3: the merge cell goes at the newest cell whose aggregate fits a cell",
		"deltalog/log.go", "acc.Fits() && prefix[j].Kind == KindRegular", "prefix[j].Kind == KindRegular",
		"driver_deltalog", "a merge whose sum would not fit goes below"},
	{"deltalog/compact grace exclusive", "8.5: written <= now - CompactGrace",
		"deltalog/counters.go", "if cell.Kind == KindMerge && cell.Written <= horizon.UnixNano() {", "if cell.Kind == KindMerge && cell.Written < horizon.UnixNano() {",
		"driver_deltalog", "compaction waits CompactGrace, then deletes what a merge cell covers"},
	{"deltalog/merge scans from the top", "8.5: a merge scans from the first cell older than its cutoff",
		"deltalog/counters.go", "from, ok := timeid.AppendDescendingBefore(nil, cutoff)", "from, ok := []byte(nil), true",
		"driver_deltalog", "merge cells"},
	{"deltalog/merge without a drain", "8.5: a merge scan reads at most MaxMergeCells regular cells, then drains",
		"deltalog/counters.go", "if err == nil && c.tooMany(cells) {\n\t\tcells, err = c.drain(", "if false && err == nil && c.tooMany(cells) {\n\t\tcells, err = c.drain(",
		"driver_deltalog", "a merge drains a backlog oldest first"},
	{"deltalog/drain folds a partial scan", "8.5 drain: only a scan that reached the merge cell below, or the end, is folded",
		"deltalog/counters.go", "\t\t\thi = t\n\t\tcase err != nil:\n", "\t\t\treturn cells[:len(cells)-1], nil\n\t\tcase err != nil:\n",
		"driver_deltalog", "a merge drains a backlog oldest first"},
	{"deltalog/drain gives up on a dense tick", "8.5 drain step (2): with no time to split at, the first scan again without the limit",
		"deltalog/counters.go", "return c.scanVisible(ctx, counter, c.opts.Clock(), first, 0)", "return nil, fmt.Errorf(\"%w: %x\", crdt.ErrTooLarge, first)",
		"driver_deltalog", "a drain merges a tick holding more than the limit whole"},
	{"deltalog/compact scans from the merge cutoff", "8.5: compaction scans from the first cell older than now - CompactGrace - Window - SafetyMargin",
		"deltalog/counters.go", "from, ok := timeid.AppendDescendingBefore(nil, horizon.Add(-c.opts.Window-c.opts.SafetyMargin))", "from, ok := timeid.AppendDescendingBefore(nil, horizon.Add(-c.opts.Window))",
		"driver_deltalog", "compaction waits CompactGrace, then deletes what a merge cell covers"},
	{"balance/version not after the sum rows", "9.3 step 4: the version follows every valid sum row",
		"balance/accounts.go", "if t := s.UpdateID.Time().Add(100 * time.Nanosecond); !t.Before(vt) {", "if t := s.UpdateID.Time().Add(100 * time.Nanosecond); false && !t.Before(vt) {",
		"driver_balance", "step 4: the version follows a sum row ahead of the clock"},
	{"balance/transactions layout trusted forever", "9.4 Layout: Apply trusts a check of the marker for one second (or SafetyMargin)",
		"balance/txnlayout.go", "now.Sub(at) < tx.trust()", "true",
		"driver_balance", "transactions: a retry before and after the merge that records it"},
	{"balance/transactions layout trusted a second past SafetyMargin", "9.4 Layout: a check is trusted for SafetyMargin when it is under a second",
		"balance/txnlayout.go", "return min(layoutTrust, tx.opts.SafetyMargin)", "return layoutTrust",
		"driver_balance", "transactions: a layout check is trusted for SafetyMargin when it is under a second"},
	{"balance/transactions layout not marked", "9.4 Layout: an Apply that reads an empty marker writes its layout with its row",
		"balance/transactions.go", "			u = append([]update{{Partition: layoutPartition(account)", "			_ = append([]update{{Partition: layoutPartition(account)",
		"driver_balance", "transactions: a retry before and after the merge that records it"},
	{"balance/row partition sum row stamped by the clock", "9.4 Places: a merge writes its S row with its place as timestamp",
		"balance/placed.go", "			m.Timestamp = at\n", "",
		"driver_balance", "transactions: a stale record read, settling and record expiry"},
	{"balance/row partition tombstone at its version", "9.4 Places: a tombstone at the newest place of a row it names",
		"balance/placed.go", "	if at < 0 { // a tombstone names only rows the merge read: not reached", "	if at < 0 || r.Kind == KindTombstone {",
		"driver_balance", "transactions: a retry before and after the merge that records it"},
	{"balance/row partition sum row at its version only", "9.4 Places: a sum row at the newest place of a live row it read if later than its version",
		"balance/placed.go", "			for _, l := range v.Live {", "			for _, l := range v.Live[:0] {",
		"driver_balance", "transactions: a sum row is placed after a row written by a clock ahead"},
	{"balance/row partition removal leaves an unsettled sum row", "9.4 Removal: removing a tombstone of a sum row left unsettled needs that sum row",
		"balance/placed.go", "		return append(down(k), up[k]...)", "		return down(k)",
		"driver_balance", "transactions: removal takes an unsettled sum row whose tombstone goes"},
	{"balance/row partition removal without its needs", "9.4 Removal: every row a removed row needs, at every place",
		"balance/placed.go", "		if brokenPlacedNoNeeds {", "		if true {",
		"driver_balance", "transactions: removal takes a later copy of another amount"},
	{"balance/settle after GC grace", "9.3 step 7: settle once SettleGrace old",
		"balance/evaluate.go", "if !s.Settled && !s.UpdateID.Time().Before(now.Add(-settleGrace)) {", "if !s.Settled && !s.UpdateID.Time().Before(now.Add(-gcGrace)) {",
		"driver_balance", "merge steps 4 to 8 over time"},
	{"balance/collect young rows", "9.3 step 8: only GCGrace-old invalid rows",
		"balance/evaluate.go", "old := func(r Row) bool { return r.UpdateID.Time().Before(now.Add(-gcGrace)) }", "old := func(r Row) bool { return true }",
		"driver_balance", "a merge stopped after its tombstones leaves the balance unchanged"},
	{"balance/SafetyMargin above 2·FutureSkew", "9.3 Options: SafetyMargin > 2·FutureSkew, strictly",
		"internal/rowlog/rowlog.go", "case margin-skew <= skew:", "case margin-skew < skew:",
		"driver_balance", "option check 3 (SafetyMargin equal to 2·FutureSkew: it must exceed it)"},
	{"balance/SettleGrace covers MaxMerge + SafetyMargin", "9.3 Options: SettleGrace ≥ MaxMerge + SafetyMargin",
		"balance/accounts.go", "case o.SettleGrace-o.SafetyMargin < o.MaxMerge:", "case o.SettleGrace < o.MaxMerge:",
		"driver_balance", "option check 6 (SettleGrace just below MaxMerge + SafetyMargin)"},
	{"balance/GCGrace at least SettleGrace", "9.3 Options: GCGrace ≥ SettleGrace",
		"balance/accounts.go", "case o.GCGrace-o.SafetyMargin < o.Window || o.GCGrace < o.SettleGrace:", "case o.GCGrace-o.SafetyMargin < o.Window:",
		"driver_balance", "option check 9 (GCGrace below SettleGrace, though above Window + SafetyMargin)"},
	{"ledger/MaxGroup above H + F accepted", "6.9: MaxGroup larger than HistoryLength + FoldedLength is invalid_config",
		"ledger/ledger.go", "if opts.MaxGroup < 0 || opts.MaxGroup > window {", "if opts.MaxGroup < 0 || opts.MaxGroup > window+1 {",
		"driver_ledger", "option check 7 (MaxGroup 6, above H + F = 5)"},
	{"bounded/a negative Keep accepted", "13.5: Open refuses a negative Keep",
		"bounded/account.go", "case opts.Keep < 0:", "case false && opts.Keep < 0:",
		"driver_bounded", "option check 2 (a negative Keep)"},
	{"balance/one tombstone per update id", "9.3 step 5: an N and an S row of one update id: only the first is covered",
		"balance/evaluate.go", "\t\tif !byID[r.UpdateID] {", "\t\tif true {",
		"driver_balance", "step 5: an N and an S row of one update id: one tombstone"},
	{"balance/a sum past int64 covered whole", "9.3 step 5: a sum that does not fit covers the oldest while their running sum fits",
		"balance/evaluate.go", "\tif _, fits := sum.Int64(); fits {\n\t\treturn out", "\tif _, fits := sum.Int64(); true || fits {\n\t\treturn out",
		"driver_balance", "transactions: a row partition past int64 merges its oldest rows"},
	{"balance/a sum past int64 covered in clustering order", "9.3 step 5 and 9.4: in a row partition the oldest by place",
		"balance/evaluate.go", "\tif v.places != nil {\n\t\tslices.SortStableFunc(age", "\tif false {\n\t\tslices.SortStableFunc(age",
		"driver_balance", "transactions: a row partition past int64 merges its oldest rows"},
	{"balance/settled merge deletes nothing", "9.3 step 7: a settled merge deletes the rows it cancelled",
		"balance/evaluate.go", "\t\t\tp.deletes = append(p.deletes, r)\n", "\t\t\t_ = r\n",
		"driver_balance", "merge steps 4 to 8 over time"},
	{"balance/covered S row deleted early", "9.3 step 7: a cancelled S row some of whose tombstones stay is kept",
		"balance/evaluate.go", "if r.Kind == KindSum && (!allGone(v.tombs[r.Version])", "if false && r.Kind == KindSum && (!allGone(v.tombs[r.Version])",
		"driver_balance", "step 7: a covered sum row stays while its tombstones stay"},
	{"tally/resent after expires_at", "7.4: a failed attempt is never resent once now ≥ expires_at",
		"tally/counter.go", "\t\tif stillOK != nil && !stillOK() {", "\t\tif false && stillOK != nil && !stillOK() {",
		"driver_tally", "a send stops resending at expires_at"},
	{"tally/a refused attempt not resent", "7.4: a failed attempt, refused or ambiguous, is resent",
		"tally/counter.go", "\t\tlast = err\n\t\tif k := retry.Classify(err); k == retry.Invalid {", "\t\tlast = err\n\t\tif errors.Is(err, crdt.ErrUnavailable) {\n\t\t\tbreak\n\t\t}\n\t\tif k := retry.Classify(err); k == retry.Invalid {",
		"driver_tally", "a refused attempt is resent"},
	{"tally/a failed retry without the send's kinds", "7.4: Retry and Abandon that fail are ambiguous_write together with the send's kinds",
		"tally/mutator.go", "\treturn retry.AmbiguousErr(m.write(ctx, target, ts))", "\tif err := retry.AmbiguousErr(m.write(ctx, target, ts)); err != nil {\n\t\treturn crdt.ErrAmbiguousWrite\n\t}\n\treturn nil",
		"driver_tally", "a failed retry is ambiguous_write with the send's kinds"},
	{"tally/a retry resent at the last timestamp", "7.4: Retry writes the pending bytes at a fresh ts when they were not the last sent",
		"tally/mutator.go", "\tif !bytes.Equal(target, m.lastSent) {", "\tif !bytes.Equal(target, target) {",
		"driver_tally", "a retry after a failed abandon writes at a fresh timestamp"},
	{"tally/retry settles after expiry", "7.4: an unresolved write is not resent once the clock reaches expires_at",
		"tally/mutator.go", "if m.dead || m.c.nowMicros() >= m.expiresAt {", "if m.dead {",
		"driver_tally", "an unknown write cannot be settled after expiry"},
	{"tally/flush at expires_at written", "7.4: a Flush's ts must be < expires_at (ts = expires_at is expired)",
		"tally/mutator.go", "if ts >= m.expiresAt {", "if ts > m.expiresAt {",
		"driver_tally", "a flush whose write timestamp reaches expires_at is expired"},
	{"tally/flush just before expires_at refused", "7.4: a Flush at ts = expires_at − 1µs is written",
		"tally/mutator.go", "if ts >= m.expiresAt {", "if ts >= m.expiresAt-1 {",
		"driver_tally", "a flush whose write timestamp reaches expires_at is expired"},
	{"tally/Margin equal to Lifetime accepted", "7.4: Margin < Lifetime, strictly",
		"tally/counter.go", "case c.Margin >= c.Lifetime:", "case c.Margin > c.Lifetime:",
		"driver_tally", "option check 6 (Margin equal to Lifetime (1h): it must be below it)"},
	{"tally/Grace equal to 3·MaxSkew refused", "7.4: Grace ≥ 3·MaxSkew accepts equality",
		"tally/counter.go", "case c.MaxSkew > c.Grace/3:", "case c.MaxSkew >= c.Grace/3:",
		"driver_tally", "option check 11 (Grace equal to 3·MaxSkew (8h))"},
	{"deltalog/SafetyMargin equal to 2·FutureSkew accepted", "8.4: SafetyMargin must exceed 2·FutureSkew",
		"internal/rowlog/rowlog.go", "case margin-skew <= skew:", "case margin-skew < skew:",
		"driver_deltalog", "option check 8 (SafetyMargin (1m) equal to 2·FutureSkew: it must exceed it)"},
	{"deltalog/a negative MaxScan accepted", "8.4: a negative duration is invalid_config",
		"deltalog/counters.go", "rowlog.CheckTiming(o, o.Window, o.FutureSkew, o.SafetyMargin, o.MaxScan, o.CompactGrace)",
		"rowlog.CheckTiming(o, o.Window, o.FutureSkew, o.SafetyMargin, o.CompactGrace)",
		"driver_deltalog", "option check 5 (a negative MaxScan)"},
	{"ledger/HistoryLength 1024 refused", "6.1: HistoryLength 1..1024",
		"tpncounter/options.go", "if o.HistoryLength < 0 || o.HistoryLength > MaxHistoryLength {", "if o.HistoryLength < 0 || o.HistoryLength >= MaxHistoryLength {",
		"driver_ledger", "option check 12 (HistoryLength 1024, the most (F defaults to 1024))"},
	{"ledger/MaxActors 65537 accepted", "6.1: MaxActors 1..65536",
		"tpncounter/options.go", "if o.MaxActors < 0 || o.MaxActors > MaxActorsLimit {", "if o.MaxActors < 0 || o.MaxActors > MaxActorsLimit+1 {",
		"driver_ledger", "option check 22 (MaxActors 65537)"},
	{"ledger/declined actors retired one at a time", "6.9 RetireAfter: actors whose Retire declined (at least two) are retired with one RetireAll",
		"ledger/ledger.go", "\tfor _, g := range sharingGroups(merged, shared) {", "\tfor _, g := range [][]crdt.ActorID(nil) {",
		"driver_ledger", "retire: idle writers that share a transaction retire together"},
	{"ledger/a late copy looked for only among the newest", "6.9 RetireAfter: once due, the records of all the actor's copies are read to find a late one",
		"ledger/ledger.go", "if !unsure && due {", "if false {",
		"driver_ledger", "retire: an idle writer holding a late copy that is not its newest retires without it"},
	{"ledger/a group retired before every member is recorded", "6.9 RetireAfter: a group retires once every member is recorded",
		"ledger/ledger.go", "\t\t\tall = record(a) && all", "\t\t\t_ = record(a)",
		"driver_ledger", "retire: idle writers that share a transaction wait for all their records"},
	{"ledger/recorded again at every pass", "6.9 RetireAfter: an actor's transactions are recorded once per version",
		"ledger/ledger.go", "\t\tif s.recorded || tried[a] || budget == 0 {", "\t\tif tried[a] || budget == 0 {",
		"driver_ledger", "retire: idle writers linked by shared transactions retire together, however many"},
	{"ledger/applied whoever's copy counts", "6.9: applied if an earlier attempt applied it and its copy is the one that counts",
		"ledger/group.go", "out != tpncounter.Superseded && owner.Actor == l.writer {", "out != tpncounter.Superseded {",
		"driver_ledger", "records: an earlier attempt's copy that did not land is not the one applied"},
	{"ledger/applied though known from another writer's record", "6.11 step 2: a call known from its record is answered duplicate",
		"ledger/group.go", "out != tpncounter.Superseded && owner.Actor == l.writer {", "out != tpncounter.Superseded && (owner.Actor == l.writer || c.known != nil) {",
		"driver_ledger", "records: an earlier attempt's refused copy, then known from another writer's record"},
	{"ledger/group: a duplicate member answered applied", "6.9 group commit: a member whose Apply answers duplicate stays in the group as a duplicate",
		"ledger/group.go", "\t\tc.res.Outcome = out\n\t\tif c.applied {", "\t\tc.res.Outcome = tpncounter.Applied\n\t\tif c.applied {",
		"driver_ledger", "group: duplicate members"},
	{"ledger/group: a conflicting member acknowledged", "6.9 group commit: a member whose Apply fails gets that error and changes nothing",
		"ledger/group.go", "\t\t\tc.err = fmt.Errorf(\"ledger %q: %w\", l.key, err) // the state is unchanged: only this call fails\n\t\t\tcontinue", "\t\t\tc.res.Outcome = tpncounter.Applied\n\t\t\twrites = append(writes, c)\n\t\t\tcontinue",
		"driver_ledger", "group: a conflicting member"},
	{"ledger/group: an ambiguous group put acknowledged", "6.9 group commit: ambiguous_write keeps the state pending and the cycle retries",
		"ledger/ledger.go", "\t\terr = retry.AmbiguousErr(err)\n", "\t\tif len(applied) > 1 {\n\t\t\tl.cyc.Landed(merged, b)\n\t\t\tl.unacked = nil\n\t\t\treturn true, nil\n\t\t}\n\t\terr = retry.AmbiguousErr(err)\n",
		"driver_ledger", "group: an ambiguous put"},
	{"ledger/one kind for a refusal after an ambiguous write", "6.9: a member whose transaction is in the pending write gets an error wrapping both ambiguous_write and the refusal",
		"ledger/group.go", "if !l.cyc.Pending || errors.Is(err, crdt.ErrAmbiguousWrite) {", "if true || !l.cyc.Pending || errors.Is(err, crdt.ErrAmbiguousWrite) {",
		"driver_ledger", "group: an ambiguous put"},
	{"ledger/Apply not capped at store.MaxValue", "6.9: the ledger's counter caps Apply below store.MaxValue (6.3 step 3)",
		"ledger/ledger.go", "copts.MaxEncodedSize = min(cmp.Or(copts.MaxEncodedSize, store.MaxValue), store.MaxValue-writeRoom(copts))", "copts.MaxEncodedSize = 0",
		"driver_ledger", "group: too large for the store: the last member refused"},
	{"ledger/no room for a write's own changes", "6.9: the cap keeps room for a write's Compact, retirements and folds",
		"ledger/ledger.go", "store.MaxValue-writeRoom(copts))", "store.MaxValue)",
		"driver_ledger", "group: too large for the store: the last member refused"},
	{"tpncounter/Apply cap without the transaction's bound", "6.3 step 3: the cap counts len(actor) + len(txn) + 59 bytes for the transaction",
		"tpncounter/gcounter.go", "fitsCap(g.o.MaxEncodedSize-envelopeRoom, bound, g, g.twin)", "fitsCap(g.o.MaxEncodedSize-envelopeRoom, 0, g, g.twin)",
		"driver_ledger", "group: too large for the store: the last member refused"},
	{"tpncounter/Apply cap without room for the header", "6.3 step 3: the cap keeps 64 bytes for the header",
		"tpncounter/gcounter.go", "fitsCap(g.o.MaxEncodedSize-envelopeRoom, bound, g, g.twin)", "fitsCap(g.o.MaxEncodedSize, bound, g, g.twin)",
		"driver_ledger", "group: too large for the store: the last member refused"},
	{"ledger/a put the store refused as too large kept pending", "6.9: a put refused for what it is (too_large) is not retried and leaves nothing pending",
		"ledger/ledger.go", "\tcase retry.Classify(err) == retry.Invalid:", "\tcase false:",
		"driver_ledger", "too large for the store: a put refused"},
	{"ledger/dated by any record of its newest", "6.9 RetireAfter: an actor is dated by its records only when its newest credit and debit each have one naming it",
		"ledger/index.go", "(dated == len(txns) || brokenDateByAnyRecord) && !at.IsZero()", "!at.IsZero()",
		"driver_ledger", "retire: dated only when its newest credit and debit both have a record naming it"},
	{"ledger/idle exactly RetireAfter not retired", "6.9 RetireAfter: an actor unchanged for at least RetireAfter is retired",
		"ledger/ledger.go", "ready := !now.Before(due)", "ready := now.After(due)",
		"driver_ledger", "retire: an actor idle exactly RetireAfter is retired, not before"},
	{"ledger/retired before RetireAfter", "6.9 RetireAfter: an actor unchanged for less than RetireAfter stays",
		"ledger/ledger.go", "return s.since.Add(l.opts.RetireAfter) }", "return s.since.Add(l.opts.RetireAfter * 9 / 10) }",
		"driver_ledger", "retire: an actor idle exactly RetireAfter is retired, not before"},
	{"ledger/no pass when a seen actor reaches RetireAfter", "6.9 RetireAfter: a pass is due when an actor seen in the last pass would have been unchanged for RetireAfter",
		"ledger/ledger.go", "} else if !ready && due.Before(next) {", "} else if false && due.Before(next) {",
		"driver_ledger", "retire: an actor idle exactly RetireAfter is retired, not before"},
	{"ledger/a pass at every write", "6.9 RetireAfter: a pass is due every RetireAfter/8, not at every write",
		"ledger/ledger.go", "if !l.nextPass.IsZero() && now.Before(l.nextPass) && !now.Before(l.lastPass) {", "if false && !l.nextPass.IsZero() && now.Before(l.nextPass) && !now.Before(l.lastPass) {",
		"driver_ledger", "retire: a pass every RetireAfter/8"},
	{"ledger/a pass every RetireAfter/4", "6.9 RetireAfter: a pass is due at the last pass plus RetireAfter/8",
		"ledger/ledger.go", "next = now.Add(l.opts.RetireAfter / RetirePassDivisor)", "next = now.Add(l.opts.RetireAfter / 4)",
		"driver_ledger", "retire: a pass every RetireAfter/8"},
	{"ledger/more than 16 lookups per write", "6.9 RetireAfter: at most 16 record fetches of idle actors per write",
		"ledger/ledger.go", "newestTxns(merged, a); lookups+len(newest) <= MaxRetirePerWrite {", "newestTxns(merged, a); true {",
		"driver_ledger", "retire: at most 16 record lookups per write"},
	{"ledger/a write in doubt a read shows landed left unrecorded", "6.11 step 3: a write in doubt that a read shows landed makes the records of its unacknowledged transactions owed",
		"ledger/ledger.go", "\t\tl.owe(fetched)", "\t\tl.unacked = nil",
		"driver_ledger", "records: a write in doubt is recorded once a later read or write shows it landed"},
	{"ledger/a write in doubt a later put lands left unrecorded", "6.11 step 3: a put that lands a write in doubt makes the records of its unacknowledged transactions owed",
		"ledger/ledger.go", "\t\tl.owe(merged)", "\t\tl.unacked = nil",
		"driver_ledger", "records: a write in doubt is recorded once a later read or write shows it landed"},
	{"ledger/a call that could fold an unrecorded transaction applied", "6.11 step 3: a call is held back while the unrecorded txns and this attempt's number H + F",
		"ledger/group.go", "unrecorded+appliedNow >= windowOf(l.copts) &&", "unrecorded+appliedNow >= windowOf(l.copts)+1 &&",
		"driver_ledger", "records: a call that could fold an unrecorded transaction is held back"},
	{"ledger/a copy in doubt for long sent again beside the retry's", "6.11 step 4: a copy in doubt for RetireAfter/2 is judged by its records even when the fetch knows the txn",
		"ledger/ledger.go", "if fetched.Status(x) != tpncounter.Unknown && (!long || l.wouldOwn(fetched, x)) {", "if fetched.Status(x) != tpncounter.Unknown && (long || !long) {",
		"driver_ledger", "records: a copy in doubt for RetireAfter/2 is taken out when the account holds the retry's"},
	{"ledger/a copy in doubt for long that would count taken out", "6.11 step 4: a copy in doubt for RetireAfter/2 that would count beside the copies the fetch holds is not judged",
		"ledger/ledger.go", "return ok && o.Actor == l.writer", "return false && ok && o.Actor == l.writer",
		"driver_ledger", "records: a copy in doubt for RetireAfter/2 that would count stays beside the retry's"},
	{"ledger/a copy in doubt judged only after RetireAfter/2", "6.11 step 4: a copy in doubt for RetireAfter/2 exactly that the fetch knows is judged",
		"ledger/ledger.go", "now.Sub(l.unacked[x]) >= l.opts.RetireAfter/2 &&", "now.Sub(l.unacked[x]) > l.opts.RetireAfter/2 &&",
		"driver_ledger", "records: a copy in doubt for RetireAfter/2 is taken out when the account holds the retry's"},
	{"ledger/a give-up's owed record judged without a fresh read", "6.11 step 6: a ledger reads the account before writing an owed record that gives its copy up",
		"ledger/index.go", "if g := l.opts.RetiredGrace; gives || l.cyc.Local == nil", "if g := l.opts.RetiredGrace; gives && false || l.cyc.Local == nil",
		"driver_ledger", "records: a writer takes out the copy it gave up, whatever it reads later"},
	{"ledger/owed records written without the read past RetiredGrace/2", "6.9 RetiredGrace: before writing owed records, a ledger whose next read would drop its state reads first",
		"ledger/index.go", "g >= 0 && l.now().Sub(l.own.read) > g/2 {", "g >= 0 && l.now().Sub(l.own.read) > g/2 && false {",
		"driver_ledger", "grace: owed records are written after a read when the last read is older than RetiredGrace/2"},
	{"ledger/a pass records its own copy in doubt", "6.11 step 5: a pass records nothing for an actor whose copy yields to this ledger's copy in doubt",
		"ledger/index.go", "if _, doubt := l.unacked[txn]; w == l.writer && doubt && !brokenLongDoubt {", "if _, doubt := l.unacked[txn]; false && w == l.writer && doubt && !brokenLongDoubt {",
		"driver_ledger", "retire: a pass does not record its own copy in doubt as the one that counts"},
	{"ledger/a full account refused for good", "6.9 RetireAfter: a call with no room for the ledger's entry runs the pass at once",
		"ledger/group.go", "if errors.Is(err, crdt.ErrTooLarge) && !passed", "if false && errors.Is(err, crdt.ErrTooLarge) && !passed",
		"driver_ledger", "retire: a full account makes room for a new writer"},
	{"ledger/a full account's pass started without the new writer", "6.9 RetireAfter: the early pass counts the ledger's entry among the live actors for its order",
		"ledger/ledger.go", "own && !ok {", "false && !ok {",
		"driver_ledger", "retire: a full account's pass counts the new writer for its start"},
	{"ledger/a pending write's take-out dropped by a later stale judgement", "6.11 step 4: in id order, a txn taken out stays out when a later one is judged stale",
		"ledger/ledger.go", "return err // the take-outs before it stay", "l.cyc.Local = l.cyc.Sent\n\t\t\treturn err",
		"driver_ledger", "records: a pending write's take-out is kept when a later judgement is stale"},
	{"ledger/calls held back not tried again", "6.11 step 3: once the pending write lands and the owed records are written, the calls held back are tried again",
		"ledger/group.go", "\t\t\t\treturn held\n", "\t\t\t\treturn nil\n",
		"driver_ledger", "records: a call that could fold an unrecorded transaction is held back"},
	{"ledger/dated by the newest debit alone", "6.9 RetireAfter: dated by the later of its newest credit's and newest debit's records",
		"ledger/index.go", "\tfor _, txn := range txns {", "\tfor _, txn := range txns[max(len(txns)-1, 0):] {",
		"driver_ledger", "retire: dated by its newest credit and its newest debit"},
	{"ledger/no pass after one that left an actor undated", "6.9 RetireAfter: a pass is due at the next write when the last one left an actor undated",
		"ledger/ledger.go", "if undated || unrecorded {", "if unrecorded {",
		"driver_ledger", "retire: at most 16 record lookups per write"},
	{"tpncounter/ledger keeps an idle writer whose copy does not count", "6.10: a copy that is not the owner's leaves without counting while the owner's is folded",
		"tpncounter/retire.go", "if owns || rec.nfold == 0 {", "if true {",
		"driver_ledger", "retire: an idle writer whose copy does not count retires while the owner writes"},
	{"tpncounter/ledger retires writers holding an id in both halves", "6.10: Retire and RetireAll decline when a txn is held in both halves",
		"tpncounter/retire.go", "if g.twin != nil && g.twin.get(id) != 0 && !brokenRetireShared {", "if false && g.twin != nil && g.twin.get(id) != 0 && !brokenRetireShared {",
		"driver_ledger", "retire: writers holding one id as a credit and a debit are not retired"},
	{"ledger/pass from the first actor", "6.9 RetireAfter: a pass starts at the actor of index FNV-1a-32(writer) mod (number of live actors)",
		"ledger/ledger.go", "k := int(h.Sum32() % uint32(n))", "k := 0",
		"driver_ledger", "retire: at most 16 retirements per write, from the FNV-1a start"},
	{"ledger/more than 16 retirements per write", "6.9 RetireAfter: at most 16 actors recorded, and so retired alone, per write",
		"ledger/ledger.go", "budget, tried := MaxRetirePerWrite, map", "budget, tried := MaxRetirePerWrite+1, map",
		"driver_ledger", "retire: at most 16 actors recorded per write"},
	{"ledger/no pass after one that left retirable actors", "6.9 RetireAfter: a pass is due at the next write when the last one left retirable actors unrecorded",
		"ledger/ledger.go", "\t\tif !record(a) {\n\t\t\tunrecorded = true", "\t\tif !record(a) {\n\t\t\tunrecorded = tried[a]",
		"driver_ledger", "retire: at most 16 actors recorded per write"},
	{"ledger/no pass when the clock went back", "6.9 RetireAfter: a pass is due at the next write when the clock went back",
		"ledger/ledger.go", "if !l.nextPass.IsZero() && now.Before(l.nextPass) && !now.Before(l.lastPass) {", "if !l.nextPass.IsZero() && now.Before(l.nextPass) {",
		"driver_ledger", "retire: a pass when the clock went back"},
	{"ledger/no pass at the first write", "6.9 RetireAfter: a pass is due at the ledger's first write",
		"ledger/ledger.go", "if !l.nextPass.IsZero() && now.Before(l.nextPass) && !now.Before(l.lastPass) {", "if l.lastPass.IsZero() {\n\t\tl.lastPass, l.nextPass = now, now.Add(l.opts.RetireAfter/RetirePassDivisor)\n\t\treturn\n\t}\n\tif !l.nextPass.IsZero() && now.Before(l.nextPass) && !now.Before(l.lastPass) {",
		"driver_ledger", "retire: a pass when the clock went back"},
	{"ledger/a changed actor dated by its records", "6.9 RetireAfter: an actor whose version changed is idle from the first pass that saw the version",
		"ledger/ledger.go", "s = sighting{version: v, since: now, dated: true}", "s = sighting{version: v, since: now}",
		"driver_ledger", "retire: idle from the first pass that saw its version"},
	{"ledger/idle from the last pass", "6.9 RetireAfter: an unchanged version keeps the time of the first pass that saw it",
		"ledger/ledger.go", "if ok && s.version != v {\n\t\t\t// It wrote since", "if ok {\n\t\t\t// It wrote since",
		"driver_ledger", "retire: idle from the first pass that saw its version"},
	{"ledger/a failed record fetch starts another attempt", "6.11 step 1: a failed record Fetch fails the attempt as 6.9's Fetch does (no further attempt)",
		"ledger/group.go", "err = l.lookupAll(ctx, fetched, open)\n\tif err == nil {", "err = l.lookupAll(ctx, fetched, open)\n\tif err != nil && attempt <= l.opts.RetryCount {\n\t\treturn open\n\t}\n\tif err == nil {",
		"driver_ledger", "records: a failed record fetch fails the attempt"},
	{"ledger/a failed record fetch fails its call alone", "6.11 step 1: a failed record Fetch fails every call of the attempt",
		"ledger/index.go", "if errors.Is(errs[i], crdt.ErrCorruptEncoding) {", "if true || errors.Is(errs[i], crdt.ErrCorruptEncoding) {",
		"driver_ledger", "records: a failed record fetch fails the attempt"},
	{"ledger/a record that does not decode fails the attempt", "6.11 step 1: a record sibling that does not decode fails that call alone (corrupt)",
		"ledger/index.go", "if errors.Is(errs[i], crdt.ErrCorruptEncoding) {", "if false && errors.Is(errs[i], crdt.ErrCorruptEncoding) {",
		"driver_ledger", "records: a record that does not decode fails its call alone"},
	{"ledger/a record naming another account answers", "6.11 Encoding: a record naming a key that is not one of its account's sub-keys is corrupt",
		"ledger/index.go", "\t\t\tif !l.sameAccount(r.Key) {", "\t\t\tif false && !l.sameAccount(r.Key) {",
		"driver_ledger", "records: a record naming another account fails its call alone"},
	{"ledger/a record of another transaction read as this one's", "6.11 Window: records of another txn under the same key are passed over",
		"ledger/index.go", "\t\tcase r.Txn != txn:\n", "",
		"driver_ledger", "records: a record of another transaction under the key is passed over"},
	{"ledger/a record of another key judged", "6.11 Window: a record naming another key of the account is not judged",
		"ledger/index.go", "\t\tcase r.Key != \"\" && r.Key != l.key:", "\t\tcase false:",
		"driver_ledger", "sharded: after a race, a record of another sub-key takes a pending copy out"},
	{"ledger/a sub-key's record without its key", "6.11 Encoding: a Sharded's sub-ledger names its key (version 2)",
		"ledger/index.go", "swept || l.indexBase != l.key {", "swept && l.indexBase != l.key {",
		"driver_ledger", "sharded: the first write puts the layout marker"},
	{"ledger/a plain ledger's record names its key on a store no sweep lists", "6.11 Encoding: a plain ledger whose records store lists no keys writes version 1",
		"ledger/index.go", "swept || l.indexBase != l.key {", "true || swept || l.indexBase != l.key {",
		"driver_ledger", "new credit"},
	{"ledger/a pending copy kept beside another key's record", "6.11 step 4: a record of another key takes a pending transaction out",
		"ledger/index.go", "\tif len(x.elsewhere) > 0 {\n\t\treturn true, nil", "\tif false {\n\t\treturn true, nil",
		"driver_ledger", "sharded: after a race, a record of another sub-key takes a pending copy out"},
	{"ledger/sharded not reading the smaller layout's sub-key", "6.12: after a race, a write reads its transaction's sub-key under every other n first",
		"ledger/sharded.go", "if r, ok, err := s.elsewhere(ctx, txn, amount); ok || err != nil {", "if r, ok, err := s.elsewhere(ctx, txn, amount); false && (ok || err != nil) {",
		"driver_ledger", "sharded: after a race, the larger reads the smaller's sub-key first"},
	{"ledger/a record of another amount ignored", "6.11 step 1: a live record of txn with another amount fails the call conflicting_transaction",
		"ledger/ledger.go", "\tif rs := slices.Concat(x.records, x.elsewhere); len(rs) > 0 {", "\tif rs := slices.Concat(x.records, x.elsewhere); false && len(rs) > 0 {",
		"driver_ledger", "records: a retry the counter forgot is answered from its record"},
	{"ledger/an id with no time applied under TxnTime", "6.11 step 1: with TxnTime, a txn with no time is invalid_txn before anything else",
		"ledger/ledger.go", "if at, ok := l.txnTime(txn); !ok {", "if at, ok := l.txnTime(txn); false && !ok {",
		"driver_ledger", "records: the retry window with TxnTime"},
	{"ledger/owed records not counted in the hold-back", "6.11 step 3: every owed record counts toward the hold-back number",
		"ledger/group.go", "if unrecorded := len(l.unacked) + len(l.unindexed); unrecorded+appliedNow", "if unrecorded := len(l.unacked) + 0*len(l.unindexed); unrecorded+appliedNow",
		"driver_ledger", "records: owed records count toward the hold-back"},
	{"ledger/at most 16 retirements per write", "6.9 RetireAfter: the 16 bound the actors recorded per write, not the actors retired",
		"ledger/ledger.go", "\tfor _, a := range idle {\n\t\t// Its transactions are recorded first", "\tfor _, a := range idle[:min(len(idle), MaxRetirePerWrite)] {\n\t\t// Its transactions are recorded first",
		"driver_ledger", "retire: actors recorded by earlier writes retire more than 16 at once"},
}

func TestDriverVectorMutants(t *testing.T) {
	if !*driverMutants {
		t.Skip("opt-in: go test ./vectors -run TestDriverVectorMutants -driver-mutants")
	}
	root := copyModule(t)
	only, err := regexp.Compile(*driverMutantsRun)
	if err != nil {
		t.Fatalf("-driver-mutants-run: %v", err)
	}
	for _, m := range dvMutants {
		if !only.MatchString(m.name) {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			p := filepath.Join(root, m.file)
			orig, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(orig), m.old); n != 1 {
				t.Fatalf("the rule's text occurs %d times in %s: update the mutant", n, m.file)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(orig), m.old, m.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := os.WriteFile(p, orig, 0o644); err != nil {
					t.Fatal(err)
				}
			}()
			cmd := exec.Command("go", "test", "-count=1", "-run", "^TestDriverVectors$/^"+m.vectors+"$", "./vectors")
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			switch {
			case err == nil:
				t.Errorf("%s (SPEC.md %s): no driver vector failed\n%s", m.name, m.rule, out)
			case strings.Contains(string(out), "[build failed]"):
				t.Errorf("%s: the mutant does not build\n%s", m.name, out)
			case !strings.Contains(string(out), m.want+":"):
				t.Errorf("%s: vector %q did not fail\n%s", m.name, m.want, out)
			default:
				t.Logf("%s: %q fails", m.name, m.want)
			}
		})
	}
}

// dvFNV is FNV-1a-32 of s (SPEC.md 6.9: where a pass starts).
func dvFNV(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// dvPlacedRemoval checks steps 7 and 8 of a merge of a row partition of
// Transactions (SPEC.md 9.4) whose report rep lists, in Deleted and
// Collected, the rows it removes: each is a row 9.3 deletes (cancelled by
// a settle-grace-old valid merge's tombstone) or collects (an invalid row
// GC grace old, or a tombstone of a removed row: GC grace old when it names
// an N row); removing a tombstone removes every row it names, removing a
// sum row its tombstones, and removing a tombstone of a valid sum row left
// unsettled, or a row such a tombstone names, that sum row. The batch deletes, in key order, every place of
// a removed row before the longest run of the snapshot's last rows that
// are removed and placed before start − SettleGrace, then that run with
// one delete-range to the partition's end, then the moved rows at start,
// then puts the settled sum rows at their places, stamped with them. It
// checks that what the driver removes is allowed and how it is written,
// not that it removes all it may (the vectors' replay pins that).
func dvPlacedRemoval(rep *dvMerge, rows []*dvDesc, view balance.View, start time.Time, o dvOptions, part string, bad func(string, ...any), writeMuts func([]dvMut) bool) bool {
	removed := map[string]bool{}
	for _, d := range append(slices.Clone(rep.Deleted), rep.Collected...) {
		removed[dvRowKey(d)] = true
	}
	eligible := map[string]bool{}
	for _, sr := range view.Valid {
		if sr.Settled || dvIDTime(dvUUID(sr.UpdateID)).Before(start.Add(-dvDur(o.SettleGraceNS))) {
			eligible[dvUUID(sr.Version)] = true
		}
	}
	invalid := map[string]bool{}
	for _, r := range append(slices.Clone(view.InvalidSums), view.InvalidTombstones...) {
		invalid[dvRowKey(dvDescBalanceRow(r))] = true
	}
	for _, d := range rep.Deleted {
		cancelled := false
		for _, r := range rows {
			cancelled = cancelled || (r.Kind == "T" && eligible[r.Version] && r.UpdateID == d.UpdateID && r.Target == d.Kind)
		}
		if !cancelled || (d.Kind != "N" && d.Kind != "S") {
			bad("step 7 deletes %s, which no tombstone of a settle-grace-old valid merge cancels", dvRowKey(d))
		}
	}
	for _, d := range rep.Collected {
		old := dvIDTime(d.UpdateID).Before(start.Add(-dvDur(o.GCGraceNS)))
		ofRemoved := d.Kind == "T" && eligible[d.Version] && (old || d.Target == "S")
		if !(invalid[dvRowKey(d)] && old) && !ofRemoved {
			bad("step 8 collects %s, which is not an invalid row GC grace old or a tombstone of a removed row", dvRowKey(d))
		}
	}
	settled := map[string]bool{} // valid sum rows settled after this merge
	for _, sr := range view.Valid {
		settled[dvUUID(sr.Version)] = sr.Settled
	}
	for _, d := range rep.Settled {
		settled[d.Version] = true
	}
	names := func(t, n *dvDesc) bool {
		return t.Kind == "T" && n.UpdateID == t.UpdateID && n.Kind == t.Target && (t.Target == "N" || n.Version == t.UpdateID)
	}
	for _, r := range rows {
		if !removed[dvRowKey(*r)] {
			continue
		}
		for _, n := range rows { // what removing r needs removed too
			need := names(r, n) || (r.Kind == "S" && n.Kind == "T" && n.Version == r.Version)
			if n.Kind == "S" && !settled[n.Version] {
				if _, valid := settled[n.Version]; valid { // r is a tombstone of n, or a row one names
					for _, t := range rows {
						need = need || (t.Kind == "T" && t.Version == n.Version && (t == r || names(t, r)))
					}
				}
			}
			if need && !removed[dvRowKey(*n)] {
				bad("removes %s but not %s", dvRowKey(*r), dvRowKey(*n))
			}
		}
	}
	type entry struct {
		key string
		d   *dvDesc
	}
	var entries []entry
	seen := map[string]bool{}
	for _, r := range rows {
		k, _, _ := dvEncDesc("balance", &dvDesc{UpdateID: r.UpdateID, Kind: r.Kind, Version: r.Version, At: r.At})
		if key := hex.EncodeToString(k); !seen[key] {
			seen[key] = true
			entries = append(entries, entry{key, r})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(dvUnhex(a.key), dvUnhex(b.key)) })
	cut := len(entries)
	closed := start.Add(-dvDur(o.SettleGraceNS)).UnixMicro()
	// Movable: an invalid row not gone (approximated by not removed: the
	// model does not derive gone, so it checks the driver's removal, not
	// its extent).
	moves := func(d *dvDesc) bool { return invalid[dvRowKey(*d)] && !removed[dvRowKey(*d)] }
	newestAt := map[string]int64{} // a copy at an older place is not needed
	for _, e := range entries {
		newestAt[dvRowKey(*e.d)] = max(newestAt[dvRowKey(*e.d)], int64(*e.d.At))
	}
	newest := func(d *dvDesc) bool { return int64(*d.At) == newestAt[dvRowKey(*d)] }
	for cut > 0 && (removed[dvRowKey(*entries[cut-1].d)] || moves(entries[cut-1].d) || !newest(entries[cut-1].d)) && int64(*entries[cut-1].d.At) < closed {
		cut--
	}
	for cut < len(entries) && moves(entries[cut].d) && newest(entries[cut].d) { // nothing to move for
		cut++
	}
	var want []dvMut
	for _, e := range entries[:cut] {
		if removed[dvRowKey(*e.d)] {
			want = append(want, dvMut{Op: "delete", Partition: part, Key: e.key})
		}
	}
	if cut < len(entries) {
		want = append(want, dvMut{Op: "delete-range", Partition: part, Key: entries[cut].key})
	}
	moved := map[string]bool{} // invalid rows in the run, written again at start
	for _, e := range entries[cut:] {
		if d := *e.d; moves(e.d) && newest(e.d) && !moved[dvRowKey(d)] {
			moved[dvRowKey(d)] = true
			d.At = dvI(start.UnixMicro())
			k, val, _ := dvEncDesc("balance", &d)
			want = append(want, dvMut{Op: "put", Partition: part, Key: hex.EncodeToString(k), Value: hex.EncodeToString(val)})
		}
	}
	for _, d := range rep.Settled {
		for _, r := range rows {
			if r.Kind == "S" && r.UpdateID == d.UpdateID && (d.At == nil || *r.At > *d.At) {
				d.At = r.At
			}
		}
		k, val, _ := dvEncDesc("balance", &d)
		want = append(want, dvMut{Op: "put", Partition: part, Key: hex.EncodeToString(k), Value: hex.EncodeToString(val), TS: *d.At})
	}
	if len(want) == 0 {
		return true
	}
	return writeMuts(want)
}
