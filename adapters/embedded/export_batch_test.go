package embedded

import "time"

// BatchOptions returns o committing writes with the engine's Batch method,
// with MaxBatchDelay delay, instead of the adapter's group commit.
func BatchOptions(o Options, delay time.Duration) Options {
	o.bboltBatch = delay
	return o
}
