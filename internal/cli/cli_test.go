package cli_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
)

var list = []cli.Sentinel{
	{"crdt.ErrInvalidKey", crdt.ErrInvalidKey},
	{"crdt.ErrInvalidIdentifier", crdt.ErrInvalidIdentifier},
	{"crdt.ErrAmbiguousWrite", crdt.ErrAmbiguousWrite},
	{"crdt.ErrUnavailable", crdt.ErrUnavailable},
}

func TestSentinelNames(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("plain"), "no counterkit sentinel"},
		{nil, "no counterkit sentinel"},
		{fmt.Errorf("x: %w", crdt.ErrUnavailable), "crdt.ErrUnavailable"},
		// ErrInvalidKey wraps ErrInvalidIdentifier: only the first is named.
		{fmt.Errorf("x: %w", crdt.ErrInvalidKey), "crdt.ErrInvalidKey"},
		{fmt.Errorf("x: %w", crdt.ErrInvalidIdentifier), "crdt.ErrInvalidIdentifier"},
		// Two unrelated sentinels: both, in the list's order.
		{fmt.Errorf("%w: %w", crdt.ErrUnavailable, crdt.ErrAmbiguousWrite), "crdt.ErrAmbiguousWrite, crdt.ErrUnavailable"},
		{fmt.Errorf("x: %w", crdt.ErrOverflow), "no counterkit sentinel"},
	} {
		if got := cli.SentinelNames(c.err, list); got != c.want {
			t.Errorf("SentinelNames(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestStatus(t *testing.T) {
	if got := cli.Status(fmt.Errorf("wrapped: %w", cli.Usagef("%w: bad flag", crdt.ErrInvalidConfig))); got != 2 {
		t.Errorf("Status of a usage error = %d, want 2", got)
	}
	if got := cli.Status(crdt.ErrUnavailable); got != 1 {
		t.Errorf("Status of another error = %d, want 1", got)
	}
	if err := cli.Usagef("%w: bad flag", crdt.ErrInvalidConfig); !errors.Is(err, crdt.ErrInvalidConfig) || err.Error() != crdt.ErrInvalidConfig.Error()+": bad flag" {
		t.Errorf("Usagef = %v, want the formatted error, wrapping crdt.ErrInvalidConfig", err)
	}
}

func TestUsage(t *testing.T) {
	if err := cli.Usage(nil); err != nil {
		t.Errorf("Usage(nil) = %v, want nil", err)
	}
	if err := cli.Usage(crdt.ErrInvalidKey); cli.Status(err) != 2 || !errors.Is(err, crdt.ErrInvalidKey) {
		t.Errorf("Usage(ErrInvalidKey) = %v (status %d), want a usage error wrapping it", err, cli.Status(err))
	}
}

func TestSplitList(t *testing.T) {
	for in, want := range map[string][]string{
		"":             nil,
		" , ,":         nil,
		"a":            {"a"},
		" a , b,,c ":   {"a", "b", "c"},
		"h1:9042,h2 ,": {"h1:9042", "h2"},
	} {
		if got := cli.SplitList(in); !slices.Equal(got, want) {
			t.Errorf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAddressProblem(t *testing.T) {
	for _, a := range []string{"db1", "127.0.0.1", "127.0.0.1:9042", "[::1]:9042", "::1", "riak.internal:8087", "h:65535", "h:1"} {
		if why := cli.AddressProblem(a); why != "" {
			t.Errorf("AddressProblem(%q) = %q, want none", a, why)
		}
	}
	for _, a := range []string{"http://x", "h/ks", "db 1", "h:0", "h:65536", "127.0.0.1:99999", "h:port", "h:-1", "h:"} {
		if why := cli.AddressProblem(a); why == "" {
			t.Errorf("AddressProblem(%q) found nothing wrong", a)
		}
	}
}

func ExampleSentinelNames() {
	err := fmt.Errorf("reading key: %w", crdt.ErrInvalidKey)
	fmt.Println(cli.SentinelNames(err, list))
	// Output: crdt.ErrInvalidKey
}
