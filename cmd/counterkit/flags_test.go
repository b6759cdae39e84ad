package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Flags parse before and after the arguments, with one dash or two; a
// negative value after a flag stays a value.
func TestFlagsAnywhere(t *testing.T) {
	for _, args := range [][]string{
		{"-store", "s", "-window", "-1s", "k1", "k2"},
		{"k1", "--store", "s", "k2", "--window", "-1s"},
		{"k1", "-store=s", "k2", "-window=-1s"},
		{"k1", "k2", "--store=s", "--window", "-1s", "-o", "json"},
		{"-ojson", "k1", "-store", "s", "k2", "-window", "-1s"},
	} {
		c := newCommand("test", "usage\n", &strings.Builder{})
		store := c.fs.String("store", "", "")
		window := c.fs.Duration("window", 0, "")
		require.Equal(t, -1, c.parse(args), args)
		require.Equal(t, "s", *store, args)
		require.Equal(t, -time.Second, *window, args)
		require.Equal(t, []string{"k1", "k2"}, c.fs.Args(), args)
	}
	// Everything after -- is an argument.
	c := newCommand("test", "usage\n", &strings.Builder{})
	c.fs.String("store", "", "")
	require.Equal(t, -1, c.parse([]string{"--", "-store", "x"}))
	require.Equal(t, []string{"-store", "x"}, c.fs.Args())

	// An unknown flag is a usage error that names it; -h is help.
	var errOut strings.Builder
	c = newCommand("test", "usage\n", &errOut)
	require.Equal(t, 2, c.parse([]string{"k", "-nope"}))
	require.Contains(t, errOut.String(), "unknown flag: --nope")
	errOut.Reset()
	c = newCommand("test", "usage text\n", &errOut)
	require.Equal(t, 0, c.parse([]string{"k", "-h"}))
	require.True(t, strings.HasPrefix(errOut.String(), "usage text\n\nFlags:\n"), errOut.String())
	errOut.Reset()
	c = newCommand("test", "usage text\n", &errOut)
	require.Equal(t, 0, c.parse([]string{"-help"}))
	require.Contains(t, errOut.String(), "usage text")
}
