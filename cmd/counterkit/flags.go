package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
)

// command is one command's flags and output format. Flags may come before
// or after the arguments, with one dash or two (-store and --store);
// -o / --output chooses a table (the default) or JSON.
type command struct {
	name   string
	fs     *pflag.FlagSet
	output *string
	stderr io.Writer
}

// newCommand makes the flag set of command name; usage is its help text,
// printed before the flags by -h.
func newCommand(name, usage string, stderr io.Writer) *command {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	c := &command{name: name, fs: fs, stderr: stderr}
	c.output = fs.StringP("output", "o", "table", "output format: table or json")
	fs.Usage = func() { fmt.Fprint(stderr, usage+"\nFlags:\n"+fs.FlagUsages()) }
	return c
}

// parse parses args. It returns -1 to go on, or the exit status: 0 after
// -h, 2 for a usage error (printed).
func (c *command) parse(args []string) int {
	err := c.fs.Parse(longFlags(c.fs, args))
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case err != nil:
		return fail(c.stderr, c.name, cli.Usagef("%w: %v (counterkit %s -h lists the flags)", crdt.ErrInvalidConfig, err, c.name))
	}
	if f := *c.output; f != "table" && f != "json" {
		return fail(c.stderr, c.name, cli.Usagef("%w: -o must be table or json, not %q", crdt.ErrInvalidConfig, f))
	}
	return -1
}

func (c *command) json() bool { return *c.output == "json" }

// invalidIf returns, when bad, a usage error wrapping crdt.ErrInvalidConfig.
// Commands check their flags with cmp.Or(invalidIf(...), ...): the first
// error found is reported.
func invalidIf(bad bool, format string, args ...any) error {
	if !bad {
		return nil
	}
	return cli.Usagef("%w: "+format, append([]any{crdt.ErrInvalidConfig}, args...)...)
}

// longFlags rewrites -name and -name=value to --name, so that the
// single-dash form works alongside pflag's double-dash one: every -name
// whose first letter is not a shorthand (-o, -v) becomes --name (an
// unknown one is then reported by its name). Values are left alone (the
// argument after a flag that takes one, and anything starting with a dash
// and a digit, such as -1s), as is everything after --.
func longFlags(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	value := false // the next argument is a flag's value
	for i, a := range args {
		if value {
			value = false
			out = append(out, a)
			continue
		}
		if a == "--" {
			return append(out, args[i:]...)
		}
		switch {
		case a == "-h" || len(a) < 2 || a[0] != '-' || a[1] >= '0' && a[1] <= '9' || a[1] == '.':
		case a[1] != '-' && fs.ShorthandLookup(a[1:2]) != nil:
			value = fs.ShorthandLookup(a[1:2]).NoOptDefVal == "" && len(a) == 2
		default:
			if a[1] != '-' {
				a = "-" + a
			}
			name, _, hasValue := strings.Cut(a[2:], "=")
			f := fs.Lookup(name)
			value = f != nil && f.NoOptDefVal == "" && !hasValue
		}
		out = append(out, a)
	}
	return out
}

// tabler is a result that prints itself as a table.
type tabler interface {
	writeTable(w io.Writer)
}

// emitResult fails with err, or, when err is nil, emits v.
func (c *command) emitResult(stdout io.Writer, v tabler, err error) int {
	if err != nil {
		return fail(c.stderr, c.name, err)
	}
	return c.emit(stdout, v)
}

// emit prints v as JSON (indented, snake_case keys) or as its table.
func (c *command) emit(stdout io.Writer, v tabler) int {
	if !c.json() {
		v.writeTable(stdout)
		return 0
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(c.stderr, "counterkit %s: %v\n", c.name, err)
		return 1
	}
	return 0
}
