package proptest_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/proptest"
)

const helperEnv = "PROPTEST_REPLAY_HELPER"

// TestReplayHelperBrokenCheck is run only as a child process by
// TestReplayCommandReproducesFailure: it fails on purpose, with the seed
// taken from COUNTERKIT_SEED exactly as a user's replay would.
func TestReplayHelperBrokenCheck(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper for TestReplayCommandReproducesFailure; fails on purpose")
	}
	cfg := proptest.DefaultOptions()
	cfg.Cases = 300
	proptest.CheckConvergence(t, brokenCounters()[1].model(), cfg) // merge-keeps-left
}

// TestReplayCommandReproducesFailure runs the helper twice in a child
// process with the same COUNTERKIT_SEED, the way the printed replay command
// does, and requires the same failure report both times.
func TestReplayCommandReproducesFailure(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		t.Skip("already in the child")
	}
	seed := proptest.Seed()
	t.Logf("seed %d", seed)
	run := func() string {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestReplayHelperBrokenCheck$", "-test.count", "1")
		cmd.Env = append(os.Environ(), helperEnv+"=1", proptest.EnvSeed+"="+strconv.FormatInt(seed, 10))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		require.Error(t, err, "the helper must fail:\n%s", out.String())
		return out.String()
	}
	first, second := run(), run()
	want := fmt.Sprintf(`replay: COUNTERKIT_SEED=%d go test (-tags counterkit_mutants )?\./proptest -run '\^TestReplayHelperBrokenCheck\$'`, seed)
	require.Regexp(t, want, first)
	require.Contains(t, first, "falsified after")
	durations := regexp.MustCompile(`\([0-9.]+s\)`)
	first, second = durations.ReplaceAllString(first, ""), durations.ReplaceAllString(second, "")
	require.Equal(t, first, second)
}

func TestPropsComposeWithGopter(t *testing.T) {
	seed := proptest.Seed()
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = 100
	cfg := proptest.Options{Seed: seed}

	props := gopter.NewProperties(params)
	props.Property("laws", proptest.LawsProp(counterModel(), cfg))
	props.Property("convergence", proptest.ConvergenceProp(counterModel(), cfg))
	var out bytes.Buffer
	require.True(t, props.Run(gopter.NewFormatedReporter(false, 200, &out)), "seed %d:\n%s", seed, out.String())

	bad := gopter.NewProperties(params)
	bad.Property("laws", proptest.LawsProp(brokenCounters()[0].model(), cfg))
	out.Reset()
	require.False(t, bad.Run(gopter.NewFormatedReporter(false, 200, &out)), "seed %d", seed)
	require.Contains(t, out.String(), "law ")
	require.Contains(t, out.String(), "schedule:")

	m := counterModel()
	m.Clone = nil
	invalid := gopter.NewProperties(params)
	invalid.Property("laws", proptest.LawsProp(m, cfg))
	out.Reset()
	require.False(t, invalid.Run(gopter.NewFormatedReporter(false, 200, &out)))
	require.Contains(t, out.String(), "has no Clone")
}
