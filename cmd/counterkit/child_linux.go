package main

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// tieToParent makes the kernel kill cmd's process when the thread that
// started it ends (the program killed, even with SIGKILL), so that a
// command's child never goes on writing and holding the store's lock on
// its own. The caller keeps that thread for as long as the child runs
// (runtime.LockOSThread).
func tieToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// reraise ends the command by sig, which it caught while its child ran:
// its default action restored, the signal is sent again to the command.
func reraise(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return
	}
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), s)
	time.Sleep(time.Second) // the signal is delivered meanwhile; else the exit status stands
}
