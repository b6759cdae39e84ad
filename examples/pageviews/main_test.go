package main

import "testing"

// TestRun runs the example end to end; run returns an error when the value
// it reads differs from the exact expected total.
func TestRun(t *testing.T) {
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
