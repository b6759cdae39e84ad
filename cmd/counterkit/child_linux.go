package main

import (
	"os/exec"
	"syscall"
)

// tieToParent makes the kernel kill cmd's process when the thread that
// started it ends (the program killed, even with SIGKILL), so that a
// command's child never goes on writing and holding the store's lock on
// its own. The caller keeps that thread for as long as the child runs
// (runtime.LockOSThread).
func tieToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
