package statestoretest_test

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

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/statestore/statestoretest"
	"github.com/counterkit/counterkit/store"
)

// rows is a per-actor-row store.Siblings, the Cassandra design: Put
// overwrites the writer's own row and deletes the other rows its token
// names; Fetch returns every row. It is correct, so it proves the suite
// does not need dot-based siblings. The flags break it in the ways real
// adapters could be broken.
type rows struct {
	mu   sync.Mutex
	data map[string]map[crdt.ActorID][]byte

	lastWriteWins bool // one row per key: each put replaces everything
	ignoreCtx     bool // never look at the context
}

func (r *rows) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if err := ctx.Err(); err != nil && !r.ignoreCtx {
		return nil, nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	var token []string
	for _, a := range slices.Sorted(maps.Keys(r.data[key])) {
		out = append(out, slices.Clone(r.data[key][a]))
		token = append(token, string(a)+"="+string(r.data[key][a]))
	}
	return out, store.Token(strings.Join(token, "\x00")), nil
}

func (r *rows) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if err := ctx.Err(); err != nil && !r.ignoreCtx {
		return err
	}
	if err := actor.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.data == nil {
		r.data = map[string]map[crdt.ActorID][]byte{}
	}
	if r.data[key] == nil || r.lastWriteWins {
		r.data[key] = map[crdt.ActorID][]byte{}
	}
	if len(token) > 0 {
		for _, e := range strings.Split(string(token), "\x00") {
			a, v, _ := strings.Cut(e, "=")
			if string(r.data[key][crdt.ActorID(a)]) == v {
				delete(r.data[key], crdt.ActorID(a))
			}
		}
	}
	r.data[key][actor] = slices.Clone(value)
	return nil
}

var _ store.Siblings = (*rows)(nil)

// TestPerActorRowsPass runs the suite on rows. In the race pass (-short)
// it leaves ReportsBadSiblings to the full pass: it runs on one goroutine,
// and its oversized sibling (gcounter.MaxEncodedSize+1 bytes, copied by
// rows) cost most of this test under the race detector; TestMemoryPasses
// still runs it there.
func TestPerActorRowsPass(t *testing.T) {
	statestoretest.Run(t, func(t *testing.T) store.Siblings {
		if testing.Short() && strings.HasSuffix(t.Name(), "/ReportsBadSiblings") {
			t.Skip(testsize.SequentialReason)
		}
		return &rows{}
	})
}

func TestMemoryPasses(t *testing.T) {
	statestoretest.Run(t, func(t *testing.T) store.Siblings { return memory.NewSiblings() })
}

// brokenEnv selects a broken store in the child process of TestSuiteCatches.
const brokenEnv = "STATESTORETEST_BROKEN"

// TestBrokenChild runs the suite against the broken store named by
// STATESTORETEST_BROKEN; it is only meaningful as TestSuiteCatches's child.
func TestBrokenChild(t *testing.T) {
	which := os.Getenv(brokenEnv)
	if which == "" {
		t.Skip("run by TestSuiteCatches")
	}
	statestoretest.Run(t, func(t *testing.T) store.Siblings {
		return &rows{lastWriteWins: which == "lww", ignoreCtx: which == "noctx"}
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
