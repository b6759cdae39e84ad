package cassandra

import "testing"

// Target is a target (targets_test.go) for the package's external tests.
type Target = target

// DB returns a DB with opts on tg's shared tables.
func (tg *target) DB(t testing.TB, opts Options) *DB { return tg.newDB(t, opts) }

// EachTarget is eachTarget for the package's external tests.
func EachTarget(t *testing.T, body func(t *testing.T, tg *Target)) { eachTarget(t, body) }
