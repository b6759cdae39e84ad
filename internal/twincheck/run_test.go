package twincheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A body that fails (at the top, in a sub-benchmark or in RunParallel) or
// skips is reported; one that passes is not.
func TestRunOnceReportsFailures(t *testing.T) {
	for name, f := range map[string]func(b *testing.B){
		"Error":     func(b *testing.B) { b.Error("x") },
		"Fatal":     func(b *testing.B) { b.Fatal("x") },
		"sub Fatal": func(b *testing.B) { b.Run("s", func(b *testing.B) { b.Fatal("x") }) },
		"parallel Error": func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					b.Error("x")
				}
			})
		},
		"Skip": func(b *testing.B) { b.Skip("x") },
	} {
		require.Error(t, runOnce(f), name)
	}
	require.NoError(t, runOnce(func(b *testing.B) { b.Run("s", func(b *testing.B) {}) }))
}
