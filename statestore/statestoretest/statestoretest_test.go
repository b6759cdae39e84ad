package storetest_test

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/statestore/storetest"
)

// rows is a per-actor-row store, the Cassandra design: Save overwrites the
// actor's own entry and Load returns every entry. It is correct, so it
// proves the suite does not require merge-on-write. The flags break it in
// the ways real adapters could be broken.
type rows struct {
	mu   sync.Mutex
	data map[string]map[crdt.ActorID][]byte

	lastWriteWins bool // one entry per key: each save replaces everything
	noCheck       bool // store bytes without statestore.Check
	ignoreCtx     bool // never look at the context
}

func (r *rows) Load(ctx context.Context, key string) ([][]byte, error) {
	if err := ctx.Err(); err != nil && !r.ignoreCtx {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, a := range slices.Sorted(maps.Keys(r.data[key])) {
		out = append(out, slices.Clone(r.data[key][a]))
	}
	return out, nil
}

func (r *rows) Save(ctx context.Context, key string, actor crdt.ActorID, state []byte) error {
	if err := ctx.Err(); err != nil && !r.ignoreCtx {
		return err
	}
	if err := actor.Validate(); err != nil {
		return err
	}
	if !r.noCheck {
		if err := statestore.Check(state); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.data == nil {
		r.data = map[string]map[crdt.ActorID][]byte{}
	}
	if r.data[key] == nil || r.lastWriteWins {
		r.data[key] = map[crdt.ActorID][]byte{}
	}
	r.data[key][actor] = slices.Clone(state)
	return nil
}

var _ statestore.Store = (*rows)(nil)

func TestPerActorRowsPass(t *testing.T) {
	storetest.Run(t, func(t *testing.T) statestore.Store { return &rows{} })
}

// brokenEnv selects a broken store in the child process of TestSuiteCatches.
const brokenEnv = "STORETEST_BROKEN"

// TestBrokenChild runs the suite against the broken store named by
// STORETEST_BROKEN; it is only meaningful as TestSuiteCatches's child.
func TestBrokenChild(t *testing.T) {
	which := os.Getenv(brokenEnv)
	if which == "" {
		t.Skip("run by TestSuiteCatches")
	}
	storetest.Run(t, func(t *testing.T) statestore.Store {
		return &rows{lastWriteWins: which == "lww", noCheck: which == "nocheck", ignoreCtx: which == "noctx"}
	})
}

// TestSuiteCatches proves the suite can fail: each broken store must fail
// exactly the subtests aimed at its defect.
func TestSuiteCatches(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary three more times")
	}
	for _, tc := range []struct {
		broken  string
		fails   []string
		mayFail []string // depends on goroutine scheduling
	}{
		{"lww", []string{"StaleSaveLosesNothing"}, []string{"ConcurrentActors"}},
		{"nocheck", []string{"RejectsBadEncodings"}, nil},
		{"noctx", []string{"HonoursCancellation"}, nil},
	} {
		t.Run(tc.broken, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenChild$", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+tc.broken)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "suite passed a broken store:\n%s", out)
			for _, name := range tc.fails {
				require.Contains(t, string(out), "--- FAIL: TestBrokenChild/"+name+" ", "output:\n%s", out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				line = strings.TrimSpace(line)
				name, ok := strings.CutPrefix(line, "--- FAIL: TestBrokenChild/")
				if !ok {
					continue
				}
				name, _, _ = strings.Cut(name, " ")
				require.True(t, slices.Contains(tc.fails, name) || slices.Contains(tc.mayFail, name),
					"unexpected failure of %s:\n%s", name, out)
			}
		})
	}
}
