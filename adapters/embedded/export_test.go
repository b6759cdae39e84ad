package embedded

// UncheckedOptions returns o without the file check and the digests: the
// store as it was before them, which the damage suite must catch and the
// benchmarks compare with.
func UncheckedOptions(o Options) Options {
	o.unchecked = true
	return o
}
