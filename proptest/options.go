package proptest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// Environment variables read by this package.
const (
	// EnvSeed names the variable that fixes the random seed. When it is
	// unset, seeds are drawn at random. Every checker logs the seed it used,
	// so a failure can always be replayed.
	EnvSeed = "COUNTERKIT_SEED"

	// EnvCases names the variable that scales the number of random cases: a
	// positive decimal multiplier (COUNTERKIT_CASES=20 for a long local run,
	// 0.1 for a quick one). Unset means 1.
	EnvCases = "COUNTERKIT_CASES"
)

// Defaults used by DefaultOptions and for zero fields of Options.
const (
	DefaultCases    = 1000 // schedules per check, before COUNTERKIT_CASES scales it
	DefaultReplicas = 3
	DefaultMaxOps   = 40
)

// MinReplicas is the fewest replicas a schedule uses.
const MinReplicas = 3

// Options sets the budget and the seed of a check. Zero fields mean
// DefaultCases (scaled by COUNTERKIT_CASES), a seed from Seed (so a seed of
// 0 cannot be asked for), DefaultReplicas and DefaultMaxOps.
type Options struct {
	Cases    int   // random schedules a check must pass
	Seed     int64 // seeds gopter's random source
	Replicas int   // replicas, each its own actor (at least MinReplicas)
	MaxOps   int   // Apply steps per schedule, of MaxSteps(MaxOps) in all
}

// DefaultOptions returns Cases = 1000 × COUNTERKIT_CASES, Seed from
// COUNTERKIT_SEED or drawn at random, Replicas = 3 and MaxOps = 40. It panics when
// either variable is malformed: a mistyped replay command must not silently
// run a different test. Use FromEnv to get the error instead.
func DefaultOptions() Options { return must(FromEnv()) }

// FromEnv is DefaultOptions returning an error wrapping crdt.ErrInvalidConfig
// instead of panicking.
func FromEnv() (Options, error) {
	cfg, err := Options{Replicas: DefaultReplicas, MaxOps: DefaultMaxOps}.normalize()
	if err != nil {
		return Options{}, err
	}
	return cfg, nil
}

// Seed returns COUNTERKIT_SEED when it is set and a random non-negative
// int64 otherwise (not the time: inside a testing/synctest bubble the
// clock is fake, and every run would draw the bubble's start). It panics
// when the variable is not a decimal int64.
//
// A seed drawn at random is also written to standard error, with the test
// that drew it: go test shows a passing package's output only with -v,
// and a test that hangs until go test's -timeout loses what it logged
// (t.Log), but not that line.
func Seed() int64 { return must(seedFromEnv()) }

// Scale returns n multiplied by COUNTERKIT_CASES, rounded, and at least 1.
// Simulations outside this package use it so that one variable scales every
// randomised test. It panics when the variable is malformed.
func Scale(n int) int { return must(scale(n)) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func seedFromEnv() (int64, error) {
	s, ok := os.LookupEnv(EnvSeed)
	if !ok || strings.TrimSpace(s) == "" {
		seed := rand.Int64()
		fmt.Fprintf(os.Stderr, "proptest: %s drew %s=%d at random\n", callingTest(), EnvSeed, seed)
		return seed, nil
	}
	seed, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a decimal int64", crdt.ErrInvalidConfig, EnvSeed, s)
	}
	return seed, nil
}

func scale(n int) (int, error) {
	s, ok := os.LookupEnv(EnvCases)
	mult := 1.0
	if ok && strings.TrimSpace(s) != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			return 0, fmt.Errorf("%w: %s=%q is not a positive number", crdt.ErrInvalidConfig, EnvCases, s)
		}
		mult = f
	}
	return int(min(max(math.Round(float64(n)*mult), 1), math.MaxInt32)), nil
}

// MaxSteps is the most steps a schedule with maxOps Apply steps can have:
// roughly two delivery or snapshot steps per operation.
func MaxSteps(maxOps int) int { return 3 * maxOps }

func (c Options) normalize() (Options, error) {
	if c.Cases < 0 || c.Replicas < 0 || c.MaxOps < 0 {
		return c, fmt.Errorf("%w: negative field in %+v", crdt.ErrInvalidConfig, c)
	}
	var err error
	if c.Seed == 0 {
		c.Seed, err = seedFromEnv()
	}
	if c.Cases == 0 && err == nil {
		c.Cases, err = scale(DefaultCases)
	}
	c.Replicas = max(c.Replicas, MinReplicas)
	c.MaxOps = cmp.Or(c.MaxOps, DefaultMaxOps)
	return c, err
}

// Replay returns the shell command that reruns tb's test with seed, for
// example
//
//	COUNTERKIT_SEED=42 go test ./gcounter -run '^TestLaws$'
//
// The package path is tb's working directory relative to the enclosing
// module (go test runs each package in its own directory).
func Replay(tb testing.TB, seed int64) string {
	return replayCommand(tb.Name(), seed)
}

func replayCommand(testName string, seed int64) string {
	parts := strings.Split(testName, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	run := strings.ReplaceAll(strings.Join(parts, "/"), "'", `'\''`)
	return fmt.Sprintf("%s=%d go test %s%s -run '%s'", EnvSeed, seed, replayTags, packageDir(), run)
}

// packageDir returns the working directory relative to the nearest go.mod
// above it ("./<dir>"), or ".".
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

// callingTest names the test, benchmark or fuzz function on the stack
// (its package's last element and its name), or "a caller" when there is
// none.
func callingTest() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		name := f.Function[strings.LastIndex(f.Function, "/")+1:]
		if _, fn, ok := strings.Cut(name, "."); ok {
			fn, _, _ = strings.Cut(fn, ".") // a closure: its function
			for _, prefix := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
				if strings.HasPrefix(fn, prefix) {
					return name[:strings.Index(name, ".")+1] + fn
				}
			}
		}
		if !more {
			return "a caller"
		}
	}
}
