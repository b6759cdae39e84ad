package embedded

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// TestOnDamage: a panic under onDamage becomes an error wrapping
// crdt.ErrCorruptEncoding and the extra errors, with the path and the panic
// in its text; without a panic the function's own error stands.
func TestOnDamage(t *testing.T) {
	run := func(panics bool, also ...error) (err error) {
		defer onDamage("/d/f", &err, also...)()
		if panics {
			panic("bad page")
		}
		return errTaken
	}
	err := run(true, errPanicked)
	if !errors.Is(err, crdt.ErrCorruptEncoding) || !errors.Is(err, errPanicked) ||
		err.Error() != "embedded: /d/f is damaged (bad page): "+crdt.ErrCorruptEncoding.Error()+": the engine panicked" {
		t.Errorf("a panic under onDamage: %v", err)
	}
	if err := run(true); !errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, errPanicked) {
		t.Errorf("a panic under onDamage without extra errors: %v", err)
	}
	if err := run(false, errPanicked); err != errTaken {
		t.Errorf("no panic under onDamage: %v, want the function's error", err)
	}
}

// TestOpenErrorNamesTheAccess: a file the process may not open is reported
// for the access it asked: reading for a read-only open, writing otherwise.
// (Tests run as root, which the permission check lets through, so the
// error is made here.)
func TestOpenErrorNamesTheAccess(t *testing.T) {
	denied := &fs.PathError{Op: "open", Path: "/d/f", Err: fs.ErrPermission}
	for _, c := range []struct {
		readOnly bool
		want     string
	}{{true, "cannot be opened for reading"}, {false, "cannot be opened for writing"}} {
		err := openError("/d/f", c.readOnly, denied)
		if !errors.Is(err, crdt.ErrUnavailable) || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("read-only %v: %v; want %q wrapping ErrUnavailable and fs.ErrPermission", c.readOnly, err, c.want)
		}
	}
}
