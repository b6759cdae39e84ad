package embedded_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// envNewDirChild names the parent directory TestNewDirectoryChild works in.
const envNewDirChild = "COUNTERKIT_NEWDIR_CHILD"

// TestNewDirectoryChild is TestNewDirectoryIsDurable's traced child.
func TestNewDirectoryChild(t *testing.T) {
	parent := os.Getenv(envNewDirChild)
	if parent == "" {
		t.Skip("runs only as the child of TestNewDirectoryIsDurable")
	}
	newStoreChild(t, parent)
}

// newStoreChild opens a store in a new directory under parent, makes one
// write (acknowledged: durable, README "Acknowledged = durable"), touches
// a marker file, then backs the store up into another new directory and
// touches a second marker.
func newStoreChild(t *testing.T, parent string) {
	ctx := context.Background()
	db, err := embedded.Open(filepath.Join(parent, "store"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Siblings().Put(ctx, "k", "a", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "marker-put-acked"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(ctx, filepath.Join(parent, "backup")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "marker-backup-done"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestNewDirectoryIsDurable: Open of a directory that does not exist
// creates it, and so does Backup; each must sync the new directory's
// parent before it acknowledges anything in it, since the parent's entry
// for it is what makes it reachable after a power loss (POSIX: syncing a
// file or a directory does not make its own entry durable). The test
// traces a child's system calls with strace and skips where strace cannot
// run.
func TestNewDirectoryIsDurable(t *testing.T) {
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("no strace here")
	}
	parent := t.TempDir()
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-y", "-qq", "-o", trace, "-e", "trace=mkdirat,mkdir,fsync,fdatasync,openat,open",
		os.Args[0], "-test.run=^TestNewDirectoryChild$", "-test.v=false", "-test.count=1")
	cmd.Env = append(os.Environ(), envNewDirChild+"="+parent)
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "ptrace") || strings.Contains(string(out), "PTRACE") {
			t.Skipf("strace cannot trace here: %s", out)
		}
		t.Fatalf("child: %v\n%s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	// index of the first line matching re, from from on; -1 if none.
	find := func(re *regexp.Regexp, from int) int {
		for i := max(from, 0); i < len(lines); i++ {
			if re.MatchString(lines[i]) {
				return i
			}
		}
		return -1
	}
	q := regexp.QuoteMeta
	// An fsync of the parent, whole or (another thread's call interleaved)
	// begun: "PID fsync(FD<parent>) = 0" or "PID fsync(FD<parent>
	// <unfinished ...>", ended by "PID <... fsync resumed>) = 0".
	fsyncParent := regexp.MustCompile(`^(\d+)\s+fsync\(\d+<` + q(parent) + `>(\)| <unfinished)`)
	// synced returns the line where the first fsync of the parent from
	// from on returns; -1 if none does.
	synced := func(from int) int {
		s := find(fsyncParent, from)
		if s < 0 {
			return -1
		}
		m := fsyncParent.FindStringSubmatch(lines[s])
		if m[2] == ")" {
			return s
		}
		return find(regexp.MustCompile(`^`+m[1]+`\s+<\.\.\. fsync resumed>\)`), s+1)
	}
	for _, step := range []struct{ dir, marker string }{{"store", "marker-put-acked"}, {"backup", "marker-backup-done"}} {
		mk := find(regexp.MustCompile(`mkdir(at)?\(.*"`+q(filepath.Join(parent, step.dir))+`"`), 0)
		done := find(regexp.MustCompile(`open(at)?\(.*"`+q(filepath.Join(parent, step.marker))+`"`), 0)
		if mk < 0 || done < 0 {
			t.Fatalf("%s: no mkdir (%d) or marker (%d) in the trace", step.dir, mk, done)
		}
		if s := synced(mk); s < 0 || s > done {
			t.Errorf("%s: the directory was created (trace line %d) and the operation acknowledged (line %d) with no fsync of its parent %s between; the trace's fsyncs:\n%s",
				step.dir, mk+1, done+1, parent, fsyncLines(lines))
		}
	}
}

// fsyncLines lists, numbered, the trace's lines that name an fsync, a
// mkdir or a marker.
func fsyncLines(lines []string) string {
	var out []string
	for i, l := range lines {
		if strings.Contains(l, "fsync") || strings.Contains(l, "marker") || strings.Contains(l, "mkdir") {
			out = append(out, fmt.Sprintf("%d: %s", i+1, l))
		}
	}
	return strings.Join(out, "\n")
}
