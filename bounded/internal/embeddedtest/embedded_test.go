// Package embeddedtest runs bounded.Account's conformance suite over the
// embedded store. Run it from this directory: go test ./...
package embeddedtest

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/store"
)

func TestBehavioursOnEmbedded(t *testing.T) {
	boundedtest.Run(t, func(t *testing.T) store.Siblings {
		db, err := embedded.Open(t.TempDir(), embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db.Siblings()
	})
}
