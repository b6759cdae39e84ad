//go:build counterkit_mutants

package main

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// TestPromiseChecksCatchBrokenVariants runs the HTTP promise test in a
// child process of this test binary with a broken variant of the ledger
// switched on (COUNTERKIT_BREAK, ledger.Breaks), and requires it to fail.
func TestPromiseChecksCatchBrokenVariants(t *testing.T) {
	const name = "TestPromiseHTTPRetriesUnderFaultsAndRestart"
	for _, v := range []string{"count-window"} {
		t.Run(v, func(t *testing.T) {
			// The faults meet the variant in about half the runs on one
			// core (21 of 40 pinned with taskset -c 1; 17 of 20 on two):
			// up to 12 runs of about 0.1 s each.
			var out []byte
			for range 12 {
				cmd := exec.Command(os.Args[0], "-test.run", "^"+name+"$", "-test.count=1", "-test.timeout=5m")
				cmd.Env = append(os.Environ(), "COUNTERKIT_BREAK="+v)
				out, _ = cmd.CombinedOutput()
				if regexp.MustCompile(`(?m)^--- FAIL: ` + name + ` \(`).Match(out) {
					return
				}
			}
			t.Fatalf("%s did not fail with %s in 12 runs; last output:\n%s", name, v, out)
		})
	}
}
