package twincheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/twincheck"
)

var rules = twincheck.Rules{Roots: []string{"dial"}, Env: "DB_ADDR", Gates: []string{"each"},
	Prefixes: []string{"TestServer"}, Marker: "Real", Twin: "fake"}

// Each rule is named when a source breaks it, and a gated test passes.
func TestUntwinned(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"gated", `package p
func TestServerOK(t *testing.T) { each(t, func(t *testing.T, c *conn) { c.Put() }) }`, nil},
		{"through another function", `package p
func open(t *testing.T) *conn { return dial(t) }
func TestOther(t *testing.T) { open(t) }`, []string{"reaches the server without running on the fake: TestOther → open → dial"}},
		{"the variable", `package p
func FuzzEnv(f *testing.F) { _ = os.Getenv("DB_ADDR") }`, []string{`reaches the server without running on the fake: FuzzEnv → "DB_ADDR"`}},
		{"prefix without gate", `package p
func TestServerAlone(t *testing.T) {}`, []string{"TestServerAlone runs no body through each"}},
		{"assert on one side", `package p
func TestServerBranch(t *testing.T) { each(t, body) }
func body(t *testing.T, c *conn) { if c.Real { t.Fatal("x") } }`, []string{
			"body asserts (Fatal) in a branch on Real: the other target never checks it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, err := twincheck.ParseTests(t.TempDir(), c.src)
			require.NoError(t, err)
			problems, _ := twincheck.Untwinned(files, rules)
			require.Equal(t, c.want, problems)
		})
	}
	_, err := twincheck.ParseTests(t.TempDir(), "package p\nfunc (")
	require.Error(t, err)
}
