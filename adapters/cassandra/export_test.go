package cassandra

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/store"
)

// Target is a target (targets_test.go) for the package's external tests.
type Target = target

// DB returns a DB with opts on tg's shared tables.
func (tg *target) DB(t testing.TB, opts Options) *DB { return tg.newDB(t, opts) }

// EachTarget is eachTarget for the package's external tests.
func EachTarget(t *testing.T, body func(t *testing.T, tg *Target)) { eachTarget(t, body) }

// checkKey runs the key check of Siblings.Fetch ("key") or of the
// Partitions reads (what "partition key") without a cluster.
func checkKey(what, key string) error {
	if what == "partition key" {
		_, err := (&Partitions{}).readStart(context.Background(), key, store.ReadAny)
		return err
	}
	s := &Siblings{db: &DB{}, read: func(context.Context, *Siblings, string) ([]siblingRow, error) { return nil, nil }}
	_, _, err := s.Fetch(context.Background(), key)
	return err
}
