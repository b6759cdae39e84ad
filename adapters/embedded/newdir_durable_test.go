package embedded_test

import (
	"context"
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
	fsyncParent := regexp.MustCompile(`fsync\(\d+<` + q(parent) + `>\)`)
	for _, step := range []struct{ dir, marker string }{{"store", "marker-put-acked"}, {"backup", "marker-backup-done"}} {
		mk := find(regexp.MustCompile(`mkdir(at)?\(.*"`+q(filepath.Join(parent, step.dir))+`"`), 0)
		done := find(regexp.MustCompile(`open(at)?\(.*"`+q(filepath.Join(parent, step.marker))+`"`), 0)
		if mk < 0 || done < 0 {
			t.Fatalf("%s: no mkdir (%d) or marker (%d) in the trace", step.dir, mk, done)
		}
		if s := find(fsyncParent, mk); s < 0 || s > done {
			t.Errorf("%s: the directory was created (trace line %d) and the operation acknowledged (line %d) with no fsync of its parent %s between",
				step.dir, mk+1, done+1, parent)
		}
	}
}
