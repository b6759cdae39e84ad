package embedded_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

const envBackupCrashSource = "COUNTERKIT_EMBEDDED_BACKUP_CRASH_SOURCE"

// backupCrashRows is the source's partition: rows of 2 KB, so that a
// Backup takes long enough to be killed in the middle.
const backupCrashRows = 2000

// TestBackupCrashChild is the child of TestBackupCrash: it backs the
// source up into bk-0, bk-1, … while writing, until it is killed.
func TestBackupCrashChild(t *testing.T) {
	src := os.Getenv(envBackupCrashSource)
	if src == "" {
		t.Skip("the child of TestBackupCrash")
	}
	db, err := embedded.Open(src, embedded.Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	for i := 0; ; i++ {
		go db.Siblings().Put(ctx, fmt.Sprintf("w%d", i), "a", []byte("x"), nil)
		fmt.Println("backup", i)
		if err := db.Backup(ctx, filepath.Join(filepath.Dir(src), fmt.Sprintf("bk-%d", i))); err != nil {
			fmt.Println("backup:", err)
			os.Exit(2)
		}
	}
}

// TestBackupCrash kills a process during Backup, COUNTERKIT_CASES × 5
// times: the source opens and verifies, and every backup directory holds
// a complete copy, nothing, or only an interrupted copy's CopyTempName,
// which Open refuses (never an empty store started over the partial
// copy) and a new Backup replaces.
func TestBackupCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() && !raceEnabled {
		t.Skip("crash test skipped in -short mode (the race pass runs it)")
	}
	rng, _ := seeded(t)
	ctx := context.Background()
	left := map[string]int{}
	for kill := range proptest.Scale(5) {
		root := t.TempDir()
		src := filepath.Join(root, "src")
		db, err := embedded.Open(src, embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var muts []store.Mutation
		for i := range backupCrashRows {
			muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: fmt.Appendf(nil, "r%05d", i), Value: make([]byte, 2000), Timestamp: 1})
		}
		for i := 0; i < len(muts); i += store.MaxBatch / 20 {
			if err := db.Partitions().Apply(ctx, muts[i:min(i+store.MaxBatch/20, len(muts))]); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()

		cmd := exec.Command(os.Args[0], "-test.run=^TestBackupCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), envBackupCrashSource+"="+src)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Scan() // the first backup has started
		time.Sleep(time.Duration(rng.IntN(60_000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
		}
		cmd.Wait()

		db, err = embedded.Open(src, embedded.Options{})
		if err != nil {
			t.Fatalf("kill %d: the source does not open: %v", kill, err)
		}
		if err := db.Verify(); err != nil {
			t.Fatalf("kill %d: the source: %v", kill, err)
		}
		bks, _ := filepath.Glob(filepath.Join(root, "bk-*"))
		for _, bk := range bks {
			entries, _ := os.ReadDir(bk)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			switch fmt.Sprint(names) {
			case fmt.Sprint([]string{embedded.FileName}):
				copied, err := embedded.Open(bk, embedded.Options{})
				if err != nil {
					t.Fatalf("kill %d: %s: %v", kill, bk, err)
				}
				rows, err := copied.Partitions().Snapshot(ctx, "p", backupCrashRows, store.ReadAny)
				if err == nil {
					err = copied.Verify()
				}
				copied.Close()
				if err != nil || len(rows) != backupCrashRows {
					t.Fatalf("kill %d: %s: %d rows, %v", kill, bk, len(rows), err)
				}
				left["complete"]++
			case "[]":
				left["empty"]++
			case fmt.Sprint([]string{embedded.CopyTempName}):
				left["interrupted"]++
				if _, err := embedded.Open(bk, embedded.Options{}); !errors.Is(err, crdt.ErrMisconfiguredStore) {
					t.Fatalf("kill %d: Open of %s, an interrupted backup: %v", kill, bk, err)
				}
				if err := db.Backup(ctx, bk); err != nil {
					t.Fatalf("kill %d: a Backup into %s, an interrupted one: %v", kill, bk, err)
				}
			default:
				t.Fatalf("kill %d: %s holds %v", kill, bk, names)
			}
		}
		db.Close()
	}
	t.Logf("backup directories left by the kills: %v", left)
}
