package embedded_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// A service mounts the backup handler on its administrative mux; a backup
// tool downloads a consistent copy while the service writes, and Restore
// makes a data directory of it, checked before it gets its name.
func ExampleDB_BackupHandler() {
	base, err := os.MkdirTemp("", "counterkit-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	ctx := context.Background()

	// The service.
	db, err := embedded.Open(filepath.Join(base, "live"), embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := db.Siblings().Put(ctx, "account-1", "actor-a", []byte("balance 42"), nil); err != nil {
		panic(err)
	}
	admin := http.NewServeMux()
	admin.Handle("GET /debug/counterkit/backup", db.BackupHandler())
	srv := httptest.NewServer(admin)
	defer srv.Close()

	// The backup tool (counterkit backup -from URL -to DIR does this).
	resp, err := http.Get(srv.URL + "/debug/counterkit/backup")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	fmt.Println("status:", resp.Status)
	copyDir := filepath.Join(base, "backup-1")
	n, err := embedded.Restore(ctx, resp.Body, copyDir)
	if err != nil {
		panic(err)
	}
	fmt.Println("whole copy:", n == resp.ContentLength)

	// The copy is a data directory.
	cp, err := embedded.Open(copyDir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer cp.Close()
	vals, _, err := cp.Siblings().Fetch(ctx, "account-1")
	if err != nil {
		panic(err)
	}
	fmt.Printf("restored: %s\n", vals[0])

	// A second restore into the same directory is refused.
	resp2, err := http.Get(srv.URL + "/debug/counterkit/backup")
	if err != nil {
		panic(err)
	}
	defer resp2.Body.Close()
	_, err = embedded.Restore(ctx, resp2.Body, copyDir)
	fmt.Println("again:", err != nil)
	// Output:
	// status: 200 OK
	// whole copy: true
	// restored: balance 42
	// again: true
}
