//go:build !linux

package main

import (
	"os"
	"os/exec"
)

// tieToParent does nothing where the kernel cannot end a child with its
// parent: there a child of a killed command runs to its end (its
// interruptions are still passed on, runIsolated).
func tieToParent(cmd *exec.Cmd) {}

// reraise does nothing here: the command exits with its status, 128 and
// the signal's number for one that stopped its child.
func reraise(sig os.Signal) {}
