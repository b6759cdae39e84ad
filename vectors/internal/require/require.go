// Package require holds the assertions the vector checks make. The calls
// have the shape of testify's require (require.Equal(t, expected, actual,
// "format", args...)), so the checks read as the tests they were, but the
// package depends on nothing: a failed assertion calls t.Fatalf, which
// records the message and stops the current check.
//
// Equality follows testify's rules: Equal compares []byte with bytes.Equal
// and everything else with reflect.DeepEqual; EqualValues also accepts
// values of convertible types; Empty is nil, a zero value, an empty slice,
// map or channel, or a pointer to an empty value.
package require

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// T is where a failed assertion is reported. Fatalf records the failure
// and stops the check: it does not return.
type T interface {
	Fatalf(format string, args ...any)
}

func fail(t T, what string, msgAndArgs []any) {
	if m := message(msgAndArgs); m != "" {
		what = m + ": " + what
	}
	t.Fatalf("%s", what)
}

// message formats msgAndArgs as testify does: one value is the message, more
// are a format and its arguments.
func message(msgAndArgs []any) string {
	switch len(msgAndArgs) {
	case 0:
		return ""
	case 1:
		if s, ok := msgAndArgs[0].(string); ok {
			return s
		}
		return fmt.Sprintf("%+v", msgAndArgs[0])
	}
	if f, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(f, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

// Fail reports failure, a description of what went wrong, and stops.
func Fail(t T, failure string, msgAndArgs ...any) { fail(t, failure, msgAndArgs) }

// Equal fails unless expected and actual are equal.
func Equal(t T, expected, actual any, msgAndArgs ...any) {
	if !objectsAreEqual(expected, actual) {
		fail(t, "not equal\n"+diff(expected, actual), msgAndArgs)
	}
}

// NotEqual fails if expected and actual are equal.
func NotEqual(t T, expected, actual any, msgAndArgs ...any) {
	if objectsAreEqual(expected, actual) {
		fail(t, "should not be "+show(actual), msgAndArgs)
	}
}

// EqualValues fails unless expected and actual are equal after expected is
// converted to actual's type (numbers to the wider of the two).
func EqualValues(t T, expected, actual any, msgAndArgs ...any) {
	if !objectsAreEqualValues(expected, actual) {
		fail(t, "not equal\n"+diff(expected, actual), msgAndArgs)
	}
}

// NoError fails if err is not nil.
func NoError(t T, err error, msgAndArgs ...any) {
	if err != nil {
		fail(t, "unexpected error: "+err.Error(), msgAndArgs)
	}
}

// Error fails if err is nil.
func Error(t T, err error, msgAndArgs ...any) {
	if err == nil {
		fail(t, "an error is expected but got none", msgAndArgs)
	}
}

// ErrorIs fails unless errors.Is(err, target).
func ErrorIs(t T, err, target error, msgAndArgs ...any) {
	if !errors.Is(err, target) {
		got := "no error"
		if err != nil {
			got = fmt.Sprintf("%q", err.Error())
		}
		fail(t, fmt.Sprintf("expected an error wrapping %q, got %s", target.Error(), got), msgAndArgs)
	}
}

// True fails unless v is true.
func True(t T, v bool, msgAndArgs ...any) {
	if !v {
		fail(t, "should be true", msgAndArgs)
	}
}

// False fails unless v is false.
func False(t T, v bool, msgAndArgs ...any) {
	if v {
		fail(t, "should be false", msgAndArgs)
	}
}

// Len fails unless object has length n.
func Len(t T, object any, n int, msgAndArgs ...any) {
	v := reflect.ValueOf(object)
	switch v.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		if v.Len() != n {
			fail(t, fmt.Sprintf("should have %d item(s), but has %d", n, v.Len()), msgAndArgs)
		}
	default:
		fail(t, fmt.Sprintf("%T has no length", object), msgAndArgs)
	}
}

// Empty fails unless object is empty (see the package comment).
func Empty(t T, object any, msgAndArgs ...any) {
	if !isEmpty(object) {
		fail(t, "should be empty, but is "+show(object), msgAndArgs)
	}
}

// NotEmpty fails if object is empty.
func NotEmpty(t T, object any, msgAndArgs ...any) {
	if isEmpty(object) {
		fail(t, "should not be empty", msgAndArgs)
	}
}

// NotNil fails if object is nil or a nil pointer, map, slice, channel,
// function or interface.
func NotNil(t T, object any, msgAndArgs ...any) {
	if object == nil {
		fail(t, "should not be nil", msgAndArgs)
		return
	}
	switch v := reflect.ValueOf(object); v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice, reflect.UnsafePointer:
		if v.IsNil() {
			fail(t, "should not be nil", msgAndArgs)
		}
	}
}

// Contains fails unless the map m has the key k.
func Contains[K comparable, V any](t T, m map[K]V, k K, msgAndArgs ...any) {
	if _, ok := m[k]; !ok {
		fail(t, fmt.Sprintf("has no key %s", show(k)), msgAndArgs)
	}
}

// Positive fails unless n > 0.
func Positive(t T, n int, msgAndArgs ...any) {
	if n <= 0 {
		fail(t, fmt.Sprintf("%d is not positive", n), msgAndArgs)
	}
}

// Negative fails unless n < 0.
func Negative(t T, n int, msgAndArgs ...any) {
	if n >= 0 {
		fail(t, fmt.Sprintf("%d is not negative", n), msgAndArgs)
	}
}

// LessOrEqual fails unless a <= b.
func LessOrEqual(t T, a, b int, msgAndArgs ...any) {
	if a > b {
		fail(t, fmt.Sprintf("%d is not less than or equal to %d", a, b), msgAndArgs)
	}
}

func objectsAreEqual(expected, actual any) bool {
	if expected == nil || actual == nil {
		return expected == actual
	}
	exp, ok := expected.([]byte)
	if !ok {
		return reflect.DeepEqual(expected, actual)
	}
	act, ok := actual.([]byte)
	if !ok {
		return false
	}
	if exp == nil || act == nil {
		return exp == nil && act == nil
	}
	return bytes.Equal(exp, act)
}

func objectsAreEqualValues(expected, actual any) bool {
	if objectsAreEqual(expected, actual) {
		return true
	}
	ev, av := reflect.ValueOf(expected), reflect.ValueOf(actual)
	if !ev.IsValid() || !av.IsValid() {
		return false
	}
	et, at := ev.Type(), av.Type()
	if !et.ConvertibleTo(at) {
		return false
	}
	numeric := func(t reflect.Type) bool { return t.Kind() >= reflect.Int && t.Kind() <= reflect.Complex128 }
	if !numeric(et) || !numeric(at) {
		return reflect.DeepEqual(ev.Convert(at).Interface(), actual)
	}
	// Convert the narrower number to the wider type, so that no value
	// wraps into a false match.
	if et.Size() >= at.Size() {
		return av.Convert(et).Interface() == expected
	}
	return ev.Convert(at).Interface() == actual
}

func isEmpty(object any) bool {
	if object == nil {
		return true
	}
	return isEmptyValue(reflect.ValueOf(object))
}

func isEmptyValue(v reflect.Value) bool {
	if v.IsZero() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer:
		return isEmptyValue(v.Elem())
	}
	return false
}

// show renders a value for a message: strings quoted, bytes as hex, other
// values as JSON when they have a JSON form, else with %+v.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return fmt.Sprintf("%q", x)
	case []byte:
		if x == nil {
			return "nil"
		}
		return "hex " + hex.EncodeToString(x)
	case error:
		return fmt.Sprintf("error %q", x.Error())
	}
	if b, err := json.Marshal(v); err == nil {
		return fmt.Sprintf("%T %s", v, b)
	}
	return fmt.Sprintf("%T %+v", v, v)
}

// maxShown is the length above which diff shows only where two renderings
// first differ.
const maxShown = 160

// diff renders expected and actual on two lines; when either is long, it
// gives their lengths and a window around their first difference instead.
func diff(expected, actual any) string {
	e, a := show(expected), show(actual)
	if len(e) <= maxShown && len(a) <= maxShown {
		return "expected: " + e + "\nactual:   " + a
	}
	i := 0
	for i < len(e) && i < len(a) && e[i] == a[i] {
		i++
	}
	window := func(s string) string {
		from, to := max(0, i-60), min(len(s), i+60)
		out := s[from:to]
		if from > 0 {
			out = "…" + out
		}
		if to < len(s) {
			out += "…"
		}
		return out
	}
	return fmt.Sprintf("expected and actual (%d and %d characters) first differ at character %d:\nexpected: %s\nactual:   %s",
		len(e), len(a), i, strings.ToValidUTF8(window(e), "?"), strings.ToValidUTF8(window(a), "?"))
}
