package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
)

// squaresMeter is a fake CPU meter whose k-th reading (from 0) is k² ms
// of client CPU and 2k² ms of server CPU, so the run between readings 2i
// and 2i+1 (the i-th type compare runs) used 4i+1 ms and twice that.
func squaresMeter() cpuMeter {
	var mu sync.Mutex
	k := 0
	return func() (cpuTimes, error) {
		mu.Lock()
		defer mu.Unlock()
		d := time.Duration(k*k) * time.Millisecond
		k++
		return cpuTimes{client: d, server: 2 * d, hasServer: true}, nil
	}
}

// Each type's row holds the CPU its own run used per acknowledged
// transaction, and the lines below the table compare it with the native
// counter's, in the same run.
func TestCompareCPUPerTransaction(t *testing.T) {
	cfg := goldenConfig()
	cfg.cpu = squaresMeter()
	targets, err := compareTargets([]string{"native", "ledger", "balance"}, cfg, newNativeDouble(7, 0), memory.NewSiblings(), memory.NewPartitions())
	require.NoError(t, err)
	rep := compareReportFor(cfg, "memory (test)")
	rep.Rows = runComparison(context.Background(), cfg, targets, nil)
	for i, r := range rep.Rows {
		require.Equal(t, int64(60), r.Acknowledged, r.Type)
		ms := float64(4*i + 1)
		require.InDelta(t, ms*1000/60, *r.ClientCPUus, 1e-9, r.Type)
		require.InDelta(t, 2*ms*1000/60, *r.ServerCPUus, 1e-9, r.Type)
		if i == 0 {
			require.Nil(t, r.VsNative, "native is the baseline")
			continue
		}
		v := r.VsNative
		require.InDelta(t, ms, *v.CPU, 1e-9, r.Type)
		require.InDelta(t, ms, *v.ClientCPU, 1e-9, r.Type)
		require.InDelta(t, ms, *v.ServerCPU, 1e-9, r.Type)
		require.InDelta(t, r.PerSecond/rep.Rows[0].PerSecond, v.PerSecond, 1e-9, r.Type)
	}
	var out bytes.Buffer
	require.NoError(t, writeCompareReport(&out, "table", rep))
	golden(t, "cpu.table", out.String())
	out.Reset()
	require.NoError(t, writeCompareReport(&out, "json", rep))
	var back compareReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	require.InDelta(t, 5.0, *back.Rows[1].VsNative.CPU, 1e-9)
}

// A meter that fails is reported per row; the drift check is unaffected.
func TestCompareCPUFailure(t *testing.T) {
	cfg := goldenConfig()
	cfg.count = 3
	cfg.cpu = func() (cpuTimes, error) { return cpuTimes{}, os.ErrPermission }
	targets, err := compareTargets([]string{"native", "ledger"}, cfg, newNativeDouble(7, 0), memory.NewSiblings(), nil)
	require.NoError(t, err)
	rep := compareReport{Rows: runComparison(context.Background(), cfg, targets, nil)}
	for _, r := range rep.Rows {
		require.Nil(t, r.ClientCPUus)
		require.Contains(t, r.CPUError, "permission denied")
	}
	var out bytes.Buffer
	require.NoError(t, writeCompareReport(&out, "table", rep))
	require.Contains(t, out.String(), "ledger: CPU not measured: permission denied")
	require.Contains(t, out.String(), "ledger: per_s ")
	require.NotContains(t, out.String(), "CPU 1")
	require.Equal(t, 0, compareStatus(&bytes.Buffer{}, rep))
}

func TestProcStatCPU(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "stat")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	// utime 250 and stime 50 ticks: 3 s. The command name holds spaces
	// and parentheses.
	d, err := procStatCPU(write("4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 80 0 123 456 789\n"))
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, d)
	for _, bad := range []string{"", "4242 java S 1", "4242 (java) S 1 2 3", "4242 (java) S 1 4242 4242 0 -1 4194560 100 0 0 0 x 50 0"} {
		_, err := procStatCPU(write(bad))
		require.Error(t, err, bad)
	}
	_, err = procStatCPU(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)

	if runtime.GOOS != "linux" {
		return
	}
	// This process burns CPU: its /proc reading and getrusage both move.
	m, err := newCPUMeter(os.Getpid())
	require.NoError(t, err)
	before, err := m()
	require.NoError(t, err)
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := m()
	require.NoError(t, err)
	require.True(t, after.hasServer)
	require.Greater(t, after.client, before.client)
	require.GreaterOrEqual(t, after.server, before.server)
}
