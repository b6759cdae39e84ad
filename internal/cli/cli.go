// Package cli holds what the counterkit commands share: usage errors and
// the naming of the sentinels an error wraps.
package cli

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// UsageError is a mistake in the command line: the exit status is 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError of fmt.Errorf(format, args...).
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// Usage marks err, when it is not nil, as a usage error.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{err}
}

// Status is the exit status of a command that failed with err: 2 for a
// usage error, 1 otherwise.
func Status(err error) int {
	if errors.As(err, new(UsageError)) {
		return 2
	}
	return 1
}

// Sentinel is an error a message names, and its name.
type Sentinel struct {
	Name string
	Err  error
}

// SentinelNames names the sentinels of list that err wraps, in the order
// of list (most specific first), leaving out a sentinel that one named
// before it wraps; "no counterkit sentinel" when err wraps none.
func SentinelNames(err error, list []Sentinel) string {
	var names []string
	var found []error
	for _, s := range list {
		implied := func(f error) bool { return errors.Is(f, s.Err) } // f, named before, wraps s
		if errors.Is(err, s.Err) && !slices.ContainsFunc(found, implied) {
			found = append(found, s.Err)
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "no counterkit sentinel"
	}
	return strings.Join(names, ", ")
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// AddressProblem says what is wrong with a store address written HOST or
// HOST:PORT, or "": a scheme, a path or a space, or a port that is not 1
// to 65535. A bare IPv6 address passes, as the drivers take it.
func AddressProblem(addr string) string {
	if strings.ContainsAny(addr, "/ ") {
		return fmt.Sprintf("address %q: want HOST or HOST:PORT, no scheme or path", addr)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "" // no port: a name, an IPv4 or a bare IPv6 address
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("address %q: port %q is not 1 to 65535", addr, port)
	}
	return ""
}

// Either returns yes when cond holds, else no.
func Either[T any](cond bool, yes, no T) T {
	if cond {
		return yes
	}
	return no
}
