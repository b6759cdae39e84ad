package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/stretchr/testify/require"
)

// TestTypeNamedTwiceIsAUsageError: every run of a type writes the keys
// compare-RUN-TYPE, so a type named twice in -types would run twice on
// one key and its second row would read both runs' writes (tally,
// deltalog and balance then showed drift +60 with no fault injected).
// The repeated name is refused before anything runs.
func TestTypeNamedTwiceIsAUsageError(t *testing.T) {
	for _, typ := range compareTypes {
		_, err := checkCompareFlags(goldenConfig(), []string{"h1"}, "ks", "native,"+typ+","+typ, "table")
		if typ == "native" {
			_, err = checkCompareFlags(goldenConfig(), []string{"h1"}, "ks", "native,native", "table")
		}
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "-types naming %s twice", typ)
		require.Contains(t, err.Error(), "twice")
	}
	_, err := checkCompareFlags(goldenConfig(), []string{"h1"}, "ks", strings.Join(compareTypes, ","), "table")
	require.NoError(t, err, "every type once")
}

// TestHostWithCredentialsIsAUsageError: compare connects without
// authentication, so a -hosts address written with credentials
// (USER:PASSWORD@HOST) is a usage error (exit status 2) whose message
// leaves them out; it was an unavailable store whose message printed
// the password.
func TestHostWithCredentialsIsAUsageError(t *testing.T) {
	t.Setenv("CASSANDRA_HOSTS", "")
	var out, errOut bytes.Buffer
	status := run([]string{"-hosts", "db1,admin:s3cr3t@127.0.0.1", "-keyspace", "ks"}, &out, &errOut)
	if status != 2 || strings.Contains(errOut.String(), "s3cr3t") || !strings.Contains(errOut.String(), "credentials") {
		t.Fatalf("exit status %d (want 2, the password left out), stderr:\n%s", status, errOut.String())
	}
}

// TestMalformedHostIsAUsageError: a -hosts value that cannot be a contact
// point (a scheme, a path, a port outside 1 to 65535) is a usage error
// (exit status 2), as an empty list is; it was an unavailable store
// (exit status 1) once the driver tried it.
func TestMalformedHostIsAUsageError(t *testing.T) {
	for _, h := range []string{"http://x", "127.0.0.1:99999", "db1:0", "db1:port", "db 1"} {
		_, err := checkCompareFlags(goldenConfig(), []string{"db0", h}, "ks", "native", "table")
		if !errors.Is(err, crdt.ErrInvalidConfig) || !strings.Contains(err.Error(), fmt.Sprintf("%q", h)) {
			t.Errorf("-hosts db0,%s: %v, want a usage error naming it", h, err)
		}
	}
	for _, h := range []string{"db1", "127.0.0.1", "127.0.0.1:9042", "[::1]:9042", "::1", "cassandra.internal:19042"} {
		if _, err := checkCompareFlags(goldenConfig(), []string{h}, "ks", "native", "table"); err != nil {
			t.Errorf("-hosts %s: %v", h, err)
		}
	}
	t.Setenv("CASSANDRA_HOSTS", "")
	var out, errOut bytes.Buffer
	if status := run([]string{"-hosts", "http://x", "-keyspace", "ks"}, &out, &errOut); status != 2 {
		t.Errorf("exit status %d, want 2; stderr:\n%s", status, errOut.String())
	}
}
