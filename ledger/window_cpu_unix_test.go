//go:build unix

package ledger_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used (user and system,
// every thread, the garbage collector's included), or false where it
// cannot be read.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
