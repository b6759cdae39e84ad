package countertest_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/leanovate/gopter/gen"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/countertest"
	"github.com/counterkit/counterkit/internal/testsize"
)

// variant is gcounter's Counter with one fault, named by mode ("" for
// none).
type variant struct {
	c    *gcounter.Counter
	mode string
}

var sink []byte

func (v *variant) MarshalBinary() ([]byte, error) {
	b, err := v.c.MarshalBinary()
	if v.mode == "extra-byte" {
		b = append(b, 0xc0)
	}
	return b, err
}

func (v *variant) UnmarshalBinary(data []byte) error {
	if v.mode == "allocates" {
		sink = make([]byte, 200*len(data))
	}
	err := v.c.UnmarshalBinary(data)
	switch {
	case err == nil:
	case v.mode == "dirty-on-error":
		_ = v.c.Increment("dirt", 1)
	case v.mode == "unwrapped-error":
		return errors.New(err.Error())
	case v.mode == "accepts-truncation" && len(data) > 0:
		v.c = gcounter.New()
		return nil
	}
	return err
}

func (v *variant) Equal(o *variant) bool { return v.c.Equal(o.c) }
func (v *variant) Clone() *variant       { return &variant{v.c.Clone(), v.mode} }
func (v *variant) Value() int64          { return v.c.Value() }

func format(mode string) countertest.Format[*variant] {
	return countertest.Format[*variant]{Tag: "gcounter", Version: gcounter.FormatVersion,
		New: func() *variant { return &variant{gcounter.New(), mode} },
		Size: func(v *variant) int {
			if mode == "wrong-size" {
				return v.c.Stats().EncodedSize + 1
			}
			return v.c.Stats().EncodedSize
		}}
}

func counter(mode string, counts map[crdt.ActorID]int64) *variant {
	v := &variant{gcounter.New(), mode}
	for a, n := range counts {
		if err := v.c.Increment(a, n); err != nil {
			panic(err)
		}
	}
	return v
}

// checks run one check of the package on a counter of mode, in the
// directory of gcounter's tests (its testdata holds the golden files).
var checks = map[string]func(t *testing.T, mode string){
	"Golden": func(t *testing.T, mode string) {
		format(mode).Golden(t, "several", counter(mode, map[crdt.ActorID]int64{"carol": 1, "alice": 3, "bob": 7}), false)
	},
	"GoldenV1": func(t *testing.T, mode string) {
		format(mode).GoldenV1(t, "single", counter(mode, map[crdt.ActorID]int64{"a": 1}))
	},
	"Rejects": func(t *testing.T, mode string) {
		format(mode).Rejects(t, counter(mode, map[crdt.ActorID]int64{"keep": 5}), []countertest.Case{
			{"not an array", []byte{0xc0}, crdt.ErrCorruptEncoding},
			{"wrong tag", countertest.Env(t, "pncounter", 2, []any{}), countertest.AnyOf{crdt.ErrTypeMismatch}},
		})
	},
	"RejectsEveryTruncation": func(t *testing.T, mode string) {
		format(mode).RejectsEveryTruncation(t, map[string]*variant{"two": counter(mode, map[crdt.ActorID]int64{"a": 1, "b": 2})})
	},
	"HostileRowCount": func(t *testing.T, mode string) { format(mode).HostileRowCount(t) },
	"Decode": func(t *testing.T, mode string) {
		f := format(mode)
		for _, data := range f.VectorInputs(t) {
			f.Decode(t, counter(mode, map[crdt.ActorID]int64{"keep": 5}), data)
		}
	},
	"UnicodeFrontCoding": func(t *testing.T, mode string) {
		format(mode).UnicodeFrontCoding(t, func(v *variant, id crdt.ActorID, rng *rand.Rand) error {
			return v.c.Increment(id, 1+rng.Int64N(1000))
		})
	},
	"RoundTrip": func(t *testing.T, mode string) {
		format(mode).RoundTrip(t, func(ids []string, counts []int64) *variant {
			v := counter(mode, nil)
			for i, id := range ids {
				if i < len(counts) {
					_ = v.c.Increment(crdt.ActorID(id), counts[i])
				}
			}
			return v
		}, gen.Int64Range(1, 1000))
	},
}

const variantEnv = "COUNTERKIT_COUNTERTEST_VARIANT"

// TestVariant runs the check and mode COUNTERKIT_COUNTERTEST_VARIANT names
// ("check/mode"); TestChecksCatchBrokenVariants starts it in a process of
// its own. It does nothing when the variable is unset.
func TestVariant(t *testing.T) {
	check, mode, ok := strings.Cut(os.Getenv(variantEnv), "/")
	if !ok {
		t.Skip(variantEnv + " unset")
	}
	checks[check](t, mode)
}

// Each check passes gcounter's Counter and fails on a variant with the
// fault it exists to find.
func TestChecksCatchBrokenVariants(t *testing.T) {
	testsize.SkipSequential(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, c := range []struct{ check, mode, want string }{
		{"Golden", "", ""},
		{"Golden", "extra-byte", "encoding changed"},
		{"GoldenV1", "", ""},
		{"GoldenV1", "extra-byte", "Not equal"},
		{"Rejects", "", ""},
		{"Rejects", "dirty-on-error", "receiver changed on error"},
		{"Rejects", "unwrapped-error", "want one of [counterkit: encoded type does not match]"},
		{"RejectsEveryTruncation", "", ""},
		{"RejectsEveryTruncation", "accepts-truncation", "two cut at 1"},
		{"HostileRowCount", "", ""},
		{"HostileRowCount", "allocates", "for a 30014-byte input"},
		{"Decode", "", ""},
		{"Decode", "wrong-size", "Stats().EncodedSize ="},
		{"Decode", "unwrapped-error", "error wraps no decoder sentinel"},
		{"Decode", "dirty-on-error", "receiver changed on error"},
		{"UnicodeFrontCoding", "", ""},
		{"UnicodeFrontCoding", "wrong-size", "Not equal"},
		{"RoundTrip", "", ""},
		{"RoundTrip", "wrong-size", "Falsified"},
	} {
		name := c.check + "/" + c.mode
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^TestVariant$", "-test.v")
			cmd.Dir = "../../gcounter"
			cmd.Env = append(os.Environ(), variantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			require.True(t, strings.Contains(string(out), "--- "), "the check did not run: %s", out)
			if c.want == "" {
				require.NoError(t, err, "%s", out)
				return
			}
			require.Error(t, err, "the check passed the broken variant")
			require.Contains(t, string(out), c.want)
		})
	}
}

func Example() {
	fmt.Println(countertest.ActorN(7), countertest.RandomActor(0))
	// Output: actor-7 9e3779b97f4a7c15d67411c46c86742d
}
