package tpncounter

import "github.com/counterkit/counterkit/internal/exact"

// fits reports whether a 128-bit value is representable as an int64.
func fits(a exact.Int128) bool { _, ok := a.Int64(); return ok }
