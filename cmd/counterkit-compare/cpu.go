package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// cpuTimes is the CPU time (user and system) used so far by this process,
// the client, and, when measured, by the server's process.
type cpuTimes struct {
	client, server time.Duration
	hasServer      bool
}

// cpuMeter reads cpuTimes. A nil meter measures nothing (the tests' runs,
// whose CPU is not the store's).
type cpuMeter func() (cpuTimes, error)

// newCPUMeter measures this process (getrusage) and, if serverPID is
// positive, the server process serverPID on this host (/proc/PID/stat,
// Linux). It reads once, so a PID that cannot be read is refused before
// the run; without one, a system whose own CPU time cannot be read (not
// Unix) measures nothing.
func newCPUMeter(serverPID int) (cpuMeter, error) {
	if serverPID < 0 {
		return nil, fmt.Errorf("a process id is positive")
	}
	m := func() (cpuTimes, error) {
		c, err := processCPU()
		if err != nil || serverPID <= 0 {
			return cpuTimes{client: c}, err
		}
		s, err := procStatCPU(fmt.Sprintf("/proc/%d/stat", serverPID))
		return cpuTimes{client: c, server: s, hasServer: true}, err
	}
	if _, err := m(); err != nil {
		if serverPID <= 0 {
			return nil, nil
		}
		return nil, err
	}
	return m, nil
}

// userHZ is the unit of /proc/PID/stat's utime and stime: Linux reports
// them in USER_HZ ticks, 100 a second on every architecture it runs on.
const userHZ = 100

// procStatCPU reads a process's utime + stime (every thread's) from its
// /proc/PID/stat. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func procStatCPU(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("server CPU: %w", err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("server CPU: %s: no command name", path)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state): field k is f[k-3]
	if len(f) < 13 {
		return 0, fmt.Errorf("server CPU: %s: %d fields after the command name, want at least 13", path, len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] { // utime (14) and stime (15)
		n, err := strconv.ParseUint(string(s), 10, 63)
		if err != nil {
			return 0, fmt.Errorf("server CPU: %s: %w", path, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}
