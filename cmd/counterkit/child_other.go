//go:build !linux

package main

import "os/exec"

// tieToParent does nothing where the kernel cannot end a child with its
// parent: there a child of a killed command runs to its end (its
// interruptions are still passed on, runIsolated).
func tieToParent(cmd *exec.Cmd) {}
