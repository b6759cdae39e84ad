package twincheck_test

import (
	"testing"

	"github.com/counterkit/counterkit/internal/twincheck"
	"github.com/stretchr/testify/require"
)

// Branches on the marker that keep an expectation off one target less
// directly than an assertion inside them are named, and set-up branches
// whose variables no assertion takes after them pass (cases from an
// outside review of the checker).
func TestUntwinnedCatchesIndirectBranches(t *testing.T) {
	head := "package p\nfunc TestServerBranch(t *testing.T) { each(t, body) }\n"
	for _, c := range []struct {
		name, src string
		flagged   bool // what a correct check would say
	}{
		{"want++ in a marker branch", `func body(t *testing.T, c *conn) { want := 1; if c.Real() { want++ }; require.Equal(t, want, c.Get()) }`, true},
		{"field of a struct set in a marker branch", `func body(t *testing.T, c *conn) { var exp struct{ n int }; if c.Real() { exp.n = 2 }; require.Equal(t, exp, c.Get()) }`, true},
		{"chosen variable wrapped in a conversion", `func body(t *testing.T, c *conn) { want := 1; if c.Real() { want = 2 }; require.Equal(t, int64(want), c.Get()) }`, true},
		{"chosen variable in an expression", `func body(t *testing.T, c *conn) { want := 1; if c.Real() { want = 2 }; require.True(t, c.Get() == want) }`, true},
		{"continue in a marker branch", `func body(t *testing.T, c *conn) { for i := range 3 { if !c.Real() { continue }; require.Equal(t, i, c.Get()) } }`, true},
		{"marker in a switch", `func body(t *testing.T, c *conn) { switch { case !c.Real(): return }; require.Equal(t, 1, c.Get()) }`, true},
		{"marker read into a local", `func body(t *testing.T, c *conn) { real := c.Real(); if !real { return }; require.Equal(t, 1, c.Get()) }`, true},
		{"field nil-check in the if's init", `func body(t *testing.T, c *conn) { if s := c.sess; s == nil { return }; require.Equal(t, 1, c.Get()) }`, true},
		// False positive: err set up on the server only, then reassigned
		// before an assertion both targets make alike.
		{"err reused after a set-up branch", `func body(t *testing.T, c *conn) {
	var err error
	if c.Real() { err = c.Setup() }
	_ = err
	err = c.Put()
	require.NoError(t, err)
}`, false},
		// False positive: an assertion before the branch.
		{"assertion before the branch", `func body(t *testing.T, c *conn) {
	n := c.Get(); require.Equal(t, 1, n)
	if c.Real() { n = c.Tune() }
	c.Use(n)
}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, err := twincheck.ParseTests(t.TempDir(), head+c.src)
			require.NoError(t, err)
			problems, _ := twincheck.Untwinned(files, rules)
			t.Logf("problems: %q", problems)
			if c.flagged {
				require.NotEmpty(t, problems, "false negative")
			} else {
				require.Empty(t, problems, "false positive")
			}
		})
	}
}
