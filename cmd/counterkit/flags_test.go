package main

import (
	"regexp"
	"slices"
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

// Every flag a command's usage line names is one of its flags (a review
// found list's usage naming -prefix, whose flag is -key-prefix). The
// checker catches a usage line naming a flag the command lacks.
func TestUsageNamesItsFlags(t *testing.T) {
	// flagsOf returns the flags named by the usage lines of cmd (the first
	// block of help) and those help lists under "Flags:".
	flagsOf := func(cmd, help string) (usage, defined []string) {
		block, rest, _ := strings.Cut(help, "\n\n")
		for _, line := range strings.Split(block, "\n") {
			if !strings.Contains(line, "counterkit "+cmd+" ") {
				continue
			}
			for _, m := range regexp.MustCompile(`(?:^|[\s\[])-([a-z][a-z-]*)`).FindAllStringSubmatch(line, -1) {
				usage = append(usage, m[1])
			}
		}
		_, list, _ := strings.Cut(rest, "Flags:")
		for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(list, -1) {
			defined = append(defined, m[1])
		}
		return usage, defined
	}
	missing := func(cmd, help string) []string {
		usage, defined := flagsOf(cmd, help)
		var out []string
		for _, u := range usage {
			if !slices.Contains(defined, u) {
				out = append(out, u)
			}
		}
		return out
	}
	require.Equal(t, []string{"prefix"}, missing("list", "usage: counterkit list [-prefix P] [-limit N]\n\nFlags:\n      --key-prefix string\n      --limit int\n"), "the checker")
	commands := [][]string{{"inspect"}, {"get"}, {"check", "cassandra"}, {"check", "riak"}, {"check", "embedded"},
		{"list"}, {"stats"}, {"backup"}, {"compact", "embedded"}, {"gc", "tally"}, {"gc", "records"}, {"compact", "deltalog"},
		{"merge", "balance"}, {"merge", "transactions"}, {"find", "ledger"}}
	for _, cmd := range commands {
		_, out, errOut := runCmd(t, "", append(cmd, "-h")...)
		help := out + errOut
		require.Equal(t, 1, strings.Count(help, "Flags:"), "%v -h: one flag list", cmd)
		usage, _ := flagsOf(strings.Join(cmd, " "), help)
		require.NotEmpty(t, usage, "%v: no usage line names a flag", cmd)
		require.Empty(t, missing(strings.Join(cmd, " "), help), "%v: usage names flags it lacks", cmd)
	}
}
