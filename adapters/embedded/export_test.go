package embedded

// UncheckedOptions returns o without the file check and the digests: the
// store as it was before them, which the damage suite must catch and the
// benchmarks compare with.
func UncheckedOptions(o Options) Options {
	o.unchecked = true
	return o
}

// SetRestoreUnchecked turns Restore's check of the copy off (on) and
// returns a function that puts it back: the broken variant the restore
// tests must catch.
func SetRestoreUnchecked(off bool) (undo func()) {
	old := restoreUnchecked
	restoreUnchecked = off
	return func() { restoreUnchecked = old }
}

// SetInspectUnchecked turns the file check and the digests of Keys,
// ReadStats and Compact off (on) and returns a function that puts them
// back: the broken variant the damage suite must catch.
func SetInspectUnchecked(off bool) (undo func()) {
	old := inspectUnchecked
	inspectUnchecked = off
	return func() { inspectUnchecked = old }
}
