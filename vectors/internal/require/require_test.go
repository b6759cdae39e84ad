package require

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a T that keeps the last failure.
type recorder struct{ msg string }

func (r *recorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

func TestAssertions(t *testing.T) {
	type myInt int64
	errA := errors.New("a")
	for _, tc := range []struct {
		name string
		call func(t T)
		want string // "" when the assertion holds
	}{
		{"equal bytes", func(t T) { Equal(t, []byte{}, []byte{}) }, ""},
		{"nil bytes differ from empty", func(t T) { Equal(t, []byte(nil), []byte{}) }, "not equal"},
		{"equal needs the same type", func(t T) { Equal(t, 5, int64(5)) }, "not equal\nexpected: int 5\nactual:   int64 5"},
		{"equal values converts", func(t T) { EqualValues(t, 5, myInt(5)) }, ""},
		{"equal values of different numbers", func(t T) { EqualValues(t, int64(-1), uint8(255)) }, "not equal"},
		{"message and arguments", func(t T) { Equal(t, "x", "y", "%s step %d", "sc", 3) }, "sc step 3: not equal\nexpected: \"x\"\nactual:   \"y\""},
		{"error is", func(t T) { ErrorIs(t, fmt.Errorf("w: %w", errA), errA) }, ""},
		{"error is not", func(t T) { ErrorIs(t, errors.New("b"), errA) }, `expected an error wrapping "a", got "b"`},
		{"empty pointer", func(t T) { s := ""; Empty(t, &s) }, ""},
		{"not empty", func(t T) { NotEmpty(t, map[string]int{}) }, "should not be empty"},
		{"not nil", func(t T) { var p *int; NotNil(t, p) }, "should not be nil"},
		{"len", func(t T) { Len(t, []int{1}, 2) }, "should have 2 item(s), but has 1"},
		{"contains", func(t T) { Contains(t, map[string]int{"a": 1}, "b") }, `has no key "b"`},
		{"fail", func(t T) { Fail(t, "went wrong", "vector %q", "v") }, `vector "v": went wrong`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			tc.call(&r)
			if tc.want == "" && r.msg != "" || !strings.HasPrefix(r.msg, tc.want) {
				t.Fatalf("got %q, want %q", r.msg, tc.want)
			}
		})
	}
}

// Long values are shown around their first difference.
func TestDiffOfLongValues(t *testing.T) {
	a := strings.Repeat("0", 300) + "abc" + strings.Repeat("1", 300)
	b := strings.Repeat("0", 300) + "abd" + strings.Repeat("1", 300)
	var r recorder
	Equal(&r, a, b, "encoding")
	want := "encoding: not equal\nexpected and actual (605 and 605 characters) first differ at character 303:\n" +
		"expected: …" + strings.Repeat("0", 58) + "abc" + strings.Repeat("1", 59) + "…\n" +
		"actual:   …" + strings.Repeat("0", 58) + "abd" + strings.Repeat("1", 59) + "…"
	if r.msg != want {
		t.Fatalf("got\n%s\nwant\n%s", r.msg, want)
	}
}
